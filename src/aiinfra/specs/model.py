"""Model architecture: dense, GQA/MQA, MLA and MoE transformers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aiinfra.specs.common import STRICT, Source


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelArch:
    """A decoder (or encoder) transformer as it is run."""

    __pydantic_config__ = STRICT

    id: str = "inline"
    name: str = ""
    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int | None = None
    """None = num_heads (MHA)."""
    head_dim: int | None = None
    """None = hidden_size / num_heads. For MLA: the value / nope head dim."""
    ffn_hidden_size: int
    """FFN width of dense layers (equal to the expert width when every layer is MoE)."""
    mlp: Literal["gelu", "swiglu"] = "swiglu"
    """gelu = 2 weight matrices (any non-gated MLP), swiglu = 3 (any gated MLP)."""
    vocab_size: int
    tied_embeddings: bool = False
    attention: Literal["mha", "gqa", "mqa", "mla"] = "gqa"
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    position_embedding: Literal["rope", "learned", "alibi", "none"] = "rope"
    max_seq_len: int | None = None
    num_experts: int = 1
    """Routed experts (1 = dense)."""
    experts_per_token: int = 1
    moe_ffn_hidden_size: int | None = None
    num_shared_experts: int = 0
    first_k_dense_layers: int = 0
    """Leading dense layers before MoE layers start (DeepSeek: 3)."""
    moe_layer_step: int = 1
    """Every k-th layer (after the leading dense ones) is MoE, the others dense (Llama 4 Maverick: 2)."""
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    linear_bias: bool = False
    """Linear layers carry bias vectors (GPT-2/GPT-3/BERT style)."""
    token_type_vocab: int = 0
    """BERT-style segment embeddings (rows)."""
    sources: tuple[Source, ...] = ()
    notes: str = ""

    @property
    def kv_heads(self) -> int:
        return self.num_kv_heads if self.num_kv_heads is not None else self.num_heads

    @property
    def head_size(self) -> int:
        return self.head_dim if self.head_dim is not None else self.hidden_size // self.num_heads

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 1

    @property
    def num_moe_layers(self) -> int:
        return (self.num_layers - self.first_k_dense_layers) // self.moe_layer_step if self.is_moe else 0

    @property
    def expert_ffn(self) -> int:
        return self.moe_ffn_hidden_size if self.moe_ffn_hidden_size is not None else self.ffn_hidden_size
