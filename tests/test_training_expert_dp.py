"""Routed-expert gradients reduce over the expert-data-parallel group (Megatron-Core parallel_state: ranks holding the
same experts, dp·cp/ep of them, ep data-parallel ranks apart), not over the whole data-parallel group. Expected
values are hand calculations written here."""

from __future__ import annotations

import numpy as np
import pytest

import aiinfra.analytic.training_step as ts
from aiinfra.analytic.training_memory import TrainSetup
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.search.plans import single_plan
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput

# 4 MoE layers, 16 experts of width 1024 (swiglu: 3 matrices), hidden 2048, no shared expert
MOE = ModelArch(
    id="t-moe",
    num_layers=4,
    hidden_size=2048,
    num_heads=16,
    ffn_hidden_size=1024,
    moe_ffn_hidden_size=1024,
    num_experts=16,
    experts_per_token=2,
    mlp="swiglu",
    vocab_size=32000,
    attention="mha",
)


def _sync_calls(ep: int, monkeypatch: pytest.MonkeyPatch, expert_tp: int = 0) -> list[tuple[str, float, int, int]]:
    calls: list[tuple[str, float, int, int]] = []
    real = ts.collective_time_array

    def spy(cluster, kind, nbytes, n, stride, src, *a, **k):  # type: ignore[no-untyped-def]
        calls.append((kind, float(np.ravel(nbytes)[0]), int(np.ravel(n)[0]), int(np.ravel(stride)[0])))
        return real(cluster, kind, nbytes, n, stride, src, *a, **k)

    monkeypatch.setattr(ts, "collective_time_array", spy)
    cluster = resolve_cluster(HardwareInput(accelerator="nvidia-h100-sxm5-80gb", count=64, per_node=8))
    setup = TrainSetup(model=MOE, seq_len=2048, global_batch_seqs=64, precision="bf16", expert_tp=expert_tp)
    plan = single_plan(MOE, setup, tp=2, pp=1, dp=32, cp=1, ep=ep, vp=1, mb=1, sharding="zero1", recompute="none")
    ts.step_time(setup, cluster, plan)
    return calls


def test_routed_expert_gradients_reduce_over_the_expert_data_parallel_group(monkeypatch: pytest.MonkeyPatch) -> None:
    # routed parameters per rank: 4 layers x 16 experts x 3 x 2048 x 1024 / (ep 8 x tp 2) = 25,165,824;
    # 2-byte gradients reduce-scattered over dp / ep = 4 replicas, 2 x 8 = 16 ranks apart
    routed = 4 * 16 * 3 * 2048 * 1024 / (8 * 2)
    calls = _sync_calls(8, monkeypatch)
    assert ("reducescatter", pytest.approx(routed * 2.0), 4, 16) in calls
    assert ("allgather", pytest.approx(routed * 2.0), 4, 16) in calls
    # the rest of the stage over all 32 data-parallel ranks, tp apart: attention 4 x 4 x 2048^2 / 2, router
    # 4 x 16 x 2048 / 2, norms 4 x 2 x 2048, embedding and output layer 2 x 32000 x 2048 / 2
    dense = 4 * 4 * 2048**2 / 2 + 4 * 16 * 2048 / 2 + 4 * 2 * 2048 + 2 * 32000 * 2048 / 2  # 99,172,352
    assert ("reducescatter", pytest.approx(dense * 2.0), 32, 2) in calls
    assert ("reducescatter", pytest.approx((dense + routed) * 2.0), 32, 2) not in calls


def test_without_expert_parallelism_every_parameter_reduces_over_the_data_parallel_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _sync_calls(1, monkeypatch)
    assert not [c for c in calls if c[0] == "reducescatter" and c[2] != 32]


def test_expert_tensor_parallel_1_keeps_whole_experts_over_twice_the_replicas(monkeypatch: pytest.MonkeyPatch) -> None:
    # expert_tensor_parallel_size 1 under tp 2 (the MLPerf v6.0 DeepSeek-V3 recipe's default): expert groups of
    # etp·ep = 8 ranks out of the stage's tp·dp = 64, so 8 replicas, 8 ranks apart, each holding
    # 4 x 16 x 3 x 2048 x 1024 / 8 = 50,331,648 routed parameters
    routed = 4 * 16 * 3 * 2048 * 1024 / 8
    calls = _sync_calls(8, monkeypatch, expert_tp=1)
    assert ("reducescatter", pytest.approx(routed * 2.0), 8, 8) in calls
