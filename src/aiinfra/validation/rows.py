"""Shared parsing of reference rows (the schema of shared/reference/README.md) into specs."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from aiinfra.errors import AiinfraError
from aiinfra.specs.common import validate
from aiinfra.specs.model import ModelArch
from aiinfra.validation.types import RowPrediction


class RowError(Exception):
    """A row the planner cannot model (the message says why)."""


def reasoned(fn: Callable[[dict[str, str]], RowPrediction]) -> Callable[[dict[str, str]], RowPrediction]:
    """A row predictor that turns "cannot model this row" into a RowPrediction with the reason."""

    @functools.wraps(fn)
    def wrapper(row: dict[str, str]) -> RowPrediction:
        try:
            return fn(row)
        except (RowError, AiinfraError) as exc:
            return RowPrediction(None, reason=str(exc))

    return wrapper


def num(row: dict[str, str], key: str) -> float | None:
    text = (row.get(key) or "").strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError as exc:
        raise RowError(f"column {key}={text!r} is not a number") from exc


def integer(row: dict[str, str], key: str, default: int | None = None) -> int | None:
    v = num(row, key)
    return default if v is None else int(v)


def _note_int(notes: str, key: str) -> int | None:
    m = re.search(rf"{key}\D{{0,4}}(\d+)", notes)
    return int(m.group(1)) if m else None


def model_from_row(row: dict[str, str]) -> tuple[ModelArch, list[str]]:
    """ModelArch from a row's architecture columns; returns the assumptions made for blank cells."""
    flags: list[str] = []
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
    notes = row.get("notes") or ""
    if attention == "mla":
        for key in ("kv_lora_rank", "qk_rope_head_dim", "q_lora_rank", "qk_nope_head_dim"):
            data[key] = _note_int(notes, key)
        if data["kv_lora_rank"] is None:
            raise RowError("MLA row without kv_lora_rank in notes")
        data["v_head_dim"] = head_dim
    step = _note_int(notes, "interleave_moe_layer_step")
    if experts > 1 and step and step > 1:
        data["moe_layer_step"] = step
    m = re.search(r"first (\d+) (?:layers )?(?:are )?dense", notes)
    if experts > 1 and m:
        data["first_k_dense_layers"] = int(m.group(1))
    if not data["vocab_size"]:
        raise RowError("vocab_size blank")
    return validate(ModelArch, data, where=f"row {row.get('id')}"), flags
