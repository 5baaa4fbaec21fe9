"""All-reduce among more than two PCIe-only GPUs: NCCL's ring over P2P hops timed from the part's own measured
two-GPU all-reduce (comms.pcie_ring_allreduce_s, collective_latency.yaml pcie-p2p-ring), checked by hand and against
published PCIe all-reduce measurements."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.comms import collective_time
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.specs.scenario import HardwareInput

L40S = "nvidia-l40s"
PCIE4_ONE_WAY_BPS = 31.5e9


def _l40s(n: int) -> object:
    return resolve_cluster(HardwareInput(accelerator=L40S, count=n, per_node=8))


def test_eight_l40s_ring_of_p2p_hops_by_hand() -> None:
    # 1 MiB (64 decode tokens x 8192 hidden x 2 B): each of 2(n-1) = 14 ring steps moves 1048576 / 8 B over one hop;
    # a two-GPU all-reduce of 2 x 131072 = 262144 B is 2 such steps. AIConfigurator's L40S two-GPU curve at 262144 B:
    # 0.256 of PCIe Gen4 31.5 GB/s -> 262144 / (31.5e9 x 0.256) = 32.51 us, so t_8 = 7 x 32.51 us = 227.6 us
    ct = collective_time(_l40s(8), "allreduce", 1048576, 8)  # type: ignore[arg-type]
    assert ct.time_s == pytest.approx(7 * 262144 / (PCIE4_ONE_WAY_BPS * 0.256), rel=1e-3)
    assert "pcie-p2p-ring" in ct.efficiency_source and "allreduce-l40s-2gpu-trtllm-aic" in ct.efficiency_source


def test_large_buffer_bus_bandwidth_is_the_measured_p2p_hop() -> None:
    # 32 MiB on 8 ranks: chunk 8 MiB; the two-GPU curve at 8388608 B is 0.6214 -> bus bandwidth of the ring =
    # 0.6214 x 31.5 GB/s = 19.6 GB/s (a ring's busbw is its hop bandwidth, Patarasuk & Yuan 2009)
    size = 33554432.0
    t = collective_time(_l40s(8), "allreduce", size, 8).time_s  # type: ignore[arg-type]
    busbw = size / t * 2 * 7 / 8
    assert busbw == pytest.approx(0.6214 * PCIE4_ONE_WAY_BPS, rel=2e-3)


def test_between_host_routed_measurement_and_nvlink() -> None:
    # Published PCIe rings: 4 x RTX 4090 (AD102, Gen4 x16, P2P) 1 MiB in 152.7 us, busbw 10.3 GB/s (tinygrad
    # open-gpu-kernel-modules PR #22); AIConfigurator's host-routed 8 x L40S host took 15.8 ms for 16 MiB (busbw
    # 1.86 GB/s, vLLM). The ring model must be far faster than that host and within 2x of the published P2P ring.
    t4 = collective_time(_l40s(4), "allreduce", 1048576, 4).time_s  # type: ignore[arg-type]
    assert 152.7e-6 / 2 < t4 < 152.7e-6 * 2
    t8_16mib = collective_time(_l40s(8), "allreduce", 16777216, 8, engine="vllm").time_s  # type: ignore[arg-type]
    assert t8_16mib < 15.8059e-3 / 5


def test_host_routed_rows_exist_and_two_gpu_pairs_keep_their_curve() -> None:
    row = next(r for r in catalog.raw_rows("collective_latency") if r["id"] == "pcie-p2p-ring")
    ids = {r["id"] for r in catalog.file_rows("efficiency_aic_comm.yaml")}
    assert set(row["host_routed_rows"]) <= ids
    # two ranks: one hop, the measured two-GPU time itself (8388608 elements x 2 B in 0.839544 ms)
    ct = collective_time(_l40s(2), "allreduce", 16777216, 2)  # type: ignore[arg-type]
    assert ct.time_s == pytest.approx(0.839544e-3, rel=2e-3)
