"""SI constants and the vendor-suffix table used to read catalog data.

Code works in SI (bytes, seconds, FLOP, FLOP/s, bytes/s, W, J, USD). Data files carry the
unit in the key (``memory_bw_tb_per_s``); :func:`to_si` turns such a key into its SI name
and value. Bandwidth is decimal (1 GB/s = 1e9 B/s); GiB is only used where a source prints it.
"""

from __future__ import annotations

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
KiB = 2.0**10
MiB = 2.0**20
GiB = 2.0**30
TiB = 2.0**40

TFLOP = 1e12
PFLOP = 1e15
US = 1e-6
MS = 1e-3
NS = 1e-9
HOUR_S = 3600.0
DAY_S = 86400.0
YEAR_S = 365.0 * DAY_S
KWH_J = 3.6e6
MWH_J = 3.6e9

#: data-file key suffix -> (SI suffix, multiplier). Longest suffixes are matched first.
SUFFIXES: dict[str, tuple[str, float]] = {
    "_tflop_per_s": ("_flop_per_s", TFLOP),
    "_pflop_per_s": ("_flop_per_s", PFLOP),
    "_tb_per_s": ("_bytes_per_s", TB),
    "_gb_per_s": ("_bytes_per_s", GB),
    "_gbit_per_s": ("_bytes_per_s", GB / 8.0),
    "_gib": ("_bytes", GiB),
    "_gb": ("_bytes", GB),
    "_tb": ("_bytes", TB),
    "_kw": ("_w", 1e3),
    "_mw": ("_w", 1e6),
    "_us": ("_s", US),
    "_ns": ("_s", NS),
    "_ms": ("_s", MS),
}


def to_si(key: str, value: float) -> tuple[str, float]:
    """Convert one ``(key, value)`` from a data file to SI.

    >>> to_si("memory_bw_tb_per_s", 3.35)
    ('memory_bw_bytes_per_s', 3350000000000.0)
    """
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if key.endswith(suffix):
            si_suffix, mult = SUFFIXES[suffix]
            return key[: -len(suffix)] + si_suffix, float(value) * mult
    return key, float(value)


def memory_bytes(value: float, unit: str) -> float:
    """Capacity as printed by a vendor -> bytes. ``unit`` is ``GB`` (1e9) or ``GiB`` (2**30)."""
    if unit == "GB":
        return float(value) * GB
    if unit == "GiB":
        return float(value) * GiB
    if unit == "TB":
        return float(value) * TB
    raise ValueError(f"memory unit must be GB, GiB or TB, got {unit!r}")


def human_bytes(n_bytes: float) -> str:
    """Decimal units for display (GB = 1e9 bytes)."""
    for unit, mult in (("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB)):
        if abs(n_bytes) >= mult:
            return f"{n_bytes / mult:.3g} {unit}"
    return f"{n_bytes:.0f} B"


def human_seconds(t_s: float) -> str:
    """A duration for people, in the largest fitting unit (days from 2 days, h from 2 h, min from 2 min, then s, ms,
    µs), 3 significant digits."""
    if t_s >= 2 * DAY_S:
        return f"{t_s / DAY_S:.3g} days"
    if t_s >= 2 * HOUR_S:
        return f"{t_s / HOUR_S:.3g} h"
    if t_s >= 120:
        return f"{t_s / 60:.3g} min"
    if t_s >= 1:
        return f"{t_s:.3g} s"
    if t_s >= 1e-3:
        return f"{t_s * 1e3:.3g} ms"
    return f"{t_s * 1e6:.3g} µs"
