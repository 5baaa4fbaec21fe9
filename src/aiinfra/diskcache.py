"""The on-disk cache of values derived from files: a value pickled under ``$XDG_CACHE_HOME/aiinfra``
(``~/.cache/aiinfra`` when unset), keyed by a slot and an identity (what it was made of, e.g. a file's path, size
and modification time) plus the package version; ``AIINFRA_NO_CACHE=1`` turns it off. A missing, stale, corrupt or
unwritable entry is only a slower start: the value is built again. Used by the catalog's parser (catalog/parse.py)
and by any layer that keeps a parsed data file the same way (the accuracy error table)."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

try:  # hashlib's own blake2b, without hashlib loading OpenSSL's bindings for the other digests (start-up time)
    from _blake2 import blake2b as blake2b
except ImportError:  # another Python implementation
    from hashlib import blake2b as blake2b

#: bump when what a cache entry holds changes shape
CACHE_FORMAT = 1

T = TypeVar("T")


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


def _entry(slot: str) -> Path | None:
    where = cache_dir()
    return None if where is None else where / (blake2b(slot.encode(), digest_size=16).hexdigest() + ".pickle")


def _ident(identity: str) -> str:
    return f"{CACHE_FORMAT}|{_version()}|{identity}"


_MISS = object()


def _read(entry: Path, ident: str) -> Any:
    """The value stored at ``entry`` under ``ident``; _MISS when absent, stale, corrupt or unreadable."""
    try:
        with entry.open("rb") as fh:
            stored_ident, value = pickle.load(fh)
    except Exception:  # absent, corrupt or unreadable
        return _MISS
    return value if stored_ident == ident else _MISS


def load(slot: str, identity: str) -> Any | None:
    """The value stored in ``slot`` for ``identity`` (None when absent, stale, corrupt or the cache is off)."""
    entry = _entry(slot)
    value = _MISS if entry is None else _read(entry, _ident(identity))
    return None if value is _MISS else value


def store(slot: str, identity: str, value: Any) -> None:
    """Keep ``value`` in ``slot`` for ``identity`` (replacing what the slot held); a failure only loses the entry."""
    entry = _entry(slot)
    if entry is not None:
        _store(entry, _ident(identity), value)


def cached(slot: str, identity: str, build: Callable[[], T]) -> T:
    """``build()``, or the value a previous process stored in ``slot`` for the same ``identity`` (which must name
    every input the value depends on; the package version and the cache format are added here). One entry per
    slot: a newer identity overwrites the older entry."""
    entry = _entry(slot)
    if entry is None:
        return build()
    ident = _ident(identity)
    hit = _read(entry, ident)
    if hit is not _MISS:
        found: T = hit
        return found
    value = build()
    _store(entry, ident, value)
    return value


def _store(entry: Path, ident: str, value: Any) -> None:
    """Write one entry atomically; any failure leaves the cache as it was."""
    import tempfile  # only a process that writes the cache pays its import

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
