"""The FastAPI app: the page (static/), the JSON API (/api/v1) and its OpenAPI schema, over aiinfra.app.

Every scenario answer is ``aiinfra <question> --json``'s object (web/questions.py). Bad input is HTTP 422 with
the CLI's field/value/fix; a crash in one request is a 500 naming the exception, never a traceback, and the server
keeps serving. The request guard (web/guard.py) checks the Host, the origin and the content type and reads the
bounded body before the app does; the work runs in bounded lanes (web/lanes.py: threads for cheap questions,
killable worker processes for heavy ones, 429 when full). Every response carries a Content-Security-Policy (scripts
only from this server: the charting library is served from the installed plotly package, so the page works
offline) and ``nosniff``.

:func:`create_app` composes the app: its state (web/state.py: settings, lanes, job store on ``app.state``), its
handlers (web/handlers.py: security headers, errors), and the routers by area, in this order: questions
(routes_questions.py), jobs (routes_jobs.py), scenarios (routes_scenarios.py), catalog and validation
(routes_catalog.py), the page and its assets (routes_static.py).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from aiinfra import __version__
from aiinfra.web import routes_catalog, routes_jobs, routes_questions, routes_scenarios, routes_static
from aiinfra.web.guard import GuardSettings, guard
from aiinfra.web.handlers import SECURITY_HEADERS, add_handlers
from aiinfra.web.http_errors import error_detail
from aiinfra.web.routes_scenarios import DEFAULT_EXAMPLES
from aiinfra.web.state import Settings, install_state, lifespan

__all__ = ["DEFAULT_EXAMPLES", "Settings", "create_app", "error_detail"]

#: the routers in the order their routes match (``/api/v1/catalog/prices`` before ``/api/v1/catalog/{kind}``)
ROUTERS = (
    routes_questions.router,
    routes_jobs.router,
    routes_scenarios.router,
    routes_catalog.router,
    routes_static.router,
)


def create_app(settings: Settings | None = None) -> Any:
    """The ASGI app: FastAPI with this app's state, handlers and routes, wrapped in the request guard."""
    s = settings or Settings()
    api = FastAPI(
        title="aiinfra",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        openapi_url="/api/openapi.json",
        description="Every answer of the aiinfra CLI over HTTP: POST a scenario (the YAML file's format, "
        "as JSON) to /api/v1/<question>; the response is `aiinfra <question> --json`. "
        "Bad input: 422 with field, value, problem and fix.",
    )
    install_state(api, s)
    add_handlers(api)
    for router in ROUTERS:
        api.include_router(router)
    routes_static.mount_static(api)
    guard_settings = GuardSettings(
        allowed_hosts=s.allowed_hosts,
        max_body_bytes=s.max_body_bytes,
        body_timeout_s=s.body_timeout_s,
        headers=SECURITY_HEADERS,
    )
    return guard(api, guard_settings)
