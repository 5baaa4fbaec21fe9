"""Grid axes (``KEY=V1,V2,...``) and the points of a sweep: the cartesian product of the ``--grid`` axes, crossed
with the ``--zip`` axes walked together; each point a tuple of (scenario key, value) in axis order."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from aiinfra.errors import SpecError

Point = tuple[tuple[str, Any], ...]
"""One point of a sweep: (dotted scenario key, value) pairs, in axis order."""

_OPEN, _CLOSE = "[{(", "]})"


def split_values(raw: str) -> list[str]:
    """``8,16,[1,2]`` -> ``["8", "16", "[1,2]"]``: commas inside brackets or quotes do not split."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(raw):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(raw[start:i])
            start = i + 1
    parts.append(raw[start:])
    return [p.strip() for p in parts]


def parse_axis(text: str, flag: str) -> tuple[str, list[Any]]:
    """``--grid hardware.count=8,16`` -> ``("hardware.count", [8, 16])``; each value read as YAML, like ``--set``."""
    example = f"write e.g. {flag} hardware.count=8,16,32"
    if "=" not in text:
        raise SpecError(flag, text, "expected KEY=V1,V2,...", example)
    key, raw = (s.strip() for s in text.split("=", 1))
    if not key:
        raise SpecError(flag, text, "empty key", example)
    values: list[Any] = []
    for item in split_values(raw):
        if not item:
            raise SpecError(f"{flag} {key}", raw, "empty value", "separate values by single commas")
        try:
            values.append(yaml.safe_load(item))
        except yaml.YAMLError:
            raise SpecError(f"{flag} {key}", item, "not a valid YAML value", "quote or fix it") from None
    return key, values


@dataclass(frozen=True, slots=True)
class Grid:
    """The points of a sweep, generated lazily (memory does not grow with their number)."""

    axes: tuple[tuple[str, tuple[Any, ...]], ...]
    """crossed axes (``--grid``), the last varying fastest"""
    zipped: tuple[tuple[str, tuple[Any, ...]], ...]
    """axes walked together (``--zip``, equal lengths), crossed with ``axes`` as one more axis"""

    @classmethod
    def build(cls, grid: Mapping[str, Sequence[Any]] | None, zipped: Mapping[str, Sequence[Any]] | None) -> Grid:
        """Check and freeze the axes: every key once, every axis non-empty, zipped axes of one length."""
        axes = [(k, tuple(v)) for k, v in (grid or {}).items()]
        zips = [(k, tuple(v)) for k, v in (zipped or {}).items()]
        seen: set[str] = set()
        for flag, group in (("--grid", axes), ("--zip", zips)):
            for key, values in group:
                if isinstance(values, str | bytes) or not values:
                    raise SpecError(f"{flag} {key}", list(values), "needs at least one value", "list the values")
                if key in seen:
                    raise SpecError(f"{flag} {key}", list(values), "key given twice", "give each key once")
                seen.add(key)
        if zips and len({len(v) for _, v in zips}) > 1:
            lengths = ", ".join(f"{k}: {len(v)}" for k, v in zips)
            raise SpecError(
                f"--zip {zips[0][0]}",
                lengths,
                "zipped keys need the same number of values",
                "give every --zip key as many values as the others",
            )
        if not axes and not zips:
            raise SpecError("--grid", None, "no axis to sweep", "give at least one --grid KEY=V1,V2,...")
        return cls(tuple(axes), tuple(zips))

    @property
    def keys(self) -> list[str]:
        """Every key the grid sweeps: the crossed axes, then the zipped ones."""
        return [k for k, _ in self.axes] + [k for k, _ in self.zipped]

    def __len__(self) -> int:
        zipped = len(self.zipped[0][1]) if self.zipped else 1
        return math.prod(len(v) for _, v in self.axes) * zipped

    def __iter__(self) -> Iterator[Point]:
        keys = self.keys
        zip_rows: Iterable[tuple[Any, ...]] = zip(*(v for _, v in self.zipped), strict=True) if self.zipped else [()]
        for combo in itertools.product(*(v for _, v in self.axes), list(zip_rows)):
            values = (*combo[:-1], *combo[-1])
            yield tuple(zip(keys, values, strict=True))


def point_hash(question: str, options: Mapping[str, Any], scenario: Mapping[str, Any], catalog: str = "") -> str:
    """A point's identity: the question, its options, the fully overridden scenario mapping and, when the catalog
    is not the shipped one, a fingerprint of the user's catalog rows (64 bits, hex)."""
    identity: dict[str, Any] = {"question": question, "options": options, "scenario": scenario}
    if catalog:
        identity["catalog"] = catalog
    blob = json.dumps(identity, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
