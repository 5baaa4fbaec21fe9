"""The page and its assets: the single page (static/index.html), the API's documentation page, the charting library
served from the installed plotly package (the page works offline), and static/ itself."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent / "static"

router = APIRouter()


@router.get("/", include_in_schema=False)
async def index() -> FileResponse:
    """The page."""
    return FileResponse(STATIC_DIR / "index.html")


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> Response:
    """No icon (204), so browsers stop asking."""
    return Response(status_code=204)


@router.get("/api/docs", include_in_schema=False)
async def docs() -> FileResponse:
    """The HTTP API's documentation page (it reads /api/openapi.json)."""
    return FileResponse(STATIC_DIR / "docs.html")


@router.get("/vendor/plotly.min.js", include_in_schema=False)
async def plotly_js() -> FileResponse:
    """The charting library, from the installed plotly package."""
    import plotly

    return FileResponse(
        Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
        media_type="text/javascript",
        headers={"cache-control": "max-age=86400"},
    )


def mount_static(api: FastAPI) -> None:
    """Serve static/ (the page's script and style) under /static."""
    api.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
