"""Training planner entry points: estimate a plan, or search every plan; memory alone (incl. LoRA)."""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from aiinfra.analytic.model_figures import param_breakdown
from aiinfra.analytic.training_memory import PlanArrays, TrainSetup, memory_per_rank
from aiinfra.analytic.training_step import step_time
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.search.plans import divisors, enumerate_plans, layout_rules, single_plan, uneven_stages_impossible
from aiinfra.search.rank import rank_plans
from aiinfra.specs.engine import RuntimeReserve
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.model import ModelArch
from aiinfra.specs.parallelism import Recompute, Sharding
from aiinfra.specs.scenario import Scenario
from aiinfra.specs.workload import TrainingJob

FLOP_CONVENTION = (
    "model FLOPs per token = 3 × (2·N_matmul,active + 2·L·s·(d_qk + d_v)), non-causal, recompute not counted "
    "(the 6N + attention convention of PaLM App. B / torchtitan)"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingEstimate:
    """One training layout priced: memory per accelerator, step time and its parts, throughput, MFU and time to
    train."""

    plan: dict[str, Any]
    """The layout: tp, pp, dp, cp, ep, vp, microbatch_seqs, sharding, recompute, sequence_parallel."""
    fits: bool
    """Whether memory_per_accelerator_bytes is within the accelerator's memory."""
    memory_per_accelerator_bytes: float
    """Memory of the fuller of the first and last pipeline stage: the sum of memory_breakdown."""
    memory_capacity_bytes: float
    memory_breakdown: dict[str, float]
    """weights_bytes, gradients_bytes, optimizer_states_bytes, activations_bytes, other_bytes."""
    step_time_s: float
    """One optimizer step: compute + exposed communication + pipeline bubble + straggler wait (step_breakdown),
    plus the calibrated per-step overhead if any."""
    step_breakdown: dict[str, float]
    """compute_s, exposed_communication_s, pipeline_bubble_s, straggler_wait_s (the wait for the slowest rank),
    tp_communication_s, dp_communication_exposed_s."""
    microbatches_per_step: int
    """Micro-batches each pipeline runs per optimizer step (gradient accumulation)."""
    tokens_per_s: float
    """Training tokens per second of the whole job: global batch × seq_len / step time."""
    tokens_per_s_per_accelerator: float
    mfu_frac: float
    """Model FLOPs per step / (step time × accelerators × dense peak at the training precision); FLOPs by
    FLOP_CONVENTION."""
    model_flop_per_step: float
    """Model FLOPs of one optimizer step (FLOP_CONVENTION: recompute not counted)."""
    time_to_train_s: float
    """The run's training tokens / tokens_per_s."""
    accelerator_hours: float
    """time_to_train_s × accelerators, in hours."""
    energy_j: float | None
    """Accelerator-only energy at TDP for the whole run (None when TDP is unknown)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingReport:
    """The answer of ``aiinfra train``: the ranked layouts (or the given one), what the search considered and rejected,
    and the conventions behind the figures."""

    estimates: tuple[TrainingEstimate, ...]
    """Best first (by step time) when searched; one entry when the scenario gives a plan."""
    searched: bool
    """False when the scenario gave the plan (no search)."""
    candidates: int
    """Layout combinations considered."""
    valid_plans: int
    """Combinations passing every structural rule."""
    fitting_plans: int
    """Valid plans that fit in accelerator memory."""
    rejected: dict[str, int]
    """Plans rejected, by reason (structural rules and memory)."""
    search_wall_s: float
    """Wall-clock time of the search on this machine."""
    flop_convention: str
    efficiency_sources: tuple[str, ...]
    """Ids of the efficiency rows the step times used."""
    accelerators_given: int = 0
    """hardware.count (0: not recorded)."""
    accelerators_used: int = 0
    """Accelerators the plans use: fewer than given when no layout fills every accelerator (0: not recorded)."""
    notes: tuple[str, ...] = field(default_factory=tuple)


def reserve_bytes(reserve: RuntimeReserve | None) -> float:
    """Framework reserve of catalog/data/runtime.yaml's row (aiconfigurator's other + NCCL memory); 0 without one."""
    return reserve.reserve_bytes(with_nccl=True) if reserve is not None else 0.0


def setup_from_job(
    sc_model: Any, job: TrainingJob, flash_attention: bool = True, *, reserve: RuntimeReserve | None
) -> TrainSetup:
    """The estimate's scalars for a training section; LoRA / QLoRA fine-tunes freeze the base weights
    (bf16, or NF4 for QLoRA) and train the adapters only; ``reserve``: the scenario's runtime reserve."""
    ft = job.finetune
    frozen: dict[str, Any] = {}
    if ft is not None and ft.method in ("lora", "qlora"):
        frozen = {
            "frozen_base_bytes_per_param": nf4_bytes_per_param() if ft.method == "qlora" else 2.0,
            "adapter_params": adapter_params(sc_model, ft.rank, ft.target_modules),
        }
    return TrainSetup(
        **frozen,
        model=sc_model,
        seq_len=job.seq_len,
        global_batch_seqs=job.global_batch_seqs,
        precision=job.precision,
        flash_attention=flash_attention,
        attention_kernel=job.attention_kernel,
        tp_comm_overlap=job.tp_comm_overlap,
        ep_comm_overlap=job.ep_comm_overlap,
        fsdp_shard_ranks=job.fsdp_shard_ranks or 0,
        moe_routing_skew_cv=job.moe_routing_skew_cv,
        reserve_bytes=reserve_bytes(reserve),
        optimizer=job.optimizer,
    )


