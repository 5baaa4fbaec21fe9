"""On-premise vs cloud total cost of ownership over time, and the breakeven month.

On-premise, cash view (what the plot and the breakeven use):
  capex (month 0)   = nodes × system price + network + storage (+ facility build: USD/kW × IT kW)
  opex per month    = power (IT kW at maximum × utilisation × PUE × 730 h × USD/kWh)
                      + colocation (USD/kW-month × IT kW at maximum: capacity is contracted, used or not)
                      + staff / 12 + maintenance fraction × capex / 12
Straight-line depreciation: capex / (years × 12) per month; amortised monthly cost = depreciation + opex.
Cloud: USD/accelerator-hour × accelerators × 730 h × utilisation for on-demand and spot (paid only for hours
used); × 730 h for reserved capacity (paid whether used or not).
Breakeven: the first whole month m ≥ 1 with capex + opex·m ≤ cloud·m, i.e. m ≥ capex / (cloud − opex)
(never when cloud ≤ opex).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiinfra.costing.energy import HOURS_PER_MONTH

if TYPE_CHECKING:
    from aiinfra.costing.prices import InstancePrice


@dataclass(frozen=True, kw_only=True, slots=True)
class OnPremInputs:
    """What owning a cluster costs, as :func:`onprem` takes it (per node, per kW and per year figures)."""

    nodes: int
    system_price_usd: float
    """Price of one node."""
    node_max_power_w: float
    """One node at full load (the IT power the facility is sized and billed for)."""
    utilisation_frac: float
    """Share of hours at full draw (scales the electricity only)."""
    pue_ratio: float
    usd_per_kwh: float
    network_capex_usd: float = 0.0
    storage_capex_usd: float = 0.0
    facility_capex_usd_per_kw: float | None = None
    """Own build: capex per kW of IT load; None = no build (colocation)."""
    colocation_usd_per_kw_month: float | None = None
    staff_usd_per_year: float = 0.0
    maintenance_frac_per_year: float = 0.0
    """Support and spares per year as a fraction of the capex."""
    years: int = 1
    """Straight-line depreciation period."""


@dataclass(frozen=True, kw_only=True, slots=True)
class OnPrem:
    """An owned cluster's capex, monthly opex and depreciation."""

    nodes: int
    it_power_max_w: float
    """All nodes at full load."""
    capex_usd: float
    capex_breakdown_usd: dict[str, float]
    """Capex by part: systems_usd, network_usd, storage_usd, facility_usd."""
    opex_usd_per_month: float
    opex_breakdown_usd_per_month: dict[str, float]
    """Opex by part: power_usd (IT max × utilisation × PUE), colocation_usd, staff_usd, maintenance_usd."""
    years: int
    depreciation_usd_per_month: float
    """capex / (years × 12)."""
    amortised_usd_per_month: float
    """Depreciation + opex: the on-prem monthly cost to compare with a cloud monthly bill."""


