"""The cloud bill of a run: every provider and pricing kind (spot losses included), an itemised bill, energy and
carbon."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiinfra.app.base import Result, accuracy_for, flatten
from aiinfra.app.sourced import (
    best_training_estimate,
    checkpoint_size,
    electricity_figure,
    pue_figure,
    scenario_system,
    section,
    sourced,
)
from aiinfra.app.tables import price_book
from aiinfra.costing import Usage
from aiinfra.costing.carbon import intensity
from aiinfra.costing.cloud import CloudOption, cloud_options
from aiinfra.costing.cloud import offers_that_run as costing_offers_that_run
from aiinfra.costing.energy import Energy, energy
from aiinfra.costing.prices import (
    REFRESH_COMMAND,
    GridCarbon,
    InstancePrice,
    cloud_prices,
    facility,
    freshness,
    grid_carbon_rows,
)
from aiinfra.errors import SpecError
from aiinfra.report.render import jsonable
from aiinfra.specs.cost import CostInput
from aiinfra.specs.scenario import Scenario


def _node_power(ci: CostInput) -> tuple[float | None, dict[str, Any] | None]:
    if ci.node_power is not None and ci.node_power_kw is not None:
        raise SpecError("cost.node_power", ci.node_power, "given together with node_power_kw", "give one of the two")
    if ci.node_power is not None:
        row = facility(price_book(), ci.node_power, "cost.node_power")
        if row.unit != "kw":
            raise SpecError(
                "cost.node_power",
                ci.node_power,
                f"is in {row.unit}, not kw",
                "pick a power row such as dgx-h100-power-typical-low",
            )
        return row.in_unit("kw") * 1e3, sourced(row, row.value, "cost.node_power")
    if ci.node_power_kw is not None:
        return ci.node_power_kw * 1e3, sourced(None, ci.node_power_kw, "cost.node_power_kw")
    return None, None


def _usage(sc: Scenario, ci: CostInput) -> tuple[Usage, Any | None]:
    """What is billed: the cost section's usage, else the best training plan's time-to-train."""
    u = ci.usage
    count = (u.accelerators if u and u.accelerators else None) or sc.cluster.count
    ckpt, _ = checkpoint_size(sc, ci.checkpoint_bytes, assume_training=False)
    util = u.utilisation_frac if u else 1.0
    if u is not None and u.duration_s is not None:
        return Usage(
            accelerator_id=sc.cluster.accelerator.id,
            accelerator_count=count,
            duration_s=u.duration_s,
            utilisation_frac=util,
            tokens=u.tokens,
            checkpoint_bytes=ckpt,
            duration_source="cost.usage.duration_s",
        ), None
    if sc.training is not None and "reliability" in sc.source.extras:
        return _usage_with_failures(sc, count, util, u.tokens if u and u.tokens else sc.training.tokens, ckpt)
    est = best_training_estimate(sc)
    if est is None:
        raise SpecError(
            "cost.usage.duration_s",
            None,
            "no duration: the scenario has no training section (or no training planner)",
            "set cost.usage.duration_s (e.g. 2628000 for a month)",
        )
    tokens = u.tokens if u and u.tokens else (sc.training.tokens if sc.training else None)
    return Usage(
        accelerator_id=sc.cluster.accelerator.id,
        accelerator_count=count,
        duration_s=float(est.time_to_train_s),
        utilisation_frac=util,
        tokens=tokens,
        checkpoint_bytes=ckpt,
        duration_source="time-to-train of the best training plan",
    ), est


def _usage_with_failures(
    sc: Scenario, count: int, util: float, tokens: float | None, ckpt: float | None
) -> tuple[Usage, Any]:
    """The training plan's expected time-to-train under failures (the reliability section), its spare nodes held
    beside the job's accelerators."""
    from aiinfra.app.training import training_reliability
    from aiinfra.planning.training import plan_training

    report = plan_training(sc)
    est = report.estimates[0]
    rel = training_reliability(sc, report)
    assert rel is not None
    spares = rel.spare_nodes * sc.cluster.per_node
    source = (
        f"expected time-to-train with failures, checkpoints and restarts (reliability section: ETTR "
        f"{rel.expected.ettr_frac:.1%}; {est.time_to_train_s / 86400:,.1f} days without failures)"
        + (
            f", {spares} spare accelerators ({rel.spare_nodes} spare node"
            f"{'s' if rel.spare_nodes != 1 else ''}) billed too"
            if spares
            else ""
        )
    )
    return Usage(
        accelerator_id=sc.cluster.accelerator.id,
        accelerator_count=count + spares,
        duration_s=rel.expected.wall_s,
        utilisation_frac=util,
        tokens=tokens,
        checkpoint_bytes=ckpt,
        duration_source=source,
    ), est


