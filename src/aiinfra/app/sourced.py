"""Figures the cost, datacenter and TCO questions share: their scenario section, and each figure with where it came
from (a dated catalog row or the scenario)."""

from __future__ import annotations

from typing import Any

from aiinfra import catalog
from aiinfra.app.tables import price_book
from aiinfra.costing.prices import DEFAULT_FACILITY, Dated, electricity, facility
from aiinfra.errors import SpecError
from aiinfra.reliability.checkpoint import checkpoint_bytes_per_param
from aiinfra.specs.common import validate
from aiinfra.specs.hardware import SystemSpec
from aiinfra.specs.scenario import Scenario


def scenario_system(sc: Scenario) -> SystemSpec | None:
    """The catalog system the scenario runs on (None when it names none)."""
    return catalog.system(sc.cluster.system_id) if sc.cluster.system_id else None


def section(sc: Scenario, cls: Any, name: str) -> Any:
    """The scenario's ``name`` section (cost, datacenter, tco) validated as ``cls``."""
    return validate(cls, sc.source.extras.get(name) or {}, where=name)


def sourced(row: Dated | None, value: float | None, label: str) -> dict[str, Any]:
    """Where a figure came from: a dated catalog row or the scenario."""
    if row is None:
        return {"value": value, "source": "scenario" if value is not None else "unknown", "key": label}
    return {"value": value, "source": row.source_title, "id": row.id, "read_on": row.read_on, "age_days": row.age_days}


def pue_figure(value: float | None, where: str) -> tuple[float, dict[str, Any]]:
    """PUE: the scenario's, else the catalog's facility default row."""
    if value is not None:
        return value, sourced(None, value, f"{where}.pue")
    row = facility(price_book(), DEFAULT_FACILITY["pue"])
    return row.value, sourced(row, row.value, f"{where}.pue")


def electricity_figure(value: float | None, id_: str | None, where: str) -> tuple[float | None, dict[str, Any]]:
    """Electricity price: given in USD/kWh, or a row of prices/electricity.csv by id (not both)."""
    if value is not None and id_ is not None:
        raise SpecError(
            f"{where}.electricity_price", id_, "given together with electricity_usd_per_kwh", "give one of the two"
        )
    if id_ is not None:
        row = electricity(price_book(), id_, f"{where}.electricity_price")
        return row.usd_per_kwh, sourced(row, row.usd_per_kwh, f"{where}.electricity_price")
    return value, sourced(None, value, f"{where}.electricity_usd_per_kwh")


def best_training_estimate(sc: Scenario) -> Any | None:
    """The training planner's best plan; None without a training section. Planner errors propagate."""
    if sc.training is None:
        return None
    from aiinfra.planning.training import plan_training

    return plan_training(sc).estimates[0]


def checkpoint_size(sc: Scenario, given: float | None, assume_training: bool) -> tuple[float | None, str]:
    """One checkpoint: given, else weights + optimizer state of the training section (datacenter sizing assumes
    bf16 + Adam when the scenario has none)."""
    if given is not None:
        return given, "scenario"
    from aiinfra.analytic.model_figures import params_total

    job = sc.training
    if job is None:
        if not assume_training:
            return None, "unknown (no training section)"
        per = checkpoint_bytes_per_param("bf16", "adam")
        return params_total(sc.model) * per, f"{per:g} B/parameter (no training section: bf16 + Adam assumed)"
    if job.finetune is not None and job.finetune.method != "full":
        return None, f"unknown for {job.finetune.method} (adapter checkpoints): set checkpoint_bytes"
    per = checkpoint_bytes_per_param(job.precision, job.optimizer)
    return params_total(sc.model) * per, f"{per:g} B/parameter ({job.precision} weights, fp32 master, {job.optimizer})"
