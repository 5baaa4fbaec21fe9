"""One model replica: continuous batching (Orca/vLLM iteration-level scheduling) or static batching.

Work per iteration is described by a StepBatch and priced by the StepTimeModel (the seam shared with
the analytic planner). Decoding progress is tracked in aggregate: all decoding sequences advance together,
so each one's finishing decode step is known when it joins the decode set; an iteration costs O(1) plus
O(log n) per request event, never a loop over the running sequences.

Scheduling follows vLLM (Kwon et al. SOSP'23; vLLM v1 ``Scheduler.schedule``):

* token budget per iteration = ``max_num_batched_tokens``; decoding sequences take one token each
  (γ + 1 with speculative decoding), prompt chunks fill the rest (chunked prefill, Sarathi-Serve,
  Agrawal et al. OSDI'24); at most ``max_num_seqs`` running sequences;
* without chunked prefill an iteration that admits prompts runs them alone (vLLM v0's default scheduler
  prioritises prefills; decodes wait one iteration — the "generation stall" Sarathi-Serve removes);
* waiting requests are served by (priority, arrival): a lower priority value is served first (vLLM's
  ``--scheduling-policy priority``); the head of the queue blocks when its KV does not fit (FCFS);
* paged KV cache: a prompt's blocks are reserved when it is admitted; usage is counted in tokens plus
  the mean internal fragmentation of half a block per sequence (Kwon et al. 2023 §4.2: waste is confined
  to a sequence's last block); when decoding would exceed the blocks, the running sequence with the
  largest (priority, arrival) is preempted — ``recompute`` drops its KV and prefills prompt + output
  again later, ``swap`` copies the KV to host memory over PCIe and back (vLLM v0 ``PreemptionMode``);
* or, for an engine that reserves the whole context (TensorRT-LLM's default capacity policy
  GUARANTEED_NO_EVICT), a request is admitted only when the blocks of its prompt + output fit, keeps them
  until it finishes, and nothing is preempted;
* or, for an engine that admits a prompt only when the cache also holds the running requests' expected growth
  (SGLang's ``PrefillAdder``: :class:`OutputReserve`), a new prompt waits until the free KV, less each running
  request's remaining output × a decaying ratio, holds its prompt and its own whole output;
* static batching (the pre-Orca baseline): an idle replica takes up to ``max_num_seqs`` waiting requests,
  prefills them together, and admits nothing new until the whole batch has finished;
* an overlap scheduler (SGLang; TensorRT-LLM's PyTorch executor) plans iteration n + 1 while iteration n runs, so a
  request arriving during an iteration is admitted to the one after the next (an idle replica admits at once);
* multi-step scheduling (vLLM V0 ``--num-scheduler-steps``, vllm#7000) runs that many decode-only iterations per
  scheduler call and admits nothing in between; an iteration with prompt tokens runs alone.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Protocol

from aiinfra.analytic.step_time import StepBatch, StepTimeModel


@dataclass(slots=True, eq=False)
class Seq:
    """A request's state on a replica (a preempted request re-enters as a fresh Seq)."""

    rid: int
    prompt_tokens: int
    """Tokens to prefill on this admission (the input; prompt + output so far after a recompute)."""
    output_tokens: int
    """Output tokens the request produces in total."""
    arrival_s: float
    priority: int = 0
    prefilled_tokens: int = 0
    generated_tokens: int = 0
    """Output tokens produced when it (re)joined the decode set."""
    join_step: int = 0
    """The replica's decode-step counter when it joined the decode set."""
    join_id: int = -1
    """Which join of the replica this is (a finish-heap entry from an earlier, preempted join is stale)."""
    ctx_join_tokens: float = 0.0
    """Context (KV entries read) at its first decode step after joining."""
    first_token_s: float = math.nan
    swapped_ctx_tokens: float = 0.0
    """> 0: its KV (this many tokens) waits in host memory (swap) or arrives from a prefill replica."""
    via_network: bool = False
    """Its KV came from a prefill replica (disaggregation), not from this replica's host memory."""
    kv_reserved_tokens: float = 0.0
    """KV slots reserved for its whole context at admission (engines that reserve the full context)."""
    active: bool = True
    prefix_id: int = -1
    prefix_tokens: int = 0

    @property
    def remaining_tokens(self) -> int:
        """Tokens still to compute: the prompt not yet prefilled plus the outputs not yet generated."""
        return self.prompt_tokens - self.prefilled_tokens + self.output_tokens - self.generated_tokens


