"""Model-state conventions and the multi-ring scale-out bandwidth — hand calculations written here."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from aiinfra.analytic.comms import collective_time
from aiinfra.analytic.training_memory import TrainSetup, memory_per_rank
from aiinfra.catalog.resolve import resolve, resolve_cluster
from aiinfra.planning.training import estimate_memory
from aiinfra.search.plans import single_plan
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput, parse_scenario

# a 32-layer, d=4096 GeLU model with no embedding: 32 · 12 · 4096² ≈ 6.44e9 matmul parameters (+ norms)
M = ModelArch(
    id="t",
    num_layers=32,
    hidden_size=4096,
    num_heads=32,
    ffn_hidden_size=16384,
    mlp="gelu",
    vocab_size=1,
    attention="mha",
    tied_embeddings=True,
    norm="layernorm",
)


def _state_bytes_per_param(convention: str, sharding: str = "none", dp: int = 1) -> float:
    setup = TrainSetup(model=M, seq_len=2048, global_batch_seqs=dp, precision="fp16", grad_convention=convention)
    plan = single_plan(M, setup, tp=1, pp=1, dp=dp, cp=1, ep=1, vp=1, mb=1, sharding=sharding, recompute="full")
    mem = memory_per_rank(setup, plan)
    state = float(mem["weights"][0] + mem["gradients"][0] + mem["optimizer"][0])
    from aiinfra.analytic.training_memory import rank_params

    return state / float(rank_params(setup, plan)["first"][0])


def test_zero_paper_16_bytes_per_param_is_112_gb_for_7b() -> None:
    # ZeRO paper §3.1: 2 (fp16 weights) + 2 (fp16 grads) + 4 + 4 + 4 (fp32 master, momentum, variance) = 16 B
    assert _state_bytes_per_param("zero") == pytest.approx(16.0)
    assert 7e9 * _state_bytes_per_param("zero") == pytest.approx(112e9)


def test_megatron_18_bytes_per_param() -> None:
    # Megatron-LM: fp32 main gradients -> 2 + 4 + 4 + 8 = 18 B/param = 126 GB for 7e9 parameters
    assert _state_bytes_per_param("megatron") == pytest.approx(18.0)
    assert 7e9 * _state_bytes_per_param("megatron") == pytest.approx(126e9)


def test_zero1_and_zero3_per_rank_bytes() -> None:
    # ZeRO-1 over 8 ranks: 2 + 2 + 12/8 = 5.5 B; ZeRO-3: 16/8 = 2 B (ZeRO paper Figure 1), plus the two
    # bf16 layers ZeRO-3 holds gathered (current + prefetched), which is not a per-parameter cost
    assert _state_bytes_per_param("zero", "zero1", 8) == pytest.approx(5.5)
    setup = TrainSetup(model=M, seq_len=2048, global_batch_seqs=8, precision="fp16", grad_convention="zero")
    plan = single_plan(M, setup, tp=1, pp=1, dp=8, cp=1, ep=1, vp=1, mb=1, sharding="zero3", recompute="full")
    from aiinfra.analytic.training_memory import rank_params

    rp = rank_params(setup, plan)
    mem = memory_per_rank(setup, plan)
    state = float(mem["weights"][0] + mem["gradients"][0] + mem["optimizer"][0])
    gathered = 2 * 2.0 * float(rp["layer"][0])
    assert (state - gathered) / float(rp["first"][0]) == pytest.approx(2.0)


def test_zero3_under_pipeline_holds_the_stage_gathered_with_its_unsharded_gradients() -> None:
    # pp = 2: each stage keeps its 16 layers gathered across micro-batches (2 B per parameter) and accumulates their
    # unsharded fp32 gradients until the last backward (4 B): ZeRO-3's 16/8 = 2 B of sharded state + 6 B
    setup = TrainSetup(model=M, seq_len=2048, global_batch_seqs=8, precision="fp16", grad_convention="zero")
    plan = single_plan(M, setup, tp=1, pp=2, dp=8, cp=1, ep=1, vp=1, mb=1, sharding="zero3", recompute="full")
    from aiinfra.analytic.training_memory import rank_params

    rp = rank_params(setup, plan)
    mem = memory_per_rank(setup, plan)
    state = float(mem["weights"][0] + mem["gradients"][0] + mem["optimizer"][0])
    assert state / float(rp["first"][0]) == pytest.approx(2.0 + 2.0 + 4.0)


def test_memory_command_shows_both_conventions() -> None:
    data = {
        "model": "meta-llama-2-7b",
        "hardware": {"accelerator": "nvidia-a100-sxm4-80gb", "count": 8},
        "training": {"tokens": 1e12, "seq_len": 4096, "global_batch_seqs": 512, "precision": "fp16"},
    }
    rep = estimate_memory(resolve(parse_scenario(data)))
    none_rows = [r for r in rep.rows if r.plan["sharding"] == "none"]
    assert len(none_rows) == 2
    megatron, zero = none_rows
    n = rep.total_params
    assert megatron.gradients_bytes == pytest.approx(4 * n) and zero.gradients_bytes == pytest.approx(2 * n)
    assert "ZeRO-paper" in zero.label


def test_offload_moves_optimizer_state_to_host() -> None:
    data = {
        "model": "meta-llama-2-7b",
        "hardware": {"accelerator": "nvidia-a100-sxm4-80gb", "count": 1},
        "training": {
            "tokens": 1e9,
            "seq_len": 2048,
            "global_batch_seqs": 8,
            "offload": "optimizer",
            "plan": {"sharding": "none", "recompute": "full"},
        },
    }
    row = estimate_memory(resolve(parse_scenario(data))).rows[0]
    n = 6.738e9
    assert row.optimizer_states_bytes == 0.0
    assert row.host_offload_bytes == pytest.approx(12 * n, rel=1e-3)  # fp32 master + Adam m, v on the host


def test_scale_out_all_gather_uses_one_nic_per_ring() -> None:
    # 64 A100s in 8 DGX nodes (8 × 25 GB/s NICs each). All-gather of S bytes, ring: (n−1)/n · S / B.
    # Whole nodes (stride 1): 8 rings, B = min(8 × 25, 300 NVLink) = 200 GB/s; stride 8 (one rank per node,
    # e.g. DP across tp=8 groups): one NIC, B = 25 GB/s.
    cl = resolve_cluster(HardwareInput(accelerator="nvidia-a100-sxm4-80gb", count=64, per_node=8))
    # an EFA cluster, so that the EFA-measured 4-node curve serves it (collective_latency.yaml scale-out-curve-fabrics)
    cl = dataclasses.replace(cl, scale_out_fabric="efa")
    # 20 GB: each of the 8 rings carries 2.5 GB, like the one ring of stride 8 beyond the largest measured
    # message (2.147e9), so both see the curve's last efficiency
    s = 2e10
    t1 = collective_time(cl, "allgather", s, 64, 1).time_s
    t8 = collective_time(cl, "allgather", s, 8, 8).time_s
    # Both also pay NCCL's ring latency beyond the 4-node configuration the borrowed scale-out curve was
    # measured on (collective_latency.yaml: base 8.4 us, 3.4 us per intra-node hop, 14 us per node hop):
    #   64 ranks / 8 nodes: 8.4 + 56*3.4 + 7*14 = 296.8 us, minus 32 ranks / 4 nodes 8.4 + 28*3.4 + 3*14 = 145.6
    #   8 ranks / 8 nodes:  8.4 + 7*14 = 106.4 us, minus 4 ranks / 4 nodes 8.4 + 3*14 = 50.4
    lat1, lat8 = (296.8 - 145.6) * 1e-6, (106.4 - 50.4) * 1e-6
    # per-NIC shards beyond the curve's last point see the same measured efficiency (whatever curve the catalog
    # has), so the ratio of the bandwidth parts is the ratio of the ideal ring times
    assert (t1 - lat1) / (t8 - lat8) == pytest.approx((63 / 64 * s / 200e9) / (7 / 8 * s / 25e9), rel=1e-6)
    assert t8 >= 7 / 8 * s / 25e9  # never faster than the ideal one-NIC ring


def test_setup_is_frozen() -> None:
    setup = TrainSetup(model=M, seq_len=1, global_batch_seqs=1, precision="bf16")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setup.seq_len = 2  # type: ignore[misc]
    assert np.isfinite(_state_bytes_per_param("megatron"))
