"""`aiinfra tco`: on-premise vs cloud cost over time with the breakeven month."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from aiinfra.commands import add_scenario_args
from aiinfra.commands.cost_common import (
    _electricity,
    _pue,
    _section,
    _src_text,
    _system,
)
from aiinfra.cost import Usage
from aiinfra.cost.energy import HOURS_PER_MONTH, power_draw
from aiinfra.cost.prices import DEFAULT_FACILITY, age_text, cloud_prices, facility, purchase_for
from aiinfra.cost.tco import CloudLine, OnPremInputs, cloud_monthly_usd, onprem, tco
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.report.render import jsonable, key_values
from aiinfra.report.tco_svg import tco_svg
from aiinfra.specs.cost import TcoInput
from aiinfra.units import HOUR_S


def _tco(args: argparse.Namespace) -> tuple[Any, str]:
    sc, ti = _section(args, TcoInput, "tco")
    c = sc.cluster
    system = _system(sc)
    nodes = math.ceil(c.count / c.per_node)
    bought = purchase_for(c.accelerator.id, "system")
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
    usd_kwh, el_src = _electricity(ti.electricity_usd_per_kwh, ti.electricity_price, "tco")
    if usd_kwh is None:
        raise SpecError(
            "tco.electricity_usd_per_kwh",
            None,
            "needed for the on-prem power cost",
            "set it, or tco.electricity_price to an id of prices/electricity.csv",
        )
    pue, pue_src = _pue(ti.pue, "tco")
    usage = Usage(accelerator_id=c.accelerator.id, accelerator_count=c.count, duration_s=HOUR_S)
    pd = power_draw(usage, c.accelerator, system)
    if pd.node_max_power_w is None:
        raise InfeasibleError(f"{c.accelerator.id}: node power unknown (no system power, no TDP in the catalog)")
    years_row = facility(DEFAULT_FACILITY["depreciation_years"]) if ti.years is None else None
    years = ti.years or int(years_row.value if years_row else 1)
    colo_row = None
    colo = ti.colocation_usd_per_kw_month
    if colo is None and ti.facility_capex_usd_per_kw is None:
        colo_row = facility(DEFAULT_FACILITY["colocation"])
        colo = colo_row.value
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
    best: dict[str, CloudLine] = {}
    for p in cloud_prices(c.accelerator.id, providers=ti.providers, field="tco.providers"):
        line = CloudLine(
            pricing=p.pricing,
            source_id=p.id,
            provider=p.provider,
            read_on=p.read_on,
            age_days=p.age_days,
            usd_per_accelerator_hour=p.usd_per_accelerator_hour,
            monthly_usd=cloud_monthly_usd(p.usd_per_accelerator_hour, c.count, p.pricing, ti.utilisation_frac),
        )
        if line.pricing not in best or line.monthly_usd < best[line.pricing].monthly_usd:
            best[line.pricing] = line
    lines = sorted(best.values(), key=lambda x: x.monthly_usd)
    months = ti.horizon_months or years * 12
    t = tco(op, lines, months)
    notes = [*pd.notes]
    if ti.network_capex_usd is None and ti.network_capex_frac == 0:
        notes.append("network capex not counted (set tco.network_capex_usd or tco.network_capex_frac)")
    if not lines:
        notes.append(f"no cloud prices in the catalog for {c.accelerator.id}")
    notes.append("spot lines assume no preemption losses (see `aiinfra cost` with cost.spot)")
    obj = jsonable(t)
    obj.update(
        {
            "system_price_usd": price,
            "system_price_source": price_src,
            "depreciation_years": years,
            "depreciation_source": age_text(years_row) if years_row else "scenario",
            "pue": pue_src,
            "electricity_price": el_src,
            "colocation_usd_per_kw_month": colo,
            "colocation_source": age_text(colo_row) if colo_row else ("scenario" if colo is not None else None),
            "notes": notes,
        }
    )
    capex_parts = ", ".join(f"{k[:-4]} ${v:,.0f}" for k, v in op.capex_breakdown_usd.items() if v)
    opex_parts = ", ".join(f"{k[:-4]} ${v:,.0f}" for k, v in op.opex_breakdown_usd_per_month.items())
    kv = [
        ("on-prem capex", f"${op.capex_usd:,.0f} ({capex_parts}; {nodes} nodes × ${price:,.0f} from {price_src})"),
        ("on-prem opex", f"${op.opex_usd_per_month:,.0f}/month ({opex_parts})"),
        (
            "  power",
            f"{op.it_power_max_w / 1e3:,.1f} kW IT max × {ti.utilisation_frac:.0%} × PUE {pue:g} × "
            f"{HOURS_PER_MONTH:g} h × ${usd_kwh:g}/kWh ({_src_text(el_src)}; PUE {_src_text(pue_src)})",
        ),
        (
            "  colocation",
            "own facility (capex)"
            if colo is None
            else f"${colo:g}/kW-month × {op.it_power_max_w / 1e3:,.1f} kW ({obj['colocation_source']})",
        ),
        (
            "depreciation",
            f"${op.depreciation_usd_per_month:,.0f}/month over {years} years "
            f"({obj['depreciation_source']}); amortised on-prem ${op.amortised_usd_per_month:,.0f}/month",
        ),
    ]
    for ln in lines:
        key = ln.pricing + ":" + ln.source_id
        be, ex = t.breakeven_month[key], t.breakeven_exact_months[key]
        when = (
            f"breakeven month {be} ({ex:.1f})"
            if be is not None
            else f"breakeven after the {months}-month horizon ({ex:,.1f} months)"
            if ex is not None
            else "on-prem never cheaper (cloud ≤ on-prem opex)"
        )
        kv.append(
            (
                f"cloud {ln.pricing}",
                f"${ln.monthly_usd:,.0f}/month (${ln.usd_per_accelerator_hour:.3g}/GPU-h, "
                f"{ln.source_id}, read {ln.read_on}, {ln.age_days} d old); {when}",
            )
        )
    text = key_values(
        kv,
        f"TCO: {nodes} × {system.id if system else c.accelerator.id} over {months} months at "
        f"{ti.utilisation_frac:.0%} utilisation",
    )
    text += "".join(f"\nnote: {n}" for n in notes)
    if args.plot:
        path = Path(args.plot)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            tco_svg(
                t,
                f"{nodes} × {system.id if system else c.accelerator.id} vs cloud, "
                f"{ti.utilisation_frac:.0%} utilisation",
            )
        )
        obj["plot"] = str(path)
        text += f"\nplot: {path}"
    return obj, text


def register(sub: Any) -> None:
    t = sub.add_parser("tco", help="on-premise vs cloud cost over time with the breakeven month")
    add_scenario_args(t)
    t.add_argument("--plot", metavar="FILE", help="write an SVG of cumulative cost")
    t.set_defaults(handler=_tco)
