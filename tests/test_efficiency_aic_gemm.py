"""GEMM and weight-streaming curves reduced from AIConfigurator's TensorRT-LLM GEMM timings
(efficiency_aic_gemm.yaml): bin medians recomputed by hand from the raw parquet rows (m, n, k, latency in ms),
the rows the planner chooses, and the memory fit it makes from them."""

from __future__ import annotations

import pytest

from aiinfra.analytic.efficiency import _curve, efficiency_rows
from aiinfra.analytic.kernel_time import memory_fit_for
from aiinfra.app.tables import domain_tables, efficiency_table


def test_gb200_bf16_gemm_median_at_1e12_flop() -> None:
    # gb200/gemm/trtllm/1.3.0rc20, bfloat16: 1345 compute-bound shapes (2mnk / (2(mk+kn) + 2mn) > 2500/8 = 312.5)
    # within +-1/4 decade of 1e12 FLOP; the middle one: m=1536, n=4096, k=51200 in 0.4052747 ms
    flop = 2 * 1536 * 4096 * 51200
    expected = flop / 0.4052747e-3 / 2500e12  # 0.6359 of the catalog 2500 TFLOP/s
    look = efficiency_table().lookup("gemm", "nvidia-gb200", 1e12, dtype="bf16")
    assert look.source == "gemm-bf16-gb200-aic-trtllm"  # measured on GB200: beats the MAMF-scaled B200 derivation
    assert look.frac == pytest.approx(expected, abs=1e-4)


def test_rtx_pro_6000_bf16_gemm_median_at_1e11_flop() -> None:
    # rtx_pro_6000_server, bfloat16, ridge 467.8/1.792 = 261 FLOP/byte; 2559 shapes in the bin around 1e11;
    # the middle one: m=1024, n=5120, k=7168 in 0.2101760 ms
    expected = 2 * 1024 * 5120 * 7168 / 0.2101760e-3 / 467.8e12  # 0.7645
    look = efficiency_table().lookup("gemm", "nvidia-rtx-pro-6000", 1e11, dtype="bf16")
    assert look.source == "gemm-bf16-rtx-pro-6000-aic-trtllm"
    assert look.frac == pytest.approx(expected, abs=1e-4)


def test_b300_nvfp4_gemm_median_is_the_mean_of_the_two_middle_shapes() -> None:
    # b300_sxm, nvfp4 (0.5-byte inputs), ridge 12600/8 = 1575; 1296 shapes (even) around 1e12: the two middle ones
    a = 2 * 2305 * 65536 * 3584 / 0.27037066e-3 / 12600e12
    b = 2 * 3329 * 7168 * 12288 / 0.14642534e-3 / 12600e12
    # a cross_check row (activation quantisation inside the timed op): read it directly, and check the planner
    # keeps the pure-kernel cuBLASLt curve, scaled to B300 by the same-harness ratio (bench/blackwell_gemm_derive.py)
    row = next(r for r in efficiency_rows(domain_tables()) if r["id"] == "gemm-nvfp4-b300-aic-trtllm")
    assert row.get("cross_check") is True
    assert _curve(row).at(1e12) == pytest.approx((a + b) / 2, abs=1e-4)  # 0.3179 of the catalog fp4 peak
    look = efficiency_table().lookup("gemm", "nvidia-b300-sxm-288gb", 1e12, dtype="nvfp4")
    assert look.source == "gemm-fp4-b300-derived-gb200-cublaslt"


def test_h200_memory_median_at_1e8_bytes_and_the_planner_fit() -> None:
    # h200_sxm, bfloat16, m <= 16: bytes = 2(mk + kn + mn); 576 shapes (even) within +-1/8 decade of 1e8;
    # middle two: (6, 6144, 8192) in 0.03031467 ms and (1, 7168, 7168) in 0.03090133 ms, of 4.8 TB/s
    a = 2 * (6 * 8192 + 8192 * 6144 + 6 * 6144) / 0.03031467e-3 / 4.8e12
    b = 2 * (1 * 7168 + 7168 * 7168 + 1 * 7168) / 0.03090133e-3 / 4.8e12
    look = efficiency_table().lookup("memory", "nvidia-h200-sxm-141gb", 1e8)
    assert look.source == "memory-h200-aic-trtllm-gemv"  # replaces the derived Azure-STREAM row
    assert look.frac == pytest.approx((a + b) / 2, abs=1e-4)
    # planner fit through the curve ends (5.6234e6 B at 0.2304, 1e9 B at 0.8475 of 4.8 TB/s)
    t_small, t_large = 5.6234e6 / (4.8e12 * 0.2304), 1e9 / (4.8e12 * 0.8475)
    b_inf = (1e9 - 5.6234e6) / (t_large - t_small)  # 4.13 TB/s
    t0, b = memory_fit_for(domain_tables(), "nvidia-h200-sxm-141gb", 4.8e12)
    assert b == pytest.approx(b_inf, rel=1e-3)
    assert t0 == pytest.approx(t_small - 5.6234e6 / b_inf, rel=1e-2)  # 3.7 us per kernel
    assert 2e-6 < t0 < 6e-6 and b < 4.8e12


def test_b200_memory_median_at_1e9_bytes() -> None:
    # b200_sxm, 192 shapes (even) around 1e9 bytes; middle two: (6, 10240, 51200) 0.16572267 ms, (4, ...) 0.16548800 ms
    a = 2 * (6 * 51200 + 51200 * 10240 + 6 * 10240) / 0.16572267e-3 / 8e12
    b = 2 * (4 * 51200 + 51200 * 10240 + 4 * 10240) / 0.16548800e-3 / 8e12
    look = efficiency_table().lookup("memory", "nvidia-b200-sxm-180gb", 1e9)
    assert look.source == "memory-b200-aic-trtllm-gemv"  # was borrowed from H100 (memory-h100-vidur-gemv)
    assert look.frac == pytest.approx((a + b) / 2, abs=1e-4)


@pytest.mark.parametrize(
    ("acc_id", "kind", "dtype", "used"),
    [
        ("nvidia-h100-sxm5-80gb", "gemm", "bf16", "gemm-bf16-h100-vidur"),
        ("nvidia-h100-sxm5-80gb", "gemm", "fp8", "gemm-fp8-h100-deepgemm"),
        ("nvidia-h100-sxm5-80gb", "memory", None, "memory-h100-vidur-gemv"),
        ("nvidia-a100-sxm4-80gb", "memory", None, "memory-a100-vidur-gemv"),
        ("nvidia-b200-sxm-180gb", "gemm", "bf16", "gemm-bf16-b200-xla"),
        ("nvidia-gb200", "gemm", "nvfp4", "gemm-fp4-gb200-azure-cublaslt"),
    ],
)
def test_cross_check_rows_never_displace_main_file_curves(acc_id: str, kind: str, dtype: str | None, used: str) -> None:
    # the same reduction on these parts is kept as cross_check rows: loaded only for lookups naming TensorRT-LLM
    assert efficiency_table().curve(kind, acc_id, dtype=dtype)[1] == used
    assert efficiency_table().curve(kind, acc_id, dtype=dtype, engine="no-such-engine")[1] == used
    cc = {"gemm-bf16-h100-aic-trtllm", "memory-h100-aic-trtllm-gemv", "gemm-bf16-b200-aic-trtllm"}
    assert all(c.engine_only and c.engine == "trtllm" for c in efficiency_table().curves if c.id in cc)
