"""Blackwell low-precision GEMMs and what stays in 16-bit (issue 28, item 6). The expected values are hand
calculations from the cited figures: Azure ND GB200 v6 cuBLASLt square GEMMs, and NVIDIA AIConfigurator's
same-harness TensorRT-LLM fractions of each part (catalog/data/efficiency_sources.md, "Blackwell FP8 / FP4 GEMMs")."""

from __future__ import annotations

import math

import numpy as np
import pytest

import aiinfra.analytic.training_step as ts
from aiinfra.analytic.training_memory import TrainSetup
from aiinfra.app.tables import efficiency_table
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.search.plans import single_plan
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput
from aiinfra.validation import switches

X_16384 = 2 * 16384**3  # 8.7961e12 FLOP, Azure's 16384^3 square GEMM


def _aic_at(lo: float, hi: float) -> float:
    """An AIC fraction at 16384^3, log-linear between the 3.1623e12 (lo) and 1e13 (hi) bins."""
    t = (math.log10(X_16384) - 12.5) / 0.5
    return lo + t * (hi - lo)


def test_gb300_nvfp4_reaches_1_27x_gb200_not_its_1_5x_peak() -> None:
    # GB200 cuBLASLt FP4 16384^3: 7627.6 TFLOP/s of 10000; AIC nvfp4 fractions GB300 0.3385 -> 0.3788 (of 15000),
    # GB200 0.4237 -> 0.444 (of 10000)
    ratio = _aic_at(0.3385, 0.3788) / _aic_at(0.4237, 0.444)  # 0.8474
    expected = 7627.6 / 10000 * ratio  # 0.6464 of 15000
    look = efficiency_table().lookup("gemm", "nvidia-gb300", X_16384, dtype="nvfp4")
    assert look.source == "gemm-fp4-gb300-derived-gb200-cublaslt"
    assert look.frac == pytest.approx(expected, abs=2e-4)
    assert look.frac * 15000 / 7627.6 == pytest.approx(1.271, abs=2e-3)  # throughput over GB200's, not 1.5


def test_gb300_fp8_runs_faster_than_gb200_at_the_same_dense_peak() -> None:
    # GB200 cuBLASLt FP8 16384^3: 2906.9 TFLOP/s of 5000; AIC fp8 GB300 0.624 -> 0.6702, GB200 0.5348 -> 0.5667
    ratio = _aic_at(0.624, 0.6702) / _aic_at(0.5348, 0.5667)  # 1.181: the 1400 W part's higher sustained clock
    look = efficiency_table().lookup("gemm", "nvidia-gb300", X_16384, dtype="mxfp8")
    assert look.source == "gemm-fp8-gb300-derived-gb200-cublaslt"
    assert look.frac == pytest.approx(2906.9 / 5000 * ratio, abs=2e-4)  # 0.6866 -> 3433 TFLOP/s


def test_b200_fp8_stays_below_gb200_on_the_same_die() -> None:
    # AIC fp8 B200 0.5622 -> 0.5924 (of 4500), GB200 0.5348 -> 0.5667 (of 5000): fraction ratio 1.046
    ratio = _aic_at(0.5622, 0.5924) / _aic_at(0.5348, 0.5667)
    look = efficiency_table().lookup("gemm", "nvidia-b200-sxm-180gb", X_16384, dtype="fp8")
    assert look.source == "gemm-fp8-b200-derived-gb200-cublaslt"
    assert look.frac == pytest.approx(2906.9 / 5000 * ratio, abs=2e-4)  # 0.6081
    b200_tflops = look.frac * 4500
    assert b200_tflops == pytest.approx(2736, abs=2)
    assert b200_tflops < 2906.9  # the 1000 W B200 below the 1200 W GB200 (stas00 MAMF: 3432.5 vs 3615.6)
    # the retired XLA median (0.696 above 3e11 FLOP) is kept as a cross-check only
    assert all(c.id != "gemm-fp8-b200-xla" for c in efficiency_table().curves)


def test_small_gemms_take_the_ratio_at_1e12() -> None:
    # below 1e12 FLOP the ratio is taken at 1e12 (AIC quantises the activation inside the timed op):
    # GB300 nvfp4 0.2841 / GB200 0.3772 = 0.7532; GB200 cuBLASLt FP4 4096^3 = 5177.3 TFLOP/s of 10000
    look = efficiency_table().lookup("gemm", "nvidia-gb300", 2 * 4096**3, dtype="nvfp4")
    assert look.frac == pytest.approx(5177.3 / 10000 * 0.2841 / 0.3772, abs=2e-4)  # 0.3899


