"""Multi-head latent attention (MLA) terms of the inference step model: the down-projections every
tensor-parallel rank holds whole, and the re-expansion of a cached latent prefix into multi-head keys and values
when a later prompt chunk runs the multi-head form (DeepSeek-V2 §2.1)."""

from __future__ import annotations

from aiinfra.analytic.model_figures import attention_dims
from aiinfra.specs.common import DTYPE_BYTES
from aiinfra.specs.model import ModelArch


def mla_replicated_params_per_layer(m: ModelArch) -> float:
    """Weights of one MLA layer every tensor-parallel rank holds whole: the query and key-value down-projections
    (hidden -> q_lora_rank, hidden -> kv_lora_rank + rope dims). The engines build them as replicated layers, not
    split over the tp ranks (vLLM ``DeepseekV2MLAAttention``: ``q_a_proj`` and ``kv_a_proj_with_mqa`` are
    ``ReplicatedLinear``, vllm/model_executor/models/deepseek_v2.py; SGLang's ``fused_qkv_a_proj_with_mqa`` is a
    ``ReplicatedLinear``), so each rank runs them on all of its tokens; 0 for other attention kinds."""
    if m.attention != "mla":
        return 0.0
    return float(m.hidden_size * ((m.q_lora_rank or 0) + (m.kv_lora_rank or 0) + (m.qk_rope_head_dim or 0)))


def mla_kv_b_params_per_layer(m: ModelArch) -> float:
    """Weights of one MLA layer's up-projection kv_b_proj (kv_lora_rank -> heads x (d_nope + d_v)): a GEMM over a
    prompt's latent in the multi-head form, the two per-head matmuls W_UK and W_UV around the attention op in the
    absorbed form (DeepSeek-V2 §2.1.3); 0 for other attention kinds."""
    return mla_reexpansion_flop_per_token(m, 1) / 2.0


def mla_reexpansion_flop_per_token(m: ModelArch, split: int) -> float:
    """FLOP per layer and rank to re-expand one cached MLA token into multi-head keys and values: the up-projection
    kv_b_proj, kv_lora_rank -> heads x (d_nope + d_v), its heads split ``split`` ways (2 FLOP per weight,
    DeepSeek-V2 §2.1.2: k^C = W^UK c^KV, v^C = W^UV c^KV); 0 for other attention kinds."""
    if m.attention != "mla":
        return 0.0
    d_qk, d_v = attention_dims(m)
    nope = d_qk // m.num_heads - (m.qk_rope_head_dim or 0)
    return 2.0 * (m.kv_lora_rank or 0) * m.num_heads * (nope + d_v // m.num_heads) / split


def mla_reexpansion_bytes_per_token(m: ModelArch, split: int, dims: tuple[int, int]) -> float:
    """Bytes per layer and rank moved to re-expand one cached MLA token (bf16): its latent and rotary key gathered
    from the paged cache (read, written contiguously: 2·(kv_lora + rope) values), and its rebuilt key and value for
    the rank's heads written and read back by the attention kernel (2·(d_qk + d_v)/split values; ``dims``: the
    query-key and value widths summed over heads that the kernel runs, padded values included)."""
    lat = (m.kv_lora_rank or 0) + (m.qk_rope_head_dim or 0)
    return (2.0 * lat + 2.0 * (dims[0] + dims[1]) / split) * DTYPE_BYTES["bf16"]
