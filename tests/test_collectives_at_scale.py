"""Collective mechanisms at scale (issue 28): NVLink SHARP and InfiniBand SHARP all-reduces chosen as NCCL's model
does, scale-out curves used only on the fabric they were measured on (tensor parallelism across nodes), a NIC shared
by concurrent collectives, and the busiest expert-parallel rank. Expected values are hand calculations from the
cited constants (collective_latency.yaml: NCCL tuning.cc; efficiency.yaml: Vidur's two-node H100 send/recv)."""

from __future__ import annotations

import dataclasses
import itertools
from statistics import NormalDist

import numpy as np
import pytest

from aiinfra.analytic.comms import collective_time
from aiinfra.analytic.training_memory import TrainSetup, rank_params
from aiinfra.analytic.training_step import expert_load_imbalance, shared_link_s, step_time
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.search.plans import single_plan
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput

A100, H100 = "nvidia-a100-sxm4-80gb", "nvidia-h100-sxm5-80gb"
# efficiency.yaml p2p-h100-internode-vidur: NCCL send/recv between two H100 nodes over InfiniBand, scaled for rings
# so that its largest message reads the NCCL maintainers' 0.94 of an NDR / HDR NIC (collective_latency.yaml
# scale-out-curve-fabrics ring_ceiling_frac)
P2P = [(6.758e4, 0.0676), (9.974e5, 0.3836), (4.243e6, 0.6405), (1.596e7, 0.6908), (6.246e7, 0.6839)]
RING = 0.94 / 0.6839


def _p2p_time(x: float, factor: float, bw: float) -> float:
    """The ring-scaled curve's times interpolated linearly in size (comms.collective_time_array): factor · x / (bw ·
    eff), beyond the last point at its efficiency."""
    if x >= P2P[-1][0]:
        return factor * x / (bw * min(1.0, P2P[-1][1] * RING))
    for (x0, e0), (x1, e1) in itertools.pairwise(P2P):
        if x0 <= x <= x1:
            t0, t1 = factor * x0 / (bw * min(1.0, e0 * RING)), factor * x1 / (bw * min(1.0, e1 * RING))
            return t0 + (t1 - t0) * (x - x0) / (x1 - x0)
    raise AssertionError("outside the curve")


def _cluster(acc: str, n: int, **hw: object):  # type: ignore[no-untyped-def]
    return resolve_cluster(HardwareInput(accelerator=acc, count=n, per_node=8, **hw))  # type: ignore[arg-type]


# ---- which clusters run NVLS ------------------------------------------------------------------------------------


def test_nvls_where_the_switch_reduces() -> None:
    # NVLink 4 / 5 behind NVSwitch (collective_latency.yaml nccl-nvls); Ampere's NVSwitch has no SHARP
    assert _cluster(H100, 16).nvls and _cluster("nvidia-b200-sxm-180gb", 16).nvls
    assert resolve_cluster(HardwareInput(accelerator="nvidia-gb200", count=72)).nvls
    assert not _cluster(A100, 16).nvls
    assert not _cluster(H100, 16, nvls=False).nvls  # NCCL_NVLS_ENABLE=0
    # the H100 NVL pairs GPUs by an NVLink bridge, no switch
    assert not resolve_cluster(HardwareInput(accelerator="nvidia-h100-nvl-94gb", count=2, per_node=2)).nvls


def test_nvls_tree_beats_the_ring_over_two_nodes() -> None:
    # 400 MB over 2 DGX H100 nodes (16 ranks, 8 NICs of 50 GB/s): the ring moves 2·15/16 of it through the NICs, each
    # NIC a 50 MB shard at the ring-scaled InfiniBand efficiency, + NCCL latency 8.4 + 28·3.4 + 2·14 = 131.6 us.
    # NVLS_TREE: bus bandwidth min(2 × the NICs', the node's NVLS 1.05 × 450 GB/s) + 23 + 2·1·14 = 51 us.
    cl = _cluster(H100, 16)
    ring_bw = _p2p_time(5e7, 2 * 15 / 16, 50e9)  # 8 NICs side by side, each its 1/8 shard
    nvls = max(ring_bw / 2, 2 * 15 / 16 * 4e8 / (1.05 * 450e9)) + 51e-6
    ring = ring_bw + 131.6e-6
    assert nvls < ring
    assert collective_time(cl, "allreduce", 4e8, 16, 1).time_s == pytest.approx(nvls, rel=1e-6)
    # with NVLS off, NCCL runs the ring (the tree's 16/(0.9·15) bandwidth and 492 us latency lose here)
    off = _cluster(H100, 16, nvls=False)
    assert collective_time(off, "allreduce", 4e8, 16, 1).time_s == pytest.approx(ring, rel=1e-6)


