"""Fleet design inside ``aiinfra capacity``: request classes on mixed accelerator types, the load over a day, and the
simulated check of a mixed fleet (one replica of each class's pool at its planned load)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from aiinfra.app import tables
from aiinfra.app.tables import price_book, serving_tables
from aiinfra.errors import SpecError
from aiinfra.planning.capacity import Deployment
from aiinfra.planning.disagg import Disaggregated
from aiinfra.planning.fleet import DayFleet, MixedFleet, class_scenario, plan_day, plan_mixed
from aiinfra.report.render import jsonable
from aiinfra.specs.scenario import Scenario


def mixed_fleet(sc: Scenario, accelerators: list[str] | None, engines: list[str] | None) -> MixedFleet:
    """The cheapest fleet for the scenario's request classes over ``accelerators`` (default: the scenario's)."""
    return plan_mixed(
        sc, accelerators or [sc.cluster.accelerator.id], engines, prices=price_book(), parts=tables.accelerators()
    )


def read_arrivals(sc: Scenario, path: str) -> np.ndarray:
    """Arrival times (s) from a CSV with a ``timestamp_s`` column; a relative path is read from the scenario's
    folder."""
    import csv

    from aiinfra.specs.files import read_text

    field = "inference.load_profile.arrivals_csv"
    p = Path(path)
    if not p.is_absolute() and sc.path:
        p = Path(sc.path).parent / p
    text = read_text(p, field, "a CSV of arrival times")
    rows = list(csv.DictReader(text.splitlines()))
    if not rows or "timestamp_s" not in rows[0]:
        raise SpecError(field, path, "has no timestamp_s column", "give a CSV with a header timestamp_s")
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            t = float(r["timestamp_s"])
        except (TypeError, ValueError):
            raise SpecError(
                field,
                f"{path} line {i}",
                f"timestamp_s {r['timestamp_s']!r} is not a number",
                "write arrival times in seconds",
            ) from None
        if not math.isfinite(t) or t < 0:
            raise SpecError(field, f"{path} line {i}", f"timestamp_s {t} is not a time", "write seconds ≥ 0")
        out.append(t)
    return np.asarray(out)


def day_fleet(sc: Scenario, chosen: Deployment) -> DayFleet:
    """The chosen deployment planned over the scenario's load profile (hourly ratios, or the arrival times of its CSV),
    priced with the active catalog's prices."""
    wl = sc.inference
    assert wl is not None and wl.load_profile is not None
    prof = wl.load_profile
    arrivals = read_arrivals(sc, prof.arrivals_csv) if prof.arrivals_csv else None
    return plan_day(chosen, wl, prof, arrivals_s=arrivals, prices=price_book())


def simulate_mixed(
    sc: Scenario, fleet: MixedFleet, seed: int, progress: Callable[[int, int | None], None] | None
) -> dict[str, Any]:
    """Simulate one replica of each class's deployment at its planned load (a length-aware router sends each class
    to its own replicas, so a pool's classes never share a replica): the class's SLO percentiles met or missed and
    the share of its requests within every limit."""
    from aiinfra.app.inference import MIN_CHECK_REQUESTS, simulate_one_replica
    from aiinfra.sim.metrics import slo_misses

    wl = sc.inference
    assert wl is not None
    by_name = {c.name: c for c in wl.classes or ()}
    out: list[dict[str, Any]] = []
    total = good = 0.0
    for i, p in enumerate(fleet.mixed.placements):
        dep = p.deployment
        assert dep is not None
        csc = class_scenario(sc, by_name[p.request_class])
        cwl = csc.inference
        assert cwl is not None
        users = cwl.users
        requests = max(MIN_CHECK_REQUESTS, 4 * dep.batch_per_replica)
        load: dict[str, Any]
        if users is not None:
            load = {"concurrency": math.ceil(users / dep.replicas)}
        else:
            load = {"request_rate_per_s": (cwl.request_rate_per_s or 0.0) / dep.replicas}
        run = simulate_one_replica(csc, dep, seed, requests, load)
        s = run.summary
        slo = cwl.slo
        misses = slo_misses(s, slo) if slo is not None else []
        rate = s.requests_per_s * dep.replicas
        total += rate
        good += rate * (s.slo_attainment_frac if s.slo_attainment_frac is not None else 1.0)
        out.append(
            {
                "class": p.request_class,
                "accelerator": dep.accelerator,
                "replicas": dep.replicas,
                "load_per_replica": load,
                "requests_simulated": s.requests,
                "ttft_p90_s": s.ttft_s.p90,
                "tpot_p99_s": s.tpot_exclusive_s.p99,
                "slo_attainment_frac": s.slo_attainment_frac,
                "slo_met": not misses,
                "misses": misses,
            }
        )
        if progress is not None:
            progress(i + 1, len(fleet.mixed.placements))
    return {
        "classes": out,
        "slo_attainment_frac": good / total if total > 0 else None,
        "slo_met": all(c["slo_met"] for c in out),
    }


