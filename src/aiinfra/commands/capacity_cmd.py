"""`aiinfra capacity`: the cheapest deployment for a demand under SLOs (aiinfra.planning.capacity), optionally
checked by simulating one replica of it (aiinfra.sim.search)."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import catalog
from aiinfra.commands import add_scenario_args
from aiinfra.planning.capacity import plan_capacity
from aiinfra.report.render import jsonable, layout_label, table
from aiinfra.specs import cli_types
from aiinfra.specs.scenario import load_scenario


def _capacity(args: argparse.Namespace) -> tuple[Any, str]:
    sc = load_scenario(args.scenario, args.set)
    accs = args.accelerators.split(",") if args.accelerators else None
    engines = list(dict.fromkeys(e.strip() for e in args.engines.split(",") if e.strip())) if args.engines else None
    options = plan_capacity(sc, accs, engines)
    best = options[0]
    rows = [[o.engine, o.accelerator, layout_label(o.tp, o.ep, o.attention_dp), o.weight_precision,
             "yes" if o.speculative else "no", o.batch_per_replica,
             o.replicas, o.accelerators, f"{o.ttft_s * 1e3:.0f}", f"{o.tpot_s * 1e3:.1f}",
             "unknown" if o.usd_per_hour is None else f"{o.usd_per_hour:,.0f}",
             "unknown" if o.usd_per_million_output_tokens is None else f"{o.usd_per_million_output_tokens:.2f}",
             o.verdict] for o in options]  # fmt: skip
    price = (f"price: {best.price.source_id}, read {best.price.read_on} ({best.price.age_days} days old)"
             if best.price else "price: unknown (no on-demand row in catalog/data/prices/cloud.csv)")  # fmt: skip
    text = "\n".join([
        f"cheapest: {best.accelerators} × {best.accelerator} as {best.replicas} replica(s) of "
        f"{layout_label(best.tp, best.ep, best.attention_dp)} "
        f"({best.weight_precision}) on {best.engine}, batch {best.batch_per_replica} per replica", price, "",
        table(["engine", "accelerator", "layout", "weights", "spec", "batch", "replicas", "accelerators", "TTFT ms",
               "TPOT ms", "$/h", "$/M out tok", "verdict"], rows),
    ])  # fmt: skip
    accuracy = catalog.accuracy_notes_for(sc.model.id, best.engine, best.accelerator)
    text += "".join(f"\nnote: accuracy: {n}" for n in accuracy)
    obj: dict[str, Any] = {"chosen": jsonable(best), "alternatives": [jsonable(o) for o in options[1:]],
                           "accuracy_notes": accuracy}  # fmt: skip
    if args.simulate:
        sim = simulated_check(sc, best, args.seed)
        obj["simulated"] = sim
        text += "\n\n" + _simulated_text(sim, args.seed, best.accelerators)
    return obj, text


MIN_CHECK_REQUESTS = 400
"""Fewest requests in a simulated check's run."""


def _simulated_text(sim: dict[str, Any], seed: int, analytic_accelerators: int) -> str:
    lines = [f"simulated check (seed {seed}):"]
    closed = sim.get("closed_loop")
    if closed is not None:
        lines.append(f"  closed loop (each user sends the next request when its answer ends): one replica keeps "
                     f"{closed['max_users_per_replica']} users within the SLO; {closed['users']:,} users need "
                     f"{closed['replicas_needed']} replicas = {closed['accelerators_needed']} accelerators "
                     f"(analytic: {analytic_accelerators})")  # fmt: skip
    label = "the same mean rate as Poisson arrivals" if closed is not None else "Poisson arrivals"
    lines.append(f"  {label}: one replica meets the SLO up to {sim['max_request_rate_per_replica_per_s']:.3g} "
                 f"requests/s; demand {sim['demand_request_rate_per_s']:.3g} requests/s needs "
                 f"{sim['replicas_needed']} replicas = {sim['accelerators_needed']} accelerators "
                 f"(analytic: {analytic_accelerators})")  # fmt: skip
    return "\n".join(lines)


def simulated_check(sc: Any, best: Any, seed: int) -> dict[str, Any]:
    """Simulate one replica of the chosen deployment. Demand given as concurrent users: the most closed-loop
    clients one replica serves within the SLO (aiinfra.sim.search.max_clients_meeting_slo), and the fleet for
    the users. Always: the highest Poisson rate one replica serves within the SLO (max_rate_meeting_slo) and
    the fleet for the demand rate (users → rate by Little's law) — open-loop arrivals, a harder load than the
    same mean rate from a fixed number of clients."""
    import math
    from dataclasses import replace

    from aiinfra.sim.search import CLOSED_LOOP_REQUESTS_PER_CLIENT, max_clients_meeting_slo, max_rate_meeting_slo
    from aiinfra.specs.parallelism import InferencePlan

    wl = sc.inference
    users = None if wl.request_rate_per_s else (wl.users or wl.concurrency)
    demand = wl.request_rate_per_s or users / (best.ttft_s + wl.output_tokens * best.tpot_s)
    # enough requests that a replica near its planned batch turns each sequence slot over many times (a run of a
    # few hundred long requests would end inside its start-up transient, every request still in flight)
    run_requests = max(MIN_CHECK_REQUESTS, CLOSED_LOOP_REQUESTS_PER_CLIENT * best.batch_per_replica)
    one = replace(sc, cluster=replace(sc.cluster, count=best.tp),
                  inference=replace(wl, weight_precision=best.weight_precision, engine=best.engine,
                                    speculative=wl.speculative if best.speculative else None,
                                    plan=InferencePlan(tp=best.tp, ep=best.ep, attention_dp=best.attention_dp),
                                    num_requests=wl.num_requests or run_requests, users=None,
                                    concurrency=None))  # fmt: skip
    if best.accelerator != sc.cluster.accelerator.id:
        from aiinfra.planning.inference import cluster_for

        one = replace(one, cluster=cluster_for(best.accelerator, best.tp))
    rate, _ = max_rate_meeting_slo(one, seed=seed)
    replicas = math.ceil(demand / rate)
    out: dict[str, Any] = {"max_request_rate_per_replica_per_s": rate, "demand_request_rate_per_s": demand,
                           "replicas_needed": replicas, "accelerators_needed": replicas * best.tp}  # fmt: skip
    if users:
        clients, _ = max_clients_meeting_slo(one, seed=seed, start_clients=best.batch_per_replica)
        per_users = math.ceil(users / clients)
        out["closed_loop"] = {"users": users, "max_users_per_replica": clients, "replicas_needed": per_users,
                              "accelerators_needed": per_users * best.tp}  # fmt: skip
    return out


def register(sub: Any) -> None:
    c = sub.add_parser("capacity", help="cheapest deployment for a demand (users or requests/s) under SLOs")
    add_scenario_args(c)
    c.add_argument("--accelerators", help="comma-separated catalog ids to consider (default: the scenario's)")
    c.add_argument("--engines", help="comma-separated serving engines to consider: vllm, trtllm (default: the "
                   "scenario's inference.engine)")  # fmt: skip
    c.add_argument("--simulate", action="store_true",
                   help="check the chosen deployment by simulating one replica: the most users it keeps within the "
                        "SLO (closed loop) and the highest Poisson rate")  # fmt: skip
    c.add_argument("--seed", type=cli_types.seed, default=0)
    c.set_defaults(handler=_capacity)
