"""`aiinfra validate`: predict each reference row's metric from its specs and compare."""

from __future__ import annotations

import csv
import importlib
import io
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiinfra.errors import SpecError
from aiinfra.specs.files import read_text
from aiinfra.validation.types import RowPrediction, RowPredictor, RowTables

REQUIRED_TRAINING = ("id", "metric", "accelerator", "num_accelerators")
REQUIRED_INFERENCE = ("id", "metric", "accelerator", "engine")


@dataclass(frozen=True, slots=True)
class Case:
    """One validation row scored: the published value, the prediction and their relative error."""

    id: str
    group: str
    metric: str
    measured: float | None
    predicted: float | None
    rel_error: float | None
    """(predicted − measured) / measured."""
    notes: str
    kind: str
    """predictive: specs in only; efficiency curves come from other measurements."""
    target: str | None = None
    """The inference planner's accuracy target the row counts toward (:data:`TARGETS`), None for none."""
    accelerators_count: int | None = None
    """The row's ``num_accelerators`` (None when blank or not a number): its scale band (:data:`SCALE_BANDS`)."""
    utilisation_frac: float | None = None
    """An inference row's load over the capacity its prediction gives (aiinfra.analytic.equilibrium.utilisation): the
    load level of its error band."""


@dataclass(frozen=True, slots=True)
class Target:
    """One accuracy goal of the inference planner, over the rows :func:`target_of` assigns to it."""

    goal: str
    """As the inference planner's issue states it."""
    max_abs_error_each_frac: float | None = None
    """Every row's |error| at most this (a fraction)."""
    max_median_abs_error_frac: float | None = None
    min_share_within_25pct_frac: float | None = None
    """Least share of rows whose |error| is at most 25 %."""


BAND_FRAC = 0.25
"""Half-width of the band the saturated-throughput target counts rows in: |error| ≤ 25 % (the inference planner's
issue)."""

TARGETS: dict[str, Target] = {
    "kv_capacity": Target("KV capacity within ±5 %", max_abs_error_each_frac=0.05),
    "batch1_tpot": Target("batch-1 TPOT median abs error ≤ 10 %", max_median_abs_error_frac=0.10),
    "saturated_throughput": Target(
        "saturated throughput median ≤ 15 %, 90 % of rows within ±25 %",
        max_median_abs_error_frac=0.15,
        min_share_within_25pct_frac=0.90,
    ),
}
"""Accuracy targets of the inference planner: which rows count toward each is :func:`target_of`."""


def target_of(row: dict[str, str]) -> str | None:
    """The target an inference row counts toward: KV-capacity rows; batch-1 decode steps (an ITL intercept, or the
    TPOT of one sequence); offline output-token throughput (saturated; requests/s rows of the same runs are not
    counted twice)."""
    metric, mode = row.get("metric", "").strip(), row.get("mode", "").strip()
    batch = (row.get("batch_or_concurrency") or "").strip()
    if metric == "kv_capacity_tokens":
        return "kv_capacity"
    if metric == "itl_intercept_s" or (metric == "tpot_s" and batch == "1"):
        return "batch1_tpot"
    if metric == "output_tokens_per_s" and mode == "offline":
        return "saturated_throughput"
    return None


def _predictor(kind: str) -> RowPredictor | None:
    module = "aiinfra.validation.training_rows" if kind == "training" else "aiinfra.validation.inference_rows"
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    fn: RowPredictor = mod.predict_row
    return fn


def group_of(case_id: str) -> str:
    """Row group = id up to the model part (the prefixes of shared/reference/README.md)."""
    for prefix in (
        "narayanan2021-t2-ptdp",
        "narayanan2021-t1",
        "korthikanti2022-t5",
        "megatron-core-r08-h100",
        "mpt-a10080gb",
        "mpt-a10040gb",
        "torchtitan-asynctp-h100",
        "torchtitan-h100",
        "mlperf41-h100x8",
        "trtllm-v1p0",
        "trtllm-v0p21",
        "trtllm-v0p5-a100",
        "vllm-fp8kv-h100",
        "llmservingsim-rtxpro6000",
        "mcore-moe-zoo-h100",
        "mcore-moe-zoo-gb200",
        "mcore-moe-zoo-gb300",
        "mcore-dsv3-gb200",
        "torchtitan-trainy-h200",
        "rocm-vllm-mi300x",
        "llmservingsim-kv-rtxpro6000",
        "deepseek-v3-report-h800",
        "nim180-h100",
        "vllm-perfci",
        "nemotron4-340b-h100",
        "mlperf-train-v30",
        "mlperf-train-v31",
        "mlperf-train-v40",
        "mlperf-train-v41",
        "mlperf-train-v50",
        "mlperf-train-v51",
    ):
        if case_id.startswith(prefix):
            return prefix
    return case_id.rsplit("-", 1)[0]


