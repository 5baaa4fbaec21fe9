"""Derived model figures: parameters, FLOPs per token, KV-cache bytes, weight bytes.

Parameter counting follows the layer definitions of the original papers: Vaswani et al. 2017
(attention, MLP), Shazeer 2020 "GLU Variants Improve Transformer" (gated MLP = 3 matrices),
Ainslie et al. 2023 (GQA: K/V projections of n_kv_heads), DeepSeek-AI 2024 "DeepSeek-V2" §2.1
(MLA low-rank projections), Fedus et al. 2022 / Jiang et al. 2024 (MoE: routed experts + router).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from aiinfra.analytic.window import causal_mean_keys
from aiinfra.specs.common import DTYPE_BYTES
from aiinfra.specs.model import ModelArch


@dataclass(frozen=True, kw_only=True, slots=True)
class ParamBreakdown:
    """Parameter counts (elements)."""

    embedding: float
    """Token (+ position, + token-type) embeddings."""
    output: float
    """Untied output projection (0 when tied)."""
    attention_per_layer: float
    dense_mlp_per_layer: float
    """MLP of a dense layer."""
    moe_routed_per_layer: float
    """All routed experts of one MoE layer."""
    moe_shared_per_layer: float
    router_per_layer: float
    norms_per_layer: float
    final_norm: float
    dense_layers: int
    moe_layers: int
    experts_per_token: int
    num_experts: int

    @property
    def moe_routed_active_per_layer(self) -> float:
        """Routed-expert parameters one token uses in a MoE layer: top-k of the n experts (0 for dense)."""
        if self.num_experts <= 1:
            return 0.0
        return self.moe_routed_per_layer * self.experts_per_token / self.num_experts

    @property
    def layers_total(self) -> float:
        """Parameters of all decoder layers, every routed expert counted."""
        dense = self.dense_layers * (self.attention_per_layer + self.dense_mlp_per_layer + self.norms_per_layer)
        moe = self.moe_layers * (
            self.attention_per_layer
            + self.moe_routed_per_layer
            + self.moe_shared_per_layer
            + self.router_per_layer
            + self.norms_per_layer
        )
        return dense + moe

    @property
    def layers_active(self) -> float:
        """Parameters of all decoder layers used per token (routed experts counted at top-k of n)."""
        dense = self.dense_layers * (self.attention_per_layer + self.dense_mlp_per_layer + self.norms_per_layer)
        moe = self.moe_layers * (
            self.attention_per_layer
            + self.moe_routed_active_per_layer
            + self.moe_shared_per_layer
            + self.router_per_layer
            + self.norms_per_layer
        )
        return dense + moe

    @property
    def total(self) -> float:
        """All parameters: embeddings, output head (0 when tied), layers and final norm."""
        return self.embedding + self.output + self.layers_total + self.final_norm

    @property
    def active(self) -> float:
        """Parameters touched per token (MoE: shared + top-k routed experts)."""
        return self.embedding + self.output + self.layers_active + self.final_norm


def _mlp_params(arch: ModelArch, width: int) -> float:
    matrices = 3 if arch.mlp == "swiglu" else 2
    bias = (width * (matrices - 1) + arch.hidden_size) if arch.linear_bias else 0
    return float(matrices * arch.hidden_size * width + bias)


def attention_params(arch: ModelArch) -> float:
    """Q, K, V, O projections of one layer (GQA: K/V have n_kv_heads heads; MLA: low-rank)."""
    h = arch.hidden_size
    if arch.attention == "mla":
        assert arch.kv_lora_rank is not None and arch.qk_rope_head_dim is not None
        nope = arch.qk_nope_head_dim if arch.qk_nope_head_dim is not None else arch.head_size
        v_dim = arch.v_head_dim if arch.v_head_dim is not None else arch.head_size
        qk_dim = nope + arch.qk_rope_head_dim
        if arch.q_lora_rank:
            q = h * arch.q_lora_rank + arch.q_lora_rank + arch.q_lora_rank * arch.num_heads * qk_dim
        else:
            q = h * arch.num_heads * qk_dim
        kv_a = h * (arch.kv_lora_rank + arch.qk_rope_head_dim) + arch.kv_lora_rank
        kv_b = arch.kv_lora_rank * arch.num_heads * (nope + v_dim)
        o = arch.num_heads * v_dim * h
        return float(q + kv_a + kv_b + o)
    q_dim = arch.num_heads * arch.head_size
    kv_dim = arch.kv_heads * arch.head_size
    weights = h * q_dim + 2 * h * kv_dim + q_dim * h
    bias = (q_dim + 2 * kv_dim + h) if arch.linear_bias else 0
    return float(weights + bias)


@cache
def param_breakdown(arch: ModelArch) -> ParamBreakdown:
    """Parameter counts of ``arch`` by part (embeddings, attention, MLP, experts, norms), counted from its shapes."""
    h = arch.hidden_size
    embedding = arch.vocab_size * h + arch.token_type_vocab * h
    if arch.position_embedding == "learned" and arch.max_seq_len:
        embedding += arch.max_seq_len * h
    norm_width = 2 * h if arch.norm == "layernorm" else h  # LayerNorm has gain and bias
    moe_layers = arch.num_moe_layers
    return ParamBreakdown(
        embedding=float(embedding),
        output=0.0 if arch.tied_embeddings else float(arch.vocab_size * h),
        attention_per_layer=attention_params(arch),
        dense_mlp_per_layer=_mlp_params(arch, arch.ffn_hidden_size),
        moe_routed_per_layer=arch.num_experts * _mlp_params(arch, arch.expert_ffn) if arch.is_moe else 0.0,
        moe_shared_per_layer=arch.num_shared_experts * _mlp_params(arch, arch.expert_ffn) if arch.is_moe else 0.0,
        router_per_layer=float(arch.num_experts * h) if arch.is_moe else 0.0,
        norms_per_layer=float(2 * norm_width),
        final_norm=float(norm_width),
        dense_layers=arch.num_layers - moe_layers,
        moe_layers=moe_layers,
        experts_per_token=arch.experts_per_token,
        num_experts=arch.num_experts,
    )


def params_total(arch: ModelArch) -> float:
    """All parameters of the model, every expert counted."""
    return param_breakdown(arch).total


def params_active(arch: ModelArch) -> float:
    """Parameters used per token (MoE: only the routed experts chosen)."""
    return param_breakdown(arch).active


def matmul_params_active(arch: ModelArch) -> float:
    """Parameters in matrix multiplies per token (excludes embedding lookups and norms; includes logits)."""
    b = param_breakdown(arch)
    logits = arch.vocab_size * arch.hidden_size
    per_layer_norms = b.norms_per_layer * arch.num_layers
    return b.layers_active - per_layer_norms + logits


def attention_dims(arch: ModelArch) -> tuple[int, int]:
    """(query-key dim, value dim) summed over heads, for attention-score FLOPs."""
    if arch.attention == "mla":
        nope = arch.qk_nope_head_dim if arch.qk_nope_head_dim is not None else arch.head_size
        rope = arch.qk_rope_head_dim or 0
        v_dim = arch.v_head_dim if arch.v_head_dim is not None else arch.head_size
        return arch.num_heads * (nope + rope), arch.num_heads * v_dim
    d = arch.num_heads * arch.head_size
    return d, d


def attention_flop_per_token_forward(arch: ModelArch, context_tokens: float, causal: bool) -> float:
    """Score (QKᵀ) and value (A·V) FLOPs of one token attending to ``context_tokens`` keys, all layers.

    2 FLOP per multiply-add: 2·ctx·d_qk + 2·ctx·d_v per layer (Kaplan et al. 2020 Table 1 counts
    2·n_layer·n_ctx·d_attn for the forward pass with d_qk = d_v = d_attn). ``causal`` halves the
    average context (the convention Megatron-LM adopted in 2025; PaLM/torchtitan do not halve). Sliding-window layers
    attend at most their window (analytic/window.py ``causal_mean_keys``).
    """
    d_qk, d_v = attention_dims(arch)
    ctx = causal_mean_keys(arch, context_tokens, causal)
    return arch.num_layers * 2.0 * ctx * (d_qk + d_v)


def flop_per_token_forward(arch: ModelArch, seq_len: float, causal: bool = False) -> float:
    """Forward FLOPs per token: 2·N_matmul,active + attention scores.

    Convention (named): "2N + attention", non-causal by default, as PaLM (Chowdhery et al. 2022,
    App. B) and torchtitan count model FLOPs; logits included, embedding lookup excluded.
    """
    return 2.0 * matmul_params_active(arch) + attention_flop_per_token_forward(arch, seq_len, causal)


def flop_per_token_training(arch: ModelArch, seq_len: float, causal: bool = False) -> float:
    """Model FLOPs per trained token = 3 × forward (backward = 2 × forward; Kaplan et al. 2020 §2.1).

    Equals 6·N + 12·L·d_attn·s for a dense MHA model (the "6N + attention" convention). Recompute
    is not counted (model FLOPs, not hardware FLOPs; Korthikanti et al. 2022 §5).
    """
    return 3.0 * flop_per_token_forward(arch, seq_len, causal)


def kv_bytes_per_token(arch: ModelArch, dtype: str = "bf16") -> float:
    """KV-cache bytes per token, all layers.

    MHA/GQA/MQA: 2 (K and V) · L · n_kv_heads · head_dim · bytes (Ainslie et al. 2023).
    MLA: L · (kv_lora_rank + qk_rope_head_dim) · bytes — one compressed latent plus the decoupled
    RoPE key per layer (DeepSeek-AI 2024, DeepSeek-V2 §2.1.2).
    """
    nbytes = DTYPE_BYTES[dtype]
    if arch.attention == "mla":
        assert arch.kv_lora_rank is not None
        return arch.num_layers * (arch.kv_lora_rank + (arch.qk_rope_head_dim or 0)) * nbytes
    return 2.0 * arch.num_layers * arch.kv_heads * arch.head_size * nbytes


def weight_bytes(arch: ModelArch, dtype: str) -> float:
    """All parameters stored at ``dtype`` (per-tensor scales of quantised formats not counted)."""
    return params_total(arch) * DTYPE_BYTES[dtype]
