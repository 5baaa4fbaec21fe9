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
from dataclasses import dataclass, field

from aiinfra.errors import SpecError

Mixture = tuple[tuple[float, float], ...]
"""A discrete distribution: (probability, seconds) points whose probabilities sum to 1."""


def _mix_mean(m: Mixture) -> float:
    return sum(p * d for p, d in m)


def _mix_laplace(m: Mixture, rate_per_s: float) -> float:
    return sum(p * math.exp(-rate_per_s * d) for p, d in m) if m else 1.0


@dataclass(frozen=True, kw_only=True, slots=True)
class Downtime:
    """What one unexpected failure costs before training runs again, as independent parts: a fixed part, the wait
    for a repaired node (two points), the detection (by kind: crash or hang), a person's response (by hour of day)
    and the restart: for the failures that swap a machine (share ``restart_chain_frac``) a chain of attempts, each
    failing with probability q (geometric count, 1/(1 − q) on average), for the others one attempt.

    Why only machine swaps chain: the operators' reports of failed attempts are about the replacement machine, not
    the restart itself (OPT-175B chronicles, 27 % update, 2021-12-03: a bad node that "goes down with ECC errors" is
    replaced, and "more often than not we would end up getting the same bad machine again. Nodes would also come up
    with NCCL/IB issues, or the same ECC errors"; OPT, arXiv 2205.01068 §2.5: the restarts came with "the cycling of
    over 100 hosts"; Kokolis et al., arXiv 2410.21680: a failed health check removes the node and the job restarts "on
    different nodes", and repeat-offender "lemon" nodes, found by per-node signals such as job exclusions and node
    failures, caused repeated large-job failures: detecting them cut those from 14 % to 4 %). A software crash, an NCCL
    hang or a dependency failure restarts on the same, healthy nodes."""

    base_s: float
    """Fixed for every failure: checkpoint load and warm-up (and, with the defaults below, detection + restart)."""
    wait_s: float
    """Extra wait for a repaired node when the failed node needs repair and no spare is free."""
    wait_probability_frac: float
    """P(a failure waits): P(needs repair) × P(every spare busy)."""
    detection: Mixture = ()
    """Detection time by kind (crash, hang) weighted by the kinds' shares of the failure rate."""
    human: Mixture = ()
    """A person's response: 0 for failures that need none, day or night response time for the others."""
    restart_attempt_s: float = 0.0
    restart_failure_prob: float = 0.0
    restart_chain_frac: float = 1.0
    """Share of the failures whose restart is a chain (those that swap a machine: the catalog's needs_repair rows);
    the others restart once."""

    @property
    def restart_attempts_mean(self) -> float:
        """Expected attempts per recovery over the kinds: f/(1 − q) + (1 − f)."""
        f = self.restart_chain_frac
        return f * retry_attempts_mean(self.restart_failure_prob) + (1.0 - f)

    @property
    def restart_mean_s(self) -> float:
        """Expected restart time: the attempts per recovery × the attempt time."""
        return self.restart_attempt_s * self.restart_attempts_mean

    @property
    def parts_mean_s(self) -> dict[str, float]:
        """Mean seconds by part (the badput breakdown of failures' downtime)."""
        return {
            "detection": _mix_mean(self.detection),
            "human_response": _mix_mean(self.human),
            "restart": self.restart_mean_s,
            "load_and_warmup": self.base_s,
            "repair_wait": self.wait_probability_frac * self.wait_s,
        }

    @property
    def mean_s(self) -> float:
        """Expected downtime (s) of one failure: the sum of its parts."""
        return sum(self.parts_mean_s.values())

    def laplace(self, rate_per_s: float) -> float:
        """E[e^{−λD}]: the product over the independent parts (the restart: with probability f a geometric chain of
        attempts a, failure probability q, (1 − q)e^{−λa} / (1 − q·e^{−λa}); else one attempt, e^{−λa})."""
        p = self.wait_probability_frac
        out = (1.0 - p) * math.exp(-rate_per_s * self.base_s) + p * math.exp(-rate_per_s * (self.base_s + self.wait_s))
        out *= _mix_laplace(self.detection, rate_per_s) * _mix_laplace(self.human, rate_per_s)
        if self.restart_attempt_s > 0:
            q, e = self.restart_failure_prob, math.exp(-rate_per_s * self.restart_attempt_s)
            f = self.restart_chain_frac
            out *= f * (1.0 - q) * e / (1.0 - q * e) + (1.0 - f) * e
        return out


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


