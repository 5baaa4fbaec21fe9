"""The request guard: what a request must be before the app reads it (an ASGI middleware around the FastAPI app).

- **Host allow-list** (403): the server answers only to the names it serves under (the bound address, ``localhost``,
  ``127.0.0.1``, ``[::1]`` and the ``--allow-host`` names), so a DNS-rebinding page whose name resolves to this
  machine is refused.
- **Same origin** for state-changing requests (POST, PUT, PATCH, DELETE; 403): an ``Origin`` header must name this
  server, and ``Sec-Fetch-Site`` (sent by every current browser) must be ``same-origin`` or ``none``.
- **Content type** of a POST, PUT or PATCH (415): ``application/json`` or a YAML type (the YAML panel's upload);
  the types a cross-site HTML form can send (``text/plain``, form encodings) are refused.
- **The body** is read here, whole, before the app sees it: at most ``max_body_bytes`` (413, declared or chunked),
  and within ``body_timeout_s`` (408: a slow or short body does not hold the connection).

JSON helpers: :func:`parse_json` refuses what JSON does not allow but Python's parser takes (``NaN``,
``Infinity``) and strings no UTF-8 text can hold (lone surrogates), as 422s naming the field.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiinfra.errors import SpecError

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: names every local server answers to (the address of this machine, by name and number)
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
#: the bodies the API reads: a scenario as JSON, a YAML file's text (/api/v1/parse-yaml)
BODY_TYPES = frozenset({"application/json", "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"})
SAME_SITE_FETCH = frozenset({"same-origin", "none"})


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """What the request guard enforces: the hosts served, the body size and time limits, and the headers of a
    refusal."""

    allowed_hosts: tuple[str, ...]
    """Host names (without port) the server answers to; IPv6 addresses in brackets."""
    max_body_bytes: int
    """Largest request body accepted (a larger one is a 413)."""
    body_timeout_s: float
    """Longest a client may take to send its body (a slow or short body is a 408, not a held connection)."""
    headers: dict[str, str]
    """Headers every refusal carries (the app's security headers)."""


def host_name(host: str) -> str:
    """The name of a Host header or an allow-list entry, lower-case, without its port; IPv6 in brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    if host.count(":") > 1:  # a bare IPv6 address (an allow-list entry such as ::1)
        return f"[{host}]"
    return host.split(":", 1)[0]


def allowed_hosts(bound: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The allow-list of a server bound to ``bound``: the local names, the bound address (unless it is a wildcard,
    which names no host) and ``extra``."""
    names = list(LOCAL_HOSTS)
    if bound not in ("0.0.0.0", "::", ""):
        names.append(host_name(bound))
    names += [host_name(h) for h in extra]
    return tuple(dict.fromkeys(names))


class Refused(Exception):
    """A request the guard refuses before the app sees it: the HTTP status, the field at fault and why."""

    def __init__(self, status: int, field: str, message: str) -> None:
        super().__init__(message)
        self.status, self.field, self.message = status, field, message


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def check_request(scope: Scope, hosts: frozenset[str]) -> None:
    """Host, origin and content type of a request (raises :class:`Refused`)."""
    host = _header(scope, b"host") or ""
    if host_name(host) not in hosts:
        raise Refused(
            403,
            "host",
            f"host = {host[:100]!r}: this server does not answer to that name — open it as "
            f"http://{sorted(hosts)[0]}:<port>/ or start it with --allow-host {host_name(host)[:100]}",
        )
    method = scope.get("method", "GET")
    if method not in STATE_CHANGING:
        return
    origin = _header(scope, b"origin")
    if origin is not None:
        parts = urlsplit(origin)
        if origin == "null" or parts.scheme not in ("http", "https") or parts.netloc.lower() != host.lower():
            raise Refused(
                403,
                "origin",
                f"origin = {origin[:100]!r}: requests that change state must come from "
                "this server's own pages — use the page, or send no Origin header (curl, scripts)",
            )
    site = _header(scope, b"sec-fetch-site")
    if site is not None and site.lower() not in SAME_SITE_FETCH:
        raise Refused(
            403,
            "sec-fetch-site",
            f"sec-fetch-site = {site[:40]!r}: a request from another site — use this server's own pages",
        )
    if method in WITH_BODY:
        ctype = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
        if ctype not in BODY_TYPES:
            raise Refused(
                415,
                "content-type",
                f"content-type = {ctype[:60]!r}: send the body as application/json "
                "(a YAML file's text as application/yaml)",
            )


class _BodyTooLarge(Exception):
    pass


async def read_body(receive: Receive, max_bytes: int) -> tuple[bytes, bool]:
    """The whole body (raises :class:`_BodyTooLarge` past ``max_bytes``) and whether the client disconnected."""
    chunks: list[bytes] = []
    seen = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks), True
        chunk = message.get("body", b"")
        seen += len(chunk)
        if seen > max_bytes:
            raise _BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), False


