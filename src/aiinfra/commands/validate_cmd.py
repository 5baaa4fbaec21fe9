"""`aiinfra validate CASES.csv [--json] [--markdown FILE]`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP
from aiinfra.commands.progress import add_quiet_arg, progress_bar
from aiinfra.report.render import table


def _validate(args: argparse.Namespace) -> tuple[Any, str]:
    with progress_bar(args, "rows", "validate") as progress:
        r = app.validate(args.cases, progress)
    if args.markdown:
        path = Path(args.markdown)
        path.write_text(r.markdown_keeping(path.read_text() if path.exists() else ""))
    cases, summary, targets = r.cases, r.summary, r.targets
    obj = r.to_dict()
    rows = [
        [
            c.id,
            c.metric,
            c.measured,
            c.predicted,
            "—" if d["predicted_low"] is None else f"{d['predicted_low']:.4g}–{d['predicted_high']:.4g}",
            "—" if c.rel_error is None else f"{c.rel_error:+.1%}",
            c.notes[:60],
        ]
        for c, d in zip(cases, obj["cases"], strict=True)
    ]
    s = summary
    text = table(["id", "metric", "measured", "predicted", "80 % interval", "error", "notes"], rows)
    med = s["median_abs_rel_error"]
    p90 = s["p90_abs_rel_error"]
    text += (
        f"\n\n{s['n']} rows, {s['n_predicted']} predicted, {s['n_compared']} compared; median |error| "
        f"{'—' if med is None else f'{med:.1%}'}, p90 {'—' if p90 is None else f'{p90:.1%}'}"
    )
    for cov in obj["coverage"]:
        if "·" not in cov["regime"]:  # per kind and quantity; docs/validation.md has the breakdown
            text += (
                f"\n80 % intervals (without each row's source), {cov['regime']}, {cov['split']} rows: "
                f"{cov['coverage_frac']:.0%} of {cov['rows']} measurements inside, median half-width "
                f"±{cov['median_half_width_frac']:.0%}"
            )
    for name, t in targets.items():
        text += (
            f"\ntarget {name} ({t['goal']}): {t['n_compared']} rows, median |error| "
            f"{t['median_abs_rel_error']:.1%}, {t['share_within_25pct_frac']:.0%} within ±25 %, worst "
            f"{t['max_abs_rel_error']:.1%}: {'met' if t['met'] else 'not met'}"
        )
    return obj, text


def register(sub: Any) -> None:
    """Add ``aiinfra validate``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("validate", help=COMMAND_HELP["validate"])
    p.add_argument("cases", nargs="+", help="CSV files in the reference-data schema (training or inference rows)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", metavar="FILE", help="also write the markdown report (docs/validation.md)")
    add_quiet_arg(p)
    p.set_defaults(handler=_validate)
