"""Grouped expert-GEMM (MoE) efficiency: curve values against the published kernel times, by hand."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.efficiency import table
from aiinfra.analytic.inference import gemm_efficiency

H100 = "nvidia-h100-sxm5-80gb"


def test_bf16_moe_point_from_vllm_pr_24700() -> None:
    # Mixtral-8x7B TP2 fused_moe on H100, batch 1024: 833.72 us (vLLM PR #24700).
    # Layer FLOP = 2 · 1024 tokens · top-2 · 3 matrices · 4096 · 7168 = 3.6078e11; per expert GEMM = /(2·8)
    layer_flop = 2 * 1024 * 2 * 3 * 4096 * 7168
    expected = layer_flop / 833.72e-6 / 989.4e12  # 0.437
    look = table().lookup("moe", H100, layer_flop / 16, dtype="bf16")
    assert look.source == "moe-bf16-h100-vllm-fused"
    assert look.frac == pytest.approx(expected, rel=2e-3)


def test_fp8_moe_point_from_vllm_pr_24700() -> None:
    # Qwen3-30B-A3B fp8_w8a8 fused_moe on H100, batch 4096: 1647.57 us.
    # Layer FLOP = 2 · 4096 · top-8 · 3 · 2048 · 768 = 3.0924e11; per expert GEMM = /(2·128)
    layer_flop = 2 * 4096 * 8 * 3 * 2048 * 768
    expected = layer_flop / 1647.57e-6 / 1978.9e12  # 0.095
    assert gemm_efficiency(catalog.accelerator(H100), "fp8", layer_flop / 256, kind="moe") == pytest.approx(
        expected, rel=2e-3
    )


def test_small_fp8_expert_gemms_are_far_below_the_dense_clamp() -> None:
    # the dense FP8 curve has no point below 1.24e11 FLOP and clamps at 0.51; the grouped-GEMM data at
    # 1.2e9 FLOP per expert GEMM says under a fifth of that
    acc = catalog.accelerator(H100)
    assert gemm_efficiency(acc, "fp8", 1.2e9, kind="moe") < 0.2 * gemm_efficiency(acc, "fp8", 1.2e9)


def test_moe_on_a100_borrows_the_hopper_curve_and_says_so() -> None:
    acc = catalog.accelerator("nvidia-a100-sxm4-80gb")
    # the only bf16 grouped-GEMM curve is Hopper's: A100 borrows it (same vendor) and the label says so
    look = table().lookup("moe", acc.id, 1e10, dtype="bf16")
    assert look.source.startswith("borrowed:")
    assert gemm_efficiency(acc, "bf16", 1e10, kind="moe") == look.frac