@pytest.mark.parametrize(("nodes", "measured_busbw"), [(2, 470e9), (4, 365.84e9)])
def test_hgx_h100_all_reduce_bus_bandwidth_against_nccl_tests(nodes: int, measured_busbw: float) -> None:
    # nccl-tests issue #309: HGX H100 with 8 GPU-NIC pairs of 400 Gb/s per node, all_reduce_perf at large sizes:
    # 470 GB/s busbw on 2 nodes (NVLS_TREE, above the NICs' 400), 365.84 GB/s on 4 nodes
    n = 8 * nodes
    size = 8 * 2**30
    t = collective_time(_cluster(H100, n), "allreduce", size, n, 1).time_s
    assert 2 * (n - 1) / n * size / t == pytest.approx(measured_busbw, rel=0.05)


def test_beyond_two_nodes_nvls_tree_moves_at_the_ring_rate_with_tree_latency() -> None:
    # 4 nodes: NVLS_TREE's bus bandwidth is the NICs' (no doubling), so it differs from the ring by its latency,
    # 23 + 2·2·14 = 79 us against the ring's 8.4 + 56·3.4 + 6·14 = 282.8 us
    cl, off = _cluster(H100, 32), _cluster(H100, 32, nvls=False)
    ring_bw = _p2p_time(1.25e8, 2 * 31 / 32, 50e9)
    assert collective_time(cl, "allreduce", 1e9, 32, 1).time_s == pytest.approx(ring_bw + 79e-6, rel=1e-6)
    assert collective_time(off, "allreduce", 1e9, 32, 1).time_s == pytest.approx(ring_bw + 282.8e-6, rel=1e-6)


def test_nvls_needs_two_ranks_per_node() -> None:
    # a data-parallel group strided by tp = 8 has one rank per node: NVLS_TREE is not a candidate
    on, off = _cluster(H100, 128), _cluster(H100, 128, nvls=False)
    assert collective_time(on, "allreduce", 1e8, 16, 8).time_s == collective_time(off, "allreduce", 1e8, 16, 8).time_s


def test_ib_sharp_is_opt_in_and_moves_each_shard_once() -> None:
    # 1 GB over 64 DGX A100 nodes (512 ranks, 8 NICs of 25 GB/s), SHARP on: each NIC sends its 125 MB shard up once
    # and receives it once: wire time (beyond the curve: the ring ceiling 0.94) + CollNet latency 2·(3.7 + 7·0.4) + 31
    # = 44 us; no Hopper correction on Ampere
    wire = 1.25e8 / (25e9 * 0.94)
    sharp = _cluster(A100, 512, ib_sharp=True)
    assert collective_time(sharp, "allreduce", 1e9, 512, 1).time_s == pytest.approx(wire + 44e-6, rel=1e-6)
    ring = collective_time(_cluster(A100, 512), "allreduce", 1e9, 512, 1).time_s
    assert ring > 1.9 * wire  # the ring moves 2·511/512 of it


# ---- fabric-scoped curves: tensor parallelism across nodes ------------------------------------------------------


def test_infiniband_cluster_does_not_use_the_efa_curve() -> None:
    # 4 MB all-reduce over 2 DGX A100 nodes (tp 16): 8 rings, each NIC a 0.5 MB shard at the ring-scaled InfiniBand
    # point-to-point efficiency, plus NCCL's ring latency 131.6 us (the tree's 492 us loses)
    cl = _cluster(A100, 16)
    assert cl.scale_out_fabric == "rdma"
    t = collective_time(cl, "allreduce", 4e6, 16, 1)
    assert "p2p-h100-internode-vidur" in t.efficiency_source
    assert t.time_s == pytest.approx(_p2p_time(5e5, 2 * 15 / 16, 25e9) + 131.6e-6, rel=1e-6)
    # an EFA cluster keeps the EFA-measured curve: 0.5 MB per NIC at 0.0366 of the NIC, several times slower
    efa = dataclasses.replace(cl, scale_out_fabric="efa")
    slow = collective_time(efa, "allreduce", 4e6, 16, 1)
    assert "allreduce-b200-4node-efa-stas00" in slow.efficiency_source
    assert slow.time_s > 3 * t.time_s


