"""Inference planner entry points: estimate one deployment; find the cheapest deployment for a demand."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from aiinfra.analytic.inference import InferenceModel, StepBreakdown
from aiinfra.analytic.step_overheads import host_step_s, serial_stream_s
from aiinfra.analytic.step_time import StepBatch
from aiinfra.analytic.window import context_per_kv_slot
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.planning.engine_profile import Usage, scheduler_defaults
from aiinfra.planning.loaded import LoadedReplica, LoadPoint, Tails
from aiinfra.specs.accuracy import NoteQuery
from aiinfra.specs.engine import EngineProfile, parse_version
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import Scenario
from aiinfra.specs.serving_sim import SchedulerConfig
from aiinfra.specs.tables import DomainTables
from aiinfra.specs.workload import ServingWorkload
from aiinfra.units import GB


def kv_block_tokens(engine: str, wl: ServingWorkload, tables: DomainTables) -> int:
    """KV block size the engine allocates: the workload's ``block_size_tokens`` where that is the engine's own
    flag (vLLM --block-size), else the engine's (engines.yaml ``block_size_tokens``, else the workload's)."""
    return tables.engine(engine).kv_block_tokens(wl.block_size_tokens)


def reserves_full_context(engine: str, tables: DomainTables, wl: ServingWorkload | None = None) -> bool:
    """True when the engine reserves a request's whole prompt + output at admission (engines.yaml
    ``kv_reservation: full``, TensorRT-LLM's GUARANTEED_NO_EVICT); else blocks are allocated as tokens arrive. The
    scheduler's ``kv_reservation`` where the workload sets it (TensorRT-LLM's MAX_UTILIZATION: incremental)."""
    sched = wl.simulation.scheduler if wl is not None and wl.simulation is not None else None
    if sched is not None and sched.kv_reservation is not None:
        return sched.kv_reservation == "full"
    return tables.engine(engine).reserves_full_context


def held_tokens_per_request(engine: str, tables: DomainTables, wl: ServingWorkload) -> int:
    """KV-cache tokens a running request holds on average: its prompt and half its output (blocks allocated as
    tokens arrive), or its whole prompt + output where the engine reserves them at admission
    (:func:`reserves_full_context`)."""
    inp, out = wl.input_tokens, wl.output_tokens
    return inp + out if reserves_full_context(engine, tables, wl) else inp + (out + 1) // 2


def workload_usage(wl: ServingWorkload) -> Usage:
    """How the engine is driven: ``server`` when requests arrive over time (a rate, a client concurrency,
    users or an arrival process), ``offline`` for a fixed batch of prompts (``batch: N`` or ``max``)."""
    if wl.request_rate_per_s or wl.concurrency or wl.users or wl.arrival is not None:
        return "server"
    return "offline"


def through_api_server(wl: ServingWorkload, usage: Usage | None = None) -> bool:
    """Whether requests reach the engine through its API server and stream their tokens back
    (``inference.simulation.streaming``; unstated: the usage, given or the workload's, is ``server``). The LLM class
    of an offline benchmark hands its prompts to the engine directly."""
    stated = wl.simulation.streaming if wl.simulation is not None else None
    return stated if stated is not None else (usage or workload_usage(wl)) == "server"


def _reserve_bytes(
    tables: DomainTables, tp: int, ranks: int = 1, engine: str | None = None, release: tuple[int, ...] | None = None
) -> float:
    """Framework reserve (catalog runtime reserve), NCCL's buffers only when tensor parallelism communicates; an
    engine release's own reserve for a replica on one GPU (``ranks`` = tp·pp = 1) where it states one (engines.yaml
    single_gpu_reserve)."""
    if ranks == 1 and engine is not None:
        own = tables.engine(engine).single_gpu_reserve_bytes(release)
        if own is not None:
            return own
    reserve = tables.runtime_reserve()
    return reserve.reserve_bytes(with_nccl=tp > 1) if reserve is not None else 0.0


def activation_peak_bytes(
    model: ModelArch,
    tp: int,
    batched_tokens: int,
    expert_split: int | None = None,
    moe_chunk_tokens: int | None = None,
) -> float:
    """Largest live tensors of one forward over ``batched_tokens`` tokens (what vLLM's profiling run sees),
    2 bytes each: residual + normed input + attention output (3·h), and the MLP's gate, up and activated tensors
    (3·ffn/tp) — counted from a decoder layer's op list. A MoE layer's fused kernel instead holds, per token and
    routed expert, one buffer of max(2·w, h) elements that serves first the gate-and-up output and then the expert's
    output before the weighted sum, and one of w for the activated tensor (w the expert width on one rank,
    ``expert_split`` ways, default ``tp``; vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts_impl:
    cache13 = M · top_k · max(N, K), intermediate_cache2 = M · top_k · N / 2), for at most ``moe_chunk_tokens``
    tokens (the engine's chunk; None: the whole batch)."""
    h = model.hidden_size
    if not model.is_moe:
        return batched_tokens * (3.0 * h + 3.0 * model.ffn_hidden_size / tp) * 2.0
    width = model.expert_ffn / (expert_split or tp)
    chunk = batched_tokens if moe_chunk_tokens is None else min(batched_tokens, moe_chunk_tokens)
    moe = chunk * model.experts_per_token * (max(2.0 * width, h) + width)
    return (batched_tokens * 3.0 * h + moe) * 2.0


@dataclass(frozen=True, kw_only=True, slots=True)
class KvCapacity:
    """How one accelerator's memory splits into weights, activations, reserve and KV cache (bytes), and how many
    tokens' KV the replica holds."""

    weights_bytes: float
    forward_activation_bytes: float
    """The profile's forward pass (:func:`activation_peak_bytes`)."""
    sampler_profile_bytes: float = 0.0
    """The profile's sampler over its largest batch of requests, where the engine runs one (engines.yaml
    profile_sampler); 0 otherwise."""
    reserve_bytes: float
    kv_cache_bytes: float
    kv_bytes_per_token: float
    """Per accelerator."""
    blocks: int
    """Blocks per accelerator (per attention-DP rank)."""
    kv_capacity_tokens: int
    """Token slots of the whole replica, each holding one token's KV on every layer."""
    context_per_slot_ratio: float = 1.0
    """Tokens of context one slot serves at the workload's mean held context: above 1 where the engine frees the
    sliding-window layers' out-of-window blocks (``analytic/window.context_per_kv_slot``), else 1."""

    @property
    def activation_peak_bytes(self) -> float:
        """What the engine sized its cache by: the larger of the forward pass's and the sampler's peak."""
        return max(self.forward_activation_bytes, self.sampler_profile_bytes)

    @property
    def context_capacity_tokens(self) -> int:
        """Tokens of context the replica holds at the workload's mean context: what the schedulers admit against."""
        return int(self.kv_capacity_tokens * self.context_per_slot_ratio)


def _expert_split(im: InferenceModel) -> int:
    """Ways one routed expert's width is split across ranks: none under expert parallelism, else tp."""
    return 1 if im.ep > 1 else im.tp


def kv_capacity(
    im: InferenceModel,
    util_frac: float,
    block_tokens: int,
    batched_tokens: int,
    engine: str = "vllm",
    free_frac: float | None = None,
    held_context_tokens: float | None = None,
    max_num_seqs: int | None = None,
) -> KvCapacity:
    """Paged KV blocks per accelerator, as the engine allocates them.

    vLLM (``Worker.determine_num_available_blocks``): blocks = floor((util·HBM − weights − activation peak
    − non-torch/other) / (block · KV bytes/token/rank)). TensorRT-LLM (``KvCacheConfig``):
    free_gpu_memory_fraction of the memory left after weights, activations and runtime. Where the engine frees the
    sliding-window layers' out-of-window blocks, a sequence holding ``held_context_tokens`` of context takes fewer
    slots (``context_per_slot_ratio``); the schedulers count context tokens, so the capacity is scaled at that mean
    context (exact for sequences of that length, an approximation for the spread around it). An engine whose
    profile also runs its sampler over min(``batched_tokens``, ``max_num_seqs``) requests (engines.yaml
    profile_sampler) sizes the cache by the larger of that sampler's peak and the forward pass's.
    """
    profile = im.cluster.tables.engine(engine)
    mem = im.cluster.accelerator.runtime_memory_bytes
    w = im.weight_bytes_per_accelerator
    forward = activation_peak_bytes(
        im.model, 1 if im.attention_dp else im.tp, batched_tokens, _expert_split(im), profile.fused_moe_chunk_tokens
    )
    sampler = 0.0
    if max_num_seqs is not None:
        requests = min(batched_tokens, max_num_seqs)
        sampler = profile.sampler_profile_bytes(im.release, requests, im.model.vocab_size)
    res = _reserve_bytes(im.cluster.tables, im.tp, im.tp * im.pp, engine, im.release)
    free = profile.kv_cache_bytes(
        memory_bytes=mem,
        weights_bytes=w,
        activation_bytes=max(forward, sampler),
        reserve_bytes=res,
        util_frac=util_frac,
        free_frac=free_frac,
        ranks=im.tp * im.pp,
        tp=im.tp,
        version=im.release,
        capacity_bytes=im.cluster.accelerator.memory_bytes,
    )
    per_tok = im.kv_bytes_per_token_per_accelerator
    blocks = max(0, math.floor(free / (block_tokens * per_tok))) if per_tok > 0 else 0
    return KvCapacity(
        weights_bytes=w,
        forward_activation_bytes=forward,
        sampler_profile_bytes=sampler,
        reserve_bytes=res,
        kv_cache_bytes=max(free, 0.0),
        kv_bytes_per_token=per_tok,
        blocks=blocks,
        kv_capacity_tokens=blocks * block_tokens * im.kv_token_shards,
        context_per_slot_ratio=_context_per_slot_ratio(im, block_tokens, held_context_tokens),
    )


def _context_per_slot_ratio(im: InferenceModel, block_tokens: int, held_context_tokens: float | None) -> float:
    """Context tokens per KV slot at ``held_context_tokens`` (1 without windowed KV memory or a context)."""
    rule = im.windowed_kv_memory
    if rule is None or not held_context_tokens or held_context_tokens <= 0:
        return 1.0
    return context_per_kv_slot(im.model, held_context_tokens, block_tokens, rule.swa_pool_ratio)


def prefill_steps(n_prompts: int, prompt_tokens: int, budget_tokens: int) -> list[tuple[StepBatch, int]]:
    """Chunked prefill of ``n_prompts`` prompts, ``budget_tokens`` per step (Sarathi-Serve, Agrawal et al.
    2024): each step's chunk spans consecutive prompts; every prompt segment attends causally to its own
    earlier tokens only. Returns (step, prompts completed in that step)."""
    steps: list[tuple[StepBatch, int]] = []
    prompt, done_in_prompt = 0, 0
    while prompt < n_prompts:
        room = budget_tokens
        batch = StepBatch()
        completed = 0
        while room > 0 and prompt < n_prompts:
            seg = min(room, prompt_tokens - done_in_prompt)
            batch = batch + StepBatch.prefill(seg, done_in_prompt)
            room -= seg
            done_in_prompt += seg
            if done_in_prompt == prompt_tokens:
                prompt, done_in_prompt, completed = prompt + 1, 0, completed + 1
        steps.append((batch, completed))
    return steps


def prefill_time_s(im: InferenceModel, n_prompts: int, prompt_tokens: int, budget_tokens: int) -> tuple[float, float]:
    """(time to prefill n prompts in chunks of ``budget_tokens``, mean completion time of a prompt)."""
    t, finish_sum, n_done = 0.0, 0.0, 0
    memo: dict[StepBatch, float] = {}
    for step, completed in prefill_steps(n_prompts, prompt_tokens, budget_tokens):
        if step not in memo:
            memo[step] = im.iteration_time_s(step)
        t += memo[step]
        finish_sum += completed * t
        n_done += completed
    return t, (finish_sum / n_done if n_done else t)


def expected_max_poisson(mean: float, ranks: int) -> float:
    """E[max of ``ranks`` independent Poisson(``mean``) counts] = Σ_k≥0 (1 − F(k)^ranks)."""
    if ranks <= 1 or mean <= 0.0:
        return max(mean, 0.0)
    total, cdf, pmf, k = 0.0, 0.0, math.exp(-mean), 0
    while True:
        cdf += pmf
        tail = 1.0 - cdf**ranks
        total += tail
        k += 1
        if (tail < 1e-12 and k > mean) or k > 10_000:
            return total
        pmf *= mean / k


def steady_state_step(
    batch_seqs: int, input_tokens: int, output_tokens: int, tokens_per_step: float = 1.0, dp_ranks: int = 1
) -> StepBatch:
    """The average iteration of a continuously batched replica holding ``batch_seqs`` sequences (Orca;
    vLLM/TensorRT-LLM in-flight batching): every step decodes one token (``tokens_per_step`` with
    speculation) of each sequence, and by Little's law B·tokens_per_step/out requests finish — and as
    many prompts are prefilled — per step; decoding contexts average input + output/2.

    With attention data parallelism over ``dp_ranks`` ranks, each rank admits its own new prompts and every
    MoE layer synchronises the ranks, so an iteration lasts as long as its busiest rank: that rank prefills
    E[max of dp_ranks Poisson(λ/dp_ranks)] prompts rather than the mean (the context/generation imbalance
    across attention-DP ranks that TensorRT-LLM's "ADP balance" scheduling and DeepSeek's inference-system
    notes describe), while the expert layers process the λ prompts of all ranks. The step carries that
    rank's work as ``busiest_rank`` (its prompts, and 1/dp_ranks of the decodes)."""
    new_per_step = batch_seqs * tokens_per_step / output_tokens
    ctx_each = input_tokens + output_tokens / 2.0
    total = _steady_batch(new_per_step, input_tokens, batch_seqs, batch_seqs * ctx_each)
    if dp_ranks <= 1:
        return total
    rank_prompts = expected_max_poisson(new_per_step / dp_ranks, dp_ranks)
    rank_seqs = batch_seqs / dp_ranks
    rank = _steady_batch(rank_prompts, input_tokens, max(1, round(rank_seqs)), rank_seqs * ctx_each)
    return replace(total, busiest_rank=rank)


def _steady_batch(prompts: float, input_tokens: int, decode_seqs: int, decode_context_tokens: float) -> StepBatch:
    """``prompts`` (a mean, may be fractional) whole prompts of ``input_tokens`` plus the decodes."""
    return StepBatch(
        prefill_tokens=max(1, round(prompts * input_tokens)),
        prefill_attention_pairs=prompts * input_tokens * (input_tokens + 1) / 2.0,
        decode_seqs=decode_seqs,
        decode_context_tokens=round(decode_context_tokens),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class InferenceEstimate:
    """What ``aiinfra infer`` reports for a serving deployment: layout, whether it fits, memory per accelerator
    (bytes), latency (TTFT, TPOT in s), throughput and what bounds prefill and decode."""

    accelerator: str
    count: int
    tp: int
    pp: int
    replicas: int
    weight_precision: str
    kv_precision: str
    engine: str
    batch_seqs: int
    """Sequences in flight per replica."""
    batching: str
    """continuous (steady state of in-flight batching) | static (the batch starts and ends together)."""
    load: str
    """Which state the figures describe: at the given request rate, at the given concurrency, a static batch,
    or saturated (no load given, or more demand than the deployment serves)."""
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
    requests_in_flight: float = 0.0
    """Mean requests in flight per replica (prefilling or decoding)."""
    ttft_percentiles_s: Tails | None = None
    """TTFT p50/p90/p99 under the load (:mod:`aiinfra.planning.loaded`); None for a static batch or no load."""
    tpot_percentiles_s: Tails | None = None
    """Exclusive TPOT p50/p90/p99 under the load."""
    saturated_batch_seqs: int = 0
    """The most sequences a replica runs at once (KV cache, the engine's max_num_seqs and, batching continuously, the
    step budget)."""
    saturated_requests_per_s: float | None = None
    """Requests/s the deployment serves with every replica at its saturated batch (the loaded-replica model's B/R(B);
    None for a static batch). With ``saturated_batch_seqs``, what a load is measured against (its utilisation:
    aiinfra.analytic.equilibrium.utilisation)."""


def workload_release(wl: ServingWorkload) -> str | None:
    """The engine release the workload names (``inference.engine_version``), checked: a MAJOR.MINOR[.PATCH] string, or
    None for the current release."""
    release = wl.engine_version
    if isinstance(release, float):
        raise SpecError(
            "inference.engine_version",
            release,
            "a number, not a release string (a YAML number reads 0.10 as 0.1)",
            "quote it, e.g. engine_version: '0.8', or write MAJOR.MINOR.PATCH such as 0.8.0",
        )
    if release is not None and parse_version(release) is None:
        raise SpecError(
            "inference.engine_version",
            release,
            "holds no release number",
            "write the engine's release as MAJOR.MINOR[.PATCH], e.g. 0.6.3, or leave it out for the current release",
        )
    return release


def overlaps_scheduling(engine: EngineProfile, wl: ServingWorkload) -> bool:
    """Whether the workload's engine release plans each iteration while the previous one runs (an overlap
    scheduler: a request arriving during an iteration joins the one after the next); the scheduler's
    ``overlap_scheduling`` where the scenario sets it."""
    sched = wl.simulation.scheduler if wl.simulation is not None else None
    if sched is not None and sched.overlap_scheduling is not None:
        return sched.overlap_scheduling
    release = workload_release(wl)
    return engine.overlaps_scheduling(parse_version(release) if release else None)


def model_for(
    sc_model: ModelArch,
    cluster: ClusterSpec,
    wl: ServingWorkload,
    attention_dp: bool = False,
    engine: str | None = None,
    streamed: bool | None = None,
) -> InferenceModel:
    """The step-time model of one replica of ``wl.plan`` on ``engine`` (default ``wl.engine``); the planner and
    the simulator share it. ``streamed``: whether requests stream through the engine's API server (None:
    ``inference.simulation.streaming``, else the workload's usage is ``server``)."""
    plan = wl.plan
    if streamed is None:
        streamed = through_api_server(wl)
    sched = wl.simulation.scheduler if wl.simulation is not None else None
    return InferenceModel(
        model=sc_model,
        cluster=cluster,
        tp=plan.tp if plan else 1,
        pp=plan.pp if plan else 1,
        ep=plan.ep if plan else 1,
        weight_precision=wl.weight_precision,
        kv_precision=wl.kv_precision or "bf16",
        attention_dp=attention_dp or bool(plan and plan.attention_dp),
        engine=engine or wl.engine,
        engine_version=workload_release(wl),
        scheduler_steps=sched.num_scheduler_steps if sched is not None else 1,
        overlap_scheduling=sched.overlap_scheduling if sched is not None else None,
        cuda_graphs=sched.cuda_graphs if sched is not None else None,
        streamed=streamed,
    )


def speculative_tokens_per_step(alpha: float, gamma: int) -> float:
    """Expected tokens per target step, (1 − α^(γ+1)) / (1 − α) (Leviathan et al. 2023, eq. 1)."""
    if alpha >= 1.0:
        return float(gamma + 1)
    return (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


#: prompt counts summed in :func:`expected_step_s`: the mean ± this many standard deviations (plus as many counts
#: above, for small means); the Poisson mass left out is below 1e-8 and the sum is renormalised
POISSON_TAIL_SIGMAS = 6.0


def expected_step_s(im: InferenceModel, step: StepBatch, prompt_tokens: int) -> float:
    """E[iteration time] of a steady-state step whose new prompts arrive as a Poisson count with the step's mean
    (``step.prefill_tokens / prompt_tokens``), each prefilled whole in its step (vLLM's chunked prefill takes a
    prompt that fits the step budget in one chunk; TensorRT-LLM schedules whole prompts): Σ_k P(k)·t(k prompts +
    the decodes). Pricing the mean count instead, t(E[k]), lets a fraction of a prompt's compute hide under a
    memory-bound decode step, which no real step does (Jensen: t is convex in the prompt tokens, E[t(k)] ≥
    t(E[k])). Attention-DP steps already price their busiest rank's Poisson prompts (:func:`steady_state_step`)."""
    if step.busiest_rank is not None or step.prefill_tokens <= 0 or prompt_tokens <= 0:
        return im.iteration_time_s(step)
    mean = step.prefill_tokens / prompt_tokens
    spread = POISSON_TAIL_SIGMAS * math.sqrt(mean)
    lo, hi = max(0, math.floor(mean - spread)), math.ceil(mean + spread + POISSON_TAIL_SIGMAS)
    total = weight = 0.0
    for k in range(lo, hi + 1):
        p = math.exp(k * math.log(mean) - mean - math.lgamma(k + 1.0))
        pairs = k * prompt_tokens * (prompt_tokens + 1) / 2.0
        total += p * im.iteration_time_s(replace(step, prefill_tokens=k * prompt_tokens, prefill_attention_pairs=pairs))
        weight += p
    return total / weight


def _decode_cycle_s(
    im: InferenceModel, cluster: ClusterSpec, wl: ServingWorkload, step: StepBatch, batch: int
) -> tuple[float, float]:
    """(seconds per target iteration, tokens per sequence per iteration). With speculative decoding each
    decoding sequence verifies γ + 1 tokens per target step and the draft model runs γ steps first
    (Leviathan et al. 2023 §3: wall time (γ·c + 1)·T_target per (1 − α^(γ+1))/(1 − α) tokens). The verify
    pass runs γ + 1 query tokens per sequence through the weights but reads each context's KV once
    (:meth:`StepBatch.verify`). The target step's new prompts are a Poisson count (:func:`expected_step_s`)."""
    if wl.speculative is None:
        return expected_step_s(im, step, wl.input_tokens), 1.0
    g = wl.speculative.num_draft_tokens
    tokens = speculative_tokens_per_step(wl.speculative.acceptance_rate, g)
    verify = step.verify(g)  # γ + 1 query tokens per sequence, each context's KV read once
    draft_s = 0.0
    if wl.speculative.draft_model:
        draft_arch = cluster.tables.model(wl.speculative.draft_model, "inference.speculative.draft_model")
        dm = im.draft(draft_arch)
        ctx = step.decode_context_tokens // max(step.decode_seqs, 1)
        draft_s = g * dm.iteration_time_s(StepBatch.decode(batch, ctx))
    return expected_step_s(im, verify, wl.input_tokens) + draft_s, tokens


def _poisson_weights(mean: float) -> list[tuple[int, float]]:
    """(k, P(k)) of a Poisson count with ``mean``, over its mean ± POISSON_TAIL_SIGMAS standard deviations."""
    if mean <= 0.0:
        return [(0, 1.0)]
    spread = POISSON_TAIL_SIGMAS * math.sqrt(mean)
    lo, hi = max(0, math.floor(mean - spread)), math.ceil(mean + spread + POISSON_TAIL_SIGMAS)
    ks = [(k, math.exp(k * math.log(mean) - mean - math.lgamma(k + 1.0))) for k in range(lo, hi + 1)]
    total = sum(p for _, p in ks)
    return [(k, p / total) for k, p in ks]


def loaded_ttft_s(
    im: InferenceModel,
    batch: int,
    input_tokens: int,
    output_tokens: int,
    budget_tokens: int,
    cycle_s: float,
    ttft_one_s: float,
) -> float:
    """Mean time to first token of a request joining a continuously batched replica that holds ``batch``
    sequences. Each iteration decodes the batch and prefills the prompts that arrived meanwhile, a Poisson
    count with mean B/out per step (Little's law, :func:`steady_state_step`), so step times vary with k:
    T_k = t(decodes + k prompts). A request arriving at a random moment lands in a step with probability
    proportional to its length and waits its residual, E[T²]/(2·E[T]) (the inspection paradox of renewal
    theory, Kleinrock 1975 §5.2). Its prompt is then prefilled in chunks of the step budget left after the
    step's other work (vLLM's scheduler puts running decodes first and fills the rest of
    ``max_num_batched_tokens`` with prefill; Sarathi-Serve's chunked prefill, Agrawal et al. 2024); each chunk's
    step also carries the decodes and the Poisson count of other new prompts; the first token comes with the
    last chunk. Never below the unloaded prefill ``ttft_one_s``. ``cycle_s`` is kept for callers that price
    the mean step."""
    del cycle_s
    decodes = StepBatch.decode(batch, input_tokens + output_tokens // 2)
    prompt = StepBatch.prefill(input_tokens)
    weights = _poisson_weights(batch / output_tokens)
    memo: dict[int, float] = {}

    def step_s(k: int) -> float:
        if k not in memo:
            work = decodes
            for _ in range(k):
                work = work + prompt
            memo[k] = im.iteration_time_s(work)
        return memo[k]

    mean_s = sum(p * step_s(k) for k, p in weights)
    residual_s = sum(p * step_s(k) ** 2 for k, p in weights) / (2.0 * mean_s)
    prefill_s = 0.0
    for k, p in weights:
        others = decodes
        for _ in range(k):
            others = others + prompt
        room = budget_tokens - others.tokens
        chunk = max(1, min(input_tokens, room if room > 0 else budget_tokens))
        done, t = 0, 0.0
        while done < input_tokens:
            seg = min(chunk, input_tokens - done)
            t += im.iteration_time_s(others + StepBatch.prefill(seg, done))
            done += seg
        prefill_s += p * t
    return max(ttft_one_s, residual_s + prefill_s)


def _saturated_batch(max_seqs: int, engine_cap: int, budget: int, inp: int, out: int) -> int:
    """The largest batch of the steady state: what the KV cache holds, capped by the engine's max_num_seqs and by
    the step budget (B·(1 + in/out) ≤ budget, since B/out prompts are prefilled per step)."""
    batch = min(max_seqs, engine_cap) if engine_cap else max_seqs
    return min(batch, max(1, math.floor(budget / (1.0 + inp / out))))


def _loaded_replica(
    im: InferenceModel,
    cluster: ClusterSpec,
    wl: ServingWorkload,
    steady: Callable[[int], tuple[float, float, float]],
    max_in_flight: int,
    budget: int,
    grid: bool,
    request_overhead_s: float = 0.0,
    admission_delay_iterations: float = 0.0,
) -> LoadedReplica:
    """The loaded-replica model of one deployment: ``steady`` and a decode-only iteration of the same pricing."""
    inp, out = wl.input_tokens, wl.output_tokens
    slots = wl.speculative.num_draft_tokens + 1 if wl.speculative is not None else 1
    chunked = im.cluster.tables.engine(im.engine or wl.engine).chunked_prefill

    def decode_step_s(b: int) -> float:
        return _decode_cycle_s(im, cluster, wl, StepBatch.decode(b, inp + out // 2), b)[0]

    def prefill_iterations(b: int) -> int:
        room = budget - b * slots
        return math.ceil(inp / room) if chunked and room > 0 else 1

    return LoadedReplica(
        steady,
        decode_step_s,
        output_tokens=out,
        max_in_flight=max_in_flight,
        prefill_iterations=prefill_iterations,
        grid=grid,
        request_overhead_s=request_overhead_s,
        admission_delay_iterations=admission_delay_iterations,
    )


def estimate(
    model: ModelArch,
    cluster: ClusterSpec,
    wl: ServingWorkload,
    engine: str | None = None,
    cap_batch: bool = True,
    prefill_budget_tokens: int | None = None,
    attention_dp: bool = False,
    kv_free_frac: float | None = None,
    usage: Usage | None = None,
    max_num_seqs: int | None = None,
) -> InferenceEstimate:
    """One deployment (:func:`estimate_with_replica`, without its loaded-replica model)."""
    return estimate_with_replica(
        model, cluster, wl, engine, cap_batch, prefill_budget_tokens, attention_dp, kv_free_frac, usage, max_num_seqs
    )[0]


@dataclass(frozen=True, slots=True)
class _Deployment:
    """The facts of one deployment every part of its estimate reads: the model as priced, the scheduler's limits and
    the KV cache's room."""

    model: ModelArch
    cluster: ClusterSpec
    wl: ServingWorkload
    engine: str
    im: InferenceModel
    sched: SchedulerConfig | None
    budget: int
    """Tokens per iteration (max_num_batched_tokens)."""
    engine_cap: int
    """The engine's max_num_seqs (0: uncapped)."""
    block: int
    """KV-cache block size (tokens)."""
    replicas: int
    cap: KvCapacity
    max_seqs: int
    """Sequences the KV cache holds per replica at the engine's reservation."""


def note_query(
    model_id: str, engine: str, accelerator_id: str, weight_precision: str | None, wl: ServingWorkload | None
) -> NoteQuery:
    """What a deployment is matched on against the known accuracy gaps (catalog/data/accuracy_notes.yaml): its model,
    engine, accelerator and weight format, at the engine release the workload states (None: the current one)."""
    return NoteQuery(
        model_id=model_id,
        engine=engine,
        accelerator_id=accelerator_id,
        weight_precision=weight_precision,
        release=workload_release(wl) if wl is not None else None,
    )


def _deployment(
    model: ModelArch,
    cluster: ClusterSpec,
    wl: ServingWorkload,
    engine: str,
    cap_batch: bool,
    prefill_budget_tokens: int | None,
    attention_dp: bool,
    kv_free_frac: float | None,
    usage: Usage | None,
    max_num_seqs: int | None,
    notes: list[str],
) -> _Deployment:
    """The deployment as priced (:func:`estimate_with_replica`'s first half): the model, the scheduler's limits
    (noting where they come from), the replicas and the KV capacity; errors for layouts that do not split."""
    im = model_for(model, cluster, wl, attention_dp, engine, streamed=through_api_server(wl, usage))
    sched = wl.simulation.scheduler if wl.simulation is not None else None
    release = workload_release(wl)
    sd = scheduler_defaults(
        cluster.tables.engine(engine),
        cluster.accelerator,
        usage or workload_usage(wl),
        release=release,
        max_model_len=model.max_seq_len,
    )
    budget_set = prefill_budget_tokens or (sched.max_num_batched_tokens if sched else None)
    seqs_set = max_num_seqs or (sched.max_num_seqs if sched else None)
    budget = budget_set or sd.max_num_batched_tokens
    seq_cap = seqs_set or min(sd.max_num_seqs, budget)  # vLLM caps a defaulted max_num_seqs at the budget
    block = kv_block_tokens(engine, wl, cluster.tables)
    if budget_set is None or seqs_set is None:
        notes.append(f"scheduler: {sd.basis}")
    gaps = note_query(model.id, engine, cluster.accelerator.id, wl.weight_precision, wl)
    notes += [f"accuracy: {n}" for n in cluster.tables.accuracy_notes_for(gaps)]
    replicas = _replicas_of(model, cluster, wl, im)
    inp, out = wl.input_tokens, wl.output_tokens
    held = held_tokens_per_request(engine, cluster.tables, wl)
    cap = kv_capacity(im, wl.gpu_memory_utilization, block, budget, engine, kv_free_frac, held, seq_cap)
    if cap.context_per_slot_ratio > 1.0:
        notes.append(
            f"the engine frees the sliding-window layers' blocks outside their {model.sliding_window_tokens}-token "
            f"window: at {held:,} tokens of context a sequence takes {1 / cap.context_per_slot_ratio:.2f} of the "
            f"KV slots of full attention ({cap.context_capacity_tokens:,} tokens of context per replica)"
        )
    if im.expert_padding_factor > 1.0:
        notes.append(
            f"the engine's MXFP4 MoE kernel stores the routed experts padded to its tile multiples: "
            f"{im.expert_padding_factor - 1.0:.1%} more expert bytes than the checkpoint "
            "(engines.yaml mxfp4_moe_padding)"
        )
    if cap.sampler_profile_bytes > cap.forward_activation_bytes:
        notes.append(
            f"the engine sizes its KV cache after profiling its sampler over {min(budget, seq_cap):,} requests: "
            f"{cap.sampler_profile_bytes / 1e9:.2f} GB of logits and probabilities, above the forward pass's "
            f"{cap.forward_activation_bytes / 1e9:.2f} GB "
            "(engines.yaml profile_sampler; lower max_num_seqs to shrink it)"
        )
    release = workload_release(wl)
    rule = cluster.tables.engine(engine).admission_reserve(parse_version(release) if release else None)
    if rule is not None and held < inp + out:
        # SGLang's PrefillAdder also holds back each running request's remaining outputs (out / 2 on average) x its
        # ratio, which a busy replica's decode steps bring down to its floor (engines.yaml admission_reserve_by_version)
        floor = rule.for_layout(im.kv_token_shards > 1).floor_ratio
        held += math.ceil(floor * min(out, rule.clip_tokens) / 2)
    per_seq_tokens = math.ceil(held / block) * block
    return _Deployment(
        model=model,
        cluster=cluster,
        wl=wl,
        engine=engine,
        im=im,
        sched=sched,
        budget=budget,
        engine_cap=seq_cap if cap_batch else 0,
        block=block,
        replicas=replicas,
        cap=cap,
        max_seqs=cap.context_capacity_tokens // per_seq_tokens,
    )


def _replicas_of(model: ModelArch, cluster: ClusterSpec, wl: ServingWorkload, im: InferenceModel) -> int:
    """Replicas of tp·pp accelerators the hardware holds (at most the plan's); errors where tp does not split the
    heads or tp·pp the accelerators."""
    kv = model.kv_heads
    if model.num_heads % im.tp or (kv % im.tp and im.tp % kv):
        raise SpecError(
            "inference.plan.tp",
            im.tp,
            f"does not split num_heads={model.num_heads} and num_kv_heads={kv} evenly (vLLM and "
            "TensorRT-LLM need tp to divide the heads and tp and the KV heads to divide one another)",
            "choose tp dividing num_heads",
        )
    per_replica = im.tp * im.pp
    if cluster.count % per_replica:
        raise SpecError(
            "inference.plan",
            f"tp={im.tp} pp={im.pp}",
            f"tp·pp = {per_replica} does not divide hardware.count = {cluster.count}",
            "choose tp·pp dividing the accelerator count",
        )
    replicas = cluster.count // per_replica
    if wl.plan is not None and wl.plan.replicas:
        replicas = min(replicas, wl.plan.replicas)
    return replicas


def _first_batch(d: _Deployment, notes: list[str]) -> tuple[int, bool, bool]:
    """(batch, fits, static): a static batch as given; the saturated steady state (noting what holds it); or the
    users' or clients' share per replica (with think time the share in flight is found by the loaded replica)."""
    wl, cap_tokens = d.wl, d.cap.context_capacity_tokens
    inp, out = wl.input_tokens, wl.output_tokens
    static = isinstance(wl.batch, int)
    if isinstance(wl.batch, int):
        batch = wl.batch
        need = batch * math.ceil((inp + out) / d.block) * d.block
        fits = cap_tokens > 0 and need <= cap_tokens
    elif wl.batch == "max" or (wl.concurrency is None and wl.users is None):
        batch = _saturated_batch(d.max_seqs, d.engine_cap, d.budget, inp, out)
        if d.engine_cap and d.max_seqs > d.engine_cap:
            notes.append(f"batch capped at the engine's max_num_seqs = {d.engine_cap}")
        if batch < min(d.max_seqs, d.engine_cap or d.max_seqs):
            notes.append(f"batch held to {batch} by the {d.budget}-token step budget (B·(1 + in/out) ≤ budget)")
        fits = batch >= 1
    else:
        users = wl.concurrency or wl.users or 1
        batch = math.ceil(users / d.replicas)  # with think time: the users' share in flight, found below
        fits = cap_tokens > 0 and batch <= d.max_seqs
    if batch <= 0 or cap_tokens <= 0:
        raise InfeasibleError(
            f"{d.model.id} at {wl.weight_precision} leaves no room for the KV cache of one request on "
            f"{d.cluster.accelerator.id} with tp={d.im.tp} (weights {d.cap.weights_bytes / GB:.1f} GB per "
            f"accelerator, KV capacity {cap_tokens:,} tokens) — raise tp or lower the weight precision"
        )
    return batch, fits, static


@dataclass(slots=True)
class _Answer:
    """The load point an estimate reports: batch, latencies, throughput per replica and how the load was read."""

    batch: int
    ttft_s: float
    tpot_s: float
    out_tokens_per_s_per_replica: float
    """Output tokens/s of one replica."""
    tok_per_step: float
    """Tokens per sequence per target step (1 without speculative decoding)."""
    load: str
    fits: bool
    tails: LoadPoint | None = None
    rep: LoadedReplica | None = None


def _static_answer(d: _Deployment, batch: int, fits: bool, ttft_one_s: float, req_s: float) -> _Answer:
    """A static batch: every prompt prefilled (chunked by the step budget), then the batch decodes together."""
    im, wl = d.im, d.wl
    inp, out = wl.input_tokens, wl.output_tokens
    t_prefill_all, ttft_mean = prefill_time_s(im, batch, inp, d.budget)
    step = StepBatch.decode(batch, inp + out // 2)
    cycle_s, tok_per_step = _decode_cycle_s(im, d.cluster, wl, step, batch)
    tpot = cycle_s / tok_per_step
    total_s = t_prefill_all + max(out - 1, 0) * tpot
    return _Answer(
        batch=batch,
        ttft_s=(ttft_one_s if batch == 1 else ttft_mean) + req_s,
        tpot_s=tpot,
        out_tokens_per_s_per_replica=batch * out / total_s,
        tok_per_step=tok_per_step,
        load=f"a static batch of {batch}: every prompt prefilled, then the batch decodes together",
        fits=fits,
    )


@dataclass(frozen=True, slots=True)
class _Steady:
    """The steady state of continuous batching holding ``b`` sequences: (TPOT, TTFT, tokens per sequence per
    step), the TTFT with the serving path and the iterations an arrival waits beyond the next one."""

    d: _Deployment
    ttft_one_s: float
    req_s: float
    delay_iterations_count: float

    def __call__(self, b: int) -> tuple[float, float, float]:
        """(TPOT, TTFT, tokens per sequence per step) of the steady state holding ``b`` sequences."""
        d, wl = self.d, self.d.wl
        inp, out = wl.input_tokens, wl.output_tokens
        dp_ranks = d.im.tp if d.im.attention_dp else 1
        step = steady_state_step(b, inp, out, dp_ranks=dp_ranks)
        cycle_s, tok = _decode_cycle_s(d.im, d.cluster, wl, step, b)
        if wl.speculative is not None:
            step = steady_state_step(b, inp, out, tok, dp_ranks=dp_ranks)
            cycle_s, tok = _decode_cycle_s(d.im, d.cluster, wl, step, b)
        first = self.ttft_one_s if b == 1 else loaded_ttft_s(d.im, b, inp, out, d.budget, cycle_s, self.ttft_one_s)
        if self.delay_iterations_count and b > 1:
            first += (
                self.delay_iterations_count * cycle_s
            )  # the prompt joins later (the overlap or multi-step scheduler)
        return cycle_s / tok, first + self.req_s, tok


def _at_rate(d: _Deployment, steady: _Steady, rep: LoadedReplica, a: _Answer, notes: list[str]) -> None:
    """Poisson arrivals at the workload's rate (per replica): the loaded replica's point, or saturation."""
    wl, out = d.wl, d.wl.output_tokens
    assert wl.request_rate_per_s is not None
    rate_replica = wl.request_rate_per_s / d.replicas
    saturated_rps = a.out_tokens_per_s_per_replica / out
    at_rate = rep.at_rate(rate_replica)
    a.tails = at_rate
    if rate_replica >= saturated_rps or at_rate.saturated:
        a.load = (
            f"saturated: the demand {wl.request_rate_per_s:.4g} requests/s exceeds the "
            f"{saturated_rps * d.replicas:.4g}/s this deployment serves — queues grow without bound"
        )
        notes.append(a.load)
        a.tails = None
        return
    a.batch = at_rate.batch
    a.tpot_s, a.ttft_s, a.tok_per_step = steady(a.batch)
    a.out_tokens_per_s_per_replica = rate_replica * out
    a.load = (
        f"at {wl.request_rate_per_s:.4g} requests/s (Poisson): {at_rate.in_flight:.1f} requests in "
        f"flight per replica (Little's law); the deployment saturates at "
        f"{saturated_rps * d.replicas:.4g} requests/s"
    )


def _with_think_time(
    d: _Deployment, steady: _Steady, rep: LoadedReplica, top: int, a: _Answer, notes: list[str]
) -> None:
    """Users who think between requests: the closed system's fixed point (requests in flight, not users, in memory)."""
    wl, out, max_seqs = d.wl, d.wl.output_tokens, d.max_seqs
    assert wl.think_time_s
    users_replica = math.ceil((wl.concurrency or wl.users or 1) / d.replicas)
    point = rep.with_users(users_replica, wl.think_time_s)
    a.tails = point
    a.batch = min(point.batch, top)
    a.tpot_s, a.ttft_s, a.tok_per_step = steady(a.batch)
    a.ttft_s = point.ttft_s
    resp_s = a.ttft_s + max(out - 1, 0) * a.tpot_s
    a.out_tokens_per_s_per_replica = point.requests_per_s * out
    # memory holds the requests the users keep in flight (not the users): the fixed point's B
    a.fits = point.in_flight <= max_seqs
    a.load = (
        f"{wl.concurrency or wl.users} users thinking {wl.think_time_s:g} s on average between requests: "
        f"{point.in_flight:.1f} in flight per replica (N·R/(R + Z), R = {resp_s:.3g} s)"
    )
    if point.saturated:
        notes.append(
            f"saturated: the replica runs at most {top} sequences (KV cache, max_num_seqs, step "
            f"budget), so {point.in_flight - top:.0f} requests per replica wait on average "
            f"({a.ttft_s - steady(a.batch)[1]:.3g} s added to TTFT)"
        )
    elif a.fits and point.in_flight_p99 > max_seqs:
        notes.append(
            f"requests in flight reach {point.in_flight_p99:.0f} per replica at their 99th "
            f"percentile, above the {max_seqs} sequences the KV cache holds: expect queueing "
            "or preemptions at the peaks"
        )


def _continuous_answer(
    d: _Deployment, batch: int, fits: bool, ttft_one_s: float, req_s: float, grid: bool, notes: list[str]
) -> _Answer:
    """Continuous batching under the workload's load (a rate, users with or without think time, or saturation),
    from the loaded-replica model; notes on streaming, late admission and the engine's host time."""
    wl, engine, im = d.wl, d.engine, d.im
    inp, out = wl.input_tokens, wl.output_tokens
    # iterations an arrival waits beyond the next one: an overlap scheduler planned it already; a multi-step
    # call of n decode iterations admits nothing until it ends, (n - 1)/2 on average
    steps = d.sched.num_scheduler_steps if d.sched is not None else 1
    overlap = overlaps_scheduling(d.cluster.tables.engine(engine), wl)
    delay = (1.0 if overlap else 0.0) + (steps - 1) / 2.0
    steady = _Steady(d, ttft_one_s, req_s, delay)
    top = _saturated_batch(d.max_seqs, d.engine_cap, d.budget, inp, out)
    rep = _loaded_replica(
        im, d.cluster, wl, steady, top, d.budget, grid=grid, request_overhead_s=req_s, admission_delay_iterations=delay
    )
    tpot, ttft, tok_per_step = steady(batch)
    a = _Answer(batch, ttft, tpot, batch / tpot, tok_per_step, "", fits, rep=rep)
    if wl.request_rate_per_s is not None and wl.batch != "max":
        _at_rate(d, steady, rep, a, notes)
    elif (wl.concurrency is not None or wl.users is not None) and wl.think_time_s:
        _with_think_time(d, steady, rep, top, a, notes)
    elif wl.concurrency is not None or wl.users is not None:
        a.tails = rep.with_users(batch, 0.0) if batch <= top else None
        a.load = f"{wl.concurrency or wl.users} concurrent sequences, each sending its next request at once"
    else:
        a.load = "saturated: the largest batch the KV cache, the engine and its step budget allow (no load given)"
    _continuous_notes(d, a.batch, delay, overlap, steps, notes)
    return a


def _eager_note(d: _Deployment, pre: StepBreakdown, tokens: int, notes: list[str]) -> None:
    """Where the release issues its prompt steps eagerly from Python and their kernels take longer to issue than the
    GPU takes to run them, the note says that the host sets the prompt step (engines.yaml eager_host_by_version)."""
    eager_s = d.im.eager_host_s()
    gpu_s = pre.linear_s + pre.attention_s + pre.communication_s
    if eager_s > gpu_s:
        notes.append(
            f"{d.engine} {d.im.engine_version}: prompt steps run eagerly from Python, and issuing a step's kernels "
            f"takes {eager_s * 1e3:.3g} ms (the release's measured host time a kernel, engines.yaml "
            "eager_host_by_version), "
            f"longer than the GPU's {gpu_s * 1e3:.3g} ms for a {tokens:,}-token prompt: the host CPU sets that step"
        )


def _continuous_notes(d: _Deployment, batch: int, delay: float, overlap: bool, steps: int, notes: list[str]) -> None:
    """Notes on what sets a loaded step: the API server's streaming, late admission, the engine's host time."""
    im, engine, inp = d.im, d.engine, d.wl.input_tokens
    chunk_s = d.cluster.tables.engine(engine).stream_chunk_s if im.streamed else 0.0
    if chunk_s and batch * chunk_s > replace(im, streamed=False).iteration_time_s(StepBatch.decode(batch, inp)):
        notes.append(
            f"at {batch} sequences the API server's streaming sets the step: {batch} chunks × "
            f"{chunk_s * 1e6:.3g} µs = {batch * chunk_s * 1e3:.3g} ms, longer than the engine's step (engines.yaml)"
        )
    if delay:
        why = ["the overlap scheduler plans each iteration while the last one runs"] if overlap else []
        why += [f"{steps}-step scheduling admits only between calls"] if steps > 1 else []
        notes.append(f"TTFT under load waits {delay:g} more iteration(s) before its prompt: " + "; ".join(why))
    serial_s = (
        serial_stream_s(StepBatch.decode(batch, inp), engine, im.engine_version, d.cluster.tables, steps)
        if im.streamed
        else 0.0
    )
    if serial_s:
        notes.append(
            f"{engine} {im.engine_version}: each streamed output is handed over between steps, "
            f"{serial_s * 1e3:.3g} ms a step at {batch} sequences (engines.yaml serial_stream_by_version)"
        )
    if im.cuda_graphs is False:
        dec = StepBatch.decode(batch, inp)
        eager_s = im.iteration_time_s(dec) - replace(im, cuda_graphs=None).iteration_time_s(dec)
        what = (
            f"issuing them takes longer than the GPU runs them: {eager_s * 1e3:+.3g} ms a step"
            if eager_s > 0.0
            else "the GPU's work still sets the step (its kernels run longer than their issue)"
        )
        notes.append(
            f"{engine}: CUDA graphs off as the scenario sets (inference.simulation.scheduler.cuda_graphs): every "
            f"decode step issues its kernels from Python; {what} at {batch} sequences"
        )
    break_s = im.graph_break_s()
    if break_s:
        notes.append(
            f"{engine} {im.engine_version}: decode graphs leave the attention outside at every layer, "
            f"{break_s * 1e3:.3g} ms a captured decode step (engines.yaml graph_break_by_version)"
        )
    host_s, overlapped = host_step_s(engine, im.engine_version, d.cluster.tables, batch, im.overlap_scheduling)
    if host_s:
        release = im.engine_version or "(current release)"
        notes.append(
            f"{engine} {release}: {host_s * 1e3:.3g} ms of host work per iteration at {batch} sequences (scheduler, "
            f"input preparation, output processing) {'hidden behind' if overlapped else 'added to'} every step "
            "(engines.yaml host_step_by_version)"
        )


def _estimate_of(
    d: _Deployment,
    a: _Answer,
    static: bool,
    pre: StepBreakdown,
    dec: StepBreakdown,
    spec: float | None,
    notes: list[str],
) -> InferenceEstimate:
    """The estimate of deployment ``d`` at load point ``a`` (every replica alike)."""
    cluster, im, wl, engine, out = d.cluster, d.im, d.wl, d.engine, d.wl.output_tokens
    cap, replicas = d.cap, d.replicas
    return InferenceEstimate(
        accelerator=cluster.accelerator.id,
        count=cluster.count,
        tp=im.tp,
        pp=im.pp,
        replicas=replicas,
        weight_precision=wl.weight_precision,
        kv_precision=wl.kv_precision or "bf16",
        engine=engine,
        batch_seqs=a.batch,
        batching="static" if static else "continuous",
        load=a.load,
        fits=a.fits,
        memory_per_accelerator={
            "weights_bytes": cap.weights_bytes,
            "kv_cache_bytes": cap.kv_cache_bytes,
            "activations_bytes": cap.activation_peak_bytes,
            "runtime_reserve_bytes": cap.reserve_bytes,
            "capacity_bytes": cluster.accelerator.memory_bytes,
            "runtime_visible_bytes": cluster.accelerator.runtime_memory_bytes,
        },
        kv_capacity_tokens=cap.kv_capacity_tokens,
        max_concurrent_seqs=d.max_seqs,
        ttft_s=a.ttft_s,
        tpot_s=a.tpot_s,
        output_tokens_per_s=a.out_tokens_per_s_per_replica * replicas,
        output_tokens_per_s_per_user=1.0 / a.tpot_s,
        requests_per_s=a.out_tokens_per_s_per_replica * replicas / out,
        prefill_bound=pre.bound,
        decode_bound=dec.bound,
        speculative_tokens_per_step=spec,
        notes=tuple(notes),
        requests_in_flight=a.tails.in_flight if a.tails is not None else float(a.batch),
        ttft_percentiles_s=a.tails.ttft if a.tails is not None else None,
        tpot_percentiles_s=a.tails.tpot if a.tails is not None else None,
        # a static batch prefills every prompt before it decodes: only the KV cache and max_num_seqs bound it
        saturated_batch_seqs=a.rep.max_in_flight if a.rep is not None else min(d.max_seqs, d.engine_cap or d.max_seqs),
        saturated_requests_per_s=a.rep.saturation_rate_per_s() * replicas if a.rep is not None else None,
    )


def estimate_with_replica(
    model: ModelArch,
    cluster: ClusterSpec,
    wl: ServingWorkload,
    engine: str | None = None,
    cap_batch: bool = True,
    prefill_budget_tokens: int | None = None,
    attention_dp: bool = False,
    kv_free_frac: float | None = None,
    usage: Usage | None = None,
    max_num_seqs: int | None = None,
    grid: bool = False,
) -> tuple[InferenceEstimate, LoadedReplica | None]:
    """One deployment: memory, KV capacity, TTFT, TPOT and throughput, and (continuous batching) the model of a
    loaded replica that gave them.

    * ``batch: max`` or a request rate: the saturated steady state of continuous batching — as many
      sequences as the KV cache holds (vLLM: at the average context; TensorRT-LLM's no-evict scheduler: at
      the full context), capped by the engine's max_num_seqs and by the per-step token budget
      (B·(1 + in/out) ≤ max_num_batched_tokens, since B/out prompts must be prefilled per step).
    * ``concurrency: N`` (closed loop) and ``users``: the same steady state with N sequences.
    * ``batch: N``: a static batch — all N prompts prefilled (chunked), then out − 1 decode steps.

    The step budget and sequence cap are, first found: the arguments, ``inference.simulation.scheduler``,
    the engine's defaults for the device and ``usage`` (:func:`aiinfra.planning.engine_profile.scheduler_defaults`;
    None = server when the workload has a rate, concurrency, users or arrivals, else offline).
    ``engine`` None = ``wl.engine``. Under a load (a rate, or users who think) the requests in flight, the
    throughput and the TTFT / TPOT percentiles come from the loaded-replica model (:mod:`aiinfra.planning.loaded`);
    ``grid`` prices its steady states on a grid of batches (faster, for searches).
    """
    engine = engine or wl.engine
    notes: list[str] = []
    d = _deployment(
        model,
        cluster,
        wl,
        engine,
        cap_batch,
        prefill_budget_tokens,
        attention_dp,
        kv_free_frac,
        usage,
        max_num_seqs,
        notes,
    )
    im, inp, out = d.im, wl.input_tokens, wl.output_tokens
    batch, fits, static = _first_batch(d, notes)
    _, ttft_one = prefill_time_s(im, 1, inp, d.budget)
    # behind an API server every request's first token also pays the serving path (HTTP, tokenisation, hand-off,
    # streaming): the engine profile's measured cost, outside the engine's iterations
    req_s = cluster.tables.engine(engine).request_overhead_s if (usage or workload_usage(wl)) == "server" else 0.0
    if req_s:
        notes.append(f"TTFT includes {req_s * 1e3:.3g} ms of {engine}'s serving path per request (engines.yaml)")
    pre = im.breakdown(StepBatch.prefill(min(d.budget, inp)))
    _eager_note(d, pre, min(d.budget, inp), notes)
    if static:
        a = _static_answer(d, batch, fits, ttft_one, req_s)
        dec = im.breakdown(StepBatch.decode(a.batch, inp + out // 2))
    else:
        a = _continuous_answer(d, batch, fits, ttft_one, req_s, grid, notes)
        dec = im.breakdown(StepBatch.decode(a.batch, inp + out // 2))
    spec = None
    if wl.speculative is not None:
        spec = a.tok_per_step
        notes.append(f"speculative decoding: {a.tok_per_step:.2f} tokens per target step (Leviathan et al. 2023)")
    if not a.fits:
        held_text = f"{a.tails.in_flight:.0f} requests in flight" if a.tails is not None else f"batch {a.batch}"
        notes.append(f"{held_text} exceed the {d.max_seqs} sequences the KV cache holds per replica")
    return _estimate_of(d, a, static, pre, dec, spec, notes), a.rep


def estimate_inference(scenario: Scenario) -> InferenceEstimate:
    """Serving estimate of the scenario's inference workload; SpecError when it has none or the prompt plus output
    exceeds the model's context."""
    wl = scenario.inference
    if wl is None:
        raise SpecError(
            "inference", None, "the scenario has no inference section", "add inference: {input_tokens, ...}"
        )
    if scenario.model.max_seq_len and wl.input_tokens + wl.output_tokens > scenario.model.max_seq_len:
        raise SpecError(
            "inference.input_tokens",
            wl.input_tokens,
            f"input + output = {wl.input_tokens + wl.output_tokens} exceeds the model's context "
            f"{scenario.model.max_seq_len}",
            "shorten the request",
        )
    return estimate(scenario.model, scenario.cluster, wl)
