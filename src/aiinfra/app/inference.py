"""Inference questions: one deployment's latency, throughput and memory; the cheapest fleet for a demand."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from aiinfra import catalog
from aiinfra.app import tables
from aiinfra.app.base import Result, accuracy_for, flatten
from aiinfra.app.tables import price_book, serving_tables
from aiinfra.catalog import calibration
from aiinfra.planning.inference import InferenceEstimate, estimate_inference, note_query
from aiinfra.report.render import jsonable, layout_label
from aiinfra.specs.scenario import Scenario

if TYPE_CHECKING:  # imported where capacity runs: `infer` does not load the fleet planners and their prices
    from aiinfra.planning.capacity import Deployment
    from aiinfra.planning.disagg import Disaggregated
    from aiinfra.planning.fleet import DayFleet, MixedFleet


@dataclass(frozen=True, kw_only=True, slots=True)
class InferResult(Result):
    """The answer of :func:`infer`."""

    scenario: Scenario
    estimate: InferenceEstimate
    """TTFT, TPOT, throughput, KV capacity and memory per accelerator of the deployment."""
    layout: str
    """The replica layout as printed: tp8, tp4 ep4, tp8 dp-attn ep8."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra infer --json`` object: the estimate's fields plus ``accuracy`` (the error band that
        applies)."""
        out: dict[str, Any] = jsonable(self.estimate)
        out["accuracy"] = accuracy_for("infer", self.scenario, out)
        return out


def infer(scenario: Scenario) -> InferResult:
    """Estimate serving the scenario's inference section on its hardware: KV capacity as the engine allocates
    it, TTFT, TPOT, output tokens/s and memory per accelerator; a scenario inside a known accuracy gap of the
    validation gets a note (catalog/data/accuracy_notes.yaml)."""
    e = estimate_inference(scenario)
    cal = scenario.cluster.tables.factors_for("inference", e.accelerator, e.engine)
    if not cal.neutral:  # the user's calibration priced it: say which row
        e = replace(e, notes=(*e.notes, calibration.note(cal)))
    plan = scenario.inference.plan if scenario.inference is not None else None
    layout = layout_label(e.tp, plan.ep, plan.attention_dp) if plan else layout_label(e.tp)
    return InferResult(scenario=scenario, estimate=e, layout=layout)


MIN_CHECK_REQUESTS = 400
"""Fewest requests in a simulated check's run."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CapacityResult(Result):
    """The answer of :func:`capacity`."""

    scenario: Scenario
    options: tuple[Deployment, ...]
    """Every candidate, the chosen one first, each with the verdict saying why it lost."""
    accuracy_notes: tuple[str, ...]
    """Known accuracy gaps of the validation the chosen deployment falls in."""
    simulated: dict[str, Any] | None
    """The simulated check of one replica (None unless asked): closed loop of the users and Poisson rate."""
    seed: int
    fleet: MixedFleet | None = None
    """Request classes (``inference.classes``): the cheapest mixed fleet against each single accelerator type."""
    day: DayFleet | None = None
    """Load profile (``inference.load_profile``): the fleet hour by hour and the cost of running it three ways."""
    disaggregated: tuple[Disaggregated, ...] | None = None
    """Prefill/decode pools (``disaggregate``), cheapest first; None unless asked."""
    disaggregation_rejected: tuple[str, ...] = ()
    """Why the other disaggregated layouts are not candidates."""

    @property
    def recommended(self) -> str:
        """aggregated, or disaggregated when its cheapest candidate bills less at the same SLO."""
        if not self.disaggregated or self.fleet is not None:
            return "aggregated"
        d, a = self.disaggregated[0].usd_per_hour, self.chosen.usd_per_hour
        return "disaggregated" if d is not None and a is not None and d < a else "aggregated"

    @property
    def chosen(self) -> Deployment:
        """The chosen deployment (first of the options)."""
        return self.options[0]

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra capacity --json`` object: ``chosen`` and ``alternatives`` with their verdicts, accuracy notes,
        the age of the chosen price, and when asked the simulated check, the mixed fleet, the day plan and the
        disaggregated candidates."""
        obj: dict[str, Any] = {
            "chosen": jsonable(self.chosen),
            "alternatives": [jsonable(o) for o in self.options[1:]],
            "accuracy_notes": list(self.accuracy_notes),
        }
        price = self.chosen.price
        if price is not None:  # the age of the price behind the answer (costing.prices.freshness)
            from aiinfra.costing.prices import freshness

            obj.update(freshness(price.read_on, None if price.stale and price.age_days == 0 else price.age_days))
        if self.simulated is not None:
            obj["simulated"] = self.simulated
        if self.fleet is not None:
            from aiinfra.app.fleet import mixed_to_dict

            obj["fleet"] = mixed_to_dict(self.fleet)
        if self.day is not None:
            from aiinfra.app.fleet import day_to_dict

            obj["load_profile"] = day_to_dict(self.day)
        if self.disaggregated is not None:
            obj["disaggregated"] = {
                "recommended": self.recommended,
                "candidates": [jsonable(d) for d in self.disaggregated],
                "rejected": list(self.disaggregation_rejected),
            }
        obj["accuracy"] = accuracy_for("capacity", self.scenario, obj)
        return obj

    def table_rows(self) -> list[dict[str, Any]]:
        """Every candidate deployment, the chosen one first."""
        return [flatten(jsonable(o)) for o in self.options]


def capacity(
    scenario: Scenario,
    accelerators: Sequence[str] | None = None,
    engines: Sequence[str] | None = None,
    simulate: bool = False,
    seed: int = 0,
    progress: Callable[[int, int | None], None] | None = None,
    disaggregate: bool = False,
) -> CapacityResult:
    """The cheapest deployment that serves the scenario's demand (``inference.users`` or
    ``request_rate_per_s``) within its SLOs, over ``engines`` (default: the scenario's) × ``accelerators``
    (default: the scenario's) × layout × weight format × speculation. ``simulate`` checks the chosen one by
    simulating one replica (closed loop of the users, and Poisson arrivals at their rate); ``progress(done, None)``
    is called after each simulation it runs."""
    engines = list(dict.fromkeys(e.strip() for e in engines if e.strip())) if engines else None
    wl = scenario.inference
    if wl is not None and wl.classes:
        return _capacity_of_classes(
            scenario, list(accelerators) if accelerators else None, engines, simulate, seed, progress
        )
    from aiinfra.planning.capacity import plan_capacity

    options = plan_capacity(
        scenario,
        list(accelerators) if accelerators else None,
        engines,
        prices=price_book(),
        parts=tables.accelerators(),
    )
    dis: tuple[Disaggregated, ...] | None = None
    dis_rejected: tuple[str, ...] = ()
    if disaggregate:
        from aiinfra.planning.disagg import plan_disaggregated

        assert wl is not None
        found = plan_disaggregated(
            scenario,
            list(accelerators or [scenario.cluster.accelerator.id]),
            engines or [wl.engine],
            prices=price_book(),
        )
        dis = tuple(d for d in found if not isinstance(d, str))
        dis_rejected = tuple(d for d in found if isinstance(d, str))
    sim = None
    cheaper_dis = (
        dis[0]
        if dis
        and dis[0].usd_per_hour is not None
        and options[0].usd_per_hour is not None
        and dis[0].usd_per_hour < options[0].usd_per_hour
        else None
    )
    if simulate and cheaper_dis is not None:
        from aiinfra.app.fleet import simulate_disaggregated

        sim = simulate_disaggregated(scenario, cheaper_dis, seed)
    elif simulate:
        options, sim = _first_passing_simulation(scenario, options, seed, progress)
    best = options[0]
    notes = _gap_notes(scenario, best)
    day = None
    if wl is not None and wl.load_profile is not None:
        from aiinfra.app.fleet import day_fleet

        day = day_fleet(scenario, best)
    return CapacityResult(
        scenario=scenario,
        options=tuple(options),
        accuracy_notes=notes,
        simulated=sim,
        seed=seed,
        day=day,
        disaggregated=dis,
        disaggregation_rejected=dis_rejected,
    )


def _capacity_of_classes(
    scenario: Scenario,
    accelerators: list[str] | None,
    engines: list[str] | None,
    simulate: bool,
    seed: int,
    progress: Callable[[int, int | None], None] | None,
) -> CapacityResult:
    """Request classes: the cheapest mixed fleet (aiinfra.planning.fleet); its per-class deployments are the
    options, the class's own name in each verdict; ``simulate`` runs one replica of each class at its load."""
    from aiinfra.app.fleet import mixed_fleet, simulate_mixed
    from aiinfra.errors import SpecError

    wl = scenario.inference
    assert wl is not None
    if wl.load_profile is not None:
        raise SpecError(
            "inference.load_profile",
            "given with classes",
            "a load profile applies to one workload; with request classes it is not modelled",
            "drop one of inference.classes and inference.load_profile",
        )
    fleet = mixed_fleet(scenario, accelerators, engines)
    options = [
        replace(p.deployment, verdict=f"chosen for class {p.request_class}")
        for p in fleet.mixed.placements
        if p.deployment is not None
    ]
    sim = simulate_mixed(scenario, fleet, seed, progress) if simulate else None
    best = options[0]
    notes = _gap_notes(scenario, best)
    return CapacityResult(
        scenario=scenario, options=tuple(options), accuracy_notes=notes, simulated=sim, seed=seed, fleet=fleet
    )


def _gap_notes(scenario: Scenario, best: Deployment) -> tuple[str, ...]:
    """The known accuracy gaps (catalog/data/accuracy_notes.yaml) the chosen deployment falls in, in its own weight
    format, at the engine release the scenario states."""
    q = note_query(scenario.model.id, best.engine, best.accelerator, best.weight_precision, scenario.inference)
    return tuple(catalog.accuracy_notes_for(q))


def _label(o: Deployment) -> str:
    return f"{o.engine} {layout_label(o.tp, o.ep, o.attention_dp)} {o.weight_precision} on {o.accelerator}"


def _first_passing_simulation(
    scenario: Scenario,
    options: list[Deployment],
    seed: int,
    progress: Callable[[int, int | None], None] | None = None,
) -> tuple[list[Deployment], dict[str, Any]]:
    """Check the candidates cheapest first by simulating one replica; the first whose simulation can meet the SLO
    at some load is chosen, each one before it keeps the simulation's reason in its verdict (and in the check's
    ``rejected``). None passing: InfeasibleError naming the closest (the smallest SLO miss)."""
    from aiinfra.errors import InfeasibleError

    feasible = [o for o in options if o.accelerators > 0]
    rejected: list[dict[str, Any]] = []
    runs = 0

    def one_more(_done: int, _total: int | None) -> None:  # simulations over every candidate checked
        nonlocal runs
        runs += 1
        if progress is not None:
            progress(runs, None)

    for i, o in enumerate(feasible):
        try:
            sim = simulated_check(scenario, o, seed, one_more if progress is not None else None)
        except InfeasibleError as exc:
            rejected.append({"deployment": _label(o), "reason": str(exc)})
            continue
        sim["rejected"] = rejected
        failed = [
            replace(f, verdict=f"misses the SLO in simulation ({r['reason']})")
            for f, r in zip(feasible[:i], rejected, strict=True)
        ]
        chosen = replace(o, verdict="chosen") if i else o
        rest = [f for f in options if f not in feasible[: i + 1]]
        return [chosen, *failed, *rest], sim
    reasons = "; ".join(f"{r['deployment']}: {r['reason']}" for r in rejected[:3])
    raise InfeasibleError(
        f"no candidate meets the SLO in simulation ({len(rejected)} simulated; the cheapest: {reasons})"
    )


def _billed(best: Deployment, replicas: int) -> int | None:
    """Accelerators in the whole instances of the deployment's priced offer that hold ``replicas`` replicas
    (None without a price)."""
    if best.price is None or not best.instances:
        return None
    per_instance = best.price.accelerators_per_instance // best.tp
    return math.ceil(replicas / per_instance) * best.price.accelerators_per_instance


def one_replica(sc: Scenario, best: Deployment, num_requests: int) -> Scenario:
    """The scenario of one replica of ``best`` (its accelerators, engine, layout and precision), no demand set."""
    from aiinfra.catalog.resolve import cluster_for
    from aiinfra.specs.parallelism import InferencePlan

    wl = sc.inference
    assert wl is not None
    one = replace(
        sc,
        cluster=replace(sc.cluster, count=best.tp),
        inference=replace(
            wl,
            weight_precision=best.weight_precision,  # type: ignore[arg-type]
            engine=best.engine,  # type: ignore[arg-type]
            speculative=wl.speculative if best.speculative else None,
            plan=InferencePlan(tp=best.tp, ep=best.ep, attention_dp=best.attention_dp),
            num_requests=wl.num_requests or num_requests,
            users=None,
            concurrency=None,
        ),
    )
    if best.accelerator != sc.cluster.accelerator.id:
        one = replace(one, cluster=cluster_for(best.accelerator, best.tp))
    return one


def simulate_one_replica(sc: Scenario, best: Deployment, seed: int, num_requests: int, load: dict[str, Any]) -> Any:
    """Simulate one replica of ``best`` at ``load``: ``{"concurrency": clients}`` (a closed loop with the scenario's
    think time) or ``{"request_rate_per_s": rate}`` (Poisson)."""
    from aiinfra.sim.run import simulate as run_simulation
    from aiinfra.specs.workload import Arrival

    one = one_replica(sc, best, num_requests)
    wl = one.inference
    assert wl is not None
    if "concurrency" in load:
        wl = replace(wl, concurrency=load["concurrency"], request_rate_per_s=None, arrival=Arrival(kind="concurrency"))
    else:
        wl = replace(wl, request_rate_per_s=load["request_rate_per_s"], arrival=Arrival(kind="poisson"))
    chosen = replace(one, inference=wl)
    return run_simulation(chosen, seed=seed, tables=serving_tables(chosen))


def simulated_check(
    sc: Scenario, best: Deployment, seed: int, progress: Callable[[int, int | None], None] | None = None
) -> dict[str, Any]:
    """Simulate one replica of the chosen deployment. Demand given as concurrent users: the most closed-loop
    clients one replica serves within the SLO (aiinfra.sim.search.max_clients_meeting_slo), and the fleet for
    the users. Always: the highest Poisson rate one replica serves within the SLO (max_rate_meeting_slo) and
    the fleet for the demand rate (users → rate by Little's law) — open-loop arrivals, a harder load than the
    same mean rate from a fixed number of clients."""
    from aiinfra.planning.inference import estimate_with_replica
    from aiinfra.sim.search import CLOSED_LOOP_REQUESTS_PER_CLIENT, max_clients_meeting_slo, max_rate_meeting_slo

    wl = sc.inference
    assert wl is not None  # plan_capacity refused a scenario without one
    users = None if wl.request_rate_per_s else (wl.users or wl.concurrency)
    assert best.ttft_s is not None and best.tpot_s is not None  # the chosen row is never a rejected one
    demand = wl.request_rate_per_s or (users or 0) / (
        best.ttft_s + wl.output_tokens * best.tpot_s + (wl.think_time_s or 0.0)
    )
    # enough requests that a replica near its planned batch turns each sequence slot over many times (a run of a
    # few hundred long requests would end inside its start-up transient, every request still in flight)
    run_requests = max(MIN_CHECK_REQUESTS, CLOSED_LOOP_REQUESTS_PER_CLIENT * best.batch_per_replica)
    one = one_replica(sc, best, run_requests)
    # both searches start from the loaded-replica model's answer (planning/loaded.py), so they confirm it
    owl = one.inference
    assert owl is not None
    _, rep = estimate_with_replica(one.model, one.cluster, replace(owl, batch="max"), usage="server", grid=True)
    seed_rate = rep.max_rate(owl.slo) if rep is not None else None
    rate, _ = max_rate_meeting_slo(
        one,
        seed=seed,
        progress=progress,
        start_rate_per_s=seed_rate[0] if seed_rate is not None else None,
        tables=serving_tables(one),
    )
    replicas = math.ceil(demand / rate)
    out: dict[str, Any] = {
        "max_request_rate_per_replica_per_s": rate,
        "demand_request_rate_per_s": demand,
        "replicas_needed": replicas,
        "accelerators_needed": replicas * best.tp,
        "accelerators_billed": _billed(best, replicas),
    }
    if users:
        start = best.users_per_replica or best.batch_per_replica
        clients, _ = max_clients_meeting_slo(
            one, seed=seed, start_clients=start, progress=progress, tables=serving_tables(one)
        )
        per_users = math.ceil(users / clients)
        out["closed_loop"] = {
            "users": users,
            "max_users_per_replica": clients,
            "replicas_needed": per_users,
            "accelerators_needed": per_users * best.tp,
            "accelerators_billed": _billed(best, per_users),
        }
    return out
