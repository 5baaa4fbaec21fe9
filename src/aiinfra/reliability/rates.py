"""Failure rates per component (catalog/data/reliability.yaml) and the failure rate of a whole job.

A synchronous training job stops when any of its components fails, so with independent exponential failures its
rate is the sum over components of (rate per unit-hour × units in the job): λ_job = Σ_c r_c · n_c, with n_c the job's
GPUs or nodes (Llama 3, §3.3.4: "a single GPU failure may require a restart of the entire job"; the same additive
model as Kokolis et al., "Revisiting Reliability in Large-Scale ML Research Clusters", arXiv 2410.21680, 2024).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from aiinfra import catalog
from aiinfra.errors import DataError, SpecError
from aiinfra.units import HOUR_S

Scale = Literal["gpu", "node"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ComponentRate:
    """One root cause's failure rate (one reliability.yaml row)."""

    id: str
    component: str
    kind: Literal["unexpected", "planned"]
    scale: Scale
    """What the rate is counted per: a GPU or a node."""
    needs_repair: bool
    """The failed node leaves the job until repaired (a spare replaces it, or the job waits)."""
    rate_per_hour: float
    """Failures per unit-hour (per GPU-hour or per node-hour): failures_count / (units × days × 24 h)."""
    source: str


@dataclass(frozen=True, kw_only=True, slots=True)
class JobRates:
    """A job's failure rates, split the way the restart model needs them."""

    unexpected_per_s: float
    """λ: unexpected interruptions per second of the job."""
    repair_per_s: float
    """The part of λ whose failed node must be repaired or replaced."""
    planned_per_s: float
    """Planned interruptions per second (maintenance)."""
    by_component_per_s: dict[str, float]
    """Each row id's contribution to λ (planned rows included)."""


def _row_rate(raw: dict[str, object]) -> float:
    units, days, count = raw["exposure_units_count"], raw["exposure_days"], raw["failures_count"]
    assert isinstance(units, int | float) and isinstance(days, int | float) and isinstance(count, int | float)
    return float(count) / (float(units) * float(days) * 24.0)


def component_rates() -> tuple[ComponentRate, ...]:
    """Every rate row of reliability.yaml (check rows left out)."""

    def build() -> tuple[ComponentRate, ...]:
        out: list[ComponentRate] = []
        for raw in catalog.raw_rows("reliability"):
            if raw.get("kind") == "check":
                continue
            try:
                out.append(ComponentRate(
                    id=str(raw["id"]), component=str(raw["component"]), kind=raw["kind"], scale=raw["scale"],
                    needs_repair=bool(raw["needs_repair"]), rate_per_hour=_row_rate(raw),
                    source=str(raw["sources"][0]["title"])))  # fmt: skip
            except (KeyError, AssertionError, TypeError, IndexError) as exc:
                raise DataError(f"catalog data reliability.yaml row {raw.get('id', '?')}: {exc!r}") from exc
            if out[-1].kind not in ("unexpected", "planned") or out[-1].scale not in ("gpu", "node"):
                raise DataError(f"catalog data reliability.yaml row {raw['id']}: bad kind or scale")
        return tuple(out)

    return catalog.active().memo("reliability_rates", build)


def check_row(row_id: str) -> dict[str, object]:
    """A ``kind: check`` row of reliability.yaml (a published whole-run figure)."""
    for raw in catalog.raw_rows("reliability"):
        if raw.get("id") == row_id:
            return dict(raw)
    raise DataError(f"catalog data reliability.yaml has no row {row_id}")


def job_rates(gpus: int, nodes: int, *, scale_ratio: float = 1.0, overrides: dict[str, float] | None = None,
              include_planned: bool = True, field: str = "reliability.rates_per_unit_hour") -> JobRates:  # fmt: skip
    """λ_job = Σ_c r_c · n_c (n_c = ``gpus`` or ``nodes`` by the row's scale), per second, each rate × scale_ratio.
    ``overrides`` replaces rows' rates (per unit-hour) by row id; an unknown id or a negative rate is a SpecError."""
    if gpus < 1 or nodes < 1:
        raise SpecError("hardware.count", gpus, "a job needs at least one GPU and one node", "give a positive count")
    if not scale_ratio > 0:
        raise SpecError("reliability.failure_rate_scale_ratio", scale_ratio, "must be positive", "give e.g. 1.0")
    rows = component_rates()
    known = [r.id for r in rows]
    for key, value in (overrides or {}).items():
        if key not in known:
            close = difflib.get_close_matches(key, known, n=3)
            raise SpecError(f"{field}.{key}", value, "no such component row in catalog/data/reliability.yaml",
                            "use one of " + ", ".join(close or known[:5]) + (" ..." if not close else ""))
        if not value >= 0:
            raise SpecError(f"{field}.{key}", value, "a failure rate cannot be negative",
                            "give failures per unit-hour ≥ 0")  # fmt: skip
    by: dict[str, float] = {}
    unexpected = repair = planned = 0.0
    for r in rows:
        if r.kind == "planned" and not include_planned:
            continue
        per_hour = (overrides or {}).get(r.id, r.rate_per_hour) * scale_ratio
        rate = per_hour * (gpus if r.scale == "gpu" else nodes) / HOUR_S
        by[r.id] = rate
        if r.kind == "planned":
            planned += rate
        else:
            unexpected += rate
            repair += rate if r.needs_repair else 0.0
    return JobRates(unexpected_per_s=unexpected, repair_per_s=repair, planned_per_s=planned, by_component_per_s=by)
