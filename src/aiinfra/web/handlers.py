"""What every response carries and how errors are answered: the security headers (a Content-Security-Policy that
allows scripts only from this server, ``nosniff``, no framing) added by a middleware that also turns a crash into a
500 naming the exception, and the exception handlers (422 with field/value/fix, 404, 429 when a lane is full, 499
when the client went away). :func:`add_handlers` registers them on the app."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from aiinfra.errors import AiinfraError
from aiinfra.web.http_errors import NotFound, error_detail
from aiinfra.web.lanes import LaneFull, Stopped, WorkError

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
}


def error_response(exc: BaseException) -> JSONResponse:
    """The JSON response of an exception (:func:`~aiinfra.web.http_errors.error_detail`)."""
    status, detail = error_detail(exc)
    return JSONResponse({"detail": detail}, status_code=status)


async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """The HTTP middleware: the security headers on every response; a crash is a 500 with its name, and the server
    goes on."""
    try:
        response = await call_next(request)
    except Exception as exc:  # a crash is a 500 with its name, and the server goes on
        response = error_response(exc)
    response.headers.update(SECURITY_HEADERS)
    return response


async def aiinfra_error(request: Request, exc: AiinfraError) -> JSONResponse:
    """Bad input (422 with the CLI's field/value/fix), an infeasible question (422), broken shipped data (500)."""
    return error_response(exc)


async def work_error(request: Request, exc: WorkError) -> JSONResponse:
    """An error a worker process reported: its status and detail as it sent them."""
    return JSONResponse({"detail": exc.detail}, status_code=exc.status)


async def lane_full(request: Request, exc: LaneFull) -> JSONResponse:
    """A full lane: 429, retry in 5 s."""
    return JSONResponse({"detail": {"field": None, "message": str(exc)}}, status_code=429, headers={"retry-after": "5"})


async def stopped(request: Request, exc: Stopped) -> JSONResponse:
    """The client went away while its answer was computed: nobody reads this 499."""
    return JSONResponse({"detail": {"field": None, "message": "stopped: the client went away"}}, 499)


async def not_found(request: Request, exc: NotFound) -> JSONResponse:
    """A lookup that names nothing: 404 with the field, the value and a message."""
    return JSONResponse({"detail": {"field": exc.field, "value": exc.value, "message": exc.message}}, 404)


async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A query or path parameter FastAPI refused: 422 naming the first bad field and its value."""
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("query", "body", "path"))
    value = first.get("input")
    return JSONResponse(
        {
            "detail": {
                "field": where or "request",
                "value": value if isinstance(value, str | int | float | bool) else None,
                "message": f"{where}: {first.get('msg', 'invalid')}",
            }
        },
        status_code=422,
    )


def add_handlers(api: FastAPI) -> None:
    """Register the security-headers middleware and the exception handlers on ``api``."""
    api.middleware("http")(headers)
    api.exception_handler(AiinfraError)(aiinfra_error)
    api.exception_handler(WorkError)(work_error)
    api.exception_handler(LaneFull)(lane_full)
    api.exception_handler(Stopped)(stopped)
    api.exception_handler(NotFound)(not_found)
    api.exception_handler(RequestValidationError)(bad_request)
