"""The discrete-event loop: arrivals, a router, replicas, and per-request records.

Heap keyed (time_s, kind, seq) as SimPy orders events; all counters live on the Simulation instance
(no state shared between runs); one seed → numpy SeedSequence.spawn streams for arrivals and lengths.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

import numpy as np

from aiinfra.analytic.step_time import StepTimeModel
from aiinfra.sim.arrivals import Requests
from aiinfra.sim.replica import Replica, SchedulerLimits, Seq

ARRIVAL, STEP_END = 0, 1


@dataclass
class Records:
    """Per-request outcomes (arrays indexed by request id) and per-iteration samples."""

    arrival_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    itl_s: list[float] = field(default_factory=list)
    itl_weight: list[int] = field(default_factory=list)
    queue_t_s: list[float] = field(default_factory=list)
    queue_len: list[int] = field(default_factory=list)
    kv_util_frac: list[float] = field(default_factory=list)
    iterations: int = 0
    preemptions: int = 0
    prefix_hits: int = 0
    end_s: float = 0.0


class Simulation:
    def __init__(
        self,
        model: StepTimeModel,
        limits: SchedulerLimits,
        replicas: int,
        router: str = "round-robin",
        sample_every: int = 1,
    ) -> None:
        self.replicas = [Replica(i, model, limits) for i in range(replicas)]
        self.router = router
        self._rr = itertools.count()
        self._seq = itertools.count()
        self.sample_every = sample_every

    def _route(self) -> Replica:
        if self.router == "least-outstanding-tokens":
            return min(self.replicas, key=lambda r: (r.outstanding_tokens(), r.idx))
        return self.replicas[next(self._rr) % len(self.replicas)]

    def run(self, reqs: Requests, closed_loop_clients: int | None = None) -> Records:
        n = len(reqs)
        rec = Records(
            arrival_s=np.array(reqs.arrival_s, dtype=float),
            first_token_s=np.full(n, np.nan),
            finish_s=np.full(n, np.nan),
            input_tokens=np.asarray(reqs.input_tokens),
            output_tokens=np.asarray(reqs.output_tokens),
        )
        heap: list[tuple[float, int, int, int]] = []
        if closed_loop_clients:
            # each client sends its next request when its previous one completes (zero think time)
            first = min(closed_loop_clients, n)
            for rid in range(first):
                rec.arrival_s[rid] = 0.0
                heapq.heappush(heap, (0.0, ARRIVAL, next(self._seq), rid))
            next_rid = first
        else:
            for rid in range(n):
                heapq.heappush(heap, (float(reqs.arrival_s[rid]), ARRIVAL, next(self._seq), rid))
            next_rid = n
        now = 0.0
        done: list[Seq] = []
        cap = self.replicas[0].lim.kv_capacity_tokens
        while heap:
            t, kind, _, payload = heapq.heappop(heap)
            assert t >= now - 1e-12, "time ran backwards"
            now = t
            if kind == ARRIVAL:
                rid = payload
                rep = self._route()
                seq = Seq(rid=rid, prompt=int(reqs.input_tokens[rid]), out_total=int(reqs.output_tokens[rid]),
                          arrival_s=now, priority=int(reqs.priority[rid]))  # fmt: skip
                if reqs.prefix_id is not None and reqs.prefix_tokens is not None:
                    seq.prefix_id = int(reqs.prefix_id[rid])
                    seq.prefix_tokens = int(reqs.prefix_tokens[rid])
                rep.enqueue(seq)
            else:
                rep = self.replicas[payload]
                n_dec = rep.n_decode_in_step
                rep.finish_step(now, done)
                rec.iterations += 1
                if n_dec:
                    rec.itl_s.append(rep.step_s)
                    rec.itl_weight.append(n_dec)
                if rec.iterations % self.sample_every == 0:
                    rec.queue_t_s.append(now)
                    rec.queue_len.append(sum(len(r.waiting) for r in self.replicas))
                    rec.kv_util_frac.append(min(rep.kv_tokens() / cap, 1.0) if cap else 0.0)
                for seq in done:
                    rec.first_token_s[seq.rid] = seq.first_token_s
                    rec.finish_s[seq.rid] = now
                    if closed_loop_clients and next_rid < n:
                        rec.arrival_s[next_rid] = now
                        heapq.heappush(heap, (now, ARRIVAL, next(self._seq), next_rid))
                        next_rid += 1
                done.clear()
            # start idle replicas that have work (the one touched by this event first)
            for r in (rep, *self.replicas):
                if not r.busy and r.has_work():
                    batch = r.plan()
                    if batch is not None:
                        dt = r.start(batch)
                        heapq.heappush(heap, (now + dt, STEP_END, next(self._seq), r.idx))
        rec.end_s = now
        rec.preemptions = sum(r.preemptions for r in self.replicas)
        rec.prefix_hits = sum(r.prefix_hits for r in self.replicas)
        return rec
