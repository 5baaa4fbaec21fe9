"""`aiinfra calibrate`: fit the planner's efficiency factors to a user's own benchmark results, written as a catalog
overlay (catalog/calibration.py) that every command, the API and the web app apply with ``--catalog-overlay DIR``."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiinfra.app.base import Result
from aiinfra.errors import SpecError
from aiinfra.specs.scenario import Scenario

if TYPE_CHECKING:
    from aiinfra.calibration.readers import ServingResult

MIN_LEAVE_ONE_OUT = 3
"""Results needed for the leave-one-out check (with two, each fit rests on one run)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CalibrateResult(Result):
    """The answer of ``aiinfra calibrate``: the factors fitted to the measured runs, the errors before and after, a
    leave-one-out check, and the overlay folder written."""

    out_dir: str
    """The overlay folder whose calibration.yaml holds the fitted row."""
    applies_to: str
    """inference | training: which model the row calibrates."""
    accelerator: str
    engine: str | None
    """The serving engine the row applies to (None for training)."""
    factors: dict[str, float]
    """The fitted factors by name (calibration.yaml's fields)."""
    fitted: tuple[str, ...]
    """The factors the fit moved (the others held neutral)."""
    bounds: dict[str, tuple[float, float]]
    """(lowest, highest) value each factor may take."""
    rows: tuple[dict[str, Any], ...]
    """Per result and metric: measured, predicted before and after, relative errors."""
    mean_abs_error_before_frac: float
    """Mean |predicted / measured − 1| over rows with neutral factors."""
    mean_abs_error_after_frac: float
    """The same with the fitted factors (an in-sample figure: leave_one_out is the honest one)."""
    leave_one_out: tuple[dict[str, Any], ...]
    """Per result: the error predicting it from a fit to the others (empty below MIN_LEAVE_ONE_OUT results)."""
    leave_one_out_mean_abs_error_frac: float | None
    """Mean |error| of the leave-one-out predictions; None below MIN_LEAVE_ONE_OUT results."""
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra calibrate --json`` object: the fitted factors and bounds, ``results`` (the per-metric rows),
        the mean errors before and after, and the leave-one-out check."""
        return {
            "out_dir": self.out_dir,
            "applies_to": self.applies_to,
            "accelerator": self.accelerator,
            "engine": self.engine,
            "factors": self.factors,
            "fitted": list(self.fitted),
            "bounds": {k: list(v) for k, v in self.bounds.items()},
            "results": list(self.rows),
            "mean_abs_error_before_frac": self.mean_abs_error_before_frac,
            "mean_abs_error_after_frac": self.mean_abs_error_after_frac,
            "leave_one_out": list(self.leave_one_out),
            "leave_one_out_mean_abs_error_frac": self.leave_one_out_mean_abs_error_frac,
            "notes": list(self.notes),
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per measured result and metric: measured, predicted before and after, relative errors."""
        return [dict(r) for r in self.rows]


def _predict(case: Any, factors: Any) -> dict[str, float]:
    """calibration.predict.predict of ``case`` with the candidate ``factors`` in force."""
    from aiinfra.calibration.predict import predict, with_factors

    return predict(with_factors(case, factors))


def _residuals(cases: Any, values: dict[str, float]) -> Any:
    """calibration.predict.residuals of ``cases`` with the factors named by ``values`` in force."""
    from aiinfra.calibration.predict import residuals
    from aiinfra.catalog.calibration import Factors

    return residuals(cases, Factors.of(values))


