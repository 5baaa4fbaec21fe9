"""Cloud bill per provider and pricing kind, cheapest first, with an itemised bill.

compute    = instances × billed hours × instance USD/hour (instances = ⌈accelerators / per instance⌉;
             billed hours = usage hours, stretched by preemption losses for spot, see :mod:`aiinfra.costing.spot`)
storage    = (dataset + checkpoints kept) GB × months × USD/GB-month         (user price)
egress     = GB out × USD/GB                                                  (user price)
networking = hours × USD/hour                                                 (user price)
monitoring = months × USD/month                                               (user price)
Items whose unit price or quantity is not given are unknown and listed as such; nothing is invented.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from aiinfra.costing import Usage
from aiinfra.costing.carbon import co2e_kg, intensity_for
from aiinfra.costing.energy import HOURS_PER_MONTH
from aiinfra.costing.prices import GridCarbon, InstancePrice, age_text
from aiinfra.costing.spot import SpotRun, spot_run
from aiinfra.specs.cost import CostInput
from aiinfra.units import GB, HOUR_S


@dataclass(frozen=True, kw_only=True, slots=True)
class BillItem:
    """One line of a cloud bill: a quantity of some unit times its price."""

    item: str
    unit_count: float | None
    """How many ``unit`` are billed (None = unknown)."""
    unit: str
    unit_price_usd: float | None
    """USD per ``unit``; None = unknown (not in the scenario)."""
    cost_usd: float | None
    """None = unknown (the price or the quantity is not given)."""
    source: str
    """Price row with its age, 'scenario', or what to set."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CloudOption:
    """One cloud price row priced for a usage: instances billed, hours, the bill's items and totals, energy and CO2e."""

    price: InstancePrice
    instances: int
    """Whole instances billed (⌈accelerators / accelerators per instance⌉)."""
    billed_hours: float
    """Hours each instance is billed: the usage's duration, or on spot the longer wall-clock time with preemption
    losses."""
    compute_usd: float | None
    """None when spot preemptions make the job infeasible."""
    spot: SpotRun | None
    """The preemption model of a spot row when the scenario gives ``cost.spot``; None otherwise."""
    note: str
    """Preemption losses, idle accelerators paid for, or why the row is infeasible ('' when nothing to say)."""
    items: tuple[BillItem, ...]
    total_known_usd: float | None
    """Sum of the items with a known cost; None when the compute cost itself is unknown (infeasible spot)."""
    unknown_items: tuple[str, ...]
    """Items left out of the total because their price or quantity is not given."""
    usd_per_million_tokens: float | None
    """total_known_usd per million tokens of the usage (None when either is unknown)."""
    energy_kwh: float | None
    """Facility energy of the billed hours (spot: including lost work)."""
    carbon_region: str | None
    """Id of the grid_carbon row used (the scenario's, else the offer's region); None = unknown."""
    co2e_kg: float | None
    """Operational CO2e of energy_kwh in that region (None when either is unknown)."""


def _item(item: str, qty: float | None, unit: str, price: float | None, price_key: str, qty_key: str) -> BillItem:
    if price is None:
        return BillItem(
            item=item,
            unit_count=qty,
            unit=unit,
            unit_price_usd=None,
            cost_usd=None,
            source=f"unknown: set cost.{price_key}",
        )
    if qty is None:
        return BillItem(
            item=item,
            unit_count=None,
            unit=unit,
            unit_price_usd=price,
            cost_usd=None,
            source=f"unknown quantity: set cost.{qty_key}",
        )
    return BillItem(item=item, unit_count=qty, unit=unit, unit_price_usd=price, cost_usd=qty * price, source="scenario")


def other_items(hours: float, checkpoint_bytes: float | None, ci: CostInput) -> list[BillItem]:
    """Storage, egress, networking and monitoring for ``hours`` of use (prices from the scenario only)."""
    months = hours / HOURS_PER_MONTH
    gb_months: float | None = None
    if ci.dataset_bytes is not None or checkpoint_bytes is not None:
        stored_bytes = (ci.dataset_bytes or 0.0) + (checkpoint_bytes or 0.0) * ci.checkpoints_kept
        gb_months = stored_bytes / GB * months
    return [
        _item(
            "storage",
            gb_months,
            "GB-month",
            ci.storage_usd_per_gb_month,
            "storage_usd_per_gb_month",
            "dataset_bytes / cost.checkpoint_bytes",
        ),
        _item(
            "egress",
            ci.egress_bytes / GB if ci.egress_bytes is not None else None,
            "GB",
            ci.egress_usd_per_gb,
            "egress_usd_per_gb",
            "egress_bytes",
        ),
        _item("networking", hours, "hour", ci.networking_usd_per_hour, "networking_usd_per_hour", ""),
        _item("monitoring", months, "month", ci.monitoring_usd_per_month, "monitoring_usd_per_month", ""),
    ]


