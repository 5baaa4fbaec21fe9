"""The discrete-event loop: arrivals, a router, replicas, and per-request records.

Events sit in a heap keyed (time_s, kind, seq) as SimPy orders them (seq breaks ties in insertion order);
one event per iteration per replica, never one per token. All counters live on the Simulation instance
(no state shared between runs).

Prefill/decode disaggregation (DistServe, Zhong et al. OSDI'24; Splitwise, Patel et al. ISCA'24): a
request is prefilled on a prefill replica, which emits its first token; its KV then travels to a decode
replica (``kv_transfer_s_per_token`` per context token) and joins that replica's decode set.

A single mixed replica (the common case: capacity checks, one-replica runs) takes the fused loop of sim/single.py,
which runs the same scheduler event for event without the heap and the per-request objects.

Attention data parallelism (``attention_dp_ranks`` > 1): each replica is a group of ranks that hold their own
sequences and KV and step together (sim/attention_dp.py).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from aiinfra.analytic.step_time import StepTimeModel
from aiinfra.sim import single
from aiinfra.sim.arrivals import Requests
from aiinfra.sim.attention_dp import AttentionDpReplica
from aiinfra.sim.replica import Replica, SchedulerLimits, Seq, ServingReplica
from aiinfra.sim.router import make_router

ARRIVAL, KV_ARRIVAL, STEP_END = 0, 1, 2


@dataclass(eq=False)
class Records:
    """Per-request outcomes (arrays indexed by request id) and per-iteration samples."""

    arrival_s: np.ndarray
    """When each request arrived (closed loop: when its client sent it)."""
    first_token_s: np.ndarray
    """When each request's first token came out (NaN if never)."""
    finish_s: np.ndarray
    """When each request's last token came out (NaN if unfinished)."""
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    priority: np.ndarray
    itl_s: list[float] = field(default_factory=list)
    """Durations of iterations that decoded (each weighted by its decoding sequences in ``itl_weight``)."""
    itl_weight: list[int] = field(default_factory=list)
    """Decoding sequences of each itl_s iteration."""
    sample_t_s: list[float] = field(default_factory=list)
    """Times of the samples below: the end of every iteration of any replica."""
    queue_len: list[int] = field(default_factory=list)
    """Requests waiting, all replicas."""
    running_seqs: list[int] = field(default_factory=list)
    """Sequences admitted (prefilling or decoding), all replicas."""
    kv_util_frac: list[float] = field(default_factory=list)
    """KV cache in use / capacity of the replica whose iteration ended (not clipped: ≤ 1 is a checked invariant)."""
    iterations: int = 0
    """Iterations run, all replicas."""
    preemptions: int = 0
    prefix_hits: int = 0
    end_s: float = 0.0
    """Time of the last event."""


class Simulation:
    """One simulated deployment. ``limits`` gives the mixed replicas' settings, or with ``decode_limits``
    the prefill pool's (``replicas`` of them) and the decode pool's (``decode_replicas``)."""

    def __init__(
        self,
        model: StepTimeModel,
        limits: SchedulerLimits,
        replicas: int,
        router: str = "round-robin",
        decode_limits: SchedulerLimits | None = None,
        decode_replicas: int = 0,
        kv_transfer_s_per_token: float = 0.0,
        attention_dp_ranks: int = 1,
        fused: bool = True,
        attention_dp_dispatch: str = "balanced",
    ) -> None:
        cache: dict[tuple[int, ...], float] = {}

        def make(idx: int, lim: SchedulerLimits) -> ServingReplica:
            if attention_dp_ranks > 1:
                return AttentionDpReplica(idx, model, lim, cache, attention_dp_ranks, attention_dp_dispatch)
            return Replica(idx, model, lim, cache)

        self.front = [make(i, limits) for i in range(replicas)]
        self.back: list[ServingReplica] = []
        if decode_limits is not None:
            self.back = [make(replicas + i, decode_limits) for i in range(decode_replicas)]
        self.replicas = self.front + self.back
        self.router = make_router(router)
        self.back_router = make_router(router)
        self.kv_transfer_s_per_token = kv_transfer_s_per_token
        self._seq = 0
        self.fused = fused
        """One mixed replica runs the fused loop of sim/single.py (same events, faster); False: the general loop."""

    def _push(self, heap: list[tuple[float, int, int, int]], t: float, kind: int, payload: int) -> int:
        """Schedule an event at ``t``; returns its key (ties in time break by kind, then by scheduling order)."""
        self._seq += 1
        heapq.heappush(heap, (t, kind, self._seq, payload))
        return self._seq

    def run(self, reqs: Requests, closed_loop_clients: int | None = None) -> Records:
        """Serve ``reqs`` and record each request's first-token and finish times plus per-iteration samples. With
        ``closed_loop_clients`` only the first that many requests are sent at their given times; each later one is sent
        when an earlier answer ends, after its think time."""
        n = len(reqs)
        rec = Records(
            arrival_s=np.array(reqs.arrival_s, dtype=float),
            first_token_s=np.full(n, np.nan),
            finish_s=np.full(n, np.nan),
            input_tokens=np.asarray(reqs.input_tokens),
            output_tokens=np.asarray(reqs.output_tokens),
            priority=np.asarray(reqs.priority),
        )
        only = self.replicas[0]
        if self.fused and len(self.replicas) == 1 and isinstance(only, Replica) and single.eligible(only):
            rec.end_s, rec.iterations, rec.preemptions = single.run_single(
                only,
                reqs,
                closed_loop_clients,
                rec.arrival_s,
                rec.first_token_s,
                rec.finish_s,
                rec.itl_s,
                rec.itl_weight,
                rec.sample_t_s,
                rec.queue_len,
                rec.running_seqs,
                rec.kv_util_frac,
            )
            return rec
        _EventLoop(self, reqs, rec, closed_loop_clients).run()
        rec.preemptions = sum(r.preemptions for r in self.replicas)
        rec.prefix_hits = sum(r.prefix_hits for r in self.replicas)
        return rec


