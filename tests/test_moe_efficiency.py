"""Grouped expert-GEMM (MoE) efficiency: curve values against the published kernel times, by hand."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.kernel_time import gemm_efficiency
from aiinfra.app.tables import domain_tables, efficiency_table

H100 = "nvidia-h100-sxm5-80gb"


def test_bf16_moe_point_from_vllm_pr_24700() -> None:
    # Mixtral-8x7B TP2 fused_moe on H100, batch 1024: 833.72 us (vLLM PR #24700).
    # Layer FLOP = 2 · 1024 tokens · top-2 · 3 matrices · 4096 · 7168 = 3.6078e11; per expert GEMM = /(2·8)
    layer_flop = 2 * 1024 * 2 * 3 * 4096 * 7168
    expected = layer_flop / 833.72e-6 / 989.4e12  # 0.437
    look = efficiency_table().lookup("moe", H100, layer_flop / 16, dtype="bf16")
    assert look.source == "moe-bf16-h100-vllm-fused"
    assert look.frac == pytest.approx(expected, rel=2e-3)


def test_fp8_moe_point_from_vllm_pr_24700() -> None:
    # Qwen3-30B-A3B fp8_w8a8 fused_moe on H100, batch 4096: 1647.57 us.
    # Layer FLOP = 2 · 4096 · top-8 · 3 · 2048 · 768 = 3.0924e11; per expert GEMM = /(2·128)
    layer_flop = 2 * 4096 * 8 * 3 * 2048 * 768
    expected = layer_flop / 1647.57e-6 / 1978.9e12  # 0.095
    assert gemm_efficiency(
        domain_tables(), catalog.accelerator(H100), "fp8", layer_flop / 256, kind="moe"
    ) == pytest.approx(expected, rel=2e-3)


def test_small_fp8_expert_gemms_are_far_below_the_dense_clamp() -> None:
    # the dense FP8 curve has no point below 1.24e11 FLOP and clamps at 0.51; the grouped-GEMM data at
    # 1.2e9 FLOP per expert GEMM says under a fifth of that
    acc = catalog.accelerator(H100)
    assert gemm_efficiency(domain_tables(), acc, "fp8", 1.2e9, kind="moe") < 0.2 * gemm_efficiency(
        domain_tables(), acc, "fp8", 1.2e9
    )


def test_moe_on_a100_borrows_the_hopper_curve_and_says_so() -> None:
    acc = catalog.accelerator("nvidia-a100-sxm4-80gb")
    # the only bf16 grouped-GEMM curve is Hopper's: A100 borrows it (same vendor) and the label says so
    look = efficiency_table().lookup("moe", acc.id, 1e10, dtype="bf16")
    assert look.source.startswith("borrowed:")
    assert gemm_efficiency(domain_tables(), acc, "bf16", 1e10, kind="moe") == look.frac


def test_per_shape_moe_rows_are_not_borrowed_across_parts() -> None:
    from aiinfra.analytic.inference import InferenceModel
    from aiinfra.analytic.model_figures import param_breakdown
    from aiinfra.catalog.resolve import cluster_for

    mixtral = catalog.model("mixtral-8x7b")
    layers = param_breakdown(mixtral).moe_layers
    shape = (4096, 14336, 8, 2, 2, 1)  # hidden, expert width, experts, top-k, moe_tp 2, ep 1

    def experts(acc_id: str, tokens: int):  # type: ignore[no-untyped-def]
        im = InferenceModel(model=mixtral, cluster=cluster_for(acc_id, 2), tp=2, engine="vllm")
        return im.experts(tokens, layers)

    # A100 has no fused-MoE row of this shape (B200's is the nearest): 8 decode tokens top-2 touch
    # 8 · (1 − (6/8)^8) = 7.2 of the 8 experts, so the step streams weights and the compute term stays below the
    # memory term, as on a part that has its own row. Borrowed as a fraction of peak, B200's row priced A100's
    # experts at 49.7 ms per step against 24.8 ms of streaming (A100's peak is 7.2 times lower, its bandwidth 4)
    assert (
        efficiency_table()
        .lookup("moe_shape", "nvidia-a100-sxm4-80gb", 8, dtype="bf16", engine="vllm", moe_shape=shape)
        .source.startswith("borrowed:")
    )
    a100 = experts("nvidia-a100-sxm4-80gb", 8)
    assert a100.compute_s < a100.memory_s
    # a part with its own row keeps it: the H100 compute term is that row's measured fraction of the bf16 peak
    own = efficiency_table().lookup("moe_shape", H100, 8, dtype="bf16", engine="vllm", moe_shape=shape)
    assert own.source == "moe-bf16-h100-h4096-i14336-e8-k2-tp2-ep1-aic-vllm"
    flop = 2.0 * 8 * 2 * (3 * 4096 * 14336) * layers / 2
    peak = catalog.accelerator(H100).dense_flop_per_s["bf16"]
    assert experts(H100, 8).compute_s == pytest.approx(flop / (peak * own.frac), rel=1e-9)


def test_sglang_bf16_moe_row_on_b200_is_its_measured_latency() -> None:
    # AIConfigurator b200_sxm/moe/sglang/0.5.9/moe_perf.parquet (commit 095f58a): SGLang's Triton fused MoE, bf16,
    # Qwen3-235B-A22B's routed experts (hidden 4096, expert width 1536, 128 experts, top-8) at moe_tp 8, balanced
    # routing, 16 tokens: 0.136371 ms. Per-rank FLOP = 2 · 16 · 8 · 3 · 4096 · 1536 / 8 = 6.0398e8, so the row holds
    # 6.0398e8 / 0.136371e-3 / 2250e12 = 0.001968 of the B200 bf16 peak
    shape = (4096, 1536, 128, 8, 8, 1)
    flop = 2 * 16 * 8 * 3 * 4096 * 1536 / 8
    expected = flop / 0.136371e-3 / 2250e12
    look = efficiency_table().lookup(
        "moe_shape", "nvidia-b200-sxm-180gb", 16, dtype="bf16", engine="sglang", moe_shape=shape
    )
    assert look.source == "moe-bf16-b200-h4096-i1536-e128-k8-tp8-ep1-aic-sglang"
    assert look.frac == pytest.approx(expected, rel=2e-3)
    # another engine's lookup does not take SGLang's row
    other = efficiency_table().lookup(
        "moe_shape", "nvidia-b200-sxm-180gb", 16, dtype="bf16", engine="trtllm", moe_shape=shape
    )
    assert other.source != look.source


@pytest.mark.parametrize(
    ("engine", "shape", "dtype", "peak_flop_per_s", "timings", "row_id"),
    [
        # SGLang 0.5.14's table: kernel_source sglang_flashinfer_trtllm_moe, fp8_block (the runner SGLang 0.5.6 picks
        # for DeepSeek's FP8 experts on SM100): DeepSeek-V3's routed experts (hidden 7168, expert width 2048, 256
        # experts, top-8) at moe_tp 8, 1 token 0.036127 ms, 64 tokens 0.155698 ms; fraction of the B200's dense fp8
        # peak
        (
            "sglang",
            (7168, 2048, 256, 8, 8, 1),
            "fp8",
            4500e12,
            ((1, 0.036127), (64, 0.155698)),
            "moe-fp8block-b200-h7168-i2048-e256-k8-tp8-ep1-aic-sglang",
        ),
        # the same kernel, w4a8_mxfp4_mxfp8 (MXFP4 weights, MXFP8 activations: what SGLang 0.5.6 runs for gpt-oss on
        # SM100): gpt-oss-120b's experts (hidden 2880, expert width 2880, 128 experts, top-4) at moe_tp 8, 1 token
        # 0.0164896 ms, 64 tokens 0.0725984 ms; fraction of the fp4 peak
        (
            "sglang",
            (2880, 2880, 128, 4, 8, 1),
            "fp4",
            9000e12,
            ((1, 0.0164896), (64, 0.0725984)),
            "moe-mxfp4-b200-h2880-i2880-e128-k4-tp8-ep1-aic-sglang",
        ),
        # vLLM 0.24.0's table: FlashInfer's TensorRT-LLM MXFP4 x BF16 kernel, the SM100 default of every vLLM release
        # from 0.10.1 (kernel_source vllm_gptossmxfp4moe_flashinfer_trtllm_mxfp4_bf16_trtllmmxfp4expertsmonolithic,
        # w4a16_mxfp4): gpt-oss-120b's experts on one B200, 1 token 0.0312267 ms, 64 tokens 0.382133 ms
        (
            "vllm",
            (2880, 2880, 128, 4, 1, 1),
            "fp4",
            9000e12,
            ((1, 0.0312267), (64, 0.382133)),
            "moe-mxfp4-b200-h2880-i2880-e128-k4-tp1-ep1-aic-vllm",
        ),
    ],
)
def test_blackwell_moe_rows_are_flashinfer_trtllm_gen(
    engine: str,
    shape: tuple[int, ...],
    dtype: str,
    peak_flop_per_s: float,
    timings: tuple[tuple[int, float], ...],
    row_id: str,
) -> None:
    # AIConfigurator b200_sxm/moe/<engine>/<release>/moe_perf.parquet (commit 095f58a), balanced routing; per-rank
    # FLOP = 2 · T · k · 3 · h · i / moe_tp
    h, i, _, k, tp, _ = shape
    for tokens, latency_ms in timings:
        flop = 2 * tokens * k * 3 * h * i / tp
        look = efficiency_table().lookup(
            "moe_shape", "nvidia-b200-sxm-180gb", tokens, dtype=dtype, engine=engine, moe_shape=shape
        )
        assert look.source == row_id
        assert look.frac == pytest.approx(flop / (latency_ms * 1e-3) / peak_flop_per_s, rel=2e-3)
