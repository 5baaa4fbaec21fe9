"""`aiinfra capacity`: the cheapest deployment for a demand under SLOs (aiinfra.planning.capacity), optionally
checked by simulating one replica of it (aiinfra.sim.search)."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_option_args, add_scenario_args, options_from_args
from aiinfra.commands.progress import add_quiet_arg, progress_bar
from aiinfra.report.bands import accuracy_line, band
from aiinfra.report.render import layout_label, table


def _capacity(args: argparse.Namespace) -> tuple[Any, str]:
    """Long because it lays out the command's text report line by line (formatting only: the answer and its numbers
    come from the application layer, whose result's to_dict() is the --json output)."""
    with progress_bar(args, "simulations", "capacity --simulate") as progress:
        r = app.capacity(
            app.load_scenario(args.scenario, args.set),
            **options_from_args(args, "capacity"),
            progress=progress if args.simulate else None,
        )
    options, best = r.options, r.chosen
    obj = r.to_dict()
    acc = obj["accuracy"]
    rows = [
        [
            o.engine,
            o.accelerator,
            layout_label(o.tp, o.ep, o.attention_dp),
            o.weight_precision,
            "yes" if o.speculative else "no",
            "" if o.users_per_replica is None else o.users_per_replica,
            o.batch_per_replica,
            o.replicas,
            o.accelerators,
            o.accelerators_billed if o.instances else "",
            *(
                ("—" if v is None else f"{v * 1e3:.{d}f}")
                for v, d in ((o.ttft_s, 0), (o.ttft_p90_s, 0), (o.tpot_s, 1), (o.tpot_p99_s, 1))
            ),
            "unknown" if o.usd_per_hour is None else f"{o.usd_per_hour:,.0f}",
            "unknown" if o.usd_per_million_output_tokens is None else f"{o.usd_per_million_output_tokens:.2f}",
            o.verdict,
        ]
        for o in options
    ]
    price = (
        f"price: {best.price.source_id}, "
        + (
            f"read {best.price.read_on} ({best.price.age_days} days old)"
            if best.price.age_days is not None
            else "date unknown"
        )
        + (", STALE: run `aiinfra prices refresh`" if best.price.stale else "")
        if best.price
        else "price: unknown (no on-demand row in catalog/data/prices/cloud.csv)"
    )
    text = "\n".join(
        [
            f"cheapest: {best.accelerators}{band(acc, 'accelerators', lambda v: f'{v:,.0f}')} × {best.accelerator} "
            f"as {best.replicas} replica(s) of "
            f"{layout_label(best.tp, best.ep, best.attention_dp)} "
            f"({best.weight_precision}) on {best.engine}, "
            + (f"{best.users_per_replica} users and " if best.users_per_replica is not None else "")
            + f"{best.batch_per_replica} requests in flight per replica",
            *_billed(best),
            price,
            "",
            table(
                [
                    "engine",
                    "accelerator",
                    "layout",
                    "weights",
                    "spec",
                    "users/replica",
                    "in flight",
                    "replicas",
                    "accelerators",
                    "billed",
                    "TTFT ms",
                    "TTFT p90 ms",
                    "TPOT ms",
                    "TPOT p99 ms",
                    "$/h",
                    "$/M out tok",
                    "verdict",
                ],
                rows,
            ),
        ]
    )
    text += "".join(f"\nnote: accuracy: {n}" for n in r.accuracy_notes)
    text += "\n" + accuracy_line(acc)
    if r.disaggregated is not None:
        text += "\n\n" + _disaggregated_text(r)
    if r.fleet is not None:
        text = _fleet_text(r.fleet, r.simulated, acc) + "\n\n" + text.split("\n\n", 1)[1]
    elif r.simulated is not None and "disaggregated" in r.simulated:
        s = r.simulated
        text += (
            f"\nsimulated {s['disaggregated']} at {s['request_rate_per_s']:.3g} requests/s (seed {args.seed}): "
            f"TTFT p90 {s['ttft_p90_s'] * 1e3:.0f} ms, TPOT p99 {s['tpot_p99_s'] * 1e3:.1f} ms, SLO "
            + ("met" if s["slo_met"] else "MISSED: " + "; ".join(s["misses"]))
        )
    elif r.simulated is not None:
        text += "\n\n" + _simulated_text(r.simulated, args.seed, best.accelerators)
    if r.day is not None:
        text += "\n\n" + _day_text(r.day)
    return obj, text


def _disaggregated_text(r: Any) -> str:
    """Prefill/decode pools beside the aggregated choice, and which one the answer recommends."""
    cands = r.disaggregated
    if not cands:
        return "disaggregated prefill/decode: no candidate (" + "; ".join(r.disaggregation_rejected[:2]) + ")"
    d = cands[0]
    head = (
        f"recommended: {r.recommended} — disaggregated {d.ratio} ({d.prefill_replicas} prefill + "
        f"{d.decode_replicas} decode replicas of tp{d.tp} {d.weight_precision} on {d.accelerator}) "
        + ("unknown" if d.usd_per_hour is None else f"${d.usd_per_hour:,.0f}/h")
        + (f" vs aggregated ${r.chosen.usd_per_hour:,.0f}/h" if r.chosen.usd_per_hour is not None else "")
    )
    rows = [
        [
            c.accelerator,
            f"tp{c.tp}",
            c.weight_precision,
            c.ratio,
            c.prefill_replicas,
            c.decode_replicas,
            c.accelerators,
            f"{c.prefill_s * 1e3:.0f}",
            f"{c.kv_transfer_s * 1e3:.1f}",
            f"{c.ttft_p90_s * 1e3:.0f}",
            c.decode_batch,
            f"{c.tpot_s * 1e3:.1f}",
            "unknown" if c.usd_per_hour is None else f"{c.usd_per_hour:,.0f}",
        ]
        for c in cands
    ]
    return (
        head
        + "\n"
        + table(
            [
                "accelerator",
                "layout",
                "weights",
                "xPyD",
                "prefill",
                "decode",
                "accelerators",
                "prefill ms",
                "KV move ms",
                "TTFT p90 ms",
                "decode batch",
                "TPOT ms",
                "$/h",
            ],
            rows,
        )
    )


