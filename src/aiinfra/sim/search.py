"""Highest load whose simulated run meets the SLO: bracket, then bisect over simulations.

Two loads: an open-loop request rate (:func:`max_rate_meeting_slo`) and a closed-loop client count
(:func:`max_clients_meeting_slo`: each client sends its next request the moment its answer ends, the meaning
of "N concurrent users" in serving benchmarks such as vLLM's ``--max-concurrency``; the clients' first requests
ramp up over one request lifetime so that they do not move in step). Every run uses the same
seed, so arrival gaps (open loop) and request lengths are the same unit draws at every load (common random
numbers): latency then rises with the load without sampling noise between the points, and bisection is sound.
The SLO's limits are read as percentiles of the run (slo_misses): TTFT p90, exclusive TPOT p99, end-to-end p99.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from aiinfra.analytic.step_time import StepTimeModel
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.planning.inference import estimate, model_for, steady_state_step
from aiinfra.sim.engine import Records
from aiinfra.sim.metrics import SimSummary, slo_misses, summarise
from aiinfra.sim.run import simulate
from aiinfra.specs.scenario import Scenario
from aiinfra.specs.serving_sim import ServingTables
from aiinfra.specs.workload import Arrival, ServingWorkload, Slo

MAX_BRACKET_STEPS = 6
"""Doublings (or, for a rate, halvings) at most while bracketing: 64× the start either way."""
CLOSED_LOOP_REQUESTS_PER_CLIENT = 10
"""Requests per client in a closed-loop run; the clients' first requests (the ramp-up) are left out of the
percentiles (:func:`_after_start_up`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SloReading:
    """One simulated load read against the SLO (the fields a rate point and a client-count point share)."""

    meets_slo: bool
    """Every SLO limit met at this load, and every request finished."""
    misses: tuple[str, ...]
    """The SLO limits missed at this load ("TTFT p90 812 ms > 500 ms"); empty when met."""
    ttft_p90_s: float
    """90th-percentile TTFT at this load."""
    tpot_p99_s: float
    """99th-percentile exclusive TPOT at this load."""
    e2e_p99_s: float
    """99th-percentile end-to-end latency at this load."""
    output_tokens_per_s: float
    """Output tokens per second of the completed requests."""


def _reading(s: SimSummary, slo: Slo) -> dict[str, Any]:
    """The :class:`SloReading` fields of a run's summary, as keyword arguments."""
    misses = tuple(slo_misses(s, slo))
    return {
        "meets_slo": not misses,
        "misses": misses,
        "ttft_p90_s": s.ttft_s.p90,
        "tpot_p99_s": s.tpot_exclusive_s.p99,
        "e2e_p99_s": s.e2e_s.p99,
        "output_tokens_per_s": s.output_tokens_per_s,
    }


@dataclass(frozen=True, kw_only=True, slots=True)
class RatePoint(SloReading):
    """One simulated Poisson request rate read against the SLO."""

    request_rate_per_s: float
    """The Poisson arrival rate simulated."""
    slo_attainment_frac: float
    """Requests that individually meet every limit."""


class _Probe(Protocol):
    @property
    def meets_slo(self) -> bool:
        """Whether the simulated load met every SLO limit."""


P = TypeVar("P", bound=_Probe)
L = TypeVar("L", int, float)


def _boundary(
    probe: Callable[[L], P],
    start: L,
    up: Callable[[L], L],
    down: Callable[[L], L | None],
    split: Callable[[L, L], L],
    steps: Callable[[L, L], int],
    infeasible: Callable[[L, P], Exception],
    max_down: int = MAX_BRACKET_STEPS,
) -> tuple[L, list[P]]:
    """(highest load found that meets the SLO, every probe): bracket from ``start`` (``up`` at most MAX_BRACKET_STEPS
    times while the SLO holds; else ``down`` until it holds, at most ``max_down`` times or until ``down`` has nothing
    lower, then ``infeasible``), then ``steps(lo, hi)`` bisections at ``split(lo, hi)``."""
    points = [probe(start)]
    lo = hi = start
    if points[0].meets_slo:
        for _ in range(MAX_BRACKET_STEPS):
            hi = up(hi)
            points.append(probe(hi))
            if not points[-1].meets_slo:
                break
            lo = hi
        else:
            return lo, points
    else:
        for _ in range(max_down):
            lower = down(lo)
            if lower is None:
                break
            hi, lo = lo, lower
            points.append(probe(lo))
            if points[-1].meets_slo:
                break
        if not points[-1].meets_slo:
            raise infeasible(lo, points[-1])
    for _ in range(steps(lo, hi)):
        mid = split(lo, hi)
        points.append(probe(mid))
        if points[-1].meets_slo:
            lo = mid
        else:
            hi = mid
    return lo, points


def _counted(probe: Callable[[L], P], progress: Callable[[int, int | None], None] | None) -> Callable[[L], P]:
    """``probe`` reporting ``progress(simulations so far, None)`` after each simulation (the count is open)."""
    if progress is None:
        return probe
    done = 0

    def counted(load: L) -> P:
        nonlocal done
        point = probe(load)
        done += 1
        progress(done, None)
        return point

    return counted


def _with_slo(scenario: Scenario, what: str) -> ServingWorkload:
    """The scenario's workload, which must state at least one SLO limit for ``what`` to search against."""
    wl = scenario.inference
    if wl is None or wl.slo is None or all(v is None for v in (wl.slo.ttft_p90_s, wl.slo.tpot_p99_s, wl.slo.e2e_p99_s)):
        raise SpecError(
            "inference.slo", None, f"{what} needs an SLO", "set inference.slo: {ttft_p90_s: ..., tpot_p99_s: ...}"
        )
    return wl


def _point(
    scenario: Scenario, seed: int, rate: float, step_model: StepTimeModel | None, tables: ServingTables
) -> RatePoint:
    wl = scenario.inference
    assert wl is not None and wl.slo is not None
    s = simulate(scenario, seed=seed, step_model=step_model, rate_override=rate, tables=tables).summary
    return RatePoint(request_rate_per_s=rate, slo_attainment_frac=s.slo_attainment_frac or 0.0, **_reading(s, wl.slo))


def max_rate_meeting_slo(
    scenario: Scenario,
    seed: int = 0,
    iterations: int = 8,
    start_rate_per_s: float | None = None,
    step_model: StepTimeModel | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    *,
    tables: ServingTables,
) -> tuple[float, list[RatePoint]]:
    """(highest rate found that meets the SLO, every point simulated, by rate).

    Bracket: start at 1.2 × the analytic saturation rate (``aiinfra infer`` with the largest batch) or
    ``start_rate_per_s``; halve until the SLO holds (at most 6 times: below 1/64 of saturation the limit
    is the unloaded latency, and the SLO is infeasible), or double while it holds. Then ``iterations``
    bisection steps; the answer is within (hi − lo)/2^iterations below the true boundary. ``step_model``
    replaces the analytic step time (tests); ``progress(done, None)`` is called after each simulation."""
    wl = _with_slo(scenario, "finding the max rate")
    if wl.arrival is not None and wl.arrival.kind in ("trace", "concurrency"):
        raise SpecError(
            "inference.arrival.kind",
            wl.arrival.kind,
            "the rate search varies an open-loop arrival rate",
            "use arrival kind poisson or gamma",
        )
    if start_rate_per_s is None:
        sat = estimate(scenario.model, scenario.cluster, replace(wl, batch="max"), usage="server")
        start_rate_per_s = 1.2 * sat.requests_per_s
    start = start_rate_per_s

    def infeasible(rate: float, p: RatePoint) -> Exception:
        return InfeasibleError(
            f"infeasible, because the SLO is missed even at {rate:.3g} requests/s (1/64 of the start rate "
            f"{start:.3g}/s), where queueing is negligible: {'; '.join(p.misses)} — relax the SLO "
            "or use a faster deployment (more tp, lower precision, faster accelerator)"
        )

    rate, points = _boundary(
        _counted(lambda r: _point(scenario, seed, r, step_model, tables), progress),
        start,
        lambda r: 2.0 * r,
        lambda r: r / 2.0,
        lambda lo, hi: (lo + hi) / 2.0,
        lambda lo, hi: iterations,
        infeasible,
    )
    return rate, sorted(points, key=lambda q: q.request_rate_per_s)


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientsPoint(SloReading):
    """One simulated closed-loop client count read against the SLO."""

    clients: int
    """Closed-loop clients simulated."""
    requests_per_s: float
    """Completed requests per second after the ramp-up."""


def _after_start_up(rec: Records, clients: int) -> Records:
    """The run without its first ``clients`` requests (the ramp-up); the later ones arrive as earlier answers
    end."""
    cut = slice(clients, None)
    return replace(
        rec,
        arrival_s=rec.arrival_s[cut],
        first_token_s=rec.first_token_s[cut],
        finish_s=rec.finish_s[cut],
        input_tokens=rec.input_tokens[cut],
        output_tokens=rec.output_tokens[cut],
        priority=rec.priority[cut],
    )


def closed_loop_run(
    scenario: Scenario,
    clients: int,
    seed: int = 0,
    step_model: StepTimeModel | None = None,
    ramp: bool = True,
    *,
    tables: ServingTables,
) -> tuple[Records, SimSummary]:
    """``clients`` closed-loop clients on the scenario's deployment, CLOSED_LOOP_REQUESTS_PER_CLIENT requests each:
    the steady-state records (without the first ``clients`` requests) and their summary. With ``ramp`` the clients
    start evenly over one request's lifetime at this load (output tokens × the steady-state step of ``clients``
    sequences, priced by the step model the run uses), so they are out of step from the start, as independent users
    are (Arrival.ramp_s); without it they all start at t = 0, as a benchmark client's concurrency mode launches
    them, and requests of equal lengths then keep them in step (each refill arrives as one burst)."""
    wl = scenario.inference
    assert wl is not None
    ramp_s = None
    if ramp:
        model = step_model or model_for(scenario.model, scenario.cluster, wl)
        step = steady_state_step(clients, wl.input_tokens, wl.output_tokens)
        ramp_s = wl.output_tokens * model.iteration_time_s(step)
    closed = _closed_loop(wl, clients, max(wl.num_requests or 0, CLOSED_LOOP_REQUESTS_PER_CLIENT * clients), ramp_s)
    rec = simulate(replace(scenario, inference=closed), seed=seed, step_model=step_model, tables=tables).records
    steady = _after_start_up(rec, clients)
    return steady, summarise(steady, wl.slo, tables.engine.request_overhead_s)


def benchmark_closed_loop_run(
    scenario: Scenario,
    clients: int,
    num_requests: int,
    seed: int = 0,
    step_model: StepTimeModel | None = None,
    *,
    tables: ServingTables,
) -> SimSummary:
    """A serving benchmark's concurrency mode as its client runs and scores it: ``num_requests`` requests
    (``--num-prompts``) behind a semaphore of ``clients`` (``--max-concurrency``) at request rate inf, so the first
    ``clients`` requests leave at once and each later one when an earlier answer ends; the statistics cover every
    request and the throughput the whole run. ``vllm bench serve`` / benchmark_serving.py and sglang.bench_serving
    create every request's task at once (``get_request`` yields without sleeping at rate inf), the semaphore admits
    the first ``clients`` together, and ``calculate_metrics`` averages TTFT and TPOT over every successful output
    and divides the tokens by the whole benchmark's duration; a warm-up request (or InferenceX's 2 × concurrency)
    runs and finishes before that clock starts. So the opening burst of ``clients`` prompts, which
    :func:`closed_loop_run` leaves out as a ramp-up, is part of what these rows measured: with 5 requests per client
    (the SGLang cookbook's runs) it is a fifth of the requests averaged."""
    wl = scenario.inference
    assert wl is not None
    closed = _closed_loop(wl, clients, num_requests, None)
    rec = simulate(replace(scenario, inference=closed), seed=seed, step_model=step_model, tables=tables).records
    return summarise(rec, wl.slo, tables.engine.request_overhead_s)


def _closed_loop(wl: ServingWorkload, clients: int, num_requests: int, ramp_s: float | None) -> ServingWorkload:
    """``wl`` as ``clients`` closed-loop clients sending ``num_requests`` requests (their starts spread over
    ``ramp_s``, or all at once)."""
    return replace(
        wl,
        arrival=Arrival(kind="concurrency", ramp_s=ramp_s),
        concurrency=clients,
        request_rate_per_s=None,
        users=None,
        duration_s=None,
        num_requests=num_requests,
    )


def _clients_point(
    scenario: Scenario, seed: int, clients: int, step_model: StepTimeModel | None, tables: ServingTables
) -> ClientsPoint:
    wl = scenario.inference
    assert wl is not None and wl.slo is not None
    s = closed_loop_run(scenario, clients, seed, step_model, tables=tables)[1]
    return ClientsPoint(clients=clients, requests_per_s=s.requests_per_s, **_reading(s, wl.slo))


def max_clients_meeting_slo(
    scenario: Scenario,
    seed: int = 0,
    start_clients: int | None = None,
    step_model: StepTimeModel | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    *,
    tables: ServingTables,
) -> tuple[int, list[ClientsPoint]]:
    """(most closed-loop clients found that meet the SLO, every point simulated, by client count).

    Bracket from ``start_clients`` (default: the largest batch one replica holds, ``aiinfra infer`` with
    ``batch: max``): double while the SLO holds (at most 6 times), or halve until it holds (down to one client;
    if one client misses it, the SLO is infeasible). Then bisect on whole clients until the bracket closes."""
    wl = _with_slo(scenario, "finding the most clients")
    if wl.arrival is not None and wl.arrival.kind == "trace":
        raise SpecError(
            "inference.arrival.kind",
            wl.arrival.kind,
            "the client search generates its own requests",
            "use arrival kind poisson, gamma or concurrency",
        )
    if start_clients is None:
        start_clients = estimate(scenario.model, scenario.cluster, replace(wl, batch="max"), usage="server").batch_seqs

    def infeasible(_: int, p: ClientsPoint) -> Exception:
        return InfeasibleError(
            f"infeasible, because one client alone misses the SLO: {'; '.join(p.misses)} — relax the SLO or use a "
            "faster deployment (more tp, lower precision, faster accelerator)"
        )

    clients, points = _boundary(
        _counted(lambda c: _clients_point(scenario, seed, c, step_model, tables), progress),
        max(1, start_clients),
        lambda c: 2 * c,
        lambda c: max(1, c // 2) if c > 1 else None,
        lambda lo, hi: (lo + hi) // 2,
        lambda lo, hi: math.ceil(math.log2(max(hi - lo, 1))),
        infeasible,
        max_down=start_clients.bit_length(),
    )
    return clients, sorted(points, key=lambda q: q.clients)