def onprem(i: OnPremInputs) -> OnPrem:
    """Capex (systems, network, storage, own-build facility per kW), monthly opex (power at the utilisation × PUE,
    colocation per kW, staff, maintenance) and straight-line depreciation of an owned cluster."""
    it_max_w = i.nodes * i.node_max_power_w
    capex = {
        "systems_usd": i.nodes * i.system_price_usd,
        "network_usd": i.network_capex_usd,
        "storage_usd": i.storage_capex_usd,
        "facility_usd": (i.facility_capex_usd_per_kw or 0.0) * it_max_w / 1e3,
    }
    total = sum(capex.values())
    opex = {
        "power_usd": it_max_w / 1e3 * i.utilisation_frac * i.pue_ratio * HOURS_PER_MONTH * i.usd_per_kwh,
        "colocation_usd": (i.colocation_usd_per_kw_month or 0.0) * it_max_w / 1e3,
        "staff_usd": i.staff_usd_per_year / 12.0,
        "maintenance_usd": i.maintenance_frac_per_year * total / 12.0,
    }
    monthly = sum(opex.values())
    dep = total / (i.years * 12)
    return OnPrem(
        nodes=i.nodes,
        it_power_max_w=it_max_w,
        capex_usd=total,
        capex_breakdown_usd=capex,
        opex_usd_per_month=monthly,
        opex_breakdown_usd_per_month=opex,
        years=i.years,
        depreciation_usd_per_month=dep,
        amortised_usd_per_month=dep + monthly,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class CloudLine:
    """The cheapest cloud offer of one pricing kind for the cluster, as a monthly bill."""

    pricing: str
    source_id: str
    """The prices/cloud.csv row id."""
    provider: str
    read_on: str
    age_days: int | None
    """Days since the price was read (None = undated)."""
    usd_per_accelerator_hour: float
    monthly_usd: float
    """The monthly bill (:func:`cloud_monthly_usd`): reserved every hour, on-demand and spot for the hours used."""
    instances: int = 0
    """Whole instances billed (0: not given)."""
    accelerators_billed: int = 0
    """Accelerators in those instances (≥ the cluster's count; the rest sit idle)."""
    stale: bool = False
    """The price was read more than prices.STALE_AFTER_DAYS days ago (or is undated)."""


def cloud_monthly_usd(usd_per_unit_hour: float, units: int, pricing: str, utilisation_frac: float) -> float:
    """``units`` billed at ``usd_per_unit_hour`` (whole instances at the instance price, or accelerators at the
    accelerator price); reserved capacity is paid every hour, on-demand and spot only for the hours used."""
    hours = HOURS_PER_MONTH * (1.0 if pricing.startswith("reserved") else utilisation_frac)
    return usd_per_unit_hour * units * hours


def cumulative(start_usd: float, monthly_usd: float, months: int) -> tuple[float, ...]:
    """Cumulative cost at months 0..``months``: ``start_usd`` then ``monthly_usd`` added each month."""
    return tuple(start_usd + monthly_usd * m for m in range(months + 1))


def breakeven(onprem_cum: tuple[float, ...], cloud_cum: tuple[float, ...]) -> int | None:
    """First month m ≥ 1 where cumulative on-prem cost ≤ cumulative cloud cost (None: not within the series)."""
    for m, (a, b) in enumerate(zip(onprem_cum, cloud_cum, strict=True)):
        if m > 0 and a <= b:
            return m
    return None


def breakeven_exact_months(capex_usd: float, opex_usd_per_month: float, cloud_usd_per_month: float) -> float | None:
    """capex / (cloud − opex) months; None when the cloud costs no more per month than on-prem opex."""
    gap = cloud_usd_per_month - opex_usd_per_month
    return capex_usd / gap if gap > 0 else None


@dataclass(frozen=True, kw_only=True, slots=True)
class Tco:
    """On-prem against each cloud line over a horizon: cumulative costs and breakeven months."""

    months: int
    """Horizon of the cumulative series (each has months + 1 points, month 0 first)."""
    capex_usd: float
    monthly_opex_usd: float
    onprem: OnPrem
    onprem_cumulative_usd: tuple[float, ...]
    """Capex at month 0, plus opex each month."""
    cloud: tuple[CloudLine, ...]
    cloud_cumulative_usd: dict[str, tuple[float, ...]]
    """Keyed pricing:price-row-id."""
    breakeven_month: dict[str, int | None]
    """First whole month where cumulative on-prem ≤ cumulative cloud (None: not within the horizon)."""
    breakeven_exact_months: dict[str, float | None]
    """capex / (cloud − opex), possibly beyond the horizon; None = never."""


def tco(op: OnPrem, cloud_lines: list[CloudLine], months: int) -> Tco:
    """Cumulative on-prem and cloud costs over ``months`` and, per cloud line, the exact breakeven (capex / (cloud −
    opex)) and its whole month within the horizon."""
    onprem_cum = cumulative(op.capex_usd, op.opex_usd_per_month, months)
    keys = {c.pricing + ":" + c.source_id: c for c in cloud_lines}
    cloud_cum = {k: cumulative(0.0, c.monthly_usd, months) for k, c in keys.items()}
    exact = {k: breakeven_exact_months(op.capex_usd, op.opex_usd_per_month, c.monthly_usd) for k, c in keys.items()}
    whole: dict[str, int | None] = {}
    for k, v in exact.items():
        m = max(1, math.ceil(v - 1e-9)) if v is not None else None
        whole[k] = m if m is not None and m <= months else None
    return Tco(
        months=months,
        capex_usd=op.capex_usd,
        monthly_opex_usd=op.opex_usd_per_month,
        onprem=op,
        onprem_cumulative_usd=onprem_cum,
        cloud=tuple(cloud_lines),
        cloud_cumulative_usd=cloud_cum,
        breakeven_month=whole,
        breakeven_exact_months=exact,
    )


def cheapest_cloud_lines(
    offers: list[InstancePrice], accelerators: int, per_node: int, utilisation_frac: float
) -> tuple[list[CloudLine], int]:
    """The cheapest offer of each pricing kind for ``accelerators`` (whole instances billed, each holding a whole
    node: costing.cloud's rule), cheapest first, and how many offers that rule left out."""
    from aiinfra.costing.cloud import instances_billed, offers_that_run

    usable, left_out = offers_that_run(offers, accelerators, per_node)
    best: dict[str, CloudLine] = {}
    for p in usable:
        instances = instances_billed(accelerators, p.accelerators_per_instance)
        line = CloudLine(
            pricing=p.pricing,
            source_id=p.id,
            provider=p.provider,
            read_on=p.read_on,
            age_days=p.age_days,
            usd_per_accelerator_hour=p.usd_per_accelerator_hour,
            monthly_usd=cloud_monthly_usd(p.usd_per_hour, instances, p.pricing, utilisation_frac),
            instances=instances,
            accelerators_billed=instances * p.accelerators_per_instance,
            stale=p.stale,
        )
        if line.pricing not in best or line.monthly_usd < best[line.pricing].monthly_usd:
            best[line.pricing] = line
    return sorted(best.values(), key=lambda x: x.monthly_usd), len(left_out)
