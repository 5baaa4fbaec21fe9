"""Calibration rows (``calibration.yaml`` of a catalog overlay): factors fitted to a user's own measurements.

``aiinfra calibrate`` writes them; every planner reads them through the tables its cluster carries
(specs/tables.py), so ``--catalog-overlay DIR`` (CLI), ``catalog=`` (API) and the web app's overlay apply them like
any other overlay row. A row scales the tool's kernel-time model on one accelerator (and, for serving, one engine):

* ``compute_efficiency_scale``: achieved fraction of peak FLOP/s = the catalog's efficiency curve × this factor,
  so compute-bound kernel time is divided by it (prefill GEMMs and attention; training's compute and bubble);
* ``memory_efficiency_scale``: achieved memory bandwidth = the catalog's fitted bandwidth × this factor (decode's
  weight and KV streaming, element-wise kernels);
* ``communication_efficiency_scale``: achieved collective bandwidth = the measured NCCL curve × this factor;
* ``step_overhead_s``: fixed time added to every engine iteration or training step (scheduler, sampling,
  host-side launch work the kernel model does not count).

A shipped catalog has no calibration rows, so every factor is neutral (1, 1, 1, 0 s) and nothing changes.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from aiinfra.errors import SpecError
from aiinfra.specs.calibration import NEUTRAL, SCALE_FIELDS, SCALE_MAX, SCALE_MIN, Factors

__all__ = [
    "NEUTRAL",
    "SCALE_FIELDS",
    "SCALE_MAX",
    "SCALE_MIN",
    "Factors",
    "check_rows",
    "factors_for",
    "note",
    "rows_table",
]

FILE = "calibration.yaml"
"""The overlay file holding the rows."""

Applies = Literal["inference", "training"]


def note(f: Factors) -> str:
    """What a result says when a calibration row priced it."""
    return (
        f"calibrated by {f.source} (overlay calibration.yaml): compute efficiency "
        f"×{f.compute_efficiency_scale:.3g}, memory ×{f.memory_efficiency_scale:.3g}, communication "
        f"×{f.communication_efficiency_scale:.3g}, {f.step_overhead_s * 1e3:.3g} ms per step"
    )


def parse_row(row: dict[str, Any], where: str) -> tuple[Applies, str, str | None, Factors]:
    """(applies_to, accelerator, engine, factors) of one row, or a SpecError naming the file, row and field."""
    row_id = str(row.get("id") or "?")
    at = f"{where}[{row_id}]"
    applies = row.get("applies_to")
    if applies not in ("inference", "training"):
        raise SpecError(
            f"{at}.applies_to",
            applies,
            "must be inference or training",
            "write applies_to: inference (serving results) or training (step times)",
        )
    acc = row.get("accelerator")
    if not isinstance(acc, str) or not acc:
        raise SpecError(
            f"{at}.accelerator",
            acc,
            "every calibration row names the accelerator it was measured on",
            "add accelerator: <catalog id>",
        )
    engine = row.get("engine")
    if engine is not None and not isinstance(engine, str):
        raise SpecError(f"{at}.engine", engine, "must be an engine name", "write e.g. engine: vllm")
    raw = row.get("factors")
    if not isinstance(raw, dict):
        raise SpecError(
            f"{at}.factors",
            raw,
            "a calibration row holds its fitted factors",
            "add factors: {compute_efficiency_scale: ..., memory_efficiency_scale: ..., "
            "communication_efficiency_scale: ..., step_overhead_s: ...}",
        )
    known = (*SCALE_FIELDS, "step_overhead_s")
    for key, value in raw.items():
        if key not in known:
            raise SpecError(f"{at}.factors.{key}", value, "not a calibration factor", f"use {', '.join(known)}")
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(float(value))
        if ok and key in SCALE_FIELDS:
            ok = SCALE_MIN <= float(value) <= SCALE_MAX
        if ok and key == "step_overhead_s":
            ok = 0.0 <= float(value) <= 10.0
        if not ok:
            bounds = f"{SCALE_MIN} … {SCALE_MAX}" if key in SCALE_FIELDS else "0 … 10 s"
            raise SpecError(
                f"{at}.factors.{key}",
                value,
                f"must be a number in {bounds}",
                "re-run aiinfra calibrate, or correct the value",
            )
    factors = Factors.of({k: float(v) for k, v in raw.items()}, source=row_id)
    return applies, acc, engine, factors


def check_rows(rows: tuple[dict[str, Any], ...], where: str) -> None:
    """Validate every row of an overlay's calibration.yaml (called when the overlay is read)."""
    for row in rows:
        parse_row(row, where)


def factors_for(applies: Applies, accelerator: str, engine: str | None = None) -> Factors:
    """The factors that apply to ``accelerator`` (and serving ``engine``) in the active catalog: a row naming that
    engine first, then one naming none; neutral when there is none (what a cluster's
    :meth:`~aiinfra.specs.tables.DomainTables.factors_for` answers)."""
    from aiinfra.catalog.tables import domain_tables

    return domain_tables().factors_for(applies, accelerator, engine)


def rows_table(cat: Any) -> dict[tuple[str, str, str | None], Factors]:
    """(applies_to, accelerator, engine) -> factors of every calibration row of ``cat`` (the first row of a key)."""
    out: dict[tuple[str, str, str | None], Factors] = {}
    for row in cat.file_rows(FILE):
        applies, acc, engine, factors = parse_row(row, FILE)
        out.setdefault((applies, acc, engine), factors)
    return out
