"""`aiinfra web [--host 127.0.0.1] [--port 8000] [--allow-host NAME ...] [--open]`: the local web app and HTTP API
(aiinfra.web)."""

from __future__ import annotations

import argparse
import ipaddress
import sys
import threading
import webbrowser
from typing import Any

from aiinfra.commands import COMMAND_HELP
from aiinfra.errors import SpecError

LOOPBACK_NAMES = {"localhost", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _web(args: argparse.Namespace) -> tuple[Any, str]:
    if not 1 <= args.port <= 65535:
        raise SpecError("--port", args.port, "must be 1 … 65535", "give a free TCP port, e.g. 8000")
    try:
        import uvicorn

        from aiinfra.web.guard import allowed_hosts
        from aiinfra.web.server import Settings, create_app
    except ImportError as exc:
        raise SpecError(
            "aiinfra web",
            exc.name or "fastapi",
            "needs FastAPI, uvicorn and plotly (aiinfra's dependencies)",
            "reinstall: pip install -e .",
        ) from exc
    wildcard = args.host in ("0.0.0.0", "::", "")
    if wildcard and not args.allow_host:
        raise SpecError(
            "--host",
            args.host,
            "listens on every address, so no one host name is the server's",
            "name the names clients use: --allow-host <name or address> (repeatable)",
        )
    if not is_loopback(args.host):
        sys.stderr.write(
            f"warning: serving on {args.host}: the app has no authentication — anyone who can reach "
            "this address can use it (and its CPU)\n"
        )
    url = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else args.host}:{args.port}/"
    sys.stderr.write(f"aiinfra web: {url}  (API: {url}api/docs; Ctrl-C stops)\n")
    if args.open:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    settings = Settings(allowed_hosts=allowed_hosts(args.host, args.allow_host))
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="warning")
    return {"url": url, "stopped": True}, "stopped"


def register(sub: Any) -> None:
    """Add ``aiinfra web``, its arguments and its handler to the CLI's subparsers ``sub``."""
    w = sub.add_parser("web", help=COMMAND_HELP["web"])
    w.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    w.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    w.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name (or address) clients may use besides the bound address, localhost, 127.0.0.1 "
        "and [::1]; repeatable; required with --host 0.0.0.0",
    )
    w.add_argument("--open", action="store_true", help="open the page in the default browser")
    w.add_argument(
        "--catalog-overlay",
        metavar="DIR",
        help="answer every request against the catalog with DIR's "
        "rows (e.g. the calibration.yaml of aiinfra calibrate)",
    )
    w.set_defaults(handler=_web)
