"""The scale-out network in the training step (issue 19): ring vs tree all-reduce, a node's NICs shared by its
ranks, leaf oversubscription, the straggler wait E[max of n] and FSDP at a thousand ranks. Expected values are
hand calculations from the cited constants (collective_latency.yaml: NCCL tuning.cc, Sinha et al. SC22)."""

from __future__ import annotations

import dataclasses
import itertools
from statistics import NormalDist

import numpy as np
import pytest

from aiinfra.analytic.comms import collective_time, fabric_share, ring_latency_s, tree_latency_s
from aiinfra.analytic.training_memory import TrainSetup
from aiinfra.analytic.training_step import expected_max_std_normal, step_time, straggler_factor
from aiinfra.app.tables import domain_tables
from aiinfra.catalog.resolve import resolve, resolve_cluster
from aiinfra.errors import SpecError
from aiinfra.search.plans import single_plan
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput, parse_scenario

A100 = "nvidia-a100-sxm4-80gb"  # DGX A100: 8 GPUs, 8 × 200 Gb/s HDR -> 25 GB/s of NIC per GPU
# the scale-out curve these clusters borrow (efficiency.yaml allreduce-b200-4node-efa-stas00): first point
# 1.311e5 B at 0.0104 of the NIC, last point 2.147e9 B at 0.739, measured on 4 nodes of AWS EFA; the helper declares
# the cluster's fabric EFA so that the curve serves it (collective_latency.yaml scale-out-curve-fabrics)
FIRST_X, FIRST_EFF, LAST_EFF = 1.311e5, 0.0104, 0.739


def _cluster(n: int, **hw: float | int):  # type: ignore[no-untyped-def]
    cl = resolve_cluster(HardwareInput(accelerator=A100, count=n, per_node=8, **hw))  # type: ignore[arg-type]
    return dataclasses.replace(cl, scale_out_fabric="efa")


# ---- NCCL latency: ring vs tree ---------------------------------------------------------------------------------


def test_tree_latency_hand_values() -> None:
    # collective_latency.yaml nccl-tree-simple: 2·((ranks per node − 1)·28 + ⌊log2 nodes⌋·50) us
    assert float(tree_latency_s(domain_tables(), np.array([64.0]), np.array([64.0]))[0]) == pytest.approx(
        2 * (0 * 28 + 6 * 50) * 1e-6
    )
    assert float(tree_latency_s(domain_tables(), np.array([16.0]), np.array([2.0]))[0]) == pytest.approx(
        2 * (7 * 28 + 1 * 50) * 1e-6
    )
    # 100 nodes: ⌊log2 100⌋ = 6
    assert float(tree_latency_s(domain_tables(), np.array([100.0]), np.array([100.0]))[0]) == pytest.approx(600e-6)
    # the ring over the same 64 nodes: 8.4 + 2·63·14 = 1772.4 us, three times the tree's
    assert float(ring_latency_s(domain_tables(), "allreduce", np.array([64.0]), np.array([64.0]))[0]) == pytest.approx(
        1772.4e-6
    )


def test_small_all_reduce_across_64_nodes_runs_as_a_tree() -> None:
    # 1 kB all-reduce over 64 ranks strided by 8 (one rank per node, one NIC of 25 GB/s): below the curve's first
    # point, the ring's bandwidth part is 2·63/64 · 1.311e5 / (25e9 · 0.0104); the tree moves the buffer
    # n / (0.9·(n − 1)) = 64 / 56.7 times slower. Latency beyond the curve's 4-node configuration (ring 8.4 + 6·14
    # = 92.4 us): ring 1772.4 − 92.4 = 1680 us, tree 600 − 92.4 = 507.6 us -> tree 1627.7 us beats ring 2672.3 us
    cl = _cluster(512)
    bw_part = 2 * 63 / 64 * FIRST_X / (25e9 * FIRST_EFF)
    tree = bw_part * 64 / (0.9 * 63) + (600 - 92.4) * 1e-6
    ring = bw_part + (1772.4 - 92.4) * 1e-6
    assert tree < ring
    assert collective_time(cl, "allreduce", 1e3, 64, 8).time_s == pytest.approx(tree, rel=1e-6)


def test_large_all_reduce_across_64_nodes_runs_as_a_ring() -> None:
    # 10 GB: bandwidth-bound, the ring's 2(n−1)/n · S / (B · 0.739) wins over the tree's 1.13x of it
    cl = _cluster(512)
    bw_part = 2 * 63 / 64 * 1e10 / (25e9 * LAST_EFF)
    assert collective_time(cl, "allreduce", 1e10, 64, 8).time_s == pytest.approx(bw_part + 1680e-6, rel=1e-6)


