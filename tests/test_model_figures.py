"""Derived model figures against hand calculations written out here."""

from __future__ import annotations

import pytest

from aiinfra.analytic import model_figures as mf
from aiinfra.specs.model import ModelArch

LLAMA31_70B = ModelArch(
    id="t-70b",
    num_layers=80,
    hidden_size=8192,
    num_heads=64,
    num_kv_heads=8,
    head_dim=128,
    ffn_hidden_size=28672,
    mlp="swiglu",
    vocab_size=128256,
    tied_embeddings=False,
    attention="gqa",
)

DEEPSEEK_V3 = ModelArch(
    id="t-dsv3",
    num_layers=61,
    hidden_size=7168,
    num_heads=128,
    num_kv_heads=128,
    head_dim=128,
    ffn_hidden_size=18432,
    mlp="swiglu",
    vocab_size=129280,
    attention="mla",
    num_experts=256,
    experts_per_token=8,
    moe_ffn_hidden_size=2048,
    num_shared_experts=1,
    first_k_dense_layers=3,
    q_lora_rank=1536,
    kv_lora_rank=512,
    qk_rope_head_dim=64,
    qk_nope_head_dim=128,
    v_head_dim=128,
)


def test_llama_70b_params_by_hand() -> None:
    # per layer: q,o 8192² each; k,v 8192·1024 each; SwiGLU 3·8192·28672; 2 RMSNorm of 8192
    attn = 2 * 8192 * 8192 + 2 * 8192 * 1024
    mlp = 3 * 8192 * 28672
    per_layer = attn + mlp + 2 * 8192
    total = 80 * per_layer + 2 * 128256 * 8192 + 8192
    assert total == 70_553_706_496
    assert mf.params_total(LLAMA31_70B) == pytest.approx(total, rel=0, abs=0.5)
    assert mf.params_total(LLAMA31_70B) == pytest.approx(70.6e9, rel=0.01)  # Meta model card: 70.6B


def test_llama_70b_kv_bytes() -> None:
    # 2 (K,V) · 80 layers · 8 kv heads · 128 · 2 bytes
    assert mf.kv_bytes_per_token(LLAMA31_70B, "bf16") == 327_680
    assert mf.kv_bytes_per_token(LLAMA31_70B, "fp8") == 163_840


def test_deepseek_v3_total_and_active() -> None:
    # MLA attention per layer: q_a 7168·1536 + norm 1536 + q_b 1536·128·192; kv_a 7168·576 + norm 512;
    # kv_b 512·128·256; o 128·128·7168
    attn = 7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168
    assert mf.attention_params(DEEPSEEK_V3) == attn
    expert = 3 * 7168 * 2048
    moe_layer = attn + 256 * expert + expert + 256 * 7168 + 2 * 7168
    dense_layer = attn + 3 * 7168 * 18432 + 2 * 7168
    total = 58 * moe_layer + 3 * dense_layer + 2 * 129280 * 7168 + 7168
    assert mf.params_total(DEEPSEEK_V3) == pytest.approx(total)
    assert total == pytest.approx(671e9, rel=0.01)  # DeepSeek-V3 report: 671B total
    active = 58 * (attn + 8 * expert + expert + 256 * 7168 + 2 * 7168) + 3 * dense_layer + 2 * 129280 * 7168 + 7168
    assert mf.params_active(DEEPSEEK_V3) == pytest.approx(active)
    assert active == pytest.approx(37e9, rel=0.03)  # report: 37B activated


def test_mla_kv_bytes() -> None:
    # 61 layers · (512 + 64) · 2 bytes = 70,272 (one latent + RoPE key per layer)
    assert mf.kv_bytes_per_token(DEEPSEEK_V3, "bf16") == 61 * 576 * 2 == 70_272


def test_gpt3_fp16_weights_350gb() -> None:
    gpt3 = ModelArch(
        id="t-gpt3",
        num_layers=96,
        hidden_size=12288,
        num_heads=96,
        head_dim=128,
        ffn_hidden_size=49152,
        mlp="gelu",
        vocab_size=50257,
        tied_embeddings=True,
        attention="mha",
        norm="layernorm",
        position_embedding="learned",
        max_seq_len=2048,
        linear_bias=True,
    )
    # 12·h² per layer + biases; embeddings V·h + 2048·h: ≈ 174.6e9 → 349 GB at 2 bytes
    assert mf.weight_bytes(gpt3, "fp16") == pytest.approx(350e9, rel=0.01)


def test_training_flops_6n_plus_attention() -> None:
    # dense MHA, no bias: training FLOPs/token = 6·N_matmul + 12·L·d·s (PaLM App. B convention)
    m = ModelArch(
        id="t-mha",
        num_layers=2,
        hidden_size=64,
        num_heads=4,
        ffn_hidden_size=256,
        mlp="gelu",
        vocab_size=100,
        attention="mha",
        tied_embeddings=True,
    )
    n_matmul = 2 * (4 * 64 * 64 + 2 * 64 * 256) + 100 * 64
    s = 32
    assert mf.flop_per_token_training(m, s) == pytest.approx(6 * n_matmul + 12 * 2 * 64 * s)
    assert mf.flop_per_token_training(m, s, causal=True) == pytest.approx(6 * n_matmul + 6 * 2 * 64 * s)


def test_moe_active_counts_top_k_only() -> None:
    dense = ModelArch(id="t-d", num_layers=1, hidden_size=16, num_heads=2, ffn_hidden_size=32, vocab_size=10)
    moe = ModelArch(
        id="t-m",
        num_layers=1,
        hidden_size=16,
        num_heads=2,
        ffn_hidden_size=32,
        vocab_size=10,
        num_experts=8,
        experts_per_token=2,
        moe_ffn_hidden_size=32,
    )
    expert = 3 * 16 * 32
    assert mf.params_total(moe) - mf.params_total(dense) == pytest.approx(7 * expert + 8 * 16)
    assert mf.params_active(moe) - mf.params_active(dense) == pytest.approx(1 * expert + 8 * 16)
