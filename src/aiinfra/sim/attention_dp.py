"""A replica under attention data parallelism: ``ranks`` schedulers that step together.

With attention DP (TensorRT-LLM ``enable_attention_dp``; SGLang ``--enable-dp-attention``; vLLM DP attention)
each of a replica's ranks runs attention for its own sequences over its own KV cache, and every MoE layer
exchanges tokens among all ranks (an all-gather before the experts, a reduce-scatter after them), so the
ranks advance in lock-step and an iteration lasts as long as its busiest rank (TensorRT-LLM tech blog 10,
"ADP Balance Strategy": the iteration time is max over ranks of the rank's time).

* Each rank is a :class:`~aiinfra.sim.replica.Replica` with 1/``ranks`` of the replica's limits: its own KV
  blocks (the analytic KV capacity is ``ranks`` × one rank's blocks, InferenceModel.kv_token_shards), and
  the scenario's ``max_num_seqs`` and ``max_num_batched_tokens`` split evenly — they describe the whole
  replica, as ``aiinfra infer`` reads them, and SGLang divides them the same way under DP attention
  (``server_args``: ``chunked_prefill_size //= dp_size``; max running requests per worker
  = ``max_running_requests // dp_size``).
* Dispatch follows TensorRT-LLM's PyTorch executor (``ExecutorRequestQueue._schedule_attention_dp_requests``
  and ``_balance_requests_across_ranks``, tensorrt_llm/_torch/pyexecutor/executor_request_queue.py): new
  requests wait in one queue; before each iteration at most ranks × max_num_seqs − active requests are
  taken from it, sorted longest prompt first, and each goes to the rank with the fewest active prompt
  tokens (ties: fewest active requests, lowest rank) among ranks below the target
  ⌈(active + new) / ranks⌉ requests (never below the busiest rank's count). Active = admitted to the rank,
  running or waiting for its KV. A preempted sequence stays on its rank (its KV lived there). An engine whose
  profile says ``attention_dp_dispatch: round_robin`` (SGLang's data-parallel controller,
  ``DataParallelController.round_robin_scheduler``) instead hands every request, in arrival order, to the next rank
  in turn as soon as it arrives, whatever the ranks hold; the rank's own scheduler queues it.
* The iteration is priced by the replica's one StepTimeModel (the seam shared with the planner), given the
  sum of every rank's work plus the work of the rank with the most prompt tokens — the straggler — as
  ``StepBatch.busiest_rank``: the analytic model prices the per-rank layers at that rank's share and the
  expert layers at the sum, as the planner's steady state does (aiinfra.planning.inference.steady_state_step:
  E[max of the ranks' new prompts] on the busiest rank, the mean over all). Swap copies run on each rank's
  own PCIe link in parallel: the iteration waits for the longest.

Work per iteration is O(ranks) plus O(log ranks) per dispatched request; nothing loops over sequences.
"""

from __future__ import annotations

import heapq
from dataclasses import replace

from aiinfra.analytic.step_time import StepBatch, StepTimeModel
from aiinfra.sim.replica import Replica, SchedulerLimits, Seq


