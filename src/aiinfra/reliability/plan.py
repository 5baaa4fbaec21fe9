"""The reliability answer for one training plan: failure rate, checkpoint policy, expected and simulated
completion time, ETTR, accelerator-hours lost and the spare nodes that minimise cost (models: rates.py,
checkpoint.py, goodput.py, montecarlo.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from aiinfra.errors import SpecError
from aiinfra.reliability.checkpoint import (
    CheckpointTimes,
    checkpoint_bytes_per_param,
    checkpoint_times,
    young_daly_interval_s,
)
from aiinfra.reliability.goodput import (
    Downtime,
    Expectation,
    SpareChoice,
    Stop,
    best_spares,
    downtime,
    expected_run,
    human_response_mixture,
    lemon_exposure_s,
    retry_attempts_mean,
)
from aiinfra.reliability.montecarlo import Distribution, simulate
from aiinfra.reliability.rates import (
    JobRates,
    ReliabilityTable,
    age_ratio,
    component_rates,
    hardware_rates,
    job_rates,
    memory_share_frac,
    per_node_rate_per_s,
    rate_uncertainty_ratio,
    storage_efficiency,
)
from aiinfra.specs.reliability import ReliabilityInput
from aiinfra.specs.scenario import Scenario
from aiinfra.units import HOUR_S


@dataclass(frozen=True, kw_only=True, slots=True)
class RateBasis:
    """Where the job's failure rates come from: the accelerator generation's and memory type's rows, the age."""

    family_id: str
    family_basis: str
    family_ratio: float
    memory_id: str
    memory_basis: str
    memory_ratio: float
    uncertainty_ratio: float
    """u of the whole rate: the generation's u times the memory row's on the memory rows' share of λ (rates.
    rate_uncertainty_ratio; the band below uses λ/u and λ·u)."""
    age_ratio: float
    lemon_ratio: float
    """λ with repeat-offender nodes (until excluded) over λ without."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ReliabilityReport:
    """The failure model applied to a training job: interruption rates, checkpoint interval, downtime, spares,
    expected wall time and its badput (times in s)."""

    accelerators_count: int
    nodes_count: int
    unexpected_per_hour: float
    """λ: unexpected interruptions of the job per hour (Σ component rate × GPUs or nodes, × the ratios)."""
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
    """Mean downtime per unexpected interruption: detection + response + restarts + load + expected repair wait."""
    downtime_parts_s: dict[str, float]
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
    rate_basis: RateBasis
    storage_source: str
    band_s: tuple[float | None, float | None]
    """E[T] with every unexpected rate / u and × u (the rates' uncertainty); None: the run cannot finish there."""
    badput_s: dict[str, float]
    """E[T] − useful time by Google's goodput categories (their sum is E[T] − the no-failure time)."""
    restart_attempts_mean: float
    cluster_accelerators_count: int
    cluster_failures_expected_count: float
    """Expected unexpected failures of the whole cluster (hardware.count or cluster_accelerators_count) during E[T]."""


def scenario_checkpoint_bytes(sc: Scenario, given: float | None) -> tuple[float, str]:
    """One checkpoint: given, else parameters × (weights + fp32 master + optimizer moments) bytes per parameter."""
    if given is not None:
        return given, "reliability.checkpoint_bytes"
    from aiinfra.analytic.model_figures import params_total

    job = sc.training
    if job is None:
        raise SpecError(
            "training", None, "reliability needs a training section", "add training: or remove reliability:"
        )
    if job.finetune is not None and job.finetune.method != "full":
        raise SpecError(
            "reliability.checkpoint_bytes",
            None,
            f"unknown for a {job.finetune.method} fine-tune",
            "give the adapter checkpoint's size in bytes",
        )
    per = checkpoint_bytes_per_param(job.precision, job.optimizer)
    return params_total(sc.model) * per, f"{per:g} B/parameter ({job.precision} weights, fp32 master, {job.optimizer})"


def _rate_basis(
    table: ReliabilityTable, ri: ReliabilityInput, accelerator_id: str | None, age_days_mid: float, per_node: int
) -> tuple[RateBasis, float]:
    fam, mem = hardware_rates(table, accelerator_id)
    age = 1.0
    if ri.cluster_age is not None:
        a = ri.cluster_age
        if a.burn_in_ratio > 1 and a.burn_in_days is None:
            raise SpecError(
                "reliability.cluster_age.burn_in_days",
                None,
                "required when burn_in_ratio > 1",
                "give the e-folding time of the early-life excess in days",
            )
        age = age_ratio(
            a.age_days + age_days_mid,
            burn_in_ratio=a.burn_in_ratio,
            burn_in_days=a.burn_in_days,
            wear_out_onset_days=a.wear_out_onset_days,
            wear_out_ratio_per_year=a.wear_out_ratio_per_year,
        )
    basis = RateBasis(
        family_id=fam.id,
        family_basis=fam.basis,
        family_ratio=fam.rate_ratio,
        memory_id=mem.id,
        memory_basis=mem.basis,
        memory_ratio=mem.rate_ratio,
        uncertainty_ratio=rate_uncertainty_ratio(
            fam, mem, memory_share_frac(table, per_node, memory_ratio=mem.rate_ratio)
        ),
        age_ratio=age,
        lemon_ratio=1.0,
    )
    return basis, fam.rate_ratio * age


def plan_reliability(
    ri: ReliabilityInput,
    *,
    useful_s: float,
    accelerators: int,
    per_node: int,
    checkpoint_bytes: float,
    checkpoint_source: str,
    peer_bytes_per_s_per_accelerator: float | None,
    accelerator_id: str | None = None,
    cluster_accelerators: int | None = None,
    table: ReliabilityTable,
) -> ReliabilityReport:
    """Failures, checkpoints and restarts of a run that needs ``useful_s`` of training on ``accelerators``
    (``table``: the catalog's reliability rows).

    Long because one evaluation (rates, checkpoint interval, downtime, Daly's expected time, spare nodes) is a
    closure run at the base rate, again with the lemon-node correction, and at both ends of the rate band; each step
    it composes is a function of rates.py, checkpoint.py and goodput.py."""
    nodes = math.ceil(accelerators / per_node)
    work_s = useful_s / (1.0 - ri.data_loading_stall_frac)
    basis, hw_ratio = _rate_basis(table, ri, accelerator_id, work_s / 2 / 86_400, per_node)

    def rates_at(ratio: float) -> JobRates:
        planned_h = None if ri.planned_restarts_per_day is None else ri.planned_restarts_per_day / 24.0
        return job_rates(
            table,
            accelerators,
            nodes,
            scale_ratio=ri.failure_rate_scale_ratio * ratio,
            overrides=ri.rates_per_unit_hour,
            include_planned=ri.include_planned,
            memory_ratio=basis.memory_ratio,
            planned_per_hour=planned_h,
        )

    base_rates = rates_at(hw_ratio)
    storage_src = "the storage bandwidths as given (taken as achieved)"
    w_eff = r_eff = 1.0
    if ri.storage_kind is not None:
        st = storage_efficiency(table, ri.storage_kind)
        w_eff, r_eff = st.write_frac, st.read_frac
        storage_src = f"{st.id} ({st.basis}): {w_eff:.1%} of rated write, {r_eff:.1%} of rated read"
    if ri.storage_efficiency_frac is not None:
        w_eff = r_eff = ri.storage_efficiency_frac
        storage_src = f"reliability.storage_efficiency_frac: {w_eff:.1%} of the rated bandwidths"
    writers = ri.checkpoint_writers_count or (nodes if ri.checkpoint_layout == "sharded" else 1)
    ck = checkpoint_times(
        checkpoint_bytes,
        nodes=nodes,
        accelerators=accelerators,
        mode=ri.checkpoint_mode,
        storage_write_bytes_per_s=ri.storage_write_bytes_per_s,
        storage_read_bytes_per_s=ri.storage_read_bytes_per_s,
        node_storage_bytes_per_s=ri.node_storage_bytes_per_s,
        snapshot_bytes_per_s_per_accelerator=ri.snapshot_bytes_per_s_per_accelerator,
        peer_bytes_per_s_per_accelerator=peer_bytes_per_s_per_accelerator,
        efficiency_frac=w_eff,
        read_efficiency_frac=r_eff,
        writers_count=writers,
    )

    def lemon_ratio(lam_per_s: float, horizon_s: float) -> float:
        """λ with lemons over λ without: each of share × nodes lemon slots adds (m − 1)·r·E[min(τ_k, T)] failures."""
        lm = ri.lemon_nodes
        if lm is None or lam_per_s <= 0:
            return 1.0
        r_node = lam_per_s / nodes
        exposure = lemon_exposure_s(r_node, lm.rate_ratio, lm.exclude_after_count, horizon_s)
        extra = lm.share_frac * nodes * (lm.rate_ratio - 1.0) * r_node * exposure
        return 1.0 + extra / (lam_per_s * horizon_s)

    human = (
        human_response_mixture(
            ri.human_response.day_s,
            ri.human_response.night_s,
            ri.human_response.day_start_hour,
            ri.human_response.day_end_hour,
        )
        if ri.human_response is not None
        else ()
    )
    planned_down = ri.restart_s + ck.load_s + ri.warmup_s
    fixed = (ri.restart_s if ri.startup_s is None else ri.startup_s) + ri.warmup_s

    def evaluate(
        ratio: float, lemons: float, spares: int | None
    ) -> tuple[Expectation, Downtime, JobRates, int, tuple[SpareChoice, ...], float, str]:
        rates = rates_at(ratio * lemons)
        lam = rates.unexpected_per_s
        if ri.checkpoint_interval_s is not None:
            interval, src = ri.checkpoint_interval_s, "reliability.checkpoint_interval_s"
        elif lam > 0:
            interval, src = young_daly_interval_s(ck.blocking_s, 1.0 / lam), "Young/Daly optimum √(2·δ·MTBF)"
        else:
            interval, src = work_s, "no failures: one checkpoint at the end"
        if ri.checkpoint_mode != "synchronous" and interval < ck.write_s:
            # a background write must finish before the next snapshot starts (one write in flight)
            interval, src = ck.write_s, src + ", raised to the background write time"
        interval = min(interval, work_s)
        hang = sum(v for k, v in rates.by_component_per_s.items() if k in _hang_rows(table))
        stops = _stops(ri, nodes, interval, ck.load_s)

        def down_for(s: int) -> Downtime:
            return downtime(
                detection_s=ri.detection_s,
                restart_s=ri.restart_s,
                load_s=ck.load_s,
                unexpected_per_s=lam,
                repair_per_s=rates.repair_per_s,
                repair_s=ri.repair_s,
                spare_nodes=s,
                crash_detection_s=ri.crash_detection_s,
                hang_per_s=hang,
                human_s=human,
                restart_failure_prob=ri.restart_failure_prob,
                warmup_s=ri.warmup_s,
            )

        def run(s: int) -> Expectation:
            return expected_run(
                useful_s=work_s,
                interval_s=interval,
                blocking_s=ck.blocking_s,
                unexpected_per_s=lam,
                down=down_for(s),
                planned_per_s=rates.planned_per_s,
                planned_downtime_s=planned_down,
                other_stops=stops,
                fixed_s=fixed,
            )

        best, tried = best_spares(
            lambda s: run(s).wall_s,
            nodes,
            per_node,
            rates.repair_per_s,
            ri.repair_s,
            ri.spare_nodes if spares is None else spares,
        )
        return run(best.spare_nodes), down_for(best.spare_nodes), rates, best.spare_nodes, tried, interval, src

    # lemons: the excess depends on the run's length, which depends on the rate; two passes converge (the excess
    # is bounded by k failures per lemon slot)
    lem = lemon_ratio(base_rates.unexpected_per_s, work_s)
    exp, down, rates, spares, tried, interval, interval_src = evaluate(hw_ratio, lem, None)
    if ri.lemon_nodes is not None:
        lem = lemon_ratio(base_rates.unexpected_per_s, exp.wall_s)
        exp, down, rates, spares, tried, interval, interval_src = evaluate(hw_ratio, lem, None)
    exp = replace(exp, ettr_frac=useful_s / exp.wall_s)  # useful time excludes the data-loading stalls
    u = basis.uncertainty_ratio

    def band(ratio: float) -> float | None:
        try:
            return evaluate(ratio, lem, spares)[0].wall_s
        except SpecError:  # failures faster than a checkpoint segment at this end of the band
            return None

    low, high = band(hw_ratio / u), band(hw_ratio * u)
    lam = rates.unexpected_per_s
    dist = (
        simulate(
            useful_s=work_s,
            interval_s=interval,
            blocking_s=ck.blocking_s,
            unexpected_per_s=lam,
            down=down,
            planned_per_s=rates.planned_per_s,
            planned_downtime_s=planned_down,
            trials=ri.trials,
            seed=ri.seed,
            other_stops=_stops(ri, nodes, interval, ck.load_s),
            fixed_s=fixed,
        )
        if ri.trials > 0
        else None
    )
    causes = sorted(((k, v * HOUR_S) for k, v in rates.by_component_per_s.items()), key=lambda kv: -kv[1])
    cluster = cluster_accelerators or accelerators
    cluster_nodes = math.ceil(cluster / per_node)
    node_rate = per_node_rate_per_s(
        table,
        per_node,
        scale_ratio=ri.failure_rate_scale_ratio * hw_ratio,
        memory_ratio=basis.memory_ratio,
        overrides=ri.rates_per_unit_hour,
    )
    return ReliabilityReport(
        accelerators_count=accelerators,
        nodes_count=nodes,
        unexpected_per_hour=lam * HOUR_S,
        repair_per_hour=rates.repair_per_s * HOUR_S,
        planned_per_hour=rates.planned_per_s * HOUR_S,
        mtbf_s=1.0 / lam if lam > 0 else math.inf,
        top_causes_per_hour=dict(causes[:5]),
        checkpoint=ck,
        checkpoint_source=checkpoint_source,
        checkpoint_interval_s=exp.interval_s,
        interval_source=interval_src,
        downtime_mean_s=down.mean_s,
        downtime_parts_s=down.parts_mean_s,
        spare_nodes=spares,
        spares_source="reliability.spare_nodes"
        if ri.spare_nodes is not None
        else "the count minimising accelerator-hours held (spares included)",
        spares_tried=tried,
        no_failure_s=useful_s,
        expected=exp,
        distribution=dist,
        lost_accelerator_hours=(exp.wall_s - useful_s) * accelerators / HOUR_S,
        spare_accelerator_hours=spares * per_node * exp.wall_s / HOUR_S,
        rate_basis=replace(basis, lemon_ratio=lem),
        storage_source=storage_src + f"; {writers} writer(s), {ri.checkpoint_layout}",
        band_s=(low, high),
        badput_s=badput(exp, down, useful_s, work_s),
        restart_attempts_mean=down.restart_attempts_mean,
        cluster_accelerators_count=cluster,
        cluster_failures_expected_count=node_rate * cluster_nodes * exp.wall_s,
    )


def _hang_rows(table: ReliabilityTable) -> frozenset[str]:
    return frozenset(r.id for r in component_rates(table) if r.detection == "hang")


def _stops(ri: ReliabilityInput, nodes: int, interval_s: float, load_s: float) -> tuple[Stop, ...]:
    """Slow nodes (a share of the run slowed until noticed, then a machine swap: a restart chain) and rollbacks (noticed
    after detection_s; the work since the last checkpoint, τ/2 on average, plus rollback_s is redone; a restart)."""
    out: list[Stop] = []
    restart = ri.restart_s + load_s + ri.warmup_s
    if ri.slow_nodes is not None:
        sn = ri.slow_nodes
        # the slow node is swapped for another machine: its restart is a chain (goodput.Downtime)
        swap = restart + ri.restart_s * (retry_attempts_mean(ri.restart_failure_prob) - 1.0)
        out.append(("slow_nodes", sn.per_node_per_day * nodes / 86_400.0, sn.slowdown_frac * sn.noticed_s + swap))
    if ri.rollbacks is not None:
        rb = ri.rollbacks
        out.append(("rollbacks", rb.per_day / 86_400.0, rb.detection_s + interval_s / 2 + rb.rollback_s + restart))
    return tuple(out)


def badput(exp: Expectation, down: Downtime, useful_s: float, work_s: float) -> dict[str, float]:
    """E[T] − useful time by Google's goodput categories (ml-goodput-measurement: initialisation, compilation and
    warm-up, data loading, checkpointing, failures' wasted progress and recovery, plus planned restarts, slow nodes
    and rollbacks): failures' downtime is split over its parts in proportion to their means."""
    parts = down.parts_mean_s
    total = sum(parts.values())
    fail = {k: exp.failure_downtime_s * v / total if total > 0 else 0.0 for k, v in parts.items()}
    return {
        "initialisation_s": exp.fixed_s,
        "data_loading_s": work_s - useful_s,
        "checkpoint_save_s": exp.checkpoint_overhead_s,
        "failures_lost_work_s": exp.lost_work_s,
        "failures_detection_s": fail["detection"] + fail["human_response"],
        "failures_restart_s": fail["restart"] + fail["load_and_warmup"],
        "failures_repair_wait_s": fail["repair_wait"],
        "planned_restarts_s": exp.stops_s.get("planned", 0.0),
        "slow_nodes_s": exp.stops_s.get("slow_nodes", 0.0),
        "rollbacks_s": exp.stops_s.get("rollbacks", 0.0),
    }


def reliability_for_scenario(
    sc: Scenario, ri: ReliabilityInput, *, useful_s: float, accelerators: int, table: ReliabilityTable
) -> ReliabilityReport:
    """:func:`plan_reliability` for a training scenario's plan (checkpoint size from its training section; in-memory
    checkpoints reload at the cluster's scale-out bandwidth per accelerator)."""
    ckpt, src = scenario_checkpoint_bytes(sc, ri.checkpoint_bytes)
    return plan_reliability(
        ri,
        useful_s=useful_s,
        accelerators=accelerators,
        per_node=sc.cluster.per_node,
        checkpoint_bytes=ckpt,
        checkpoint_source=src,
        peer_bytes_per_s_per_accelerator=sc.cluster.scale_out_bw_one_way_bytes_per_s,
        accelerator_id=sc.cluster.accelerator.id,
        cluster_accelerators=ri.cluster_accelerators_count or max(sc.cluster.count, accelerators),
        table=table,
    )
