"""Inference planner entry points: estimate one deployment; find the cheapest deployment for a demand."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput, Scenario, resolve_cluster
from aiinfra.specs.workload import ServingWorkload
from aiinfra.units import GB


def engine_defaults(engine: str = "vllm") -> dict[str, Any]:
    for row in catalog.raw_rows("engines"):
        if row["id"] == engine:
            return dict(row)
    return {}


def _reserve_bytes(tp: int) -> float:
    rows = catalog.raw_rows("runtime")
    if not rows:
        return 0.0
    return (float(rows[0]["other_gb"]) + (float(rows[0]["nccl_gb"]) if tp > 1 else 0.0)) * GB


def activation_peak_bytes(model: ModelArch, tp: int, batched_tokens: int) -> float:
    """Largest live tensors of one forward over ``batched_tokens`` tokens (what vLLM's profiling run sees):
    residual + normed input + attention output (3·h) and the MLP's gate, up and activated tensors
    (3·ffn/tp), 2 bytes each — counted from a decoder layer's op list."""
    ffn = model.expert_ffn * model.experts_per_token if model.is_moe else model.ffn_hidden_size
    return batched_tokens * (3.0 * model.hidden_size + 3.0 * ffn / tp) * 2.0


@dataclass(frozen=True, kw_only=True, slots=True)
class KvCapacity:
    weights_bytes: float
    activation_peak_bytes: float
    reserve_bytes: float
    kv_cache_bytes: float
    kv_bytes_per_token: float
    """Per accelerator."""
    blocks: int
    kv_capacity_tokens: int


def kv_capacity(im: InferenceModel, util_frac: float, block_tokens: int, batched_tokens: int) -> KvCapacity:
    """vLLM's allocator: blocks = floor((util·HBM − weights − activation peak − other) / (block · KV/token))."""
    mem = im.cluster.accelerator.memory_bytes
    w = im.weight_bytes_per_accelerator
    act = activation_peak_bytes(im.model, im.tp, batched_tokens)
    res = _reserve_bytes(im.tp)
    free = util_frac * mem - w - act - res
    per_tok = im.kv_bytes_per_token_per_accelerator
    blocks = max(0, math.floor(free / (block_tokens * per_tok))) if per_tok > 0 else 0
    return KvCapacity(
        weights_bytes=w, activation_peak_bytes=act, reserve_bytes=res, kv_cache_bytes=max(free, 0.0),
        kv_bytes_per_token=per_tok, blocks=blocks, kv_capacity_tokens=blocks * block_tokens,
    )  # fmt: skip


def prefill_time_s(im: InferenceModel, n_prompts: int, prompt_tokens: int, budget_tokens: int) -> tuple[float, float]:
    """(time to prefill n prompts in chunks of ``budget_tokens``, mean completion time of a prompt)."""
    total = n_prompts * prompt_tokens
    done = 0
    t = 0.0
    finish: list[float] = []
    per_prompt_cached = 0
    while done < total:
        chunk = min(budget_tokens, total - done)
        # chunks run over consecutive prompts; attention pairs as if each chunk continued its prompt
        cached = per_prompt_cached % prompt_tokens
        t += im.iteration_time_s(StepBatch.prefill(chunk, cached if chunk < prompt_tokens else 0))
        done += chunk
        per_prompt_cached += chunk
        while len(finish) < done // prompt_tokens:
            finish.append(t)
    mean = sum(finish) / len(finish) if finish else t
    return t, mean


@dataclass(frozen=True, kw_only=True, slots=True)
class InferenceEstimate:
    accelerator: str
    count: int
    tp: int
    pp: int
    replicas: int
    weight_precision: str
    kv_precision: str
    batch_seqs: int
    fits: bool
    memory_per_accelerator: dict[str, float]
    kv_capacity_tokens: int
    max_concurrent_seqs: int
    ttft_s: float
    tpot_s: float
    output_tokens_per_s: float
    output_tokens_per_s_per_user: float
    requests_per_s: float
    prefill_bound: str
    decode_bound: str
    speculative_tokens_per_step: float | None
    notes: tuple[str, ...]


def _model_for(sc_model: ModelArch, cluster: ClusterSpec, wl: ServingWorkload) -> InferenceModel:
    plan = wl.plan
    return InferenceModel(
        model=sc_model, cluster=cluster, tp=plan.tp if plan else 1, pp=plan.pp if plan else 1,
        weight_precision=wl.weight_precision, kv_precision=wl.kv_precision or "bf16",
    )  # fmt: skip


def speculative_tokens_per_step(alpha: float, gamma: int) -> float:
    """Expected tokens per target step, (1 − α^(γ+1)) / (1 − α) (Leviathan et al. 2023, eq. 1)."""
    if alpha >= 1.0:
        return float(gamma + 1)
    return (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


def estimate(
    model: ModelArch,
    cluster: ClusterSpec,
    wl: ServingWorkload,
    engine: str = "vllm",
    cap_batch: bool = True,
    prefill_budget_tokens: int | None = None,
) -> InferenceEstimate:
    im = _model_for(model, cluster, wl)
    eng = engine_defaults(engine)
    budget = prefill_budget_tokens or int(eng.get("max_num_batched_tokens", 2048))
    notes: list[str] = []
    per_replica = im.tp * im.pp
    if cluster.count % per_replica:
        raise SpecError("inference.plan", f"tp={im.tp} pp={im.pp}",
                        f"tp·pp = {per_replica} does not divide hardware.count = {cluster.count}",
                        "choose tp·pp dividing the accelerator count")  # fmt: skip
    replicas = cluster.count // per_replica
    if wl.plan is not None and wl.plan.replicas:
        replicas = min(replicas, wl.plan.replicas)
    cap = kv_capacity(im, wl.gpu_memory_utilization, wl.block_size_tokens, budget)
    seq_tokens = wl.input_tokens + wl.output_tokens
    blocks_per_seq = math.ceil(seq_tokens / wl.block_size_tokens)
    max_seqs = cap.blocks // blocks_per_seq if blocks_per_seq else 0
    engine_cap = int(eng.get("max_num_seqs", 0)) if cap_batch else 0
    if wl.batch == "max" or (wl.batch is None and wl.concurrency is None and wl.users is None):
        batch = min(max_seqs, engine_cap) if engine_cap else max_seqs
        if engine_cap and max_seqs > engine_cap:
            notes.append(f"batch capped at the engine's max_num_seqs = {engine_cap}")
    elif isinstance(wl.batch, int):
        batch = wl.batch
    else:
        users = wl.concurrency or wl.users or 1
        batch = math.ceil(users / replicas)
    fits = cap.kv_capacity_tokens > 0 and batch <= max_seqs
    if batch <= 0:
        raise InfeasibleError(
            f"{model.id} at {wl.weight_precision} leaves no room for KV cache on {cluster.accelerator.id} "
            f"with tp={im.tp} (weights {cap.weights_bytes / GB:.1f} GB per accelerator) — raise tp or lower the "
            "weight precision"
        )
    t_prefill_all, ttft_mean = prefill_time_s(im, batch, wl.input_tokens, budget)
    _, ttft_one = prefill_time_s(im, 1, wl.input_tokens, budget)
    ctx_mid = wl.input_tokens + wl.output_tokens // 2
    dec = im.breakdown(StepBatch.decode(batch, ctx_mid))
    pre = im.breakdown(StepBatch.prefill(min(budget, wl.input_tokens)))
    tokens_per_step = 1.0
    spec = None
    if wl.speculative is not None:
        tokens_per_step = speculative_tokens_per_step(wl.speculative.acceptance_rate, wl.speculative.num_draft_tokens)
        spec = tokens_per_step
        verify = im.breakdown(
            StepBatch(
                decode_seqs=batch * (wl.speculative.num_draft_tokens + 1),
                decode_context_tokens=batch * (wl.speculative.num_draft_tokens + 1) * ctx_mid,
            )
        )
        draft_s = 0.0
        if wl.speculative.draft_model:
            dm = InferenceModel(model=catalog.model(wl.speculative.draft_model, "inference.speculative.draft_model"),
                                cluster=cluster, tp=im.tp, weight_precision=im.weight_precision)  # fmt: skip
            draft_s = wl.speculative.num_draft_tokens * dm.iteration_time_s(StepBatch.decode(batch, ctx_mid))
        tpot = (verify.time_s + draft_s) / tokens_per_step
        notes.append(f"speculative decoding: {tokens_per_step:.2f} tokens per target step (Leviathan et al. 2023)")
    else:
        tpot = dec.time_s
    cycle = t_prefill_all + wl.output_tokens * tpot
    out_tps_replica = batch * wl.output_tokens / cycle
    ttft = ttft_one if batch == 1 else ttft_mean
    return InferenceEstimate(
        accelerator=cluster.accelerator.id, count=cluster.count, tp=im.tp, pp=im.pp, replicas=replicas,
        weight_precision=wl.weight_precision, kv_precision=wl.kv_precision or "bf16", batch_seqs=batch, fits=fits,
        memory_per_accelerator={
            "weights_bytes": cap.weights_bytes, "kv_cache_bytes": cap.kv_cache_bytes,
            "activations_bytes": cap.activation_peak_bytes, "runtime_reserve_bytes": cap.reserve_bytes,
            "capacity_bytes": cluster.accelerator.memory_bytes,
        },
        kv_capacity_tokens=cap.kv_capacity_tokens, max_concurrent_seqs=max_seqs, ttft_s=ttft, tpot_s=tpot,
        output_tokens_per_s=out_tps_replica * replicas, output_tokens_per_s_per_user=1.0 / tpot,
        requests_per_s=out_tps_replica * replicas / wl.output_tokens, prefill_bound=pre.bound,
        decode_bound=dec.bound, speculative_tokens_per_step=spec, notes=tuple(notes),
    )  # fmt: skip


def estimate_inference(scenario: Scenario) -> InferenceEstimate:
    wl = scenario.inference
    if wl is None:
        raise SpecError(
            "inference", None, "the scenario has no inference section", "add inference: {input_tokens, ...}"
        )
    if scenario.model.max_seq_len and wl.input_tokens + wl.output_tokens > scenario.model.max_seq_len:
        raise SpecError("inference.input_tokens", wl.input_tokens,
                        f"input + output = {wl.input_tokens + wl.output_tokens} exceeds the model's context "
                        f"{scenario.model.max_seq_len}", "shorten the request")  # fmt: skip
    return estimate(scenario.model, scenario.cluster, wl)


def cluster_for(accelerator: str, count: int) -> ClusterSpec:
    return resolve_cluster(HardwareInput(accelerator=accelerator, count=count))
