"""`aiinfra datacenter`: nodes, racks, cooling, facility power, network fabric, storage bandwidth
(aiinfra.app.datacenter)."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_scenario_args
from aiinfra.report.bands import accuracy_line, band
from aiinfra.report.render import key_values
from aiinfra.report.text import GB, age_text, source_text


def _datacenter(args: argparse.Namespace) -> tuple[Any, str]:
    """Long because it lays out the command's text report line by line (formatting only: the answer and its numbers
    come from the application layer, whose result's to_dict() is the --json output)."""
    r = app.datacenter(app.load_scenario(args.scenario, args.set))
    c, rk, fab, di, storage = r.scenario.cluster, r.racks, r.fabric, r.inputs, r.storage
    nodes, node_src, limit_w, air, pue, pue_src = (
        r.nodes,
        r.node_power_source,
        r.rack_power_limit_w,
        r.air_limit,
        r.pue_ratio,
        r.pue_source,
    )
    radix, (sw_side, nic_side) = r.switch_radix, r.transceiver_rows
    tr_w, switch_w = r.transceiver_power_w, r.switch_power_w
    sw_price, sw_price_src = r.switch_price_usd, r.switch_price_source
    tr_price, tr_price_src = r.transceiver_price_usd, r.transceiver_price_source
    net_cost, modules = r.network_cost_usd, r.transceiver_modules
    obj = r.to_dict()
    acc = obj["accuracy"]
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
            f"({source_text(pue_src)})",
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
                    f"{storage.data_feed_bw_bytes_per_s / 1e6:,.2f} MB/s"
                    f"{band(acc, 'storage.data_feed_bw_bytes_per_s', lambda v: f'{v / 1e6:,.2f}')} "
                    f"({storage.tokens_per_s:,.0f} tokens/s × {storage.bytes_per_token:g} B)",
                )
            )
    text = key_values(kv, f"datacenter for {c.count} × {c.accelerator.id}")
    text += "".join(f"\nnote: {n}" for n in r.notes)
    text += "\n" + accuracy_line(acc)
    return obj, text


def register(sub: Any) -> None:
    """Add ``aiinfra datacenter``, its arguments and its handler to the CLI's subparsers ``sub``."""
    d = sub.add_parser("datacenter", help=COMMAND_HELP["datacenter"])
    add_scenario_args(d)
    d.set_defaults(handler=_datacenter)
