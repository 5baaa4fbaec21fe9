"""`aiinfra validate CASES.csv [--json] [--markdown FILE]`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from aiinfra.report.render import jsonable, table
from aiinfra.validation.report import markdown
from aiinfra.validation.runner import run


def _validate(args: argparse.Namespace) -> tuple[Any, str]:
    results = [run(p) for p in args.cases]
    if args.markdown:
        Path(args.markdown).write_text(markdown(results))
    cases = [c for r in results for c in r["cases"]]
    from aiinfra.validation.runner import summarise

    summary = summarise(cases)
    obj = {"cases": [jsonable(c) for c in cases], "summary": summary}
    rows = [[c.id, c.metric, c.measured, c.predicted,
             "—" if c.rel_error is None else f"{c.rel_error:+.1%}", c.notes[:60]] for c in cases]  # fmt: skip
    s = summary
    text = table(["id", "metric", "measured", "predicted", "error", "notes"], rows)
    med = s["median_abs_rel_error"]
    p90 = s["p90_abs_rel_error"]
    text += (f"\n\n{s['n']} rows, {s['n_predicted']} predicted, {s['n_compared']} compared; median |error| "
             f"{'—' if med is None else f'{med:.1%}'}, p90 {'—' if p90 is None else f'{p90:.1%}'}")  # fmt: skip
    return obj, text


def register(sub: Any) -> None:
    p = sub.add_parser("validate", help="predict published measurements from their specs and compare")
    p.add_argument("cases", nargs="+", help="CSV files in the reference-data schema (training or inference rows)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", metavar="FILE", help="also write the markdown report (docs/validation.md)")
    p.set_defaults(handler=_validate)