def offers_that_run(scenario: Scenario, usage: Usage, prices: list[InstancePrice]) -> tuple[list[InstancePrice], str]:
    """The offers whose instances can run the scenario's job (costing.cloud.holds_a_node: instances that hold the
    plan's nodes), and a note on those that cannot."""
    per_node = scenario.cluster.per_node
    ok, dropped = costing_offers_that_run(prices, usage.accelerator_count, per_node)
    if not dropped:
        return prices, ""
    sizes = sorted({p.accelerators_per_instance for p in dropped})
    return ok, (
        f"{len(dropped)} offer(s) left out: their {'/'.join(map(str, sizes))}-accelerator instances cannot "
        f"hold the plan's {per_node}-accelerator nodes (scale-up domain); re-plan with hardware.per_node "
        "to price them"
    )


def option_dict(o: CloudOption) -> dict[str, Any]:
    """One offer's bill as the JSON output gives it."""
    p = o.price
    return {
        "provider": p.provider,
        "instance": p.instance,
        "region": p.region,
        "pricing": p.pricing,
        "instances": o.instances,
        "billed_hours": o.billed_hours,
        "compute_usd": o.compute_usd,
        "total_known_usd": o.total_known_usd,
        "unknown_items": list(o.unknown_items),
        "usd_per_million_tokens": o.usd_per_million_tokens,
        "price_id": p.id,
        "price_usd_per_hour": p.usd_per_hour,
        "price_usd_per_accelerator_hour": p.usd_per_accelerator_hour,
        "price_read_on": p.read_on,
        "price_age_days": p.age_days,
        "stale": p.stale,
        "refresh_command": REFRESH_COMMAND if p.stale else None,
        "price_source": p.source_title,
        "price_conflicting": p.conflicting,
        "note": ("price flagged CONFLICT in the catalog (its sources disagree); " if p.conflicting else "") + o.note,
        "spot": jsonable(o.spot) if o.spot else None,
        "energy_kwh": o.energy_kwh,
        "carbon_region": o.carbon_region,
        "co2e_kg": o.co2e_kg,
        "items": [jsonable(i) for i in o.items],
    }