def _estimates(
    setup: TrainSetup, cluster: ClusterSpec, plans: PlanArrays, tokens: float, order: np.ndarray, sources: set[str]
) -> list[TrainingEstimate]:
    mem = memory_per_rank(setup, plans)
    st = step_time(setup, cluster, plans)
    sources |= st.efficiency_sources
    acc = cluster.accelerator
    peak = acc.peak_flop_per_s(_dtype(setup.precision))
    tokens_per_step = setup.global_batch_seqs * setup.seq_len
    out = []
    for i in order:
        step = float(st.step_time_s[i])
        tps = tokens_per_step / step
        ttt = tokens / tps
        out.append(
            TrainingEstimate(
                plan=_plan_dict(plans, int(i)),
                fits=bool(mem["total"][i] <= acc.memory_bytes),
                memory_per_accelerator_bytes=float(mem["total"][i]),
                memory_capacity_bytes=acc.memory_bytes,
                memory_breakdown={
                    "weights_bytes": float(mem["weights"][i]),
                    "gradients_bytes": float(mem["gradients"][i]),
                    "optimizer_states_bytes": float(mem["optimizer"][i]),
                    "activations_bytes": float(mem["activations"][i]),
                    "other_bytes": float(mem["other"][i]),
                },
                step_time_s=step,
                step_breakdown={
                    "compute_s": float(st.compute_s[i]),
                    "exposed_communication_s": float(st.exposed_comm_s[i]),
                    "pipeline_bubble_s": float(st.bubble_s[i]),
                    "straggler_wait_s": float(st.straggler_s[i]),
                    "tp_communication_s": float(st.tp_comm_s[i]),
                    "dp_communication_exposed_s": float(st.dp_comm_exposed_s[i]),
                },
                microbatches_per_step=int(st.microbatches[i]),
                tokens_per_s=tps,
                tokens_per_s_per_accelerator=tps / cluster.count,
                mfu_frac=st.model_flop_per_step / (step * cluster.count * peak),
                model_flop_per_step=st.model_flop_per_step,
                time_to_train_s=ttt,
                accelerator_hours=ttt * cluster.count / 3600.0,
                energy_j=acc.tdp_w * cluster.count * ttt if acc.tdp_w else None,
            )
        )
    return out


def _dtype(precision: str) -> str:
    return "bf16" if precision in ("bf16", "fp16") else precision


def _plan_dict(plans: PlanArrays, i: int) -> dict[str, Any]:
    return {
        "tp": int(plans.tp[i]),
        "pp": int(plans.pp[i]),
        "dp": int(plans.dp[i]),
        "cp": int(plans.cp[i]),
        "ep": int(plans.ep[i]),
        "vp": int(plans.vp[i]),
        "microbatch_seqs": int(plans.mb[i]),
        "sharding": Sharding(int(plans.sharding[i])).label,
        "recompute": Recompute(int(plans.recompute[i])).label,
        "sequence_parallel": bool(plans.sp[i]),
    }


