"""Shared parsing of reference rows (the schema of shared/reference/README.md) into specs."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping

from aiinfra.errors import AiinfraError
from aiinfra.specs.common import validate
from aiinfra.specs.model import ModelArch
from aiinfra.validation import switches
from aiinfra.validation.switches import Kind
from aiinfra.validation.types import RowPrediction, RowTables

Predictor = Callable[[dict[str, str], RowTables], RowPrediction]


class RowError(Exception):
    """A row the planner cannot model (the message says why)."""


def reasoned(kind: Kind) -> Callable[[Predictor], Predictor]:
    """A row predictor of ``kind`` rows that reads the row with every switch column (a legacy row's from its
    notes: validation.switches) and turns "cannot model this row" into a RowPrediction with the reason."""

    def decorate(fn: Predictor) -> Predictor:
        @functools.wraps(fn)
        def wrapper(row: dict[str, str], tables: RowTables) -> RowPrediction:
            try:
                return fn(switches.with_columns(row, kind, tables.engines), tables)
            except (RowError, AiinfraError) as exc:
                return RowPrediction(None, reason=str(exc))

        return wrapper

    return decorate


def num(row: dict[str, str], key: str) -> float | None:
    """The column as a float, None when blank; RowError when it is not a number."""
    text = (row.get(key) or "").strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError as exc:
        raise RowError(f"column {key}={text!r} is not a number") from exc


def integer(row: dict[str, str], key: str, default: int | None = None) -> int | None:
    """The column as an int, ``default`` when blank; RowError when it is not a number."""
    v = num(row, key)
    return default if v is None else int(v)


def expert_layout(row: dict[str, str], tp: int, is_moe: bool) -> tuple[int, bool]:
    """(ep, attention_dp) of a row's run. Attention DP where the row's ``attention_dp`` column says so (MoE
    models only); ep as the row gives it, else tp ways under attention DP (TensorRT-LLM perf-overview, "For MoE
    models": ``--ep $ep_size`` with ``enable_attention_dp``) and 1 otherwise, TensorRT-LLM's mapping default when
    neither size is given (tensorrt_llm/mapping.py: experts tensor-parallel over the tp ranks)."""
    attention_dp = is_moe and switches.flag(row, "attention_dp")
    return integer(row, "ep") or (tp if attention_dp else 1), attention_dp


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _same_model(a: str, b: str) -> bool:
    """Names equal after normalising, or one a prefix of the other not followed by a digit ("Llama 3.1 8B"
    matches "Llama-3.1-8B-Instruct" but "Llama 2 7B" does not match "Llama 2 70B")."""
    if not a or not b:
        return False
    short, long_ = sorted((a, b), key=len)
    return long_.startswith(short) and (len(long_) == len(short) or not long_[len(short)].isdigit())


def catalog_model_for(name: str, models: Mapping[str, ModelArch]) -> ModelArch | None:
    """The catalog model (sourced row of ``models``, the catalog's by id) a row's model_name names, if exactly one
    matches."""
    key = _norm(name)
    hits = [
        m
        for mid, m in models.items()
        if any(_same_model(key, _norm(k)) for k in (m.name, mid, mid.removeprefix("meta-")))
    ]
    return hits[0] if len(hits) == 1 else None


#: MLA's low-rank dimensions: run-setting columns of the row, taken from the catalog model when blank
_MLA_COLUMNS = ("kv_lora_rank", "qk_rope_head_dim", "q_lora_rank", "qk_nope_head_dim")

#: row columns that carry a ModelArch field of the same name
_ARCH_COLUMNS = (
    "num_layers",
    "hidden_size",
    "num_heads",
    "num_kv_heads",
    "head_dim",
    "ffn_hidden_size",
    "vocab_size",
    "mlp",
    "attention",
    "num_experts",
    "experts_per_token",
    "moe_ffn_hidden_size",
    "num_shared_experts",
)


def _fill_from_catalog(row: dict[str, str], flags: list[str], models: Mapping[str, ModelArch]) -> dict[str, str]:
    """Blank architecture cells taken from the catalog row of the named model (sources in models.yaml)."""
    needed = [c for c in ("num_layers", "hidden_size", "vocab_size") if not (row.get(c) or "").strip()]
    if not needed:
        return row
    cat = catalog_model_for(row.get("model_name") or "", models)
    if cat is None:
        return row
    filled = dict(row)
    taken = []
    for col in _ARCH_COLUMNS:
        value = getattr(cat, col, None)
        if not (row.get(col) or "").strip() and value not in (None, ""):
            filled[col] = str(value)
            taken.append(col)
    if cat.attention == "mla":
        for k in _MLA_COLUMNS:
            if getattr(cat, k, None) and not switches.text(row, k):
                filled[k] = str(getattr(cat, k))
    if cat.first_k_dense_layers and not switches.text(row, "first_k_dense_layers"):
        filled["first_k_dense_layers"] = str(cat.first_k_dense_layers)
    flags.append(f"{', '.join(taken)} blank: taken from catalog model {cat.id} (catalog/data/models.yaml)")
    return filled


def _sliding_window(
    row: dict[str, str], layers: int, models: Mapping[str, ModelArch], flags: list[str]
) -> dict[str, object]:
    """The window fields of a row whose ``sliding_window`` cell says the model has sliding-window layers: the window
    and the layers using it from the catalog model the row names (models.yaml, from its HF config), where it has the
    row's layer count; else none (full attention, flagged)."""
    if not switches.text(row, "sliding_window"):
        return {}
    cat = catalog_model_for(row.get("model_name") or "", models)
    if cat is None or cat.sliding_window_tokens is None or cat.num_layers != layers:
        flags.append("sliding-window layers modelled as full attention (no catalog model states the window)")
        return {}
    flags.append(
        f"sliding window of {cat.sliding_window_tokens} tokens on {cat.sliding_window_layers} of {layers} layers "
        f"(catalog model {cat.id})"
    )
    return {"sliding_window_tokens": cat.sliding_window_tokens, "sliding_window_layers": cat.sliding_window_layers}


def _checkpoint_model(
    row: dict[str, str], data: dict[str, object], models: Mapping[str, ModelArch]
) -> ModelArch | None:
    """The catalog model whose official checkpoint a quantised row runs: the one the row names or, failing a name
    match, the one catalog model of its architecture (``_SAME_ARCH``); None when neither is unique."""
    cat = catalog_model_for(row.get("model_name") or "", models)
    if cat is None:
        same = [m for m in models.values() if all(getattr(m, k) == data.get(k) for k in _SAME_ARCH)]
        cat = same[0] if len(same) == 1 else None
    return cat


def _fp4_format(
    row: dict[str, str], data: dict[str, object], models: Mapping[str, ModelArch], flags: list[str]
) -> dict[str, object]:
    """The FP4 checkpoint format of an fp4 row: the scale block and the layers left in bf16 of the catalog model the
    row names or, failing a name match, the one catalog model of its architecture (``_SAME_ARCH``), whose official
    checkpoint it runs (gpt-oss: MXFP4 experts, the rest bf16); none stated otherwise."""
    cat = _checkpoint_model(row, data, models)
    if cat is None or cat.fp4_scale_block_elements is None:
        return {}
    kept = "" if cat.fp4_bf16_modules == "none" else ", everything but the routed experts in bf16"
    flags.append(
        f"fp4 weights with a scale per {cat.fp4_scale_block_elements}{kept}: catalog model {cat.id}'s checkpoint"
    )
    return {"fp4_scale_block_elements": cat.fp4_scale_block_elements, "fp4_bf16_modules": cat.fp4_bf16_modules}


def model_from_row(row: dict[str, str], models: Mapping[str, ModelArch]) -> tuple[ModelArch, list[str]]:
    """ModelArch from a row's architecture columns (blank ones from the catalog's ``models`` by id); returns the
    assumptions made for blank cells."""
    flags: list[str] = []
    row = _fill_from_catalog(row, flags, models)
    hidden = integer(row, "hidden_size")
    layers = integer(row, "num_layers")
    if hidden is None or layers is None:
        raise RowError("num_layers or hidden_size blank")
    heads = integer(row, "num_heads")
    head_dim = integer(row, "head_dim")
    if heads is None:
        if head_dim:
            heads = hidden // head_dim
        else:
            heads = hidden // 128 if hidden % 128 == 0 else hidden // 64
            head_dim = hidden // heads
        flags.append(f"num_heads blank: assumed {heads} (head_dim {hidden // heads}); time does not depend on it")
    kv = integer(row, "num_kv_heads") or heads
    attention = (row.get("attention") or "mha").strip() or "mha"
    experts = integer(row, "num_experts", 1) or 1
    data: dict[str, object] = {
        "id": row.get("id", "row"),
        "name": row.get("model_name", ""),
        "num_layers": layers,
        "hidden_size": hidden,
        "num_heads": heads,
        "num_kv_heads": kv,
        "head_dim": head_dim,
        "ffn_hidden_size": integer(row, "ffn_hidden_size") or 4 * hidden,
        "mlp": (row.get("mlp") or "gelu").strip(),
        "vocab_size": integer(row, "vocab_size") or 0,
        "tied_embeddings": (row.get("tied_embeddings") or "").strip() == "yes",
        "attention": attention if attention in ("mha", "gqa", "mqa", "mla") else "mha",
        "num_experts": experts,
        "experts_per_token": integer(row, "experts_per_token", 1) or 1,
        "moe_ffn_hidden_size": integer(row, "moe_ffn_hidden_size"),
        "num_shared_experts": integer(row, "num_shared_experts", 0) or 0,
    }
    if not row.get("ffn_hidden_size"):
        flags.append("ffn_hidden_size blank: assumed 4·hidden")
    if attention == "mla":
        for key in _MLA_COLUMNS:
            data[key] = integer(row, key)
        if data["kv_lora_rank"] is None:
            raise RowError("MLA row without kv_lora_rank")
        data["v_head_dim"] = head_dim
    step = integer(row, "moe_layer_step")
    if experts > 1 and step and step > 1:
        data["moe_layer_step"] = step
    first_dense = integer(row, "first_k_dense_layers")
    if experts > 1 and first_dense is not None:
        data["first_k_dense_layers"] = first_dense
    if not data["vocab_size"]:
        raise RowError("vocab_size blank")
    data.update(_sliding_window(row, layers, models, flags))
    if (row.get("weight_precision") or "").strip() == "fp8":
        data.update(_fp8_scaling(row, data, models, flags))
    if (row.get("weight_precision") or "").strip() == "fp4":
        data.update(_fp4_format(row, data, models, flags))
    return validate(ModelArch, data, where=f"row {row.get('id')}"), flags


#: what a row must share with a catalog model to run the same checkpoint format (a fine-tune or re-release of it:
#: DeepSeek-R1 and R1-0528 of DeepSeek-V3, Qwen3-235B-A22B-Instruct-2507 of Qwen3-235B-A22B)
_SAME_ARCH = ("num_layers", "hidden_size", "vocab_size", "num_experts", "experts_per_token", "attention")


def _fp8_scaling(
    row: dict[str, str], data: dict[str, object], models: Mapping[str, ModelArch], flags: list[str]
) -> dict[str, object]:
    """The FP8 weight scaling of an fp8 row's checkpoint: per tensor for a ModelOpt export (``quantizer`` modelopt:
    ``quant_algo: FP8``, one scale per tensor); Meta's FBGEMM FP8 release (``quantizer`` fbgemm_fp8: row-wise FP8, a
    scale per output channel, on the MLPs only, ``ModelArch.fp8_bf16_modules``); else that of the catalog model the
    row names or, failing a name match, the one catalog model of its architecture (``_SAME_ARCH``), whose official
    FP8 checkpoint it runs."""
    quantizer = switches.text(row, "quantizer").lower()
    if quantizer == "modelopt":
        return {}
    if quantizer == "fbgemm_fp8":
        flags.append(
            "fbgemm_fp8 checkpoint (Meta's FP8 release): FP8 weights scaled per output channel; attention and the first"
            " and last MLPs stay bf16"
        )
        return {"fp8_scaling": "channel", "fp8_bf16_modules": "attention_and_edge_mlps"}
    cat = _checkpoint_model(row, data, models)
    if cat is None or cat.fp8_scaling != "block":
        return {}
    flags.append(f"fp8 weights block-scaled {cat.fp8_block_size}: catalog model {cat.id}'s official FP8 checkpoint")
    return {"fp8_scaling": "block", "fp8_block_size": cat.fp8_block_size}
