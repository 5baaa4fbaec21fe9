"""Highest request rate whose simulated run meets the SLO (bisection over simulations, same seed)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.inference import estimate
from aiinfra.sim.run import simulate
from aiinfra.specs.scenario import Scenario


@dataclass(frozen=True, kw_only=True, slots=True)
class RatePoint:
    request_rate_per_s: float
    slo_attainment_frac: float
    ttft_p90_s: float
    tpot_p99_s: float
    output_tokens_per_s: float


def max_rate_meeting_slo(
    scenario: Scenario, seed: int = 0, attainment_frac: float = 0.99, iterations: int = 8
) -> tuple[float, list[RatePoint]]:
    """Bisection between 0 and the analytic saturation rate: the SLO holds for ≥ ``attainment_frac`` of
    requests (p90 TTFT / p99 TPOT targets read as per-request limits)."""
    wl = scenario.inference
    if wl is None or wl.slo is None:
        raise SpecError("inference.slo", None, "finding the max rate needs an SLO", "set inference.slo")
    sat = estimate(scenario.model, scenario.cluster, replace(wl, batch="max"))
    hi = sat.requests_per_s * 1.2
    lo = 0.0
    points: list[RatePoint] = []
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        res = simulate(scenario, seed=seed, rate_override=mid).summary
        att = res.slo_attainment_frac or 0.0
        points.append(
            RatePoint(
                request_rate_per_s=mid,
                slo_attainment_frac=att,
                ttft_p90_s=res.ttft_s.p90,
                tpot_p99_s=res.tpot_exclusive_s.p99,
                output_tokens_per_s=res.output_tokens_per_s,
            )
        )
        if att >= attainment_frac:
            lo = mid
        else:
            hi = mid
    if lo == 0.0:
        raise InfeasibleError(
            f"the SLO is not met at any rate tried (lowest {min(p.request_rate_per_s for p in points):.3g}/s): "
            "even a lightly loaded replica misses TTFT or TPOT — relax the SLO or use a faster deployment"
        )
    return lo, sorted(points, key=lambda p: p.request_rate_per_s)