def given_plan(scenario: Scenario, job: TrainingJob) -> PlanArrays:
    """The scenario's own training plan as a one-row plan array (dp derived when omitted), after the checks the search
    applies: a SpecError when dp·tp·pp·cp is not the accelerator count, a layout rule is broken or the micro-batch does
    not divide the batch."""
    assert job.plan is not None
    p = job.plan
    n = scenario.cluster.count
    dp = p.dp if p.dp is not None else n // (p.tp * p.pp * p.cp)
    if dp * p.tp * p.pp * p.cp != n:
        raise SpecError(
            "training.plan",
            f"tp={p.tp} pp={p.pp} cp={p.cp} dp={dp}",
            f"dp·tp·pp·cp = {dp * p.tp * p.pp * p.cp} but hardware.count = {n}",
            "make the product equal the accelerator count (or omit dp)",
        )
    for broken, reason in layout_rules(scenario.model, job.seq_len, p.tp, p.pp, p.cp):
        if broken:
            raise SpecError(
                "training.plan",
                f"tp={p.tp} pp={p.pp} cp={p.cp}",
                reason,
                "choose a layout the search accepts (run aiinfra train without training.plan)",
            )
    if job.global_batch_seqs % (dp * p.microbatch_seqs) != 0:
        raise SpecError(
            "training.plan.microbatch_seqs",
            p.microbatch_seqs,
            f"global_batch_seqs={job.global_batch_seqs} is not a multiple of dp·microbatch = {dp * p.microbatch_seqs}",
            "choose a micro-batch that divides global_batch_seqs/dp",
        )
    return single_plan(
        scenario.model,
        setup_from_job(scenario.model, job, reserve=scenario.runtime_reserve),
        tp=p.tp,
        pp=p.pp,
        dp=dp,
        cp=p.cp,
        ep=p.ep,
        vp=p.vp,
        mb=p.microbatch_seqs,
        sharding=p.sharding,
        recompute=p.recompute,
        sp=p.sequence_parallel,
    )


def plan_training(scenario: Scenario) -> TrainingReport:
    """Answer ``aiinfra train``: time the scenario's plan, or search every valid layout and rank the fastest that fit
    (on fewer accelerators, said in the notes, when no layout uses them all; an InfeasibleError when none fits)."""
    job = scenario.training
    if job is None:
        raise SpecError(
            "training", None, "the scenario has no training section", "add training: {tokens, seq_len, ...}"
        )
    setup = setup_from_job(scenario.model, job, reserve=scenario.runtime_reserve)
    cluster = scenario.cluster
    cluster.accelerator.peak_flop_per_s(_dtype(job.precision))  # unknown peak -> clear error now
    sources: set[str] = set()
    t0 = time.perf_counter()
    if job.plan is not None:
        plans = given_plan(scenario, job)
        est = _estimates(setup, cluster, plans, job.tokens, np.array([0]), sources)
        return TrainingReport(
            estimates=tuple(est),
            searched=False,
            candidates=1,
            valid_plans=1,
            fitting_plans=int(est[0].fits),
            rejected={},
            search_wall_s=time.perf_counter() - t0,
            flop_convention=FLOP_CONVENTION,
            efficiency_sources=tuple(sorted(sources)),
        )
    enum = enumerate_plans(scenario.model, cluster.count, job.global_batch_seqs, job.seq_len, _shardings(setup))
    ranked = rank_plans(setup, cluster, enum, job.top_k_plans)
    rejected = ranked.rejected
    notes: list[str] = []
    if setup.frozen_base:
        notes.append(
            "LoRA/QLoRA: frozen base weights, adapters trained; backward computes input gradients only "
            "(MFU counts forward + input-gradient FLOPs, 2/3 of full training's)"
        )
    if len(ranked.order) == 0:
        fewer = _on_fewer_accelerators(scenario, setup, job)
        if fewer is None:
            raise InfeasibleError(
                f"no plan of {cluster.count} × {cluster.accelerator.id} fits {scenario.model.id} "
                f"({enum.candidates:,} candidates; rejections: "
                + "; ".join(f"{v:,} {k}" for k, v in sorted(rejected.items(), key=lambda kv: -kv[1]))
                + ") — add accelerators, shorten seq_len, or lower global_batch_seqs"
            )
        used, enum, ranked = fewer
        idle = cluster.count - used
        notes.append(
            f"no layout uses all {cluster.count} accelerators (see the rejections): the best plan runs on "
            f"{used}, leaving {idle} idle"
        )
        cluster = replace(cluster, count=used)
    plans = enum.plans
    chosen = plans.take(ranked.order)
    est = distinct_sorted(_estimates(setup, cluster, chosen, job.tokens, np.arange(len(chosen)), sources))
    return TrainingReport(
        estimates=tuple(est),
        searched=True,
        candidates=enum.candidates,
        valid_plans=len(plans),
        fitting_plans=ranked.fitting,
        rejected=ranked.rejected,
        search_wall_s=time.perf_counter() - t0,
        flop_convention=FLOP_CONVENTION,
        efficiency_sources=tuple(sorted(sources)),
        accelerators_given=scenario.cluster.count,
        accelerators_used=cluster.count,
        notes=tuple(notes),
    )


