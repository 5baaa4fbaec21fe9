"""Thin shell: parse -> api -> report. Exit codes: 0 ok, 2 bad input, 1 internal error."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from typing import Any

from aiinfra.commands import COMMAND_ALIASES, COMMAND_HELP, COMMAND_MODULES, command_module
from aiinfra.errors import AiinfraError, DataError, InfeasibleError, SpecError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        """argparse's own errors (an unknown flag, a missing argument): the usage and ``error: message`` on stderr,
        exit 2, no traceback."""
        self.print_usage(sys.stderr)
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(2)


def _command_named(argv: list[str] | None) -> str | None:
    """The command being run when its module exists (the first word that is not an option), else None."""
    args = sys.argv[1:] if argv is None else argv
    name = next((a for a in args if not a.startswith("-")), None)
    return name if name is not None and command_module(name) in COMMAND_MODULES else None


def _module_commands(module: str) -> list[str]:
    """The commands ``module`` registers (its own name and any alias to it)."""
    own = module.rsplit(".", 1)[-1].removesuffix("_cmd")
    return [own, *(alias for alias, target in COMMAND_ALIASES.items() if target == own)]


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: only the module of the command being run is imported (start-up time). Without a
    known command (``--help``, ``--version``, a typo) the commands are listed from :data:`COMMAND_HELP`, so nothing
    below the shell is imported; a module missing from that table is imported to register itself."""
    from aiinfra import __version__

    parser = _Parser(prog="aiinfra", description=__doc__)
    parser.add_argument("--version", action="version", version=f"aiinfra {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    name = _command_named(argv)
    if name is not None:
        from aiinfra.dataclass_code import install

        install()  # before the command's spec and result classes are defined
        importlib.import_module(command_module(name)).register(sub)
        return parser
    for module in COMMAND_MODULES:
        commands = _module_commands(module)
        if all(c in COMMAND_HELP for c in commands):
            for command in commands:
                sub.add_parser(command, help=COMMAND_HELP[command], add_help=False)
        else:
            importlib.import_module(module).register(sub)
    return parser


def _catalog_for(args: argparse.Namespace) -> contextlib.AbstractContextManager[object]:
    """The catalog a command reads: the shipped one, or it with the rows of ``--catalog-overlay DIR``."""
    overlay = getattr(args, "catalog_overlay", None)
    if not overlay:
        return contextlib.nullcontext()
    from aiinfra.catalog import active, use

    return use(active().with_overlay(overlay))  # on top of the shipped rows and the refreshed prices


def main(argv: list[str] | None = None) -> int:
    """Run one CLI command: parse ``argv`` (default sys.argv), answer under the chosen catalog, print the text or
    ``--json`` answer; returns the exit code (0 ok, 2 bad input or infeasible, 1 internal error or bad shipped data)."""
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    from aiinfra.report.render import json_text

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
