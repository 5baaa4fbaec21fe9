"""Highest request rate whose simulated run meets the SLO: bracket, then bisect over simulations.

Every run uses the same seed, so arrival gaps are the same unit draws scaled by 1/rate (common random
numbers): latency then rises with the rate without sampling noise between the points, and bisection is
sound. The SLO's limits are read as percentiles of the run (slo_misses): TTFT p90, exclusive TPOT p99,
end-to-end p99.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from aiinfra.analytic.step_time import StepTimeModel
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.inference import estimate
from aiinfra.sim.metrics import slo_misses
from aiinfra.sim.run import simulate
from aiinfra.specs.scenario import Scenario


@dataclass(frozen=True, kw_only=True, slots=True)
class RatePoint:
    request_rate_per_s: float
    meets_slo: bool
    misses: tuple[str, ...]
    """The SLO limits missed at this rate ("TTFT p90 812 ms > 500 ms"); empty when met."""
    slo_attainment_frac: float
    """Requests that individually meet every limit."""
    ttft_p90_s: float
    tpot_p99_s: float
    e2e_p99_s: float
    output_tokens_per_s: float


def _point(scenario: Scenario, seed: int, rate: float, step_model: StepTimeModel | None) -> RatePoint:
    wl = scenario.inference
    assert wl is not None and wl.slo is not None
    s = simulate(scenario, seed=seed, step_model=step_model, rate_override=rate).summary
    misses = tuple(slo_misses(s, wl.slo))
    return RatePoint(request_rate_per_s=rate, meets_slo=not misses, misses=misses,
                     slo_attainment_frac=s.slo_attainment_frac or 0.0, ttft_p90_s=s.ttft_s.p90,
                     tpot_p99_s=s.tpot_exclusive_s.p99, e2e_p99_s=s.e2e_s.p99,
                     output_tokens_per_s=s.output_tokens_per_s)  # fmt: skip


def max_rate_meeting_slo(
    scenario: Scenario,
    seed: int = 0,
    iterations: int = 8,
    start_rate_per_s: float | None = None,
    step_model: StepTimeModel | None = None,
) -> tuple[float, list[RatePoint]]:
    """(highest rate found that meets the SLO, every point simulated, by rate).

    Bracket: start at 1.2 × the analytic saturation rate (``aiinfra infer`` with the largest batch) or
    ``start_rate_per_s``; halve until the SLO holds (at most 6 times: below 1/64 of saturation the limit
    is the unloaded latency, and the SLO is infeasible), or double while it holds. Then ``iterations``
    bisection steps; the answer is within (hi − lo)/2^iterations below the true boundary. ``step_model``
    replaces the analytic step time (tests)."""
    wl = scenario.inference
    if wl is None or wl.slo is None or all(v is None for v in (wl.slo.ttft_p90_s, wl.slo.tpot_p99_s, wl.slo.e2e_p99_s)):
        raise SpecError("inference.slo", None, "finding the max rate needs an SLO",
                        "set inference.slo: {ttft_p90_s: ..., tpot_p99_s: ...}")  # fmt: skip
    if wl.arrival is not None and wl.arrival.kind in ("trace", "concurrency"):
        raise SpecError("inference.arrival.kind", wl.arrival.kind, "the rate search varies an open-loop arrival rate",
                        "use arrival kind poisson or gamma")  # fmt: skip
    if start_rate_per_s is None:
        sat = estimate(scenario.model, scenario.cluster, replace(wl, batch="max"), usage="server")
        start_rate_per_s = 1.2 * sat.requests_per_s
    points: list[RatePoint] = []
    first = _point(scenario, seed, start_rate_per_s, step_model)
    points.append(first)
    lo = hi = start_rate_per_s
    if first.meets_slo:
        for _ in range(6):
            hi *= 2.0
            p = _point(scenario, seed, hi, step_model)
            points.append(p)
            if not p.meets_slo:
                break
            lo = hi
        else:
            return lo, sorted(points, key=lambda q: q.request_rate_per_s)
    else:
        for _ in range(6):
            lo /= 2.0
            p = _point(scenario, seed, lo, step_model)
            points.append(p)
            if p.meets_slo:
                break
            hi = lo
        else:
            raise InfeasibleError(
                f"infeasible, because the SLO is missed even at {lo:.3g} requests/s (1/64 of the start rate "
                f"{start_rate_per_s:.3g}/s), where queueing is negligible: {'; '.join(p.misses)} — relax the SLO "
                "or use a faster deployment (more tp, lower precision, faster accelerator)"
            )
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        p = _point(scenario, seed, mid, step_model)
        points.append(p)
        if p.meets_slo:
            lo = mid
        else:
            hi = mid
    return lo, sorted(points, key=lambda q: q.request_rate_per_s)
