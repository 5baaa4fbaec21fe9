"""Intra-node collective curves from AIConfigurator's comm tables (efficiency_aic_comm.yaml): points recomputed
by hand from the raw parquet numbers (ai-dynamo/aiconfigurator 0.12.0 systems/data/<system>/comm/...; message_size
counts bf16/half elements, latency is in ms), and the curve choice comms.py makes from them."""

from __future__ import annotations

import pytest

from aiinfra.analytic.comms import collective_time
from aiinfra.app.tables import domain_tables, efficiency_table
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.specs.scenario import HardwareInput

RTX = "nvidia-rtx-pro-6000"
MIB_16 = 8388608 * 2  # bytes of a 8388608-element bf16 buffer


def test_rtx_pro_6000_tp2_allreduce_over_pcie_from_trtllm_table() -> None:
    # rtx_pro_6000_server/comm/trtllm/1.3.0rc20/custom_allreduce_perf.parquet: num_gpus 2, message_size 8388608,
    # latency 0.474174 ms. No NVLink: the denominator is the catalog's PCIe Gen5 link, 63 GB/s one way.
    # busbw = 16777216 B / 0.474174e-3 s x 2(2-1)/2 = 35.38 GB/s -> / 63 GB/s = 0.5616
    look = efficiency_table().lookup("allreduce", RTX, MIB_16, n_ranks=2, tier="scale-up")
    assert look.source == "allreduce-rtxpro6000-2gpu-trtllm-aic"
    assert look.frac == pytest.approx(MIB_16 / 0.474174e-3 / 63e9, rel=1e-3)


def test_rtx_pro_6000_tp2_allreduce_time_is_the_measured_time() -> None:
    # comms.py turns the curve back into time = 2(n-1)/n x S / (B x efficiency): at a measured size that is the
    # table's own latency, 0.474174 ms for 16 MiB; 64 KiB (32768 elements) took 0.009421 ms
    cl = resolve_cluster(HardwareInput(accelerator=RTX, count=2, per_node=2))
    ct = collective_time(cl, "allreduce", MIB_16, 2)
    assert ct.tier == "scale-up"
    assert "allreduce-rtxpro6000-2gpu-trtllm-aic" in ct.efficiency_source
    assert ct.time_s == pytest.approx(0.474174e-3, rel=1e-3)
    assert collective_time(cl, "allreduce", 65536, 2).time_s == pytest.approx(0.009421e-3, rel=1e-3)


def test_l40s_4gpu_allgather_from_nccl_tests() -> None:
    # l40s/comm/nccl/2.27.3/nccl_perf.parquet: all_gather, half, num_gpus 4, message_size 8388608, latency 2.6466 ms
    # busbw = 16777216 / 2.6466e-3 x 3/4 = 4.754 GB/s -> / PCIe Gen4 31.5 GB/s = 0.1509
    look = efficiency_table().lookup("allgather", "nvidia-l40s", MIB_16, n_ranks=4, tier="scale-up")
    assert look.source == "allgather-l40s-4gpu-nccl-aic"
    assert look.frac == pytest.approx(MIB_16 / 2.6466e-3 * 3 / 4 / 31.5e9, rel=1e-3)


def test_b300_8gpu_alltoall_and_b200_4gpu_trtllm_allreduce() -> None:
    # b300_sxm/comm/nccl/2.29.2: alltoall, half, 8 GPUs, 8388608 elements in 0.04888 ms
    # busbw = 16777216 / 0.04888e-3 x 7/8 = 300.3 GB/s -> / NVLink 5 900 GB/s = 0.3337
    look = efficiency_table().lookup("alltoall", "nvidia-b300-sxm-288gb", MIB_16, n_ranks=8, tier="scale-up")
    assert look.source == "alltoall-b300-8gpu-nccl-aic"
    assert look.frac == pytest.approx(MIB_16 / 0.04888e-3 * 7 / 8 / 900e9, rel=1e-3)
    # b200_sxm/comm/trtllm/1.3.0rc20: 4 GPUs, 524288 elements (1 MiB) in 0.00966 ms
    # busbw = 1048576 / 9.66e-6 x 2 x 3/4 = 162.8 GB/s -> / 900 = 0.1809
    # (a TensorRT-LLM lookup; others prefer the engine-free NCCL curve measured at 8 ranks)
    look = efficiency_table().lookup(
        "allreduce", "nvidia-b200-sxm-180gb", 1048576, n_ranks=4, tier="scale-up", engine="trtllm"
    )
    assert look.source == "allreduce-b200-4gpu-trtllm-aic"
    engine_free = efficiency_table().lookup("allreduce", "nvidia-b200-sxm-180gb", 1048576, n_ranks=4, tier="scale-up")
    assert engine_free.source == "allreduce-b200-8gpu-nvlink5-stas00"
    assert look.frac == pytest.approx(1048576 / 9.66e-6 * 1.5 / 900e9, rel=1e-3)


