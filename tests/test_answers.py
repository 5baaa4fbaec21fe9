"""Answers a user acts on agree with each other: each test runs both sides of a former contradiction."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aiinfra import app
from aiinfra.errors import InfeasibleError
from aiinfra.specs.parallelism import InferencePlan

# 70B FP8 on H200 for 58 users with a 100 ms TTFT limit: one H200 (tp1) looks cheapest analytically, but its
# unloaded prefill of 1,024 tokens already takes longer than 100 ms in the simulator
SEED_58_USERS = {
    "model": "meta-llama-3.1-70b",
    "hardware": {"accelerator": "nvidia-h200-sxm-141gb", "count": 8},
    "inference": {"weight_precision": "fp8", "kv_precision": "fp8", "input_tokens": 1024, "output_tokens": 256,
                  "users": 58, "slo": {"ttft_p90_s": 0.1, "tpot_p99_s": 0.05}},
}  # fmt: skip


def test_capacity_moves_past_a_candidate_its_simulation_finds_infeasible() -> None:
    sc = app.load_scenario(SEED_58_USERS)
    analytic = app.capacity(sc)
    simulated = app.capacity(sc, simulate=True)
    cheapest = analytic.chosen
    # the other side: simulating the analytic choice alone cannot meet the SLO at any rate
    wl = sc.inference
    assert wl is not None
    one = replace(sc, cluster=replace(sc.cluster, count=cheapest.tp),
                  inference=replace(wl, plan=InferencePlan(tp=cheapest.tp), users=None, num_requests=400))  # fmt: skip
    with pytest.raises(InfeasibleError):
        app.find_max_rate(one)
    # capacity --simulate neither exits nor keeps it: the next candidate is chosen and the first says why it lost
    assert simulated.chosen != cheapest
    assert simulated.chosen.usd_per_hour is not None and cheapest.usd_per_hour is not None
    assert simulated.chosen.usd_per_hour >= cheapest.usd_per_hour
    passed_over = [o for o in simulated.options if o.verdict.startswith("misses the SLO in simulation")]
    assert [(o.tp, o.weight_precision) for o in passed_over] == [(cheapest.tp, cheapest.weight_precision)]
    assert simulated.simulated is not None and len(simulated.simulated["rejected"]) == 1
