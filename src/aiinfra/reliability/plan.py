"""The reliability answer for one training plan: failure rate, checkpoint policy, expected and simulated
completion time, ETTR, accelerator-hours lost and the spare nodes that minimise cost (models: rates.py,
checkpoint.py, goodput.py, montecarlo.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiinfra.errors import SpecError
from aiinfra.reliability.checkpoint import (
    CheckpointTimes,
    checkpoint_bytes_per_param,
    checkpoint_times,
    young_daly_interval_s,
)
from aiinfra.reliability.goodput import Expectation, SpareChoice, best_spares, downtime, expected_run
from aiinfra.reliability.montecarlo import Distribution, simulate
from aiinfra.reliability.rates import job_rates
from aiinfra.specs.reliability import ReliabilityInput
from aiinfra.specs.scenario import Scenario
from aiinfra.units import HOUR_S


@dataclass(frozen=True, kw_only=True, slots=True)
class ReliabilityReport:
    accelerators_count: int
    nodes_count: int
    unexpected_per_hour: float
    """λ: unexpected interruptions of the job per hour (Σ component rate × GPUs or nodes)."""
    repair_per_hour: float
    """The part of λ that takes a node out for repair."""
    planned_per_hour: float
    mtbf_s: float
    """Mean time between unexpected interruptions, 1/λ."""
    top_causes_per_hour: dict[str, float]
    """The largest contributions to λ by catalog row, per hour."""
    checkpoint: CheckpointTimes
    checkpoint_source: str
    checkpoint_interval_s: float
    interval_source: str
    downtime_mean_s: float
    """Mean downtime per unexpected interruption: detection + restart + load + expected repair wait."""
    spare_nodes: int
    spares_source: str
    spares_tried: tuple[SpareChoice, ...]
    no_failure_s: float
    """The plan's time-to-train without failures or checkpoints."""
    expected: Expectation
    distribution: Distribution | None
    """Monte-Carlo distribution (None when trials = 0)."""
    lost_accelerator_hours: float
    """(E[T] − no-failure time) × the job's accelerators: checkpoints, lost work, restarts, waits."""
    spare_accelerator_hours: float
    """Spare nodes held for E[T]."""


def scenario_checkpoint_bytes(sc: Scenario, given: float | None) -> tuple[float, str]:
    """One checkpoint: given, else parameters × (weights + fp32 master + optimizer moments) bytes per parameter."""
    if given is not None:
        return given, "reliability.checkpoint_bytes"
    from aiinfra.analytic.model_figures import params_total

    job = sc.training
    if job is None:
        raise SpecError("training", None, "reliability needs a training section",
                        "add training: or remove reliability:")  # fmt: skip
    if job.finetune is not None and job.finetune.method != "full":
        raise SpecError("reliability.checkpoint_bytes", None, f"unknown for a {job.finetune.method} fine-tune",
                        "give the adapter checkpoint's size in bytes")  # fmt: skip
    per = checkpoint_bytes_per_param(job.precision, job.optimizer)
    return params_total(sc.model) * per, f"{per:g} B/parameter ({job.precision} weights, fp32 master, {job.optimizer})"


