"""`aiinfra datacenter`: nodes, racks, cooling, facility power, network fabric, storage bandwidth."""

from __future__ import annotations

import argparse
import math
from typing import Any

from aiinfra.commands import add_scenario_args
from aiinfra.commands.cost_common import (
    _checkpoint_bytes,
    _pue,
    _section,
    _src_text,
    _system,
    _training_estimate,
)
from aiinfra.cost import Usage
from aiinfra.cost.datacenter import racks, storage_need
from aiinfra.cost.energy import power_draw
from aiinfra.cost.fabric import fat_tree, rail_optimised, transceiver_power_w
from aiinfra.cost.prices import DEFAULT_FACILITY, age_text, facility, purchase
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.report.render import jsonable, key_values
from aiinfra.specs.cost import DatacenterInput
from aiinfra.units import GB, HOUR_S


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


def register(sub: Any) -> None:
    d = sub.add_parser("datacenter", help="nodes, racks, cooling, facility power, network fabric, storage bandwidth")
    add_scenario_args(d)
    d.set_defaults(handler=_datacenter)