# ---- a node's NICs shared by its ranks --------------------------------------------------------------------------


def test_four_nics_behind_eight_gpus_halve_each_ranks_share() -> None:
    # 8 H100 per node with 4 or 8 × 400 Gb/s NDR ports: 4 · 50 / 8 = 25 GB/s or 50 GB/s of NIC per GPU. A ring of
    # one rank per node (stride 8, 16 nodes) over a 20 GB buffer (beyond the curve: efficiency 0.739) takes
    # 15/16 · 2e10 / (B · 0.739) + the ring latency beyond 4 nodes (8.4 + 15·14) − (8.4 + 3·14) = 168 us
    four = resolve_cluster(
        HardwareInput(
            accelerator="nvidia-h100-sxm5-80gb", count=128, per_node=8, scale_out="infiniband-ndr", nics_per_node=4
        )
    )
    four = dataclasses.replace(four, scale_out_fabric="efa")  # the EFA-measured curve serves it (see _cluster)
    eight = dataclasses.replace(four, scale_out_bw_one_way_bytes_per_s=50e9)
    assert four.scale_out_bw_one_way_bytes_per_s == pytest.approx(25e9)
    lat = (15 * 14 - 3 * 14) * 1e-6
    t4 = collective_time(four, "allgather", 2e10, 16, 8).time_s
    t8 = collective_time(eight, "allgather", 2e10, 16, 8).time_s
    assert t4 == pytest.approx(15 / 16 * 2e10 / (25e9 * LAST_EFF) + lat, rel=1e-6)
    assert t8 == pytest.approx(15 / 16 * 2e10 / (50e9 * LAST_EFF) + lat, rel=1e-6)


def test_whole_nodes_use_all_nics_on_per_nic_shards() -> None:
    # 64 ranks on 8 whole DGX A100 nodes: 8 rings, one per NIC, each carrying S/8; a 160 GB all-gather puts
    # 20 GB (beyond the curve) on each NIC: 63/64 · 1.6e11 / (8 · 25e9 · 0.739) + latency beyond 4 nodes
    # (8.4 + 56·3.4 + 7·14) − (8.4 + 28·3.4 + 3·14) = 151.2 us
    cl = _cluster(64)
    t = collective_time(cl, "allgather", 1.6e11, 64, 1).time_s
    assert t == pytest.approx(63 / 64 * 1.6e11 / (200e9 * LAST_EFF) + 151.2e-6, rel=1e-6)


# ---- oversubscription -------------------------------------------------------------------------------------------


def test_fabric_share_hand_values() -> None:
    cl = _cluster(512, fabric_oversubscription=2.0, nodes_per_leaf=4)
    assert list(fabric_share(cl, np.array([1.0, 4.0, 5.0, 64.0]))) == [1.0, 1.0, 0.5, 0.5]
    # no leaf size given: every inter-node group crosses the oversubscribed tier
    assert list(fabric_share(_cluster(512, fabric_oversubscription=3.0), np.array([1.0, 2.0]))) == [1.0, 1 / 3]
    # the default fabric is non-blocking (NVIDIA reference architectures)
    assert _cluster(512).fabric_oversubscription_ratio == 1.0
    assert list(fabric_share(_cluster(512), np.array([2.0, 64.0]))) == [1.0, 1.0]


def test_two_to_one_leaves_double_the_bandwidth_time_beyond_one_leaf() -> None:
    # 2:1 leaves of 4 nodes: a ring over 8 nodes (stride 8) crosses the spine and gets half the NIC rate; a
    # ring over 4 nodes stays below one leaf. 20 GB, beyond the curve (0.739). Latency beyond the curve's
    # 4 nodes: 8 nodes 8.4 + 7·14 − (8.4 + 3·14) = 56 us, 4 nodes 0
    flat, over = _cluster(512), _cluster(512, fabric_oversubscription=2.0, nodes_per_leaf=4)
    bw8 = 7 / 8 * 2e10 / (25e9 * LAST_EFF)
    assert collective_time(flat, "allgather", 2e10, 8, 8).time_s == pytest.approx(bw8 + 56e-6, rel=1e-6)
    assert collective_time(over, "allgather", 2e10, 8, 8).time_s == pytest.approx(2 * bw8 + 56e-6, rel=1e-6)
    bw4 = 3 / 4 * 2e10 / (25e9 * LAST_EFF)
    assert collective_time(over, "allgather", 2e10, 4, 8).time_s == pytest.approx(bw4, rel=1e-6)


