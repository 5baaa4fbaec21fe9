"""The HTTP form of an error: status and JSON detail (the CLI's field/value/problem/fix, never a traceback), and the
404 of a lookup that names nothing. Free of FastAPI: the worker processes (web/lanes.py) report their errors with it."""

from __future__ import annotations

from typing import Any

from aiinfra.errors import AiinfraError, DataError, InfeasibleError, SpecError


def error_detail(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON detail of an exception: the CLI's message, never a traceback."""
    if isinstance(exc, SpecError):
        value = exc.value if isinstance(exc.value, int | float | bool) or exc.value is None else str(exc.value)[:200]
        return 422, {"field": exc.field, "value": value, "problem": exc.problem, "fix": exc.fix, "message": str(exc)}
    if isinstance(exc, InfeasibleError):
        return 422, {"field": None, "message": f"infeasible: {exc}"}
    if isinstance(exc, DataError):
        return 500, {"field": None, "message": f"internal error (shipped data): {exc}"}
    if isinstance(exc, AiinfraError):
        return 422, {"field": None, "message": str(exc)}
    if isinstance(exc, RecursionError):
        return 422, {"field": "body", "message": "body: nested too deeply — send a scenario in the file's format"}
    return 500, {"field": None, "message": f"internal error: {type(exc).__name__}: {exc} (the server keeps running)"}


class NotFound(Exception):
    """A lookup of the API that names nothing (a job id, a catalog id): answered 404 with the field, the value and a
    message."""

    def __init__(self, field: str, value: str, message: str) -> None:
        super().__init__(message)
        self.field, self.value, self.message = field, value, message
