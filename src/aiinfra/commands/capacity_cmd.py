"""`aiinfra capacity`: the cheapest deployment for a demand under SLOs (aiinfra.planning.capacity), optionally
checked by simulating one replica of it (aiinfra.sim.search)."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_option_args, add_scenario_args, options_from_args
from aiinfra.commands.progress import add_quiet_arg, progress_bar
from aiinfra.report.render import layout_label, table


def _capacity(args: argparse.Namespace) -> tuple[Any, str]:
    with progress_bar(args, "simulations", "capacity --simulate") as progress:
        r = app.capacity(app.load_scenario(args.scenario, args.set), **options_from_args(args, "capacity"),
                         progress=progress if args.simulate else None)  # fmt: skip
    options, best = r.options, r.chosen
    rows = [[o.engine, o.accelerator, layout_label(o.tp, o.ep, o.attention_dp), o.weight_precision,
             "yes" if o.speculative else "no", o.batch_per_replica,
             o.replicas, o.accelerators, o.accelerators_billed if o.instances else "",
             f"{o.ttft_s * 1e3:.0f}", f"{o.tpot_s * 1e3:.1f}",
             "unknown" if o.usd_per_hour is None else f"{o.usd_per_hour:,.0f}",
             "unknown" if o.usd_per_million_output_tokens is None else f"{o.usd_per_million_output_tokens:.2f}",
             o.verdict] for o in options]  # fmt: skip
    price = (f"price: {best.price.source_id}, " + (f"read {best.price.read_on} ({best.price.age_days} days old)"
                                                   if best.price.age_days is not None else "date unknown")
             if best.price else "price: unknown (no on-demand row in catalog/data/prices/cloud.csv)")  # fmt: skip
    text = "\n".join([
        f"cheapest: {best.accelerators} × {best.accelerator} as {best.replicas} replica(s) of "
        f"{layout_label(best.tp, best.ep, best.attention_dp)} "
        f"({best.weight_precision}) on {best.engine}, batch {best.batch_per_replica} per replica", *_billed(best),
        price, "",
        table(["engine", "accelerator", "layout", "weights", "spec", "batch", "replicas", "accelerators", "billed",
               "TTFT ms",
               "TPOT ms", "$/h", "$/M out tok", "verdict"], rows),
    ])  # fmt: skip
    text += "".join(f"\nnote: accuracy: {n}" for n in r.accuracy_notes)
    if r.simulated is not None:
        text += "\n\n" + _simulated_text(r.simulated, args.seed, best.accelerators)
    return r.to_dict(), text


def _billed(best: Any) -> list[str]:
    """Whole instances billed: accelerators used vs billed, and the idle ones (none without a price)."""
    if not best.instances or best.price is None:
        return []
    idle = best.accelerators_billed - best.accelerators
    return [f"billed: {best.instances} instance(s) of {best.price.accelerators_per_instance} = "
            f"{best.accelerators_billed} accelerators ({best.accelerators} used, {idle} idle)"]


def _billed_text(check: dict[str, Any]) -> str:
    billed = check.get("accelerators_billed")
    return "" if billed is None or billed == check["accelerators_needed"] else f" ({billed} billed as whole instances)"


def _simulated_text(sim: dict[str, Any], seed: int, analytic_accelerators: int) -> str:
    lines = [f"simulated check (seed {seed}):"]
    for r in sim.get("rejected", []):
        lines.append(f"  passed over (cheaper, misses the SLO in simulation): {r['deployment']}")
    closed = sim.get("closed_loop")
    if closed is not None:
        lines.append(f"  closed loop (each user sends the next request when its answer ends): one replica keeps "
                     f"{closed['max_users_per_replica']} users within the SLO; {closed['users']:,} users need "
                     f"{closed['replicas_needed']} replicas = {closed['accelerators_needed']} accelerators"
                     f"{_billed_text(closed)} (analytic: {analytic_accelerators})")  # fmt: skip
    label = "the same mean rate as Poisson arrivals" if closed is not None else "Poisson arrivals"
    lines.append(f"  {label}: one replica meets the SLO up to {sim['max_request_rate_per_replica_per_s']:.3g} "
                 f"requests/s; demand {sim['demand_request_rate_per_s']:.3g} requests/s needs "
                 f"{sim['replicas_needed']} replicas = {sim['accelerators_needed']} accelerators"
                 f"{_billed_text(sim)} (analytic: {analytic_accelerators})")  # fmt: skip
    return "\n".join(lines)


def register(sub: Any) -> None:
    c = sub.add_parser("capacity", help=COMMAND_HELP["capacity"])
    add_scenario_args(c)
    add_option_args(c, ["capacity"])
    add_quiet_arg(c)
    c.set_defaults(handler=_capacity)
