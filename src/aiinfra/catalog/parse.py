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
import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from aiinfra.errors import DataError

#: bump when what a cache entry holds changes shape
CACHE_FORMAT = 1

T = TypeVar("T")

#: source files whose code turns rows into validated specs (package-relative)
_VALIDATION_CODE = ("units.py", "catalog/convert.py", "specs")


def cache_dir() -> Path | None:
    """Where parsed files are cached, or None when ``AIINFRA_NO_CACHE=1``."""
    if os.environ.get("AIINFRA_NO_CACHE", "") not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aiinfra"


def _version() -> str:
    from aiinfra import __version__

    return __version__


def file_identity(path: Path) -> str:
    """What a cache entry derived from ``path`` must match: the file's path, size and modification time."""
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"


@cache
def code_identity() -> str:
    """Hash of the code that validates catalog rows (specs, unit conversion) and of pydantic's version."""
    import pydantic

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.blake2b(pydantic.VERSION.encode(), digest_size=16)
    for rel in _VALIDATION_CODE:
        target = root / rel
        for path in sorted(target.glob("*.py")) if target.is_dir() else [target]:
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


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


def load_rows(path: Path) -> list[Any]:
    """:func:`parse_file` through the on-disk cache (an entry is used only when its identity matches)."""
    return cached(f"rows|{path.resolve()}", file_identity(path), lambda: parse_file(path))


def cached(slot: str, identity: str, build: Callable[[], T]) -> T:
    """``build()``, or the value a previous process stored in ``slot`` for the same ``identity`` (which must name
    every input the value depends on; the package version and the cache format are added here). One entry per
    slot: a newer identity overwrites the older entry."""
    where = cache_dir()
    if where is None:
        return build()
    ident = f"{CACHE_FORMAT}|{_version()}|{identity}"
    entry = where / (hashlib.blake2b(slot.encode(), digest_size=16).hexdigest() + ".pickle")
    try:
        with entry.open("rb") as fh:
            stored_ident, value = pickle.load(fh)
        if stored_ident == ident:
            hit: T = value
            return hit
    except Exception:  # absent, corrupt or unreadable: build again
        pass
    value = build()
    _store(entry, ident, value)
    return value


def _store(entry: Path, ident: str, value: Any) -> None:
    """Write one entry atomically; any failure leaves the cache as it was."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump((ident, value), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, entry)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except (OSError, pickle.PicklingError):
        pass
