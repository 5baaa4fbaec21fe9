"""On-premise vs cloud cost over time: capex, opex, depreciation, each cloud pricing kind and the breakeven
month."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from aiinfra.app.base import Result, accuracy_for
from aiinfra.app.sourced import electricity_figure, pue_figure, scenario_system, section
from aiinfra.app.tables import price_book
from aiinfra.costing import Usage
from aiinfra.costing.energy import power_draw
from aiinfra.costing.prices import (
    DEFAULT_FACILITY,
    FacilityFigure,
    age_text,
    cloud_prices,
    facility,
    freshness,
    purchase_for,
)
from aiinfra.costing.tco import CloudLine, OnPrem, OnPremInputs, Tco, cheapest_cloud_lines, onprem
from aiinfra.costing.tco import tco as tco_table
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.report.render import jsonable
from aiinfra.specs.cost import CostInput, TcoInput
from aiinfra.specs.hardware import SystemSpec
from aiinfra.specs.scenario import Scenario
from aiinfra.units import HOUR_S


@dataclass(frozen=True, kw_only=True, slots=True)
class TcoResult(Result):
    """The answer of :func:`tco`."""

    scenario: Scenario
    inputs: TcoInput
    """The scenario's tco section."""
    system: SystemSpec | None
    """The catalog system the nodes are (None when the accelerator has none)."""
    nodes: int
    """Nodes owned: ⌈accelerators / per node⌉."""
    onprem: OnPrem
    """Capex and opex of owning the nodes, itemised."""
    cloud_lines: tuple[CloudLine, ...]
    """The cheapest offer of each pricing kind, cheapest first."""
    table: Tco
    """Cumulative cost per month of on-prem and each cloud line, and the breakeven months."""
    months: int
    """Horizon of the cumulative series: tco.horizon_months, else the depreciation period."""
    years: int
    """Straight-line depreciation period."""
    system_price_usd: float
    """Price of one node."""
    system_price_source: str
    """Where the node price comes from (the scenario, or the catalog's system or purchase row)."""
    depreciation_source: str
    """"scenario", or the facility row of the default period with its age."""
    pue: dict[str, Any]
    """The PUE with its source."""
    electricity_price: dict[str, Any]
    """The electricity price with its source."""
    usd_per_kwh: float
    pue_ratio: float
    colocation_usd_per_kw_month: float | None
    """Colocation price per kW of IT load; None when the facility is an own build."""
    colocation_source: str | None
    """"scenario", the facility row with its age, or None for an own build."""
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra tco --json`` object: the TCO table (capex, opex, cumulative series, breakevens) plus each input
        figure with its source, notes, ``accuracy`` and the age of the cheapest cloud price."""
        obj: dict[str, Any] = jsonable(self.table)
        obj.update(
            {
                "system_price_usd": self.system_price_usd,
                "system_price_source": self.system_price_source,
                "depreciation_years": self.years,
                "depreciation_source": self.depreciation_source,
                "pue": self.pue,
                "electricity_price": self.electricity_price,
                "colocation_usd_per_kw_month": self.colocation_usd_per_kw_month,
                "colocation_source": self.colocation_source,
                "notes": list(self.notes),
                "accuracy": accuracy_for("tco", self.scenario, {}),
            }
        )
        if self.cloud_lines:  # the age of the cheapest cloud line's price (costing.prices.freshness)
            obj.update(freshness(self.cloud_lines[0].read_on, self.cloud_lines[0].age_days))
        return obj

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per month: cumulative on-prem cost and each cloud line's."""
        d = jsonable(self.table)
        rows = []
        for m in range(len(d["onprem_cumulative_usd"])):
            row: dict[str, Any] = {"month": m, "onprem_cumulative_usd": d["onprem_cumulative_usd"][m]}
            for key, series in d["cloud_cumulative_usd"].items():
                row[f"{key}_cumulative_usd"] = series[m]
            rows.append(row)
        return rows


def tco_providers(sc: Scenario, ti: TcoInput) -> tuple[tuple[str, ...], str]:
    """The cloud providers the rent lines compare, and the field that named them: tco.providers, else the
    scenario's cost.providers (one filter for `cost` and `tco` unless tco says otherwise), else all."""
    if ti.providers or "cost" not in sc.source.extras:
        return ti.providers, "tco.providers"
    ci: CostInput = section(sc, CostInput, "cost")
    return ci.providers, "cost.providers"


def _node_price(ti: TcoInput, system: SystemSpec | None, accelerator_id: str) -> tuple[float, str]:
    """USD per node and where it comes from: the scenario's, the catalog system's price, else the dated purchase
    row of a node of this accelerator (prices/purchase.csv); a SpecError when none is known."""
    bought = purchase_for(price_book(), accelerator_id, "system")
    price = ti.system_price_usd or (system.price_usd if system else None) or (bought.unit_price_usd if bought else None)
    if price is None:
        raise SpecError(
            "tco.system_price_usd",
            None,
            f"no published price for {system.id if system else 'this node'} in the catalog",
            "set tco.system_price_usd (USD per node)",
        )
    price_src = (
        "scenario"
        if ti.system_price_usd
        else f"{system.id} catalog price"
        if system and system.price_usd
        else age_text(bought)
        if bought
        else ""
    )
    return price, price_src


