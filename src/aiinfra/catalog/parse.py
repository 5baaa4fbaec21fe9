"""Parsing one data file (YAML or CSV) into rows, through a versioned on-disk cache.

YAML goes through libyaml's C loader when PyYAML was built with it (``yaml.CSafeLoader``: the same
objects, several times faster), else the pure-Python ``SafeLoader``. Parsed rows are pickled under
``$XDG_CACHE_HOME/aiinfra`` (``~/.cache/aiinfra`` when unset), keyed by the package version, the file's
path, size and modification time; ``AIINFRA_NO_CACHE=1`` turns the cache off. A missing, stale, corrupt
or unwritable cache entry is only a slower start: the file is parsed again and the command goes on.
"""

from __future__ import annotations

import csv
import hashlib
import os
import pickle
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from aiinfra.errors import DataError

#: bump when what a cache entry holds changes shape
CACHE_FORMAT = 1


def cache_dir() -> Path | None:
    """Where parsed files are cached, or None when ``AIINFRA_NO_CACHE=1``."""
    if os.environ.get("AIINFRA_NO_CACHE", "") not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aiinfra"


def _version() -> str:
    try:
        return metadata.version("aiinfra")
    except metadata.PackageNotFoundError:
        return "unknown"


def _key(path: Path) -> tuple[str, str]:
    """(entry file name, identity of the file's contents) for ``path``."""
    st = path.stat()
    ident = f"{CACHE_FORMAT}|{_version()}|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    name = hashlib.blake2b(str(path.resolve()).encode(), digest_size=12).hexdigest()
    return f"{name}.pickle", ident


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
    where = cache_dir()
    if where is None:
        return parse_file(path)
    entry_name, ident = _key(path)
    entry = where / entry_name
    try:
        with entry.open("rb") as fh:
            stored_ident, rows = pickle.load(fh)
        if stored_ident == ident and isinstance(rows, list):
            return rows
    except Exception:  # absent, corrupt or from another version: parse again
        pass
    rows = parse_file(path)
    _store(entry, ident, rows)
    return rows


def _store(entry: Path, ident: str, rows: list[Any]) -> None:
    """Write one entry atomically; any failure leaves the cache as it was."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump((ident, rows), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, entry)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        pass
