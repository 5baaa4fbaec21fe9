"""Humanising helpers the command shells use: units for display, durations, where a figure came from."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from aiinfra.units import DAY_S, GB, HOUR_S, TB, TFLOP, human_seconds

if TYPE_CHECKING:
    from aiinfra.costing.energy import HOURS_PER_MONTH
    from aiinfra.costing.prices import age_text

#: names read from the costing package on first use (it is not needed by every command)
_LAZY = {"HOURS_PER_MONTH": "aiinfra.costing.energy", "age_text": "aiinfra.costing.prices"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["DAY_S", "GB", "HOURS_PER_MONTH", "HOUR_S", "TB", "TFLOP", "age_text", "human_seconds", "source_text"]


def source_text(s: dict[str, Any]) -> str:
    """A sourced figure's origin in words: the catalog row with its date, or the scenario key."""
    if "id" in s:
        return f"{s['id']}, read {s['read_on']}, {s['age_days']} days old"
    return str(s["source"]) if s["source"] != "scenario" else f"scenario {s['key']}"