@dataclass(frozen=True, kw_only=True, slots=True)
class CostResult(Result):
    """The answer of :func:`cost`."""

    scenario: Scenario
    usage: Usage
    """Accelerators, duration (and where it came from), utilisation, tokens."""
    training_estimate: Any | None
    """The best training plan when the duration is its time-to-train (aiinfra.planning.training)."""
    options: tuple[CloudOption, ...]
    """Every matching cloud offer's bill, cheapest first."""
    energy: Energy
    """Facility energy of the usage, its electricity cost and CO2e."""
    pue: dict[str, Any]
    """PUE with its source."""
    electricity_price: dict[str, Any]
    """The electricity price with its source (its value None when not given)."""
    node_power: dict[str, Any] | None
    """The node draw used instead of the system maximum, with its source; None when the maximum is used."""
    region: GridCarbon | None
    """The grid carbon intensity row of cost.carbon_region (None: per offer's region)."""
    notes: tuple[str, ...]

    @property
    def cheapest(self) -> CloudOption | None:
        """The cheapest offer whose compute cost is known (options are sorted so); None when none is."""
        return next((o for o in self.options if o.compute_usd is not None), None)

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra cost --json`` object: the usage priced, every offer's bill and the cheapest one itemised with
        the age of its price, the energy, PUE, electricity and carbon figures with their sources, and notes."""
        est, cheapest, region = self.training_estimate, self.cheapest, self.region
        obj = {
            "usage": jsonable(self.usage),
            "duration_s": self.usage.duration_s,
            "duration_source": self.usage.duration_source,
            "training_plan": {
                "time_to_train_s": est.time_to_train_s,
                "accelerator_hours": est.accelerator_hours,
                "energy_j": getattr(est, "energy_j", None),
            }
            if est is not None
            else None,
            "accelerator": self.usage.accelerator_id,
            "count": self.usage.accelerator_count,
            "options": [option_dict(o) for o in self.options],
            "cheapest": option_dict(cheapest) if cheapest else None,
            **(freshness(cheapest.price.read_on, cheapest.price.age_days) if cheapest else {}),
            "itemised_bill_cheapest": {f"{i.item}_usd": i.cost_usd for i in cheapest.items} if cheapest else None,
            "energy": jsonable(self.energy),
            "pue": self.pue,
            "node_power": self.node_power,
            "electricity_price": self.electricity_price,
            "carbon_region": sourced(region, region.g_co2e_per_kwh, "cost.carbon_region") if region else None,
            "notes": list(self.notes),
        }
        obj["accuracy"] = accuracy_for("cost", self.scenario, {**obj, "plan": getattr(est, "plan", None)})
        return obj

    def table_rows(self) -> list[dict[str, Any]]:
        """Every offer's bill, cheapest first."""
        return [flatten({k: v for k, v in option_dict(o).items() if k != "items"}) for o in self.options]


def cost(scenario: Scenario) -> CostResult:
    """Price the scenario's usage (cost.usage, else the best training plan's time-to-train) at every cloud offer
    in the catalog for its accelerator: compute, storage, egress, spot preemption losses, energy and CO2e, each
    price with the date it was read."""
    ci: CostInput = section(scenario, CostInput, "cost")
    usage, est = _usage(scenario, ci)
    pue, pue_src = pue_figure(ci.pue, "cost")
    usd_kwh, el_src = electricity_figure(ci.electricity_usd_per_kwh, ci.electricity_price, "cost")
    grid_carbon = grid_carbon_rows(price_book())
    region = intensity(ci.carbon_region, grid_carbon) if ci.carbon_region else None
    node_w, node_src = _node_power(ci)
    en = energy(usage, scenario.cluster.accelerator, scenario_system(scenario), pue, usd_kwh, region, node_w)
    listed = cloud_prices(price_book(), usage.accelerator_id, providers=ci.providers, pricing=ci.pricing)
    prices, excluded = offers_that_run(scenario, usage, listed)
    opts = cloud_options(usage, prices, ci, en.energy_kwh, region, grid_carbon=grid_carbon)
    notes = list(en.notes)
    if excluded:
        notes.append(excluded)
    if est is not None and getattr(est, "fits", True) is False:
        notes.append(
            "the training plan does NOT fit in accelerator memory (see `aiinfra train`): its time is optimistic"
        )
    if not listed:
        notes.append(
            f"no cloud prices in the catalog for {usage.accelerator_id}"
            + (" with the given providers/pricing filter" if ci.providers or ci.pricing else "")
        )
    notes.append(
        "cloud prices already include the provider's electricity; the electricity line is what the same "
        "energy costs at the given on-prem price"
    )
    return CostResult(
        scenario=scenario,
        usage=usage,
        training_estimate=est,
        options=tuple(opts),
        energy=en,
        pue=pue_src,
        electricity_price=el_src,
        node_power=node_src,
        region=region,
        notes=tuple(notes),
    )
