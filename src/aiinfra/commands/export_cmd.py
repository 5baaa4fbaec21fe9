"""`aiinfra export`: the launch command or Kubernetes manifest of the planned deployment (aiinfra.app.export)."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_scenario_args


def _export(args: argparse.Namespace) -> tuple[Any, str]:
    from aiinfra.app.export import export

    accs = args.accelerators.split(",") if args.accelerators else None
    r = export(
        app.load_scenario(args.scenario, args.set), args.format, args.engine, args.engine_version, args.model_path, accs
    )
    s = r.served
    head = (
        f"# {r.engine} {r.engine_version or '(documented version)'}: {s.replicas} replica(s) of "
        f"{s.tp * s.pp} accelerator(s), from {r.source}"
    )
    lines = [head]
    if r.launch.extra_options is not None and r.manifest is None:
        import yaml

        lines += [
            f"# {r.launch.extra_options_path}:",
            *("#   " + ln for ln in yaml.safe_dump(r.launch.extra_options, sort_keys=False).splitlines()),
        ]
    lines += [f"# note: {n}" for n in r.launch.notes]
    lines.append(r.manifest if r.manifest is not None else r.launch.shell)
    return r.to_dict(), "\n".join(lines)


def register(sub: Any) -> None:
    """Add ``aiinfra export``, its arguments and its handler to the CLI's subparsers ``sub``."""
    from aiinfra.app.export import FORMATS

    p = sub.add_parser("export", help=COMMAND_HELP["export"])
    add_scenario_args(p)
    p.add_argument("--format", required=True, choices=FORMATS, help="what to write")
    p.add_argument("--engine", help="engine of the Kubernetes manifest (default: the scenario's inference.engine)")
    p.add_argument("--engine-version", help="engine release to export for (flags newer than it are refused)")
    p.add_argument(
        "--model-path", help="Hugging Face repository or local folder (default: the catalog model's repository)"
    )
    p.add_argument(
        "--accelerators", help="comma-separated catalog ids capacity may choose from (default: the scenario's)"
    )
    p.set_defaults(handler=_export)
