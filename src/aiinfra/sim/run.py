"""Build and run a simulation from a scenario (the entry point the CLI and the capacity search call).

This is the only module that wires the analytic StepTimeModel (aiinfra.analytic.inference.InferenceModel,
the same one ``aiinfra infer`` uses) and the analytic KV capacity (aiinfra.planning.inference.kv_capacity, vLLM's
allocator: blocks = ⌊(util·HBM − weights − activation peak − reserve) / (block · KV bytes per token)⌋)
into the kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch, StepTimeModel
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.planning.engine_profile import scheduler_defaults
from aiinfra.planning.inference import (
    held_tokens_per_request,
    kv_block_tokens,
    kv_capacity,
    model_for,
    overlaps_scheduling,
    reserves_full_context,
    speculative_tokens_per_step,
    through_api_server,
    workload_release,
)
from aiinfra.sim.arrivals import Requests, check_budget, interarrival_s, lengths, read_trace, stratified_uniforms
from aiinfra.sim.attention_dp import rank_limits
from aiinfra.sim.engine import Records, Simulation
from aiinfra.sim.metrics import SimSummary, summarise
from aiinfra.sim.replica import OutputReserve, SchedulerLimits
from aiinfra.specs.bounds import MAX_SIMULATED_REQUESTS
from aiinfra.specs.engine import EngineProfile, parse_version
from aiinfra.specs.files import beside_scenario
from aiinfra.specs.scenario import Scenario
from aiinfra.specs.serving_sim import SchedulerConfig, ServingTables, SimulationConfig
from aiinfra.specs.workload import ServingWorkload

SIM = "inference.simulation"
_BURST_FOLLOWERS_S = float(np.nextafter(0.0, 1.0))
"""When a burst's requests after the first reach the engine: an instant after the first (order only)."""


@dataclass(frozen=True, slots=True)
class SimResult:
    """A serving simulation's outcome: summary metrics, per-request records and the limits the replicas ran under."""

    summary: SimSummary
    records: Records
    limits: SchedulerLimits
    replicas: int
    notes: tuple[str, ...] = ()
    attention_dp_ranks: int = 1
    """Attention-DP ranks per replica (1: none); ``limits`` are the whole replica's, split evenly over them."""
    request_overhead_s: float = 0.0
    """The engine's serving-path cost per request, included in the summary's TTFT and e2e (sim/metrics.py)."""


def _trace_path(raw: str, scenario_path: str) -> str:
    """A relative trace path is read from the scenario file's folder (specs.files.beside_scenario, the rule a
    model's config path follows too)."""
    return beside_scenario(raw, scenario_path)


def _closed_arrivals(wl: ServingWorkload, n: int | None, seed: int) -> np.ndarray:
    """Arrival times of a closed loop's first requests (the rest follow completions): all at t = 0, or each user's
    first after an exponential think time, or spread over the arrival's ramp."""
    arrival = wl.arrival
    if n is None:
        raise SpecError(
            "inference.num_requests", None, "closed-loop runs need a request count", "set inference.num_requests"
        )
    arrivals = np.zeros(n)
    if wl.think_time_s and wl.concurrency:
        # users who think start thinking: each first request after an exponential think time (a thinking user's
        # residual think time is again exponential, so the run starts near the closed system's steady state
        # instead of every user's first request in one burst); a fifth seed stream, so the other streams' draws
        # stay as they were
        first = min(wl.concurrency, n)
        start_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(5)[4])
        arrivals[:first] = np.sort(start_rng.exponential(wl.think_time_s, first))
    elif arrival is not None and arrival.ramp_s and wl.concurrency:
        first = min(wl.concurrency, n)
        arrivals[:first] = np.arange(first) * (arrival.ramp_s / first)
    elif wl.concurrency and through_api_server(wl):
        # a burst reaches the engine one request at a time: the API server parses and tokenises the requests in
        # turn and hands each over as it is ready, and an idle engine steps at once with what it holds (SGLang
        # 0.5.6 Scheduler.event_loop_overlap drains recv_requests with zmq.NOBLOCK, then runs the next batch; vLLM
        # 0.11.0 EngineCore._process_input_queue blocks on the first request, drains the queue, then steps), so the
        # first request's iteration runs it alone and the rest queue behind it. Only that order is modelled: the
        # others arrive the smallest time after it (the hand-over spacing is not measured; results do not move
        # between 1 ns and 0.1 ms of spacing). An offline batch (the LLM class, no API server) is handed over whole
        first = min(wl.concurrency, n)
        arrivals[1:first] = _BURST_FOLLOWERS_S
    return arrivals