def read_cases(path: str | Path) -> tuple[str, list[dict[str, str]]]:
    """The CSV's kind (inference when it has an ``engine`` column, else training) and its rows; SpecError when it
    cannot be read, lacks a required column or a value is not a finite positive number."""
    text = read_text(path, "CASES.csv", "a CSV in the schema of the reference data")
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        cols = reader.fieldnames or []
        rows = list(reader)
    except csv.Error as exc:
        raise SpecError("CASES.csv", str(path), f"not a readable CSV ({exc})", "fix the file") from None
    kind = "inference" if "engine" in cols else "training"
    required = REQUIRED_INFERENCE if kind == "inference" else REQUIRED_TRAINING
    missing = [c for c in required if c not in cols]
    if missing:
        raise SpecError("CASES.csv", str(path), f"missing columns {missing}", "use the reference-data schema")
    if not rows:
        raise SpecError("CASES.csv", str(path), "has a header but no rows", "add at least one published measurement")
    for i, row in enumerate(rows, start=2):
        _measured(row, f"CASES.csv line {i} value")
    return kind, rows


MAX_MEASURED = 1e12
"""Largest published value a row may hold: the metrics are seconds, tokens per second and fractions, and no
published run reaches 10¹² of any of them (a cluster's tokens per second are ~10⁷)."""


def _measured(row: dict[str, str], field: str) -> float | None:
    """The row's published value: blank (None) or a finite positive number (every metric is a time, a rate or a
    fraction of peak)."""
    text = (row.get("value") or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise SpecError(field, text, "not a number", "give the measured value as a plain number") from None
    if not (math.isfinite(value) and 0 < value <= MAX_MEASURED):
        raise SpecError(
            field, text, f"must be a finite number > 0 and ≤ {MAX_MEASURED:.0e}", "give the measured value as published"
        )
    return value


def run(
    path: str | Path, tables: RowTables, progress: Callable[[int, int | None], None] | None = None
) -> dict[str, Any]:
    """Predict every row of one CSV (``tables``: the catalog's rows the predictors read, app/tables.py
    row_tables); ``progress(done, total)`` is called after each row."""
    kind, rows = read_cases(path)
    predictor = _predictor(kind)
    cases: list[Case] = []
    for done, row in enumerate(rows, start=1):
        measured = _measured(row, "value")
        pred: RowPrediction
        if predictor is None:
            pred = RowPrediction(None, reason=f"not modelled: {kind} predictor unavailable")
        else:
            # the predictor sees the row without its measured value; a predictor that fails on one row
            # (e.g. a concurrently changing simulator) reports that row as not modelled, with the error
            try:
                pred = predictor({k: v for k, v in row.items() if k != "value"}, tables)
            except Exception as exc:  # listed in the report with the error, never silently dropped
                pred = RowPrediction(
                    None, reason=f"not modelled: {kind} predictor failed ({type(exc).__name__}: {exc})"
                )
        rel = None
        if pred.predicted is not None and measured:
            rel = (pred.predicted - measured) / measured
        cases.append(
            Case(
                id=row["id"],
                group=group_of(row["id"]),
                metric=row["metric"],
                measured=measured,
                predicted=pred.predicted,
                rel_error=rel,
                notes=pred.reason,
                kind="predictive",
                target=target_of(row) if kind == "inference" else None,
                accelerators_count=_count(row.get("num_accelerators")),
                utilisation_frac=pred.details.get("utilisation_frac"),
            )
        )
        if progress is not None:
            progress(done, len(rows))
    return {"file": str(path), "kind": kind, "cases": cases, "summary": summarise(cases)}


def summarise(cases: list[Case]) -> dict[str, Any]:
    """Count of cases, of predictions and of comparisons, and the median, p90 and max absolute relative error."""
    errs = sorted(abs(c.rel_error) for c in cases if c.rel_error is not None)
    return {
        "n": len(cases),
        "n_predicted": sum(c.predicted is not None for c in cases),
        "n_compared": len(errs),
        "median_abs_rel_error": statistics.median(errs) if errs else None,
        "p90_abs_rel_error": quantile(errs, 0.9) if errs else None,
        "max_abs_rel_error": errs[-1] if errs else None,
    }


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default 'linear' method)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def by_target(cases: list[Case]) -> dict[str, dict[str, Any]]:
    """Per accuracy target (:data:`TARGETS`): the summary of its rows, the share within ±25 % and whether the goal
    is met."""
    out: dict[str, dict[str, Any]] = {}
    for name, t in TARGETS.items():
        errs = [abs(c.rel_error) for c in cases if c.target == name and c.rel_error is not None]
        if not errs:
            continue
        s = summarise([c for c in cases if c.target == name])
        within = sum(e <= BAND_FRAC for e in errs) / len(errs)
        met = (
            (t.max_abs_error_each_frac is None or max(errs) <= t.max_abs_error_each_frac)
            and (t.max_median_abs_error_frac is None or statistics.median(errs) <= t.max_median_abs_error_frac)
            and (t.min_share_within_25pct_frac is None or within >= t.min_share_within_25pct_frac)
        )
        out[name] = {**s, "goal": t.goal, "share_within_25pct_frac": within, "met": met}
    return out


