"""Thin shell: parse -> api -> report. Exit codes: 0 ok, 2 bad input, 1 internal error."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from typing import Any

from aiinfra.commands import COMMAND_MODULES
from aiinfra.errors import AiinfraError, DataError, InfeasibleError, SpecError
from aiinfra.report.render import json_text


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own errors: exit 2, no traceback
        self.print_usage(sys.stderr)
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(2)


#: commands registered by a module not named after them (``aiinfra.commands.<command>_cmd``)
COMMAND_ALIASES = {"memory": "train"}


def _modules_for(argv: list[str] | None) -> list[str]:
    """The command modules to import: only the one that registers the command being run (start-up time), every
    module when the command is not known yet (help, a typo: argparse then lists them all)."""
    args = sys.argv[1:] if argv is None else argv
    name = next((a for a in args if not a.startswith("-")), None)
    if name is None:
        return COMMAND_MODULES
    module = f"aiinfra.commands.{COMMAND_ALIASES.get(name, name)}_cmd"
    return [module] if module in COMMAND_MODULES else COMMAND_MODULES


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    from aiinfra import __version__

    parser = _Parser(prog="aiinfra", description=__doc__)
    parser.add_argument("--version", action="version", version=f"aiinfra {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in _modules_for(argv):
        importlib.import_module(name).register(sub)
    return parser


def _catalog_for(args: argparse.Namespace) -> contextlib.AbstractContextManager[object]:
    """The catalog a command reads: the shipped one, or it with the rows of ``--catalog-overlay DIR``."""
    overlay = getattr(args, "catalog_overlay", None)
    if not overlay:
        return contextlib.nullcontext()
    from aiinfra.catalog import active, use

    return use(active().with_overlay(overlay))  # on top of the shipped rows and the refreshed prices


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        with _catalog_for(args):
            obj, text = args.handler(args)
            out = json_text(obj) if getattr(args, "json", False) else text.rstrip("\n")
    except SpecError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except InfeasibleError as exc:
        sys.stderr.write(f"infeasible: {exc}\n")
        return 2
    except DataError as exc:
        sys.stderr.write(f"internal error (shipped data): {exc}\n")
        return 1
    except AiinfraError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except OSError as exc:  # an output path (--plot, --markdown) that cannot be written
        where = exc.filename or "output"
        sys.stderr.write(f"error: {where} cannot be written: {exc.strerror} — give a writable path\n")
        return 2
    except Exception as exc:
        if os.environ.get("AIINFRA_DEBUG"):
            raise
        sys.stderr.write(f"internal error: {type(exc).__name__}: {exc} (set AIINFRA_DEBUG=1 for a traceback)\n")
        return 1
    sys.stdout.write(out + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
