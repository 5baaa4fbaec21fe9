"""`aiinfra cost`: cloud bill per provider and pricing kind, energy and carbon (aiinfra.app.cost)."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_scenario_args
from aiinfra.report.bands import accuracy_line, band, seconds_band
from aiinfra.report.render import key_values, table
from aiinfra.report.text import HOUR_S, age_text, human_seconds, source_text

_REFRESH = "aiinfra prices refresh"


def _money(v: float | None) -> str:
    if v is None:
        return "unknown"
    return f"${v:,.2f}" if abs(v) < 100 else f"${v:,.0f}"


def _cost(args: argparse.Namespace) -> tuple[Any, str]:
    """Long because it lays out the command's text report line by line (formatting only: the answer and its numbers
    come from the application layer, whose result's to_dict() is the --json output)."""
    r = app.cost(app.load_scenario(args.scenario, args.set))
    usage, opts, cheapest, en = r.usage, r.options, r.cheapest, r.energy
    hours = usage.duration_s / HOUR_S
    obj = r.to_dict()
    acc = obj["accuracy"]
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
            ("date unknown" if o.price.age_days is None else f"{o.price.read_on} ({o.price.age_days} d)")
            + (" STALE" if o.price.stale else ""),
            ("CONFLICTING price; " if o.price.conflicting else "") + o.note,
        ]
        for o in opts
    ]
    lines = [
        f"{usage.accelerator_count} × {usage.accelerator_id} for {hours:,.1f} h = {human_seconds(usage.duration_s)}"
        f"{seconds_band(acc, 'duration_s', usage.duration_s)} ({usage.duration_source}), utilisation "
        f"{usage.utilisation_frac:.0%}",
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
            (
                "total",
                total
                + band(acc, "cheapest.total_known_usd", _money)
                + (f" (unknown: {', '.join(cheapest.unknown_items)})" if cheapest.unknown_items else ""),
            )
        )
        if cheapest.usd_per_million_tokens is not None:
            bill.append(
                (
                    "per million tokens",
                    f"${cheapest.usd_per_million_tokens:,.4g}"
                    + band(acc, "cheapest.usd_per_million_tokens", lambda v: f"${v:,.4g}"),
                )
            )
        lines += ["", key_values(bill, f"itemised bill, cheapest: {cheapest.price.id}")]
    lines += ["", key_values(_energy_lines(en, r.pue, r.electricity_price, r.region, acc), "energy and carbon")]
    lines += [f"note: {n}" for n in r.notes]
    lines.append(accuracy_line(acc))
    stale = sum(1 for o in opts if o.price.stale)
    if stale:
        lines.append(
            f"note: {stale} of {len(opts)} offers' prices are STALE (read more than "
            f"{obj['stale_after_days']} days ago or undated): `{_REFRESH}` reads current offers"
        )
    return obj, "\n".join(lines)


def _qty(q: float | None, unit: str) -> str:
    return f"? {unit}" if q is None else f"{q:,.1f} {unit}"


def _unit_price(p: float | None) -> str:
    return "?" if p is None else f"${p:,.4g}"


def _energy_lines(
    en: Any, pue_src: dict[str, Any], el_src: dict[str, Any], region: Any, acc: dict[str, Any] | None = None
) -> list[tuple[str, str]]:
    def kw(w: float | None) -> str:
        return "unknown" if w is None else f"{w / 1e3:,.2f} kW"

    return [
        ("accelerators", kw(en.accelerator_power_w)),
        ("host overhead", kw(en.host_overhead_power_w)),
        ("IT power", kw(en.it_power_w)),
        ("facility power", f"{kw(en.facility_power_w)} at PUE {en.pue_ratio:g} ({source_text(pue_src)})"),
        (
            "energy",
            "unknown"
            if en.energy_kwh is None
            else f"{en.energy_kwh:,.0f} kWh{band(acc, 'energy.energy_kwh', lambda v: f'{v:,.0f}')}",
        ),
        (
            "electricity",
            "unknown (set cost.electricity_usd_per_kwh or cost.electricity_price)"
            if en.electricity_cost_usd is None
            else f"${en.electricity_cost_usd:,.0f} at ${en.usd_per_kwh:g}/kWh ({source_text(el_src)})",
        ),
        (
            "CO2e",
            "per option above (set cost.carbon_region for one region)"
            if en.co2e_kg is None
            else f"{en.co2e_kg / 1e3:,.2f} t{band(acc, 'energy.co2e_kg', lambda v: f'{v / 1e3:,.2f}')} at "
            f"{en.g_co2e_per_kwh:g} g/kWh ({age_text(region)})",
        ),
    ]


def register(sub: Any) -> None:
    """Add ``aiinfra cost``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("cost", help=COMMAND_HELP["cost"])
    add_scenario_args(p)
    p.set_defaults(handler=_cost)
