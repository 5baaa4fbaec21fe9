"""`aiinfra check SCENARIO.yaml`: validate a scenario and show what it resolves to."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_scenario_args
from aiinfra.report.render import key_values


def _check(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.check(app.load_scenario(args.scenario, args.set))
    sc = r.scenario
    c = sc.cluster
    obj = r.to_dict()
    text = key_values(
        [
            ("model", f"{sc.model.id} ({sc.model.num_layers} layers, hidden {sc.model.hidden_size})"),
            ("accelerator", c.accelerator.id),
            ("count", c.count),
            ("per_node", c.per_node),
            ("nodes", c.nodes),
            ("system", c.system_id or "unknown"),
            ("training", "yes" if sc.training else "no"),
            ("inference", "yes" if sc.inference else "no"),
        ],
        f"scenario {args.scenario}: valid",
    )
    return obj, text


def register(sub: Any) -> None:
    """Add ``aiinfra check``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("check", help=COMMAND_HELP["check"])
    add_scenario_args(p)
    p.set_defaults(handler=_check)
