"""Engine GEMM tables timed in short bursts, scaled to the rate a 700 W Hopper part sustains at its power limit
(burst_matmul_sustained_frac): the factor by hand, where it applies and where it does not."""

from __future__ import annotations

import math
import statistics

import pytest

from aiinfra import catalog
from aiinfra.analytic.kernel_time import burst_sustained_factor, gemm_efficiency
from aiinfra.app.tables import domain_tables

H100 = "nvidia-h100-sxm5-80gb"
H200 = "nvidia-h200-sxm-141gb"


def test_stored_fraction_is_the_median_of_the_cited_table_ratios() -> None:
    # AIConfigurator H200 vLLM 0.22.0 (power-monitored, ~1 s per shape) over the burst tables, bf16 cuBLAS,
    # compute-bound shapes >= 1e10 FLOP: vLLM 0.14.0, 0.18.0, 0.19.0, 0.24.0, TensorRT-LLM 1.3.0rc20
    ratios = [0.8746, 0.8707, 0.911, 0.8689, 0.8886]
    for acc_id in (H100, H200):  # H100 borrows the H200 figure (accelerators.yaml notes)
        frac = catalog.accelerator(acc_id).burst_matmul_sustained_frac
        assert frac == pytest.approx(statistics.median(ratios), abs=0.005)  # 0.8746 stored as 0.87


def test_factor_ramps_from_the_ridge_to_twice_the_ridge() -> None:
    # H200 bf16: ridge in rows M = 989.4e12 / 4.8e12 FLOP/byte x 2 bytes / 2 = 206.1 rows
    acc = catalog.accelerator(H200)
    ridge = 989.4e12 / 4.8e12
    assert burst_sustained_factor(acc, "bf16", 128) == 1.0  # weight streaming: the power limit does not bind
    assert burst_sustained_factor(acc, "bf16", ridge) == 1.0
    assert burst_sustained_factor(acc, "bf16", ridge * math.sqrt(2)) == pytest.approx(0.87**0.5)  # 0.9327
    assert burst_sustained_factor(acc, "bf16", 2 * ridge) == pytest.approx(0.87)
    assert burst_sustained_factor(acc, "bf16", 4096) == pytest.approx(0.87)
    # H100 fp8: 1978.9e12 / 3.35e12 x 1 byte / 2 = 295.4 rows; M = 256 is below it, M = 8192 far above
    h100 = catalog.accelerator(H100)
    assert burst_sustained_factor(h100, "fp8", 256) == 1.0
    assert burst_sustained_factor(h100, "fp8", 8192) == pytest.approx(0.87)
    assert burst_sustained_factor(h100, "fp8", None) == 1.0  # no row count: no correction
    assert burst_sustained_factor(catalog.accelerator("nvidia-a100-sxm4-80gb"), "bf16", 8192) == 1.0  # no field


def test_engine_gemm_lookups_are_scaled_and_engine_free_ones_are_not() -> None:
    acc = catalog.accelerator(H200)
    # gemm-bf16-h200-aic-trtllm-m4096 lists (1e11, 0.7508): the burst rate; sustained 0.7508 x 0.87 = 0.65320
    got = gemm_efficiency(domain_tables(), acc, "bf16", 1e11, engine="trtllm", m_tokens=4096)
    assert got == pytest.approx(0.7508 * 0.87, rel=1e-4)
    # engine-free (the training model's and engine-free serving lookups): gemm-bf16-h200-measured lists (1e11,
    # 0.7252), a back-to-back microbench already near the sustained rate: unchanged
    assert gemm_efficiency(domain_tables(), acc, "bf16", 1e11, m_tokens=4096) == pytest.approx(0.7252, rel=1e-4)
    # a weight-streaming engine GEMM (M = 16, below the 206-row ridge) keeps its burst value: the m16 row's
    # point (1e8, 0.02071)
    got16 = gemm_efficiency(domain_tables(), acc, "bf16", 1e8, engine="trtllm", m_tokens=16)
    assert got16 == pytest.approx(0.02071, rel=1e-4)
