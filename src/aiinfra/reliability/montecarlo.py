"""Monte-Carlo of a checkpointed training run under failures (the process goodput.py takes the expectation of).

Per trial, vectorised over trials with numpy: failures during the n running segments of length L = τ + δ are
counted at once (failed attempts before n successes: negative binomial with success probability e^{−λL}); each
failed attempt loses a truncated exponential on [0, L) (inverse CDF; for a trial of k ≥ 200 failures their sum is
drawn at once as a normal of the exact mean k·μ and variance k·σ², the central limit theorem: the sum's skewness is
then below 0.1); each failure then plays its restart: a downtime D (goodput.Downtime's independent parts: repair
wait, detection by kind, a person's response, a geometric chain of attempts for the failures that swap a machine,
one attempt for the others) that a failure arriving within it (Exp(λ) < D) cuts short and starts again, counted as
a further interruption. Planned restarts and other stops stretch each trial's time by 1/(1 − Σ λ_i·c_i), their
expectation. One seeded numpy Generator, trials in fixed
blocks: same seed, same answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aiinfra.reliability.goodput import Downtime, Mixture, Stop, segments, stops_stretch

#: trials per vectorised block (bounds memory: a block holds every failure of its trials)
BLOCK_TRIALS = 1000


@dataclass(frozen=True, kw_only=True, slots=True)
class Distribution:
    """Completion time and interruptions over the trials."""

    trials: int
    seed: int
    wall_mean_s: float
    wall_p10_s: float
    wall_p50_s: float
    wall_p90_s: float
    wall_p99_s: float
    interruptions_mean_count: float
    """Unexpected interruptions per trial, on average (failures during restarts included)."""
    interruptions_p90_count: float


def _draw_mixture(rng: np.random.Generator, size: int, mix: Mixture) -> np.ndarray | float:
    if not mix:
        return 0.0
    if len(mix) == 1:
        return mix[0][1]
    probs = np.array([p for p, _ in mix])
    return np.array([d for _, d in mix])[rng.choice(len(mix), size=size, p=probs / probs.sum())]


def _draw_downtime(rng: np.random.Generator, size: int, down: Downtime) -> np.ndarray:
    """``size`` draws of the downtime's independent parts (goodput.Downtime)."""
    d = down.base_s + down.wait_s * (rng.random(size) < down.wait_probability_frac)
    d = d + _draw_mixture(rng, size, down.detection) + _draw_mixture(rng, size, down.human)
    if down.restart_attempt_s > 0:
        d = d + down.restart_attempt_s
        if down.restart_failure_prob > 0 and down.restart_chain_frac > 0:
            # the failed attempts of the chaining failures only: Geom(1 − q) − 1 each
            chain = np.flatnonzero(rng.random(size) < down.restart_chain_frac)
            d[chain] += down.restart_attempt_s * (rng.geometric(1.0 - down.restart_failure_prob, chain.size) - 1)
    return np.asarray(d, dtype=np.float64)


#: failures per trial above which their summed lost work is drawn as one normal (module docstring)
CLT_FAILURES = 200


def _lost_work(rng: np.random.Generator, k_run: np.ndarray, ids: np.ndarray, lam: float, length_s: float) -> np.ndarray:
    """Σ of each trial's lost work, X | X < L with X ~ Exp(λ): exact draws (inverse CDF), or for trials of many
    failures a normal with the sum's exact mean and variance (E[X] = 1/λ − L/(e^{λL} − 1),
    E[X²] = 2/λ² − (L² + 2L/λ)/(e^{λL} − 1))."""
    trials = k_run.size
    if k_run.size and int(k_run.min()) >= CLT_FAILURES:
        em1 = math.expm1(lam * length_s)
        mean = 1.0 / lam - length_s / em1
        var = max(0.0, 2.0 / lam**2 - (length_s**2 + 2.0 * length_s / lam) / em1 - mean**2)
        return np.asarray(k_run * mean + np.sqrt(k_run * var) * rng.standard_normal(trials), dtype=np.float64)
    u = rng.random(ids.size)
    lost = -np.log1p(-u * -math.expm1(-lam * length_s)) / lam
    return np.bincount(ids, weights=lost, minlength=trials)


def _block(
    rng: np.random.Generator, trials: int, n: int, length_s: float, lam: float, down: Downtime, stretch: float
) -> tuple[np.ndarray, np.ndarray]:
    """Wall time and interruption count of ``trials`` trials."""
    if lam <= 0:
        return np.full(trials, n * length_s * stretch), np.zeros(trials)
    k_run = rng.negative_binomial(n, math.exp(-lam * length_s), size=trials)
    ids = np.repeat(np.arange(trials), k_run)
    total = n * length_s + _lost_work(rng, k_run, ids, lam, length_s)
    count = k_run.astype(np.float64)
    pending = ids  # one entry per failure whose restart has not yet completed
    while pending.size:
        d = _draw_downtime(rng, pending.size, down)
        x = rng.exponential(1.0 / lam, pending.size)
        done = x >= d
        total += np.bincount(pending, weights=np.where(done, d, x), minlength=trials)
        pending = pending[~done]
        count += np.bincount(pending, minlength=trials)
    return total * stretch, count


def simulate(
    *,
    useful_s: float,
    interval_s: float,
    blocking_s: float,
    unexpected_per_s: float,
    down: Downtime,
    planned_per_s: float,
    planned_downtime_s: float,
    trials: int,
    seed: int,
    other_stops: tuple[Stop, ...] = (),
    fixed_s: float = 0.0,
) -> Distribution:
    """``trials`` runs of the model in goodput.expected_run; deterministic for a seed."""
    n, tau = segments(useful_s, interval_s)
    length = tau + blocking_s
    stretch = stops_stretch((("planned", planned_per_s, planned_downtime_s), *other_stops))
    rng = np.random.default_rng(seed)
    walls, counts = [], []
    for start in range(0, trials, BLOCK_TRIALS):
        w, c = _block(rng, min(BLOCK_TRIALS, trials - start), n, length, unexpected_per_s, down, stretch)
        walls.append(w)
        counts.append(c)
    wall, count = np.concatenate(walls) + fixed_s, np.concatenate(counts)
    p10, p50, p90, p99 = (float(v) for v in np.percentile(wall, [10, 50, 90, 99]))
    return Distribution(
        trials=trials,
        seed=seed,
        wall_mean_s=float(wall.mean()),
        wall_p10_s=p10,
        wall_p50_s=p50,
        wall_p90_s=p90,
        wall_p99_s=p99,
        interruptions_mean_count=float(count.mean()),
        interruptions_p90_count=float(np.percentile(count, 90)),
    )
