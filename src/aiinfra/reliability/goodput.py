"""Expected completion time of a checkpointed job under failures, its ETTR, and the spare nodes that minimise cost.

The run is ``n`` segments of τ seconds of training, each followed by a checkpoint that blocks training δ seconds
(L = τ + δ). Unexpected failures arrive as a Poisson process of rate λ (rates.py), also during restarts; a failure
loses the work since the last completed checkpoint and costs a downtime D (detection + rescheduling/repair wait +
process and NCCL start + checkpoint load) that a further failure restarts. Then (Daly, "A higher order estimate of
the optimum checkpoint interval for restart dumps", FGCS 22, 2006, eq. for the expected wall time with restarts):

    E[T] = n · (e^{λL} − 1) / (λ · E[e^{−λD}])

which for a fixed D is Daly's M·e^{D/M}·(e^{(τ+δ)/M} − 1)·T_s/τ with M = 1/λ, T_s = n·τ. The expected number of
unexpected interruptions is λ·E[T] (failures during downtime included). Planned interruptions (rate λ_p, each a
restart and a load at a checkpoint, no lost work) stretch the time by 1/(1 − λ_p·D_p). To first order this is the
Young (CACM 1974) waste δ/τ + λ(τ/2 + D), the τ/2 being the expected work lost per failure.

ETTR = useful training time / wall-clock time (Kokolis et al., "Revisiting Reliability in Large-Scale Machine
Learning Research Clusters", arXiv 2410.21680, 2024, §V; Llama 3 §3.3.4 "effective training time").

Spares: a failure that takes a node out (``needs_repair``) is replaced by a hot spare if one is free; nodes under
repair (repair time R) are the occupancy of an M/G/∞ queue, Poisson with mean m = λ_repair·R (Palm's theorem), so
a failure finds every one of s spares busy with probability P(N ≥ s). Without a free spare the job waits for a
repaired node: R with no spares, else about R/(s + 1) (the nearest of ≥ s residual repair times, uniform on (0, R)).
The best spare count minimises accelerator-hours held, (nodes + s) × per node × E[T].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from aiinfra.errors import SpecError


@dataclass(frozen=True, kw_only=True, slots=True)
class Downtime:
    """What one unexpected failure costs before training runs again: a two-point distribution."""

    base_s: float
    """Detection + restart + checkpoint load (every failure)."""
    wait_s: float
    """Extra wait for a repaired node when the failed node needs repair and no spare is free."""
    wait_probability_frac: float
    """P(a failure waits): P(needs repair) × P(every spare busy)."""

    @property
    def mean_s(self) -> float:
        return self.base_s + self.wait_probability_frac * self.wait_s

    def laplace(self, rate_per_s: float) -> float:
        """E[e^{−λD}]."""
        p = self.wait_probability_frac
        return (1.0 - p) * math.exp(-rate_per_s * self.base_s) + p * math.exp(-rate_per_s * (self.base_s + self.wait_s))


def spare_wait(repair_rate_per_s: float, repair_s: float, spare_nodes: int) -> tuple[float, float]:
    """(P(every spare busy), wait then) for a failure that needs repair (M/G/∞ occupancy, module docstring)."""
    if spare_nodes == 0:
        return 1.0, repair_s
    return poisson_sf(spare_nodes, repair_rate_per_s * repair_s), repair_s / (spare_nodes + 1)


def poisson_sf(k: int, mean: float) -> float:
    """P(N ≥ k) for N ~ Poisson(mean)."""
    if mean <= 0:
        return 0.0 if k > 0 else 1.0
    below = sum(math.exp(i * math.log(mean) - mean - math.lgamma(i + 1)) for i in range(k))
    return max(0.0, 1.0 - below)


def downtime(*, detection_s: float, restart_s: float, load_s: float, unexpected_per_s: float, repair_per_s: float,
             repair_s: float, spare_nodes: int) -> Downtime:  # fmt: skip
    p_busy, wait = spare_wait(repair_per_s, repair_s, spare_nodes)
    p_repair = repair_per_s / unexpected_per_s if unexpected_per_s > 0 else 0.0
    return Downtime(base_s=detection_s + restart_s + load_s, wait_s=wait, wait_probability_frac=p_repair * p_busy)


@dataclass(frozen=True, kw_only=True, slots=True)
class Expectation:
    """The analytic expectation of one run."""

    segments_count: int
    interval_s: float
    """τ actually used: the useful time split into whole segments."""
    wall_s: float
    """E[T], planned interruptions included."""
    unexpected_interruptions_count: float
    planned_interruptions_count: float
    ettr_frac: float
    lost_work_s: float
    """Expected training redone (work since the last checkpoint, summed over failures)."""
    downtime_s: float
    """Expected time in detection, restart, repair waits and loads (unexpected and planned)."""
    checkpoint_overhead_s: float
    """Time training is blocked by checkpoints (n × δ)."""


def segments(useful_s: float, interval_s: float) -> tuple[int, float]:
    """Whole segments: n = max(1, round(W/τ)), τ' = W/n."""
    n = max(1, round(useful_s / interval_s))
    return n, useful_s / n


