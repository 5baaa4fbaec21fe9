"""Exception tree. Every user-facing error names the field, the value and the fix."""

from __future__ import annotations

from typing import Any


class AiinfraError(Exception):
    """Base of every error aiinfra raises on purpose."""


class SpecError(AiinfraError):
    """Bad input: a field has a wrong value. CLI exit code 2, HTTP 422."""

    def __init__(self, field: str, value: Any, problem: str, fix: str = "") -> None:
        self.field = field
        self.value = value
        self.problem = problem
        self.fix = fix
        shown = f"'{value}'" if isinstance(value, str) and value.isprintable() else repr(value)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        msg = f"{field} = {shown}: {problem}"
        if fix:
            msg += f" — {fix}"
        super().__init__(" ".join(msg.splitlines()))  # one line, whatever the value or a parser's message holds


class UnknownIdError(SpecError):
    """An id that is not in the catalog."""

    def __init__(self, field: str, value: str, kind: str, suggestions: list[str]) -> None:
        fix = (
            f"did you mean {' or '.join(suggestions)}?"
            if suggestions
            else f"run `aiinfra catalog list {kind}` to see the known ids"
        )
        super().__init__(field, value, f"unknown {kind[:-1] if kind.endswith('s') else kind} '{value}'", fix)


class InfeasibleError(AiinfraError):
    """The input is valid but no configuration satisfies it; the message says why."""


class DataError(AiinfraError):
    """A catalog or validation data file is malformed (a bug in shipped data)."""


def suggest(value: str, known: list[str], n: int = 3) -> list[str]:
    """Close ids for a "did you mean" hint: substring matches first, then fuzzy ones."""
    low = value.lower()
    contains = [k for k in known if low and low in k]
    # the longest leading part of the value some ids start with (nvidia-h1000 -> nvidia-h100-*), a typo at the end
    prefixed: list[str] = []
    for i in range(len(low) - 1, 3, -1):
        prefixed = sorted(k for k in known if k.startswith(low[:i]))
        if prefixed:
            break
    import difflib  # only an error pays its import

    fuzzy = difflib.get_close_matches(low, known, n=n, cutoff=0.5)
    seen: list[str] = []
    for k in contains + prefixed + fuzzy:
        if k not in seen:
            seen.append(k)
    return seen[:n]