def _shardings(setup: TrainSetup) -> tuple[str, ...]:
    """Sharding options the search tries: a frozen base has no gradients or optimizer states to shard."""
    return (Sharding.NONE.label,) if setup.frozen_base else tuple(s.label for s in Sharding)


def distinct_sorted(estimates: list[TrainingEstimate]) -> list[TrainingEstimate]:
    """The ranked plans without repeats: a plan that differs from a faster-ranked one only in its recompute
    setting and has the same step time and memory (selective recompute under FlashAttention, which already
    recomputes the attention scores) adds nothing."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for e in estimates:
        layout = tuple(sorted((k, v) for k, v in e.plan.items() if k != "recompute"))
        key = (layout, round(e.step_time_s, 9), round(e.memory_per_accelerator_bytes))
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


FEWER_COUNTS_TRIED = 4
"""How many of the largest usable accelerator counts below the given one the search tries when none of its
layouts uses every accelerator."""


def usable_counts(scenario: Scenario, job: TrainingJob, below: int) -> list[int]:
    """Accelerator counts under ``below`` that some layout can fill, largest first: dp·tp·pp·cp with dp dividing
    the global batch and tp, pp, cp obeying the layout rules (:func:`aiinfra.search.plans.layout_rules`)."""
    m = scenario.model
    tps = [t for t in divisors(math.gcd(m.num_heads, m.kv_heads)) if t <= below]
    pps = [p for p in range(1, min(m.num_layers, below) + 1) if not uneven_stages_impossible(m.num_layers, p)]
    cps = [c for c in (1, 2, 4, 8, 16) if c == 1 or job.seq_len % (2 * c) == 0]
    model_parallel = {t * p * c for t in tps for p in pps for c in cps if t * p * c <= below}
    counts = {d * mp for d in divisors(job.global_batch_seqs) for mp in model_parallel if d * mp < below}
    return sorted(counts, reverse=True)


def _on_fewer_accelerators(scenario: Scenario, setup: TrainSetup, job: TrainingJob) -> tuple[int, Any, Any] | None:
    """The fastest fitting plan over the largest usable counts below the given one (:data:`FEWER_COUNTS_TRIED`
    of them that have a fitting layout): (count, enumeration, ranking), or None when no count works."""
    best: tuple[float, int, Any, Any] | None = None
    tried = 0
    for count in usable_counts(scenario, job, scenario.cluster.count):
        cluster = replace(scenario.cluster, count=count)
        enum = enumerate_plans(scenario.model, count, job.global_batch_seqs, job.seq_len, _shardings(setup))
        ranked = rank_plans(setup, cluster, enum, job.top_k_plans)
        if len(ranked.order) == 0:
            continue
        step_s = float(step_time(setup, cluster, enum.plans.take(ranked.order[:1])).step_time_s[0])
        if best is None or step_s < best[0]:
            best = (step_s, count, enum, ranked)
        tried += 1
        if tried == FEWER_COUNTS_TRIED:
            break
    return None if best is None else best[1:]


def adapter_params(m: ModelArch, rank: int, target_modules: tuple[str, ...]) -> float:
    """Trainable LoRA parameters: r·(d_in + d_out) per adapted matrix per layer (Hu et al. 2021 §4.1)."""
    h, q, kv, f = m.hidden_size, m.num_heads * m.head_size, m.kv_heads * m.head_size, m.ffn_hidden_size
    shapes = {"q": (h, q), "k": (h, kv), "v": (h, kv), "o": (q, h), "gate": (h, f), "up": (h, f), "down": (f, h)}
    return float(m.num_layers * sum(rank * (a + b) for a, b in (shapes[t] for t in target_modules)))


def lora_params(scenario: Scenario) -> float:
    """Trainable LoRA parameters of the scenario's fine-tune."""
    job = scenario.training
    assert job is not None and job.finetune is not None
    return adapter_params(scenario.model, job.finetune.rank, job.finetune.target_modules)