def downtime(
    *,
    detection_s: float,
    restart_s: float,
    load_s: float,
    unexpected_per_s: float,
    repair_per_s: float,
    repair_s: float,
    spare_nodes: int,
    crash_detection_s: float | None = None,
    hang_per_s: float = 0.0,
    human_s: Mixture = (),
    restart_failure_prob: float = 0.0,
    warmup_s: float = 0.0,
) -> Downtime:
    """The downtime of one unexpected failure: detection by kind (hangs at the watchdog timeout ``detection_s``,
    crashes after ``crash_detection_s``, by default the same), a person's response for failures that need a repair
    (``human_s``: a mixture over the hour of day), the restart (a chain of attempts for the failures that need a
    repair, a machine swapped; one attempt for the others: Downtime), the load and warm-up, the wait for a repair."""
    p_busy, wait = spare_wait(repair_per_s, repair_s, spare_nodes)
    p_repair = repair_per_s / unexpected_per_s if unexpected_per_s > 0 else 0.0
    p_hang = hang_per_s / unexpected_per_s if unexpected_per_s > 0 else 0.0
    crash = detection_s if crash_detection_s is None else crash_detection_s
    detect: Mixture = ((p_hang, detection_s), (1.0 - p_hang, crash)) if p_hang > 0 else ((1.0, crash),)
    human: Mixture = ((1.0 - p_repair, 0.0), *((p_repair * p, d) for p, d in human_s)) if human_s else ()
    return Downtime(
        base_s=load_s + warmup_s,
        wait_s=wait,
        wait_probability_frac=p_repair * p_busy,
        detection=detect,
        human=human,
        restart_attempt_s=restart_s,
        restart_failure_prob=restart_failure_prob,
        restart_chain_frac=p_repair,
    )


def human_response_mixture(day_s: float, night_s: float, day_start_hour: int, day_end_hour: int) -> Mixture:
    """A person's response by hour of day, failures arriving uniformly over the 24 hours: day_s with probability
    (hours in [start, end)) / 24, night_s otherwise."""
    day_hours = (day_end_hour - day_start_hour) % 24 if day_end_hour != day_start_hour else 24
    p_day = day_hours / 24.0
    return ((p_day, day_s), (1.0 - p_day, night_s))


def retry_attempts_mean(restart_failure_prob: float) -> float:
    """Expected attempts of a restart chain whose attempts each fail with probability q: 1 / (1 − q)."""
    return 1.0 / (1.0 - restart_failure_prob)


def lemon_exposure_s(node_rate_per_s: float, rate_ratio: float, exclude_after_count: int, horizon_s: float) -> float:
    """E[min(τ_k, T)] for a lemon node failing at m·r until excluded at its k-th failure: ∫₀ᵀ P(N(t) < k) dt =
    (1/(m r)) Σ_{j=1..k} P(Poisson(m r T) ≥ j). Its expected failures are m·r·E[min(τ_k, T)] (→ k for long runs)."""
    mr = node_rate_per_s * rate_ratio
    if mr <= 0:
        return horizon_s
    return sum(poisson_sf(j, mr * horizon_s) for j in range(1, exclude_after_count + 1)) / mr


@dataclass(frozen=True, kw_only=True, slots=True)
class Expectation:
    """The analytic expectation of one run."""

    segments_count: int
    interval_s: float
    """τ actually used: the useful time split into whole segments."""
    wall_s: float
    """E[T], planned interruptions and other stops included."""
    unexpected_interruptions_count: float
    planned_interruptions_count: float
    ettr_frac: float
    lost_work_s: float
    """Expected training redone (work since the last checkpoint, summed over failures)."""
    downtime_s: float
    """Expected time in detection, restart, repair waits and loads (unexpected failures, planned and other stops)."""
    checkpoint_overhead_s: float
    """Time training is blocked by checkpoints (n × δ)."""
    failure_downtime_s: float = 0.0
    """The part of downtime_s after unexpected failures (detection, response, restarts, loads, repair waits)."""
    stops_s: dict[str, float] = field(default_factory=dict)
    """Expected time of the other stops by kind (planned restarts, slow nodes, rollbacks)."""
    stop_counts: dict[str, float] = field(default_factory=dict)
    fixed_s: float = 0.0
    """Once per run: the first start and warm-up."""