def mixed_to_dict(fleet: MixedFleet) -> dict[str, Any]:
    """A mixed fleet as ``capacity --json`` prints it: the verdict, the mix's pools and per-class deployments, the
    saving against the best single type, and each single type's bill or reason."""

    def choice(c: Any) -> Any:
        if c is None:
            return None
        return {
            "usd_per_hour": c.usd_per_hour,
            "pools": [jsonable(p) for p in c.pools],
            "classes": [{"class": p.request_class, **jsonable(p.deployment)} for p in c.placements],
        }

    return {
        "verdict": fleet.verdict,
        "mixed": choice(fleet.mixed),
        "best_single_type": fleet.best_single.accelerator if fleet.best_single else None,
        "saving_usd_per_hour": fleet.saving_usd_per_hour,
        "saving_frac": fleet.saving_frac,
        "single_types": [
            {
                "accelerator": s.accelerator,
                "usd_per_hour": s.choice.usd_per_hour if s.choice else None,
                "reason": s.reason,
            }
            for s in fleet.single_types
        ],
    }


def day_to_dict(day: DayFleet) -> dict[str, Any]:
    """A day plan as ``capacity --json`` prints it (``load_profile``): its hourly series and each strategy."""
    out: dict[str, Any] = jsonable(day)
    out["strategies"] = [jsonable(s) for s in day.strategies]
    return out


def scenario_without_classes(sc: Scenario) -> Scenario:
    """The scenario with its request classes dropped (the workload sized as one class)."""
    wl = sc.inference
    assert wl is not None
    return replace(sc, inference=replace(wl, classes=None))


SIMULATED_REPLICAS_MAX = 16
"""Replicas in the simulated slice of a disaggregated fleet: enough for the xPyD ratio to show, small enough to
simulate in seconds."""


def simulate_disaggregated(sc: Scenario, d: Disaggregated, seed: int) -> dict[str, Any]:
    """Simulate a slice of the disaggregated fleet (its xPyD ratio, at most SIMULATED_REPLICAS_MAX replicas) at the
    matching share of the demand rate, Poisson arrivals: the SLO met or missed and the share within it."""
    from aiinfra.catalog.resolve import cluster_for
    from aiinfra.sim.metrics import slo_misses
    from aiinfra.sim.run import simulate as run_simulation
    from aiinfra.specs.parallelism import InferencePlan
    from aiinfra.specs.serving_sim import Disaggregation, SimulationConfig
    from aiinfra.specs.workload import Arrival

    wl = sc.inference
    assert wl is not None
    k = min(1.0, SIMULATED_REPLICAS_MAX / (d.prefill_replicas + d.decode_replicas))
    p = max(1, round(d.prefill_replicas * k))
    q = max(1, round(d.decode_replicas * k))
    rate = d.demand_requests_per_s * min(p / d.prefill_replicas, q / d.decode_replicas)
    requests = max(400, 20 * (p + q))
    sim_cfg = replace(
        wl.simulation or SimulationConfig(),
        disaggregation=Disaggregation(prefill_replicas=p, decode_replicas=q),
        replicas=None,
    )
    one = replace(
        sc,
        cluster=cluster_for(d.accelerator, (p + q) * d.tp),
        inference=replace(
            wl,
            weight_precision=d.weight_precision,  # type: ignore[arg-type]
            engine=d.engine,  # type: ignore[arg-type]
            plan=InferencePlan(tp=d.tp, ep=d.ep),
            users=None,
            concurrency=None,
            request_rate_per_s=rate,
            arrival=Arrival(kind="poisson"),
            num_requests=requests,
            simulation=sim_cfg,
            classes=None,
            load_profile=None,
        ),
    )
    s = run_simulation(one, seed=seed, tables=serving_tables(one)).summary
    misses = slo_misses(s, wl.slo) if wl.slo is not None else []
    return {
        "disaggregated": f"{p}P{q}D slice of {d.prefill_replicas}P{d.decode_replicas}D on {d.accelerator}",
        "request_rate_per_s": rate,
        "requests_simulated": s.requests,
        "ttft_p90_s": s.ttft_s.p90,
        "tpot_p99_s": s.tpot_exclusive_s.p99,
        "slo_attainment_frac": s.slo_attainment_frac,
        "slo_met": not misses,
        "misses": misses,
    }
