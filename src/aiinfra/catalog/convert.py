"""Data rows -> spec fields: unit-suffixed keys (``_gb``, ``_tb_per_s`` ...) converted to SI."""

from __future__ import annotations

from typing import Any

from aiinfra.units import memory_bytes, to_si


def _convert_value(key: str, value: Any) -> tuple[str, Any]:
    if isinstance(value, dict):
        si_key, mult = to_si(key, 1.0)
        if si_key != key:
            return si_key, {k: float(v) * mult for k, v in value.items()}
        return key, si_row(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return key, value
    return to_si(key, value)


def si_row(row: dict[str, Any]) -> dict[str, Any]:
    """Convert a data row's unit-suffixed keys to SI (recursively)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in ("memory", "host_memory", "runtime_visible_memory") and isinstance(value, dict):
            out[f"{key}_bytes"] = memory_bytes(value["value"], value["unit"])
            out[f"{key}_as_published"] = f"{value['value']:g} {value['unit']}"
            continue
        if key == "sources" and isinstance(value, list):
            out[key] = [{**s, "read_on": str(s.get("read_on", ""))} for s in value]
            continue
        new_key, new_value = _convert_value(key, value)
        out[new_key] = new_value
    return out
