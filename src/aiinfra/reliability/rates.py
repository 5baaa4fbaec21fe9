"""Failure rates per component (catalog/data/reliability.yaml) and the failure rate of a whole job.

A synchronous training job stops when any of its components fails, so with independent exponential failures its
rate is the sum over components of (rate per unit-hour × units in the job): λ_job = Σ_c r_c · n_c, with n_c the job's
GPUs or nodes (Llama 3, §3.3.4: "a single GPU failure may require a restart of the entire job"; the same additive
model as Kokolis et al., "Revisiting Reliability in Large-Scale ML Research Clusters", arXiv 2410.21680, 2024).
The rows come from the caller as a :class:`ReliabilityTable` (built once per catalog at the application boundary,
app/tables.py).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from aiinfra.errors import DataError, SpecError, UnknownIdError, suggest
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.units import HOUR_S

T = TypeVar("T")

Scale = Literal["gpu", "node", "job"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ComponentRate:
    """One root cause's failure rate (one reliability.yaml row)."""

    id: str
    component: str
    kind: Literal["unexpected", "planned"]
    scale: Scale
    """What the rate is counted per: a GPU, a node or the whole job (planned restarts follow how often the code and
    data change, not the node count)."""
    needs_repair: bool
    """The failed node leaves the job until repaired (a spare replaces it, or the job waits)."""
    rate_per_hour: float
    """Failures per unit-hour (per GPU-hour or per node-hour): failures_count / (units × days × 24 h)."""
    source: str
    memory_row: bool = False
    """A GPU-memory root cause: carries the memory technology's ratio (kind: memory rows)."""
    detection: Literal["crash", "hang"] = "crash"
    """How the job learns of it: a crash surfaces at once (process exit, XID error); a hang only when the collective
    watchdog times out."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HardwareRate:
    """A generation's (kind: family) or memory technology's (kind: memory) ratio to the component rows."""

    id: str
    basis: Literal["measured", "nearest"]
    """measured: a published cluster of this hardware; nearest: none found, the nearest one's ratio."""
    rate_ratio: float
    uncertainty_ratio: float
    """u: the rates are taken to lie within [rate / u, rate × u]."""
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


@dataclass(frozen=True, slots=True, eq=False)
class ReliabilityTable:
    """reliability.yaml's rows and the catalog's accelerators (whose generation and memory type pick the ratio rows),
    read once per catalog at the application boundary; the parsed rows are memoised here."""

    rows: tuple[dict[str, Any], ...]
    parts: Mapping[str, AcceleratorSpec]
    memo: dict[str, Any] = field(default_factory=dict)

    def cached(self, key: str, build: Callable[[], T]) -> T:
        """The memoised value under ``key``, built by ``build`` on first use."""
        if key not in self.memo:
            self.memo[key] = build()
        out: T = self.memo[key]
        return out

    def accelerator(self, id_: str, field: str = "hardware.accelerator") -> AcceleratorSpec:
        """The catalog's accelerator ``id_``; UnknownIdError naming ``field`` (with close ids) otherwise."""
        if id_ in self.parts:
            return self.parts[id_]
        raise UnknownIdError(field, id_, "accelerators", suggest(id_, list(self.parts)))


def _row_rate(raw: dict[str, object]) -> float:
    units, days, count = raw["exposure_units_count"], raw["exposure_days"], raw["failures_count"]
    assert isinstance(units, int | float) and isinstance(days, int | float) and isinstance(count, int | float)
    return float(count) / (float(units) * float(days) * 24.0)


def component_rates(table: ReliabilityTable) -> tuple[ComponentRate, ...]:
    """Every rate row of reliability.yaml (check rows left out)."""

    def build() -> tuple[ComponentRate, ...]:
        out: list[ComponentRate] = []
        for raw in table.rows:
            if raw.get("kind") in ("check", "family", "memory", "storage"):
                continue
            try:
                out.append(
                    ComponentRate(
                        id=str(raw["id"]),
                        component=str(raw["component"]),
                        kind=raw["kind"],
                        scale=raw["scale"],
                        needs_repair=bool(raw["needs_repair"]),
                        rate_per_hour=_row_rate(raw),
                        source=str(raw["sources"][0]["title"]),
                        memory_row=bool(raw.get("memory_row", False)),
                        detection=raw.get("detection", "crash"),
                    )
                )
            except (KeyError, AssertionError, TypeError, IndexError) as exc:
                raise DataError(f"catalog data reliability.yaml row {raw.get('id', '?')}: {exc!r}") from exc
            if (
                out[-1].kind not in ("unexpected", "planned")
                or out[-1].scale not in ("gpu", "node", "job")
                or out[-1].detection not in ("crash", "hang")
            ):
                raise DataError(f"catalog data reliability.yaml row {raw['id']}: bad kind or scale")
        return tuple(out)

    return table.cached("reliability_rates", build)