SCALE_BANDS: tuple[tuple[str, int, int | None], ...] = (
    ("1–63", 1, 63),
    ("64–511", 64, 511),
    ("512–999", 512, 999),
    ("≥ 1,000", 1000, None),
)
"""Accelerator-count bands the error is reported by (issue 19: at-scale runs must be as accurate as small ones)."""


def _count(text: str | None) -> int | None:
    try:
        value = float((text or "").strip())
    except ValueError:
        return None
    return int(value) if math.isfinite(value) and value >= 1 else None


RATE_METRICS = ("tokens_per_s_per_accelerator", "output_tokens_per_s", "requests_per_s")
"""Metrics that are rates (a faster prediction is a larger number); every other metric is a time."""


def time_error(case: Case) -> float | None:
    """The row's error as an error of the predicted time: predicted / measured − 1 for a time, measured / predicted − 1
    for a rate, so negative always means predicted too fast."""
    if case.rel_error is None:
        return None
    return 1.0 / (1.0 + case.rel_error) - 1.0 if case.metric in RATE_METRICS else case.rel_error


def by_scale_band(cases: list[Case]) -> dict[str, dict[str, Any]]:
    """Per scale band (:data:`SCALE_BANDS`, by the rows' accelerator count): the summary, the mean signed error of
    the predicted time (:func:`time_error`: negative = predicted too fast) and the worst row. Bands without rows are
    left out."""
    out: dict[str, dict[str, Any]] = {}
    for label, lo, hi in SCALE_BANDS:
        band = [
            c
            for c in cases
            if c.accelerators_count is not None
            and c.accelerators_count >= lo
            and (hi is None or c.accelerators_count <= hi)
        ]
        errs = [c for c in band if c.rel_error is not None]
        if not band:
            continue
        worst = max(errs, key=lambda c: abs(c.rel_error or 0.0)) if errs else None
        out[label] = {
            **summarise(band),
            "mean_signed_time_error": statistics.fmean(time_error(c) or 0.0 for c in errs) if errs else None,
            "worst_id": worst.id if worst else None,
            "worst_rel_error": worst.rel_error if worst else None,
        }
    return out


def by_group(cases: list[Case]) -> dict[str, dict[str, Any]]:
    """The :func:`summarise` figures of each group of cases."""
    groups: dict[str, list[Case]] = {}
    for c in cases:
        groups.setdefault(c.group, []).append(c)
    return {g: summarise(cs) for g, cs in groups.items()}