@dataclass(frozen=True, kw_only=True, slots=True)
class OutputReserve:
    """SGLang's admission rule (``managers/schedule_policy.py`` PrefillAdder, read in its 0.3.0 - 0.5.7 wheels;
    catalog/data/engines.yaml ``admission_reserve_by_version``). A waiting request is admitted only when
    ``its prompt left + min(its outputs left, clip) < free KV - Σ_decoding min(outputs left, clip) × ratio
    - Σ_prefilling and admitted this iteration (prompt + min(outputs left, clip))``; the ratio starts at
    ``init_ratio``, drops by ``decay_per_step`` every decode step down to ``floor_ratio``, returns to ``init_ratio``
    when the replica idles, and after a retraction (preemption) becomes min(1, (Σ outputs decoded +
    ``retract_decode_steps`` × decoding) / (Σ outputs requested + 1)). A request's requested outputs are its output
    tokens (a benchmark client sets max_tokens to the output length)."""

    init_ratio: float
    floor_ratio: float
    decay_per_step: float
    clip_tokens: int
    retract_decode_steps: int


@dataclass(frozen=True, kw_only=True, slots=True)
class SchedulerLimits:
    """A replica's scheduler settings and KV capacity (resolved from the scenario by sim.run)."""

    static: bool
    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: bool
    preemption: str
    kv_capacity_tokens: int
    block_tokens: int
    tokens_per_step: float
    """Output tokens per decode step per sequence (1, or the speculative expectation)."""
    budget_tokens_per_decode: int = 1
    """Token-budget slots a decoding sequence takes per iteration (γ + 1 with speculative decoding)."""
    prefix_caching: bool = False
    swap_s_per_token: float = 0.0
    """Host⇄device copy time of one token's KV (swap preemption): KV bytes per accelerator / PCIe bandwidth."""
    role: str = "mixed"
    """mixed | prefill | decode (prefill/decode disaggregation)."""
    scheduler_steps: int = 1
    """vLLM V0's multi-step scheduling: a scheduler call runs this many decode-only iterations, admitting nothing in
    between (vllm#7000; iterations with prompt tokens run one at a time), so an arrival waits for the call to end."""
    overlap_admission: bool = False
    """The engine plans iteration n + 1 while iteration n runs (an overlap scheduler: SGLang, TensorRT-LLM's PyTorch
    executor; engines.yaml overlap_scheduler): a request that arrives while an iteration runs is admitted to the one
    after the next. An idle replica admits at once."""
    prefill_alone: bool = False
    """With chunked prefill, an iteration that prefills prompt chunks still runs without the decodes, which wait for
    it (SGLang without --enable-mixed-chunk: ``Scheduler.get_next_batch_to_run`` runs a new prefill batch alone);
    the chunks then get the whole token budget. False: chunks and decodes share the iteration."""
    whole_prompts_with_decodes: bool = False
    """Without chunked prefill, an iteration that prefills whole prompts still carries the decodes, and the decodes
    take their slots of the token budget (TensorRT-LLM's in-flight batching: one forward of context and generation
    requests). False: a whole-prompt iteration runs alone (vLLM V0)."""
    reserve_full_context: bool = False
    """TensorRT-LLM's default capacity policy, GUARANTEED_NO_EVICT (catalog/data/engines.yaml kv_reservation
    full): a request is admitted only when the blocks of its whole prompt + output fit, they stay reserved
    until it finishes, and nothing is ever preempted. False: vLLM's paged allocation as tokens arrive."""
    output_reserve: OutputReserve | None = None
    """SGLang's admission rule: a new prompt also needs room for the running requests' expected outputs (None:
    only its own prompt must fit)."""
    warm_prefix_groups: int = 0
    """Prefix groups 0 … n − 1 are in the replica's prefix cache when the run starts (prompts the same server
    served before the run: SimulationConfig.prefix_cached_requests); used with ``prefix_caching``."""