def plan_reliability(ri: ReliabilityInput, *, useful_s: float, accelerators: int, per_node: int,
                     checkpoint_bytes: float, checkpoint_source: str,
                     peer_bytes_per_s_per_accelerator: float | None) -> ReliabilityReport:  # fmt: skip
    """Failures, checkpoints and restarts of a run that needs ``useful_s`` of training on ``accelerators``."""
    nodes = math.ceil(accelerators / per_node)
    rates = job_rates(accelerators, nodes, scale_ratio=ri.failure_rate_scale_ratio, overrides=ri.rates_per_unit_hour,
                      include_planned=ri.include_planned)  # fmt: skip
    ck = checkpoint_times(checkpoint_bytes, nodes=nodes, accelerators=accelerators, mode=ri.checkpoint_mode,
                          storage_write_bytes_per_s=ri.storage_write_bytes_per_s,
                          storage_read_bytes_per_s=ri.storage_read_bytes_per_s,
                          node_storage_bytes_per_s=ri.node_storage_bytes_per_s,
                          snapshot_bytes_per_s_per_accelerator=ri.snapshot_bytes_per_s_per_accelerator,
                          peer_bytes_per_s_per_accelerator=peer_bytes_per_s_per_accelerator)  # fmt: skip
    lam = rates.unexpected_per_s
    mtbf = 1.0 / lam if lam > 0 else math.inf
    if ri.checkpoint_interval_s is not None:
        interval, interval_src = ri.checkpoint_interval_s, "reliability.checkpoint_interval_s"
    elif lam > 0:
        interval, interval_src = young_daly_interval_s(ck.blocking_s, mtbf), "Young/Daly optimum √(2·δ·MTBF)"
    else:
        interval, interval_src = useful_s, "no failures: one checkpoint at the end"
    if ri.checkpoint_mode != "synchronous" and interval < ck.write_s:
        # a background write must finish before the next snapshot starts (one write in flight)
        interval, interval_src = ck.write_s, interval_src + ", raised to the background write time"
    interval = min(interval, useful_s)
    planned_down = ri.restart_s + ck.load_s

    def run(spares: int) -> Expectation:
        down = downtime(detection_s=ri.detection_s, restart_s=ri.restart_s, load_s=ck.load_s, unexpected_per_s=lam,
                        repair_per_s=rates.repair_per_s, repair_s=ri.repair_s, spare_nodes=spares)  # fmt: skip
        return expected_run(useful_s=useful_s, interval_s=interval, blocking_s=ck.blocking_s, unexpected_per_s=lam,
                            down=down, planned_per_s=rates.planned_per_s, planned_downtime_s=planned_down)  # fmt: skip

    best, tried = best_spares(lambda s: run(s).wall_s, nodes, per_node, rates.repair_per_s, ri.repair_s,
                              ri.spare_nodes)  # fmt: skip
    spares = best.spare_nodes
    exp = run(spares)
    down = downtime(detection_s=ri.detection_s, restart_s=ri.restart_s, load_s=ck.load_s, unexpected_per_s=lam,
                    repair_per_s=rates.repair_per_s, repair_s=ri.repair_s, spare_nodes=spares)  # fmt: skip
    dist = simulate(useful_s=useful_s, interval_s=interval, blocking_s=ck.blocking_s, unexpected_per_s=lam, down=down,
                    planned_per_s=rates.planned_per_s, planned_downtime_s=planned_down, trials=ri.trials,
                    seed=ri.seed) if ri.trials > 0 else None  # fmt: skip
    causes = sorted(((k, v * HOUR_S) for k, v in rates.by_component_per_s.items()), key=lambda kv: -kv[1])
    return ReliabilityReport(
        accelerators_count=accelerators, nodes_count=nodes, unexpected_per_hour=lam * HOUR_S,
        repair_per_hour=rates.repair_per_s * HOUR_S, planned_per_hour=rates.planned_per_s * HOUR_S, mtbf_s=mtbf,
        top_causes_per_hour=dict(causes[:5]), checkpoint=ck, checkpoint_source=checkpoint_source,
        checkpoint_interval_s=exp.interval_s, interval_source=interval_src, downtime_mean_s=down.mean_s,
        spare_nodes=spares,
        spares_source="reliability.spare_nodes" if ri.spare_nodes is not None
        else "the count minimising accelerator-hours held (spares included)",
        spares_tried=tried, no_failure_s=useful_s, expected=exp, distribution=dist,
        lost_accelerator_hours=(exp.wall_s - useful_s) * accelerators / HOUR_S,
        spare_accelerator_hours=spares * per_node * exp.wall_s / HOUR_S)  # fmt: skip


def reliability_for_scenario(sc: Scenario, ri: ReliabilityInput, *, useful_s: float,
                             accelerators: int) -> ReliabilityReport:  # fmt: skip
    """:func:`plan_reliability` for a training scenario's plan (checkpoint size from its training section; in-memory
    checkpoints reload at the cluster's scale-out bandwidth per accelerator)."""
    ckpt, src = scenario_checkpoint_bytes(sc, ri.checkpoint_bytes)
    return plan_reliability(ri, useful_s=useful_s, accelerators=accelerators, per_node=sc.cluster.per_node,
                            checkpoint_bytes=ckpt, checkpoint_source=src,
                            peer_bytes_per_s_per_accelerator=sc.cluster.scale_out_bw_one_way_bytes_per_s)  # fmt: skip