def test_tp_across_nodes_is_priced_by_its_nics() -> None:
    # tp 16 on 8-GPU A100 nodes: every tensor-parallel all-reduce crosses the NICs; the step counts 4 per layer and
    # micro-batch, each never faster than the whole node's NICs at line rate: 2·15/16 · S / (8 · 25 GB/s)
    m = ModelArch(
        id="t",
        name="t",
        num_layers=16,
        hidden_size=8192,
        num_heads=64,
        num_kv_heads=64,
        head_dim=128,
        ffn_hidden_size=32768,
        vocab_size=51200,
        mlp="gelu",
    )
    setup = TrainSetup(model=m, seq_len=2048, global_batch_seqs=8, precision="bf16")
    cl = _cluster(A100, 16)
    plan = single_plan(m, setup, tp=16, pp=1, dp=1, cp=1, ep=1, vp=1, mb=1, sharding="none", recompute="none")
    st = step_time(setup, cl, plan)
    act = 2048 * 8192 * 2.0
    one = collective_time(cl, "allreduce", act, 16, 1).time_s
    assert float(st.tp_comm_s[0]) == pytest.approx(8 * 16 * 4 * one, rel=1e-9)  # 8 micro-batches x 16 layers x 4
    assert one >= 2 * 15 / 16 * act / (8 * 25e9)
    inside = collective_time(_cluster(A100, 8), "allreduce", act, 8, 1).time_s
    assert one > inside  # the NICs (200 GB/s a node) are the slowest link, not NVLink (300 GB/s a GPU)


# ---- a NIC shared by concurrent collectives --------------------------------------------------------------------


def test_max_min_fair_share_hand_values() -> None:
    # two flows from the same start on one link: the pair ends at a + b, the shorter one at 2·min(a, b)
    assert float(shared_link_s(np.array([2e-3]), np.array([1e-3]))[0]) == pytest.approx(3e-3)
    assert float(shared_link_s(np.array([1e-3]), np.array([3e-3]))[0]) == pytest.approx(2e-3)
    assert float(shared_link_s(np.array([1e-3]), 0.0)[0]) == pytest.approx(1e-3)


def test_gradient_reduction_shares_the_nic_with_pipeline_sends() -> None:
    # 32 H100 on 4 nodes, pp 2 x dp 16: the data-parallel all-reduce (16 ranks on 2 nodes) and the last backward's
    # pipeline send (stride 16: to another node) leave through the same NIC. Exposed after the backward here, the
    # all-reduce takes a + min(a, b), b = one gradient send of the micro-batch's activations (4096 x 4096 x 2 B)
    m = ModelArch(
        id="t",
        name="t",
        num_layers=8,
        hidden_size=4096,
        num_heads=32,
        num_kv_heads=32,
        head_dim=128,
        ffn_hidden_size=16384,
        vocab_size=32000,
        mlp="gelu",
    )
    setup = TrainSetup(model=m, seq_len=4096, global_batch_seqs=64, precision="bf16", dp_grad_overlap=False)
    cl = _cluster(H100, 32)
    plan = single_plan(m, setup, tp=1, pp=2, dp=16, cp=1, ep=1, vp=1, mb=1, sharding="none", recompute="none")
    params = float(rank_params(setup, plan)["first"][0])
    a = collective_time(cl, "allreduce", params * 2.0, 16, 1).time_s  # 16-bit gradients
    b = collective_time(cl, "p2p", 4096 * 4096 * 2.0, 2, 16).time_s
    assert 0 < b < a
    assert float(step_time(setup, cl, plan).dp_comm_exposed_s[0]) == pytest.approx(a + b, rel=1e-9)
    # the same all-reduce inside one node (dp 8 on NVLink) shares nothing with the send that leaves the node
    cl8 = _cluster(H100, 16)
    plan8 = single_plan(m, setup, tp=1, pp=2, dp=8, cp=1, ep=1, vp=1, mb=1, sharding="none", recompute="none")
    a8 = collective_time(cl8, "allreduce", float(rank_params(setup, plan8)["first"][0]) * 2.0, 8, 1).time_s
    assert float(step_time(setup, cl8, plan8).dp_comm_exposed_s[0]) == pytest.approx(a8, rel=1e-9)


# ---- the busiest expert-parallel rank ---------------------------------------------------------------------------


def test_expert_load_of_the_busiest_rank_hand_value() -> None:
    # uniform routing of 4096 tokens x top-8 over 8 ranks: each rank mean 32768 assignments, multinomial σ² = μ(1 −
    # 1/8); the busiest of 8 ranks carries μ + σ·Φ⁻¹((8 − 0.375)/(8 + 0.25)) (Blom)
    e8 = NormalDist().inv_cdf((8 - 0.375) / 8.25)
    want = 1 + (7 / 8 / 32768) ** 0.5 * e8
    got = expert_load_imbalance(np.array([32768.0]), np.array([8]), np.array([16.0]), 0.0)
    assert float(got[0]) == pytest.approx(want, rel=1e-9)
    # a learned router whose expert loads spread by 20 %: 16 experts per rank average it to 0.2/4 = 5 %
    skew = expert_load_imbalance(np.array([32768.0]), np.array([8]), np.array([16.0]), 0.2)
    assert float(skew[0]) == pytest.approx(1 + (7 / 8 / 32768 + 0.04 / 16) ** 0.5 * e8, rel=1e-9)
    assert float(expert_load_imbalance(np.array([100.0]), np.array([1]), np.array([8.0]), 0.2)[0]) == 1.0