def _fleet_text(fleet: Any, sim: dict[str, Any] | None, acc: dict[str, Any] | None = None) -> str:
    """Request classes: the pools of the mixed fleet (its bill with its band), each single type's bill, the saving,
    the simulated check."""
    m = fleet.mixed
    bill_band = band(acc, "fleet.mixed.usd_per_hour", lambda v: f"${v:,.2f}")
    lines = [f"mixed fleet: ${m.usd_per_hour:,.2f}/h{bill_band} — {fleet.verdict}"]
    for p in m.pools:
        lines.append(
            f"  pool {p.accelerator}: {p.instances} × {p.offer_id} ({p.accelerators_per_instance} each, "
            f"{p.accelerators_used} used) ${p.usd_per_hour:,.2f}/h serving {', '.join(p.classes)}"
        )
    for s in fleet.single_types:
        bill = f"${s.choice.usd_per_hour:,.2f}/h" if s.choice else f"not possible ({s.reason[:160]})"
        lines.append(f"  {s.accelerator} alone: {bill}")
    if sim is not None:
        att = sim["slo_attainment_frac"]
        lines.append(
            f"simulated (one replica per class at its load): SLO {'met' if sim['slo_met'] else 'MISSED'}, "
            f"attainment {att * 100:.1f} %"
            if att is not None
            else "simulated: no SLO to check"
        )
        for c in sim["classes"]:
            lines.append(
                f"  {c['class']} on {c['accelerator']}: TTFT p90 {c['ttft_p90_s'] * 1e3:.0f} ms, "
                f"TPOT p99 {c['tpot_p99_s'] * 1e3:.1f} ms, attainment "
                f"{(c['slo_attainment_frac'] or 0.0) * 100:.1f} %"
                + ("" if c["slo_met"] else f" — misses: {'; '.join(c['misses'])}")
            )
    return "\n".join(lines)


def _day_text(day: Any) -> str:
    peak, trough = max(day.instances_by_hour), min(day.instances_by_hour)
    lines = [
        f"load over {day.hours} h: {trough}–{peak} instances of {day.on_demand_offer} "
        f"(one replica serves {day.per_replica_demand:.3g} {day.demand_unit}); scale-up delay "
        f"{day.scale_up_delay_s:.0f} s, {day.autoscaler} autoscaler",
        table(
            ["fleet", "$/day", "$/30 days", "SLO attainment", "worst minute", "reserved"],
            [
                [
                    s.name,
                    "unknown" if s.usd_per_day is None else f"{s.usd_per_day:,.0f}",
                    "unknown" if s.usd_per_day is None else f"{s.usd_per_day * 30:,.0f}",
                    f"{s.slo_attainment_frac * 100:.2f} %",
                    f"{s.worst_minute_coverage_frac * 100:.1f} %",
                    s.reserved_instances or "",
                ][:6]
                for s in day.strategies
            ],
        ),
    ]
    lines += [f"note: {s.name}: {s.note}" for s in day.strategies if s.note]
    return "\n".join(lines)


def _billed(best: Any) -> list[str]:
    """Whole instances billed: accelerators used vs billed, and the idle ones (none without a price)."""
    if not best.instances or best.price is None:
        return []
    idle = best.accelerators_billed - best.accelerators
    return [
        f"billed: {best.instances} instance(s) of {best.price.accelerators_per_instance} = "
        f"{best.accelerators_billed} accelerators ({best.accelerators} used, {idle} idle)"
    ]


def _billed_text(check: dict[str, Any]) -> str:
    billed = check.get("accelerators_billed")
    return "" if billed is None or billed == check["accelerators_needed"] else f" ({billed} billed as whole instances)"


def _simulated_text(sim: dict[str, Any], seed: int, analytic_accelerators: int) -> str:
    lines = [f"simulated check (seed {seed}):"]
    for r in sim.get("rejected", []):
        lines.append(f"  passed over (cheaper, misses the SLO in simulation): {r['deployment']}")
    closed = sim.get("closed_loop")
    if closed is not None:
        lines.append(
            f"  closed loop (each user sends the next request when its answer ends): one replica keeps "
            f"{closed['max_users_per_replica']} users within the SLO; {closed['users']:,} users need "
            f"{closed['replicas_needed']} replicas = {closed['accelerators_needed']} accelerators"
            f"{_billed_text(closed)} (analytic: {analytic_accelerators})"
        )
    label = "the same mean rate as Poisson arrivals" if closed is not None else "Poisson arrivals"
    lines.append(
        f"  {label}: one replica meets the SLO up to {sim['max_request_rate_per_replica_per_s']:.3g} "
        f"requests/s; demand {sim['demand_request_rate_per_s']:.3g} requests/s needs "
        f"{sim['replicas_needed']} replicas = {sim['accelerators_needed']} accelerators"
        f"{_billed_text(sim)} (analytic: {analytic_accelerators})"
    )
    return "\n".join(lines)


def register(sub: Any) -> None:
    """Add ``aiinfra capacity``, its arguments and its handler to the CLI's subparsers ``sub``."""
    c = sub.add_parser("capacity", help=COMMAND_HELP["capacity"])
    add_scenario_args(c)
    add_option_args(c, ["capacity"])
    add_quiet_arg(c)
    c.set_defaults(handler=_capacity)
