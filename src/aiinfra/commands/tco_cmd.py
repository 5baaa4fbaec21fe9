"""`aiinfra tco`: on-premise vs cloud cost over time with the breakeven month (aiinfra.app.tco)."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_scenario_args
from aiinfra.report import plots
from aiinfra.report.bands import accuracy_line
from aiinfra.report.render import key_values
from aiinfra.report.text import HOURS_PER_MONTH, source_text


def _tco(args: argparse.Namespace) -> tuple[Any, str]:
    if args.plot:
        plots.plot_dir(args.plot)  # a bad --plot is refused before any work
    r = app.tco(app.load_scenario(args.scenario, args.set))
    op, t, lines, ti, nodes, system = r.onprem, r.table, r.cloud_lines, r.inputs, r.nodes, r.system
    price, price_src, years, months = r.system_price_usd, r.system_price_source, r.years, r.months
    pue, usd_kwh, colo, notes = r.pue_ratio, r.usd_per_kwh, r.colocation_usd_per_kw_month, r.notes
    pue_src, el_src = r.pue, r.electricity_price
    c = r.scenario.cluster
    obj = r.to_dict()
    capex_parts = ", ".join(f"{k[:-4]} ${v:,.0f}" for k, v in op.capex_breakdown_usd.items() if v)
    opex_parts = ", ".join(f"{k[:-4]} ${v:,.0f}" for k, v in op.opex_breakdown_usd_per_month.items())
    kv = [
        ("on-prem capex", f"${op.capex_usd:,.0f} ({capex_parts}; {nodes} nodes × ${price:,.0f} from {price_src})"),
        ("on-prem opex", f"${op.opex_usd_per_month:,.0f}/month ({opex_parts})"),
        (
            "  power",
            f"{op.it_power_max_w / 1e3:,.1f} kW IT max × {ti.utilisation_frac:.0%} × PUE {pue:g} × "
            f"{HOURS_PER_MONTH:g} h × ${usd_kwh:g}/kWh ({source_text(el_src)}; PUE {source_text(pue_src)})",
        ),
        (
            "  colocation",
            "own facility (capex)"
            if colo is None
            else f"${colo:g}/kW-month × {op.it_power_max_w / 1e3:,.1f} kW ({r.colocation_source})",
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
                f"${ln.monthly_usd:,.0f}/month ({ln.instances} instance(s), {ln.accelerators_billed} GPUs billed, "
                f"${ln.usd_per_accelerator_hour:.3g}/GPU-h, "
                f"{ln.source_id}, "
                + (f"read {ln.read_on}, {ln.age_days} d old" if ln.age_days is not None else "date unknown")
                + (", STALE" if ln.stale else "")
                + f"); {when}",
            )
        )
    text = key_values(
        kv,
        f"TCO: {nodes} × {system.id if system else c.accelerator.id} over {months} months at "
        f"{ti.utilisation_frac:.0%} utilisation",
    )
    text += "".join(f"\nnote: {n}" for n in notes)
    text += "\n" + accuracy_line(obj["accuracy"])
    if any(ln.stale for ln in lines):
        text += (
            f"\nnote: STALE cloud prices (read more than {obj['stale_after_days']} days ago or undated): "
            "`aiinfra prices refresh` reads current offers"
        )
    if args.plot:
        paths = plots.tco_plot(
            plots.plot_dir(args.plot),
            t,
            f"{nodes} × {system.id if system else c.accelerator.id} vs cloud, {ti.utilisation_frac:.0%} utilisation",
        )
        obj["plots"] = paths
        text += "".join(f"\nplot: {p}" for p in paths)
    return obj, text


def register(sub: Any) -> None:
    """Add ``aiinfra tco``, its arguments and its handler to the CLI's subparsers ``sub``."""
    t = sub.add_parser("tco", help=COMMAND_HELP["tco"])
    add_scenario_args(t)
    t.add_argument("--plot", metavar="DIR", help="write the cumulative-cost plot (tco.png, tco.svg) into DIR")
    t.set_defaults(handler=_tco)
