"""The schedule question: run a job trace through a cluster under a policy; queueing, completion, utilisation."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from aiinfra.app.base import Result
from aiinfra.app.tables import reliability_table
from aiinfra.catalog import mig as catalog_mig
from aiinfra.errors import SpecError
from aiinfra.sharing.schedule.failures import check_jobs, failure_stream, node_failure_rates
from aiinfra.sharing.schedule.sim import SimOutcome, simulate
from aiinfra.sharing.schedule.spec import Jobs
from aiinfra.sharing.schedule.spec import ScheduleInput as ScheduleInput  # re-exported: the web forms read it
from aiinfra.sharing.schedule.trace import generate, read_trace
from aiinfra.specs.common import validate
from aiinfra.specs.mig import MigGeometry
from aiinfra.specs.scenario import apply_set, read_yaml
from aiinfra.units import HOUR_S

#: job size classes by whole-GPU count (upper bounds, inclusive); MIG jobs form their own class
SIZE_CLASSES: tuple[tuple[str, int], ...] = (("1", 1), ("2-4", 4), ("5-8", 8), ("9-64", 64), ("65+", 1 << 62))
PERCENTILES = (50, 90, 99)

NOTES = (
    "A trace row that is malformed, names an unknown MIG profile or asks for more GPUs than the cluster has "
    "refuses the whole run (exit 2, row and field named): no job is silently dropped, so none is 'rejected'.",
    "Durations are known exactly (EASY backfill reservations are exact); real schedulers see user estimates.",
    "A preempted job resumes with its remaining work (checkpoint/restart without lost work, no restart cost).",
    "Without a schedule.failures section no node fails; with it, whole-GPU nodes fail at the reliability "
    "catalog's unexpected rates (Llama 3's cluster by default), independently (Poisson), MIG-mode nodes never.",
    "MIG jobs run on MIG-mode nodes only; a MIG instance counts its compute-slice share of a GPU as busy.",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class ScheduleResult(Result):
    """The answer of :func:`schedule`."""

    spec: ScheduleInput
    jobs: Jobs
    outcome: SimOutcome
    trace_source: str
    """The trace file as given, or ``generator(seed=N)`` for a generated trace."""
    wall_s: float
    """Wall-clock time of the simulation on this machine."""
    node_failure_rate_per_hour: float | None = None
    """Failures per whole-GPU node-hour (None without a failures section)."""
    repair_share_frac: float | None = None
    """Share of those failures whose node needs a repair."""

    def to_dict(self) -> dict[str, Any]:
        """The answer's JSON (``--json``, the web API). Long because it lays out every field of that contract in
        one place: the summary, the utilisation and wait statistics computed from the per-job arrays, and the band."""
        from aiinfra.accuracy.answers import unvalidated

        o, j, s = self.outcome, self.jobs, self.spec
        arrival = np.array(j.arrival_s)
        finish = np.array(o.finish_s)
        gpus = np.array(j.gpus)
        is_mig = np.array([bool(p) for p in j.mig_profile])
        state = np.array(o.state)
        started = ~np.isnan(np.array(o.start_s))
        done = state == "finished"
        wait = np.array(o.wait_s)  # time queued, every wait after a preemption included
        jct = finish - arrival

        def stats(mask: np.ndarray) -> dict[str, Any]:
            wmask = mask & (done | started)  # a job still waiting at the end has no final delay yet
            out: dict[str, Any] = {"jobs": int(mask.sum()), "finished": int((mask & done).sum())}
            for name, values, sel in (("queue_delay_s", wait, wmask), ("jct_s", jct, mask & done)):
                v = values[sel]
                out[name] = (
                    {f"p{q}": float(np.percentile(v, q)) for q in PERCENTILES} | {"mean": float(v.mean())}
                    if v.size
                    else None
                )
            return out

        by_size: dict[str, Any] = {}
        lo = 1
        for label, hi in SIZE_CLASSES:
            mask = ~is_mig & (gpus >= lo) & (gpus <= hi)
            if mask.any():
                by_size[label] = stats(mask)
            lo = hi + 1
        if is_mig.any():
            by_size["mig"] = stats(is_mig)

        series = _utilisation_series(o, s.utilisation_bins)
        counts = {k: int((state == k).sum()) for k in ("finished", "running", "queued", "not_arrived")}
        multi = ~is_mig & (np.array(o.leaves_used) > 0) & (gpus > s.cluster.gpus_per_node)
        per_leaf = s.cluster.nodes_per_leaf or s.cluster.nodes
        nodes_needed = -(-gpus // s.cluster.gpus_per_node)
        least_leaves = -(-nodes_needed // per_leaf)
        return {
            "policy": s.policy,
            "cluster": {
                "nodes": s.cluster.nodes,
                "gpus_per_node": s.cluster.gpus_per_node,
                "nodes_per_leaf": s.cluster.nodes_per_leaf,
                "mig_nodes": s.cluster.mig_nodes,
                "total_gpus": o.total_gpus,
                "accelerator": s.cluster.accelerator,
            },
            "trace": {"source": self.trace_source, "jobs": len(j)},
            "jobs": {
                "finished": counts["finished"],
                "running_at_end": counts["running"],
                "queued_at_end": counts["queued"],
                "not_arrived_by_end": counts["not_arrived"],
                "rejected": 0,
            },
            "end_s": o.end_s,
            "utilisation_frac": _mean_utilisation(o),
            "utilisation_while_arriving_frac": _mean_utilisation(o, float(arrival.min()), float(arrival.max())),
            "utilisation_over_time": series,
            "all_jobs": stats(np.ones(len(j), dtype=bool)),
            "by_size": by_size,
            "preemptions": int(sum(o.preemptions)),
            "preempted_jobs": int(sum(1 for p in o.preemptions if p)),
            "multi_node_jobs": {
                "started": int(multi.sum()),
                "mean_leaves_spanned": float(np.array(o.leaves_used)[multi].mean()) if multi.any() else None,
                "mean_least_leaves": float(least_leaves[multi].mean()) if multi.any() else None,
            },
            "fragmentation": {
                "head_blocked_with_enough_free_gpus_s": o.frag_blocked_s,
                "head_blocked_with_enough_free_gpus_frac": o.frag_blocked_s / o.end_s if o.end_s > 0 else 0.0,
            },
            "failures": self._failures(gpus, is_mig),
            "notes": list(NOTES),
            "wall_s": self.wall_s,
            "accuracy": unvalidated("schedule"),
        }

    def _failures(self, gpus: np.ndarray, is_mig: np.ndarray) -> dict[str, Any] | None:
        f, o = self.spec.failures, self.outcome
        if f is None:
            return None
        interrupted = np.array(o.interruptions)
        work_gpu_s = float((np.array(self.jobs.duration_s) * np.where(is_mig, 0, gpus)).sum())
        return {
            "node_failure_rate_per_hour": self.node_failure_rate_per_hour,
            "repair_share_frac": self.repair_share_frac,
            "node_failures": o.node_failures,
            # the expectation beside the one seeded draw: every whole-GPU node fails at the node rate for the span
            "node_failures_expected": (self.node_failure_rate_per_hour or 0.0)
            * self.spec.cluster.nodes
            * o.end_s
            / HOUR_S,
            "node_repairs": o.node_repairs,
            "job_interruptions": int(interrupted.sum()),
            "jobs_interrupted": int((interrupted > 0).sum()),
            "lost_gpu_hours": o.lost_gpu_s / HOUR_S,
            "lost_share_of_work_frac": o.lost_gpu_s / work_gpu_s if work_gpu_s > 0 else 0.0,
            "down_gpu_hours": o.down_gpu_s / HOUR_S,
            "repair_s": f.repair_s,
            "restart_s": f.restart_s,
            "checkpoint_interval_s": f.checkpoint_interval_s,
            "seed": f.seed,
            "source": "catalog/data/reliability.yaml (unexpected rows, per GPU and per node)",
        }

    def waits_by_size(self) -> dict[str, list[float]]:
        """Queueing delay of every started job, by size class (the plot's samples)."""
        out: dict[str, list[float]] = {}
        j, o = self.jobs, self.outcome
        for i in range(len(j)):
            if o.start_s[i] != o.start_s[i]:
                continue
            label = "mig" if j.mig_profile[i] else _size_class(j.gpus[i])
            out.setdefault(label, []).append(o.wait_s[i])
        return {k: out[k] for k in [*(lab for lab, _ in SIZE_CLASSES), "mig"] if k in out}

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per job size class: jobs, finished, and the queueing-delay and job-completion-time statistics."""
        d = self.to_dict()
        rows = []
        for label, st in d["by_size"].items():
            row: dict[str, Any] = {"size_class": label, "jobs": st["jobs"], "finished": st["finished"]}
            for name in ("queue_delay_s", "jct_s"):
                for k, v in (st[name] or {}).items():
                    row[f"{name}.{k}"] = v
            rows.append(row)
        return rows


def _mig_geometry(spec: ScheduleInput) -> MigGeometry | None:
    """The MIG geometry of the cluster's MIG-mode nodes from the catalog (None without); checks a named
    accelerator is known (a catalog id or ACCEL/PROFILE)."""
    c = spec.cluster
    if c.accelerator and c.mig_nodes:
        return catalog_mig.geometry(c.accelerator, "schedule.cluster.accelerator")
    if c.accelerator:
        catalog_mig.accelerator(c.accelerator, "schedule.cluster.accelerator")
    return None


def _size_class(gpus: int) -> str:
    for label, hi in SIZE_CLASSES:
        if gpus <= hi:
            return label
    return SIZE_CLASSES[-1][0]


def _busy_gpu_s(o: SimOutcome, at: np.ndarray) -> np.ndarray:
    """Busy GPU·seconds from 0 to each time in ``at`` (the integral of the busy step function)."""
    t = np.array((*o.busy_t_s, o.end_s))
    v = np.array(o.busy_gpus)
    cum = np.concatenate(([0.0], np.cumsum(v * np.clip(np.diff(t), 0.0, None))))
    idx = np.clip(np.searchsorted(t, at, side="right") - 1, 0, len(v) - 1)
    return np.asarray(cum[idx] + v[idx] * (at - t[idx]))


def _mean_utilisation(o: SimOutcome, t0: float = 0.0, t1: float | None = None) -> float:
    """Mean busy fraction of all GPUs over [t0, t1] (default: the whole run; the drain after the last arrival
    lowers it, so the window of arrivals is reported as well)."""
    t1 = o.end_s if t1 is None else min(t1, o.end_s)
    if t1 <= t0:
        return 0.0
    a, b = _busy_gpu_s(o, np.array([t0, t1]))
    return float((b - a) / ((t1 - t0) * o.total_gpus))


def _utilisation_series(o: SimOutcome, bins: int) -> list[dict[str, float]]:
    """Mean busy fraction of the GPUs in ``bins`` equal intervals of [0, end]."""
    if o.end_s <= 0:
        return []
    edges = np.linspace(0.0, o.end_s, bins + 1)
    frac = np.diff(_busy_gpu_s(o, edges)) / (np.diff(edges) * o.total_gpus)
    return [
        {"t_start_s": float(a), "t_end_s": float(b), "busy_frac": float(f)}
        for a, b, f in zip(edges[:-1], edges[1:], frac, strict=True)
    ]


def load_schedule(
    source: str | Path | Mapping[str, Any], set: Iterable[str] | None = None, base_dir: Path | None = None
) -> tuple[ScheduleInput, Path]:
    """Read a schedule file (its ``schedule:`` section) with ``--set schedule.KEY=VALUE`` overrides; a mapping's
    relative trace path is read from ``base_dir`` (default: the working directory)."""
    if isinstance(source, Mapping):
        data, base = dict(source), base_dir or Path.cwd()
    else:
        data, base = read_yaml(source), Path(source).resolve().parent
    for s in set or []:
        apply_set(data, s)
    unknown = [k for k in data if k != "schedule"]
    if "schedule" not in data or unknown:
        raise SpecError(
            "schedule file",
            ",".join(data) or "(empty)",
            "expected one top-level section 'schedule'",
            "see examples/schedule-sample.yaml",
        )
    return validate(ScheduleInput, data["schedule"], where="schedule"), base


def schedule(
    source: str | Path | Mapping[str, Any], set: Iterable[str] | None = None, base_dir: Path | None = None
) -> ScheduleResult:
    """Simulate the schedule file ``source`` (a path or a mapping in the file format) with ``--set`` overrides; a
    mapping's relative trace path is read from ``base_dir``."""
    spec, base = load_schedule(source, set, base_dir)
    if (spec.trace is None) == (spec.generator is None):
        raise SpecError(
            "schedule.trace",
            spec.trace,
            "give exactly one of schedule.trace and schedule.generator",
            "name a trace CSV or describe a generator",
        )
    if spec.trace is not None:
        path = Path(spec.trace) if Path(spec.trace).is_absolute() else base / spec.trace
        jobs, src, where = read_trace(path), spec.trace, Path(spec.trace).name
    else:
        assert spec.generator is not None
        jobs, src, where = generate(spec.generator), f"generator(seed={spec.generator.seed})", "generated trace"
    geo = _mig_geometry(spec)
    check_jobs(spec, jobs, where, geo)
    t0 = time.perf_counter()
    c = spec.cluster
    f = spec.failures
    rate = share = stream = None
    if f is not None:
        rate, share = node_failure_rates(reliability_table(), f, c.gpus_per_node, c.accelerator)
        stream = failure_stream(c.nodes, rate, share, f.seed)
    out = simulate(
        jobs,
        nodes=c.nodes,
        per_node=c.gpus_per_node,
        policy=spec.policy,
        nodes_per_leaf=c.nodes_per_leaf,
        mig_geometry=geo,
        mig_nodes=c.mig_nodes,
        horizon_s=spec.horizon_s,
        backfill_depth=spec.backfill_depth,
        failures=stream,
        repair_s=f.repair_s if f else 0.0,
        restart_s=f.restart_s if f else 0.0,
        checkpoint_interval_s=f.checkpoint_interval_s if f else None,
    )
    wall = time.perf_counter() - t0
    return ScheduleResult(
        spec=spec,
        jobs=jobs,
        outcome=out,
        trace_source=src,
        wall_s=wall,
        node_failure_rate_per_hour=None if rate is None else rate * HOUR_S,
        repair_share_frac=share,
    )
