"""Error bands beside headline numbers in text output ("139.8 days (80 %: 121–168)"), from an answer's ``accuracy``
object (aiinfra.accuracy). Formats only."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aiinfra.units import DAY_S, HOUR_S


def _pair(acc: Mapping[str, Any] | None, key: str) -> tuple[float, float] | None:
    q = ((acc or {}).get("quantities") or {}).get(key)
    if not q or q.get("low") is None or q.get("high") is None:
        return None
    return float(q["low"]), float(q["high"])


def _num(v: float) -> str:
    """1,241,509 -> 1,241,509; 12.83 -> 12.8."""
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def band(acc: Mapping[str, Any] | None, key: str, fmt: Callable[[float], str] = _num, label: str = "") -> str:
    """' (80 %: low–high)' for quantity ``key``, each end through ``fmt`` (``label`` before them: 'p50 '); '' when
    the answer has no band for it."""
    pair = _pair(acc, key)
    if pair is None:
        return ""
    share = float((acc or {}).get("interval", 0.8))
    return f" ({share * 100:.0f} %: {label}{fmt(pair[0])}–{fmt(pair[1])})"


def seconds_unit(t_s: float) -> tuple[float, str]:
    """The divisor and unit aiinfra.units.human_seconds prints ``t_s`` in."""
    for limit, div, unit in (
        (2 * DAY_S, DAY_S, "days"),
        (2 * HOUR_S, HOUR_S, "h"),
        (120.0, 60.0, "min"),
        (1.0, 1.0, "s"),
        (1e-3, 1e-3, "ms"),
    ):
        if t_s >= limit:
            return div, unit
    return 1e-6, "µs"


def seconds_band(acc: Mapping[str, Any] | None, key: str, t_s: float) -> str:
    """The band of a time in the unit human_seconds(t_s) uses: ' (80 %: 121–168)'."""
    div, _ = seconds_unit(t_s)
    return band(acc, key, lambda v: f"{v / div:.3g}")


def accuracy_line(acc: Mapping[str, Any] | None) -> str:
    """One line saying where the bands come from, or that the answer lies outside the validated regimes."""
    if not acc:
        return ""
    head = "EXTRAPOLATION — " if acc.get("extrapolation") else ""
    med = acc.get("median_abs_error_frac")
    tail = f" (median |error| {med:.0%})" if isinstance(med, float) else ""
    return f"accuracy: {head}{acc.get('note', '')}{tail}"
