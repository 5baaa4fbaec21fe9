"""Serving-simulation questions: one discrete-event run, and the highest request rate meeting the SLO."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiinfra.app.base import Result, accuracy_for, flatten
from aiinfra.app.tables import serving_tables
from aiinfra.errors import AiinfraError
from aiinfra.planning.inference import estimate_inference
from aiinfra.report.render import jsonable
from aiinfra.sim.metrics import per_request
from aiinfra.sim.run import SimResult
from aiinfra.sim.run import simulate as run_simulation
from aiinfra.sim.search import RatePoint, max_rate_meeting_slo
from aiinfra.specs.scenario import Scenario


@dataclass(frozen=True, kw_only=True, slots=True)
class SimulateResult(Result):
    """The answer of :func:`simulate`."""

    scenario: Scenario
    run: SimResult
    """Summary (latency percentiles, throughput, goodput, KV use), per-request records, limits and notes."""
    seed: int

    def latencies(self) -> dict[str, list[float]]:
        """Every request's TTFT, exclusive TPOT and end-to-end latency in seconds (finished requests)."""
        return {
            k: [float(x) for x in v if x == x]
            for k, v in per_request(self.run.records, self.run.request_overhead_s).items()
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra simulate --json`` object: the run's summary fields, replicas, seed, the scheduler limits used,
        notes and ``accuracy``."""
        res = self.run
        obj: dict[str, Any] = {
            **jsonable(res.summary),
            "replicas": res.replicas,
            "seed": self.seed,
            "limits": jsonable(res.limits),
            "notes": list(res.notes),
        }
        if res.attention_dp_ranks > 1:
            obj["attention_dp_ranks"] = res.attention_dp_ranks
        obj["accuracy"] = accuracy_for("simulate", self.scenario, obj, _saturation(self.scenario))
        return obj


def _saturation(sc: Scenario) -> tuple[float | None, float | None]:
    """The saturated requests/s and sequences (all replicas) of the scenario's deployment by the analytic estimate,
    for the error band's load level; (None, None) when the estimate cannot be made."""
    try:
        e = estimate_inference(sc)
    except AiinfraError:
        return None, None
    return e.saturated_requests_per_s, float(e.saturated_batch_seqs * e.replicas)


def simulate(scenario: Scenario, seed: int = 0) -> SimulateResult:
    """Simulate serving the scenario's requests (continuous batching, chunked prefill, paged-KV preemption,
    routers); the same seed gives the same result."""
    run = run_simulation(scenario, seed=seed, tables=serving_tables(scenario))
    return SimulateResult(scenario=scenario, run=run, seed=seed)


@dataclass(frozen=True, kw_only=True, slots=True)
class MaxRateResult(Result):
    """The answer of :func:`find_max_rate`."""

    scenario: Scenario
    max_request_rate_per_s: float
    """The highest Poisson request rate whose simulation meets every SLO limit."""
    points: tuple[RatePoint, ...]
    """Every rate the bisection simulated, with its latency percentiles and verdict."""
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra simulate --find-max-rate --json`` object: the highest rate meeting the SLO, the seed, and every
        rate simulated."""
        return {
            "max_request_rate_per_s": self.max_request_rate_per_s,
            "seed": self.seed,
            "points": [jsonable(p) for p in self.points],
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """Every simulated rate."""
        return [flatten(jsonable(p)) for p in self.points]


def find_max_rate(
    scenario: Scenario, seed: int = 0, progress: Callable[[int, int | None], None] | None = None
) -> MaxRateResult:
    """Bisect the highest request rate at which a simulation of the scenario meets its SLO; ``progress(done,
    None)`` is called after each simulation."""
    rate, points = max_rate_meeting_slo(scenario, seed=seed, progress=progress, tables=serving_tables(scenario))
    return MaxRateResult(scenario=scenario, max_request_rate_per_s=rate, points=tuple(points), seed=seed)