def test_scenario_fabric_fields_are_checked() -> None:
    base = {"model": "meta-llama-2-7b", "hardware": {"accelerator": A100, "count": 64}}
    sc = resolve(parse_scenario(base, [f"hardware.fabric_oversubscription={2}", "hardware.nodes_per_leaf=4"]))
    assert (sc.cluster.fabric_oversubscription_ratio, sc.cluster.nodes_per_leaf) == (2.0, 4)
    with pytest.raises(SpecError, match="fabric_oversubscription"):
        parse_scenario(base, ["hardware.fabric_oversubscription=0.5"])


# ---- more ranks never make one collective faster -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["allreduce", "allgather", "reducescatter"])
def test_more_ranks_are_never_faster(kind: str) -> None:
    cl = _cluster(8192)
    ranks = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    for size, stride in itertools.product([1e3, 1e6, 1e8, 1e10], [1, 8]):
        times = [collective_time(cl, kind, size, n, stride).time_s for n in ranks if (n - 1) * stride < 8192]  # type: ignore[arg-type]
        assert all(b >= a * (1 - 1e-9) for a, b in itertools.pairwise(times)), (kind, size, stride, times)


# ---- the straggler wait -----------------------------------------------------------------------------------------


def test_expected_max_of_normals_against_order_statistic_tables() -> None:
    # exact E[max of n standard normals] (David & Nagaraja, Order Statistics): n = 2 1/√π = 0.5642, n = 8 1.4236,
    # n = 1000 3.2414; Blom's approximation is within 5 % at n = 2 and 1 % from n = 8
    got = expected_max_std_normal(np.array([1, 2, 8, 1000]))
    assert got[0] == 0.0
    assert got[1] == pytest.approx(0.5642, rel=0.05)
    assert got[2] == pytest.approx(1.4236, rel=0.01)
    assert got[3] == pytest.approx(3.2414, rel=0.01)


def test_straggler_factor_hand_value() -> None:
    # cv 0.0099 (collective_latency.yaml gpu-speed-variation): 1000 ranks wait 0.0099 · Φ⁻¹(999.625/1000.25)
    z = NormalDist().inv_cdf(999.625 / 1000.25)  # 3.2273
    assert float(straggler_factor(domain_tables(), np.array([1000]))[0]) == pytest.approx(1 + 0.0099 * z)
    assert float(straggler_factor(domain_tables(), np.array([1]))[0]) == 1.0
    f = straggler_factor(domain_tables(), np.array([8, 64, 1024, 16384]))
    assert all(np.diff(f) > 0)  # the slowest of more ranks is slower
    assert f[-1] < 1.05  # ~4 % at 16K ranks for a 1 % per-GPU spread


# ---- FSDP at a thousand ranks -----------------------------------------------------------------------------------

M7B = ModelArch(
    id="t7b",
    num_layers=32,
    hidden_size=4096,
    num_heads=32,
    ffn_hidden_size=11008,
    mlp="swiglu",
    vocab_size=32000,
    attention="mha",
    tied_embeddings=False,
    norm="rmsnorm",
)


def _fsdp_step(dp: int):  # type: ignore[no-untyped-def]
    setup = TrainSetup(model=M7B, seq_len=4096, global_batch_seqs=dp, precision="bf16")
    plans = single_plan(M7B, setup, tp=1, pp=1, dp=dp, cp=1, ep=1, vp=1, mb=1, sharding="fsdp", recompute="none")
    return step_time(setup, _cluster(dp), plans)


def test_fsdp_at_1024_ranks_is_slower_than_without_a_network() -> None:
    # one 4k sequence per rank on 1,024 A100s: the gathers and scatters of 32 layers over 128 nodes cost their
    # first gather, last scatter, the overlap slowdown and the wait for the slowest of 1,024 ranks
    st = _fsdp_step(1024)
    no_network = float(st.compute_s[0] + st.bubble_s[0])
    assert float(st.dp_comm_exposed_s[0]) > 0.0
    assert float(st.straggler_s[0]) == pytest.approx(no_network * 0.0099 * NormalDist().inv_cdf(1023.625 / 1024.25))
    assert float(st.step_time_s[0]) > 1.03 * no_network
    # weak scaling, same work per rank: 1,024 ranks are slower per step than 64
    assert float(st.step_time_s[0]) > float(_fsdp_step(64).step_time_s[0])
