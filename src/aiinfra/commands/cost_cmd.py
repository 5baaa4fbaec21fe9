"""`aiinfra cost`: cloud bill per provider and pricing kind, energy and carbon (plain inputs -> aiinfra.cost)."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra.commands import add_scenario_args
from aiinfra.commands.cost_common import (
    _checkpoint_bytes,
    _electricity,
    _pue,
    _section,
    _src,
    _src_text,
    _system,
    _training_estimate,
)
from aiinfra.cost import Usage
from aiinfra.cost.carbon import intensity
from aiinfra.cost.cloud import CloudOption, cloud_options
from aiinfra.cost.energy import energy
from aiinfra.cost.prices import age_text, cloud_prices, facility
from aiinfra.errors import SpecError
from aiinfra.report.render import jsonable, key_values, table
from aiinfra.specs.cost import CostInput
from aiinfra.specs.scenario import Scenario
from aiinfra.units import HOUR_S, human_seconds


def _node_power(ci: CostInput) -> tuple[float | None, dict[str, Any] | None]:
    if ci.node_power is not None and ci.node_power_kw is not None:
        raise SpecError("cost.node_power", ci.node_power, "given together with node_power_kw", "give one of the two")
    if ci.node_power is not None:
        row = facility(ci.node_power, "cost.node_power")
        if row.unit != "kw":
            raise SpecError(
                "cost.node_power",
                ci.node_power,
                f"is in {row.unit}, not kw",
                "pick a power row such as dgx-h100-power-typical-low",
            )
        return row.in_unit("kw") * 1e3, _src(row, row.value, "cost.node_power")
    if ci.node_power_kw is not None:
        return ci.node_power_kw * 1e3, _src(None, ci.node_power_kw, "cost.node_power_kw")
    return None, None


def _usage(sc: Scenario, ci: CostInput) -> tuple[Usage, Any | None]:
    u = ci.usage
    count = (u.accelerators if u and u.accelerators else None) or sc.cluster.count
    ckpt, _ = _checkpoint_bytes(sc, ci.checkpoint_bytes, assume_training=False)
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
    est = _training_estimate(sc)
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


def _money(v: float | None) -> str:
    if v is None:
        return "unknown"
    return f"${v:,.2f}" if abs(v) < 100 else f"${v:,.0f}"


def _option_json(o: CloudOption) -> dict[str, Any]:
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
        "price_source": p.source_title,
        "note": o.note,
        "spot": jsonable(o.spot) if o.spot else None,
        "energy_kwh": o.energy_kwh,
        "carbon_region": o.carbon_region,
        "co2e_kg": o.co2e_kg,
        "items": [jsonable(i) for i in o.items],
    }


def _cost(args: argparse.Namespace) -> tuple[Any, str]:
    sc, ci = _section(args, CostInput, "cost")
    usage, est = _usage(sc, ci)
    system = _system(sc)
    pue, pue_src = _pue(ci.pue, "cost")
    usd_kwh, el_src = _electricity(ci.electricity_usd_per_kwh, ci.electricity_price, "cost")
    region = intensity(ci.carbon_region) if ci.carbon_region else None
    node_w, node_src = _node_power(ci)
    en = energy(usage, sc.cluster.accelerator, system, pue, usd_kwh, region, node_w)
    prices = cloud_prices(usage.accelerator_id, providers=ci.providers, pricing=ci.pricing)
    opts = cloud_options(usage, prices, ci, en.energy_kwh, region)
    hours = usage.duration_s / HOUR_S
    cheapest = next((o for o in opts if o.compute_usd is not None), None)
    notes = list(en.notes)
    if est is not None and getattr(est, "fits", True) is False:
        notes.append(
            "the training plan does NOT fit in accelerator memory (see `aiinfra train`): its time is optimistic"
        )
    if not prices:
        notes.append(
            f"no cloud prices in the catalog for {usage.accelerator_id}"
            + (" with the given providers/pricing filter" if ci.providers or ci.pricing else "")
        )
    notes.append(
        "cloud prices already include the provider's electricity; the electricity line is what the same "
        "energy costs at the given on-prem price"
    )
    obj: dict[str, Any] = {
        "usage": jsonable(usage),
        "duration_s": usage.duration_s,
        "duration_source": usage.duration_source,
        "training_plan": {
            "time_to_train_s": est.time_to_train_s,
            "accelerator_hours": est.accelerator_hours,
            "energy_j": getattr(est, "energy_j", None),
        }
        if est is not None
        else None,
        "accelerator": usage.accelerator_id,
        "count": usage.accelerator_count,
        "options": [_option_json(o) for o in opts],
        "cheapest": _option_json(cheapest) if cheapest else None,
        "itemised_bill_cheapest": {f"{i.item}_usd": i.cost_usd for i in cheapest.items} if cheapest else None,
        "energy": jsonable(en),
        "pue": pue_src,
        "node_power": node_src,
        "electricity_price": el_src,
        "carbon_region": _src(region, region.g_co2e_per_kwh, "cost.carbon_region") if region else None,
        "notes": notes,
    }
    rows = [
        [
            o.price.provider,
            o.price.instance,
            o.price.pricing,
            o.price.region,
            o.instances,
            f"{o.billed_hours:,.1f}",
            _money(o.compute_usd),
            _money(o.total_known_usd),
            "unknown" if o.co2e_kg is None else f"{o.co2e_kg / 1e3:,.2f}",
            f"{o.price.read_on} ({o.price.age_days} d)",
            o.note,
        ]
        for o in opts
    ]
    lines = [
        f"{usage.accelerator_count} × {usage.accelerator_id} for {hours:,.1f} h = {human_seconds(usage.duration_s)} "
        f"({usage.duration_source}), utilisation {usage.utilisation_frac:.0%}",
        "",
        table(
            [
                "provider",
                "instance",
                "pricing",
                "region",
                "inst",
                "hours",
                "compute",
                "total known",
                "CO2e t",
                "price read (age)",
                "note",
            ],
            rows,
        )
        if rows
        else "no cloud prices match",
    ]
    if cheapest is not None:
        bill = [
            (
                i.item,
                f"{_money(i.cost_usd)}  ({_qty(i.unit_count, i.unit)} × {_unit_price(i.unit_price_usd)}; {i.source})",
            )
            for i in cheapest.items
        ]
        total = f"≥ {_money(cheapest.total_known_usd)}" if cheapest.unknown_items else _money(cheapest.total_known_usd)
        bill.append(
            ("total", total + (f" (unknown: {', '.join(cheapest.unknown_items)})" if cheapest.unknown_items else ""))
        )
        if cheapest.usd_per_million_tokens is not None:
            bill.append(("per million tokens", f"${cheapest.usd_per_million_tokens:,.4g}"))
        lines += ["", key_values(bill, f"itemised bill, cheapest: {cheapest.price.id}")]
    lines += ["", key_values(_energy_lines(en, pue_src, el_src, region), "energy and carbon")]
    lines += [f"note: {n}" for n in notes]
    return obj, "\n".join(lines)


def _qty(q: float | None, unit: str) -> str:
    return f"? {unit}" if q is None else f"{q:,.1f} {unit}"


def _unit_price(p: float | None) -> str:
    return "?" if p is None else f"${p:,.4g}"


def _energy_lines(en: Any, pue_src: dict[str, Any], el_src: dict[str, Any], region: Any) -> list[tuple[str, str]]:
    def kw(w: float | None) -> str:
        return "unknown" if w is None else f"{w / 1e3:,.2f} kW"

    return [
        ("accelerators", kw(en.accelerator_power_w)),
        ("host overhead", kw(en.host_overhead_power_w)),
        ("IT power", kw(en.it_power_w)),
        ("facility power", f"{kw(en.facility_power_w)} at PUE {en.pue_ratio:g} ({_src_text(pue_src)})"),
        ("energy", "unknown" if en.energy_kwh is None else f"{en.energy_kwh:,.0f} kWh"),
        (
            "electricity",
            "unknown (set cost.electricity_usd_per_kwh or cost.electricity_price)"
            if en.electricity_cost_usd is None
            else f"${en.electricity_cost_usd:,.0f} at ${en.usd_per_kwh:g}/kWh ({_src_text(el_src)})",
        ),
        (
            "CO2e",
            "per option above (set cost.carbon_region for one region)"
            if en.co2e_kg is None
            else f"{en.co2e_kg / 1e3:,.2f} t at {en.g_co2e_per_kwh:g} g/kWh ({age_text(region)})",
        ),
    ]


def register(sub: Any) -> None:
    p = sub.add_parser("cost", help="cloud bill per provider and pricing kind (spot preemptions), energy and carbon")
    add_scenario_args(p)
    p.set_defaults(handler=_cost)