def calibrate(scenario: Scenario, results: Sequence[str], out: str | Path) -> CalibrateResult:
    """Read every result file, fit the factors, check them by leave-one-out, write ``out`` as an overlay.

    Every input is read and checked, and the fit done, before anything is written: a bad file leaves ``out``
    untouched.

    Long because it checks every input before the fit and writes nothing until the fit and its leave-one-out check
    are done; its parts (readers, predict, fit, overlay) live in calibration/."""
    from aiinfra.calibration import predict as pr
    from aiinfra.calibration.fit import active, fit
    from aiinfra.calibration.readers import ServingResult, TrainingResult, read
    from aiinfra.catalog.calibration import Factors
    from aiinfra.catalog.resolve import scenario_of

    if not results:
        raise SpecError(
            "results",
            "(none)",
            "give at least one benchmark result file",
            "aiinfra calibrate SCENARIO.yaml RESULT.json --out DIR",
        )
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise SpecError("--out", str(out), "is a file", "give a folder (created if absent)")
    measured = [(path, r) for path in results for r in read(path)]
    serving = [r for _, r in measured if isinstance(r, ServingResult)]
    training = [r for _, r in measured if isinstance(r, TrainingResult)]
    if serving and training:
        raise SpecError(
            "results",
            f"{len(serving)} serving + {len(training)} training",
            "mixes serving and training results",
            "calibrate each kind in its own run (both may write the same --out)",
        )
    if serving:
        cases, applies = pr.serving_cases(scenario, serving, scenario_of), "inference"
        params = pr.serving_params(scenario, cases)
        engine: str | None = scenario.inference.engine if scenario.inference else None
    else:
        cases, applies = pr.training_cases(scenario, training, scenario_of), "training"
        params = pr.training_params(scenario, cases)
        engine = None
    n_metrics = len(cases[0].measured)

    def res(sub: Sequence[pr.Case]) -> Any:
        return lambda values: _residuals(sub, values)

    chosen = active(params, res(cases), n_metrics * len(cases))
    best = fit(params, chosen, res(cases))
    neutral = Factors()
    factors = Factors.of(best.values)
    rows: list[dict[str, Any]] = []
    for c in cases:
        before, after = _predict(c, neutral), _predict(c, factors)
        for metric, value in c.measured.items():
            rows.append(
                {
                    "file": c.result.file,
                    "format": c.result.format,
                    "run": c.result.label,
                    "load": c.result.load,
                    "metric": metric,
                    "measured": value,
                    "predicted_before": before[metric],
                    "predicted_after": after[metric],
                    "error_before_frac": before[metric] / value - 1.0,
                    "error_after_frac": after[metric] / value - 1.0,
                }
            )
    loo: list[dict[str, Any]] = []
    notes: list[str] = []
    if len(cases) >= MIN_LEAVE_ONE_OUT:
        for i, c in enumerate(cases):
            rest = [o for j, o in enumerate(cases) if j != i]
            sub = fit(params, active(params, res(rest), n_metrics * len(rest)), res(rest), start=best.values)
            pred = _predict(c, Factors.of(sub.values))
            for metric, value in c.measured.items():
                loo.append(
                    {
                        "file": c.result.file,
                        "run": c.result.label,
                        "metric": metric,
                        "measured": value,
                        "predicted": pred[metric],
                        "error_frac": pred[metric] / value - 1.0,
                    }
                )
    else:
        notes.append(f"leave-one-out needs at least {MIN_LEAVE_ONE_OUT} results; {len(cases)} given")
    for name in best.at_bound:
        notes.append(
            f"{name} ended on its bound: the measurements ask for more than the physical limit allows — "
            "check that the scenario describes the measured deployment"
        )
    notes.extend(_repeated_prompt_notes(serving))
    skipped = [p.name for p in params if p.name not in best.fitted]
    if skipped:
        notes.append("held neutral (no effect on these runs, or fewer residuals than factors): " + ", ".join(skipped))
    bounds = {p.name: (p.lo, p.hi) for p in params}
    row = _overlay_row(scenario, applies, engine, best.values, best.fitted, bounds, cases, rows, loo, results)
    from aiinfra.catalog.overlay_files import write_rows

    write_rows(out_dir, "calibration.yaml", [row], _summary(row, rows, loo))
    return CalibrateResult(
        out_dir=str(out_dir),
        applies_to=applies,
        accelerator=scenario.cluster.accelerator.id,
        engine=engine,
        factors=best.values,
        fitted=best.fitted,
        bounds=bounds,
        rows=tuple(rows),
        mean_abs_error_before_frac=_mae(r["error_before_frac"] for r in rows),
        mean_abs_error_after_frac=_mae(r["error_after_frac"] for r in rows),
        leave_one_out=tuple(loo),
        leave_one_out_mean_abs_error_frac=_mae(r["error_frac"] for r in loo) if loo else None,
        notes=tuple(notes),
    )


