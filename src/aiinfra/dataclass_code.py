"""The compiled methods of dataclasses kept in the on-disk cache, as ``.pyc`` files keep a module's.

``@dataclass`` writes the source of each generated method (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
the frozen ``__setattr__``/``__delattr__``) and compiles it with ``exec`` every time a class is defined: about
500 small compilations for the ~85 spec and result classes a warm ``aiinfra infer`` defines, a third of its import
time. :func:`install` routes the ``exec`` of :mod:`dataclasses` through tables of code objects keyed by the
source's text: a source compiled by an earlier process is not compiled again. The code object is what
``exec(source)`` compiles (same source, filename ``<string>``, no inherited ``__future__`` flags), so the classes
are the same. The tables are one cache entry per Python build (code objects are version-specific), one table per
defining module; sources compiled afresh are added when the process exits. With the cache off
(``AIINFRA_NO_CACHE=1``) every source is compiled as usual and nothing is written. :func:`loads_fast` makes the
frozen slotted classes the cache holds by the thousand quicker to unpickle.
"""

from __future__ import annotations

import builtins
import marshal
import sys
from dataclasses import fields as _fields
from types import CodeType
from typing import Any, TypeVar

T = TypeVar("T")

_SLOT = "dataclass-code"
_IDENTITY = f"3|{sys.version}|{sys.implementation.cache_tag}"  # 3: one marshalled table per defining module


class _CodeTable:
    """Per defining module (the ``__name__`` of the globals dataclasses passes), source text -> code object. The
    cache entry maps each module to its table marshalled; a module's table is unmarshalled on its first class, so a
    process pays only for the modules it imports. When a source had to be compiled, the tables are written back at
    exit, each module this process defined classes in with exactly the sources it used (a changed class leaves no
    stale entry behind)."""

    def __init__(self) -> None:
        self.stored: dict[str, bytes] | None = None
        self.tables: dict[str, dict[str, CodeType]] = {}
        self.used: dict[str, dict[str, CodeType]] = {}
        self.added = False

    def _load(self) -> dict[str, bytes]:
        from aiinfra import diskcache

        if diskcache.cache_dir() is None:
            self.added = True  # the cache is off: compile as usual, write nothing
            return {}
        stored = diskcache.load(_SLOT, _IDENTITY)
        return stored if isinstance(stored, dict) else {}

    def _table(self, module: str) -> dict[str, CodeType]:
        table = self.tables.get(module)
        if table is None:
            if self.stored is None:
                self.stored = self._load()
            blob = self.stored.get(module)
            try:
                table = marshal.loads(blob) if isinstance(blob, bytes) else {}
            except (EOFError, ValueError, TypeError):  # a corrupt entry: compile again
                table = {}
            table = self.tables[module] = table if isinstance(table, dict) else {}
        return table

    def exec(self, source: str, globals_: dict[str, Any] | None = None, locals_: Any = None) -> None:
        """``exec(source, globals_, locals_)`` with the compiled source taken from, or added to, the table."""
        module = str((globals_ or {}).get("__name__", ""))
        table = self._table(module)
        code = table.get(source)
        if code is None:
            # dont_inherit: compile as dataclasses' own exec(source) does, without this module's __future__ flags
            code = table[source] = compile(source, "<string>", "exec", dont_inherit=True)
            if not self.added:
                self.added = True
                import atexit

                atexit.register(self.save)
        self.used.setdefault(module, {})[source] = code
        builtins.exec(code, globals_, locals_)

    def save(self) -> None:
        """Write the tables back to the cache: this process's modules with the sources they used, others as read."""
        from aiinfra import diskcache

        stored = dict(self.stored or {})
        stored.update({module: marshal.dumps(used) for module, used in self.used.items()})
        diskcache.store(_SLOT, _IDENTITY, stored)


def install() -> None:
    """Route :mod:`dataclasses`' ``exec`` through the code table (once). Call it before the modules whose classes
    it should serve are imported; it imports :mod:`dataclasses` (≈ 35 ms of ``inspect``), so ``--version`` does not."""
    import dataclasses

    if "exec" not in vars(dataclasses):
        dataclasses.exec = _CodeTable().exec  # type: ignore[attr-defined]


def loads_fast(cls: type[T]) -> type[T]:
    """Give a frozen slotted dataclass a ``__setstate__`` over its field names computed once: dataclasses' own
    calls ``fields()`` for every object unpickled (the on-disk cache unpickles thousands of catalog and error-table
    rows per start). The pickled state is unchanged: dataclasses' ``__getstate__`` list of field values."""
    names = tuple(f.name for f in _fields(cls))  # type: ignore[arg-type]
    setter = object.__setattr__

    def __setstate__(self: object, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):
            setter(self, name, value)

    cls.__setstate__ = __setstate__  # type: ignore[attr-defined]
    return cls
