"""The loaded-replica model (planning/loaded.py): hand calculations on synthetic step times, ``infer``'s fit by
requests in flight, and the analytic users per replica against the simulator's closed loop."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from aiinfra import app
from aiinfra.planning.inference import estimate_with_replica
from aiinfra.planning.loaded import Z_P99, LoadedReplica, meets
from aiinfra.sim.metrics import slo_misses
from aiinfra.specs.workload import Slo

from .conftest import EXAMPLES, sim_closed_loop, sim_run

OUT = 101  # output tokens: 100 decode steps after the first token


def _constant(tpot_s: float, ttft_s: float, cap: int = 10_000) -> LoadedReplica:
    """A replica whose step time does not depend on the load (no prefill cost, no batch cost)."""
    return LoadedReplica(lambda b: (tpot_s, ttft_s, 1.0), lambda b: tpot_s, output_tokens=OUT, max_in_flight=cap)


def test_little_and_the_response_time_law_on_a_constant_replica() -> None:
    rep = _constant(0.02, 0.1)
    resp_s = 0.1 + 100 * 0.02  # R = TTFT + (out − 1)·TPOT = 2.1 s
    open_ = rep.at_rate(10.0)
    assert open_.in_flight == pytest.approx(10.0 * resp_s, rel=0.01)  # Little: L = λR = 21
    users = rep.with_users(100, 19.0)
    assert users.in_flight == pytest.approx(100 * resp_s / (resp_s + 19.0), rel=0.01)  # N·R/(R + Z) = 9.95
    assert users.requests_per_s == pytest.approx(100 / (resp_s + 19.0), rel=0.01)
    # no prefill cost and no batch cost: every request's TPOT is the same
    assert users.tpot.p99_s == pytest.approx(0.02)
    # think time 0: all 7 users always in flight
    assert rep.with_users(7, 0.0).in_flight == 7


def test_a_saturated_closed_system_queues_the_rest() -> None:
    rep = _constant(0.02, 0.1, cap=5)
    p = rep.with_users(100, 19.0)
    rate = 5 / 2.1  # X = cap / R(cap)
    assert p.saturated and p.requests_per_s == pytest.approx(rate)
    assert p.in_flight == pytest.approx(100 - rate * 19.0)  # N − X·Z in the system (Little at the think station)
    assert p.ttft_s == pytest.approx(0.1 + (100 - rate * 19.0) / rate - 2.1)  # the queue's wait added to TTFT


def test_ttft_of_decode_only_iterations_is_uniform_over_one_to_two_iterations() -> None:
    # iterations of d = 20 ms whatever arrives (Δ = 0): an arrival waits U·d for the running one, then one more
    d = 0.02
    rep = _constant(d, 0.0)
    p = rep.at_rate(5.0)
    assert p.ttft.p50_s == pytest.approx(1.5 * d, rel=1e-3)
    assert p.ttft.p90_s == pytest.approx(1.9 * d, rel=1e-3)
    assert p.ttft.p99_s == pytest.approx(1.99 * d, rel=1e-3)


def test_tpot_tail_of_poisson_prefills_with_feedback() -> None:
    # decode-only step d = 20 ms at any batch; each prompt adds Δ = 50 ms: TPOT(B) = d + (B/out)·Δ
    d, delta = 0.02, 0.05
    rep = LoadedReplica(lambda b: (d + b / OUT * delta, 0.0, 1.0), lambda b: d, output_tokens=OUT, max_in_flight=10_000)
    rate = 4.0
    p = rep.at_rate(rate)
    tpot = d + p.in_flight / OUT * delta
    # K ~ Poisson(λ·(out − 1)·TPOT) prompts during a request's decode, each adding Δ/(out − 1), the deviation
    # amplified by 1/(1 − λΔ)
    m_k = rate * 100 * tpot
    sd = math.sqrt(m_k) * delta / 100 / (1 - rate * delta)
    assert p.tpot.p99_s == pytest.approx(tpot + Z_P99 * sd, rel=0.02)


def test_infer_fits_by_requests_in_flight_not_users() -> None:
    # the boundary: 70B FP8 on 8 × H100 holds about 2,700 sequences; 2,700 and 2,800 users thinking 60 s
    # keep far fewer requests in flight, so both fit; users whose requests in flight exceed the capacity do not
    base = app.load_scenario(
        EXAMPLES / "simulate-llama70b-h100.yaml",
        set={"inference.request_rate_per_s": None, "inference.think_time_s": 60.0},
    )
    seen = {}
    capacity = app.infer(app.load_scenario(base, set={"inference.users": 1})).estimate.max_concurrent_seqs
    assert 2_600 < capacity < 2_800
    for users in (2_700, 2_800, 5_200):
        e = app.infer(app.load_scenario(base, set={"inference.users": users})).estimate
        assert e.max_concurrent_seqs == capacity
        seen[users] = e
        # requests in flight N − X·Z: users minus those thinking (X requests/s each thinking Z on average)
        assert e.requests_in_flight == pytest.approx(users - e.requests_per_s * 60.0, rel=1e-6)
        assert e.fits == (e.requests_in_flight <= capacity)
    assert seen[2_700].fits and seen[2_800].fits and not seen[5_200].fits
    assert seen[2_800].requests_in_flight < 2_800 / 1.5


def _scenario(model: str, acc: str, tp: int, precision: str, think_s: float) -> app.Scenario:
    return app.load_scenario(
        {
            "model": model,
            "hardware": {"accelerator": acc, "count": tp},
            "inference": {
                "weight_precision": precision,
                "input_tokens": 1024,
                "output_tokens": 256,
                "plan": {"tp": tp},
                "think_time_s": think_s,
                "slo": {"ttft_p90_s": 1.0, "tpot_p99_s": 0.05},
            },
        }
    )


def _check_against_simulation(model: str, acc: str, tp: int, precision: str, think_s: float) -> None:
    """The analytic users per replica N_a: the simulated closed loop (users thinking exponentially) meets the SLO at
    0.8·N_a and misses it at 1.2·N_a, so the simulated most users per replica — and the replica count for any
    demand — is within ±20 % of the analytic one."""
    sc = _scenario(model, acc, tp, precision, think_s)
    wl = sc.inference
    assert wl is not None and wl.slo is not None
    _, rep = estimate_with_replica(sc.model, sc.cluster, replace(wl, batch="max"), usage="server", grid=True)
    assert rep is not None
    got = rep.max_users(wl.slo, think_s)
    assert got is not None
    users, point = got
    assert meets(point, wl.slo)
    for frac, ok in ((0.8, True), (1.2, False)):
        s = sim_closed_loop(sc, max(1, round(frac * users)), seed=0)[1]
        assert (not slo_misses(s, wl.slo)) == ok, (frac, users, slo_misses(s, wl.slo))


def test_capacity_users_per_replica_agree_with_the_simulated_closed_loop() -> None:
    _check_against_simulation("meta-llama-3.1-70b", "nvidia-a100-sxm4-80gb", 4, "bf16", 30.0)


CASES = [
    ("meta-llama-3.1-70b", "nvidia-h100-sxm5-80gb", 2, "fp8"),
    ("meta-llama-3.1-8b", "nvidia-h100-sxm5-80gb", 1, "bf16"),
    ("mixtral-8x7b", "nvidia-h100-sxm5-80gb", 2, "fp8"),
    ("meta-llama-3.1-70b", "nvidia-a100-sxm4-80gb", 4, "bf16"),
    ("meta-llama-3.1-8b", "nvidia-a100-sxm4-80gb", 1, "bf16"),
    ("mixtral-8x7b", "nvidia-a100-sxm4-80gb", 2, "bf16"),
]


@pytest.mark.slow
@pytest.mark.parametrize("think_s", [5.0, 30.0, 60.0])
@pytest.mark.parametrize(("model", "acc", "tp", "precision"), CASES)
def test_users_per_replica_agree_with_simulation_across_models_and_accelerators(
    model: str, acc: str, tp: int, precision: str, think_s: float
) -> None:
    _check_against_simulation(model, acc, tp, precision, think_s)


def test_meets_reads_percentiles() -> None:
    p = _constant(0.02, 0.1).at_rate(1.0)
    assert meets(p, Slo(tpot_p99_s=0.021)) and not meets(p, Slo(tpot_p99_s=0.019))
    assert not meets(p, Slo(ttft_p90_s=p.ttft.p90_s * 0.99))


@pytest.mark.parametrize(
    ("model", "precision", "tp", "fracs"),
    [
        ("meta-llama-3.1-70b", "fp8", 2, (0.3, 0.6, 0.8)),  # KV-bound: at 95 % its occupancy peaks fill the cache
        ("meta-llama-3.1-8b", "bf16", 1, (0.95,)),
    ],
)
def test_open_loop_tails_match_the_simulator_below_saturation(
    model: str, precision: str, tp: int, fracs: tuple[float, ...]
) -> None:
    # Poisson arrivals at fractions of the analytic saturation rate on H100: the analytic TTFT p90 and TPOT p99
    # within 15 % of the simulated ones, the median TPOT within 5 % (3,000 requests each)

    sc = app.load_scenario(
        {
            "model": model,
            "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": tp},
            "inference": {
                "weight_precision": precision,
                "input_tokens": 1024,
                "output_tokens": 256,
                "plan": {"tp": tp},
                "request_rate_per_s": 1.0,
                "num_requests": 3000,
            },
        }
    )
    wl = sc.inference
    assert wl is not None
    _, rep = estimate_with_replica(sc.model, sc.cluster, replace(wl, batch="max"), usage="server")
    assert rep is not None
    sat = rep.saturation_rate_per_s()
    for frac in fracs:
        p = rep.at_rate(frac * sat)
        s = sim_run(app.load_scenario(sc, set={"inference.request_rate_per_s": frac * sat}), seed=0).summary
        assert p.ttft.p90_s == pytest.approx(s.ttft_s.p90, rel=0.15), frac
        assert p.tpot.p99_s == pytest.approx(s.tpot_exclusive_s.p99, rel=0.15), frac
        assert p.tpot.p50_s == pytest.approx(s.tpot_exclusive_s.p50, rel=0.05), frac
