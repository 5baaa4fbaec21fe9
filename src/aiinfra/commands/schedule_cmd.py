"""`aiinfra schedule SCHEDULE.yaml`: simulate a job trace on a cluster under a scheduling policy."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.report.render import table


def _fmt_h(v: float | None) -> str:
    return "-" if v is None else f"{v / 3600:.2f}"


def _schedule(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.schedule(args.scenario, args.set)
    d = r.to_dict()
    c, jobs = d["cluster"], d["jobs"]
    head = (f"{d['trace']['jobs']} jobs ({d['trace']['source']}) on {c['total_gpus']} GPUs "
            f"({c['nodes']} × {c['gpus_per_node']}" + (f" + {c['mig_nodes']} MIG nodes" if c["mig_nodes"] else "")
            + f"), policy {d['policy']}\n"
            f"finished {jobs['finished']}, running at end {jobs['running_at_end']}, queued at end "
            f"{jobs['queued_at_end']}, rejected {len(jobs['rejected'])}; end {d['end_s'] / 3600:.1f} h; "
            f"utilisation {d['utilisation_frac']:.1%}; preemptions {d['preemptions']}; head blocked by "
            f"fragmentation {d['fragmentation']['head_blocked_with_enough_free_gpus_frac']:.1%} of the time\n")  # fmt: skip
    rows = []
    for label, st in {"all": d["all_jobs"], **d["by_size"]}.items():
        q, j = st["queue_delay_s"] or {}, st["jct_s"] or {}
        rows.append([label, st["jobs"], _fmt_h(q.get("p50")), _fmt_h(q.get("p90")), _fmt_h(q.get("p99")),
                     _fmt_h(j.get("p50")), _fmt_h(j.get("p90")), _fmt_h(j.get("p99"))])  # fmt: skip
    text = head + "\n" + table(["GPUs", "jobs", "wait p50 h", "p90", "p99", "JCT p50 h", "p90", "p99"], rows)
    return d, text + "\n"


def register(sub: Any) -> None:
    p = sub.add_parser("schedule", help="simulate a GPU-cluster scheduler on a job trace (fifo, backfill, priority, "
                                        "fairshare; gang, node-aware and MIG-aware placement)")  # fmt: skip
    p.add_argument("scenario", help="schedule YAML file (see examples/schedule-sample.yaml)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a key, e.g. --set schedule.policy=fifo (repeatable)")  # fmt: skip
    p.set_defaults(handler=_schedule)