def _repeated_prompt_notes(serving: Sequence[ServingResult]) -> list[str]:
    """A note per set of runs that sent the same prompts (ServingResult.prompt_set: the same varied per-request
    lengths, which a client draws from its seed). Against one server whose prefix cache is on (vLLM's default since
    V1, SGLang's radix cache), every run after the first finds those prompts cached and measures a TTFT without
    their prefill (docs/serving.md, "A seeded sweep's later runs find each prompt's head cached")."""
    groups: dict[str, list[ServingResult]] = {}
    for r in serving:
        if r.prompt_set is not None:
            groups.setdefault(r.prompt_set, []).append(r)
    return [
        "the same prompts in "
        + ", ".join(f"{r.file} ({r.label})" for r in runs)
        + ": if one server with its prefix cache on ran them, all but the first measured cached prompts, so their "
        "TTFT (fitted as measured) is short of a cold prefill; give each run its own --seed, or serve with "
        "--no-enable-prefix-caching (vLLM) / --disable-radix-cache (SGLang)"
        for runs in groups.values()
        if len(runs) > 1
    ]


def _mae(values: Any) -> float:
    vals = [abs(v) for v in values]
    return sum(vals) / len(vals) if vals else math.nan


def _sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _overlay_row(
    scenario: Scenario,
    applies: str,
    engine: str | None,
    values: dict[str, float],
    fitted: tuple[str, ...],
    bounds: dict[str, tuple[float, float]],
    cases: Sequence[Any],
    rows: list[dict[str, Any]],
    loo: list[dict[str, Any]],
    paths: Sequence[str],
) -> dict[str, Any]:
    from aiinfra.calibration.predict import plan_of

    acc = scenario.cluster.accelerator.id
    today = date.today().isoformat()
    by_file: dict[str, Any] = {}
    for c in cases:
        by_file.setdefault(c.result.file, c.result)
    names = [p for p in dict.fromkeys(paths) if Path(p).name in by_file]
    files = [
        {
            "file": Path(p).name,
            "sha256": _sha256(p),
            "format": by_file[Path(p).name].format,
            "date": by_file[Path(p).name].date,
        }
        for p in names
    ]
    row: dict[str, Any] = {
        "id": f"calibrated-{applies}-{acc}" + (f"-{engine}" if engine else ""),
        "applies_to": applies,
        "accelerator": acc,
    }
    if engine:
        row["engine"] = engine
    row |= {
        "factors": {k: float(f"{v:.6g}") for k, v in values.items()},
        "fitted": list(fitted),
        "bounds": {k: [float(f"{lo:.6g}"), float(f"{hi:.6g}")] for k, (lo, hi) in bounds.items()},
        "measured_deployment": plan_of(scenario) | {"scenario": Path(scenario.path).name if scenario.path else None},
        "results": files,
        "runs": [
            {
                "file": c.result.file,
                "run": c.result.label,
                "load": c.result.load,
                **{k: float(f"{v:.6g}") for k, v in c.measured.items()},
            }
            for c in cases
        ],
        "mean_abs_error_before_frac": float(f"{_mae(r['error_before_frac'] for r in rows):.4g}"),
        "mean_abs_error_after_frac": float(f"{_mae(r['error_after_frac'] for r in rows):.4g}"),
        "calibrated_on": today,
        "sources": [
            {
                "title": f"{f['file']} ({f['format']} benchmark result, measured by the user)",
                "read_on": today,
                **({"measured_on": f["date"]} if f["date"] else {}),
            }
            for f in files
        ],
    }
    if loo:
        row["leave_one_out_mean_abs_error_frac"] = float(f"{_mae(r['error_frac'] for r in loo):.4g}")
    return row


def _summary(row: dict[str, Any], rows: list[dict[str, Any]], loo: list[dict[str, Any]]) -> str:
    lines = [
        f"# Calibration `{row['id']}`",
        "",
        f"Written by `aiinfra calibrate` on {row['calibrated_on']} from: "
        + ", ".join(f"`{f['file']}`" for f in row["results"])
        + ".",
        "",
        "| factor | value | bounds |",
        "|---|---|---|",
    ]
    for k, v in row["factors"].items():
        lo, hi = row["bounds"][k]
        lines.append(f"| {k} | {v:.4g}{'' if k in row['fitted'] else ' (not fitted)'} | {lo:.4g} … {hi:.4g} |")
    lines += ["", "| file | run | metric | measured | before | after |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['file']} | {r['run']} | {r['metric']} | {r['measured']:.4g} | "
            f"{r['error_before_frac']:+.1%} | {r['error_after_frac']:+.1%} |"
        )
    if loo:
        lines += [
            "",
            "Leave-one-out (each run predicted from a fit to the others):",
            "",
            "| file | run | metric | error |",
            "|---|---|---|---|",
        ]
        lines += [f"| {r['file']} | {r['run']} | {r['metric']} | {r['error_frac']:+.1%} |" for r in loo]
    return "\n".join(lines) + "\n"
