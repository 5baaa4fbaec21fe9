"""SGLang's own GEMM timings (AIConfigurator SGLang 0.5.14 tables, bench/aic_efficiency_gemm.py --engine sglang):
one point recomputed by hand from the table's latencies, the burst-to-sustained factor, and who uses the rows."""

from __future__ import annotations

import statistics

import pytest

from aiinfra import catalog
from aiinfra.analytic.kernel_time import gemm_efficiency
from aiinfra.app.tables import domain_tables, efficiency_table

H100 = "nvidia-h100-sxm5-80gb"
H100_BF16_PEAK = 989.4e12  # catalog dense bf16 FLOP/s

# aiconfigurator systems/data/h100_sxm/gemm/sglang/0.5.14/gemm_perf.parquet (commit 095f58a), gemm_dtype bfloat16
# (kernel_source sglang_torch_linear), m = 4096: every shape with n, k >= 256 whose 2*m*n*k lies within +-1/4
# decade of 1e13 FLOP: (n, k, latency ms)
H100_BF16_M4096_1E13 = [
    (65536, 12288, 9.464736),
    (16384, 65536, 12.746936),
    (65536, 16384, 13.049815),
    (16384, 51200, 10.073795),
    (12288, 65536, 9.365853),
    (51200, 16384, 9.771374),
]


def _by_hand_1e13() -> float:
    fracs = []
    for n, k, lat_ms in H100_BF16_M4096_1E13:
        flop = 2.0 * 4096 * n * k
        assert 10**12.75 <= flop < 10**13.25
        fracs.append(flop / (lat_ms * 1e-3) / H100_BF16_PEAK)
    return statistics.median(fracs)  # (0.6974 + 0.7045) / 2 = 0.7010


def test_sglang_per_m_point_is_the_median_of_its_shapes() -> None:
    look = efficiency_table().lookup("gemm", H100, 1e13, dtype="bf16", engine="sglang", m_tokens=4096)
    assert look.source == "gemm-bf16-h100-aic-sglang-m4096"
    assert look.frac == pytest.approx(_by_hand_1e13(), rel=1e-3)


def test_sglang_engine_gemms_are_scaled_to_the_sustained_rate_like_vllms() -> None:
    # H100 bf16 ridge in rows: 989.4e12 / 3.35e12 FLOP/byte x 2 bytes / 2 = 295 rows; M = 4096 is past twice the
    # ridge, so the full burst_matmul_sustained_frac 0.87 applies, as it does to vLLM's and TensorRT-LLM's tables
    acc = catalog.accelerator(H100)
    got = gemm_efficiency(domain_tables(), acc, "bf16", 1e13, engine="sglang", m_tokens=4096)
    assert got == pytest.approx(_by_hand_1e13() * 0.87, rel=1e-3)
    vllm = efficiency_table().lookup("gemm", H100, 1e13, dtype="bf16", engine="vllm", m_tokens=4096)
    assert vllm.source == "gemm-bf16-h100-aic-vllm-m4096"
    assert gemm_efficiency(domain_tables(), acc, "bf16", 1e13, engine="vllm", m_tokens=4096) == pytest.approx(
        vllm.frac * 0.87, rel=1e-9
    )


def test_sglang_rows_serve_engine_sglang_only() -> None:
    t = efficiency_table()
    assert t.curve("gemm", H100, dtype="fp8", engine="sglang")[1] == "gemm-fp8-h100-aic-sglang"
    assert t.curve("memory", H100, engine="sglang")[1] == "memory-h100-aic-sglang-gemv"
    # engine-free (training) and other engines' lookups keep their curves
    assert t.curve("gemm", H100, dtype="fp8")[1] == "gemm-fp8-h100-deepgemm"
    assert t.curve("memory", H100)[1] == "memory-h100-vidur-gemv"
    free = t.lookup("gemm", H100, 1e13, dtype="bf16", m_tokens=4096)
    assert "sglang" not in free.source
    trt = t.lookup("gemm", H100, 1e13, dtype="bf16", engine="trtllm", m_tokens=4096)
    assert trt.source == "gemm-bf16-h100-aic-trtllm-m4096"


def test_sglang_gemm_files_are_engine_only_hopper_ampere_and_b200_rows() -> None:
    tables = domain_tables()
    names = [n for n in tables.efficiency_files() if n.startswith("efficiency_aic_gemm") and n.endswith("_sglang.yaml")]
    assert names == ["efficiency_aic_gemm_by_m_sglang.yaml", "efficiency_aic_gemm_sglang.yaml"]
    rows = [r for n in names for r in tables.file_rows(n)]
    assert len(rows) > 50
    allowed = {H100, "nvidia-h200-sxm-141gb", "nvidia-a100-sxm4-80gb", "nvidia-b200-sxm-180gb"}
    assert all(r["engine"] == "sglang" and r["cross_check"] for r in rows)
    assert all(set(r["accelerators"]) <= allowed for r in rows)
    assert all(bool(r.get("m_tokens")) == ("_by_m_" in n) for n in names for r in tables.file_rows(n))
