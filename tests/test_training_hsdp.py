"""Hybrid sharding (HSDP: PyTorch FSDP HYBRID_SHARD, Zhao et al. 2023 §3.2.2; PaLM §4) and the TPU v4 host's
data-centre network. Expected values are hand calculations written here: bytes per parameter after sharding over a
shard group, and the step's exposed data-parallel communication as the one-node FSDP of the same micro-batches plus
one all-reduce of each rank's gradient shard across the replica groups."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from aiinfra.analytic.comms import collective_time
from aiinfra.analytic.training_memory import TrainSetup, _state_bytes_per_param, rank_params, shard_group_ranks
from aiinfra.analytic.training_step import step_time
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.search.plans import single_plan
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput

H100 = "nvidia-h100-sxm5-80gb"
M = ModelArch(
    id="t",
    num_layers=4,
    hidden_size=4096,
    num_heads=32,
    ffn_hidden_size=16384,
    mlp="gelu",
    vocab_size=32000,
    attention="mha",
    tied_embeddings=False,
    norm="layernorm",
)


def _setup(shard: int, gbs: int, dp_grad_overlap: bool = True) -> TrainSetup:
    return TrainSetup(
        model=M,
        seq_len=2048,
        global_batch_seqs=gbs,
        precision="bf16",
        fsdp_shard_ranks=shard,
        dp_grad_overlap=dp_grad_overlap,
    )


def _plan(setup: TrainSetup, dp: int, sharding: str = "fsdp"):  # type: ignore[no-untyped-def]
    return single_plan(M, setup, tp=1, pp=1, dp=dp, cp=1, ep=1, vp=1, mb=1, sharding=sharding, recompute="none")


def test_shard_group_is_the_gcd_of_the_data_parallel_group_and_the_shard_ranks() -> None:
    assert int(shard_group_ranks(_setup(8, 64), _plan(_setup(8, 64), 64))[0]) == 8
    assert int(shard_group_ranks(_setup(8, 12), _plan(_setup(8, 12), 12))[0]) == 4  # gcd(12, 8)
    assert int(shard_group_ranks(_setup(0, 64), _plan(_setup(0, 64), 64))[0]) == 64  # FULL_SHARD


def test_hsdp_shards_states_over_the_group_and_zero1_stays_over_all_ranks() -> None:
    # FSDP keeps fp32 params (4 B), fp32 grads (4 B) and Adam's m, v (8 B) sharded (training_memory docstring):
    # over a group of 8 of the 64 ranks that is 4/8, 4/8, 8/8 B per parameter; full sharding 4/64, 4/64, 8/64
    w, g, o = _state_bytes_per_param(_setup(8, 64), _plan(_setup(8, 64), 64))
    assert (float(w[0]), float(g[0]), float(o[0])) == pytest.approx((0.5, 0.5, 1.0))
    w, g, o = _state_bytes_per_param(_setup(0, 64), _plan(_setup(0, 64), 64))
    assert (float(w[0]), float(g[0]), float(o[0])) == pytest.approx((4 / 64, 4 / 64, 8 / 64))
    # ZeRO-1 shards the optimizer (fp32 master 4 B + m, v 8 B) over every data-parallel rank, HSDP or not
    _, _, o = _state_bytes_per_param(_setup(8, 64), _plan(_setup(8, 64), 64, "zero1"))
    assert float(o[0]) == pytest.approx(12 / 64)


def test_hsdp_over_the_whole_group_is_full_sharding() -> None:
    cl = resolve_cluster(HardwareInput(accelerator=H100, count=32, per_node=8))
    full = step_time(_setup(0, 64), cl, _plan(_setup(0, 64), 32))
    same = step_time(_setup(32, 64), cl, _plan(_setup(32, 64), 32))
    assert float(same.step_time_s[0]) == pytest.approx(float(full.step_time_s[0]), rel=1e-12)


def test_hsdp_within_a_node_is_one_node_fsdp_plus_a_shard_all_reduce_across_nodes() -> None:
    # 16 nodes of 8 H100, shard group = one node (8 ranks, stride 1), 16 replicas. With the same micro-batches per
    # rank (global batch 128 on 128 ranks, 8 on one node: 1 micro-batch each) every FSDP gather and
    # scatter is the one-node FSDP's; on top, each rank all-reduces its 1/8 gradient shard (fp32: 4 B per
    # parameter) over the 16 ranks holding the same shard (stride 8 = one per node), exposed here (no overlap)
    big = resolve_cluster(HardwareInput(accelerator=H100, count=128, per_node=8))
    one = resolve_cluster(HardwareInput(accelerator=H100, count=8, per_node=8))
    hsdp_setup, node_setup = _setup(8, 128, dp_grad_overlap=False), _setup(0, 8, dp_grad_overlap=False)
    hsdp = step_time(hsdp_setup, big, _plan(hsdp_setup, 128))
    node = step_time(node_setup, one, _plan(node_setup, 8))
    params = float(rank_params(hsdp_setup, _plan(hsdp_setup, 128))["first"][0])
    shard_ar = collective_time(big, "allreduce", params / 8 * 4.0, 16, stride=8).time_s
    assert shard_ar > 0
    assert float(hsdp.dp_comm_exposed_s[0]) == pytest.approx(float(node.dp_comm_exposed_s[0]) + shard_ar, rel=1e-9)


def test_hsdp_keeps_the_gathers_off_the_slow_tier() -> None:
    # full sharding over 128 ranks gathers every layer across 16 nodes; HSDP inside a node gathers over NVLink and
    # sends only one shard all-reduce across nodes per step. On a fabric slow at mid-size messages (AWS EFA, whose
    # measured curve serves an EFA cluster: collective_latency.yaml scale-out-curve-fabrics) the per-layer gathers
    # across nodes cost more than the one shard all-reduce
    big = resolve_cluster(HardwareInput(accelerator=H100, count=128, per_node=8))
    big = dataclasses.replace(big, scale_out_fabric="efa")
    full = step_time(_setup(0, 128), big, _plan(_setup(0, 128), 128))
    hsdp = step_time(_setup(8, 128), big, _plan(_setup(8, 128), 128))
    assert float(hsdp.dp_comm_exposed_s[0]) < float(full.dp_comm_exposed_s[0])


def test_tpu_v4_host_has_the_scaling_books_dcn_bandwidth() -> None:
    # scaling-book tpus.md: 'DCN bandwidth is typically around 2.5e10 bytes / second per host', 4 chips per host
    cl = resolve_cluster(HardwareInput(accelerator="google-tpu-v4", count=8192))
    assert cl.system_id == "gcp-tpu-v4-host"
    assert cl.per_node == 4
    assert cl.scale_out_bw_one_way_bytes_per_s == pytest.approx(2.5e10 / 4)


def test_setup_field_defaults_to_full_sharding() -> None:
    fields = {f.name: f.default for f in dataclasses.fields(TrainSetup)}
    assert fields["fsdp_shard_ranks"] == 0
    assert np.gcd(512, 256) == 256  # PaLM: 256-way sharding inside each of two pods (dp 512)