LLAMA_8B = ModelArch(
    id="llama-3.1-8b-shape",
    num_layers=32,
    hidden_size=4096,
    num_heads=32,
    num_kv_heads=8,
    ffn_hidden_size=14336,
    mlp="swiglu",
    vocab_size=128256,
    attention="gqa",
    tied_embeddings=False,
    norm="rmsnorm",
)


def _spy_gemms(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float, float]]:
    """Every GEMM the training step model prices, as (dtype, FLOP, weight bytes), appended as step_time runs."""
    calls: list[tuple[str, float, float]] = []
    real = ts._gemm_time

    def spy(cluster, dtype, flop, weight_bytes, src):  # type: ignore[no-untyped-def]
        calls.extend((dtype, float(f), float(w)) for f, w in zip(np.ravel(flop), np.ravel(weight_bytes), strict=True))
        return real(cluster, dtype, flop, weight_bytes, src)

    monkeypatch.setattr(ts, "_gemm_time", spy)
    return calls


def test_the_output_projection_stays_in_bf16_under_fp8_and_fp4(monkeypatch: pytest.MonkeyPatch) -> None:
    # Megatron-Core's output layer is a plain ColumnParallelLinear, outside Transformer Engine's fp8/fp4 autocast:
    # the 4096 x 128256 head of one 8192-token micro-batch (2 * 8192 * 4096 * 128256 = 8.607e12 FLOP) runs in
    # bf16 with 2-byte weights, every layer GEMM in the run's precision
    calls = _spy_gemms(monkeypatch)
    cluster = resolve_cluster(HardwareInput(accelerator="nvidia-gb200", count=4, per_node=4))
    head_flop = 2.0 * 8192 * 4096 * 128256
    for precision, layer_dtype in (("fp8", "fp8"), ("fp4", "fp4")):
        calls.clear()
        setup = TrainSetup(model=LLAMA_8B, seq_len=8192, global_batch_seqs=4, precision=precision)
        plan = single_plan(
            LLAMA_8B, setup, tp=1, pp=1, dp=4, cp=1, ep=1, vp=1, mb=1, sharding="zero1", recompute="none"
        )
        ts.step_time(setup, cluster, plan)
        head = [c for c in calls if c[1] == pytest.approx(head_flop)]
        assert head == [("bf16", pytest.approx(head_flop), pytest.approx(4096 * 128256 * 2.0))]
        fc1_flop = 2.0 * 8192 * 4096 * 2 * 14336  # a layer GEMM keeps the run's precision
        assert [c[0] for c in calls if c[1] == pytest.approx(fc1_flop)] == [layer_dtype]


def test_fp8_output_proj_runs_the_head_in_the_run_format(monkeypatch: pytest.MonkeyPatch) -> None:
    # Megatron-Bridge fp8_output_proj (MLPerf v6.0 GB300 DeepSeek-V3 configs: FP8_OUTPUT_PROJ=True): the head GEMM
    # takes the run's dtype and 1-byte weights; a validation row's notes turn it on
    calls = _spy_gemms(monkeypatch)
    cluster = resolve_cluster(HardwareInput(accelerator="nvidia-gb300", count=4, per_node=4))
    setup = TrainSetup(
        model=LLAMA_8B, seq_len=8192, global_batch_seqs=4, precision="fp8", low_precision_output_layer=True
    )
    plan = single_plan(LLAMA_8B, setup, tp=1, pp=1, dp=4, cp=1, ep=1, vp=1, mb=1, sharding="zero1", recompute="none")
    ts.step_time(setup, cluster, plan)
    head_flop = 2.0 * 8192 * 4096 * 128256
    assert [c for c in calls if c[1] == pytest.approx(head_flop)] == [
        ("fp8", pytest.approx(head_flop), pytest.approx(4096 * 128256 * 1.0))
    ]
    # a legacy row's notes state it as Megatron-Bridge's flag; the shipped files carry the column
    assert switches.FP8_OUTPUT_PROJ.search("... | FP8_OUTPUT_PROJ=True in the config script")
    assert not switches.FP8_OUTPUT_PROJ.search("FP8_OUTPUT_PROJ=False")
    assert switches.from_notes("FP8_OUTPUT_PROJ=True", "training")["low_precision_output_layer"] == "yes"
