"""`aiinfra schedule SCHEDULE.yaml [--json] [--plot DIR] [--set schedule.policy=...]`: simulate a job trace on a
cluster under a scheduling policy. Plots (PNG and SVG): utilisation over time, queueing delay by job size."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP
from aiinfra.report import plots
from aiinfra.report.bands import accuracy_line
from aiinfra.report.render import table


def _fmt_h(v: float | None) -> str:
    return "-" if v is None else f"{v / 3600:.2f}"


def _schedule(args: argparse.Namespace) -> tuple[Any, str]:
    if args.plot:
        plots.plot_dir(args.plot)  # a bad --plot is refused before any work
    r = app.schedule(args.scenario, args.set)
    d = r.to_dict()
    c, jobs = d["cluster"], d["jobs"]
    mig = f" + {c['mig_nodes']} MIG nodes" if c["mig_nodes"] else ""
    frag = d["fragmentation"]["head_blocked_with_enough_free_gpus_frac"]
    head = (
        f"{d['trace']['jobs']} jobs ({d['trace']['source']}) on {c['total_gpus']} GPUs "
        f"({c['nodes']} × {c['gpus_per_node']}{mig}), policy {d['policy']}\n"
        f"finished {jobs['finished']}, running at end {jobs['running_at_end']}, queued at end "
        f"{jobs['queued_at_end']}, not arrived by end {jobs['not_arrived_by_end']}; end {d['end_s'] / 3600:.1f} h;"
        f" utilisation {d['utilisation_frac']:.1%} ({d['utilisation_while_arriving_frac']:.1%} while jobs arrive);"
        f" preemptions {d['preemptions']}; head blocked by "
        f"fragmentation {frag:.1%} of the time\n"
    )
    mn = d["multi_node_jobs"]
    if mn["started"]:
        head += (
            f"multi-node jobs {mn['started']}: mean leaf groups spanned {mn['mean_leaves_spanned']:.2f} "
            f"(fewest possible {mn['mean_least_leaves']:.2f})\n"
        )
    fl = d["failures"]
    if fl is not None:
        head += (
            f"node failures {fl['node_failures']} drawn, {fl['node_failures_expected']:,.1f} expected "
            f"({fl['node_failure_rate_per_hour']:.3g} per node-hour, "
            f"{fl['repair_share_frac']:.0%} need a {fl['repair_s'] / 3600:.3g} h repair; seed {fl['seed']}): "
            f"{fl['job_interruptions']} interruptions of {fl['jobs_interrupted']} jobs, "
            f"{fl['lost_gpu_hours']:,.1f} GPU-hours redone or restarting ({fl['lost_share_of_work_frac']:.2%} "
            f"of the work), {fl['down_gpu_hours']:,.1f} GPU-hours out for repair\n"
        )
    rows = []
    for label, st in {"all": d["all_jobs"], **d["by_size"]}.items():
        q, j = st["queue_delay_s"] or {}, st["jct_s"] or {}
        rows.append(
            [
                label,
                st["jobs"],
                _fmt_h(q.get("p50")),
                _fmt_h(q.get("p90")),
                _fmt_h(q.get("p99")),
                _fmt_h(j.get("p50")),
                _fmt_h(j.get("p90")),
                _fmt_h(j.get("p99")),
            ]
        )
    text = head + "\n" + table(["GPUs", "jobs", "wait p50 h", "p90", "p99", "JCT p50 h", "p90", "p99"], rows) + "\n"
    if args.plot:
        out_dir = plots.plot_dir(args.plot)
        series = d["utilisation_over_time"]
        paths = plots.line_plot(
            out_dir,
            "utilisation",
            f"GPU utilisation ({d['policy']})",
            "time (h)",
            {"busy GPUs / all GPUs": ([p["t_start_s"] / 3600 for p in series], [p["busy_frac"] for p in series])},
            "busy fraction",
        )
        paths += plots.distribution_plot(
            out_dir,
            "queue_delay",
            f"Queueing delay by job size ({d['policy']})",
            {f"{k} GPUs" if k != "mig" else "MIG": [w / 3600 for w in v] for k, v in r.waits_by_size().items()},
            "queueing delay (h)",
        )
        d["plots"] = paths
        text += "".join(f"plot: {p}\n" for p in paths)
    text += accuracy_line(d["accuracy"]) + "\n"
    return d, text


def register(sub: Any) -> None:
    """Add ``aiinfra schedule``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("schedule", help=COMMAND_HELP["schedule"])
    p.add_argument("scenario", help="schedule YAML file (see examples/schedule-sample.yaml)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument("--plot", metavar="DIR", help="write utilisation and queueing-delay plots (PNG, SVG) into DIR")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key, e.g. --set schedule.policy=fifo (repeatable)",
    )
    p.set_defaults(handler=_schedule)
