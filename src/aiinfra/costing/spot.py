"""Spot capacity with preemptions: checkpoint interval, expected interruptions, lost work and restarts.

A synchronous job on ``instances`` instances stops whenever any instance is preempted, so with a rate λ per
instance-hour its mean time between interruptions is M = 1 h / (λ · instances).
Optimal checkpoint interval τ = √(2·δ·M) (Young, "A first order approximation to the optimum checkpoint
interval", CACM 1974; Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
FGCS 2006, first-order form), δ = time to write one checkpoint.
Fraction of wall-clock time wasted (first order): δ/τ (writing checkpoints) + τ/(2M) (work since the last
checkpoint, lost on average per interruption) + R/M (restart time R per interruption).
Wall-clock time = useful time / (1 − waste); interruptions = wall-clock time / M.
The formulas live in aiinfra.reliability.checkpoint (shared with the training reliability model).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiinfra.reliability.checkpoint import preemption_waste_frac, young_daly_interval_s
from aiinfra.units import HOUR_S

__all__ = ["SpotRun", "preemption_waste_frac", "spot_run", "young_daly_interval_s"]


@dataclass(frozen=True, kw_only=True, slots=True)
class SpotRun:
    """A job on spot instances: its preemptions, the Young/Daly checkpoint interval, and the wall-clock time they
    cost."""

    useful_s: float
    """Wall-clock time the job needs without interruptions."""
    instances: int
    interruptions_per_instance_per_hour: float
    """Preemption rate (a count per instance per hour)."""
    mtbf_s: float
    """Mean time between interruptions of the whole job."""
    checkpoint_write_s: float
    """Time to write one checkpoint (δ)."""
    restart_s: float
    """Time from a preemption to training resumed (R)."""
    checkpoint_interval_s: float
    """Young/Daly interval τ = √(2·δ·M)."""
    waste_frac: float
    """Share of wall-clock time lost: δ/τ + τ/(2M) + R/M (first order)."""
    feasible: bool
    """False when waste ≥ 1: interruptions come faster than the job can make progress."""
    wall_s: float | None
    """useful_s / (1 − waste); None when infeasible."""
    expected_interruptions_count: float | None
    """wall_s / M; None when infeasible."""
    lost_work_s: float | None
    """Recomputed work since the last checkpoint, summed over interruptions."""
    restart_total_s: float | None
    """Restart time summed over the interruptions; None when infeasible."""
    checkpoint_overhead_s: float | None
    """Time spent writing checkpoints over the run; None when infeasible."""


def spot_run(
    useful_s: float,
    instances: int,
    interruptions_per_instance_per_hour: float,
    checkpoint_write_s: float,
    restart_s: float,
) -> SpotRun:
    """A job of ``useful_s`` on ``instances`` spot instances each preempted at the given rate: checkpoint interval,
    waste and wall-clock time (module docstring: the formulas)."""
    mtbf_s = HOUR_S / (interruptions_per_instance_per_hour * instances)
    tau = young_daly_interval_s(checkpoint_write_s, mtbf_s)
    waste = preemption_waste_frac(checkpoint_write_s, mtbf_s, restart_s)
    feasible = waste < 1.0
    wall = useful_s / (1.0 - waste) if feasible else None
    n = wall / mtbf_s if wall is not None else None
    return SpotRun(
        useful_s=useful_s,
        instances=instances,
        interruptions_per_instance_per_hour=interruptions_per_instance_per_hour,
        mtbf_s=mtbf_s,
        checkpoint_write_s=checkpoint_write_s,
        restart_s=restart_s,
        checkpoint_interval_s=tau,
        waste_frac=waste,
        feasible=feasible,
        wall_s=wall,
        expected_interruptions_count=n,
        lost_work_s=n * tau / 2.0 if n is not None else None,
        restart_total_s=n * restart_s if n is not None else None,
        checkpoint_overhead_s=wall * checkpoint_write_s / tau if wall is not None else None,
    )