def test_main_file_curves_keep_precedence_and_cross_checks_are_unused() -> None:
    # B200 at 8 ranks keeps efficiency.yaml's measured curve (the main file wins ties); H100/A100 and the NCCL
    # all-reduce rows are cross-checks only
    _, label = efficiency_table().curve("allreduce", "nvidia-b200-sxm-180gb", n_ranks=8, tier="scale-up")
    assert label == "allreduce-b200-8gpu-nvlink5-stas00"
    ids = {c.id for c in efficiency_table().curves}
    for cross_check in ("allgather-h100-8gpu-nccl-aic", "allreduce-b300-8gpu-nccl-aic"):
        assert cross_check not in ids
    # TensorRT-LLM's and vLLM's own all-reduce serve lookups naming that engine only
    trt = next(c for c in efficiency_table().curves if c.id == "allreduce-h100-8gpu-trtllm-aic")
    assert trt.engine_only and trt.engine == "trtllm"
    vll = next(c for c in efficiency_table().curves if c.id == "allreduce-rtxpro6000-2gpu-vllm-aic")
    assert vll.engine_only and vll.engine == "vllm"
    assert "allgather-b300-8gpu-nccl-aic" in ids


def test_part_own_allreduce_beats_a_borrowed_allgather() -> None:
    # H100 has no all-gather curve of its own but a measured all-reduce one: it keeps timing all-gathers with it
    # rather than borrowing H200's all-gather curve; H200 and B300 use their own all-gather curves, and a
    # reduce-scatter uses the all-gather curve (comms._CURVE_KIND)
    h100 = resolve_cluster(HardwareInput(accelerator="nvidia-h100-sxm5-80gb", count=8, per_node=8))
    assert collective_time(h100, "allgather", MIB_16, 8).efficiency_source == (
        "allgather/scale-up: allreduce-h100-8gpu-nvlink4"
    )
    h200 = resolve_cluster(HardwareInput(accelerator="nvidia-h200-sxm-141gb", count=8, per_node=8))
    assert "allgather-h200-8gpu-nccl-aic" in collective_time(h200, "allgather", MIB_16, 8).efficiency_source
    b300 = resolve_cluster(HardwareInput(accelerator="nvidia-b300-sxm-288gb", count=8, per_node=8))
    rs = collective_time(b300, "reducescatter", MIB_16, 8)
    assert rs.efficiency_source == "reducescatter/scale-up: allgather-b300-8gpu-nccl-aic"


H200 = "nvidia-h200-sxm-141gb"


def test_h200_8gpu_sglang_allreduce_from_its_own_table() -> None:
    # h200_sxm/comm/sglang/0.5.14/custom_allreduce_perf.parquet, backend sglang_graph, num_gpus 8 (raw latencies):
    #   message_size  262144 elements (512 KiB) 0.01489248 ms
    #   message_size  524288 elements (1 MiB)   0.01305056 ms
    #   message_size 1048576 elements (2 MiB)   0.01930688 ms
    # 1 MiB: busbw = 1048576 B / 0.01305056e-3 s x 2 x 7/8 = 140.6 GB/s -> / NVLink 4 450 GB/s = 0.3125.
    # 512 KiB took longer than 1 MiB, so it takes the least time at it or any larger size (0.01305056 ms):
    # 524288 / 0.01305056e-3 x 1.75 / 450e9 = 0.1562
    t = efficiency_table()
    look = t.lookup("allreduce", H200, 1048576, n_ranks=8, tier="scale-up", engine="sglang")
    assert look.source == "allreduce-h200-8gpu-sglang-aic"
    assert look.frac == pytest.approx(1048576 / 0.01305056e-3 * 1.75 / 450e9, rel=1e-3)
    half = t.lookup("allreduce", H200, 524288, n_ranks=8, tier="scale-up", engine="sglang")
    assert half.frac == pytest.approx(524288 / 0.01305056e-3 * 1.75 / 450e9, rel=1e-3)
    # other engines' and engine-free lookups never take SGLang's rows (cross_check, engine sglang)
    assert "sglang" not in t.lookup("allreduce", H200, 1048576, n_ranks=8, tier="scale-up").source
    vllm = t.lookup("allreduce", H200, 1048576, n_ranks=8, tier="scale-up", engine="vllm")
    assert vllm.source == "allreduce-h200-8gpu-vllm-aic"


def test_sglang_comm_file_holds_hopper_ampere_and_b200_rows_only() -> None:
    tables = domain_tables()
    rows = tables.file_rows("efficiency_aic_comm_sglang.yaml")
    allowed = {H200, "nvidia-h100-sxm5-80gb", "nvidia-a100-sxm4-80gb", "nvidia-b200-sxm-180gb"}
    assert {(r["accelerators"][0], r["n_ranks"]) for r in rows} == {(a, n) for a in allowed for n in (2, 4, 8)}
    assert all(r["engine"] == "sglang" and r["cross_check"] and r["kind"] == "allreduce" for r in rows)
