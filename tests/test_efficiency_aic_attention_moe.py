"""Attention and MoE curves reduced from AIConfigurator's TensorRT-LLM kernel timings: points recomputed by hand.

Raw numbers below are read from ai-dynamo/aiconfigurator 0.12.0 systems/data/<system>/{attention,moe}/trtllm/
1.3.0rc20/*.parquet (latency in ms); the reduction is written out here, independently of bench/.
"""

from __future__ import annotations

import statistics

import pytest

from aiinfra.analytic.efficiency import efficiency_rows
from aiinfra.app.tables import domain_tables, efficiency_table

B200 = "nvidia-b200-sxm-180gb"
L40S = "nvidia-l40s"


def _causal_attention_flop(batch: int, heads: int, head_dim: int, seq: int) -> float:
    # 2 FLOP per multiply-add, QK^T and PV (2 * pairs * (d_qk + d_v)), pairs = S(S+1)/2 per sequence
    pairs = batch * seq * (seq + 1) / 2
    return 2.0 * pairs * (2 * heads * head_dim)


def test_b200_attention_point_is_the_kv_head_median_of_the_trtllm_timings() -> None:
    # context_attention, bf16 Q/K/V and KV, head dim 128, 16 heads, batch 4 x 4096 tokens, window 0:
    # latency by KV heads 16: 0.369728, 1: 0.330992, 2: 0.382021, 4: 0.354203, 8: 0.355205 ms -> median 0.355205
    lat_s = statistics.median([0.369728, 0.330992, 0.382021, 0.354203, 0.355205]) * 1e-3
    flop = _causal_attention_flop(4, 16, 128, 4096)  # 2.7495e11
    expected = flop / lat_s / 2250e12  # catalog B200 bf16 dense peak -> 0.344
    look = efficiency_table().lookup("attention", B200, flop, dtype="bf16")
    assert look.source == "attention-trtllm-bf16-b200-aic"
    assert look.frac == pytest.approx(expected, rel=1e-3)


def test_l40s_attention_point_and_its_head_dim_field() -> None:
    # same setup on L40S: 2.610853, 2.177707, 2.015232, 2.141184, 2.251776 ms -> median 2.177707 ms
    flop = _causal_attention_flop(4, 16, 128, 4096)
    expected = flop / (2.177707e-3) / 362e12  # 0.349
    curve, label = efficiency_table().curve("attention", L40S, dtype="bf16", head_dim=128)
    assert label == "attention-trtllm-bf16-l40s-aic"
    assert curve is not None and curve.head_dim == 128
    assert curve.at(flop) == pytest.approx(expected, rel=1e-3)


def test_b200_attention_size_curve_replaces_the_single_stas00_point() -> None:
    # a multi-point size curve measured on the part beats the one-point FA4 in-step figure; at the stas00 size
    # (5.5e11 FLOP) they agree within 5 %: 0.422 (TRT-LLM forward) vs 3.5 * 834 / (3 * 2250) = 0.432
    look = efficiency_table().lookup("attention", B200, 5.4976e11, dtype="bf16")
    assert look.source == "attention-trtllm-bf16-b200-aic"
    assert look.frac == pytest.approx(3.5 * 834 / (3 * 2250), rel=0.05)


