"""Training questions: the best parallel layout (searched or given) and the memory per accelerator; with a
``reliability:`` section, its time-to-train under failures, checkpoints and restarts (aiinfra.reliability)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiinfra.app.base import Result, accuracy_for, flatten
from aiinfra.planning.training import MemoryReport, TrainingEstimate, TrainingReport, estimate_memory, plan_training
from aiinfra.report.render import jsonable
from aiinfra.specs.scenario import Scenario

if TYPE_CHECKING:  # imported by training_reliability only for a scenario with a reliability: section (start-up)
    from aiinfra.reliability.plan import ReliabilityReport


@dataclass(frozen=True, kw_only=True, slots=True)
class TrainResult(Result):
    """The answer of :func:`train`."""

    scenario: Scenario
    """The resolved scenario that was planned."""
    report: TrainingReport
    """Every estimate, best first, with the search's counts (candidates, valid, fitting, rejections by reason)."""
    reliability: ReliabilityReport | None = None
    """Failures, checkpoints and restarts of the best plan (None without a ``reliability:`` section)."""

    @property
    def idle(self) -> int:
        """Accelerators of hardware.count no layout of the best plan uses (paid for, idle)."""
        rep = self.report
        return rep.accelerators_given - rep.accelerators_used if rep.accelerators_used else 0

    @property
    def best(self) -> TrainingEstimate:
        """The fastest plan that fits (or the given plan)."""
        return self.report.estimates[0]

    @property
    def why(self) -> str:
        """Why the best layout wins, in one line: what it beats the runner-up by."""
        rep = self.report
        if not rep.searched:
            return "the plan the scenario gives (training.plan)"
        if rep.fitting_plans < 2 or len(rep.estimates) < 2:
            return f"the only one of {rep.candidates:,} candidates that fits"
        best, second = rep.estimates[0], rep.estimates[1]
        gain = second.step_time_s / best.step_time_s - 1.0
        if gain < 5e-4:
            return (
                f"fastest of the {rep.fitting_plans:,} plans that fit, tied with other layouts "
                f"({plan_label(second.plan)} …); ranked first by the search's tie-break"
            )
        return (
            f"fastest of the {rep.fitting_plans:,} plans that fit: {gain:.1%} shorter steps than the next "
            f"distinct layout ({plan_label(second.plan)})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra train --json`` object: the best plan's estimate and why it ranks first, accelerators used and
        idle, the search's counts and rejections, the alternatives, reliability when asked, and ``accuracy``."""
        rep = self.report
        used = rep.accelerators_used or self.scenario.cluster.count
        best = jsonable(self.best)
        if not self.best.fits:  # a plan that does not fit runs no step: no MFU
            best["mfu_frac"] = None
        obj = {
            **best,
            "accelerators_used": used,
            "accelerators_idle": self.idle,
            "idle_accelerator_hours": self.idle * self.best.time_to_train_s / 3600.0,
            "why": self.why,
            "notes": list(rep.notes),
            "searched": rep.searched,
            "candidates": rep.candidates,
            "valid_plans": rep.valid_plans,
            "fitting_plans": rep.fitting_plans,
            "rejected": rep.rejected,
            "search_wall_s": rep.search_wall_s,
            "flop_convention": rep.flop_convention,
            "efficiency_sources": list(rep.efficiency_sources),
            "alternatives": [jsonable(e) for e in rep.estimates[1:]],
            "reliability": reliability_dict(self.reliability) if self.reliability else None,
        }
        obj["accuracy"] = accuracy_for("train", self.scenario, obj)
        if obj["reliability"] is not None:
            obj["reliability"]["accuracy"] = accuracy_for("reliability", self.scenario, obj)
        return obj

    def table_rows(self) -> list[dict[str, Any]]:
        """The ranked plans, best first, one flat row each (plan.tp, step_time_s, mfu_frac ...)."""
        return [{"rank": i + 1, **flatten(jsonable(e))} for i, e in enumerate(self.report.estimates)]


def plan_label(p: dict[str, Any]) -> str:
    """A plan as one token string: tp8 pp4 dp32 cp1 ep1 vp1 mb1 zero1 rc=selective."""
    return (
        f"tp{p['tp']} pp{p['pp']} dp{p['dp']} cp{p['cp']} ep{p['ep']} vp{p['vp']} mb{p['microbatch_seqs']} "
        f"{p['sharding']} rc={p['recompute']}"
    )


def reliability_dict(r: ReliabilityReport) -> dict[str, Any]:
    """The reliability block of ``train --json``: headline figures first, then every part."""
    e, d = r.expected, r.distribution
    return {
        "time_to_train_no_failures_s": r.no_failure_s,
        "time_to_train_mean_s": e.wall_s,
        "time_to_train_p50_s": d.wall_p50_s if d else None,
        "time_to_train_p90_s": d.wall_p90_s if d else None,
        "time_to_train_simulated_mean_s": d.wall_mean_s if d else None,
        "ettr_frac": e.ettr_frac,
        "goodput_frac": e.ettr_frac,
        "unexpected_interruptions_count": e.unexpected_interruptions_count,
        "planned_interruptions_count": e.planned_interruptions_count,
        "mtbf_s": r.mtbf_s if math.isfinite(r.mtbf_s) else None,
        "checkpoint_interval_s": r.checkpoint_interval_s,
        "checkpoint_interval_source": r.interval_source,
        "lost_accelerator_hours": r.lost_accelerator_hours,
        "spare_nodes": r.spare_nodes,
        "spare_nodes_source": r.spares_source,
        "spare_accelerator_hours": r.spare_accelerator_hours,
        "downtime_mean_s": r.downtime_mean_s,
        "lost_work_s": e.lost_work_s,
        "downtime_s": e.downtime_s,
        "checkpoint_overhead_s": e.checkpoint_overhead_s,
        "checkpoint": {**jsonable(r.checkpoint), "source": r.checkpoint_source},
        "unexpected_per_hour": r.unexpected_per_hour,
        "repair_per_hour": r.repair_per_hour,
        "planned_per_hour": r.planned_per_hour,
        "top_causes_per_hour": r.top_causes_per_hour,
        "nodes_count": r.nodes_count,
        "accelerators_count": r.accelerators_count,
        "monte_carlo": jsonable(d) if d else None,
        "spares_tried": [jsonable(c) for c in r.spares_tried],
        "time_to_train_band_s": list(r.band_s),
        "rate_basis": jsonable(r.rate_basis),
        "badput_s": r.badput_s,
        "badput_frac": {k.removesuffix("_s") + "_frac": v / e.wall_s for k, v in r.badput_s.items()},
        "downtime_parts_s": r.downtime_parts_s,
        "restart_attempts_mean": r.restart_attempts_mean,
        "other_stops_count": {k: v for k, v in e.stop_counts.items() if k != "planned"},
        "storage_source": r.storage_source,
        "cluster_accelerators_count": r.cluster_accelerators_count,
        "cluster_failures_expected_count": r.cluster_failures_expected_count,
    }


def train(scenario: Scenario) -> TrainResult:
    """Plan a training run: memory per accelerator, the fastest parallel layout that fits (searched over
    tp·pp·cp·dp·ep·vp·micro-batch·sharding·recompute unless ``training.plan`` gives one), step time, MFU,
    time-to-train and energy; with a ``reliability:`` section also the time-to-train under failures (expected,
    p50/p90 by Monte-Carlo), ETTR, checkpoint interval, accelerator-hours lost and spare nodes. Raises
    :class:`aiinfra.errors.InfeasibleError` when no layout fits."""
    report = plan_training(scenario)
    return TrainResult(scenario=scenario, report=report, reliability=training_reliability(scenario, report))


def training_reliability(scenario: Scenario, report: TrainingReport) -> ReliabilityReport | None:
    """The best plan's run under failures when the scenario has a ``reliability:`` section, else None."""
    raw = scenario.source.extras.get("reliability")
    if raw is None and "reliability" not in scenario.source.extras:
        return None
    from aiinfra.app.tables import reliability_table
    from aiinfra.reliability.plan import reliability_for_scenario
    from aiinfra.specs.common import validate
    from aiinfra.specs.reliability import ReliabilityInput

    ri = validate(ReliabilityInput, raw or {}, where="reliability")
    best = report.estimates[0]
    used = report.accelerators_used or scenario.cluster.count
    return reliability_for_scenario(
        scenario, ri, useful_s=best.time_to_train_s, accelerators=used, table=reliability_table()
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryResult(Result):
    """The answer of :func:`memory`."""

    scenario: Scenario
    report: MemoryReport
    """Capacity, parameter counts and one row per configuration (full, ZeRO stages, LoRA/QLoRA, offload)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra memory --json`` object: the memory report plus ``accuracy``."""
        out: dict[str, Any] = jsonable(self.report)
        out["accuracy"] = accuracy_for("memory", self.scenario, out)
        return out

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per memory configuration."""
        return [flatten(jsonable(r)) for r in self.report.rows]


def memory(scenario: Scenario) -> MemoryResult:
    """Training memory per accelerator (weights, gradients, optimizer states, activations, reserve) for the
    scenario's training section, incl. LoRA / QLoRA and CPU offload."""
    return MemoryResult(scenario=scenario, report=estimate_memory(scenario))