def _open_arrivals(wl: ServingWorkload, rate: float, arr_rng: np.random.Generator) -> np.ndarray:
    """Open-loop arrival times (the first at t = 0): ``num_requests`` of them, or every one in [0, duration_s)."""
    arrival = wl.arrival
    kind, cv = (arrival.kind, arrival.cv) if arrival else ("poisson", None)
    if wl.num_requests is not None:
        gaps = interarrival_s(arr_rng, kind, rate, wl.num_requests, cv)
        return np.asarray(np.cumsum(gaps) - gaps[0])
    if wl.duration_s is not None:
        expect = wl.duration_s * rate
        gaps = interarrival_s(arr_rng, kind, rate, int(expect + 10 * math.sqrt(expect) * (cv or 1) + 10), cv)
        arrivals = np.cumsum(gaps) - gaps[0]
        return np.asarray(arrivals[arrivals < wl.duration_s])
    raise SpecError(
        "inference.num_requests",
        None,
        "the simulation needs a length",
        "set inference.num_requests or inference.duration_s",
    )


def _generated(wl: ServingWorkload, sim: SimulationConfig, seed: int) -> Requests:
    """Generated requests: arrivals, prompt and output lengths from one SeedSequence child stream each."""
    arrival = wl.arrival
    rate = wl.request_rate_per_s
    closed = arrival is not None and arrival.kind == "concurrency"
    if not closed and rate is None:
        raise SpecError(
            "inference.request_rate_per_s",
            None,
            "open-loop arrivals need a rate",
            "set inference.request_rate_per_s, or arrival: {kind: concurrency}",
        )
    # spawn(4)'s first three children equal spawn(3)'s: adding the think-time stream moves no other draw
    arr_rng, in_rng, out_rng, think_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4))
    if closed:
        arrivals = _closed_arrivals(wl, wl.num_requests, seed)
    else:
        assert rate is not None
        arrivals = _open_arrivals(wl, rate, arr_rng)
    n = int(arrivals.size)
    inputs = lengths(in_rng, sim.input_lengths, wl.input_tokens, n, f"{SIM}.input_lengths")
    prefix_id, prefix_tokens = _warm_prefixes(inputs, sim.prefix_cached_requests or 0, sim.prefix_cached_modulo_tokens)
    return Requests(
        arrival_s=arrivals,
        input_tokens=inputs,
        output_tokens=lengths(out_rng, sim.output_lengths, wl.output_tokens, n, f"{SIM}.output_lengths"),
        priority=np.zeros(n, dtype=np.int64),
        prefix_id=prefix_id,
        prefix_tokens=prefix_tokens,
        think_s=-wl.think_time_s * np.log1p(-stratified_uniforms(think_rng, n)) if closed and wl.think_time_s else None,
    )


