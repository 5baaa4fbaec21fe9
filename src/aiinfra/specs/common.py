"""Pieces every spec uses: the source of a fact, dtype sizes, and strict validation."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from aiinfra.dataclass_code import loads_fast
from aiinfra.errors import SpecError
from aiinfra.specs.precision import DTYPE_BYTES as DTYPE_BYTES  # re-exported: the formats live in specs.precision

if TYPE_CHECKING:
    import pydantic

#: the pydantic config of every spec (a plain dict: pydantic itself is imported only when input is validated,
#: so a run whose validated input comes from the cache does not load it)
STRICT: pydantic.ConfigDict = {"extra": "forbid"}
KEBAB_ID = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")

DType = Literal["fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"]


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class Source:
    """Where a fact was read."""

    __pydantic_config__ = STRICT

    title: str
    """Document, page or repository file (with commit where possible)."""
    url: str | None = None
    """Address of the source, or None for a printed document."""
    read_on: str
    """ISO date the source was read (or the date of the snapshot read)."""
    fields: tuple[str, ...] = ()
    """Which fields of the row this source supports (empty: all)."""


T = TypeVar("T")

_ADAPTERS: dict[Any, pydantic.TypeAdapter[Any]] = {}


def _adapter(cls: Any) -> pydantic.TypeAdapter[Any]:
    if cls not in _ADAPTERS:
        import pydantic

        _ADAPTERS[cls] = pydantic.TypeAdapter(cls)
    return _ADAPTERS[cls]


_UNIT_HINTS = {
    "_bytes": "bytes",
    "_s": "seconds",
    "_per_s": "per second",
    "_w": "watts",
    "_usd": "US dollars",
    "_frac": "a fraction between 0 and 1",
    "_seqs": "sequences",
    "tokens": "tokens",
}


def _unit_hint(field: str) -> str:
    leaf = field.rsplit(".", 1)[-1]
    for suffix, words in sorted(_UNIT_HINTS.items(), key=lambda kv: -len(kv[0])):
        if leaf.endswith(suffix):
            return words
    return ""


def _valid_keys(cls: Any, path: list[Any]) -> list[str]:
    """Field names of the dataclass reached by following ``path`` from ``cls`` (best effort)."""
    import dataclasses
    import typing

    current: Any = cls
    for part in path:
        if not dataclasses.is_dataclass(current):
            return []
        hints = typing.get_type_hints(current)
        target = hints.get(str(part))
        if target is None:
            return []
        args = [a for a in typing.get_args(target) if dataclasses.is_dataclass(a)]
        current = args[0] if args else target
    if dataclasses.is_dataclass(current):
        return [f.name for f in dataclasses.fields(current)]
    return []


class FieldProblem(ValueError):
    """Raised by a spec's ``__post_init__`` for a rule across fields; :func:`validate` turns it into a
    :class:`SpecError` naming ``field`` (relative to the spec) and ``value``."""

    def __init__(self, field: str, value: Any, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.field, self.value, self.problem, self.fix = field, value, problem, fix


def _fix_for(err: dict[str, Any], field: str, cls: Any) -> tuple[str, str]:
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    if kind in ("out_of_range", "not_finite"):
        allowed = ctx.get("range")
        if kind == "out_of_range":
            return f"must be {allowed}", "give a value in that range"
        return f"must be a finite number {allowed}" if allowed else "must be a finite number", "give a finite number"
    if kind == "bool_not_number":
        allowed = ctx.get("range")
        return "expected a number, not true/false", f"write a number {allowed}" if allowed else "write a number"
    if kind == "int_from_float":
        return "must be a whole number", "write an integer"
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        valid = _valid_keys(cls, list(err.get("loc", ()))[:-1])
        hint = f"; valid keys here: {', '.join(valid)}" if valid else ""
        return "unknown key", f"remove it or check the spelling{hint}"
    if kind == "missing":
        return "required key is missing", f"add `{field.rsplit('.', 1)[-1]}:` to the scenario"
    if kind == "literal_error":
        return "not an allowed value", f"use one of {ctx.get('expected', '')}"
    if kind in ("greater_than", "greater_than_equal"):
        bound = ctx.get("gt", ctx.get("ge"))
        return f"must be {'>' if kind == 'greater_than' else '>='} {bound}", "use a positive value"
    if kind in ("less_than", "less_than_equal"):
        bound = ctx.get("lt", ctx.get("le"))
        return f"must be {'<' if kind == 'less_than' else '<='} {bound}", "use a smaller value"
    if kind in ("float_parsing", "int_parsing", "float_type", "int_type", "int_from_float"):
        unit = _unit_hint(field)
        hint = f" in {unit}" if unit else ""
        return (
            "expected a plain number" + hint,
            "write a number such as 1024 or 15e12, without a unit suffix"
            + (f" (the key's unit is {unit})" if unit else ""),
        )
    if kind == "bool_parsing":
        return "expected true or false", "write true or false"
    return str(err.get("msg", "invalid value")), "see examples/ for a valid scenario"


def validate(cls: type[T], data: Any, where: str = "") -> T:
    """Validate ``data`` into ``cls``; the first problem becomes a :class:`SpecError`.

    ``where`` is the dotted path of ``data`` inside the scenario (for messages).
    """
    import pydantic

    try:
        return _adapter(cls).validate_python(data)  # type: ignore[no-any-return]
    except pydantic.ValidationError as exc:
        errors = exc.errors()
        # a misspelt key also makes the right key "missing": report the misspelling first
        errors.sort(key=lambda e: e.get("type") not in ("extra_forbidden", "unexpected_keyword_argument"))
        err = errors[0]
        problem_exc = (err.get("ctx") or {}).get("error")
        if isinstance(problem_exc, FieldProblem):
            loc = ".".join(str(p) for p in err.get("loc", ()) if not str(p).startswith("function-"))
            name = ".".join(p for p in [where, loc, problem_exc.field] if p)
            raise SpecError(name or "input", problem_exc.value, problem_exc.problem, problem_exc.fix) from None
        loc = ".".join(str(p) for p in err.get("loc", ()) if not str(p).startswith("function-"))
        # pydantic adds the dataclass name for unions; keep only field-like parts
        field = ".".join(p for p in [where, loc] if p)
        problem, fix = _fix_for(dict(err), field, cls)
        value = "(absent)" if err.get("type") == "missing" else err.get("input")
        raise SpecError(field or "input", value, problem, fix) from None