def guard(inner: Any, settings: GuardSettings) -> Any:
    """The ASGI middleware: refusals as JSON ``{"detail": {field, message}}`` with the app's headers; the body,
    read and bounded here, is replayed to the app, and later ``receive`` calls (a disconnect) pass through."""
    from fastapi.responses import JSONResponse

    hosts = frozenset(host_name(h) for h in settings.allowed_hosts)

    async def refuse(scope: Scope, receive: Receive, send: Send, status: int, field: str, message: str) -> None:
        response = JSONResponse(
            {"detail": {"field": field, "message": message}},
            status_code=status,
            headers={**settings.headers, "connection": "close"},
        )
        await response(scope, receive, send)

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        try:
            check_request(scope, hosts)
        except Refused as r:
            await refuse(scope, receive, send, r.status, r.field, r.message)
            return
        declared = _header(scope, b"content-length")
        too_large = f"body above {settings.max_body_bytes:,} bytes — send a scenario, not a data file"
        if declared is not None and declared.strip().isdigit() and int(declared) > settings.max_body_bytes:
            await refuse(scope, receive, send, 413, "body", too_large)
            return
        try:
            body, gone = await asyncio.wait_for(read_body(receive, settings.max_body_bytes), settings.body_timeout_s)
        except _BodyTooLarge:
            await refuse(scope, receive, send, 413, "body", too_large)
            return
        except TimeoutError:
            await refuse(
                scope,
                receive,
                send,
                408,
                "body",
                f"the body did not arrive within "
                f"{settings.body_timeout_s:g} s (a Content-Length larger than the body, or a stalled client)",
            )
            return
        if gone:
            return
        replayed = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await inner(scope, replay, send)

    return middleware


# ---------- JSON bodies


def _reject_constant(name: str) -> Any:
    raise SpecError("body", name, "is not a JSON number (JSON has no NaN or Infinity)", "send a finite number")


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_json_value(value: Any, where: str = "body") -> None:
    """Refuse non-finite numbers and strings with lone surrogates anywhere in a parsed body (a YAML file can hold
    ``.nan`` and ``"\\ud800"`` too), naming the path; iterative, so a deep body cannot overflow the stack."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        v, path = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            raise SpecError(path, str(v), "is not a finite number", "send a finite number")
        if isinstance(v, str) and _has_lone_surrogate(v):
            raise SpecError(
                path,
                v.encode("utf-8", "replace").decode()[:60],
                "holds a lone UTF-16 surrogate (not text)",
                "send valid Unicode text",
            )
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str) and _has_lone_surrogate(k):
                    raise SpecError(path, "(a key)", "a key holds a lone UTF-16 surrogate", "send valid Unicode text")
                stack.append((x, f"{path}.{k}" if path != "body" else str(k)))
        elif isinstance(v, list):
            stack.extend((x, f"{path}[{i}]") for i, x in enumerate(v))


def parse_json(raw: bytes) -> Any:
    """A request body as JSON, or a 422 (SpecError) naming what is wrong."""
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise SpecError("body", "…", "nested too deeply", "send a scenario in the file's format") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise SpecError(
            "body", raw[:60].decode("utf-8", "replace"), f"is not JSON ({exc})", "send the scenario as a JSON object"
        ) from exc
    check_json_value(value)
    return value
