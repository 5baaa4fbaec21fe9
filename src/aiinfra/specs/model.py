"""Model architecture: dense, GQA/MQA, MLA and MoE transformers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from aiinfra.dataclass_code import loads_fast
from aiinfra.specs.bounds import MAX_EXPERTS, MAX_HEADS, MAX_LAYERS, MAX_VOCAB, InRange, SeqTokens, Width
from aiinfra.specs.common import STRICT, FieldProblem, Source

Layers = Annotated[int, InRange(1, MAX_LAYERS)]
Heads = Annotated[int, InRange(1, MAX_HEADS)]
Experts = Annotated[int, InRange(1, MAX_EXPERTS)]

MXFP4_SCALE_BLOCK = 32
"""Weights per E8M0 scale in the OCP microscaling MXFP4 format (OCP Microscaling Formats (MX) v1.0 §5, 2023)."""
NVFP4_SCALE_BLOCK = 16
"""Weights per E4M3 scale in NVIDIA's NVFP4 format (NVIDIA, "Introducing NVFP4", 2025)."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class ModelArch:
    """A decoder (or encoder) transformer as it is run."""

    __pydantic_config__ = STRICT

    id: str = "inline"
    name: str = ""
    num_layers: Layers
    hidden_size: Width
    num_heads: Heads
    num_kv_heads: Heads | None = None
    """None = num_heads (MHA)."""
    head_dim: Width | None = None
    """None = hidden_size / num_heads. For MLA: the value / nope head dim."""
    ffn_hidden_size: Width
    """FFN width of dense layers (equal to the expert width when every layer is MoE)."""
    mlp: Literal["gelu", "swiglu"] = "swiglu"
    """gelu = 2 weight matrices (any non-gated MLP), swiglu = 3 (any gated MLP)."""
    vocab_size: Annotated[int, InRange(1, MAX_VOCAB)]
    tied_embeddings: bool = False
    attention: Literal["mha", "gqa", "mqa", "mla"] = "gqa"
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    position_embedding: Literal["rope", "learned", "alibi", "none"] = "rope"
    max_seq_len: SeqTokens | None = None
    num_experts: Experts = 1
    """Routed experts (1 = dense)."""
    experts_per_token: Experts = 1
    moe_ffn_hidden_size: Width | None = None
    num_shared_experts: Annotated[int, InRange(0, MAX_EXPERTS)] = 0
    first_k_dense_layers: Annotated[int, InRange(0, MAX_LAYERS)] = 0
    """Leading dense layers before MoE layers start (DeepSeek: 3)."""
    moe_layer_step: Layers = 1
    """Every k-th layer (after the leading dense ones) is MoE, the others dense (Llama 4 Maverick: 2)."""
    q_lora_rank: Width | None = None
    kv_lora_rank: Width | None = None
    qk_rope_head_dim: Width | None = None
    qk_nope_head_dim: Width | None = None
    v_head_dim: Width | None = None
    linear_bias: bool = False
    """Linear layers carry bias vectors (GPT-2/GPT-3/BERT style)."""
    token_type_vocab: Annotated[int, InRange(0, MAX_VOCAB)] = 0
    """BERT-style segment embeddings (rows)."""
    fp8_scaling: Literal["tensor", "channel", "block"] = "tensor"
    """How the model's FP8 checkpoint scales its weights: one scale per tensor; one per output channel with the
    activations quantised per token at run time (``channel``: FBGEMM FP8, Meta's own FP8 release of Llama 3.1 405B,
    HF ``quant_method: fbgemm_fp8``); or one per ``fp8_block_size`` block with activations quantised per 1 x
    block-width group at run time (DeepSeek-V3 report §3.3.2; an HF ``quantization_config`` with
    ``weight_block_size``). Prices the dense linear layers of an FP8 serving run only (analytic/kernel_time.py
    ``fp8_block_time_factor``; a release that applies channel scales outside its GEMM, engines.yaml
    ``unfused_channel_fp8_by_version``)."""
    fp8_block_size: tuple[Width, Width] | None = None
    """(rows, columns) of one weight scaling block, with ``fp8_scaling: block`` only (DeepSeek-V3, Qwen3: 128 x 128)."""
    fp8_bf16_modules: Literal["none", "attention_and_edge_mlps"] = "none"
    """Linear layers an FP8 checkpoint leaves in bf16. ``attention_and_edge_mlps``: Meta's own FP8 release of Llama
    3.1 405B (FBGEMM row-wise FP8, ``quant_method: fbgemm_fp8``) quantises the feed-forward layers only, and not
    those of the first and last layer: every attention projection and the first and last MLP stay bf16 (Llama 3
    report, Dubey et al. 2024, arXiv 2407.21783, §6.2; the checkpoint's ``modules_to_not_convert``). Prices an
    FP8 serving run's weight bytes and those layers' GEMMs (analytic/inference.py)."""
    fp4_scale_block_elements: Literal[16, 32] | None = None
    """Weights sharing one 8-bit scale in the model's FP4 checkpoint: 32 for the OCP microscaling MXFP4 format (an
    E8M0 scale per 32 elements: OCP Microscaling Formats (MX) v1.0 §5, 2023; gpt-oss), 16 for NVIDIA's NVFP4 (an E4M3
    scale per 16, plus one FP32 per tensor: NVIDIA, "Introducing NVFP4", 2025). An FP4 serving run stores and streams
    1 / block scale bytes per weight beside the half byte (analytic/inference.py). None: not stated, scales not
    counted."""
    fp4_bf16_modules: Literal["none", "all_but_experts"] = "none"
    """Linear layers an FP4 checkpoint leaves in bf16. ``all_but_experts``: gpt-oss's MXFP4 release quantises the
    routed experts only (its config.json's ``quantization_config.modules_to_not_convert`` lists attention, router,
    embeddings and output head; the model card: MoE weights, over 90 % of the parameters, at 4.25 bits each). Prices
    an FP4 serving run's weight bytes and those layers' GEMMs (analytic/inference.py)."""
    sliding_window_tokens: SeqTokens | None = None
    """Window of the sliding-window attention layers: each of their queries attends only the last
    ``sliding_window_tokens`` positions (Beltagy et al. 2020, Longformer §3.1; Mistral 7B, Jiang et al. 2023 §2:
    4,096; gpt-oss: 128 on alternating layers). None = every layer attends the whole context."""
    sliding_window_layers: Annotated[int, InRange(0, MAX_LAYERS)] = 0
    """Layers that use the window (the rest attend the whole context): all of them for Mistral 7B v0.1, half for
    gpt-oss (HF ``layer_types``), five in six for Gemma 3."""
    attention_chunk_tokens: SeqTokens | None = None
    """Chunk of the chunked-attention layers: their query at position i attends only positions ⌊i/C⌋·C … i of its
    own chunk (Llama 4: 8,192, HF ``attention_chunk_size``). None = no chunked layers."""
    chunked_attention_layers: Annotated[int, InRange(0, MAX_LAYERS)] = 0
    """Layers that attend within their chunk (Llama 4: the 36 of 48 that use RoPE; every fourth layer is global)."""
    sources: tuple[Source, ...] = ()
    notes: str = ""

    def __post_init__(self) -> None:
        """Rules across fields that every real architecture obeys."""
        if self.head_dim is None and self.hidden_size % self.num_heads:
            raise FieldProblem(
                "num_heads",
                self.num_heads,
                f"does not divide hidden_size {self.hidden_size}",
                "give a head count that divides the hidden size, or set head_dim",
            )
        kv = self.kv_heads
        if kv > self.num_heads or self.num_heads % kv:
            raise FieldProblem(
                "num_kv_heads",
                kv,
                f"does not divide num_heads {self.num_heads}",
                "give KV heads that divide the attention heads (1 = MQA, num_heads = MHA)",
            )
        if self.experts_per_token > self.num_experts:
            raise FieldProblem(
                "experts_per_token",
                self.experts_per_token,
                f"is above num_experts {self.num_experts}",
                "route each token to at most num_experts experts",
            )
        if (self.fp8_block_size is not None) != (self.fp8_scaling == "block"):
            raise FieldProblem(
                "fp8_block_size",
                self.fp8_block_size,
                f"does not go with fp8_scaling {self.fp8_scaling}",
                "give fp8_block_size (e.g. [128, 128]) with fp8_scaling: block, and none with tensor scaling",
            )
        for span, layers_field, what in (
            ("sliding_window_tokens", "sliding_window_layers", "window"),
            ("attention_chunk_tokens", "chunked_attention_layers", "chunk"),
        ):
            if (getattr(self, span) is None) != (getattr(self, layers_field) == 0):
                raise FieldProblem(
                    layers_field,
                    getattr(self, layers_field),
                    f"does not go with {span} {getattr(self, span)}",
                    f"give both (the {what} and how many layers use it), or neither for full attention on every layer",
                )
        if self.sliding_window_layers + self.chunked_attention_layers > self.num_layers:
            # named by the field that pushes the count over: the chunked layers where there are any
            field = "chunked_attention_layers" if self.chunked_attention_layers else "sliding_window_layers"
            raise FieldProblem(
                field,
                getattr(self, field),
                f"with {self.sliding_window_layers} sliding-window and {self.chunked_attention_layers} chunked layers "
                f"is above num_layers {self.num_layers}",
                "count each layer once: sliding-window, chunked or full attention",
            )
        if self.first_k_dense_layers > self.num_layers:
            raise FieldProblem(
                "first_k_dense_layers",
                self.first_k_dense_layers,
                f"is above num_layers {self.num_layers}",
                "give at most num_layers",
            )

    @property
    def kv_heads(self) -> int:
        """KV heads per layer: ``num_kv_heads``, or ``num_heads`` when not given (multi-head attention)."""
        return self.num_kv_heads if self.num_kv_heads is not None else self.num_heads

    @property
    def head_size(self) -> int:
        """Width of one attention head: ``head_dim``, or hidden_size / num_heads when not given."""
        return self.head_dim if self.head_dim is not None else self.hidden_size // self.num_heads

    @property
    def has_local_attention(self) -> bool:
        """Whether some layers attend only part of the context (a sliding window or a chunk)."""
        return self.sliding_window_tokens is not None or self.attention_chunk_tokens is not None

    @property
    def windowed_layer_frac(self) -> float:
        """Share of the layers that attend only the sliding window (0 without one)."""
        return self.sliding_window_layers / self.num_layers

    @property
    def chunked_layer_frac(self) -> float:
        """Share of the layers that attend within their chunk (0 without chunked attention)."""
        return self.chunked_attention_layers / self.num_layers

    @property
    def is_moe(self) -> bool:
        """Whether the model routes tokens over more than one expert."""
        return self.num_experts > 1

    @property
    def num_moe_layers(self) -> int:
        """Layers with an MoE block: every ``moe_layer_step``-th after the ``first_k_dense_layers`` dense ones (0 for a
        dense model)."""
        return (self.num_layers - self.first_k_dense_layers) // self.moe_layer_step if self.is_moe else 0

    @property
    def expert_ffn(self) -> int:
        """FFN width of one expert: ``moe_ffn_hidden_size``, else the dense ``ffn_hidden_size``."""
        return self.moe_ffn_hidden_size if self.moe_ffn_hidden_size is not None else self.ffn_hidden_size
