"""Event-driven cluster scheduler simulation (heap of events; deterministic: ties broken by trace order).

Placement is gang (all of a job's GPUs at once) and node-aware: a job of at most one node's GPUs goes on one
node (best fit: the fullest node that still fits); a larger job takes whole free nodes (lowest ids first, i.e.
neighbouring nodes) plus a best-fit node for the remainder. MIG jobs go on the MIG-mode nodes' GPUs under the MIG
placement rules (best fit: the busiest GPU that can place the profile).

Policies: ``fifo`` (strict arrival order; the head blocks the queue), ``backfill`` (EASY: the blocked head gets a
reservation at the earliest time enough GPUs free up on its nodes — exact, since durations are known — and later
jobs may start now only if they leave that reservation intact), ``priority`` (highest priority first; a blocked
job preempts lower-priority running jobs when that frees enough room; a preempted job re-queues with its
remaining work, i.e. checkpoint/restart without lost work — an assumption), ``fairshare`` (the queue ordered by
the GPUs each user holds now, fewest first, then arrival; EASY backfill).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from aiinfra.sharing import mig as m
from aiinfra.sharing.schedule.spec import Jobs

_FINISH, _ARRIVE = 0, 1


@dataclass(frozen=True, slots=True)
class SimOutcome:
    """Per-job times and cluster series (index = trace row)."""

    start_s: tuple[float, ...]
    """First start (nan if never started)."""
    finish_s: tuple[float, ...]
    """Completion (nan if not finished by the horizon)."""
    preemptions: tuple[int, ...]
    reservation_s: tuple[float, ...]
    """Earliest reservation a backfill pass gave the job while it was the blocked head (nan if none)."""
    state: tuple[str, ...]
    """finished | running | queued | rejected."""
    reason: tuple[str, ...]
    """Why a job was rejected ('' otherwise)."""
    busy_t_s: tuple[float, ...]
    busy_gpus: tuple[float, ...]
    """Step function: from busy_t_s[i] on, busy_gpus[i] GPUs were busy (MIG instances count their compute share)."""
    end_s: float
    frag_blocked_s: float
    """Time the queue head was blocked although enough GPUs were free in total (fragmentation)."""
    total_gpus: int


class _Nodes:
    """Free GPUs per whole-GPU node with best-fit buckets."""

    def __init__(self, nodes: int, per_node: int) -> None:
        self.per_node = per_node
        self.free = np.full(nodes, per_node, dtype=np.int64)
        self.buckets: list[set[int]] = [set() for _ in range(per_node + 1)]
        self.buckets[per_node] = set(range(nodes))
        self.total_free = nodes * per_node

    def _move(self, node: int, delta: int) -> None:
        f = int(self.free[node])
        self.buckets[f].discard(node)
        self.free[node] = f + delta
        self.buckets[f + delta].add(node)
        self.total_free += delta

    def find(self, gpus: int) -> list[tuple[int, int]] | None:
        """Nodes and GPU counts for a gang of ``gpus``, or None (nothing changed)."""
        g = self.per_node
        if gpus > self.total_free:
            return None
        if gpus <= g:
            for k in range(gpus, g + 1):
                if self.buckets[k]:
                    return [(min(self.buckets[k]), gpus)]
            return None
        whole, rem = divmod(gpus, g)
        full = self.buckets[g]
        if len(full) < whole:
            return None
        chosen = sorted(full)[:whole]
        out = [(n, g) for n in chosen]
        if rem:
            for k in range(rem, g):
                if self.buckets[k]:
                    out.append((min(self.buckets[k]), rem))
                    return out
            if len(full) > whole:
                out.append((sorted(full)[whole], rem))
                return out
            return None
        return out

    def take(self, alloc: list[tuple[int, int]]) -> None:
        for n, k in alloc:
            self._move(n, -k)

    def give(self, alloc: list[tuple[int, int]]) -> None:
        for n, k in alloc:
            self._move(n, k)


def _feasible(free: np.ndarray, gpus: int, per_node: int) -> bool:
    """Could a gang of ``gpus`` be placed on nodes with these free counts (the rule :meth:`_Nodes.find` uses)."""
    if gpus <= per_node:
        return bool((free >= gpus).any())
    whole, rem = divmod(gpus, per_node)
    n_full = int((free == per_node).sum())
    if n_full < whole:
        return False
    if not rem:
        return True
    return bool(((free >= rem) & (free < per_node)).any()) or n_full > whole


class _MigPool:
    """GPUs in MIG mode: per GPU the occupied memory slices (bit mask), compute slices and instance counts."""

    def __init__(self, gpus: int, geo: m.MigGeometry | None) -> None:
        self.geo = geo
        self.mask = [0] * gpus
        self.compute = [0] * gpus
        self.counts: list[dict[str, int]] = [{} for _ in range(gpus)]

    def find(self, profile: m.MigProfile) -> tuple[int, int] | None:
        geo = self.geo
        if geo is None:
            return None
        best: tuple[int, int, int] | None = None  # (-compute used, gpu, start)
        size_mask = (1 << profile.memory_slices) - 1
        for gpu, used in enumerate(self.mask):
            if self.compute[gpu] + profile.compute_slices > geo.compute_slices:
                continue
            if self.counts[gpu].get(profile.name, 0) >= profile.max_instances:
                continue
            for s in profile.starts:
                if not used & (size_mask << s):
                    key = (-self.compute[gpu], gpu, s)
                    if best is None or key < best:
                        best = key
                    break
        return None if best is None else (best[1], best[2])

    def take(self, gpu: int, start: int, p: m.MigProfile) -> None:
        self.mask[gpu] |= ((1 << p.memory_slices) - 1) << start
        self.compute[gpu] += p.compute_slices
        self.counts[gpu][p.name] = self.counts[gpu].get(p.name, 0) + 1

    def give(self, gpu: int, start: int, p: m.MigProfile) -> None:
        self.mask[gpu] &= ~(((1 << p.memory_slices) - 1) << start)
        self.compute[gpu] -= p.compute_slices
        self.counts[gpu][p.name] -= 1


def simulate(
    jobs: Jobs,
    *,
    nodes: int,
    per_node: int,
    policy: str,
    mig_geometry: m.MigGeometry | None = None,
    mig_nodes: int = 0,
    horizon_s: float | None = None,
    backfill_depth: int | None = None,
) -> SimOutcome:
    """Run ``jobs`` through the cluster under ``policy``. Inputs are assumed checked (every job fits the cluster)."""
    n = len(jobs)
    arrival, gpus, duration, prio, user = jobs.arrival_s, jobs.gpus, jobs.duration_s, jobs.priority, jobs.user
    profiles: list[m.MigProfile | None] = [
        mig_geometry.profile(p) if (p and mig_geometry is not None) else None for p in jobs.mig_profile
    ]
    pool = _Nodes(nodes, per_node)
    migs = _MigPool(mig_nodes * per_node, mig_geometry)
    mig_share = mig_geometry.compute_slices if mig_geometry else 1

    start = [float("nan")] * n
    finish = [float("nan")] * n
    reservation = [float("nan")] * n
    preempts = [0] * n
    remaining = list(duration)
    epoch = [0] * n
    run_start = [0.0] * n
    alloc: dict[int, list[tuple[int, int]]] = {}
    mig_alloc: dict[int, tuple[int, int]] = {}
    running_by_end: list[tuple[float, int]] = []  # heap, lazily cleaned
    end_of: dict[int, float] = {}
    user_gpus: dict[str, int] = {}

    events: list[tuple[float, int, int, int]] = [(arrival[i], _ARRIVE, i, 0) for i in range(n)]
    heapq.heapify(events)
    queue: dict[int, None] = {}  # insertion-ordered: arrival order (re-queued jobs keep their arrival rank)
    prio_heap: list[tuple[int, float, int]] = []

    busy = 0.0
    busy_t: list[float] = [0.0]
    busy_v: list[float] = [0.0]
    frag_blocked = 0.0
    frag_flag = False
    now = 0.0

    def record() -> None:
        if busy_t[-1] == now:
            busy_v[-1] = busy
        else:
            busy_t.append(now)
            busy_v.append(busy)

    def weight(i: int) -> float:
        p = profiles[i]
        return p.compute_slices / mig_share if p is not None else float(gpus[i])

    def try_start(i: int) -> bool:
        nonlocal busy
        p = profiles[i]
        if p is not None:
            spot = migs.find(p)
            if spot is None:
                return False
            migs.take(spot[0], spot[1], p)
            mig_alloc[i] = spot
        else:
            a = pool.find(gpus[i])
            if a is None:
                return False
            pool.take(a)
            alloc[i] = a
        if start[i] != start[i]:  # nan: first start
            start[i] = now
        run_start[i] = now
        end = now + remaining[i]
        end_of[i] = end
        heapq.heappush(events, (end, _FINISH, i, epoch[i]))
        heapq.heappush(running_by_end, (end, i))
        user_gpus[user[i]] = user_gpus.get(user[i], 0) + gpus[i]
        busy += weight(i)
        return True

    def release(i: int) -> None:
        nonlocal busy
        p = profiles[i]
        if p is not None:
            gpu, s = mig_alloc.pop(i)
            migs.give(gpu, s, p)
        else:
            pool.give(alloc.pop(i))
        del end_of[i]
        user_gpus[user[i]] -= gpus[i]
        busy -= weight(i)

    def enqueue(i: int) -> None:
        if policy == "priority":
            heapq.heappush(prio_heap, (-prio[i], arrival[i], i))
        else:
            queue[i] = None

    def running_sorted() -> list[tuple[float, int]]:
        while running_by_end and end_of.get(running_by_end[0][1]) != running_by_end[0][0]:
            heapq.heappop(running_by_end)
        return sorted(e for e in running_by_end if end_of.get(e[1]) == e[0])

    def shadow(head: int) -> tuple[float, np.ndarray] | None:
        """Earliest time the whole-GPU head fits as running jobs end, and the free counts then."""
        free = pool.free.copy()
        for end, j in running_sorted():
            if j in alloc:
                for node, k in alloc[j]:
                    free[node] += k
                if _feasible(free, gpus[head], per_node):
                    return end, free
        return None

    cached_shadow: list[object] = []  # [head, (reservation time, free GPUs per node then) | None]

    def backfill(order: list[int]) -> bool:
        """EASY backfill over ``order`` (head first). Returns whether the head was blocked with room in total."""
        head = order[0]
        if profiles[head] is not None:
            # a blocked MIG head: only whole-GPU jobs (another pool) may pass it
            for j in order[1 : 1 + (backfill_depth or len(order))]:
                if profiles[j] is None and try_start(j):
                    del queue[j]
            return False
        # the reservation stays exact while the head is the same: durations are known, and every later start
        # either ends before it or was charged to shadow_free
        if cached_shadow and cached_shadow[0] == head:
            sh = cached_shadow[1]
        else:
            sh = shadow(head)
            cached_shadow[:] = [head, sh]
        if sh is None:
            return False
        shadow_t, shadow_free = sh
        if reservation[head] != reservation[head]:
            reservation[head] = shadow_t
        for j in order[1 : 1 + (backfill_depth or len(order))]:
            if profiles[j] is not None:
                if try_start(j):
                    del queue[j]
                continue
            if gpus[j] > pool.total_free:
                continue
            a = pool.find(gpus[j])
            if a is None:
                continue
            if now + remaining[j] <= shadow_t:
                ok = True
            else:
                trial = shadow_free.copy()
                for node, k in a:
                    trial[node] -= k
                ok = bool((trial >= 0).all()) and _feasible(trial, gpus[head], per_node)
                if ok:
                    shadow_free = trial
                    cached_shadow[1] = (shadow_t, trial)
            if ok and try_start(j):
                del queue[j]
        return gpus[head] <= pool.total_free

    def preempt_for(i: int) -> bool:
        """Preempt lower-priority running jobs (lowest priority, latest start first) if that lets ``i`` start."""
        p = profiles[i]
        victims = sorted((j for j in end_of if prio[j] < prio[i] and (profiles[j] is None) == (p is None)),
                         key=lambda j: (prio[j], -run_start[j], -j))  # fmt: skip
        if not victims:
            return False
        chosen: list[int] = []
        if p is None:
            free = pool.free.copy()
            for j in victims:
                for node, k in alloc[j]:
                    free[node] += k
                chosen.append(j)
                if _feasible(free, gpus[i], per_node):
                    break
            else:
                return False
        else:
            chosen = victims  # release one at a time below until the profile fits
        for j in chosen:
            remaining[j] = max(end_of[j] - now, 0.0)
            release(j)
            epoch[j] += 1
            preempts[j] += 1
            enqueue(j)
            if p is not None and migs.find(p) is not None:
                break
        return try_start(i)

    def schedule_pass() -> None:
        nonlocal frag_flag
        frag_flag = False
        if policy == "priority":
            while prio_heap:
                _, _, i = prio_heap[0]
                if try_start(i) or preempt_for(i):
                    heapq.heappop(prio_heap)
                    continue
                frag_flag = profiles[i] is None and gpus[i] <= pool.total_free
                return
            return
        if not queue:
            return
        if policy == "fairshare":
            order = sorted(queue, key=lambda j: (user_gpus.get(user[j], 0), arrival[j], j))
        else:
            order = list(queue) if policy == "backfill" else []
        if policy == "fifo":
            while queue:
                i = next(iter(queue))
                if not try_start(i):
                    frag_flag = profiles[i] is None and gpus[i] <= pool.total_free
                    return
                del queue[i]
            return
        k = 0
        while k < len(order) and try_start(order[k]):
            del queue[order[k]]
            k += 1
        if k < len(order):
            frag_flag = backfill(order[k:])

    while events:
        t, kind, i, ep = events[0]
        if horizon_s is not None and t > horizon_s:
            break
        heapq.heappop(events)
        if t > now:
            if frag_flag:
                frag_blocked += t - now
            now = t
        if kind == _FINISH:
            if ep != epoch[i] or i not in end_of:
                continue
            remaining[i] = 0.0
            release(i)
            finish[i] = now
        else:
            enqueue(i)
        if events and events[0][0] == now:
            continue  # handle every event at this instant before scheduling
        schedule_pass()
        record()

    end = horizon_s if horizon_s is not None else now
    if frag_flag and end > now:
        frag_blocked += end - now
    state = []
    for i in range(n):
        if finish[i] == finish[i]:
            state.append("finished")
        elif i in end_of:
            state.append("running")
        elif arrival[i] > end:
            state.append("not_arrived")
        else:
            state.append("queued")
    return SimOutcome(
        start_s=tuple(start), finish_s=tuple(finish), preemptions=tuple(preempts), reservation_s=tuple(reservation),
        state=tuple(state), reason=tuple("" for _ in range(n)), busy_t_s=tuple(busy_t), busy_gpus=tuple(busy_v),
        end_s=end, frag_blocked_s=frag_blocked, total_gpus=(nodes + mig_nodes) * per_node,
    )  # fmt: skip
