"""`aiinfra simulate SCENARIO.yaml [--json] [--seed N] [--plot DIR] [--find-max-rate]`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from aiinfra.commands import add_scenario_args
from aiinfra.report import svg as plots
from aiinfra.report.render import jsonable, key_values
from aiinfra.sim.run import simulate
from aiinfra.sim.search import max_rate_meeting_slo
from aiinfra.specs.scenario import load_scenario


def _ms(p: Any) -> str:
    return f"mean {p.mean * 1e3:.1f} / p50 {p.p50 * 1e3:.1f} / p90 {p.p90 * 1e3:.1f} / p99 {p.p99 * 1e3:.1f} ms"


def _simulate(args: argparse.Namespace) -> tuple[Any, str]:
    sc = load_scenario(args.scenario, args.set)
    if args.find_max_rate:
        rate, points = max_rate_meeting_slo(sc, seed=args.seed)
        obj = {"max_request_rate_per_s": rate, "points": [jsonable(p) for p in points]}
        text = f"highest request rate meeting the SLO (≥ 99 % of requests): {rate:.3g} requests/s\n" + "\n".join(
            f"  {p.request_rate_per_s:8.3g}/s  attainment {p.slo_attainment_frac:6.1%}  TTFT p90 "
            f"{p.ttft_p90_s * 1e3:8.1f} ms  TPOT p99 {p.tpot_p99_s * 1e3:6.1f} ms" for p in points)  # fmt: skip
        if args.plot:
            path = plots.write(Path(args.plot) / "latency_vs_load.svg", plots.line_svg(
                "Latency vs load", "request rate (1/s)",
                {"TTFT p90 (s)": ([p.request_rate_per_s for p in points], [p.ttft_p90_s for p in points]),
                 "TPOT p99 ×10 (s)": ([p.request_rate_per_s for p in points], [10 * p.tpot_p99_s for p in points])},
                "seconds"))  # fmt: skip
            obj["plots"] = [path]
            text += f"\nplot: {path}"
        return obj, text
    res = simulate(sc, seed=args.seed)
    s = res.summary
    obj = {**jsonable(s), "replicas": res.replicas, "seed": args.seed, "limits": jsonable(res.limits)}
    text = key_values([
        ("requests (completed)", f"{s.requests:,} ({s.completed:,}) on {res.replicas} replica(s), seed {args.seed}"),
        ("TTFT", _ms(s.ttft_s)),
        ("TPOT exclusive", _ms(s.tpot_exclusive_s)),
        ("TPOT inclusive", _ms(s.tpot_inclusive_s)),
        ("ITL", _ms(s.itl_s)),
        ("end-to-end", f"mean {s.e2e_s.mean:.2f} / p50 {s.e2e_s.p50:.2f} / p90 {s.e2e_s.p90:.2f} / "
                       f"p99 {s.e2e_s.p99:.2f} s"),
        ("throughput", f"{s.output_tokens_per_s:,.0f} output tokens/s, {s.requests_per_s:.3g} requests/s"),
        ("goodput (SLO)", "no SLO given" if s.goodput_requests_per_s is None else
         f"{s.goodput_requests_per_s:.3g} requests/s ({s.slo_attainment_frac:.1%} of requests meet it)"),
        ("KV utilisation", f"mean {s.kv_utilisation_mean_frac:.1%}, max {s.kv_utilisation_max_frac:.1%}"),
        ("preemptions", s.preemptions),
        ("max queue length", s.queue_length_max),
        ("iterations", s.iterations),
    ], f"simulation of {sc.model.id} on {sc.cluster.count} × {sc.cluster.accelerator.id}")  # fmt: skip
    if args.plot:
        r = res.records
        svg = plots.line_svg("Queue length over time", "time (s)", {"waiting": (r.queue_t_s, r.queue_len)}, "requests")
        path = plots.write(Path(args.plot) / "timeline.svg", svg)
        obj["plots"] = [path]
        text += f"\nplot: {path}"
    return obj, text


def register(sub: Any) -> None:
    p = sub.add_parser("simulate", help="discrete-event serving simulation (continuous batching, paged KV)")
    add_scenario_args(p)
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same result)")
    p.add_argument("--plot", metavar="DIR", help="write SVG plots into DIR")
    p.add_argument("--find-max-rate", action="store_true", help="bisect the highest request rate meeting the SLO")
    p.set_defaults(handler=_simulate)
