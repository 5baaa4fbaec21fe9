"""Read a Hugging Face ``config.json`` offline into a :class:`ModelArch` (no hub access)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeGuard

from aiinfra.errors import SpecError
from aiinfra.specs.common import validate
from aiinfra.specs.files import read_text
from aiinfra.specs.model import MXFP4_SCALE_BLOCK, NVFP4_SCALE_BLOCK, ModelArch

_GATED_ACTS = {"silu", "swiglu", "geglu", "gelu_pytorch_tanh_gated"}


def _is_int(x: Any) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _first(cfg: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return None


def arch_from_hf_config(cfg: dict[str, Any], field: str = "model.config", name: str = "") -> ModelArch:
    """Map the common HF config keys (Llama, Mistral/Mixtral, Qwen2/3(-MoE), DeepSeek-V2/V3, GPT-2, BERT).

    Long because each architecture family spells the same fields under its own keys (layers, heads, MoE, MLA,
    sliding windows); the mapping is one flat list of those cases."""
    if "text_config" in cfg and "num_hidden_layers" not in cfg:
        if not isinstance(cfg["text_config"], dict):
            raise SpecError(
                f"{field}.text_config", cfg["text_config"], "is not a JSON object", "give a Hugging Face config.json"
            )
        cfg = {**cfg["text_config"]}
    layers = _first(cfg, "num_hidden_layers", "n_layer", "num_layers")
    hidden = _first(cfg, "hidden_size", "n_embd", "d_model")
    heads = _first(cfg, "num_attention_heads", "n_head")
    if layers is None or hidden is None or heads is None:
        raise SpecError(
            field,
            name or "config.json",
            "config lacks num_hidden_layers/hidden_size/num_attention_heads",
            "give a decoder config.json from a Hugging Face model repository",
        )
    model_type = str(cfg.get("model_type", ""))
    act = str(_first(cfg, "hidden_act", "activation_function") or "")
    gated = act in _GATED_ACTS or model_type in {
        "llama",
        "mistral",
        "mixtral",
        "qwen2",
        "qwen3",
        "qwen3_moe",
        "qwen2_moe",
        "deepseek_v2",
        "deepseek_v3",
        "gemma",
        "gemma2",
    }
    is_gpt2_like = model_type in {"gpt2", "gpt_neo", "gptj", "bert", "roberta", "opt"}
    ffn = _first(cfg, "intermediate_size", "n_inner", "ffn_dim")
    if "vocab_size" not in cfg:
        raise SpecError(
            f"{field}.vocab_size",
            "(absent)",
            "config lacks vocab_size",
            "give a complete config.json from a Hugging Face model repository",
        )
    if ffn is None:
        ffn = 4 * hidden if _is_int(hidden) else hidden
    n_experts = _first(cfg, "n_routed_experts", "num_local_experts", "num_experts") or 1
    kv_lora = cfg.get("kv_lora_rank")
    heads_kv = _first(cfg, "num_key_value_heads") or heads
    # head_dim derived only where heads divide the hidden size (else ModelArch names the problem)
    derived_head = hidden // heads if _is_int(hidden) and _is_int(heads) and heads > 0 and hidden % heads == 0 else None
    data: dict[str, Any] = {
        "id": "hf-config",
        "name": name or str(cfg.get("_name_or_path", model_type or "config.json")),
        "num_layers": layers,
        "hidden_size": hidden,
        "num_heads": heads,
        "num_kv_heads": heads_kv,
        "head_dim": _first(cfg, "head_dim", "v_head_dim") or derived_head,
        "ffn_hidden_size": ffn,
        "mlp": "swiglu" if gated and not is_gpt2_like else "gelu",
        "vocab_size": cfg["vocab_size"],
        "tied_embeddings": bool(cfg.get("tie_word_embeddings", is_gpt2_like)),
        "norm": "layernorm" if is_gpt2_like else "rmsnorm",
        "position_embedding": "learned" if is_gpt2_like else "rope",
        "max_seq_len": _first(cfg, "max_position_embeddings", "n_positions", "n_ctx"),
        "linear_bias": is_gpt2_like or bool(cfg.get("attention_bias", False)),
        "token_type_vocab": cfg.get("type_vocab_size", 0) or 0,
    }
    if kv_lora:
        data.update(
            attention="mla",
            q_lora_rank=cfg.get("q_lora_rank"),
            kv_lora_rank=kv_lora,
            qk_rope_head_dim=cfg.get("qk_rope_head_dim"),
            qk_nope_head_dim=cfg.get("qk_nope_head_dim"),
            v_head_dim=cfg.get("v_head_dim"),
        )
    else:
        kv = data["num_kv_heads"]
        data["attention"] = "mha" if kv == data["num_heads"] else ("mqa" if kv == 1 else "gqa")
    if not _is_int(n_experts) or n_experts != 1:
        data.update(
            num_experts=n_experts,
            experts_per_token=_first(cfg, "num_experts_per_tok", "moe_top_k") or 1,
            moe_ffn_hidden_size=_first(cfg, "moe_intermediate_size") or ffn,
            num_shared_experts=_first(cfg, "n_shared_experts", "num_shared_experts") or 0,
            first_k_dense_layers=cfg.get("first_k_dense_replace", 0) or 0,
            moe_layer_step=cfg.get("interleave_moe_layer_step", 1) or 1,
        )
    data.update(_fp8_scaling(cfg.get("quantization_config"), field))
    data.update(_fp4_format(cfg.get("quantization_config")))
    data.update(_sliding_window(cfg, model_type, layers))
    data.update(_chunked_attention(cfg, model_type, layers))
    return validate(ModelArch, data, where=field)


def _chunked_attention(cfg: dict[str, Any], model_type: str, layers: Any) -> dict[str, Any]:
    """The chunk fields from a config's ``attention_chunk_size`` and the layers that use it: those ``layer_types``
    names ``chunked_attention``, else those ``no_rope_layers`` marks 1 (RoPE layers), else for Llama 4 all but every
    ``no_rope_layer_interval``-th (default 4; transformers' Llama4TextConfig lays them out so)."""
    chunk = cfg.get("attention_chunk_size")
    if not _is_int(chunk) or chunk <= 0 or not _is_int(layers):
        return {}
    no_rope = cfg.get("no_rope_layers")
    interval = cfg.get("no_rope_layer_interval")
    chunked = _layers_of_type(cfg, "chunked_attention")
    if chunked is None and isinstance(no_rope, list) and no_rope:
        chunked = sum(1 for v in no_rope[:layers] if v == 1)
    elif chunked is None and model_type.startswith("llama4"):
        step = interval if _is_int(interval) and interval > 0 else 4
        chunked = layers - layers // step
    if not chunked:
        return {}
    return {"attention_chunk_tokens": chunk, "chunked_attention_layers": min(chunked, layers)}


def _layers_of_type(cfg: dict[str, Any], kind: str) -> int | None:
    """How many entries of the config's per-layer ``layer_types`` list are ``kind``; None without such a list."""
    types = cfg.get("layer_types")
    if not isinstance(types, list) or not types:
        return None
    return sum(1 for t in types if t == kind)


def _sliding_window(cfg: dict[str, Any], model_type: str, layers: Any) -> dict[str, Any]:
    """The window fields from a config's ``sliding_window`` and the layers that use it: those ``layer_types`` names
    ``sliding_attention`` (gpt-oss, recent Gemma and Qwen configs); all but every ``sliding_window_pattern``-th
    (Gemma 3: five in six); every other one from the first (Gemma 2, whose modelling code windows the even layers);
    those from ``max_window_layers`` on where ``use_sliding_window`` is set (Qwen2); else every layer (Mistral 7B
    v0.1). A config with ``use_sliding_window: false`` (Qwen2/Qwen3, which still carry a ``sliding_window`` value)
    has none."""
    window = cfg.get("sliding_window")
    if not _is_int(window) or window <= 0 or not _is_int(layers) or cfg.get("use_sliding_window") is False:
        return {}
    pattern = cfg.get("sliding_window_pattern")
    windowed = _layers_of_type(cfg, "sliding_attention")
    if windowed is None and _is_int(pattern) and pattern > 1:
        windowed = layers - layers // pattern
    elif windowed is None and model_type == "gemma2":
        windowed = (layers + 1) // 2
    elif windowed is None and cfg.get("use_sliding_window") is True and _is_int(cfg.get("max_window_layers")):
        windowed = max(layers - cfg["max_window_layers"], 0)
    elif windowed is None:
        windowed = layers
    if windowed <= 0:
        return {}
    return {"sliding_window_tokens": window, "sliding_window_layers": min(windowed, layers)}


def _fp8_scaling(quant: Any, field: str) -> dict[str, Any]:
    """The FP8 weight scaling a checkpoint's ``quantization_config`` declares: block-wise where it is the
    ``fp8`` method with ``weight_block_size`` (deepseek-ai/DeepSeek-V3 and -R1, Qwen/Qwen3-*-FP8: ``quant_method:
    fp8, weight_block_size: [128, 128]``); per output channel for FBGEMM FP8 (``quant_method: fbgemm_fp8``); per
    tensor otherwise (no such config, ``fp8`` without blocks, NVIDIA ModelOpt's ``quant_algo: FP8``)."""
    if isinstance(quant, dict) and quant.get("quant_method") == "fbgemm_fp8":
        # Meta's FP8 release (Llama 3.1 405B): a scale per output channel, activations per token; the modules it
        # leaves in bf16 are listed, attention among them meaning the Llama 3 recipe (ModelArch.fp8_bf16_modules)
        kept = quant.get("modules_to_not_convert") or []
        found: dict[str, Any] = {"fp8_scaling": "channel"}
        if any("self_attn" in str(name) for name in kept):
            found["fp8_bf16_modules"] = "attention_and_edge_mlps"
        return found
    if not isinstance(quant, dict) or quant.get("quant_method") != "fp8":
        return {}
    block = quant.get("weight_block_size")
    if block is None:
        return {}
    if not (isinstance(block, list) and len(block) == 2 and all(_is_int(v) for v in block)):
        raise SpecError(
            f"{field}.quantization_config.weight_block_size",
            block,
            "is not a pair of integers",
            "give the checkpoint's [rows, columns] of one scaling block, e.g. [128, 128]",
        )
    return {"fp8_scaling": "block", "fp8_block_size": tuple(block)}


def _fp4_format(quant: Any) -> dict[str, Any]:
    """The FP4 checkpoint format a ``quantization_config`` declares: OCP MXFP4 (``quant_method: mxfp4``, openai/gpt-oss:
    a scale per 32 weights), with the linear layers it names in ``modules_to_not_convert`` left in bf16 when they
    include attention (gpt-oss: attention, router, embeddings, head: only the routed experts quantised); NVIDIA
    ModelOpt NVFP4 (``quant_method: modelopt``, ``quant_algo: NVFP4``: a scale per 16). Nothing otherwise."""
    if not isinstance(quant, dict):
        return {}
    if quant.get("quant_method") == "mxfp4":
        kept = quant.get("modules_to_not_convert") or []
        found: dict[str, Any] = {"fp4_scale_block_elements": MXFP4_SCALE_BLOCK}
        if any("self_attn" in str(name) for name in kept):
            found["fp4_bf16_modules"] = "all_but_experts"
        return found
    if quant.get("quant_method") == "modelopt" and str(quant.get("quant_algo", "")).upper() == "NVFP4":
        return {"fp4_scale_block_elements": NVFP4_SCALE_BLOCK}
    return {}


def load_hf_config(path: str | Path, field: str = "model.config") -> ModelArch:
    """A Hugging Face config.json on disk as a ModelArch, named as the checkpoint names itself (else by its folder); a
    SpecError on ``field`` when the file is not a JSON object."""
    p = Path(path)
    try:
        cfg = json.loads(read_text(p, field, "a config.json on disk"))
    except (json.JSONDecodeError, RecursionError) as exc:
        if isinstance(exc, RecursionError):
            raise SpecError(field, str(path), "not valid JSON (nested too deeply)", "fix the file") from None
        raise SpecError(field, str(path), f"not valid JSON ({exc.msg} at line {exc.lineno})", "fix the file") from None
    if not isinstance(cfg, dict):
        raise SpecError(field, str(path), "top level is not a JSON object", "give a Hugging Face config.json")
    # named as the checkpoint names itself (_name_or_path), else by its folder or file
    return arch_from_hf_config(cfg, field, name=str(cfg.get("_name_or_path") or "") or p.parent.name or p.stem)
