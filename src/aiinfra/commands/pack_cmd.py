"""`aiinfra pack PORTFOLIO.yaml [--json]`: the fewest (or cheapest) GPUs, with a MIG layout each, for a portfolio."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP
from aiinfra.report.bands import accuracy_line
from aiinfra.report.render import table


def _pack(args: argparse.Namespace) -> tuple[Any, str]:
    d = app.pack(args.portfolio, args.set).to_dict()
    c = d["compare"]

    def unit(v: float) -> str:
        return f"${v:,.2f}/h" if d["objective"] == "cost" else f"{v:g} GPUs"

    lines = (
        [
            f"{d['gpus']} GPUs ({d['method']}; objective {d['objective']}: {unit(d['objective_value'])}, "
            f"lower bound {unit(d['lower_bound'])}, gap {d['gap_to_lower_bound_frac']:.1%})",
            f"whole GPUs, no sharing: {c['whole_gpus']}; time-slicing or MPS, memory alone: "
            f"{c['time_slicing_or_mps_gpus_memory_bound']} (a lower bound: contention not modelled)",
            "",
            "layouts:",
        ]
        + [f"  {n} × {lay}" for lay, n in d["layouts"].items()]
        + [""]
    )
    rows = [
        [w["name"], w["kind"], w["chosen"]["profile"], w["chosen"]["instances"], w["chosen"]["detail"]]
        for w in d["workloads"]
    ]
    text = "\n".join(lines) + table(["workload", "kind", "instance", "count", "sizing"], rows) + "\n"
    text += "\n" + "\n".join(f"{k}: {v}" for k, v in c["what_each_shares"].items()) + "\n"
    text += accuracy_line(d["accuracy"]) + "\n"
    return d, text


def register(sub: Any) -> None:
    """Add ``aiinfra pack``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("pack", help=COMMAND_HELP["pack"])
    p.add_argument("portfolio", help="portfolio YAML file (see examples/pack-portfolio.yaml)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key, e.g. --set pack.objective=cost (repeatable)",
    )
    p.set_defaults(handler=_pack)
