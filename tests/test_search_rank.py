"""Plan ranking: memory pruning first, fastest first, and the best plan equals a brute-force minimum."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra.analytic.training_memory import TrainSetup, memory_per_rank
from aiinfra.analytic.training_step import step_time
from aiinfra.catalog.resolve import resolve, resolve_cluster
from aiinfra.planning.training import plan_training
from aiinfra.search.plans import enumerate_plans
from aiinfra.search.rank import memory_reason, rank_plans
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput, parse_scenario

M = ModelArch(
    id="t",
    num_layers=32,
    hidden_size=4096,
    num_heads=32,
    num_kv_heads=8,
    ffn_hidden_size=14336,
    mlp="swiglu",
    vocab_size=128256,
    attention="gqa",
)


def test_best_plan_is_the_brute_force_minimum() -> None:
    cl = resolve_cluster(HardwareInput(accelerator="nvidia-h100-sxm5-80gb", count=16))
    setup = TrainSetup(model=M, seq_len=4096, global_batch_seqs=64, precision="bf16")
    en = enumerate_plans(M, 16, 64, 4096)
    ranked = rank_plans(setup, cl, en, top_k=5)
    mem = memory_per_rank(setup, en.plans)["total"]
    fit = mem <= cl.accelerator.memory_bytes
    t = step_time(setup, cl, en.plans).step_time_s
    assert ranked.fitting == int(fit.sum())
    assert ranked.rejected[memory_reason(cl.accelerator.memory_bytes)] == int((~fit).sum())
    assert t[ranked.order[0]] == np.min(t[fit])
    ranked_t = t[ranked.order]
    assert np.all(np.diff(ranked_t) >= 0) and np.all(fit[ranked.order])


@settings(max_examples=6, deadline=None)
@given(n=st.sampled_from([16, 32, 64]), factor=st.sampled_from([2, 4]))
def test_more_accelerators_never_increase_time_to_train(n: int, factor: int) -> None:
    # the best plan on k·n accelerators can always replicate the n-accelerator plan k times over dp
    # (global batch divisible), so its time can only fall — up to the search's rounding of tie-breaks
    t = []
    for count in (n, n * factor):
        data = {
            "model": "meta-llama-3.1-8b",
            "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": count},
            "training": {"tokens": 1e10, "seq_len": 4096, "global_batch_seqs": 512},
        }
        t.append(plan_training(resolve(parse_scenario(data))).estimates[0].time_to_train_s)
    assert t[1] <= t[0] * 1.001


def test_candidates_are_accounted_for() -> None:
    data = {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 64},
        "training": {"tokens": 1e10, "seq_len": 8192, "global_batch_seqs": 256},
    }
    rep = plan_training(resolve(parse_scenario(data)))
    assert rep.candidates == rep.valid_plans + sum(v for k, v in rep.rejected.items() if "memory" not in k)
    assert rep.fitting_plans + sum(v for k, v in rep.rejected.items() if "memory" in k) == rep.valid_plans
