"""Plain-text tables and JSON conversion for results."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any


def jsonable(obj: Any) -> Any:
    """Dataclasses, tuples, dicts and floats -> JSON-ready values (NaN/inf -> None)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    return obj


def _check_finite(obj: Any, path: str) -> None:
    if isinstance(obj, float) and not math.isfinite(obj):
        raise ValueError(f"the JSON result holds {obj} at {path or 'top level'}: a result must be finite (a bug)")
    if isinstance(obj, dict):
        for k, v in obj.items():
            _check_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            _check_finite(v, f"{path}[{i}]")


def json_text(obj: Any) -> str:
    """The one serialiser of command results: ``obj`` (already :func:`jsonable`) as one line of JSON. A non-finite
    number raises ValueError naming where it is (the CLI reports it as an internal error, exit 1)."""
    _check_finite(obj, "")
    return json.dumps(obj, allow_nan=False)


def fmt_num(value: Any, digits: int = 4) -> str:
    """A value for tables: None and non-finite as "unknown", booleans yes/no, ints with thousands separators, floats to
    ``digits`` significant digits (scientific below 1e-3 and from 1e15, whole numbers from 1e4)."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if not math.isfinite(value):
            return "unknown"
        mag = abs(value)
        if mag >= 1e15 or mag < 1e-3:
            return f"{value:.{digits - 1}e}"
        if mag >= 1e4:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}"
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain-text table: left-aligned columns as wide as their longest cell, a dashed rule under the headers;
    non-string cells through :func:`fmt_num`."""
    cells = [[str(h) for h in headers]] + [[c if isinstance(c, str) else fmt_num(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _key_value(key: str, value: Any) -> str:
    """A value for :func:`key_values`: years and ids as written (launch_year 2022, not 2,022), else :func:`fmt_num`."""
    if isinstance(value, int) and not isinstance(value, bool) and key.endswith(("year", "_id", "id")):
        return str(value)
    return fmt_num(value)


def key_values(pairs: Iterable[tuple[str, Any]], title: str = "") -> str:
    """``key  value`` lines, keys padded to one width, under ``title`` when given."""
    pairs = list(pairs)
    width = max((len(k) for k, _ in pairs), default=0)
    out = [title] if title else []
    out += [f"  {k.ljust(width)}  {v if isinstance(v, str) else _key_value(k, v)}" for k, v in pairs]
    return "\n".join(out)


def layout_label(tp: int, ep: int = 1, attention_dp: bool = False) -> str:
    """A replica's layout as the CLI prints it: tp4, tp4 ep4 (experts split ep ways) or tp4 dp-attn ep4 (attention
    data-parallel over the tp ranks)."""
    if attention_dp:
        return f"tp{tp} dp-attn ep{ep}"
    return f"tp{tp} ep{ep}" if ep > 1 else f"tp{tp}"