def _hardware_rows(table: ReliabilityTable, kind: str, key: str) -> dict[str, HardwareRate]:
    def build() -> dict[str, HardwareRate]:
        out: dict[str, HardwareRate] = {}
        for raw in table.rows:
            if raw.get("kind") != kind:
                continue
            try:
                out[str(raw[key])] = HardwareRate(
                    id=str(raw["id"]),
                    basis=raw["basis"],
                    rate_ratio=float(raw["rate_ratio"]),
                    uncertainty_ratio=float(raw["uncertainty_ratio"]),
                    source=str(raw["sources"][0]["title"]),
                )
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise DataError(f"catalog data reliability.yaml row {raw.get('id', '?')}: {exc!r}") from exc
        if "*" not in out:
            raise DataError(f"catalog data reliability.yaml has no {kind} row for '*' (the fallback)")
        return out

    return table.cached(f"reliability_{kind}", build)


def hardware_rates(table: ReliabilityTable, accelerator_id: str | None) -> tuple[HardwareRate, HardwareRate]:
    """The accelerator's generation row and memory-technology row (each falls back to its '*' row); None = the
    calibration cluster's own hardware (H100 80GB HBM3)."""
    fam, mem = _hardware_rows(table, "family", "generation"), _hardware_rows(table, "memory", "memory_type")
    if accelerator_id is None:
        return fam.get("nvidia-hopper", fam["*"]), mem.get("HBM3", mem["*"])
    acc = table.accelerator(accelerator_id)
    return fam.get(acc.generation or "", fam["*"]), mem.get(acc.memory_type or "", mem["*"])


def memory_share_frac(table: ReliabilityTable, gpus_per_node: int, *, memory_ratio: float = 1.0) -> float:
    """The GPU-memory rows' share of a node's unexpected failure rate (0.17 for Llama 3's 8-GPU nodes: 72 / 419)."""
    r = job_rates(table, gpus_per_node, 1, include_planned=False, memory_ratio=memory_ratio)
    mem = {c.id for c in component_rates(table) if c.memory_row}
    return sum(v for k, v in r.by_component_per_s.items() if k in mem) / r.unexpected_per_s


def rate_uncertainty_ratio(family: HardwareRate, memory: HardwareRate, memory_share: float) -> float:
    """u of a job's whole rate: the generation's u, times the memory row's u where it acts, on the memory rows' share
    f of the rate only: u_fam · (1 + f·(u_mem − 1)) (a borrowed memory row moves its f of λ, not all of it)."""
    return family.uncertainty_ratio * (1.0 + memory_share * (memory.uncertainty_ratio - 1.0))


def check_row(table: ReliabilityTable, row_id: str) -> dict[str, object]:
    """A ``kind: check`` row of reliability.yaml (a published whole-run figure)."""
    for raw in table.rows:
        if raw.get("id") == row_id:
            return dict(raw)
    raise DataError(f"catalog data reliability.yaml has no row {row_id}")