class _EventLoop:
    """The general discrete-event loop over every replica: arrivals, KV hand-offs between pools, iteration ends."""

    def __init__(self, sim: Simulation, reqs: Requests, rec: Records, closed_loop_clients: int | None) -> None:
        self.sim, self.reqs, self.rec, self.closed = sim, reqs, rec, closed_loop_clients
        self.heap: list[tuple[float, int, int, int]] = []
        self.in_transit: dict[int, Seq] = {}
        self.done: list[Seq] = []
        self.handoff: list[Seq] = []
        n = len(reqs)
        if closed_loop_clients:
            # each client sends its first request at its given time (t = 0 unless the load ramps up) and the next
            # one when its previous one completes, after the request's think time (none unless given)
            self.next_rid = min(closed_loop_clients, n)
            for rid in range(self.next_rid):
                sim._push(self.heap, float(rec.arrival_s[rid]), ARRIVAL, rid)
        else:
            for rid in range(n):
                sim._push(self.heap, float(reqs.arrival_s[rid]), ARRIVAL, rid)
            self.next_rid = n

    def run(self) -> None:
        """Handle every event in time order; the replicas an instant's events touched start their next iteration."""
        sim, heap = self.sim, self.heap
        now = 0.0
        touched: list[ServingReplica] = []
        while heap:
            t, kind, key, payload = heapq.heappop(heap)
            if t < now:
                raise AssertionError(f"time ran backwards: {t} < {now}")
            now = t
            if kind == ARRIVAL:
                rep = sim.router.pick(sim.front)
                rep.enqueue(self._seq_of(payload, now))
            elif kind == KV_ARRIVAL:
                rep = sim.back_router.pick(sim.back)
                rep.enqueue(self.in_transit.pop(key))
            else:
                rep = sim.replicas[payload]
                self._step_end(rep, now)
            touched.append(rep)
            if heap and heap[0][0] == now:
                continue  # handle every event of this instant first (simultaneous arrivals batch together)
            # start the replicas these events touched if they are idle and have work (no other replica changed)
            for r in touched:
                if not r.busy and r.has_work():
                    batch = r.plan()
                    if batch is not None:
                        sim._push(heap, now + r.start(batch), STEP_END, r.idx)
            touched.clear()
        self.rec.end_s = now

    def _seq_of(self, rid: int, now: float) -> Seq:
        """The sequence of request ``rid`` arriving at ``now`` (with its shared prefix, if the trace gives one)."""
        reqs = self.reqs
        seq = Seq(
            rid=rid,
            prompt_tokens=int(reqs.input_tokens[rid]),
            output_tokens=int(reqs.output_tokens[rid]),
            arrival_s=now,
            priority=int(reqs.priority[rid]),
        )
        if reqs.prefix_id is not None and reqs.prefix_tokens is not None:
            seq.prefix_id = int(reqs.prefix_id[rid])
            seq.prefix_tokens = int(reqs.prefix_tokens[rid])
        return seq

    def _step_end(self, rep: ServingReplica, now: float) -> None:
        """An iteration of ``rep`` ended: sample the deployment, send finished prefills to the decode pool, record
        finished requests and, in a closed loop, send each client's next request after its think time."""
        rec, done, handoff = self.rec, self.done, self.handoff
        n_dec = rep.n_decode_in_step
        rep.finish_step(now, done, handoff)
        rec.iterations += 1
        if n_dec:
            rec.itl_s.append(rep.step_s)
            rec.itl_weight.append(n_dec)
        rec.sample_t_s.append(now)
        waiting = running = 0
        for r in self.sim.replicas:
            waiting += r.queued()
            running += r.running()
        rec.queue_len.append(waiting)
        rec.running_seqs.append(running)
        cap = rep.lim.kv_capacity_tokens
        rec.kv_util_frac.append(rep.kv_tokens() / cap if cap else 0.0)
        for seq in handoff:
            self._hand_off(seq, now)
        handoff.clear()
        n = len(self.reqs)
        for seq in done:
            rec.first_token_s[seq.rid] = seq.first_token_s
            rec.finish_s[seq.rid] = now
            if self.closed and self.next_rid < n:
                think = self.reqs.think_s
                sent = now + (float(think[self.next_rid]) if think is not None else 0.0)
                rec.arrival_s[self.next_rid] = sent
                self.sim._push(self.heap, sent, ARRIVAL, self.next_rid)
                self.next_rid += 1
        done.clear()

    def _hand_off(self, seq: Seq, now: float) -> None:
        """A prefill-pool sequence's KV cache leaves for the decode pool, arriving after its transfer time."""
        self.rec.first_token_s[seq.rid] = seq.first_token_s
        ctx = seq.prompt_tokens + 1.0
        moved = Seq(
            rid=seq.rid,
            prompt_tokens=int(ctx),
            output_tokens=seq.output_tokens,
            arrival_s=seq.arrival_s,
            priority=seq.priority,
            prefilled_tokens=int(ctx),
            generated_tokens=seq.generated_tokens,
            first_token_s=seq.first_token_s,
            swapped_ctx_tokens=ctx,
            via_network=True,
        )
        k = self.sim._push(self.heap, now + ctx * self.sim.kv_transfer_s_per_token, KV_ARRIVAL, 0)
        self.in_transit[k] = moved