class ServingReplica(Protocol):
    """What the event loop and the routers see of a replica: :class:`Replica`, or an attention-data-parallel
    group of them (:class:`aiinfra.sim.attention_dp.AttentionDpReplica`) that steps as one."""

    idx: int
    lim: SchedulerLimits
    busy: bool
    n_decode_in_step: int
    """Sequences decoded by the iteration in flight."""
    step_s: float

    @property
    def outstanding_tokens(self) -> float:
        """Prompt tokens still to prefill plus output tokens still to produce, of every request it holds (the
        least-outstanding-tokens router's key)."""

    @property
    def preemptions(self) -> int:
        """Sequences preempted so far (each recompute or swap counts once)."""

    @property
    def prefix_hits(self) -> int:
        """Admissions that reused a cached prompt prefix (prefix caching)."""

    def has_work(self) -> bool:
        """Whether any request is waiting, prefilling or decoding."""

    def running(self) -> int:
        """Sequences admitted: prefilling or decoding."""

    def queued(self) -> int:
        """Requests waiting for admission."""

    def kv_tokens(self) -> float:
        """KV cache in use, in tokens."""

    def enqueue(self, seq: Seq) -> None:
        """Add a request to the waiting queue (served by priority, then arrival)."""

    def plan(self) -> StepBatch | None:
        """Choose the next iteration's work; None when idle."""

    def start(self, batch: StepBatch) -> float:
        """Begin the planned iteration; returns its duration in seconds."""

    def finish_step(self, now_s: float, done: list[Seq], handoff: list[Seq]) -> None:
        """Apply the iteration that ended at ``now_s``: finished sequences to ``done``, prefilled ones leaving a prefill
        replica to ``handoff``."""


