"""`aiinfra cost`, `aiinfra datacenter`, `aiinfra tco`."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from aiinfra import catalog
from aiinfra.commands import add_scenario_args
from aiinfra.cost.energy import HOURS_PER_MONTH, energy, preemption_waste_frac, young_daly_interval_s
from aiinfra.cost.fabric import fat_tree
from aiinfra.cost.prices import carbon_g_per_kwh, cloud_prices, facility
from aiinfra.cost.tco import CloudLine, cloud_monthly_usd, tco
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.report import svg as plots
from aiinfra.report.render import jsonable, key_values, table
from aiinfra.specs.common import validate
from aiinfra.specs.cost import CostInput, DatacenterInput, TcoInput
from aiinfra.specs.scenario import Scenario, load_scenario
from aiinfra.units import GB, HOUR_S


def _system(sc: Scenario) -> Any:
    return catalog.system(sc.cluster.system_id) if sc.cluster.system_id else None


def _section(args: argparse.Namespace, cls: Any, name: str) -> tuple[Scenario, Any, Any, int]:
    """Load the scenario, validate one of its sections, and resolve its system and node count."""
    sc = load_scenario(args.scenario, args.set)
    section = validate(cls, sc.source.extras.get(name) or {}, where=name)
    return sc, section, _system(sc), math.ceil(sc.cluster.count / sc.cluster.per_node)


def _duration_s(sc: Scenario, ci: CostInput) -> tuple[float, str]:
    if ci.usage and ci.usage.duration_s:
        return ci.usage.duration_s, "cost.usage.duration_s"
    if sc.training is not None:
        from aiinfra.training import plan_training

        return plan_training(sc).estimates[0].time_to_train_s, "time-to-train of the best training plan"
    raise SpecError(
        "cost.usage.duration_s",
        None,
        "no duration: the scenario has no training section",
        "set cost.usage.duration_s (e.g. 2628000 for a month)",
    )


def _pue(value: float | None) -> tuple[float, str]:
    if value is not None:
        return value, "scenario"
    v, src = facility("pue-uptime-global-2023")
    return v, src


def _cost(args: argparse.Namespace) -> tuple[Any, str]:
    sc = load_scenario(args.scenario, args.set)
    ci = validate(CostInput, sc.source.extras.get("cost") or {}, where="cost")
    dur_s, dur_src = _duration_s(sc, ci)
    util = ci.usage.utilisation_frac if ci.usage else 1.0
    pue, pue_src = _pue(ci.pue)
    g = carbon_g_per_kwh(ci.carbon_region) if ci.carbon_region else None
    en = energy(sc.cluster, _system(sc), dur_s, util, pue, ci.electricity_usd_per_kwh, g[0] if g else None)
    hours = dur_s / HOUR_S
    acc = sc.cluster.accelerator.id
    lines: list[dict[str, Any]] = []
    for p in cloud_prices(acc):
        instances = math.ceil(sc.cluster.count / p.accelerators_per_instance)
        eff_hours = hours
        note = ""
        if p.pricing == "spot":
            if ci.spot_interruptions_per_hour and ci.checkpoint_write_s and ci.restart_s:
                mtbf_s = HOUR_S / (ci.spot_interruptions_per_hour * instances)
                waste = preemption_waste_frac(ci.checkpoint_write_s, mtbf_s, ci.restart_s)
                eff_hours = hours / (1.0 - waste)
                note = (
                    f"{hours * instances * ci.spot_interruptions_per_hour:,.0f} expected interruptions; checkpoint "
                    f"every {young_daly_interval_s(ci.checkpoint_write_s, mtbf_s) / 60:.0f} min (Young/Daly); "
                    f"{waste:.1%} of time lost"
                )
            else:
                note = "preemption losses not included (set cost.spot_interruptions_per_hour etc.)"
        lines.append(
            {
                "provider": p.provider,
                "instance": p.instance,
                "region": p.region,
                "pricing": p.pricing,
                "instances": instances,
                "hours": eff_hours,
                "compute_usd": instances * p.usd_per_hour * eff_hours,
                "price_id": p.id,
                "price_read_on": p.read_on,
                "price_age_days": p.age_days,
                "note": note,
            }
        )
    lines.sort(key=lambda x: x["compute_usd"])
    months = hours / HOURS_PER_MONTH
    storage = None
    if ci.storage_usd_per_gb_month is not None:
        storage = ((ci.dataset_bytes or 0) + (ci.checkpoint_bytes or 0)) / GB * ci.storage_usd_per_gb_month * months
    egress = ci.egress_bytes / GB * ci.egress_usd_per_gb if ci.egress_bytes and ci.egress_usd_per_gb else None
    bill = {
        "compute_usd": lines[0]["compute_usd"] if lines else None,
        "storage_usd": storage,
        "egress_usd": egress,
        "networking_usd": None,
        "monitoring_usd": None,
    }
    obj = {
        "duration_s": dur_s,
        "duration_source": dur_src,
        "accelerator": acc,
        "count": sc.cluster.count,
        "options": lines,
        "itemised_bill_cheapest": bill,
        "energy": jsonable(en),
        "pue_source": pue_src,
        "carbon_source": g[1] if g else None,
    }
    rows = [
        [
            x["provider"],
            x["instance"],
            x["pricing"],
            x["instances"],
            f"{x['compute_usd']:,.0f}",
            f"{x['price_read_on']} ({x['price_age_days']} d)",
            x["note"][:70],
        ]
        for x in lines
    ]
    text = "\n".join(
        [
            f"{sc.cluster.count} × {acc} for {hours:,.1f} h ({dur_src})",
            "",
            table(["provider", "instance", "pricing", "instances", "compute USD", "price read (age)", "note"], rows)
            if rows
            else "no cloud prices in the catalog for this accelerator",
            "",
            key_values(
                [(k, "unknown (give a unit price in cost:)" if v is None else f"${v:,.0f}") for k, v in bill.items()],
                "itemised bill (cheapest option)",
            ),
            "",
            key_values(
                [
                    (
                        "IT power",
                        f"{en.it_power_w / 1e3:,.1f} kW (accelerators {en.accelerator_power_w / 1e3:,.1f} kW)",
                    ),
                    ("facility power", f"{en.facility_power_w / 1e3:,.1f} kW at PUE {pue} ({pue_src[:60]})"),
                    ("energy", f"{en.energy_kwh:,.0f} kWh"),
                    (
                        "electricity",
                        "unknown (set cost.electricity_usd_per_kwh)"
                        if en.electricity_cost_usd is None
                        else f"${en.electricity_cost_usd:,.0f}",
                    ),
                    (
                        "CO2e",
                        "unknown (set cost.carbon_region)" if en.co2e_kg is None else f"{en.co2e_kg / 1e3:,.1f} t",
                    ),
                ],
                "energy and carbon",
            ),
            *[f"note: {n}" for n in en.notes],
        ]
    )
    return obj, text


def _storage(sc: Scenario, di: DatacenterInput) -> dict[str, float]:
    """Checkpoint = bf16 weights + fp32 master weights + Adam m, v = 2 + 12 bytes per parameter (what a
    mixed-precision Adam run must save to resume, Rajbhandari et al. 2020 §3.1); data feed = tokens/s ×
    bytes per token of the training plan."""
    from aiinfra.analytic.model_figures import params_total

    out: dict[str, float] = {"checkpoint_bytes": params_total(sc.model) * 14.0}
    if di.checkpoint_write_s:
        out["checkpoint_write_bw_bytes_per_s"] = out["checkpoint_bytes"] / di.checkpoint_write_s
    if sc.training is not None:
        from aiinfra.training import plan_training

        out["data_feed_bw_bytes_per_s"] = plan_training(sc).estimates[0].tokens_per_s * di.bytes_per_token
    return out


def _datacenter(args: argparse.Namespace) -> tuple[Any, str]:
    sc, di, system, nodes = _section(args, DatacenterInput, "datacenter")
    c = sc.cluster
    if system is not None and system.power_max_w is not None:
        node_w, node_src = system.power_max_w, f"{system.id} maximum power"
    elif c.accelerator.tdp_w is not None:
        node_w, node_src = c.per_node * c.accelerator.tdp_w, "accelerators' TDP only (host power unknown)"
    else:
        raise InfeasibleError(f"{c.accelerator.id}: neither a system power nor a TDP in the catalog")
    limit_w = (di.rack_power_limit_kw or facility("rack-air-cooling-limit")[0]) * 1e3
    air_w = facility("rack-air-cooling-limit")[0] * 1e3
    per_rack = max(1, int(limit_w // node_w))
    racks = math.ceil(nodes / per_rack)
    rack_w = per_rack * node_w
    pue, _ = _pue(di.pue)
    radix = di.switch_radix or int(facility("switch-quantum2-qm9700-radix")[0])
    nics = system.nics.count if system is not None and system.nics else c.per_node
    fab = fat_tree(nodes * nics, radix, di.oversubscription)
    tr_w = (
        facility("transceiver-800g-osfp-twin")[0] / 2 * (fab.transceivers - fab.host_links)
        + facility("transceiver-400g-osfp")[0] * fab.host_links
    )
    storage = _storage(sc, di)
    obj = {
        "storage": storage,
        "nodes": nodes,
        "node_power_w": node_w,
        "node_power_source": node_src,
        "nodes_per_rack": per_rack,
        "racks": racks,
        "rack_power_w": rack_w,
        "cooling": "air" if rack_w <= air_w else "liquid",
        "it_power_w": nodes * node_w,
        "facility_power_w": nodes * node_w * pue,
        "pue_ratio": pue,
        "fabric": jsonable(fab),
        "transceiver_power_w": tr_w,
    }
    text = key_values(
        [
            ("nodes", f"{nodes} × {c.per_node} {c.accelerator.id}"),
            ("node power", f"{node_w / 1e3:.1f} kW ({node_src})"),
            (
                "racks",
                f"{racks} ({per_rack} nodes per rack, {rack_w / 1e3:.1f} kW per rack, limit {limit_w / 1e3:.0f} kW)",
            ),
            ("cooling", obj["cooling"] + f" (air limit {air_w / 1e3:.0f} kW per rack)"),
            (
                "IT / facility power",
                f"{nodes * node_w / 1e3:,.1f} kW / {nodes * node_w * pue / 1e3:,.1f} kW at PUE {pue}",
            ),
            (
                "fabric",
                f"{fab.tiers}-tier fat-tree, radix {radix}: {fab.endpoints} endpoints, {fab.switches} switches "
                f"({fab.leaf_switches} leaf, {fab.spine_switches} spine/agg, {fab.core_switches} core), "
                f"{fab.switch_links} switch links, {fab.transceivers} optical ends",
            ),
            ("transceiver power", f"{tr_w / 1e3:,.1f} kW"),
            *[(k, f"{v / 1e9:,.2f} GB/s" if k.endswith("per_s") else f"{v / 1e9:,.1f} GB") for k, v in storage.items()],
        ],
        f"datacenter for {c.count} × {c.accelerator.id}",
    )
    return obj, text


def _tco(args: argparse.Namespace) -> tuple[Any, str]:
    sc, ti, system, nodes = _section(args, TcoInput, "tco")
    c = sc.cluster
    price = ti.system_price_usd or (system.price_usd if system else None)
    if price is None:
        raise SpecError(
            "tco.system_price_usd",
            None,
            f"no published price for {system.id if system else 'this node'}",
            "set tco.system_price_usd (per node)",
        )
    if ti.electricity_usd_per_kwh is None:
        raise SpecError(
            "tco.electricity_usd_per_kwh",
            None,
            "needed for on-prem power cost",
            "set it (catalog/data/prices/electricity.csv lists sourced tariffs)",
        )
    pue, _ = _pue(ti.pue)
    capex = nodes * price * (1.0 + ti.network_capex_frac)
    en = energy(c, system, HOURS_PER_MONTH * HOUR_S, ti.utilisation_frac, pue, ti.electricity_usd_per_kwh)
    opex = {
        "power_usd": en.electricity_cost_usd or 0.0,
        "colocation_usd": (ti.colocation_usd_per_kw_month or 0.0) * en.it_power_w / ti.utilisation_frac / 1e3,
        "staff_usd": ti.staff_usd_per_year / 12.0,
        "maintenance_usd": ti.maintenance_frac_per_year * capex / 12.0,
    }
    lines = []
    for p in cloud_prices(c.accelerator.id):
        per_acc = p.usd_per_hour / p.accelerators_per_instance
        lines.append(
            CloudLine(
                pricing=p.pricing,
                source_id=p.id,
                read_on=p.read_on,
                age_days=p.age_days,
                usd_per_accelerator_hour=per_acc,
                monthly_usd=cloud_monthly_usd(per_acc, c.count, p.pricing, ti.utilisation_frac),
            )
        )
    best: dict[str, CloudLine] = {}
    for ln in lines:
        if ln.pricing not in best or ln.monthly_usd < best[ln.pricing].monthly_usd:
            best[ln.pricing] = ln
    t = tco(ti.years * 12, capex, opex, list(best.values()), ti.years)
    parts = ", ".join(f"{k[:-4]} ${v:,.0f}" for k, v in opex.items())
    obj = jsonable(t)
    text = key_values(
        [
            (
                "on-prem capex",
                f"${capex:,.0f} ({nodes} nodes × ${price:,.0f}, network/storage +{ti.network_capex_frac:.0%})",
            ),
            ("on-prem opex", f"${t.monthly_opex_usd:,.0f}/month ({parts})"),
            ("depreciation", f"${t.depreciation_usd_per_month:,.0f}/month over {ti.years} years"),
            *[
                (
                    f"cloud {ln.pricing}",
                    f"${ln.monthly_usd:,.0f}/month ({ln.source_id}, read {ln.read_on}, {ln.age_days} d old);"
                    f" breakeven month {t.breakeven_month[ln.pricing + ':' + ln.source_id] or 'never within horizon'}",
                )
                for ln in best.values()
            ],
        ],
        f"TCO over {ti.years} years at {ti.utilisation_frac:.0%} utilisation",
    )
    if args.plot:
        month_axis = [float(m) for m in range(t.months + 1)]
        series: dict[str, tuple[list[float], list[float]]] = {"on-prem": (month_axis, list(t.onprem_cumulative_usd))}
        for k, v in t.cloud_cumulative_usd.items():
            series[k.split(":")[0]] = (month_axis, list(v))
        path = plots.write(Path(args.plot), plots.line_svg("Cumulative cost", "month", series, "USD"))
        obj["plot"] = path
        text += f"\nplot: {path}"
    return obj, text


def register(sub: Any) -> None:
    p = sub.add_parser("cost", help="cloud bill per provider and pricing kind, energy and carbon")
    add_scenario_args(p)
    p.set_defaults(handler=_cost)
    d = sub.add_parser("datacenter", help="nodes, racks, cooling, facility power, network fabric")
    add_scenario_args(d)
    d.set_defaults(handler=_datacenter)
    t = sub.add_parser("tco", help="on-premise vs cloud cost over time with the breakeven month")
    add_scenario_args(t)
    t.add_argument("--plot", metavar="FILE", help="write an SVG of cumulative cost")
    t.set_defaults(handler=_tco)