def _depreciation_years(ti: TcoInput) -> tuple[int, FacilityFigure | None]:
    """The scenario's years, else the catalog's default depreciation period (and its row)."""
    years_row = facility(price_book(), DEFAULT_FACILITY["depreciation_years"]) if ti.years is None else None
    return ti.years or int(years_row.value if years_row else 1), years_row


def _colocation(ti: TcoInput) -> tuple[float | None, FacilityFigure | None]:
    """USD per kW-month of colocation: the scenario's, else (without a facility capex) the catalog's default row."""
    if ti.colocation_usd_per_kw_month is None and ti.facility_capex_usd_per_kw is None:
        row = facility(price_book(), DEFAULT_FACILITY["colocation"])
        return row.value, row
    return ti.colocation_usd_per_kw_month, None


def tco(scenario: Scenario) -> TcoResult:
    """Own the scenario's nodes (price, power at the utilisation, PUE, colocation or facility capex, staff,
    maintenance, depreciation) vs rent the same accelerators from each cloud pricing kind; the cumulative cost
    month by month and the breakeven month."""
    sc = scenario
    ti: TcoInput = section(sc, TcoInput, "tco")
    providers, providers_field = tco_providers(sc, ti)
    c = sc.cluster
    system = scenario_system(sc)
    nodes = math.ceil(c.count / c.per_node)
    price, price_src = _node_price(ti, system, c.accelerator.id)
    usd_kwh, el_src = electricity_figure(ti.electricity_usd_per_kwh, ti.electricity_price, "tco")
    if usd_kwh is None:
        raise SpecError(
            "tco.electricity_usd_per_kwh",
            None,
            "needed for the on-prem power cost",
            "set it, or tco.electricity_price to an id of prices/electricity.csv",
        )
    pue, pue_src = pue_figure(ti.pue, "tco")
    usage = Usage(accelerator_id=c.accelerator.id, accelerator_count=c.count, duration_s=HOUR_S)
    pd = power_draw(usage, c.accelerator, system)
    if pd.node_max_power_w is None:
        raise InfeasibleError(f"{c.accelerator.id}: node power unknown (no system power, no TDP in the catalog)")
    years, years_row = _depreciation_years(ti)
    colo, colo_row = _colocation(ti)
    network = ti.network_capex_usd if ti.network_capex_usd is not None else ti.network_capex_frac * nodes * price
    op = onprem(
        OnPremInputs(
            nodes=nodes,
            system_price_usd=price,
            node_max_power_w=pd.node_max_power_w,
            utilisation_frac=ti.utilisation_frac,
            pue_ratio=pue,
            usd_per_kwh=usd_kwh,
            network_capex_usd=network,
            storage_capex_usd=ti.storage_capex_usd,
            facility_capex_usd_per_kw=ti.facility_capex_usd_per_kw,
            colocation_usd_per_kw_month=colo,
            staff_usd_per_year=ti.staff_usd_per_year,
            maintenance_frac_per_year=ti.maintenance_frac_per_year,
            years=years,
        )
    )
    offers = cloud_prices(price_book(), c.accelerator.id, providers=providers, field=providers_field)
    lines, left_out = cheapest_cloud_lines(offers, c.count, c.per_node, ti.utilisation_frac)
    months = ti.horizon_months or years * 12
    t = tco_table(op, lines, months)
    notes = [*pd.notes]
    if ti.network_capex_usd is None and ti.network_capex_frac == 0:
        notes.append("network capex not counted (set tco.network_capex_usd or tco.network_capex_frac)")
    if left_out:
        need = min(c.per_node, c.count)
        notes.append(
            f"{left_out} cloud offer(s) left out: their instances hold fewer than the {need} accelerators of one node"
        )
    if not lines:
        notes.append(f"no cloud prices in the catalog for {c.accelerator.id}")
    notes.append("spot lines assume no preemption losses (see `aiinfra cost` with cost.spot)")
    return TcoResult(
        scenario=sc,
        inputs=ti,
        system=system,
        nodes=nodes,
        onprem=op,
        cloud_lines=tuple(lines),
        table=t,
        months=months,
        years=years,
        system_price_usd=price,
        system_price_source=price_src,
        depreciation_source=age_text(years_row) if years_row else "scenario",
        pue=pue_src,
        electricity_price=el_src,
        usd_per_kwh=usd_kwh,
        pue_ratio=pue,
        colocation_usd_per_kw_month=colo,
        colocation_source=age_text(colo_row) if colo_row else ("scenario" if colo is not None else None),
        notes=tuple(notes),
    )