def segments(useful_s: float, interval_s: float) -> tuple[int, float]:
    """Whole segments: n = max(1, round(W/τ)), τ' = W/n."""
    n = max(1, round(useful_s / interval_s))
    return n, useful_s / n


Stop = tuple[str, float, float]
"""A stop of the running job: (kind, rate per second, seconds each costs)."""


def stops_stretch(stops: tuple[Stop, ...]) -> float:
    """Poisson stops of rate λ_i costing c_i each stretch the running time by 1/(1 − Σ λ_i·c_i)."""
    load = sum(rate * cost for _, rate, cost in stops)
    return 1.0 / (1.0 - load) if load < 1 else math.inf


def expected_run(
    *,
    useful_s: float,
    interval_s: float,
    blocking_s: float,
    unexpected_per_s: float,
    down: Downtime,
    planned_per_s: float,
    planned_downtime_s: float,
    other_stops: tuple[Stop, ...] = (),
    fixed_s: float = 0.0,
) -> Expectation:
    """E[T] and its parts (module docstring: Daly 2006's exact expectation with a random downtime); planned
    restarts and ``other_stops`` (slow nodes, rollbacks) stretch it; ``fixed_s`` is paid once."""
    n, tau = segments(useful_s, interval_s)
    length = tau + blocking_s
    lam = unexpected_per_s
    stops = (("planned", planned_per_s, planned_downtime_s), *other_stops)
    stretch = stops_stretch(stops)
    if lam * length > 50 or not math.isfinite(stretch):
        raise SpecError(
            "reliability",
            f"MTBF {1 / max(lam, 1e-300):,.0f} s",
            f"failures and stops come faster than a {length:,.0f} s checkpoint segment can finish",
            "checkpoint more often (reliability.checkpoint_interval_s), or lower the failure rates",
        )
    if lam > 0:
        laplace = down.laplace(lam)
        unexpected_s = n * math.expm1(lam * length) / (lam * laplace)
    else:
        unexpected_s = n * length
    running = unexpected_s * stretch
    wall = fixed_s + running
    failures = lam * unexpected_s
    lost_work = n * (math.expm1(lam * length) / lam - length) if lam > 0 else 0.0
    extra = running - unexpected_s
    load = sum(rate * cost for _, rate, cost in stops)
    stops_s = {k: (extra * rate * cost / load if load > 0 else 0.0) for k, rate, cost in stops}
    counts = {k: rate * running for k, rate, _ in stops}
    return Expectation(
        segments_count=n,
        interval_s=tau,
        wall_s=wall,
        unexpected_interruptions_count=failures,
        planned_interruptions_count=counts["planned"],
        ettr_frac=useful_s / wall,
        lost_work_s=lost_work,
        downtime_s=wall - fixed_s - n * length - lost_work,
        checkpoint_overhead_s=n * blocking_s,
        failure_downtime_s=unexpected_s - n * length - lost_work,
        stops_s=stops_s,
        stop_counts=counts,
        fixed_s=fixed_s,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class SpareChoice:
    """A number of spare nodes and what it gives: the job's expected wall time (s) and the accelerator-hours held."""

    spare_nodes: int
    wall_s: float
    held_accelerator_hours: float
    """(nodes + spares) × accelerators per node × E[T] / 3600."""


def best_spares(
    evaluate: Callable[[int], float], nodes: int, per_node: int, repair_per_s: float, repair_s: float, given: int | None
) -> tuple[SpareChoice, tuple[SpareChoice, ...]]:
    """The spare count minimising accelerator-hours held (or the given one), and every count tried. ``evaluate``
    maps a spare count to E[T]; counts tried: 0 up to m + 6√m + 2 (m = λ_repair·R, nodes in repair on average),
    past which P(every spare busy) is negligible."""
    m = repair_per_s * repair_s
    top = int(m + 6.0 * math.sqrt(m) + 2)
    counts = [given] if given is not None else list(range(top + 1))
    tried = tuple(
        SpareChoice(
            spare_nodes=s, wall_s=(w := evaluate(s)), held_accelerator_hours=(nodes + s) * per_node * w / 3600.0
        )
        for s in counts
    )
    return min(tried, key=lambda c: (c.held_accelerator_hours, c.spare_nodes)), tried
