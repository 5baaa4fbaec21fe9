"""Parsing one data file (YAML or CSV) into rows, through a versioned on-disk cache.

YAML goes through libyaml's C loader when PyYAML was built with it (``yaml.CSafeLoader``: the same
objects, several times faster), else the pure-Python ``SafeLoader``. Parsed rows are pickled under
``$XDG_CACHE_HOME/aiinfra`` (``~/.cache/aiinfra`` when unset), keyed by the package version, the file's
path, size and modification time; ``AIINFRA_NO_CACHE=1`` turns the cache off. A missing, stale, corrupt
or unwritable cache entry is only a slower start: the file is parsed again and the command goes on.
:func:`cached` keeps anything else derived from data files the same way (the catalog's validated rows,
keyed also by :func:`code_identity`, so a change to the specs or the unit conversion rebuilds them).
"""

from __future__ import annotations

import csv
import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

from aiinfra.diskcache import CACHE_FORMAT, blake2b, cache_dir, cached, file_identity
from aiinfra.errors import DataError

__all__ = [
    "CACHE_FORMAT",
    "cache_dir",
    "cached",
    "code_identity",
    "file_identity",
    "load_rows",
    "parse_file",
    "parser_identity",
]

#: source files whose code turns rows into validated specs (package-relative)
_VALIDATION_CODE = ("units.py", "catalog/convert.py", "specs")


@cache
def code_identity() -> str:
    """Hash of the code that validates catalog rows (specs, unit conversion) and of pydantic's version (read from
    its version.py without importing pydantic, which a run served from the cache never needs)."""
    root = Path(__file__).resolve().parents[1]
    digest = blake2b(_pydantic_version_text(), digest_size=16)
    for rel in _VALIDATION_CODE:
        target = root / rel
        for path in sorted(target.glob("*.py")) if target.is_dir() else [target]:
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _pydantic_version_text() -> bytes:
    """The bytes of the installed pydantic's ``version.py`` (its VERSION), found without importing the package."""
    spec = importlib.util.find_spec("pydantic")
    if spec is None or spec.origin is None:
        return b""
    try:
        return (Path(spec.origin).parent / "version.py").read_bytes()
    except OSError:
        return b""


def parse_file(path: Path) -> list[Any]:
    """The rows of a YAML (a top-level list) or CSV file (dicts of strings, rows without an id dropped)."""
    if path.suffix == ".csv":
        with path.open(newline="") as fh:
            return [r for r in csv.DictReader(fh) if (r.get("id") or "").strip()]
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        rows = yaml.load(path.read_text(), Loader=loader) or []
    except yaml.YAMLError as exc:
        raise DataError(f"{path.name}: not valid YAML: {exc}") from None
    if not isinstance(rows, list):
        raise DataError(f"{path.name}: top level must be a list of rows")
    return rows


def parser_identity() -> str:
    """The identity of this module, which gives parsed rows their shape (part of every key of a value built from
    them)."""
    return file_identity(Path(__file__))


def load_rows(path: Path) -> list[Any]:
    """:func:`parse_file` through the on-disk cache (an entry is used only when its identity matches), with equal
    strings shared: the cache pickles, and a warm start unpickles, each key and repeated text once per file instead
    of once per row (the per-M efficiency file: 424 kB -> 219 kB, a third quicker to load). Keyed by this module too
    (the entry's shape is its code's)."""
    identity = f"{file_identity(path)}|{parser_identity()}"
    return cached(f"rows|{path.resolve()}", identity, lambda: _shared(parse_file(path), {}))


def _shared(value: Any, seen: dict[str, str]) -> Any:
    """``value`` (parsed rows: lists, mappings, scalars) with each string replaced by the first equal one seen."""
    if isinstance(value, str):
        return seen.setdefault(value, value)
    if isinstance(value, dict):
        return {_shared(k, seen): _shared(v, seen) for k, v in value.items()}
    if isinstance(value, list):
        return [_shared(v, seen) for v in value]
    return value