def rank_limits(lim: SchedulerLimits, ranks: int) -> SchedulerLimits:
    """One rank's share of a replica's limits: KV blocks, sequences and batched tokens split ``ranks`` ways."""
    return replace(
        lim,
        kv_capacity_tokens=lim.kv_capacity_tokens // ranks,
        max_num_seqs=max(1, lim.max_num_seqs // ranks),
        max_num_batched_tokens=max(1, lim.max_num_batched_tokens // ranks),
    )


class AttentionDpReplica:
    """``ranks`` attention-DP ranks of one replica (``lim``: the whole replica's limits)."""

    def __init__(
        self,
        idx: int,
        model: StepTimeModel,
        lim: SchedulerLimits,
        time_cache: dict[tuple[int, ...], float],
        ranks: int,
        dispatch: str = "balanced",
    ) -> None:
        self.idx = idx
        self.round_robin = dispatch == "round_robin"
        """Requests go to the ranks in turn on arrival (SGLang) instead of by load (TensorRT-LLM)."""
        self.next_rank = 0
        self.lim = lim
        self.rank_lim = rank_limits(lim, ranks)
        self.ranks = [Replica(r, model, self.rank_lim, time_cache) for r in range(ranks)]
        self.queue: list[tuple[int, float, int, Seq]] = []
        """Requests not yet given to a rank, by (priority, arrival)."""
        self.queue_tokens = 0.0
        self.active_prompt_tokens = [0] * ranks
        """Σ prompt tokens of the requests each rank holds (TensorRT-LLM's balancing key)."""
        self.home_prompt: dict[int, int] = {}
        """Request id -> the prompt tokens it added to its rank's count."""
        self.stepping: list[Replica] = []
        self.busy = False
        self.n_decode_in_step = 0
        self.step_s = 0.0

    # ---- what the event loop and routers read
    @property
    def outstanding_tokens(self) -> float:
        """Tokens still to compute of the requests in the shared queue and on every rank."""
        return self.queue_tokens + sum(r.outstanding_tokens for r in self.ranks)

    @property
    def preemptions(self) -> int:
        """Sequences preempted so far, over all ranks."""
        return sum(r.preemptions for r in self.ranks)

    @property
    def prefix_hits(self) -> int:
        """Admissions that reused a cached prompt prefix, over all ranks."""
        return sum(r.prefix_hits for r in self.ranks)

    def has_work(self) -> bool:
        """Whether the shared queue or any rank holds a request."""
        return bool(self.queue) or any(r.has_work() for r in self.ranks)

    def running(self) -> int:
        """Sequences admitted (prefilling or decoding), over all ranks."""
        n = 0
        for r in self.ranks:
            n += len(r.decode) + len(r.prefilling)
        return n

    def queued(self) -> int:
        """Requests not yet admitted: the shared queue plus every rank's waiting queue."""
        n = len(self.queue)
        for r in self.ranks:
            n += len(r.waiting)
        return n

    def kv_tokens(self) -> float:
        """KV cache in use, in tokens, summed over the ranks."""
        total = 0.0
        for r in self.ranks:
            total += r.kv_tokens()
        return total

    def enqueue(self, seq: Seq) -> None:
        """Add a request to the shared queue (by priority, then arrival); ranks take it at the next :meth:`plan`."""
        heapq.heappush(self.queue, (seq.priority, seq.arrival_s, seq.rid, seq))
        self.queue_tokens += seq.remaining_tokens

    # ---- dispatch (TensorRT-LLM attention-DP request balancing; see the module docstring)
    def _dispatch(self) -> None:
        n_ranks = len(self.ranks)
        if self.round_robin:
            self._dispatch_in_turn(n_ranks)
            return
        active = [r.running() + len(r.waiting) for r in self.ranks]
        total = sum(active)
        take = min(len(self.queue), n_ranks * self.rank_lim.max_num_seqs - total)
        if take <= 0:
            return
        target = max(-(-(total + take) // n_ranks), max(active))
        heap = [(self.active_prompt_tokens[i], active[i], i) for i in range(n_ranks) if active[i] < target]
        heapq.heapify(heap)
        new = [heapq.heappop(self.queue)[3] for _ in range(take)]
        new.sort(key=lambda s: -s.prompt_tokens)  # stable: equal prompts keep their (priority, arrival) order
        for seq in new:
            tokens, count, i = heapq.heappop(heap)
            self.queue_tokens -= seq.remaining_tokens
            self.ranks[i].enqueue(seq)
            self.home_prompt[seq.rid] = seq.prompt_tokens
            self.active_prompt_tokens[i] += seq.prompt_tokens
            if count + 1 < target:
                heapq.heappush(heap, (tokens + seq.prompt_tokens, count + 1, i))

    def _dispatch_in_turn(self, n_ranks: int) -> None:
        """Every queued request, by (priority, arrival), to the next rank in turn (SGLang's round robin)."""
        while self.queue:
            seq = heapq.heappop(self.queue)[3]
            self.queue_tokens -= seq.remaining_tokens
            i = self.next_rank
            self.next_rank = (i + 1) % n_ranks
            self.ranks[i].enqueue(seq)
            self.home_prompt[seq.rid] = seq.prompt_tokens
            self.active_prompt_tokens[i] += seq.prompt_tokens

    # ---- one lock-step iteration
    def plan(self) -> StepBatch | None:
        """Dispatch queued requests to the ranks, plan each rank's iteration, and return the lock-step iteration: the
        sum of the ranks' work with the rank of most prompt tokens as ``busiest_rank``; None when no rank has work."""
        if self.queue:
            self._dispatch()
        stepping: list[Replica] = []
        busiest: StepBatch | None = None
        pre_tokens = dec_seqs = dec_ctx = pre_seqs = 0
        pre_pairs = 0.0
        for r in self.ranks:
            if not r.has_work():
                continue
            b = r.plan()
            if b is None:
                continue
            stepping.append(r)
            if busiest is None or (b.prefill_tokens, b.prefill_attention_pairs, b.decode_seqs) > (
                busiest.prefill_tokens,
                busiest.prefill_attention_pairs,
                busiest.decode_seqs,
            ):
                busiest = b
            pre_tokens += b.prefill_tokens
            pre_pairs += b.prefill_attention_pairs
            dec_seqs += b.decode_seqs
            dec_ctx += b.decode_context_tokens
            pre_seqs += b.prefill_seqs
        self.stepping = stepping
        if not stepping:
            return None
        self.n_decode_in_step = dec_seqs
        return StepBatch(
            prefill_tokens=pre_tokens,
            prefill_attention_pairs=pre_pairs,
            decode_seqs=dec_seqs,
            decode_context_tokens=dec_ctx,
            busiest_rank=busiest if len(self.ranks) > 1 else None,
            prefill_seqs=pre_seqs,
        )

    def start(self, batch: StepBatch) -> float:
        """Begin the lock-step iteration; returns its duration in seconds (step time of the summed batch plus the
        longest rank's swap copies)."""
        self.busy = True
        extra_s = 0.0
        for r in self.stepping:  # swap copies planned for this iteration (a rank that does not step keeps its own)
            if r.extra_s > extra_s:
                extra_s = r.extra_s
            r.extra_s = 0.0
        self.step_s = self.ranks[0]._time(batch) + extra_s  # the ranks share one model and time cache
        return self.step_s

    def finish_step(self, now_s: float, done: list[Seq], handoff: list[Seq]) -> None:
        """Apply the ended iteration on every rank that stepped and take the requests that left a rank off its
        prompt-token count."""
        self.busy = False
        for r in self.stepping:
            n_done, n_handoff = len(done), len(handoff)
            r.finish_step(now_s, done, handoff)
            for seq in (*done[n_done:], *handoff[n_handoff:]):  # requests that left the rank this step
                self.active_prompt_tokens[r.idx] -= self.home_prompt.pop(seq.rid)
        self.stepping = []
        for r in self.ranks:  # an overlap scheduler planned the next lock-step iteration when this one started
            if r.lim.overlap_admission:
                r.admit_until_s = now_s - self.step_s