def param_count(scenario: Scenario) -> float:
    """Total parameters of the scenario's model."""
    return param_breakdown(scenario.model).total


def nf4_bytes_per_param() -> float:
    """QLoRA NF4 storage: 4 bits + double-quantised constants 0.127 bits/param (Dettmers et al. 2023 §3)."""
    return (4.0 + 0.127) / 8.0


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryRow:
    """Memory per accelerator of one training layout, by part."""

    label: str
    """What the row is (the scenario plan, a sharding scheme, a convention, a LoRA fine-tune, an offload)."""
    plan: dict[str, Any]
    """The layout (keys as TrainingEstimate.plan)."""
    weights_bytes: float
    gradients_bytes: float
    optimizer_states_bytes: float
    activations_bytes: float
    other_bytes: float
    """The framework reserve (CUDA context, allocator, NCCL buffers; runtime.yaml)."""
    total_bytes: float
    """Memory per accelerator: the sum of the parts above and other_bytes (offloaded bytes are not in it)."""
    host_offload_bytes: float
    """Bytes moved to host memory by CPU offload (not counted in total_bytes)."""
    fits: bool
    """Whether total_bytes is within the accelerator's memory."""


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryReport:
    """The answer of ``aiinfra memory``: memory per accelerator of the scenario's plan, or of each sharding
    scheme at tp = pp = 1."""

    capacity_bytes: float
    total_params: float
    """Parameters of the whole model."""
    trainable_params: float
    """Parameters trained (the LoRA adapters only for a LoRA/QLoRA fine-tune)."""
    rows: tuple[MemoryRow, ...]
    conventions: tuple[str, ...]
    """The accounting conventions the rows follow, for the report."""


CONVENTIONS = (
    "mixed-precision Adam, Megatron-LM convention (the default rows): bf16 weights 2 B + fp32 main gradients 4 B "
    "+ fp32 master 4 B + Adam m, v 8 B = 18 B/param; the ZeRO paper (Rajbhandari et al. 2020 §3.1) counts fp16 "
    "gradients (2 B) for 16 B/param (the 'ZeRO-paper convention' row) — both are conventions of what the framework "
    "keeps, not facts of the model",
    "activations: Korthikanti et al. 2022 Table 2 (flash attention removes the 5·a·s/h score term)",
    "reserve: CUDA context + allocator + NCCL buffers from catalog/data/runtime.yaml",
)


def _offload(row: MemoryRow, offload: str) -> MemoryRow:
    if offload == "none":
        return row
    moved = row.optimizer_states_bytes
    if offload == "optimizer+params":
        moved += row.gradients_bytes
    return MemoryRow(
        label=row.label + f" + {offload} offload",
        plan=row.plan,
        weights_bytes=row.weights_bytes,
        gradients_bytes=0.0 if offload == "optimizer+params" else row.gradients_bytes,
        optimizer_states_bytes=0.0,
        activations_bytes=row.activations_bytes,
        other_bytes=row.other_bytes,
        total_bytes=row.total_bytes - moved,
        host_offload_bytes=moved,
        fits=False,
    )


