"""Inference questions: one deployment's latency, throughput and memory; the cheapest fleet for a demand."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from aiinfra import catalog
from aiinfra.app.base import Result, flatten
from aiinfra.planning.inference import InferenceEstimate, estimate_inference
from aiinfra.report.render import jsonable, layout_label
from aiinfra.specs.scenario import Scenario

if TYPE_CHECKING:  # imported where capacity runs: `infer` does not load the fleet planner and its prices
    from aiinfra.planning.capacity import Deployment


@dataclass(frozen=True, kw_only=True, slots=True)
class InferResult(Result):
    """The answer of :func:`infer`."""

    scenario: Scenario
    estimate: InferenceEstimate
    """TTFT, TPOT, throughput, KV capacity and memory per accelerator of the deployment."""
    layout: str
    """The replica layout as printed: tp8, tp4 ep4, tp8 dp-attn ep8."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = jsonable(self.estimate)
        return out


def infer(scenario: Scenario) -> InferResult:
    """Estimate serving the scenario's inference section on its hardware: KV capacity as the engine allocates
    it, TTFT, TPOT, output tokens/s and memory per accelerator; a scenario inside a known accuracy gap of the
    validation gets a note (catalog/data/accuracy_notes.yaml)."""
    e = estimate_inference(scenario)
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

    @property
    def chosen(self) -> Deployment:
        return self.options[0]

    def to_dict(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"chosen": jsonable(self.chosen), "alternatives": [jsonable(o) for o in self.options[1:]],
                               "accuracy_notes": list(self.accuracy_notes)}  # fmt: skip
        if self.simulated is not None:
            obj["simulated"] = self.simulated
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
) -> CapacityResult:
    """The cheapest deployment that serves the scenario's demand (``inference.users`` or
    ``request_rate_per_s``) within its SLOs, over ``engines`` (default: the scenario's) × ``accelerators``
    (default: the scenario's) × layout × weight format × speculation. ``simulate`` checks the chosen one by
    simulating one replica (closed loop of the users, and Poisson arrivals at their rate); ``progress(done, None)``
    is called after each simulation it runs."""
    engines = list(dict.fromkeys(e.strip() for e in engines if e.strip())) if engines else None
    from aiinfra.planning.capacity import plan_capacity

    options = plan_capacity(scenario, list(accelerators) if accelerators else None, engines)
    sim = None
    if simulate:
        options, sim = _first_passing_simulation(scenario, options, seed, progress)
    best = options[0]
    notes = tuple(catalog.accuracy_notes_for(scenario.model.id, best.engine, best.accelerator))
    return CapacityResult(scenario=scenario, options=tuple(options), accuracy_notes=notes, simulated=sim, seed=seed)


def _label(o: Deployment) -> str:
    return f"{o.engine} {layout_label(o.tp, o.ep, o.attention_dp)} {o.weight_precision} on {o.accelerator}"


def _first_passing_simulation(
    scenario: Scenario, options: list[Deployment], seed: int,
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
        failed = [replace(f, verdict=f"misses the SLO in simulation ({r['reason']})")
                  for f, r in zip(feasible[:i], rejected, strict=True)]  # fmt: skip
        chosen = replace(o, verdict="chosen") if i else o
        rest = [f for f in options if f not in feasible[: i + 1]]
        return [chosen, *failed, *rest], sim
    reasons = "; ".join(f"{r['deployment']}: {r['reason']}" for r in rejected[:3])
    raise InfeasibleError(f"no candidate meets the SLO in simulation ({len(rejected)} simulated; the cheapest: "
                          f"{reasons})")  # fmt: skip


def _billed(best: Deployment, replicas: int) -> int | None:
    """Accelerators in the whole instances of the deployment's priced offer that hold ``replicas`` replicas
    (None without a price)."""
    if best.price is None or not best.instances:
        return None
    per_instance = best.price.accelerators_per_instance // best.tp
    return math.ceil(replicas / per_instance) * best.price.accelerators_per_instance


def simulated_check(
    sc: Scenario, best: Deployment, seed: int, progress: Callable[[int, int | None], None] | None = None
) -> dict[str, Any]:
    """Simulate one replica of the chosen deployment. Demand given as concurrent users: the most closed-loop
    clients one replica serves within the SLO (aiinfra.sim.search.max_clients_meeting_slo), and the fleet for
    the users. Always: the highest Poisson rate one replica serves within the SLO (max_rate_meeting_slo) and
    the fleet for the demand rate (users → rate by Little's law) — open-loop arrivals, a harder load than the
    same mean rate from a fixed number of clients."""
    from aiinfra.planning.inference import cluster_for
    from aiinfra.sim.search import CLOSED_LOOP_REQUESTS_PER_CLIENT, max_clients_meeting_slo, max_rate_meeting_slo
    from aiinfra.specs.parallelism import InferencePlan

    wl = sc.inference
    assert wl is not None  # plan_capacity refused a scenario without one
    users = None if wl.request_rate_per_s else (wl.users or wl.concurrency)
    demand = wl.request_rate_per_s or (users or 0) / (best.ttft_s + wl.output_tokens * best.tpot_s
                                                      + (wl.think_time_s or 0.0))
    # enough requests that a replica near its planned batch turns each sequence slot over many times (a run of a
    # few hundred long requests would end inside its start-up transient, every request still in flight)
    run_requests = max(MIN_CHECK_REQUESTS, CLOSED_LOOP_REQUESTS_PER_CLIENT * best.batch_per_replica)
    one = replace(sc, cluster=replace(sc.cluster, count=best.tp),
                  inference=replace(wl, weight_precision=best.weight_precision,  # type: ignore[arg-type]
                                    engine=best.engine,  # type: ignore[arg-type]
                                    speculative=wl.speculative if best.speculative else None,
                                    plan=InferencePlan(tp=best.tp, ep=best.ep, attention_dp=best.attention_dp),
                                    num_requests=wl.num_requests or run_requests, users=None,
                                    concurrency=None))  # fmt: skip
    if best.accelerator != sc.cluster.accelerator.id:
        one = replace(one, cluster=cluster_for(best.accelerator, best.tp))
    rate, _ = max_rate_meeting_slo(one, seed=seed, progress=progress)
    replicas = math.ceil(demand / rate)
    out: dict[str, Any] = {"max_request_rate_per_replica_per_s": rate, "demand_request_rate_per_s": demand,
                           "replicas_needed": replicas, "accelerators_needed": replicas * best.tp,
                           "accelerators_billed": _billed(best, replicas)}  # fmt: skip
    if users:
        clients, _ = max_clients_meeting_slo(one, seed=seed, start_clients=best.batch_per_replica, progress=progress)
        per_users = math.ceil(users / clients)
        out["closed_loop"] = {"users": users, "max_users_per_replica": clients, "replicas_needed": per_users,
                              "accelerators_needed": per_users * best.tp,
                              "accelerators_billed": _billed(best, per_users)}  # fmt: skip
    return out