def cloud_options(
    usage: Usage,
    prices: list[InstancePrice],
    ci: CostInput,
    energy_kwh: float | None = None,
    carbon_region: GridCarbon | None = None,
    *,
    grid_carbon: Sequence[GridCarbon],
) -> list[CloudOption]:
    """Every price row priced for ``usage``; cheapest compute first (infeasible spot rows last).

    ``energy_kwh`` is the facility energy of ``usage`` (scaled per option by its billed hours);
    ``carbon_region`` overrides each option's own region for CO2; else each option's region is looked up in
    ``grid_carbon`` (costing.prices.grid_carbon_rows, read by the caller).
    """
    hours = usage.duration_s / HOUR_S
    out: list[CloudOption] = []
    for p in prices:
        instances = instances_billed(usage.accelerator_count, p.accelerators_per_instance)
        run: SpotRun | None = None
        billed = hours
        note = ""
        if p.pricing == "spot":
            if ci.spot is not None:
                s = ci.spot
                run = spot_run(
                    usage.duration_s,
                    instances,
                    s.interruptions_per_instance_per_hour,
                    s.checkpoint_write_s,
                    s.restart_s,
                )
                if run.wall_s is not None and run.expected_interruptions_count is not None:
                    billed = run.wall_s / HOUR_S
                    note = (
                        f"{run.expected_interruptions_count:,.1f} expected interruptions; checkpoint every "
                        f"{run.checkpoint_interval_s / 60:,.0f} min (Young/Daly); {run.waste_frac:.1%} of time "
                        "lost"
                    )
                else:
                    note = f"infeasible: preemptions waste {run.waste_frac:.0%} of the time (checkpoint faster)"
            else:
                note = "preemption losses not included (set cost.spot)"
        idle = instances * p.accelerators_per_instance - usage.accelerator_count
        if idle > 0:
            note = "; ".join(x for x in (note, f"pays for {idle} idle accelerator(s)") if x)
        compute = instances * p.usd_per_hour * billed if run is None or run.feasible else None
        items = [
            BillItem(
                item="compute",
                unit_count=instances * billed,
                unit="instance-hour",
                unit_price_usd=p.usd_per_hour,
                cost_usd=compute,
                source=f"{p.id} ({age_text(p).removeprefix(p.id + ', ')})",
            ),
            *other_items(billed, usage.checkpoint_bytes, ci),
        ]
        known = [i.cost_usd for i in items if i.cost_usd is not None]
        total = sum(known) if compute is not None else None
        region = carbon_region or intensity_for(p.provider, p.region, grid_carbon)
        kwh = energy_kwh * billed / hours if energy_kwh is not None and hours > 0 else None
        out.append(
            CloudOption(
                price=p,
                instances=instances,
                billed_hours=billed,
                compute_usd=compute,
                spot=run,
                note=note,
                items=tuple(items),
                total_known_usd=total,
                unknown_items=tuple(i.item for i in items if i.cost_usd is None),
                usd_per_million_tokens=total / usage.tokens * 1e6 if total is not None and usage.tokens else None,
                energy_kwh=kwh,
                carbon_region=region.id if region is not None else None,
                co2e_kg=co2e_kg(kwh, region.g_co2e_per_kwh) if kwh is not None and region is not None else None,
            )
        )
    return sorted(out, key=lambda o: (o.compute_usd is None, o.compute_usd or 0.0, o.price.id))


def holds_a_node(p: InstancePrice, accelerators: int, per_node: int) -> bool:
    """The whole-node rule of `cost` and `tco`: a job of one accelerator runs on any instance; a larger one was
    planned on nodes of ``per_node`` accelerators joined by their scale-up fabric (NVLink), so it needs instances
    that hold a whole node (or the whole job, when it is smaller than a node) — smaller ones would split those
    groups over a slower network the plan did not assume. (The price rows do not say which instances have
    InfiniBand/EFA-class scale-out networking; that is not checked.)"""
    return accelerators <= 1 or p.accelerators_per_instance >= min(per_node, accelerators)


def instances_billed(accelerators: int, per_instance: int) -> int:
    """Whole instances are billed: ⌈accelerators / accelerators per instance⌉."""
    return math.ceil(accelerators / per_instance)


def offers_that_run(
    prices: list[InstancePrice], accelerators: int, per_node: int
) -> tuple[list[InstancePrice], list[InstancePrice]]:
    """(the offers whose instances run the job, those left out) under :func:`holds_a_node`."""
    ok = [p for p in prices if holds_a_node(p, accelerators, per_node)]
    return ok, [p for p in prices if p not in ok]