def _warm_prefixes(
    input_tokens: np.ndarray, cached_requests: int, modulo_tokens: int | None = None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The prefix groups of generated requests whose prompt is cached before the run: request i < k
    (``prefix_cached_requests``) is group i, its prefix its whole prompt (the replica reuses all but its last
    token); with ``prefix_cached_modulo_tokens`` K every request i is group i, its prefix the first
    ((L − 1) mod K) + 1 of its L tokens (an earlier run of the same seeded benchmark at nominal K); else none.
    (None, None) for a cold cache."""
    n = int(input_tokens.size)
    k = min(cached_requests, n)
    if k <= 0 and not modulo_tokens:
        return None, None
    ids = np.full(n, -1, dtype=np.int64)
    tokens = np.zeros(n, dtype=np.int64)
    if modulo_tokens:
        ids[:] = np.arange(n)
        tokens[:] = (input_tokens - 1) % modulo_tokens + 1
    if k > 0:
        ids[:k] = np.arange(k)
        tokens[:k] = input_tokens[:k]
    return ids, tokens


def _check_context(reqs: Requests, max_context: int) -> None:
    """An error naming the first request whose prompt + output exceeds the model's context."""
    total = reqs.input_tokens + reqs.output_tokens
    worst = int(np.argmax(total))
    if int(total[worst]) > max_context:
        raise SpecError(
            "inference.input_tokens",
            int(total[worst]),
            f"request {worst} needs {int(total[worst])} tokens of context (prompt "
            f"{int(reqs.input_tokens[worst])} + output {int(reqs.output_tokens[worst])}), more than "
            f"the model's max_seq_len {max_context}",
            "shorten the prompts or outputs",
        )


def make_requests(
    wl: ServingWorkload, sim: SimulationConfig, seed: int, max_context: int | None, scenario_path: str = ""
) -> Requests:
    """The request stream: a trace, or generated arrivals (one SeedSequence child stream each for arrival
    gaps, prompt lengths and output lengths, so changing one distribution leaves the others' draws alone)."""
    arrival = wl.arrival
    if arrival is not None and arrival.kind == "trace":
        if not arrival.path:
            raise SpecError(
                "inference.arrival.path", None, "a trace arrival needs a file", "set inference.arrival.path"
            )
        for name in ("prefix_cached_requests", "prefix_cached_modulo_tokens"):
            if getattr(sim, name):
                raise SpecError(
                    f"{SIM}.{name}",
                    getattr(sim, name),
                    "applies to generated requests; a trace states its shared prefixes in its prefix_id column",
                    f"remove {name}, or give the trace's cached prompts a prefix_id",
                )
        reqs = read_trace(_trace_path(arrival.path, scenario_path))
    else:
        reqs = _generated(wl, sim, seed)
    check_budget(reqs)
    if max_context is not None:
        _check_context(reqs, max_context)
    return reqs


def with_return_path(reqs: Requests, request_overhead_s: float) -> Requests:
    """A closed loop's requests as the engine sees them: a client sends its next request only once the previous
    answer's last chunk has reached it, and the request reaches the engine only after the API server's path
    (HTTP, chat template, tokenisation). Both halves are the serving path's cost per request
    (``EngineProfile.request_overhead_s``, measured as TTFT less the forward pass at one client), so between a
    request finishing in the engine and its client's next request arriving there lies that cost on top of any
    think time. The arrival then lands inside an engine step instead of on its boundary, and waits for the step
    (or, under an overlap scheduler, the one after it) like any other arrival."""
    if request_overhead_s <= 0.0:
        return reqs
    think = reqs.think_s if reqs.think_s is not None else np.zeros(len(reqs))
    return replace(reqs, think_s=think + request_overhead_s)


def limits_for(
    scenario: Scenario, wl: ServingWorkload, im: InferenceModel, role: str = "mixed", *, engine: EngineProfile
) -> SchedulerLimits:
    """The scheduler limits of one replica (``engine``: the profile of ``wl.engine``)."""
    sim = wl.simulation or SimulationConfig()
    sched = sim.scheduler or SchedulerConfig()
    # the engine's server defaults for this device (engines.yaml) unless the scenario sets them; a defaulted
    # max_num_seqs is capped at the step budget (vLLM's rule); the engine's KV allocator, block size and
    # reservation policy (vLLM: blocks as tokens arrive, preemption; TensorRT-LLM: whole context reserved)
    sd = scheduler_defaults(
        engine,
        scenario.cluster.accelerator,
        "server",
        release=workload_release(wl),
        max_model_len=scenario.model.max_seq_len,
        chunked_prefill=sched.chunked_prefill,
    )
    # an older release's own chunked-prefill default (vLLM V0: on only above 32K of context) unless the scenario
    # sets it (a scheduler block that sets only other fields, e.g. V0's multi-step scheduling, keeps the default)
    chunked = sched.chunked_prefill
    if chunked is None:
        chunked = sd.chunked_prefill if sd.chunked_prefill is not None else True
    block = kv_block_tokens(wl.engine, wl, scenario.cluster.tables)
    budget = sched.max_num_batched_tokens or sd.max_num_batched_tokens
    # the schedulers count context tokens: a windowed KV cache's slots are scaled at the mean held context, the one
    # the planner scales at
    held = held_tokens_per_request(wl.engine, scenario.cluster.tables, wl)
    seqs = sched.max_num_seqs or min(sd.max_num_seqs, budget)
    cap = kv_capacity(
        im, wl.gpu_memory_utilization, block, budget, wl.engine, held_context_tokens=held, max_num_seqs=seqs
    )
    if cap.kv_capacity_tokens <= 0:
        raise InfeasibleError(
            f"infeasible, because {scenario.model.id} leaves no KV-cache memory on "
            f"{scenario.cluster.accelerator.id} with tp={im.tp} pp={im.pp} (weights "
            f"{cap.weights_bytes / 1e9:.1f} GB per accelerator) — raise tp or lower the weight "
            "precision"
        )
    release = workload_release(wl)
    tps, slots = 1.0, 1
    if wl.speculative is not None:
        tps = speculative_tokens_per_step(wl.speculative.acceptance_rate, wl.speculative.num_draft_tokens)
        slots = wl.speculative.num_draft_tokens + 1
    swap_s = 0.0
    if sched.preemption == "swap":
        pcie = scenario.cluster.accelerator.pcie
        if pcie is None:
            raise SpecError(
                f"{SIM}.scheduler.preemption",
                "swap",
                f"the PCIe bandwidth of {scenario.cluster.accelerator.id} is not in the catalog, so swap "
                "time is unknown",
                "use preemption: recompute, or add pcie to the catalog row",
            )
        swap_s = im.kv_bytes_per_token_per_accelerator / pcie.bw_one_way_bytes_per_s
    return SchedulerLimits(
        static=sched.kind == "static",
        max_num_seqs=seqs,
        max_num_batched_tokens=budget,
        chunked_prefill=chunked,
        preemption=sched.preemption,
        kv_capacity_tokens=cap.context_capacity_tokens,
        block_tokens=block,
        tokens_per_step=tps,
        budget_tokens_per_decode=slots,
        prefix_caching=sched.prefix_caching or bool(sim.prefix_cached_requests or sim.prefix_cached_modulo_tokens),
        warm_prefix_groups=MAX_SIMULATED_REQUESTS
        if sim.prefix_cached_modulo_tokens
        else sim.prefix_cached_requests or 0,
        swap_s_per_token=swap_s,
        role=role,
        reserve_full_context=reserves_full_context(wl.engine, scenario.cluster.tables, wl),
        overlap_admission=overlaps_scheduling(engine, wl),
        scheduler_steps=sched.num_scheduler_steps,
        prefill_alone=chunked and engine.prefill_alone(parse_version(release) if release else None),
        whole_prompts_with_decodes=not chunked and engine.whole_prompts_with_decodes,
        output_reserve=_output_reserve(engine, release, role, im.kv_token_shards > 1),
    )


def _output_reserve(engine: EngineProfile, release: str | None, role: str, attention_dp: bool) -> OutputReserve | None:
    """The release's admission rule that holds KV back for the running requests' outputs (engines.yaml
    admission_reserve_by_version: SGLang's PrefillAdder), on a mixed replica, for its layout
    (:meth:`AdmissionReserve.for_layout`: SGLang multiplies schedule_conservativeness by 0.3 under attention DP)."""
    found = engine.admission_reserve(parse_version(release) if release else None)
    if found is None or role != "mixed":
        return None
    rule = found.for_layout(attention_dp)
    return OutputReserve(
        init_ratio=rule.init_ratio,
        floor_ratio=rule.floor_ratio,
        decay_per_step=rule.decay_per_step,
        clip_tokens=rule.clip_tokens,
        retract_decode_steps=rule.retract_decode_steps,
    )


class SpeculativeStep:
    """Prices an iteration with speculative decoding (Leviathan et al. 2023), as ``aiinfra infer`` does:
    each decoding sequence runs γ + 1 verification tokens through the target model in one pass that reads
    its context's KV once (:meth:`StepBatch.verify`), plus γ draft-model
    decode steps when a draft model is named (None: draft cost neglected, n-gram or MTP heads)."""

    def __init__(self, base: StepTimeModel, gamma: int, draft: StepTimeModel | None = None) -> None:
        self.base = base
        self.gamma = gamma
        self.draft = draft

    def iteration_time_s(self, batch: StepBatch) -> float:
        """Wall time (s) of the target model's verification pass, plus γ draft decode steps when a draft model is
        named."""
        t = self.base.iteration_time_s(batch.verify(self.gamma))  # each context's KV read once
        if self.draft is not None and batch.decode_seqs:
            decode_only = StepBatch(decode_seqs=batch.decode_seqs, decode_context_tokens=batch.decode_context_tokens)
            t += self.gamma * self.draft.iteration_time_s(decode_only)
        return t


def _step_model(wl: ServingWorkload, im: InferenceModel, tables: ServingTables) -> StepTimeModel:
    """The step-time model of a replica: ``im``, or with speculative decoding its verify steps and its draft's."""
    if wl.speculative is None:
        return im
    draft = None
    if wl.speculative.draft_model:
        dm = tables.draft_model
        assert dm is not None, "ServingTables.draft_model: the workload names a draft model"
        draft = im.draft(dm)
    return SpeculativeStep(im, wl.speculative.num_draft_tokens, draft)


def _kv_transfer_s_per_token(scenario: Scenario, im: InferenceModel, accelerators: int) -> float:
    """Each of a replica's accelerators sends its KV shard over its own link: KV bytes per token per
    accelerator / one-way bandwidth — scale-up when every replica fits one scale-up domain, else scale-out."""
    cl = scenario.cluster
    within = accelerators <= cl.scale_up_domain
    bw = cl.scale_up_bw_one_way_bytes_per_s if within else cl.scale_out_bw_one_way_bytes_per_s
    if bw is None:
        raise SpecError(
            f"{SIM}.disaggregation",
            None,
            f"the {'scale-up' if within else 'scale-out'} bandwidth of this cluster is unknown, so KV "
            "transfer time is unknown",
            "set hardware.scale_out (and nics_per_node)",
        )
    return im.kv_bytes_per_token_per_accelerator / bw


def _replicas(scenario: Scenario, sim: SimulationConfig, wl: ServingWorkload, im: InferenceModel) -> int:
    """Replicas the run serves with (the disaggregated pools' sum, the simulation's or plan's count, else as many as
    the hardware holds); an error when the hardware holds fewer."""
    tp, pp = im.tp, im.pp
    dis = sim.disaggregation
    if dis is not None:
        replicas = dis.prefill_replicas + dis.decode_replicas
    else:
        replicas = sim.replicas or (wl.plan.replicas if wl.plan else None) or scenario.cluster.count // (tp * pp)
    if replicas < 1 or replicas * tp * pp > scenario.cluster.count:
        raise SpecError(
            f"{SIM}.replicas",
            replicas,
            f"{max(replicas, 1)} replicas × tp·pp = {tp * pp} need {max(replicas, 1) * tp * pp} "
            f"accelerators, the hardware has {scenario.cluster.count}",
            "raise hardware.count or use fewer replicas",
        )
    return replicas


def _check_longest_fits(reqs: Requests, lim: SchedulerLimits, dp: int) -> SchedulerLimits:
    """The limits of the unit that holds a sequence's KV cache (the replica, or one attention-DP rank); an error
    when the longest request cannot fit there."""
    longest = int((reqs.input_tokens + reqs.output_tokens).max())
    holder = lim if dp == 1 else rank_limits(lim, dp)
    if longest + lim.block_tokens + lim.budget_tokens_per_decode > holder.kv_capacity_tokens:
        where, fix = "a replica", "raise tp or shorten requests"
        if dp > 1:
            where = f"an attention-DP rank (1/{dp} of the replica)"
            fix = "shorten requests, or set inference.plan.attention_dp: false (the tp ranks then share each sequence)"
        raise InfeasibleError(
            f"infeasible, because a request needs {longest:,} tokens of KV cache and {where} "
            f"holds {holder.kv_capacity_tokens:,} — {fix}"
        )
    return holder


def _closed_clients(wl: ServingWorkload) -> int | None:
    """The closed loop's client count (None for open-loop arrivals)."""
    if wl.arrival is None or wl.arrival.kind != "concurrency":
        return None
    if not wl.concurrency:
        raise SpecError(
            "inference.concurrency", None, "closed-loop arrivals need a client count", "set inference.concurrency"
        )
    return wl.concurrency


def _engine(
    scenario: Scenario,
    im: InferenceModel,
    sim: SimulationConfig,
    model: StepTimeModel,
    lim: SchedulerLimits,
    replicas: int,
    notes: list[str],
    tables: ServingTables,
) -> Simulation:
    """The simulated fleet: ``replicas`` mixed replicas, or the prefill and decode pools of a disaggregated one with
    the KV transfer between them (noted)."""
    dp = im.kv_token_shards
    dis = sim.disaggregation
    dispatch = tables.engine.attention_dp_dispatch
    if dis is None:
        return Simulation(model, lim, replicas, sim.router, attention_dp_ranks=dp, attention_dp_dispatch=dispatch)
    xfer = _kv_transfer_s_per_token(scenario, im, replicas * im.tp * im.pp)
    notes.append(
        f"disaggregated: {dis.prefill_replicas} prefill + {dis.decode_replicas} decode replicas, "
        f"KV transfer {xfer * 1e9:.3g} ns per token"
    )
    return Simulation(
        model,
        lim,
        dis.prefill_replicas,
        sim.router,
        replace(lim, role="decode"),
        dis.decode_replicas,
        xfer,
        attention_dp_ranks=dp,
        attention_dp_dispatch=dispatch,
    )


def simulate(
    scenario: Scenario,
    seed: int = 0,
    step_model: StepTimeModel | None = None,
    rate_override: float | None = None,
    *,
    tables: ServingTables,
) -> SimResult:
    """Simulate the scenario's serving workload; ``step_model`` replaces the analytic one (tests); ``tables``: the
    catalog's engine profile and draft model of the workload (catalog.resolve.serving_tables)."""
    wl = scenario.inference
    if wl is None:
        raise SpecError("inference", None, "the scenario has no inference section", "add inference: {...}")
    if rate_override is not None:
        wl = replace(wl, request_rate_per_s=rate_override)
    im = model_for(scenario.model, scenario.cluster, wl)
    dp = im.kv_token_shards  # attention-DP ranks: each caches its own sequences' tokens
    sim = wl.simulation or SimulationConfig()
    replicas = _replicas(scenario, sim, wl, im)
    notes: list[str] = []
    lim = limits_for(scenario, wl, im, "prefill" if sim.disaggregation else "mixed", engine=tables.engine)
    model = step_model or _step_model(wl, im, tables)
    reqs = make_requests(wl, sim, seed, scenario.model.max_seq_len, scenario.path)
    holder = _check_longest_fits(reqs, lim, dp)
    closed = _closed_clients(wl)
    overhead_s = tables.engine.request_overhead_s
    if closed:
        reqs = with_return_path(reqs, overhead_s)
    if dp > 1:
        notes.append(
            f"attention data parallelism: {dp} ranks per replica step together (an iteration lasts as long "
            f"as its busiest rank), each with {holder.kv_capacity_tokens:,} KV tokens, "
            f"{holder.max_num_seqs} sequences and {holder.max_num_batched_tokens} batched tokens; requests "
            + (
                "go to the ranks in turn as they arrive (SGLang's round robin)"
                if tables.engine.attention_dp_dispatch == "round_robin"
                else "go to the rank with the fewest active prompt tokens (TensorRT-LLM)"
            )
        )
    rec = _engine(scenario, im, sim, model, lim, replicas, notes, tables).run(reqs, closed)
    sched = sim.scheduler
    if sched is None or sched.max_num_batched_tokens is None or sched.max_num_seqs is None:
        sd = scheduler_defaults(
            tables.engine,
            scenario.cluster.accelerator,
            "server",
            release=workload_release(wl),
            max_model_len=scenario.model.max_seq_len,
        )
        notes.append(
            f"scheduler: max_num_batched_tokens {lim.max_num_batched_tokens}, max_num_seqs {lim.max_num_seqs} "
            f"(unset values from the {sd.basis})"
        )
    return SimResult(
        summary=summarise(rec, wl.slo, overhead_s),
        records=rec,
        limits=lim,
        replicas=replicas,
        notes=tuple(notes),
        attention_dp_ranks=dp,
        request_overhead_s=overhead_s,
    )