def expected_run(*, useful_s: float, interval_s: float, blocking_s: float, unexpected_per_s: float,
                 down: Downtime, planned_per_s: float, planned_downtime_s: float) -> Expectation:  # fmt: skip
    """E[T] and its parts (module docstring: Daly 2006's exact expectation with a random downtime)."""
    n, tau = segments(useful_s, interval_s)
    length = tau + blocking_s
    lam = unexpected_per_s
    if lam * length > 50 or planned_per_s * planned_downtime_s >= 1:
        raise SpecError("reliability", f"MTBF {1 / max(lam, 1e-300):,.0f} s",
                        f"failures come faster than a {length:,.0f} s checkpoint segment can finish",
                        "checkpoint more often (reliability.checkpoint_interval_s), or lower the failure rates")
    if lam > 0:
        laplace = down.laplace(lam)
        unexpected_s = n * math.expm1(lam * length) / (lam * laplace)
    else:
        unexpected_s = n * length
    stretch = 1.0 / (1.0 - planned_per_s * planned_downtime_s)
    wall = unexpected_s * stretch
    failures = lam * unexpected_s
    planned = planned_per_s * wall
    lost_work = n * (math.expm1(lam * length) / lam - length) if lam > 0 else 0.0
    down_total = wall - n * length - lost_work
    return Expectation(segments_count=n, interval_s=tau, wall_s=wall, unexpected_interruptions_count=failures,
                       planned_interruptions_count=planned, ettr_frac=useful_s / wall, lost_work_s=lost_work,
                       downtime_s=down_total, checkpoint_overhead_s=n * blocking_s)  # fmt: skip


@dataclass(frozen=True, kw_only=True, slots=True)
class SpareChoice:
    spare_nodes: int
    wall_s: float
    held_accelerator_hours: float
    """(nodes + spares) × accelerators per node × E[T] / 3600."""


def best_spares(evaluate: Callable[[int], float], nodes: int, per_node: int, repair_per_s: float, repair_s: float,
                given: int | None) -> tuple[SpareChoice, tuple[SpareChoice, ...]]:  # fmt: skip
    """The spare count minimising accelerator-hours held (or the given one), and every count tried. ``evaluate``
    maps a spare count to E[T]; counts tried: 0 up to m + 6√m + 2 (m = λ_repair·R, nodes in repair on average),
    past which P(every spare busy) is negligible."""
    m = repair_per_s * repair_s
    top = int(m + 6.0 * math.sqrt(m) + 2)
    counts = [given] if given is not None else list(range(top + 1))
    tried = tuple(SpareChoice(spare_nodes=s, wall_s=(w := evaluate(s)),
                              held_accelerator_hours=(nodes + s) * per_node * w / 3600.0) for s in counts)  # fmt: skip
    return min(tried, key=lambda c: (c.held_accelerator_hours, c.spare_nodes)), tried
