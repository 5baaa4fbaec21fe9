"""`aiinfra cost`, `aiinfra datacenter`, `aiinfra tco`: build plain inputs from the scenario, call aiinfra.cost."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from aiinfra import catalog
from aiinfra.commands import add_scenario_args
from aiinfra.cost import Usage
from aiinfra.cost.carbon import intensity
from aiinfra.cost.cloud import CloudOption, cloud_options
from aiinfra.cost.datacenter import checkpoint_bytes_per_param, racks, storage_need
from aiinfra.cost.energy import HOURS_PER_MONTH, energy, power_draw
from aiinfra.cost.fabric import fat_tree, rail_optimised, transceiver_power_w
from aiinfra.cost.prices import (
    DEFAULT_FACILITY,
    Dated,
    age_text,
    cloud_prices,
    electricity,
    facility,
    purchase,
    purchase_for,
)
from aiinfra.cost.tco import CloudLine, OnPremInputs, cloud_monthly_usd, onprem, tco
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.report.render import jsonable, key_values, table
from aiinfra.report.tco_svg import tco_svg
from aiinfra.specs.common import validate
from aiinfra.specs.cost import CostInput, DatacenterInput, TcoInput
from aiinfra.specs.hardware import SystemSpec
from aiinfra.specs.scenario import Scenario, load_scenario
from aiinfra.units import GB, HOUR_S, human_seconds


def _system(sc: Scenario) -> SystemSpec | None:
    return catalog.system(sc.cluster.system_id) if sc.cluster.system_id else None


def _section(args: argparse.Namespace, cls: Any, name: str) -> tuple[Scenario, Any]:
    sc = load_scenario(args.scenario, args.set)
    return sc, validate(cls, sc.source.extras.get(name) or {}, where=name)


def _src(row: Dated | None, value: float | None, label: str) -> dict[str, Any]:
    """Where a figure came from: a dated catalog row or the scenario."""
    if row is None:
        return {"value": value, "source": "scenario" if value is not None else "unknown", "key": label}
    return {"value": value, "source": row.source_title, "id": row.id, "read_on": row.read_on, "age_days": row.age_days}


def _src_text(s: dict[str, Any]) -> str:
    if "id" in s:
        return f"{s['id']}, read {s['read_on']}, {s['age_days']} days old"
    return s["source"] if s["source"] != "scenario" else f"scenario {s['key']}"


def _pue(value: float | None, where: str) -> tuple[float, dict[str, Any]]:
    if value is not None:
        return value, _src(None, value, f"{where}.pue")
    row = facility(DEFAULT_FACILITY["pue"])
    return row.value, _src(row, row.value, f"{where}.pue")


def _electricity(value: float | None, id_: str | None, where: str) -> tuple[float | None, dict[str, Any]]:
    if value is not None and id_ is not None:
        raise SpecError(
            f"{where}.electricity_price", id_, "given together with electricity_usd_per_kwh", "give one of the two"
        )
    if id_ is not None:
        row = electricity(id_, f"{where}.electricity_price")
        return row.usd_per_kwh, _src(row, row.usd_per_kwh, f"{where}.electricity_price")
    return value, _src(None, value, f"{where}.electricity_usd_per_kwh")


def _training_estimate(sc: Scenario) -> Any | None:
    """The training planner's best plan (``aiinfra.api.plan_training`` when present, else ``aiinfra.training``);
    None when the planner is not available. Planner errors (infeasible, bad input) propagate."""
    if sc.training is None:
        return None
    plan: Any = None
    try:
        from aiinfra import api

        plan = getattr(api, "plan_training", None)
        if plan is None:
            from aiinfra import training

            plan = getattr(training, "plan_training", None)
    except ImportError:
        return None
    if plan is None:
        return None
    result = plan(sc)
    estimates = getattr(result, "estimates", None)
    return estimates[0] if estimates else result


def _checkpoint_bytes(sc: Scenario, given: float | None, assume_training: bool) -> tuple[float | None, str]:
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


def _unit_price_src(value: float | None, id_: str | None, field: str) -> tuple[float | None, str | None]:
    if value is not None and id_ is not None:
        raise SpecError(f"{field}_purchase_id", id_, f"given together with {field}_price_usd", "give one of the two")
    if id_ is not None:
        row = purchase(id_, f"{field}_purchase_id")
        return row.unit_price_usd, age_text(row)
    return value, "scenario" if value is not None else None


def _datacenter(args: argparse.Namespace) -> tuple[Any, str]:
    sc, di = _section(args, DatacenterInput, "datacenter")
    c = sc.cluster
    system = _system(sc)
    nodes = math.ceil(c.count / c.per_node)
    usage = Usage(accelerator_id=c.accelerator.id, accelerator_count=c.count, duration_s=HOUR_S)
    pd = power_draw(usage, c.accelerator, system)
    if pd.node_max_power_w is None:
        raise InfeasibleError(
            f"{c.accelerator.id}: neither a system power nor a TDP in the catalog — node power unknown"
        )
    node_src = (
        f"{system.id} maximum power"
        if system is not None and system.power_max_w is not None
        else "accelerators' TDP only (host power unknown)"
    )
    air = facility(DEFAULT_FACILITY["rack_air_limit"])
    limit_w = di.rack_power_limit_kw * 1e3 if di.rack_power_limit_kw else air.value * 1e3
    pue, pue_src = _pue(di.pue, "datacenter")
    rk = racks(nodes, pd.node_max_power_w, limit_w, air.value * 1e3, pue)
    radix_row = facility(DEFAULT_FACILITY["switch_radix"]) if di.switch_radix is None else None
    radix = di.switch_radix or int(radix_row.value if radix_row else 0)
    nics = di.nics_per_node or (system.nics.count if system is not None and system.nics else c.per_node)
    if di.topology == "rail-optimised":
        fab = rail_optimised(nodes, nics, radix, di.oversubscription)
    else:
        fab = fat_tree(nodes * nics, radix, di.oversubscription)
    sw_side = facility(DEFAULT_FACILITY["transceiver_switch_side"])
    nic_side = facility(DEFAULT_FACILITY["transceiver_nic_side"])
    # a twin-port 800G OSFP serves two 400G switch ports
    tr_w = transceiver_power_w(fab, sw_side.value / 2.0, nic_side.value)
    sw_price, sw_price_src = _unit_price_src(di.switch_price_usd, di.switch_purchase_id, "datacenter.switch")
    tr_price, tr_price_src = _unit_price_src(
        di.transceiver_price_usd, di.transceiver_purchase_id, "datacenter.transceiver"
    )
    modules = fab.host_links + math.ceil((fab.transceivers - fab.host_links) / 2)
    switch_w = fab.switches * di.switch_power_w if di.switch_power_w is not None else None
    net_cost = {
        "switches_usd": fab.switches * sw_price if sw_price is not None else None,
        "transceivers_usd": modules * tr_price if tr_price is not None else None,
    }
    ckpt, ckpt_src = _checkpoint_bytes(sc, di.checkpoint_bytes, assume_training=True)
    est = _training_estimate(sc) if sc.training is not None else None
    storage = (
        storage_need(
            ckpt, ckpt_src, di.checkpoint_write_s, est.tokens_per_s if est is not None else None, di.bytes_per_token
        )
        if ckpt is not None
        else None
    )
    obj: dict[str, Any] = {
        **jsonable(rk),
        "node_power_source": node_src,
        "rack_power_limit_source": "scenario" if di.rack_power_limit_kw else age_text(air),
        "air_cooling_limit_source": age_text(air),
        "pue": pue_src,
        "nics_per_node": nics,
        "fabric": jsonable(fab),
        "switch_radix_source": age_text(radix_row) if radix_row else "scenario",
        "transceiver_power_w": tr_w,
        "transceiver_power_sources": [age_text(sw_side), age_text(nic_side)],
        "transceiver_modules": modules,
        "switch_power_w": switch_w,
        "network_power_known_w": tr_w + (switch_w or 0.0),
        "network_cost_usd": net_cost,
        "switch_price_source": sw_price_src,
        "transceiver_price_source": tr_price_src,
        "storage": jsonable(storage) if storage else None,
        "notes": [
            *pd.notes,
            *(["switch power not in the catalog: set datacenter.switch_power_w"] if switch_w is None else []),
        ],
    }
    fab_text = (
        f"{fab.tiers}-tier {fab.topology}, radix {radix}, {fab.rails} rail(s), {fab.oversubscription_ratio:g}:1 — "
        f"{fab.endpoints:,} endpoints, {fab.switches:,} switches ({fab.leaf_switches} leaf, "
        f"{fab.spine_switches} spine/agg, {fab.core_switches} core), {fab.switch_links:,} switch links, "
        f"{fab.transceivers:,} optical ends"
    )
    kv = [
        ("nodes", f"{nodes} × {c.per_node} {c.accelerator.id}"),
        ("node power", f"{rk.node_power_w / 1e3:.2f} kW ({node_src})"),
        (
            "racks",
            f"{rk.racks} ({rk.nodes_per_rack} nodes per rack, {rk.rack_power_w / 1e3:.1f} kW per rack, limit "
            f"{limit_w / 1e3:g} kW from {obj['rack_power_limit_source']})",
        ),
        ("cooling", f"{rk.cooling} (air-cooling limit {air.value:g} kW per rack: {age_text(air)})"),
        (
            "IT / facility power",
            f"{rk.it_power_w / 1e3:,.1f} kW / {rk.facility_power_w / 1e3:,.1f} kW at PUE {pue:g} "
            f"({_src_text(pue_src)})",
        ),
        ("fabric", fab_text),
        (
            "transceiver power",
            f"{tr_w / 1e3:,.1f} kW ({sw_side.value:g} W per twin-port switch module, "
            f"{nic_side.value:g} W per NIC module)",
        ),
        (
            "switch power",
            "unknown (set datacenter.switch_power_w)"
            if switch_w is None
            else f"{switch_w / 1e3:,.1f} kW ({fab.switches} × {di.switch_power_w:g} W, scenario)",
        ),
        (
            "switch cost",
            "unknown (set datacenter.switch_price_usd or switch_purchase_id)"
            if sw_price is None
            else f"${net_cost['switches_usd']:,.0f} ({fab.switches} × ${sw_price:,.0f}; {sw_price_src})",
        ),
        (
            "transceiver cost",
            "unknown (set datacenter.transceiver_price_usd or transceiver_purchase_id)"
            if tr_price is None
            else f"${net_cost['transceivers_usd']:,.0f} ({modules:,} modules × ${tr_price:,.0f}; {tr_price_src})",
        ),
    ]
    if storage is not None:
        kv.append(("checkpoint", f"{storage.checkpoint_bytes / GB:,.1f} GB ({storage.checkpoint_source})"))
        kv.append(
            (
                "checkpoint write",
                "set datacenter.checkpoint_write_s for a bandwidth"
                if storage.checkpoint_write_bw_bytes_per_s is None
                else f"{storage.checkpoint_write_bw_bytes_per_s / GB:,.1f} GB/s to write it in "
                f"{storage.checkpoint_write_s:g} s",
            )
        )
        if storage.data_feed_bw_bytes_per_s is not None and storage.tokens_per_s is not None:
            kv.append(
                (
                    "data feed",
                    f"{storage.data_feed_bw_bytes_per_s / 1e6:,.2f} MB/s ({storage.tokens_per_s:,.0f} "
                    f"tokens/s × {storage.bytes_per_token:g} B)",
                )
            )
    text = key_values(kv, f"datacenter for {c.count} × {c.accelerator.id}")
    text += "".join(f"\nnote: {n}" for n in obj["notes"] if n)
    obj["notes"] = [n for n in obj["notes"] if n]
    return obj, text


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
    for p in cloud_prices(c.accelerator.id, providers=ti.providers):
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
    p = sub.add_parser("cost", help="cloud bill per provider and pricing kind (spot preemptions), energy and carbon")
    add_scenario_args(p)
    p.set_defaults(handler=_cost)
    d = sub.add_parser("datacenter", help="nodes, racks, cooling, facility power, network fabric, storage bandwidth")
    add_scenario_args(d)
    d.set_defaults(handler=_datacenter)
    t = sub.add_parser("tco", help="on-premise vs cloud cost over time with the breakeven month")
    add_scenario_args(t)
    t.add_argument("--plot", metavar="FILE", help="write an SVG of cumulative cost")
    t.set_defaults(handler=_tco)
