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


__all__ = [
    "DAY_S",
    "GB",
    "HOURS_PER_MONTH",
    "HOUR_S",
    "TB",
    "TFLOP",
    "age_text",
    "human_energy",
    "human_seconds",
    "plural",
    "source_text",
]

J_PER_KWH = 3.6e6


def human_energy(energy_j: float) -> str:
    """Energy in kWh below 1 MWh (a 9 kWh run is not "0.0 MWh"), else in MWh."""
    kwh = energy_j / J_PER_KWH
    return f"{kwh:,.1f} kWh" if kwh < 1000.0 else f"{kwh / 1000.0:,.1f} MWh"


def plural(n: int, word: str) -> str:
    """``n word`` with an s unless n is 1: "1 node", "4 nodes"."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def source_text(s: dict[str, Any]) -> str:
    """A sourced figure's origin in words: the catalog row with its date, or the scenario key."""
    if "id" in s:
        return f"{s['id']}, read {s['read_on']}, {s['age_days']} days old"
    return str(s["source"]) if s["source"] != "scenario" else f"scenario {s['key']}"
