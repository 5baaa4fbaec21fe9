"""The catalog: the only code that reads the shipped data files.

Rows are YAML with units in their keys; :func:`si_row` converts them to SI spec fields.
``get_*`` functions raise :class:`~aiinfra.errors.UnknownIdError` with "did you mean" hints.
"""

from __future__ import annotations

import difflib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from aiinfra.errors import DataError, UnknownIdError
from aiinfra.specs.accuracy import AccuracyNote
from aiinfra.specs.benchmark import BenchmarkSpec
from aiinfra.specs.common import validate
from aiinfra.specs.hardware import AcceleratorSpec, InterconnectSpec, SystemSpec
from aiinfra.specs.model import ModelArch
from aiinfra.units import memory_bytes, to_si

KINDS = ("accelerators", "systems", "interconnects", "models", "benchmarks")


def data_path(name: str) -> Path:
    """Path of a shipped data file (``prices/cloud.csv``)."""
    return Path(str(resources.files("aiinfra.catalog").joinpath("data", name)))


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
        if key == "memory" and isinstance(value, dict):
            out["memory_bytes"] = memory_bytes(value["value"], value["unit"])
            out["memory_as_published"] = f"{value['value']:g} {value['unit']}"
            continue
        if key == "sources" and isinstance(value, list):
            out[key] = [{**s, "read_on": str(s.get("read_on", ""))} for s in value]
            continue
        new_key, new_value = _convert_value(key, value)
        out[new_key] = new_value
    return out


@cache
def raw_rows(kind: str) -> tuple[dict[str, Any], ...]:
    path = data_path(f"{kind}.yaml")
    if not path.exists():
        return ()
    with path.open() as fh:
        rows = yaml.safe_load(fh) or []
    if not isinstance(rows, list):
        raise DataError(f"{path.name}: top level must be a list of rows")
    return tuple(rows)


_SPEC = {
    "accelerators": AcceleratorSpec,
    "systems": SystemSpec,
    "interconnects": InterconnectSpec,
    "models": ModelArch,
    "benchmarks": BenchmarkSpec,
}


@cache
def rows(kind: str) -> dict[str, Any]:
    """All rows of one kind as spec objects, keyed by id."""
    if kind not in _SPEC:
        raise UnknownIdError("kind", kind, "catalog kinds", difflib.get_close_matches(kind, KINDS))
    out: dict[str, Any] = {}
    for raw in raw_rows(kind):
        try:
            spec: Any = validate(_SPEC[kind], si_row(raw), where=f"{kind}.yaml[{raw.get('id', '?')}]")
        except Exception as exc:  # shipped data is broken: a bug, say where
            raise DataError(f"catalog data {kind}.yaml row {raw.get('id', '?')}: {exc}") from exc
        out[spec.id] = spec
    return out


@cache
def accuracy_notes() -> tuple[AccuracyNote, ...]:
    """The inference planner's known accuracy gaps (accuracy_notes.yaml), each checked against the validation
    cases it names by tests/test_validation_inference.py."""
    out = []
    for raw in raw_rows("accuracy_notes"):
        try:
            out.append(validate(AccuracyNote, raw, where=f"accuracy_notes.yaml[{raw.get('id', '?')}]"))
        except Exception as exc:  # shipped data is broken: a bug, say where
            raise DataError(f"catalog data accuracy_notes.yaml row {raw.get('id', '?')}: {exc}") from exc
    return tuple(out)


def accuracy_notes_for(model_id: str, engine: str, accelerator_id: str) -> list[str]:
    """The notes of the known gaps a scenario falls in (model, engine, accelerator)."""
    return [n.note for n in accuracy_notes() if n.covers(model_id, engine, accelerator_id)]


def suggest(value: str, known: list[str], n: int = 3) -> list[str]:
    """Close ids for a "did you mean" hint: substring matches first, then fuzzy ones."""
    low = value.lower()
    contains = [k for k in known if low and low in k]
    fuzzy = difflib.get_close_matches(low, known, n=n, cutoff=0.5)
    seen: list[str] = []
    for k in contains + fuzzy:
        if k not in seen:
            seen.append(k)
    return seen[:n]


def get(kind: str, id_: str, field: str | None = None) -> Any:
    table = rows(kind)
    if id_ in table:
        return table[id_]
    raise UnknownIdError(field or f"{kind}.id", id_, kind, suggest(id_, list(table)))


def accelerator(id_: str, field: str = "hardware.accelerator") -> AcceleratorSpec:
    spec: AcceleratorSpec = get("accelerators", id_, field)
    return spec


def system(id_: str, field: str = "hardware.system") -> SystemSpec:
    spec: SystemSpec = get("systems", id_, field)
    return spec


def interconnect(id_: str, field: str = "interconnect") -> InterconnectSpec:
    spec: InterconnectSpec = get("interconnects", id_, field)
    return spec


def model(id_: str, field: str = "model") -> ModelArch:
    spec: ModelArch = get("models", id_, field)
    return spec


def benchmark(id_: str, field: str = "benchmark") -> BenchmarkSpec:
    spec: BenchmarkSpec = get("benchmarks", id_, field)
    return spec


def benchmark_for(*texts: str) -> BenchmarkSpec | None:
    """The benchmark a result names: the longest ``match`` name found in any of ``texts`` (a result path,
    notes, a model name), compared lower-case and also with punctuation removed ("Llama-2-70B" matches
    llama2-70b). None when no benchmark matches."""
    low = [t.lower() for t in texts if t]
    squashed = ["".join(ch for ch in t if ch.isalnum()) for t in low]
    best: tuple[int, BenchmarkSpec] | None = None
    for spec in rows("benchmarks").values():
        for name in spec.match:
            flat = "".join(ch for ch in name if ch.isalnum())
            found = any(name in t for t in low) or any(flat in t for t in squashed)
            if found and (best is None or len(flat) > best[0]):
                best = (len(flat), spec)
    return best[1] if best else None


def find_any(id_: str) -> tuple[str, Any]:
    """Look an id up in every kind (for `catalog show`)."""
    for kind in KINDS:
        table = rows(kind)
        if id_ in table:
            return kind, table[id_]
    every = [k for kind in KINDS for k in rows(kind)]
    raise UnknownIdError("id", id_, "catalog ids", suggest(id_, every))


def systems_for(accelerator_id: str) -> list[SystemSpec]:
    return [s for s in rows("systems").values() if s.accelerator == accelerator_id]
