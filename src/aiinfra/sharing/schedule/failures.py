"""What a schedule run checks and draws before the simulation: jobs the cluster cannot run (named by trace row),
node failure rates from the reliability catalog (reliability.rates) and the seeded stream of node failures."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from aiinfra.errors import SpecError
from aiinfra.reliability.rates import ReliabilityTable, hardware_rates, job_rates
from aiinfra.sharing.schedule.spec import FailuresInput, Jobs, ScheduleInput
from aiinfra.specs.mig import MigGeometry


def check_jobs(spec: ScheduleInput, jobs: Jobs, where: str, geo: MigGeometry | None) -> None:
    """A SpecError naming the row of a job the cluster cannot run (a MIG profile without MIG nodes, more GPUs than
    the cluster has); ``geo`` is the MIG geometry of the cluster's MIG-mode nodes (None without)."""
    c = spec.cluster
    capacity = c.nodes * c.gpus_per_node
    for i in range(len(jobs)):
        row = f"{where} row {i + 1} (job {jobs.ids[i]})"
        if jobs.mig_profile[i]:
            if geo is None:
                raise SpecError(
                    f"{row}.mig_profile",
                    jobs.mig_profile[i],
                    "the cluster has no MIG-mode nodes",
                    "set schedule.cluster.accelerator and schedule.cluster.mig_nodes",
                )
            geo.profile(jobs.mig_profile[i], f"{row}.mig_profile")
        elif jobs.gpus[i] > capacity:
            raise SpecError(
                f"{row}.gpus",
                jobs.gpus[i],
                f"larger than the cluster ({capacity} GPUs)",
                "give the cluster more nodes or drop the job",
            )


def node_failure_rates(
    table: ReliabilityTable, f: FailuresInput, gpus_per_node: int, accelerator: str | None = None
) -> tuple[float, float]:
    """Unexpected failures per node-second of a whole-GPU node (Σ GPU-scale rates × GPUs per node + node-scale
    rates, reliability.rates.job_rates, × the accelerator generation's and memory type's ratios when the cluster
    names its accelerator) and the share of them that need a repair."""
    fam, mem = hardware_rates(table, accelerator)
    r = job_rates(
        table,
        gpus_per_node,
        1,
        scale_ratio=f.failure_rate_scale_ratio * fam.rate_ratio,
        overrides=f.rates_per_unit_hour,
        include_planned=False,
        memory_ratio=mem.rate_ratio,
        field="schedule.failures.rates_per_unit_hour",
    )
    share = r.repair_per_s / r.unexpected_per_s if r.unexpected_per_s > 0 else 0.0
    return r.unexpected_per_s, share


def failure_stream(
    nodes: int, per_node_per_s: float, repair_share: float, seed: int, batch: int = 4096
) -> Iterator[tuple[float, int, bool]]:
    """Endless (time, node, needs repair) of independent Poisson failures of ``nodes`` nodes: their superposition is
    Poisson at nodes × rate with the node uniform; seeded, so the same seed gives the same failures."""
    if per_node_per_s <= 0:
        return
    rng = np.random.default_rng(seed)
    t = 0.0
    while True:
        gaps = rng.exponential(1.0 / (nodes * per_node_per_s), batch)
        which = rng.integers(0, nodes, batch)
        repair = rng.random(batch) < repair_share
        for g, k, r in zip(gaps, which, repair, strict=True):
            t += float(g)
            yield t, int(k), bool(r)
