"""`aiinfra simulate SCENARIO.yaml [--json] [--seed N] [--plot DIR] [--find-max-rate]`.

Plots (PNG and SVG, matplotlib): timeline (waiting and running requests), kv_timeline (KV utilisation) and
latency_distribution (TTFT and TPOT per request) for a run; latency_vs_load for --find-max-rate (every rate the
search simulated).
"""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_option_args, add_scenario_args
from aiinfra.commands.progress import add_quiet_arg, progress_bar
from aiinfra.report import plots
from aiinfra.report.bands import accuracy_line, band
from aiinfra.report.render import key_values
from aiinfra.specs.scenario import Scenario


def _ms(p: Any) -> str:
    return f"mean {p.mean * 1e3:.1f} / p50 {p.p50 * 1e3:.1f} / p90 {p.p90 * 1e3:.1f} / p99 {p.p99 * 1e3:.1f} ms"


def _ms1(v: float) -> str:
    return f"{v * 1e3:.1f}"


def _thin(xs: list[float], ys: list[float], points: int = 1500) -> tuple[list[float], list[float]]:
    """Every k-th sample, so an SVG of a 100,000-request run stays small."""
    k = max(1, len(xs) // points)
    return xs[::k], ys[::k]


def _find_max_rate(args: argparse.Namespace, sc: Scenario) -> tuple[Any, str]:
    with progress_bar(args, "simulations", "find max rate") as progress:
        r = app.find_max_rate(sc, args.seed, progress)
    rate, points = r.max_request_rate_per_s, r.points
    obj = r.to_dict()
    lines = [f"highest request rate meeting the SLO: {rate:.4g} requests/s (seed {args.seed})"]
    for p in points:
        verdict = "meets SLO" if p.meets_slo else "misses: " + "; ".join(p.misses)
        lines.append(
            f"  {p.request_rate_per_s:9.4g}/s  TTFT p90 {p.ttft_p90_s * 1e3:9.1f} ms  TPOT p99 "
            f"{p.tpot_p99_s * 1e3:7.2f} ms  e2e p99 {p.e2e_p99_s:7.2f} s  {verdict}"
        )
    if args.plot:
        xs = [p.request_rate_per_s for p in points]
        paths = plots.line_plot(
            plots.plot_dir(args.plot),
            "latency_vs_load",
            "Latency vs load (simulated)",
            "request rate (1/s)",
            {
                "TTFT p90": (xs, [p.ttft_p90_s for p in points]),
                "TPOT p99 × 100": (xs, [100 * p.tpot_p99_s for p in points]),
                "e2e p99": (xs, [p.e2e_p99_s for p in points]),
            },
            "seconds",
        )
        obj["plots"] = paths
        lines += [f"plot: {p}" for p in paths]
    return obj, "\n".join(lines)


def _simulate(args: argparse.Namespace) -> tuple[Any, str]:
    """Long because it lays out the command's text report line by line (formatting only: the answer and its numbers
    come from the application layer, whose result's to_dict() is the --json output)."""
    if args.plot:
        plots.plot_dir(args.plot)  # a bad --plot is refused before any work
    sc = app.load_scenario(args.scenario, args.set)
    if args.find_max_rate:
        return _find_max_rate(args, sc)
    result = app.simulate(sc, args.seed)
    res = result.run
    s = res.summary
    obj = result.to_dict()
    acc = obj["accuracy"]
    rows: list[tuple[str, Any]] = [
        ("requests (completed)", f"{s.requests:,} ({s.completed:,}) on {res.replicas} replica(s), seed {args.seed}"),
        ("TTFT", _ms(s.ttft_s) + band(acc, "ttft_s.p50", _ms1, "p50 ")),
        (
            "TPOT exclusive",
            _ms(s.tpot_exclusive_s) + band(acc, "tpot_exclusive_s.p50", _ms1, "p50 ") + "  (e2e − TTFT) / (output − 1)",
        ),
        ("TPOT inclusive", _ms(s.tpot_inclusive_s) + "  e2e / output"),
        ("ITL", _ms(s.itl_s)),
        (
            "end-to-end",
            f"mean {s.e2e_s.mean:.2f} / p50 {s.e2e_s.p50:.2f} / p90 {s.e2e_s.p90:.2f} / p99 {s.e2e_s.p99:.2f} s",
        ),
        (
            "throughput",
            f"{s.output_tokens_per_s:,.0f} output tokens/s"
            f"{band(acc, 'output_tokens_per_s', lambda v: f'{v:,.0f}')}, {s.requests_per_s:.3g} "
            "requests/s",
        ),
        (
            "goodput (SLO)",
            "no SLO given"
            if s.goodput_requests_per_s is None
            else f"{s.goodput_requests_per_s:.3g} requests/s "
            f"({s.slo_attainment_frac:.1%} of requests meet every limit)",
        ),
        (
            "KV utilisation",
            f"mean {s.kv_utilisation_mean_frac:.1%}, max {s.kv_utilisation_max_frac:.1%} "
            f"of {res.limits.kv_capacity_tokens:,} tokens per replica",
        ),
        ("preemptions / prefix-cache hits", f"{s.preemptions} / {s.prefix_cache_hits}"),
        ("max queue length / running", f"{s.queue_length_max} / {s.running_seqs_max}"),
        ("iterations", s.iterations),
    ]
    rows += [(f"priority {c.priority} ({c.requests})", "TTFT " + _ms(c.ttft_s)) for c in s.priority_classes]
    if res.attention_dp_ranks > 1:
        dp = res.attention_dp_ranks
        adp = f"{dp} ranks per replica, each with its own sequences and 1/{dp} of the KV cache; iterations in lock-step"
        rows.insert(1, ("attention DP", adp))
    rows += [("note", n) for n in res.notes]
    text = key_values(rows, f"simulation of {sc.model.id} on {sc.cluster.count} × {sc.cluster.accelerator.id}")
    text += "\n" + accuracy_line(acc)
    if args.plot:
        out_dir = plots.plot_dir(args.plot)
        r = res.records
        t = r.sample_t_s
        lat = result.latencies()
        paths = plots.line_plot(
            out_dir,
            "timeline",
            "Requests over time",
            "time (s)",
            {
                "waiting": _thin(t, [float(q) for q in r.queue_len]),
                "running": _thin(t, [float(q) for q in r.running_seqs]),
            },
            "requests",
        )
        paths += plots.line_plot(
            out_dir,
            "kv_timeline",
            "KV-cache utilisation over time",
            "time (s)",
            {"KV in use / capacity": _thin(t, r.kv_util_frac)},
            "fraction",
        )
        paths += plots.distribution_plot(
            out_dir,
            "latency_distribution",
            "Latency per request (simulated)",
            {"TTFT": lat["ttft_s"], "TPOT (exclusive)": lat["tpot_exclusive_s"]},
            "seconds",
        )
        obj["plots"] = paths
        text += "".join(f"\nplot: {p}" for p in paths)
    return obj, text


def register(sub: Any) -> None:
    """Add ``aiinfra simulate``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("simulate", help=COMMAND_HELP["simulate"])
    add_scenario_args(p)
    add_option_args(p, ["simulate"])
    p.add_argument("--plot", metavar="DIR", help="write plots (PNG and SVG) into DIR")
    p.add_argument("--find-max-rate", action="store_true", help="bisect the highest request rate meeting the SLO")
    add_quiet_arg(p)
    p.set_defaults(handler=_simulate)
