"""Humanising helpers the command shells use: units for display, durations, where a figure came from."""

from __future__ import annotations

from typing import Any

from aiinfra.costing.energy import HOURS_PER_MONTH
from aiinfra.costing.prices import age_text
from aiinfra.units import DAY_S, GB, HOUR_S, TB, TFLOP, human_seconds

__all__ = ["DAY_S", "GB", "HOURS_PER_MONTH", "HOUR_S", "TB", "TFLOP", "age_text", "human_seconds", "source_text"]


def source_text(s: dict[str, Any]) -> str:
    """A sourced figure's origin in words: the catalog row with its date, or the scenario key."""
    if "id" in s:
        return f"{s['id']}, read {s['read_on']}, {s['age_days']} days old"
    return str(s["source"]) if s["source"] != "scenario" else f"scenario {s['key']}"