def _lora_row(scenario: Scenario, job: TrainingJob, setup: TrainSetup) -> MemoryRow:
    assert job.finetune is not None
    base = param_count(scenario)
    adapters = lora_params(scenario)
    base_bytes = base * (nf4_bytes_per_param() if job.finetune.method == "qlora" else 2.0)
    plan = single_plan(
        scenario.model,
        setup,
        tp=1,
        pp=1,
        dp=1,
        cp=1,
        ep=1,
        vp=1,
        mb=1,
        sharding="none",
        recompute=job.plan.recompute if job.plan else "none",
    )
    if job.plan is not None:
        plan = given_plan(scenario, job)
    act = float(memory_per_rank(setup, plan)["activations"][0])
    weights = base_bytes + adapters * 2.0
    grads = adapters * 4.0
    opt = adapters * 12.0
    total = weights + grads + opt + act + setup.reserve_bytes
    return MemoryRow(
        label=f"{job.finetune.method} r={job.finetune.rank} on {'+'.join(job.finetune.target_modules)}",
        plan=_plan_dict(plan, 0),
        weights_bytes=weights,
        gradients_bytes=grads,
        optimizer_states_bytes=opt,
        activations_bytes=act,
        other_bytes=setup.reserve_bytes,
        total_bytes=total,
        host_offload_bytes=0.0,
        fits=False,
    )


def estimate_memory(scenario: Scenario) -> MemoryReport:
    """Memory per accelerator: the scenario's plan, or one row per sharding scheme with tp = pp = 1."""
    job = scenario.training
    if job is None:
        raise SpecError("training", None, "the scenario has no training section", "add training: {tokens, ...}")
    setup = setup_from_job(scenario.model, job, reserve=scenario.runtime_reserve)
    cap = scenario.cluster.accelerator.memory_bytes
    rows: list[MemoryRow] = []
    trainable = param_count(scenario)
    if job.finetune is not None and job.finetune.method in ("lora", "qlora"):
        rows.append(_lora_row(scenario, job, setup))
        trainable = lora_params(scenario)
    else:
        if job.plan is not None:
            plans = given_plan(scenario, job)
            labels = ["scenario plan"]
        else:
            n = scenario.cluster.count
            plans = PlanArrays(
                *(
                    np.array(v)
                    for v in (
                        [1] * 5,
                        [1] * 5,
                        [n] * 5,
                        [1] * 5,
                        [1] * 5,
                        [1] * 5,
                        [1] * 5,
                        [int(s) for s in Sharding],
                        [int(Recompute.SELECTIVE)] * 5,
                        [False] * 5,
                    )
                )
            )
            labels = [f"{s.label} (dp={n}, tp=pp=1, micro-batch 1, selective recompute)" for s in Sharding]
        mem = memory_per_rank(setup, plans)
        if job.plan is None:  # the same "none" row under the ZeRO paper's 16 B/param convention
            zero_setup = dataclasses.replace(setup, grad_convention="zero")
            zmem = memory_per_rank(zero_setup, plans.take(np.array([0])))
            mem = {k: np.concatenate([v, zmem[k]]) for k, v in mem.items()}
            plans = PlanArrays(
                *(np.concatenate([getattr(plans, f), getattr(plans, f)[:1]]) for f in PlanArrays.__dataclass_fields__)
            )
            labels.append(f"none, ZeRO-paper convention: 16-bit gradients, 16 B/param (dp={n}, tp=pp=1)")
        for i, label in enumerate(labels):
            rows.append(
                MemoryRow(
                    label=label,
                    plan=_plan_dict(plans, i),
                    weights_bytes=float(mem["weights"][i]),
                    gradients_bytes=float(mem["gradients"][i]),
                    optimizer_states_bytes=float(mem["optimizer"][i]),
                    activations_bytes=float(mem["activations"][i]),
                    other_bytes=float(mem["other"][i]),
                    total_bytes=float(mem["total"][i]),
                    host_offload_bytes=0.0,
                    fits=False,
                )
            )
    rows = [_offload(r, job.offload) for r in rows]
    rows = [
        MemoryRow(**{**{f: getattr(r, f) for f in MemoryRow.__dataclass_fields__}, "fits": r.total_bytes <= cap})
        for r in rows
    ]
    return MemoryReport(
        capacity_bytes=cap,
        total_params=param_count(scenario),
        trainable_params=trainable,
        rows=tuple(rows),
        conventions=CONVENTIONS,
    )
