"""vLLM and SGLang prefill-attention curves reduced from AIConfigurator's kernel tables: points recomputed by hand.

Raw latencies (ms) below are read from ai-dynamo/aiconfigurator (commit 095f58a) systems/data/<system>/attention/
<engine>/<version>/context_attention_perf.parquet, rows bf16 Q/K/V and KV cache, window 0, head dim 128, 16 query
heads, batch x seqlen = 16,384; the reduction is written out here, independently of bench/.
"""

from __future__ import annotations

import statistics

import pytest

from aiinfra.app.tables import efficiency_table

H100 = "nvidia-h100-sxm5-80gb"
H200 = "nvidia-h200-sxm-141gb"
HOPPER_BF16_PEAK = 989.4e12  # catalog dense bf16 peak of H100 SXM and H200


def _causal_attention_flop(batch: int, heads: int, head_dim: int, seq: int) -> float:
    # 2 FLOP per multiply-add, QK^T and PV (2 * pairs * (d_qk + d_v)), pairs = S(S+1)/2 per sequence
    pairs = batch * seq * (seq + 1) / 2
    return 2.0 * pairs * (2 * heads * head_dim)


def test_h100_vllm_point_is_the_kv_head_median_of_the_vllm_timings() -> None:
    # vLLM 0.24.0, kernel_source vllm_flash_attn_fa3, batch 4 x 4096 tokens; latency by KV heads
    # 1: 0.476373, 2: 0.501435, 4: 0.549264, 8: 0.573179, 16: 0.619909 ms -> median 0.549264 ms
    lat_s = statistics.median([0.476373, 0.501435, 0.549264, 0.573179, 0.619909]) * 1e-3
    flop = _causal_attention_flop(4, 16, 128, 4096)  # 2.7495e11
    expected = flop / lat_s / HOPPER_BF16_PEAK  # 500.6 TFLOP/s -> 0.506
    look = efficiency_table().lookup("attention", H100, flop, dtype="bf16", engine="vllm")
    assert look.source == "attention-bf16-h100-aic-vllm"
    assert look.frac == pytest.approx(expected, rel=1e-3)


def test_h200_sglang_point_is_the_kv_head_median_of_the_sglang_timings() -> None:
    # SGLang 0.5.14, kernel_source fa3, batch 16 x 1024 tokens: 0.188381, 0.186395, 0.189168, 0.210930,
    # 0.242318 ms (KV heads 1, 2, 4, 8, 16) -> median 0.189168 ms
    flop = _causal_attention_flop(16, 16, 128, 1024)  # 6.8787e10
    expected = flop / 0.189168e-3 / HOPPER_BF16_PEAK  # 363.6 TFLOP/s -> 0.367
    curve, label = efficiency_table().curve("attention", H200, dtype="bf16", head_dim=128, engine="sglang")
    assert label == "attention-bf16-h200-aic-sglang"
    assert curve is not None and curve.head_dim == 128 and curve.engine == "sglang"
    assert curve.at(flop) == pytest.approx(expected, rel=1e-3)


def test_engine_rows_serve_their_engine_only() -> None:
    # cross_check + engine: training (no engine) and TensorRT-LLM lookups keep their curves
    t = efficiency_table()
    x = _causal_attention_flop(4, 16, 128, 4096)
    assert t.lookup("attention", H100, x, dtype="bf16").source == "attention-fa3-bf16-h100"
    assert t.lookup("attention", H100, x, dtype="bf16", engine="trtllm").source == "attention-trtllm-bf16-h100-aic"
    assert t.lookup("attention", H100, x, dtype="bf16", engine="sglang").source == "attention-bf16-h100-aic-sglang"
    # a training lookup asking for the FlashAttention-3 family does not take SGLang's "fa3" kernel_source row
    curve, label = t.curve("attention", H100, dtype="bf16", head_dim=128, kernel="fa3")
    assert curve is not None and curve.engine is None and "sglang" not in label
