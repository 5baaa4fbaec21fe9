"""`aiinfra calibrate SCENARIO RESULT [RESULT ...] --out DIR`."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP
from aiinfra.report.render import key_values


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1%}"


def _calibrate(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.calibrate(app.load_scenario(args.scenario, args.set), args.results, args.out)
    scope = f"{r.applies_to} on {r.accelerator}" + (f" with {r.engine}" if r.engine else "")
    pairs: list[tuple[str, Any]] = [("overlay written", f"{r.out_dir}/calibration.yaml ({scope})")]
    for k, v in r.factors.items():
        lo, hi = r.bounds[k]
        pairs.append((k, f"{v:.4g}" + ("" if k in r.fitted else " (not fitted)") + f"   bounds {lo:.4g} … {hi:.4g}"))
    pairs += [
        ("mean |error| before", f"{r.mean_abs_error_before_frac:.1%}"),
        ("mean |error| after", f"{r.mean_abs_error_after_frac:.1%}"),
        (
            "leave-one-out mean |error|",
            "—" if r.leave_one_out_mean_abs_error_frac is None else f"{r.leave_one_out_mean_abs_error_frac:.1%}",
        ),
    ]
    lines = [key_values(pairs, "calibration"), "", "per result (error = predicted / measured − 1):"]
    for row in r.rows:
        lines.append(
            f"  {row['file']} {row['run']}: {row['metric']} measured {row['measured']:.4g} s, error "
            f"{_pct(row['error_before_frac'])} before, {_pct(row['error_after_frac'])} after"
        )
    if r.leave_one_out:
        lines.append("leave-one-out (fit to the other results):")
        lines += [
            f"  {row['file']} {row['run']}: {row['metric']} error {_pct(row['error_frac'])}" for row in r.leave_one_out
        ]
    lines += [f"note: {n}" for n in r.notes]
    lines.append(f"use it: aiinfra infer SCENARIO.yaml --catalog-overlay {r.out_dir}")
    return r.to_dict(), "\n".join(lines)


def register(sub: Any) -> None:
    """Add ``aiinfra calibrate``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("calibrate", help=COMMAND_HELP["calibrate"])
    p.add_argument("scenario", help="scenario YAML of the measured deployment (model, hardware, engine, plan)")
    p.add_argument(
        "results",
        nargs="+",
        metavar="RESULT",
        help="vllm bench serve --save-result JSON, GuideLLM report (JSON/YAML), serving CSV "
        "(input_tokens, output_tokens, concurrency|request_rate, ttft_s, tpot_s), training CSV "
        "(tp, pp, ..., step_time_s), torchtitan or Megatron-LM log",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="overlay folder to write (created; calibration.yaml "
        "rows of the same accelerator and engine are replaced, other files kept)",
    )
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key")
    p.add_argument("--catalog-overlay", metavar="DIR", help="answer against the catalog with DIR's rows")
    p.set_defaults(handler=_calibrate)