@dataclass(eq=False)
class Replica:
    """One replica's scheduler state: the waiting queue, the prefilling and decoding sequences, the KV cache in use (see
    the module docstring for the policy)."""

    idx: int
    model: StepTimeModel
    lim: SchedulerLimits
    time_cache: dict[tuple[int, ...], float] = field(default_factory=dict)
    """Memoised step times, shared by the replicas of one simulation."""
    waiting: list[tuple[int, float, int, Seq]] = field(default_factory=list)
    """Heap of (priority, arrival time in s, request id, sequence) not yet admitted."""
    prefilling: list[Seq] = field(default_factory=list)
    decode: dict[int, Seq] = field(default_factory=dict)
    """Decoding sequences by request id."""
    finish_heap: list[tuple[int, int, int]] = field(default_factory=list)
    """(finishing decode step, join id, request id)."""
    joins: int = 0
    """Joins of the decode set so far (the id of the latest join)."""
    iterations: int = 0
    """Iterations run so far."""
    decode_steps: int = 0
    """Iterations that decoded so far (every decoding sequence advances once per decode step)."""
    sum_ctx_tokens: float = 0.0
    """Σ context of the decoding sequences at the next decode step."""
    reserved_full_tokens: float = 0.0
    """Σ whole-context reservations of the admitted sequences (``reserve_full_context`` only)."""
    reserved_prompt_tokens: int = 0
    """Σ (prompt + 1) of admitted sequences still prefilling: their blocks, and the slot of the token their
    prefill samples, are reserved at admission."""
    outstanding_tokens: float = 0.0
    """Prompt tokens still to prefill + output tokens still to produce, of every request on this replica."""
    busy: bool = False
    preemptions: int = 0
    """Sequences preempted so far."""
    prefix_hits: int = 0
    """Admissions that reused a cached prompt prefix."""
    cached_prefixes: set[int] = field(default_factory=set)
    """Ids of the prompt prefixes whose KV this replica holds (prefix caching)."""
    # the iteration in flight
    chunks: list[tuple[Seq, int]] = field(default_factory=list)
    """Prompt chunks of the iteration in flight: (sequence, tokens prefilled)."""
    n_decode_in_step: int = 0
    step_s: float = 0.0
    extra_s: float = 0.0
    """Swap copies charged to the next iteration."""
    run_left: int = 0
    """Multi-step scheduling: decode-only iterations left in the current scheduler call."""
    admit_until_s: float = math.inf
    """Overlap scheduler: the next plan admits only requests that arrived by this time (the start of the iteration
    that just ended, when the engine planned the next one)."""
    token_ratio: float = math.nan
    """``lim.output_reserve``: the share of the running requests' remaining outputs held back from admission
    (SGLang's ``new_token_ratio``); NaN until the first plan."""

    # ---- bookkeeping
    def has_work(self) -> bool:
        """Whether any request is waiting, prefilling or decoding."""
        return bool(self.waiting or self.prefilling or self.decode)

    def running(self) -> int:
        """Sequences admitted: decoding plus prefilling."""
        return len(self.decode) + len(self.prefilling)

    def queued(self) -> int:
        """Requests waiting for admission."""
        return len(self.waiting)

    def enqueue(self, seq: Seq) -> None:
        """Add a request to the waiting heap, by (priority, arrival), and count its remaining tokens as outstanding."""
        heapq.heappush(self.waiting, (seq.priority, seq.arrival_s, seq.rid, seq))
        self.outstanding_tokens += seq.remaining_tokens

    def _ctx(self, seq: Seq) -> float:
        return seq.ctx_join_tokens + (self.decode_steps - seq.join_step) * self.lim.tokens_per_step

    def kv_tokens(self) -> float:
        """KV cache in use, in tokens: decoding contexts + reserved prompts + half a block per sequence; with
        whole-context reservation, the reserved blocks."""
        if self.lim.reserve_full_context:
            return self.reserved_full_tokens
        n = len(self.decode) + len(self.prefilling)
        return self.sum_ctx_tokens + self.reserved_prompt_tokens + n * (self.lim.block_tokens - 1) / 2.0

    def _time(self, batch: StepBatch) -> float:
        # memoise on a coarse key (the model is smooth): 64-token prefill buckets, buckets of ~1.5 % of the decoding
        # sequences above 64, and the decode context priced at grid points 1/16 of its size apart (at least 256
        # tokens) and interpolated linearly between them (the KV read is linear in the context)
        seqs = batch.decode_seqs
        s_shift = max(0, seqs.bit_length() - 6)
        base: tuple[int, ...] = (
            batch.prefill_tokens // 64,
            int(batch.prefill_attention_pairs) >> 16,
            (seqs >> s_shift) << 4 | s_shift,
        )
        rank = batch.busiest_rank
        if rank is not None:  # attention DP: the busiest rank's own work sets the per-rank layers' time
            base += (rank.prefill_tokens // 64, rank.decode_seqs, rank.decode_context_tokens >> 10)
        ctx = batch.decode_context_tokens
        shift = max(8, ctx.bit_length() - 4)
        lo = (ctx >> shift) << shift
        t_lo = self._at(base, lo, batch)
        if ctx == lo:
            return t_lo
        t_hi = self._at(base, lo + (1 << shift), batch)
        return t_lo + (t_hi - t_lo) * (ctx - lo) / (1 << shift)

    def _at(self, base: tuple[int, ...], ctx_tokens: int, batch: StepBatch) -> float:
        key = (*base, ctx_tokens)
        t = self.time_cache.get(key)
        if t is None:
            t = self.model.iteration_time_s(
                StepBatch(
                    batch.prefill_tokens,
                    batch.prefill_attention_pairs,
                    batch.decode_seqs,
                    ctx_tokens,
                    batch.decode_queries_per_seq,
                    batch.busiest_rank,
                    batch.prefill_seqs,
                )
            )
            self.time_cache[key] = t
        return t

    def _join_decode(self, seq: Seq, ctx_tokens: float) -> None:
        lim = self.lim
        seq.join_step = self.decode_steps
        self.joins += 1
        seq.join_id = self.joins
        seq.ctx_join_tokens = ctx_tokens
        seq.active = True
        self.decode[seq.rid] = seq
        self.sum_ctx_tokens += ctx_tokens
        steps = math.ceil((seq.output_tokens - seq.generated_tokens) / lim.tokens_per_step)
        heapq.heappush(self.finish_heap, (self.decode_steps + steps, seq.join_id, seq.rid))

    def _full_context_tokens(self, seq: Seq, ctx_tokens: float) -> float:
        """Token slots of the blocks holding ``ctx_tokens`` of context plus every output still to come — on a
        prefill replica (disaggregation) only the first token, which it samples before handing the KV off
        (TensorRT-LLM's disaggregated server sends the context request with max_tokens 1)."""
        block = self.lim.block_tokens
        to_come = 1 if self.lim.role == "prefill" else seq.output_tokens - seq.generated_tokens
        return math.ceil((ctx_tokens + to_come) / block) * block

    def _release(self, seq: Seq) -> None:
        self.reserved_full_tokens -= seq.kv_reserved_tokens
        seq.kv_reserved_tokens = 0.0

    def _leave_decode(self, seq: Seq) -> float:
        """Remove ``seq`` from the decode set (finished or preempted); returns its context."""
        self._release(seq)
        del self.decode[seq.rid]
        seq.active = False
        ctx = self._ctx(seq)
        self.sum_ctx_tokens -= ctx
        # the aggregate took tokens_per_step per decode step off the outstanding count; settle to what it
        # really produced, and drop what it will not produce here
        self.outstanding_tokens += (self.decode_steps - seq.join_step) * self.lim.tokens_per_step
        self.outstanding_tokens -= seq.output_tokens - seq.generated_tokens
        return ctx

    # ---- scheduling
    def _preempt_one(self) -> None:
        victim = max(self.decode.values(), key=lambda s: (s.priority, s.arrival_s, s.rid))
        steps = self.decode_steps - victim.join_step
        produced = min(victim.output_tokens - 1, int(victim.generated_tokens + steps * self.lim.tokens_per_step))
        ctx = self._leave_decode(victim)  # the remaining output is added back by enqueue
        clone = Seq(
            rid=victim.rid,
            prompt_tokens=int(ctx),
            output_tokens=victim.output_tokens,
            arrival_s=victim.arrival_s,
            priority=victim.priority,
            generated_tokens=produced,
            first_token_s=victim.first_token_s,
        )
        if self.lim.preemption == "swap":
            clone.prefilled_tokens = clone.prompt_tokens  # nothing to recompute
            clone.swapped_ctx_tokens = ctx
            self.extra_s += ctx * self.lim.swap_s_per_token  # swap out
        self.preemptions += 1
        self.enqueue(clone)

    def plan(self) -> StepBatch | None:
        """Choose the next iteration's work (prefill chunks + decodes); None when idle. With ``lim.output_reserve`` the
        ratio then moves as SGLang's scheduler moves it: back to its start when idle, down a step after a decode step
        without a retraction (a retraction set it in :meth:`_plan`)."""
        res = self.lim.output_reserve
        if res is None:
            return self._plan()
        if math.isnan(self.token_ratio):
            self.token_ratio = res.init_ratio
        before = self.preemptions
        batch = self._plan()
        if batch is None:
            self.token_ratio = res.init_ratio
        elif self.n_decode_in_step and self.preemptions == before:
            self.token_ratio = max(self.token_ratio - res.decay_per_step, res.floor_ratio)
        return batch

    def _retract_ratio(self, res: OutputReserve) -> float:
        """SGLang's ratio after a retraction (``ScheduleBatch.retract_decode``): (outputs decoded by the remaining
        decodes + retract_decode_steps each) / (their outputs requested + 1), at most 1."""
        tps = self.lim.tokens_per_step
        decoded = 0.0
        requested = 0
        for s in self.decode.values():
            decoded += s.generated_tokens + (self.decode_steps - s.join_step) * tps
            requested += s.output_tokens
        return min(1.0, (decoded + res.retract_decode_steps * len(self.decode)) / (requested + 1))

    def _running_output_reserve(self, res: OutputReserve) -> float:
        """KV tokens held back for the admitted requests' outputs: each decoding one's remaining outputs (clipped)
        × the ratio, each prefilling one's whole remaining outputs (clipped; SGLang's ``add_chunked_req`` charges
        them in full)."""
        tps = self.lim.tokens_per_step
        clip = res.clip_tokens
        held = 0.0
        for s in self.decode.values():
            left = s.output_tokens - s.generated_tokens - (self.decode_steps - s.join_step) * tps
            held += min(max(left, 0.0), clip)
        held *= self.token_ratio
        for s in self.prefilling:
            held += min(s.output_tokens - s.generated_tokens, clip)
        return held

    def _plan(self) -> StepBatch | None:
        lim = self.lim
        cap = lim.kv_capacity_tokens
        kv = self.kv_tokens()
        full = lim.reserve_full_context  # growth is inside the reservations: never preempts
        n_dec = len(self.decode)
        if not self.waiting and not self.prefilling and n_dec and (full or kv + n_dec * lim.tokens_per_step <= cap):
            # the common step of a busy replica: decodes only, nothing to admit or preempt (the path below gives
            # the same batch)
            self.chunks = []
            self.n_decode_in_step = n_dec
            self._count_run(decode_only=True)
            return StepBatch(0, 0.0, n_dec, int(self.sum_ctx_tokens))
        preempted = False
        while not full and self.decode and kv + len(self.decode) * lim.tokens_per_step > cap:
            self._preempt_one()
            kv = self.kv_tokens()
            preempted = True
        if preempted and lim.output_reserve is not None:
            self.token_ratio = self._retract_ratio(lim.output_reserve)
        n_dec = len(self.decode)
        growth = 0.0 if full else n_dec * lim.tokens_per_step
        chunks: list[tuple[Seq, int]] = []
        budget = self._continue_prefills(self._prefill_budget(n_dec), chunks)
        self._admit(chunks, budget, cap - kv - growth, n_dec + len(self.prefilling))
        if not chunks and not self.decode:
            return None
        return self._step_of(chunks)

    def _prefill_budget(self, n_dec: int) -> int:
        """Prompt tokens this iteration may prefill: the step budget less the decodes' share (chunked prefill), the
        whole budget (a prefill iteration runs without the decodes), or unbounded (a static batch)."""
        lim = self.lim
        if lim.static:
            return 1 << 60
        with_decodes = not lim.prefill_alone if lim.chunked_prefill else lim.whole_prompts_with_decodes
        if with_decodes:
            return lim.max_num_batched_tokens - n_dec * lim.budget_tokens_per_decode
        return lim.max_num_batched_tokens

    def _continue_prefills(self, budget: int, chunks: list[tuple[Seq, int]]) -> int:
        """The next chunk of each prompt already prefilling, within ``budget``; returns the budget left."""
        chunked = self.lim.chunked_prefill
        for seq in self.prefilling:
            left = seq.prompt_tokens - seq.prefilled_tokens
            take = min(left, budget) if chunked else left
            if 0 < take <= budget:
                chunks.append((seq, take))
                budget -= take
        return budget

    def _admit(self, chunks: list[tuple[Seq, int]], budget: int, kv_free: float, running: int) -> None:
        """Admit waiting requests in priority order while sequences, step budget and KV cache allow: swapped-out or
        handed-over sequences rejoin the decodes, new prompts start prefilling (their first chunk into ``chunks``)."""
        lim = self.lim
        admit = not lim.static or not (self.decode or self.prefilling)
        if self.run_left > 0 and self.decode and not self.prefilling:
            admit = False  # inside a multi-step call: the scheduler runs again when it ends
        # an overlap scheduler planned this iteration while the last one ran: what arrived since waits one more
        cutoff = self.admit_until_s if lim.overlap_admission and running > 0 else math.inf
        res = lim.output_reserve
        # SGLang's rem_total_tokens: the free KV less the admitted requests' expected outputs (inf: no such rule)
        rem_total = math.inf
        if res is not None and admit and self.waiting:
            rem_total = kv_free - self._running_output_reserve(res)
        while admit and self.waiting and running < lim.max_num_seqs and budget > 0:
            seq = self.waiting[0][3]
            if seq.arrival_s > cutoff:
                break
            if seq.swapped_ctx_tokens > 0:  # swap in (or KV arriving from a prefill replica): no prefill work
                need_kv = self._swap_in(seq, kv_free)
                if need_kv is None:
                    break
                running += 1
                kv_free -= need_kv
                continue
            got = self._start_prompt(seq, kv_free, budget, running, rem_total)
            if got is None:
                break
            take, reserve, charged = got
            running += 1
            chunks.append((seq, take))
            budget -= take
            kv_free -= reserve
            rem_total -= charged

    def _swap_in(self, seq: Seq, kv_free: float) -> float | None:
        """Bring back a sequence whose KV cache is swapped out (or arriving from a prefill replica) into the decodes;
        the KV tokens it takes, or None when it does not fit."""
        lim = self.lim
        full = lim.reserve_full_context
        need_kv = seq.swapped_ctx_tokens + lim.block_tokens + lim.tokens_per_step  # it decodes this step
        if full:
            need_kv = self._full_context_tokens(seq, seq.swapped_ctx_tokens)
        if need_kv > kv_free:
            return None
        heapq.heappop(self.waiting)
        if full:
            seq.kv_reserved_tokens = need_kv
            self.reserved_full_tokens += need_kv
        if not seq.via_network:
            self.extra_s += seq.swapped_ctx_tokens * lim.swap_s_per_token
        self._join_decode(seq, seq.swapped_ctx_tokens)
        seq.swapped_ctx_tokens = 0.0
        return need_kv

    def _start_prompt(
        self, seq: Seq, kv_free: float, budget: int, running: int, rem_total: float = math.inf
    ) -> tuple[int, float, float] | None:
        """Start prefilling a waiting prompt (reusing a cached prefix): (its first chunk's tokens, the KV tokens
        reserved, the tokens it takes off ``rem_total``), or None when its reservation or first chunk does not fit,
        or (``lim.output_reserve``) its prompt left plus its outputs left reach ``rem_total``."""
        lim = self.lim
        full = lim.reserve_full_context
        if (
            lim.prefix_caching
            and seq.prefilled_tokens == 0
            and (seq.prefix_id in self.cached_prefixes or 0 <= seq.prefix_id < lim.warm_prefix_groups)
        ):
            seq.prefilled_tokens = min(seq.prefix_tokens, seq.prompt_tokens - 1)  # reuse the cached prefix
            self.outstanding_tokens -= seq.prefilled_tokens
            self.prefix_hits += 1
        need = seq.prompt_tokens - seq.prefilled_tokens
        # its prompt plus one block to start decoding, or (no-evict) its whole context
        reserve = self._full_context_tokens(seq, seq.prompt_tokens) if full else seq.prompt_tokens + lim.block_tokens
        if reserve > kv_free:
            return None
        charged = 0.0
        if lim.output_reserve is not None:  # PrefillAdder.add_one_req: NO_TOKEN when total_tokens >= rem_total_tokens
            charged = need + min(seq.output_tokens - seq.generated_tokens, lim.output_reserve.clip_tokens)
            if charged >= rem_total:
                return None
        take = min(need, budget) if lim.chunked_prefill and not lim.static else need
        if take > budget and running > 0:
            return None
        heapq.heappop(self.waiting)
        self.prefilling.append(seq)
        self.reserved_prompt_tokens += seq.prompt_tokens + 1  # + the slot of its first decode token
        if full:
            seq.kv_reserved_tokens = reserve
            self.reserved_full_tokens += reserve
        if lim.output_reserve is not None and take < need:
            charged = float(take)  # a truncated first chunk charges only itself (_update_prefill_budget)
        return take, reserve, charged

    def _step_of(self, chunks: list[tuple[Seq, int]]) -> StepBatch:
        """The iteration's batch: the chunks planned and (unless a prefill iteration runs alone) the decodes."""
        lim = self.lim
        self.chunks = chunks
        alone = lim.prefill_alone if lim.chunked_prefill else not lim.whole_prompts_with_decodes
        prefill_only = bool(chunks) and alone and not lim.static
        self.n_decode_in_step = 0 if prefill_only else len(self.decode)
        self._count_run(decode_only=not chunks)
        pre, pairs = 0, 0.0
        for s, c in chunks:  # added in order (sum() of floats compensates from Python 3.12; the fused loop adds)
            pre += c
            pairs += c * (s.prefilled_tokens + (c + 1) / 2.0)
        return StepBatch(
            prefill_tokens=pre,
            prefill_attention_pairs=pairs,
            decode_seqs=self.n_decode_in_step,
            decode_context_tokens=int(self.sum_ctx_tokens) if self.n_decode_in_step else 0,
            prefill_seqs=len(chunks),
        )

    def _count_run(self, decode_only: bool) -> None:
        """Multi-step scheduling: a decode-only iteration opens a scheduler call of ``scheduler_steps`` iterations or
        continues one; an iteration with prompt tokens runs alone."""
        steps = self.lim.scheduler_steps
        if steps > 1:
            self.run_left = (self.run_left - 1 if self.run_left > 0 else steps - 1) if decode_only else 0

    def start(self, batch: StepBatch) -> float:
        """Begin the planned iteration; returns its duration (step time + swap copies)."""
        self.busy = True
        self.step_s = self._time(batch) + self.extra_s
        self.extra_s = 0.0
        return self.step_s

    def finish_step(self, now_s: float, done: list[Seq], handoff: list[Seq]) -> None:
        """Apply the iteration that just ended at ``now_s``. Finished sequences go to ``done``; on a prefill
        replica, sequences whose prompt is complete go to ``handoff`` (their KV moves to a decode replica)."""
        lim = self.lim
        self.busy = False
        self.iterations += 1
        if lim.overlap_admission:
            self.admit_until_s = now_s - self.step_s
        if self.n_decode_in_step:
            self.decode_steps += 1
            self.sum_ctx_tokens += self.n_decode_in_step * lim.tokens_per_step
            self.outstanding_tokens -= self.n_decode_in_step * lim.tokens_per_step
            while self.finish_heap and self.finish_heap[0][0] <= self.decode_steps:
                _, join_id, rid = heapq.heappop(self.finish_heap)
                seq = self.decode.get(rid)
                if seq is None or seq.join_id != join_id:
                    continue  # preempted since
                self._leave_decode(seq)
                done.append(seq)
        for seq, take in self.chunks:
            seq.prefilled_tokens += take
            self.outstanding_tokens -= take
            if seq.prefilled_tokens < seq.prompt_tokens:
                continue
            self.prefilling.remove(seq)
            self.reserved_prompt_tokens -= seq.prompt_tokens + 1
            if seq.prefix_id >= 0:
                self.cached_prefixes.add(seq.prefix_id)
            if math.isnan(seq.first_token_s):
                seq.first_token_s = now_s
            seq.generated_tokens += 1  # the prefill (or the recompute of prompt + output) samples a token
            self.outstanding_tokens -= 1
            if seq.generated_tokens >= seq.output_tokens:
                self._release(seq)
                done.append(seq)
            elif lim.role == "prefill":
                self.outstanding_tokens -= seq.output_tokens - seq.generated_tokens
                self._release(seq)
                handoff.append(seq)
            else:
                self._join_decode(seq, seq.prompt_tokens + 1.0)
        self.chunks = []