def job_rates(
    table: ReliabilityTable,
    gpus: int,
    nodes: int,
    *,
    scale_ratio: float = 1.0,
    overrides: dict[str, float] | None = None,
    include_planned: bool = True,
    field: str = "reliability.rates_per_unit_hour",
    memory_ratio: float = 1.0,
    planned_per_hour: float | None = None,
) -> JobRates:
    """λ_job = Σ_c r_c · n_c (n_c = ``gpus``, ``nodes`` or 1 by the row's scale), per second, each unexpected rate ×
    scale_ratio (the generation, age and user ratios; GPU-memory rows also × memory_ratio); planned rows are per job
    and not scaled (``planned_per_hour`` replaces their sum). ``overrides`` replaces rows' rates (per unit-hour) by
    row id; an unknown id or a negative rate is a SpecError."""
    if gpus < 1 or nodes < 1:
        raise SpecError("hardware.count", gpus, "a job needs at least one GPU and one node", "give a positive count")
    if not scale_ratio > 0:
        raise SpecError("reliability.failure_rate_scale_ratio", scale_ratio, "must be positive", "give e.g. 1.0")
    rows = component_rates(table)
    known = [r.id for r in rows]
    for key, value in (overrides or {}).items():
        if key not in known:
            close = difflib.get_close_matches(key, known, n=3)
            raise SpecError(
                f"{field}.{key}",
                value,
                "no such component row in catalog/data/reliability.yaml",
                "use one of " + ", ".join(close or known[:5]) + (" ..." if not close else ""),
            )
        if not value >= 0:
            raise SpecError(
                f"{field}.{key}", value, "a failure rate cannot be negative", "give failures per unit-hour ≥ 0"
            )
    by: dict[str, float] = {}
    unexpected = repair = planned = 0.0
    for r in rows:
        if r.kind == "planned" and not include_planned:
            continue
        per_hour = (overrides or {}).get(r.id, r.rate_per_hour)
        if r.kind == "unexpected":
            per_hour *= scale_ratio * (memory_ratio if r.memory_row else 1.0)
        elif planned_per_hour is not None:
            per_hour = planned_per_hour * r.rate_per_hour / _planned_sum(rows)
        rate = per_hour * {"gpu": gpus, "node": nodes, "job": 1}[r.scale] / HOUR_S
        by[r.id] = rate
        if r.kind == "planned":
            planned += rate
        else:
            unexpected += rate
            repair += rate if r.needs_repair else 0.0
    return JobRates(unexpected_per_s=unexpected, repair_per_s=repair, planned_per_s=planned, by_component_per_s=by)


def _planned_sum(rows: tuple[ComponentRate, ...]) -> float:
    return sum(r.rate_per_hour for r in rows if r.kind == "planned") or 1.0


def per_node_rate_per_s(
    table: ReliabilityTable,
    gpus_per_node: int,
    *,
    scale_ratio: float = 1.0,
    memory_ratio: float = 1.0,
    overrides: dict[str, float] | None = None,
) -> float:
    """Unexpected failures per second of one node (its GPUs' rows and the node rows): a cluster of N such nodes
    fails N times as often (used for the expected cluster-wide count)."""
    return job_rates(
        table,
        gpus_per_node,
        1,
        scale_ratio=scale_ratio,
        memory_ratio=memory_ratio,
        overrides=overrides,
        include_planned=False,
    ).unexpected_per_s


@dataclass(frozen=True, kw_only=True, slots=True)
class StorageEfficiency:
    """A storage row (kind: storage): the achieved share of the rated bandwidth for checkpoint saves and loads."""

    id: str
    basis: str
    write_frac: float
    read_frac: float
    source: str


def storage_efficiency(
    table: ReliabilityTable, kind: str, field: str = "reliability.storage_kind"
) -> StorageEfficiency:
    """The storage row of ``kind`` (a SpecError naming the kinds when unknown)."""
    rows = {str(r.get("storage_kind")): r for r in table.rows if r.get("kind") == "storage"}
    if kind not in rows:
        raise SpecError(
            field,
            kind,
            "no such storage kind in catalog/data/reliability.yaml",
            "use one of " + ", ".join(sorted(rows)) + ", or give storage_efficiency_frac",
        )
    r = rows[kind]
    try:
        return StorageEfficiency(
            id=str(r["id"]),
            basis=str(r["basis"]),
            write_frac=float(r["write_efficiency_frac"]),
            read_frac=float(r["read_efficiency_frac"]),
            source=str(r["sources"][0]["title"]),
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise DataError(f"catalog data reliability.yaml row {r.get('id', '?')}: {exc!r}") from exc


def age_ratio(
    age_days: float,
    *,
    burn_in_ratio: float,
    burn_in_days: float | None,
    wear_out_onset_days: float,
    wear_out_ratio_per_year: float,
) -> float:
    """Rate multiple at a cluster age (days): 1 + (b − 1)·e^{−a/t_b} + w·max(0, a − onset)/365 (a bathtub: early-life
    failures decaying, wear-out growing linearly past the onset)."""
    burn = (burn_in_ratio - 1.0) * math.exp(-age_days / burn_in_days) if burn_in_days and burn_in_ratio > 1 else 0.0
    return 1.0 + burn + wear_out_ratio_per_year * max(0.0, age_days - wear_out_onset_days) / 365.0