# B200 fp8 CUTLASS MoE, balanced routing: every kept shape whose per-expert GEMM FLOP lies within +-1/4 decade
# of 1e12: (num_tokens, hidden, inter, top-k, experts, moe_tp, moe_ep, latency ms)
B200_FP8_MOE_1E12 = [
    (16384, 4096, 14336, 2, 8, 1, 4, 1.034565),
    (8192, 6144, 16384, 2, 8, 1, 1, 3.203952),
    (12288, 6144, 16384, 2, 8, 1, 1, 4.407995),
    (16384, 6144, 16384, 2, 8, 1, 1, 5.846811),
    (16384, 6144, 16384, 2, 8, 2, 8, 0.514448),
    (8192, 6144, 16384, 2, 8, 1, 4, 0.849808),
    (12288, 6144, 16384, 2, 8, 1, 4, 1.214272),
    (16384, 6144, 16384, 2, 8, 1, 4, 1.605995),
    (16384, 4096, 14336, 2, 8, 1, 1, 3.676853),
    (16384, 6144, 16384, 2, 8, 2, 2, 1.558944),
    (8192, 6144, 16384, 2, 8, 1, 8, 0.475237),
    (12288, 6144, 16384, 2, 8, 1, 8, 0.663824),
    (16384, 6144, 16384, 2, 8, 1, 8, 0.878933),
    (16384, 6144, 16384, 2, 8, 2, 4, 0.863387),
    (16384, 4096, 14336, 2, 8, 1, 8, 0.574747),
    (16384, 6144, 16384, 2, 8, 2, 1, 2.997056),
    (8192, 6144, 16384, 2, 8, 1, 2, 1.548048),
    (12288, 6144, 16384, 2, 8, 1, 2, 2.300112),
    (16384, 6144, 16384, 2, 8, 1, 2, 3.046464),
    (16384, 4096, 14336, 2, 8, 1, 2, 1.918091),
]


def test_b200_fp8_moe_top_point_is_the_median_of_its_bin() -> None:
    fracs = []
    for tokens, h, inter, k, experts, tp, ep, lat_ms in B200_FP8_MOE_1E12:
        flop = 2.0 * tokens * k * 3 * h * inter / tp / ep  # gated MLP: gate, up, down; num_tokens before dispatch
        x = flop / (2 * experts / ep)
        assert 10**11.75 < x <= 10**12.25
        weight_floor_s = experts / ep * 3 * h * inter / tp * 1.0 / 8.0e12  # fp8 bytes / catalog 8 TB/s
        assert lat_ms * 1e-3 > weight_floor_s  # compute-limited
        fracs.append(flop / (lat_ms * 1e-3) / 4500e12)
    expected = statistics.median(fracs)  # about 0.68
    look = efficiency_table().lookup("moe", B200, 1e12, dtype="fp8")
    assert look.source == "moe-fp8-b200-trtllm-cutlass-aic"
    assert look.frac == pytest.approx(expected, rel=1e-3)


def test_num_tokens_counts_tokens_before_expert_parallel_dispatch() -> None:
    # Qwen3-235B-A22B shape (h 4096, i 1536, 128 experts, top-8) at 16384 tokens on B200 fp8: ep 1 takes 5.9x
    # as long as ep 8 (latencies read from the table: ep 1 2.542037 ms, ep 8 0.429851 ms). Read as per-rank
    # tokens, ep 8 would do 8x the FLOP of ep 1 in 0.43 ms: 2*16384*8*3*4096*1536 / 0.4299e-3 = 11.5 PFLOP/s,
    # above the 4.5 PFLOP/s dense fp8 peak; read as tokens before dispatch it is 1.44 PFLOP/s (0.32).
    ep1_s, ep8_s = 2.542037e-3, 0.429851e-3
    layer_flop = 2.0 * 16384 * 8 * 3 * 4096 * 1536
    assert ep1_s / ep8_s > 5.0
    assert layer_flop / ep8_s > 4500e12  # impossible: num_tokens is not per-rank
    assert layer_flop / 8 / ep8_s / 4500e12 == pytest.approx(0.3197, abs=1e-3)
    assert layer_flop / ep1_s / 4500e12 < 1.0


def test_h100_rows_are_cross_checks_only() -> None:
    ids = {str(r["id"]): r for r in efficiency_rows(domain_tables())}
    h100_rows = (
        "attention-trtllm-bf16-h100-aic",
        "moe-fp8-h100-trtllm-cutlass-aic",
        "moe-bf16-h100-trtllm-cutlass-aic",
    )
    for rid in h100_rows:
        assert ids[rid].get("cross_check") is True
    assert (
        efficiency_table().lookup("moe", "nvidia-h100-sxm5-80gb", 1e10, dtype="fp8").source == "moe-fp8-h100-vllm-fused"
    )
    assert (
        efficiency_table().lookup("attention", "nvidia-h100-sxm5-80gb", 1e11, dtype="bf16").source
        == "attention-fa3-bf16-h100"
    )
