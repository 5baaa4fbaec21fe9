"""One model replica: continuous batching (Orca/vLLM iteration-level scheduling) or static batching.

Work per iteration is described by a StepBatch and priced by the StepTimeModel (the seam shared with
the analytic planner). Decoding progress is tracked per iteration in aggregate: each running sequence's
finishing iteration is known when it starts decoding, so an iteration costs O(1) plus O(log n) per
request event, never a loop over all running sequences.

Paged KV cache (Kwon et al. 2023, vLLM): usage is counted in tokens plus the mean internal fragmentation
of half a block per sequence; when an iteration would exceed the blocks, the newest decoding sequence is
preempted (recompute: its prompt and generated tokens are prefilled again later; swap: its KV returns
without recomputation).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from aiinfra.analytic.step_time import StepBatch, StepTimeModel


@dataclass(slots=True)
class Seq:
    rid: int
    prompt: int
    """Tokens to prefill (grows on recompute preemption)."""
    out_total: int
    arrival_s: float
    priority: int = 0
    prefilled: int = 0
    generated: int = 0
    """Output tokens produced at the time the sequence (re)joined the decode set."""
    join_iter: int = 0
    ctx_join_tokens: float = 0.0
    """Tokens in its KV cache when it (re)joined the decode set."""
    recomputed: bool = False
    first_token_s: float = math.nan
    swapped: bool = False
    active: bool = True
    prefix_id: int = -1
    prefix_tokens: int = 0


@dataclass(frozen=True, slots=True)
class SchedulerLimits:
    static: bool
    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: bool
    preemption: str
    kv_capacity_tokens: int
    block_tokens: int
    tokens_per_step: float
    """Output tokens per decode step per sequence (1, or the speculative expectation)."""
    prefix_caching: bool = False


@dataclass
class Replica:
    idx: int
    model: StepTimeModel
    lim: SchedulerLimits
    waiting: list[tuple[int, float, int, Seq]] = field(default_factory=list)
    prefilling: list[Seq] = field(default_factory=list)
    decode: dict[int, Seq] = field(default_factory=dict)
    finish_heap: list[tuple[int, int]] = field(default_factory=list)
    iter_count: int = 0
    sum_ctx_tokens: float = 0.0
    busy: bool = False
    preemptions: int = 0
    prefix_hits: int = 0
    cached_prefixes: set[int] = field(default_factory=set)
    static_batch_open: bool = True
    # the iteration in flight
    chunks: list[tuple[Seq, int]] = field(default_factory=list)
    n_decode_in_step: int = 0
    step_s: float = 0.0
    _time_cache: dict[tuple[int, int, int, int], float] = field(default_factory=dict)

    # ---- bookkeeping
    def outstanding_tokens(self) -> int:
        w = sum(s.prompt - s.prefilled + s.out_total - s.generated for *_, s in self.waiting)
        p = sum(s.prompt - s.prefilled + s.out_total for s in self.prefilling)
        return w + p + len(self.decode) * 1

    def has_work(self) -> bool:
        return bool(self.waiting or self.prefilling or self.decode)

    def enqueue(self, seq: Seq) -> None:
        heapq.heappush(self.waiting, (seq.priority, seq.arrival_s, seq.rid, seq))

    def _ctx(self, seq: Seq) -> float:
        return seq.ctx_join_tokens + (self.iter_count - seq.join_iter) * self.lim.tokens_per_step

    def kv_tokens(self) -> float:
        held = self.sum_ctx_tokens + sum(s.prefilled for s in self.prefilling)
        n = len(self.decode) + len(self.prefilling)
        return held + n * (self.lim.block_tokens - 1) / 2.0

    def _time(self, batch: StepBatch) -> float:
        # memoise on a coarse key (the model is smooth): 64-token prefill buckets, and context buckets of
        # 256 tokens or ~1 % of the context, whichever is larger
        ctx = batch.decode_context_tokens
        shift = max(8, ctx.bit_length() - 7)
        key = (batch.prefill_tokens // 64, int(batch.prefill_attention_pairs) >> 16, batch.decode_seqs,
               (ctx >> shift) << 6 | shift)  # fmt: skip
        t = self._time_cache.get(key)
        if t is None:
            t = self.model.iteration_time_s(batch)
            self._time_cache[key] = t
        return t

    # ---- scheduling
    def _preempt_newest(self) -> None:
        rid = max(self.decode, key=lambda r: (self.decode[r].join_iter, r))
        seq = self.decode.pop(rid)
        seq.active = False
        ctx = self._ctx(seq)
        self.sum_ctx_tokens -= ctx
        produced = int(seq.generated + (self.iter_count - seq.join_iter) * self.lim.tokens_per_step)
        clone = Seq(rid=seq.rid, prompt=seq.prompt, out_total=seq.out_total, arrival_s=seq.arrival_s,
                    priority=seq.priority, generated=produced, first_token_s=seq.first_token_s)  # fmt: skip
        if self.lim.preemption == "recompute":
            clone.prompt = int(ctx)  # prompt and generated tokens are prefilled again
            clone.recomputed = True
        else:
            clone.prompt = int(ctx)
            clone.prefilled = clone.prompt  # KV comes back from host memory: nothing to prefill
            clone.recomputed = True
            clone.swapped = True
        self.preemptions += 1
        self.enqueue(clone)

    def plan(self) -> StepBatch | None:
        """Choose the next iteration's work (prefill chunks + decodes); None when idle."""
        lim = self.lim
        cap = lim.kv_capacity_tokens
        n_dec = len(self.decode)
        growth = n_dec * lim.tokens_per_step
        while self.decode and self.kv_tokens() + growth > cap:
            self._preempt_newest()
            n_dec = len(self.decode)
            growth = n_dec * lim.tokens_per_step
        chunks: list[tuple[Seq, int]] = []
        budget = lim.max_num_batched_tokens - n_dec if not lim.static else 1 << 60
        kv_free = cap - self.kv_tokens() - growth
        for seq in self.prefilling:
            take = min(seq.prompt - seq.prefilled, budget) if lim.chunked_prefill else seq.prompt - seq.prefilled
            if take <= 0 or take > budget:
                continue
            chunks.append((seq, take))
            budget -= take
            kv_free -= take
        admit = (not lim.static) or (not self.decode and not self.prefilling and self.static_batch_open)
        running = n_dec + len(self.prefilling)
        while admit and self.waiting and running < lim.max_num_seqs and budget > 0:
            seq = self.waiting[0][3]
            if lim.prefix_caching and seq.prefix_id in self.cached_prefixes and seq.prefilled == 0:
                seq.prefilled = min(seq.prefix_tokens, seq.prompt - 1)  # reuse the cached prefix's KV
                self.prefix_hits += 1
            need = seq.prompt - seq.prefilled
            reserve = need + lim.block_tokens  # its prompt plus one block to start decoding
            if reserve > kv_free and (running > 0 or reserve > cap):
                break
            take = need if (not lim.chunked_prefill or lim.static) else min(need, budget)
            if take > budget and running > 0:
                break
            heapq.heappop(self.waiting)
            self.prefilling.append(seq)
            running += 1
            if take > 0:
                chunks.append((seq, take))
                budget -= take
            else:
                chunks.append((seq, 0))  # swapped in: no prefill work
            kv_free -= reserve
        if not chunks and not self.decode:
            return None
        self.chunks = chunks
        self.n_decode_in_step = len(self.decode)
        pairs = sum(c * (s.prefilled + (c + 1) / 2.0) for s, c in chunks)
        return StepBatch(
            prefill_tokens=sum(c for _, c in chunks),
            prefill_attention_pairs=pairs,
            decode_seqs=len(self.decode),
            decode_context_tokens=int(self.sum_ctx_tokens),
        )

    def start(self, batch: StepBatch) -> float:
        self.busy = True
        self.step_s = self._time(batch)
        return self.step_s

    def finish_step(self, now_s: float, done: list[Seq]) -> None:
        """Apply the iteration that just ended at ``now_s``; finished sequences are appended to ``done``."""
        lim = self.lim
        self.busy = False
        self.iter_count += 1
        self.sum_ctx_tokens += self.n_decode_in_step * lim.tokens_per_step
        while self.finish_heap and self.finish_heap[0][0] <= self.iter_count:
            _, rid = heapq.heappop(self.finish_heap)
            seq = self.decode.get(rid)
            if seq is None or not seq.active:
                continue
            self.sum_ctx_tokens -= self._ctx(seq)
            del self.decode[rid]
            seq.active = False
            done.append(seq)
        for seq, take in self.chunks:
            seq.prefilled += take
            if seq.prefilled < seq.prompt:
                continue
            self.prefilling.remove(seq)
            if seq.prefix_id >= 0:
                self.cached_prefixes.add(seq.prefix_id)
            if math.isnan(seq.first_token_s):
                seq.first_token_s = now_s
                seq.generated = max(seq.generated, 1)
            if seq.generated >= seq.out_total:
                done.append(seq)
                continue
            seq.join_iter = self.iter_count
            seq.ctx_join_tokens = float(seq.prompt if seq.recomputed else seq.prompt + seq.generated)
            seq.active = True
            self.decode[seq.rid] = seq
            self.sum_ctx_tokens += seq.ctx_join_tokens
            steps = math.ceil((seq.out_total - seq.generated) / lim.tokens_per_step)
            heapq.heappush(self.finish_heap, (self.iter_count + steps, seq.rid))
        self.chunks = []
        if lim.static:
            self.static_batch_open = not (self.decode or self.prefilling)
