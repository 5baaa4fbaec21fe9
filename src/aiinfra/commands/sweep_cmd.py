"""`aiinfra sweep`: one question over a grid of scenario overrides into a results directory of Parquet parts
(aiinfra.app.sweep), and ``--report``: the Pareto front of those results as a table and a plot."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from aiinfra.app.questions import QUESTION, TABLE
from aiinfra.app.sweep import ParetoResult, SweepResult, pareto, parse_axes, sweep
from aiinfra.commands import COMMAND_HELP, add_option_args, add_scenario_args, options_from_args
from aiinfra.errors import SpecError
from aiinfra.report.render import fmt_num, key_values, table


def _summary_text(r: SweepResult) -> str:
    lines = [
        key_values(
            [
                ("results", r.out),
                ("points", f"{r.points:,} ({r.skipped:,} already done, {r.run:,} run now)"),
                ("failures", f"{r.failures:,} (see the error column)"),
                ("backend", f"{r.backend}, {r.workers} worker(s)"),
                ("wall time", f"{r.wall_s:,.1f} s"),
                ("points/s", fmt_num(r.points_per_s)),
            ],
            title=f"sweep of {r.question}: done",
        )
    ]
    if r.lost:
        lines.append(f"{r.lost:,} points lost to workers that died: run the same command again to answer them")
    return "\n".join(lines)


def _cell(value: Any) -> Any:
    """Numbers as numbers (the table formats them), the rest as text."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else str(value)


def _pareto_text(r: ParetoResult) -> str:
    cols = list(dict.fromkeys([*r.keys, *r.shown]))
    rows = [[*(_cell(row[k]) for k in cols), row[r.x], row[r.y]] for row in r.front]
    lines = [
        f"Pareto front of {r.results}: {len(r.front)} of {r.points:,} points "
        f"({r.failures:,} failed, {r.without_values:,} without {r.x} or {r.y}); "
        f"{r.x} {'max' if r.x_max else 'min'}, {r.y} {'max' if r.y_max else 'min'}",
        "",
        table([*cols, r.x, r.y], rows),
    ]
    lines += [f"plot: {p}" for p in r.plots]
    return "\n".join(lines)


def _sweep(args: argparse.Namespace) -> tuple[Any, str]:
    if args.report:
        rep = pareto(args.report, args.x, args.y, args.plot, args.show.split(",") if args.show else ())
        return rep.to_dict(), _pareto_text(rep)
    if args.scenario is None:
        raise SpecError("scenario", None, "missing", "give a scenario file, or --report RESULTS")
    if not args.out:
        raise SpecError("--out", None, "missing", "give the results directory, e.g. --out results.parquet")
    grid, zipped = parse_axes(args.grid, args.zip)
    options = options_from_args(args, args.question) if args.question in QUESTION else {}  # else: sweep refuses it
    try:
        r = sweep(
            args.scenario,
            grid=grid,
            zip=zipped,
            question=args.question,
            options=options,
            set=args.set,
            out=args.out,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            progress=False if args.no_progress or args.quiet else None,
            flush_s=args.flush_s,
        )
    except KeyboardInterrupt:
        sys.stderr.write(f"interrupted: the points answered so far are in {args.out}; run the same command to resume\n")
        raise SystemExit(130) from None
    return r.to_dict(), _summary_text(r)


def register(sub: Any) -> None:
    """Add ``aiinfra sweep``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("sweep", help=COMMAND_HELP["sweep"])
    add_scenario_args(p)
    p.set_defaults(scenario=None)
    for action in p._actions:
        if action.dest == "scenario":
            action.nargs = "?"
    p.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="a scenario key and its values, crossed with every other --grid (repeatable)",
    )
    p.add_argument(
        "--zip",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="keys walked together (same number of values), crossed with the --grid keys",
    )
    names = [q.name for q in TABLE if q.sweepable]
    p.add_argument("--question", default="infer", help=f"{', '.join(names)} (default infer)")
    p.add_argument(
        "--out",
        help="results directory of Parquet parts (read by pandas/pyarrow as one dataset); "
        "running the same command again resumes it",
    )
    p.add_argument(
        "--backend",
        default="auto",
        choices=["auto", "serial", "process", "ray"],
        help="auto (default): a local process pool unless one point or one CPU; ray: Ray tasks",
    )
    p.add_argument("--workers", type=int, help="processes (default: the CPUs of this machine)")
    p.add_argument("--address", help="Ray cluster address (default: a local Ray instance)")
    add_option_args(p, names, name_questions=True)
    p.add_argument(
        "--flush-s",
        type=float,
        default=2.0,
        help="seconds between part files: at most this much work is lost by a kill (default 2)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr (as --no-progress)")
    p.add_argument("--report", metavar="RESULTS", help="print the Pareto front of a results directory instead")
    p.add_argument(
        "--x",
        help="report: first objective column (default by question; append :max if larger is "
        "better; a unique part of a column name is enough)",
    )
    p.add_argument("--y", help="report: second objective column")
    p.add_argument("--show", metavar="COL,COL", help="report: further columns to show for each front row")
    p.add_argument("--plot", metavar="DIR", help="report: write the plot as pareto-X-Y.png and .svg in DIR")
    p.set_defaults(handler=_sweep)
