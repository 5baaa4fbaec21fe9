"""The compiled methods of dataclasses kept in the on-disk cache, as ``.pyc`` files keep a module's.

``@dataclass`` writes the source of each generated method (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
the frozen ``__setattr__``/``__delattr__``) and compiles it with ``exec`` every time a class is defined: about
500 small compilations for the ~85 spec and result classes a warm ``aiinfra infer`` defines, a third of its import
time. :func:`install` routes the ``exec`` of :mod:`dataclasses` through a table of code objects keyed by the
source text: a source compiled by an earlier process is not compiled again. The code object is what
``exec(source)`` compiles (same source, filename ``<string>``, no inherited ``__future__`` flags), so the classes
are the same. The table is one cache entry per Python build (code objects are version-specific); sources compiled
afresh are added to it when the process exits. With the cache off (``AIINFRA_NO_CACHE=1``) every source is compiled as
usual and nothing is written. :func:`loads_fast` makes the frozen slotted classes the cache holds by the thousand
quicker to unpickle.
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
_IDENTITY = f"2|{sys.version}|{sys.implementation.cache_tag}"  # 2: keyed by the source text


class _CodeTable:
    """Source text -> code object, loaded from the cache on first use; new entries written at exit."""

    def __init__(self) -> None:
        self.codes: dict[str, CodeType] | None = None
        self.added = False

    def _load(self) -> dict[str, CodeType]:
        from aiinfra import diskcache

        if diskcache.cache_dir() is None:
            self.added = True  # the cache is off: compile as usual, write nothing
            return {}
        blob = diskcache.load(_SLOT, _IDENTITY)
        try:
            codes = marshal.loads(blob) if isinstance(blob, bytes) else {}
        except (EOFError, ValueError, TypeError):  # a corrupt entry: compile again
            codes = {}
        return codes if isinstance(codes, dict) else {}

    def exec(self, source: str, globals_: dict[str, Any] | None = None, locals_: Any = None) -> None:
        """``exec(source, globals_, locals_)`` with the compiled source taken from, or added to, the table."""
        if self.codes is None:
            self.codes = self._load()
        code = self.codes.get(source)
        if code is None:
            # dont_inherit: compile as dataclasses' own exec(source) does, without this module's __future__ flags
            code = self.codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
            if not self.added:
                self.added = True
                import atexit

                atexit.register(self.save)
        builtins.exec(code, globals_, locals_)

    def save(self) -> None:
        """Write the table (with what this process compiled) back to the cache."""
        from aiinfra import diskcache

        if self.codes is not None:
            diskcache.store(_SLOT, _IDENTITY, marshal.dumps(self.codes))


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
