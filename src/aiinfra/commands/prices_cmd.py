"""`aiinfra prices refresh`: current cloud offers written as the price overlay every command reads."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP
from aiinfra.report.render import table


def _refresh(args: argparse.Namespace) -> tuple[Any, str]:
    providers = args.providers.split(",") if args.providers else None
    r = app.prices_refresh(providers, args.out, args.offers)
    rep = r.report
    by_acc: dict[str, int] = {}
    for row in rep.rows:
        by_acc[row.accelerator] = by_acc.get(row.accelerator, 0) + 1
    lines = [
        f"{len(rep.rows)} price rows from {rep.offers_read} offers of {', '.join(rep.providers)} "
        f"({rep.source}), read {rep.read_on}, written to {rep.out_dir}",
        "used by every command from now on (newer row of the same offer wins over the shipped one)"
        if r.default_overlay
        else f"use them with --catalog-overlay {rep.out_dir}",
        "",
    ]
    lines.append(table(["accelerator", "rows"], sorted([a, n] for a, n in by_acc.items())))
    for provider, why in rep.failed.items():
        lines.append(f"FAILED {provider}: {why} (its rows were not refreshed)")
    if rep.unmapped:
        lines += [
            "",
            f"{sum(u.count for u in rep.unmapped)} offers left out (accelerator not mapped; listed in "
            f"{rep.out_dir / 'REFRESH.md'}):",
        ]
        lines.append(
            table(
                ["provider", "instance", "gpu", "offers", "why"],
                [[u.provider, u.instance, u.gpu, u.count, u.reason] for u in rep.unmapped],
            )
        )
    lines += ["", "`aiinfra catalog list prices --diff` shows what changed against the shipped prices"]
    return r.to_dict(), "\n".join(lines)


def register(sub: Any) -> None:
    """Add ``aiinfra prices`` and its subcommands, with their arguments and handlers, to the CLI's subparsers
    ``sub``."""
    p = sub.add_parser("prices", help=COMMAND_HELP["prices"])
    psub = p.add_subparsers(dest="prices_command", required=True, parser_class=type(p))
    r = psub.add_parser("refresh", help="read current offers through gpuhunt and write them as a price overlay")
    r.add_argument(
        "--providers", help="comma-separated gpuhunt provider names (default: " + ",".join(_default_providers()) + ")"
    )
    r.add_argument(
        "--out",
        metavar="DIR",
        help="overlay folder to write (default: the refreshed-prices folder in "
        "the user's cache, which every command reads; $AIINFRA_PRICES_DIR moves it)",
    )
    r.add_argument(
        "--offers",
        metavar="DIR",
        help="read recorded offers (<provider>.csv in gpuhunt's catalog format) instead of the network",
    )
    r.add_argument("--json", action="store_true")
    r.set_defaults(handler=_refresh)


def _default_providers() -> tuple[str, ...]:
    from aiinfra.app.prices import REFRESH_PROVIDERS

    return REFRESH_PROVIDERS
