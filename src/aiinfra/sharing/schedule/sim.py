"""Event-driven cluster scheduler simulation (a heap of arrival and finish events; deterministic: ties are broken
by trace order, and no random number is drawn here).

Every policy starts a job's GPUs all at once (gang placement, as Slurm and Kubernetes gang schedulers do). A job
of at most one node's GPUs goes on one node (best fit: the fullest node that still fits). A larger job takes whole
free nodes plus, except under ``gang``, a best-fit node for the remainder; the nodes are the lowest-numbered free
ones (topology-blind). Under ``gang`` a job of a node or more rounds up to whole nodes that no other job shares,
and its nodes sit in as few leaf-switch groups (``nodes_per_leaf`` consecutive nodes) as possible: a leaf that
holds it alone if one exists (the leaf with the fewest free nodes that still fits), else the leaves with the most
free nodes first. MIG jobs go on the MIG-mode nodes' GPUs under the MIG placement rules of
:mod:`aiinfra.sharing.mig` (best fit: the busiest GPU that can place the profile, lowest start slot).

Queue policies: ``fifo`` (strict arrival order; a blocked head blocks everyone), ``backfill`` and ``gang`` (EASY
backfill, Lifka 1995 / Mu'alem & Feitelson, IEEE TPDS 12(6) 2001: the blocked head gets a reservation at the
earliest time enough GPUs free up on suitable nodes — exact, since durations are known — and a later job may start
now only if it ends before that time or leaves the reserved room intact), ``priority`` (highest priority first; a
blocked job preempts lower-priority running jobs, lowest priority and latest started first, when that lets it
start; a preempted job re-queues with its remaining work — checkpoint/restart without lost work, an assumption;
no backfill), ``fairshare`` (users ordered by the GPUs they hold now, fewest first, ties by their earliest waiting
job; each user's jobs in arrival order; EASY backfill behind the head).

Node failures (optional) come as a time-ordered stream of (time, node, needs repair), drawn by the caller: every job
with GPUs on the failed node is interrupted (a synchronous job stops when any of its GPUs fails, Llama 3 §3.3.4),
loses the work since its last checkpoint, pays the restart time and re-queues with that much more work; a node whose
cause needs a repair leaves the pool for the repair time. MIG-mode nodes do not fail in this model.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from aiinfra.sharing import mig as m
from aiinfra.sharing.schedule.spec import Jobs

_FINISH, _ARRIVE, _FAIL, _REPAIR = 0, 1, 2, 3
NAN = float("nan")


@dataclass(frozen=True, slots=True)
class SimOutcome:
    """Per-job times and cluster series (index = trace row)."""

    start_s: tuple[float, ...]
    """First start (nan if never started)."""
    finish_s: tuple[float, ...]
    """Completion (nan if not finished by the horizon)."""
    wait_s: tuple[float, ...]
    """Time queued (first wait plus every wait after a preemption), up to the end for a job still queued."""
    preemptions: tuple[int, ...]
    """Times each job was preempted by a higher-priority one (priority policy)."""
    reservation_s: tuple[float, ...]
    """First reservation a backfill pass gave the job while it was the blocked head (nan if none)."""
    leaves_used: tuple[int, ...]
    """Leaf groups the job's nodes spanned at its first start (0 for a MIG job or one never started)."""
    state: tuple[str, ...]
    """finished | running | queued | not_arrived."""
    busy_t_s: tuple[float, ...]
    """Times at which the busy-GPU count changed (starts at 0)."""
    busy_gpus: tuple[float, ...]
    """Step function: from busy_t_s[i] on, busy_gpus[i] GPUs were busy (a MIG instance counts its compute share)."""
    end_s: float
    """When the run ended: the horizon if given, else the last event."""
    frag_blocked_s: float
    """Time the queue head was blocked although enough GPUs were free in total (fragmentation)."""
    total_gpus: int
    """GPUs in the cluster, MIG-mode nodes included."""
    interruptions: tuple[int, ...] = ()
    """Times each job was interrupted by a node failure."""
    node_failures: int = 0
    """Failures of whole-GPU nodes simulated (a failure of a node already down is not counted)."""
    node_repairs: int = 0
    """Of those, the ones that took the node out for a repair."""
    lost_gpu_s: float = 0.0
    """GPU-seconds of work redone (since the last checkpoint) plus restarts, over all interruptions."""
    down_gpu_s: float = 0.0
    """GPU-seconds of nodes out for repair."""


class _Nodes:
    """Free GPUs per whole-GPU node: best-fit buckets by free count, and free whole nodes per leaf group."""

    def __init__(self, nodes: int, per_node: int, per_leaf: int) -> None:
        self.per_node = per_node
        self.per_leaf = per_leaf
        self.free = [per_node] * nodes
        self.buckets: list[set[int]] = [set() for _ in range(per_node + 1)]
        self.buckets[per_node] = set(range(nodes))
        self.leaf_full: list[set[int]] = [set(range(lo, min(lo + per_leaf, nodes))) for lo in range(0, nodes, per_leaf)]
        self.total_free = nodes * per_node

    def _move(self, node: int, delta: int) -> None:
        f = self.free[node]
        g = f + delta
        self.buckets[f].discard(node)
        self.buckets[g].add(node)
        self.free[node] = g
        self.total_free += delta
        if f == self.per_node:
            self.leaf_full[node // self.per_leaf].discard(node)
        elif g == self.per_node:
            self.leaf_full[node // self.per_leaf].add(node)

    def _best_fit(self, gpus: int, upto: int, topology: bool = False) -> int | None:
        """The fullest node with room for ``gpus``; a free node from the leaf with the fewest free nodes when
        ``topology`` (keeping whole leaves free for multi-node jobs), else any free node."""
        for k in range(gpus, upto + 1):
            if self.buckets[k]:
                if k < self.per_node:
                    return min(self.buckets[k])
                if topology:
                    fewest = min(len(s) for s in self.leaf_full if s)
                    return next(min(s) for s in self.leaf_full if len(s) == fewest)
                return next(iter(self.buckets[k]))
        return None

    def find(self, gpus: int, whole_nodes: bool) -> list[tuple[int, int]] | None:
        """Nodes and GPU counts for a gang of ``gpus``, or None (nothing changes)."""
        g = self.per_node
        if gpus > self.total_free:
            return None
        if gpus < g or (gpus == g and not whole_nodes):
            node = self._best_fit(gpus, g, whole_nodes)
            return None if node is None else [(node, gpus)]
        if whole_nodes:
            need = -(-gpus // g)
            if len(self.buckets[g]) < need:
                return None
            alone = [(len(s), i) for i, s in enumerate(self.leaf_full) if len(s) >= need]
            if alone:
                chosen = sorted(self.leaf_full[min(alone)[1]])[:need]
            else:
                chosen = []
                for s in sorted(self.leaf_full, key=lambda s: (-len(s), min(s) if s else 0)):
                    chosen.extend(sorted(s)[: need - len(chosen)])
                    if len(chosen) == need:
                        break
            return [(n, g) for n in chosen]  # the job holds its last node whole even if it uses part of it
        whole, rem = divmod(gpus, g)
        full = self.buckets[g]
        if len(full) < whole + (rem > 0 and self._best_fit(rem, g - 1) is None):
            return None
        chosen_nodes = sorted(full)[: whole + 1]
        out = [(n, g) for n in chosen_nodes[:whole]]
        if rem:
            node = self._best_fit(rem, g - 1)
            out.append((chosen_nodes[whole] if node is None else node, rem))
        return out

    def take(self, alloc: list[tuple[int, int]]) -> None:
        """Occupy the GPUs of ``alloc`` ((node, GPUs) pairs)."""
        for n, k in alloc:
            self._move(n, -k)

    def give(self, alloc: list[tuple[int, int]]) -> None:
        """Free the GPUs of ``alloc`` ((node, GPUs) pairs)."""
        for n, k in alloc:
            self._move(n, k)


class _Room:
    """Free GPUs per node at a future instant, with the counts that say whether a given job fits then in O(1)."""

    def __init__(self, free: list[int], per_node: int, gpus: int, whole_nodes: bool) -> None:
        self.free = list(free)
        self.g = per_node
        if gpus < per_node or (gpus == per_node and not whole_nodes):
            self.single, self.whole, self.rem = gpus, 0, 0
        else:
            self.single = 0
            self.whole, self.rem = (-(-gpus // per_node), 0) if whole_nodes else divmod(gpus, per_node)
        self.n_single = self.n_full = self.n_rem = 0
        for f in self.free:
            self._count(f, 1)

    def _count(self, f: int, sign: int) -> None:
        if self.single and f >= self.single:
            self.n_single += sign
        if f == self.g:
            self.n_full += sign
        elif self.rem and f >= self.rem:
            self.n_rem += sign

    def add(self, node: int, delta: int) -> None:
        """Change ``node``'s free GPUs by ``delta`` and update the fit counts."""
        f = self.free[node]
        self._count(f, -1)
        self.free[node] = f + delta
        self._count(f + delta, 1)

    def fits(self) -> bool:
        """Whether the job this room was built for fits the free GPUs now: one node with room, or enough whole free
        nodes plus a node for the remainder."""
        if self.single:
            return self.n_single > 0
        if self.n_full < self.whole:
            return False
        return not self.rem or self.n_rem > 0 or self.n_full > self.whole


class _MigPool:
    """GPUs in MIG mode: per GPU the occupied memory slices (bit mask), compute slices and instance counts."""

    def __init__(self, gpus: int, geo: m.MigGeometry | None) -> None:
        self.geo = geo
        self.mask = [0] * gpus
        self.compute = [0] * gpus
        self.counts: list[dict[str, int]] = [{} for _ in range(gpus)]

    def find(self, profile: m.MigProfile) -> tuple[int, int] | None:
        """Where an instance of ``profile`` goes: (GPU, start slot) on the busiest GPU by compute slices that can place
        it, lowest start slot; None when none can (or no GPU is in MIG mode)."""
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
        """Occupy ``p``'s memory slices from ``start`` and its compute slices on ``gpu``."""
        self.mask[gpu] |= ((1 << p.memory_slices) - 1) << start
        self.compute[gpu] += p.compute_slices
        self.counts[gpu][p.name] = self.counts[gpu].get(p.name, 0) + 1

    def give(self, gpu: int, start: int, p: m.MigProfile) -> None:
        """Free an instance of ``p`` placed at ``start`` on ``gpu``."""
        self.mask[gpu] &= ~(((1 << p.memory_slices) - 1) << start)
        self.compute[gpu] -= p.compute_slices
        self.counts[gpu][p.name] -= 1


class _ArrivalOrder:
    """Waiting jobs in arrival (queue-entry) order: fifo, backfill, gang."""

    def __init__(self) -> None:
        self._q: dict[int, None] = {}  # insertion-ordered

    @classmethod
    def of(cls, jobs: Jobs, user_gpus: dict[str, int]) -> _ArrivalOrder:
        """An empty arrival-order queue (the jobs and the users' GPUs do not change the order)."""
        return cls()

    def push(self, i: int) -> None:
        """Queue job ``i`` at the back."""
        self._q[i] = None

    def remove(self, i: int) -> None:
        """Take job ``i`` out of the queue, wherever it is (a backfilled job leaves from behind the head)."""
        del self._q[i]

    def head(self) -> int | None:
        """The job queued longest; None when the queue is empty."""
        return next(iter(self._q), None)

    def order(self, depth: int) -> list[int]:
        """At most ``depth`` + 1 jobs from the head: the head and its backfill candidates."""
        out = []
        for i in self._q:
            out.append(i)
            if len(out) > depth:
                break
        return out


class _PriorityOrder:
    """Highest priority first, then arrival, then trace order (a heap; only the head leaves it)."""

    def __init__(self, priority: Sequence[int], arrival_s: Sequence[float]) -> None:
        self._heap: list[tuple[int, float, int]] = []
        self._priority, self._arrival_s = priority, arrival_s

    @classmethod
    def of(cls, jobs: Jobs, user_gpus: dict[str, int]) -> _PriorityOrder:
        """An empty queue ordered by the jobs' priorities and arrival times."""
        return cls(jobs.priority, jobs.arrival_s)

    def push(self, i: int) -> None:
        """Queue job ``i`` by (highest priority, earliest arrival, trace order)."""
        heapq.heappush(self._heap, (-self._priority[i], self._arrival_s[i], i))

    def remove(self, i: int) -> None:
        """Take the head ``i`` out (only the head ever leaves this queue)."""
        popped = heapq.heappop(self._heap)[2]
        assert popped == i, "only the head leaves a priority queue"

    def head(self) -> int | None:
        """The highest-priority, earliest job; None when the queue is empty."""
        return self._heap[0][2] if self._heap else None

    def order(self, depth: int) -> list[int]:
        """The head alone, whatever ``depth``: nothing passes it under this strict policy."""
        head = self.head()
        return [] if head is None else [head]  # a strict policy: nothing passes the head


class _FairShareOrder:
    """Users ordered by the GPUs they hold now (fewest first), ties by their earliest waiting job; each user's jobs
    in arrival order."""

    def __init__(self, user: Sequence[str], arrival_s: Sequence[float], user_gpus: dict[str, int]) -> None:
        self._by_user: dict[str, dict[int, None]] = {}
        self._user, self._arrival_s, self._user_gpus = user, arrival_s, user_gpus

    @classmethod
    def of(cls, jobs: Jobs, user_gpus: dict[str, int]) -> _FairShareOrder:
        """``user_gpus``: the GPUs each user holds now, kept up to date by the simulator."""
        return cls(jobs.user, jobs.arrival_s, user_gpus)

    def push(self, i: int) -> None:
        """Queue job ``i`` behind its user's earlier jobs."""
        self._by_user.setdefault(self._user[i], {})[i] = None

    def remove(self, i: int) -> None:
        """Take job ``i`` out of its user's queue (and the user out when none is left)."""
        q = self._by_user[self._user[i]]
        del q[i]
        if not q:
            del self._by_user[self._user[i]]

    def head(self) -> int | None:
        """The first job of the user holding the fewest GPUs now; None when the queue is empty."""
        order = self.order(0)
        return order[0] if order else None

    def order(self, depth: int) -> list[int]:
        """At most ``depth`` + 1 jobs: users by (GPUs held now, their earliest waiting job's arrival), each user's jobs
        in arrival order."""

        def key(u: str) -> tuple[int, float, int]:
            first = next(iter(self._by_user[u]))
            return self._user_gpus.get(u, 0), self._arrival_s[first], first

        out = []
        for u in sorted(self._by_user, key=key):
            for i in self._by_user[u]:
                out.append(i)
                if len(out) > depth:
                    return out
        return out


_Queue = _ArrivalOrder | _PriorityOrder | _FairShareOrder


@dataclass(frozen=True, slots=True)
class QueuePolicy:
    """A scheduling policy as the simulator core asks it: its queue order and three switches."""

    name: str
    order: type[_Queue]
    """The waiting queue's order."""
    strict: bool
    """A blocked head blocks every later job (no backfill)."""
    preempts: bool = False
    """A blocked head preempts lower-priority running jobs when that lets it start."""
    whole_nodes: bool = False
    """A job of a node or more takes whole nodes that no other job shares, packed by leaf group (gang)."""

    def queue(self, jobs: Jobs, user_gpus: dict[str, int]) -> _Queue:
        """An empty waiting queue in this policy's order."""
        return self.order.of(jobs, user_gpus)


#: every policy of spec.POLICIES (module docstring: what each does)
QUEUE_POLICIES: dict[str, QueuePolicy] = {
    "fifo": QueuePolicy("fifo", _ArrivalOrder, strict=True),
    "backfill": QueuePolicy("backfill", _ArrivalOrder, strict=False),
    "gang": QueuePolicy("gang", _ArrivalOrder, strict=False, whole_nodes=True),
    "priority": QueuePolicy("priority", _PriorityOrder, strict=True, preempts=True),
    "fairshare": QueuePolicy("fairshare", _FairShareOrder, strict=False),
}


class _Run:
    """One simulation: the cluster's and every job's state, and the steps the event loop takes (placement, release,
    EASY backfill, preemption, node failures and repairs) — the core every :class:`QueuePolicy` runs on."""

    def __init__(
        self,
        jobs: Jobs,
        *,
        nodes: int,
        per_node: int,
        policy: str,
        nodes_per_leaf: int | None,
        mig_geometry: m.MigGeometry | None,
        mig_nodes: int,
        horizon_s: float | None,
        backfill_depth: int | None,
        failures: Iterator[tuple[float, int, bool]] | None,
        repair_s: float,
        restart_s: float,
        checkpoint_interval_s: float | None,
    ) -> None:
        self.jobs, self.nodes, self.per_node = jobs, nodes, per_node
        self.mig_geometry, self.mig_nodes = mig_geometry, mig_nodes
        self.horizon_s, self.failures, self.repair_s, self.restart_s = horizon_s, failures, repair_s, restart_s
        self.checkpoint_interval_s = checkpoint_interval_s
        self.n = len(self.jobs)
        self.arrival, self.gpus, self.prio, self.user = jobs.arrival_s, jobs.gpus, jobs.priority, jobs.user
        self.profiles: list[m.MigProfile | None] = [
            mig_geometry.profile(p) if (p and mig_geometry is not None) else None for p in jobs.mig_profile
        ]
        self.pol = QUEUE_POLICIES[policy]
        self.whole = self.pol.whole_nodes
        self.per_leaf = nodes_per_leaf or self.nodes
        self.pool = _Nodes(self.nodes, self.per_node, self.per_leaf)
        self.migs = _MigPool(self.mig_nodes * self.per_node, self.mig_geometry)
        self.mig_share = self.mig_geometry.compute_slices if self.mig_geometry else 1
        self.depth = backfill_depth or self.n

        self.start = [NAN] * self.n
        self.finish = [NAN] * self.n
        self.reservation = [NAN] * self.n
        self.waited = [0.0] * self.n
        self.queued_since = list(self.arrival)
        self.preempts = [0] * self.n
        self.leaves = [0] * self.n
        self.remaining = list(self.jobs.duration_s)
        self.epoch = [0] * self.n
        self.alloc: dict[int, list[tuple[int, int]]] = {}
        self.mig_alloc: dict[int, tuple[int, int]] = {}
        self.running_by_end: list[tuple[float, int]] = []  # heap, lazily cleaned
        self.end_of: dict[int, float] = {}
        self.user_gpus: dict[str, int] = {}
        self.prio_gpus: dict[int, int] = {}
        self.running_prio: dict[int, dict[int, None]] = {}  # running jobs by priority, in start order

        self.events: list[tuple[float, int, int, int]] = [(self.arrival[i], _ARRIVE, i, 0) for i in range(self.n)]
        heapq.heapify(self.events)
        self.run_start = [NAN] * self.n
        self.interrupted = [0] * self.n
        self.down_since: dict[int, float] = {}
        self.node_failures = self.node_repairs = 0
        self.lost_gpu_s = self.down_gpu_s = 0.0
        self.unfinished = self.n

        self.queue = self.pol.queue(self.jobs, self.user_gpus)

        self.busy = 0.0
        self.busy_t: list[float] = [0.0]
        self.busy_v: list[float] = [0.0]
        self.frag_blocked = 0.0
        self.frag_flag = False
        self.now = 0.0
        # the blocked head's reservation: [head, reservation time, room then] (EASY keeps it while the head is the same)
        self.shadow: list[object] = [-1, 0.0, None]
        self.next_failure()

    def next_failure(self) -> None:
        """Schedule the next failure of the stream, if any is left."""
        if self.failures is not None:
            f = next(self.failures, None)
            if f is not None:
                heapq.heappush(self.events, (f[0], _FAIL, f[1], int(f[2])))

    def weight(self, i: int) -> float:
        """GPUs job ``i`` keeps busy: its GPU count, or a MIG instance's share of one GPU's compute slices."""
        p = self.profiles[i]
        return p.compute_slices / self.mig_share if p is not None else float(self.gpus[i])

    def place(self, i: int, a: list[tuple[int, int]] | None = None) -> bool:
        """Start job ``i`` now (on ``a`` if already found); False if it does not fit."""
        p = self.profiles[i]
        if p is not None:
            spot = self.migs.find(p)
            if spot is None:
                return False
            self.migs.take(spot[0], spot[1], p)
            self.mig_alloc[i] = spot
        else:
            a = a or self.pool.find(self.gpus[i], self.whole)
            if a is None:
                return False
            self.pool.take(a)
            self.alloc[i] = a
        if self.start[i] != self.start[i]:  # nan: first start
            self.start[i] = self.now
            self.leaves[i] = len({node // self.per_leaf for node, _ in a}) if a else 0
        self.waited[i] += self.now - self.queued_since[i]
        self.run_start[i] = self.now
        end = self.now + self.remaining[i]
        self.end_of[i] = end
        heapq.heappush(self.events, (end, _FINISH, i, self.epoch[i]))
        heapq.heappush(self.running_by_end, (end, i))
        self.user_gpus[self.user[i]] = self.user_gpus.get(self.user[i], 0) + self.gpus[i]
        self.prio_gpus[self.prio[i]] = self.prio_gpus.get(self.prio[i], 0) + self.gpus[i]
        self.running_prio.setdefault(self.prio[i], {})[i] = None
        self.busy += self.weight(i)
        return True

    def release(self, i: int) -> None:
        """Give back the GPUs (or MIG slices) of running job ``i`` and take it off the per-user and per-priority
        counts."""
        p = self.profiles[i]
        if p is not None:
            gpu, s = self.mig_alloc.pop(i)
            self.migs.give(gpu, s, p)
        else:
            self.pool.give(self.alloc.pop(i))
        del self.end_of[i]
        self.user_gpus[self.user[i]] -= self.gpus[i]
        self.prio_gpus[self.prio[i]] -= self.gpus[i]
        del self.running_prio[self.prio[i]][i]
        self.busy -= self.weight(i)

    def enqueue(self, i: int) -> None:
        """Queue job ``i`` from now (its wait counts from here)."""
        self.queued_since[i] = self.now
        self.queue.push(i)

    def reservation_room(self, head: int) -> tuple[float, _Room] | None:
        """Earliest time the whole-GPU ``head`` fits as running jobs end, and the room then."""
        room = _Room(self.pool.free, self.per_node, self.gpus[head], self.whole)
        while self.running_by_end and self.end_of.get(self.running_by_end[0][1]) != self.running_by_end[0][0]:
            heapq.heappop(self.running_by_end)
        for end, j in sorted(e for e in self.running_by_end if self.end_of.get(e[1]) == e[0]):
            for node, k in self.alloc.get(j, ()):
                room.add(node, k)
            if room.fits():
                return end, room
        return None

    def try_backfill(self, j: int, head: int) -> bool:
        """Start ``j`` now if it leaves the head's reservation intact (EASY)."""
        if self.profiles[j] is not None:
            return self.place(j)  # the MIG pool is not the head's
        if self.gpus[j] > self.pool.total_free:
            return False
        a = self.pool.find(self.gpus[j], self.whole)
        if a is None:
            return False
        if self.shadow[0] != head:
            sh = self.reservation_room(head)
            self.shadow[:] = [head, *(sh or (0.0, None))]
            if sh is not None and self.reservation[head] != self.reservation[head]:
                self.reservation[head] = sh[0]
        t_res, room = self.shadow[1], self.shadow[2]
        if room is None:
            return False
        assert isinstance(room, _Room) and isinstance(t_res, float)
        if self.now + self.remaining[j] > t_res:
            for node, k in a:
                room.add(node, -k)
            if not room.fits():
                for node, k in a:
                    room.add(node, k)
                return False
        return self.place(j, a)

    def requeue(self, j: int, extra_work_s: float) -> None:
        """Stop running job ``j`` now and queue it again with its remaining work plus ``extra_work_s`` (preemption:
        none; a failure: the work since its checkpoint and the restart)."""
        self.remaining[j] = max(self.end_of[j] - self.now, 0.0) + extra_work_s
        self.release(j)
        self.epoch[j] += 1  # its pending finish event is void
        self.enqueue(j)

    def preempt_for(self, i: int) -> bool:
        """Preempt lower-priority running jobs (lowest priority, latest start first) if that lets ``i`` start."""
        p = self.profiles[i]
        lower = sum(v for q, v in self.prio_gpus.items() if q < self.prio[i])
        if p is None and (lower == 0 or lower + self.pool.total_free < self.gpus[i]):
            return False
        # lowest priority first, latest started first
        lower_running = (self.running_prio[q] for q in sorted(self.running_prio) if q < self.prio[i])
        whole_gpu = p is None
        victims = (j for running in lower_running for j in reversed(running) if (self.profiles[j] is None) == whole_gpu)
        chosen: list[int] = []
        if p is None:
            room = _Room(self.pool.free, self.per_node, self.gpus[i], self.whole)
            for j in victims:
                for node, k in self.alloc[j]:
                    room.add(node, k)
                chosen.append(j)
                if room.fits():
                    break
            else:
                return False
        else:
            chosen = list(victims)  # released one at a time below until the profile fits
            if not chosen:
                return False
        for j in chosen:
            self.requeue(j, 0.0)
            self.preempts[j] += 1
            if p is not None and self.migs.find(p) is not None:
                break
        return self.place(i)

    def fail(self, node: int, needs_repair: bool) -> None:
        """Interrupt every job on ``node`` (lost work since its checkpoint + restart re-queued); take the node out."""
        if node in self.down_since:
            return
        self.node_failures += 1
        for j in sorted(j for j, a in self.alloc.items() if any(k == node for k, _ in a)):
            progress = self.now - self.run_start[j]
            lost = progress % self.checkpoint_interval_s if self.checkpoint_interval_s else progress
            self.lost_gpu_s += (lost + self.restart_s) * self.gpus[j]
            self.requeue(j, lost + self.restart_s)
            self.interrupted[j] += 1
        if needs_repair:
            self.node_repairs += 1
            self.pool.take([(node, self.pool.free[node])])
            self.down_since[node] = self.now
            heapq.heappush(self.events, (self.now + self.repair_s, _REPAIR, node, 0))
        self.shadow[:] = [-1, 0.0, None]

    def repaired(self, node: int) -> None:
        """Put a repaired ``node`` back in the pool, count its time down, and drop the backfill reservation (the room
        changed)."""
        self.pool.give([(node, self.per_node)])
        self.down_gpu_s += (self.now - self.down_since.pop(node)) * self.per_node
        self.shadow[:] = [-1, 0.0, None]

    def blocked_by_fragments(self, i: int) -> bool:
        """Whether whole-GPU job ``i`` waits although enough GPUs are free in total (they are spread over nodes)."""
        return self.profiles[i] is None and self.gpus[i] <= self.pool.total_free

    def full_pass(self) -> None:
        """Start every waiting job the policy lets start now: strict policies in queue order until the head blocks
        (priority: after trying preemption), the others the head then EASY backfill behind a blocked head; notes whether
        the blocked head is held back by fragmentation."""
        self.frag_flag = False
        if self.pol.strict:
            while (i := self.queue.head()) is not None:
                if self.place(i) or (self.pol.preempts and self.preempt_for(i)):
                    self.queue.remove(i)
                    continue
                self.frag_flag = self.blocked_by_fragments(i)
                return
            return
        while True:
            o = self.queue.order(self.depth)
            if not o:
                return
            head = o[0]
            if not self.place(head):
                break
            self.queue.remove(head)
        self.frag_flag = self.blocked_by_fragments(head)
        if self.profiles[head] is not None:  # a blocked MIG head: only whole-GPU jobs (the other pool) pass it
            for j in o[1:]:
                if self.profiles[j] is None and self.place(j):
                    self.queue.remove(j)
            return
        for j in o[1:]:
            if self.profiles[j] is None and self.gpus[j] > self.pool.total_free:
                if self.pool.total_free == 0 and not self.mig_nodes:
                    break  # nothing left to place
                continue
            if self.try_backfill(j, head):
                self.queue.remove(j)

    def arrivals_pass(self, new: list[int]) -> bool:
        """Only arrivals at this instant, nothing freed: the jobs already waiting cannot start now, so only the
        new ones are tried (as backfill behind an unchanged head). False when a full pass is needed instead."""
        if self.pol.strict:
            return False
        o = self.queue.order(self.depth)
        head = o[0] if o else -1
        if head in new or head == -1 or self.profiles[head] is not None:
            return False
        pos = {j: k for k, j in enumerate(o)}
        for j in new:
            if j in pos and self.try_backfill(j, head):
                self.queue.remove(j)
        return True

    def run(self) -> SimOutcome:
        """Every event in time order until the last job ends (or the horizon); the outcome."""
        new_jobs: list[int] = []
        freed = False
        while self.events:
            if self.unfinished == 0 and self.failures is not None:
                break  # every job done: the endless failure stream has nothing left to interrupt
            t, kind, i, ep = self.events[0]
            if self.horizon_s is not None and t > self.horizon_s:
                break
            heapq.heappop(self.events)
            if t > self.now:
                if self.frag_flag:
                    self.frag_blocked += t - self.now
                self.now = t
            if kind == _FINISH:
                if ep != self.epoch[i] or i not in self.end_of:
                    continue
                self.remaining[i] = 0.0
                self.release(i)
                self.finish[i] = self.now
                self.unfinished -= 1
                freed = True
            elif kind == _ARRIVE:
                self.enqueue(i)
                new_jobs.append(i)
            elif kind == _FAIL:
                self.fail(i, bool(ep))
                self.next_failure()
                freed = True
            else:
                self.repaired(i)
                freed = True
            if self.events and self.events[0][0] == self.now:
                continue  # handle every event of this instant before scheduling
            if freed or not self.arrivals_pass(new_jobs):
                self.full_pass()
            new_jobs.clear()
            freed = False
            if self.busy_t[-1] == self.now:
                self.busy_v[-1] = self.busy
            else:
                self.busy_t.append(self.now)
                self.busy_v.append(self.busy)

        end = self.horizon_s if self.horizon_s is not None else self.now
        if self.frag_flag and end > self.now:
            self.frag_blocked += end - self.now
        self.down_gpu_s += sum(max(end - since, 0.0) * self.per_node for since in self.down_since.values())
        state = []
        for i in range(self.n):
            if self.finish[i] == self.finish[i]:
                state.append("finished")
            elif i in self.end_of:
                state.append("running")
            elif self.arrival[i] > end:
                state.append("not_arrived")
            else:
                state.append("queued")
                self.waited[i] += end - self.queued_since[i]
        return SimOutcome(
            start_s=tuple(self.start),
            finish_s=tuple(self.finish),
            wait_s=tuple(self.waited),
            preemptions=tuple(self.preempts),
            reservation_s=tuple(self.reservation),
            leaves_used=tuple(self.leaves),
            state=tuple(state),
            busy_t_s=tuple(self.busy_t),
            busy_gpus=tuple(self.busy_v),
            end_s=end,
            frag_blocked_s=self.frag_blocked,
            total_gpus=(self.nodes + self.mig_nodes) * self.per_node,
            interruptions=tuple(self.interrupted),
            node_failures=self.node_failures,
            node_repairs=self.node_repairs,
            lost_gpu_s=self.lost_gpu_s,
            down_gpu_s=self.down_gpu_s,
        )


def simulate(
    jobs: Jobs,
    *,
    nodes: int,
    per_node: int,
    policy: str,
    nodes_per_leaf: int | None = None,
    mig_geometry: m.MigGeometry | None = None,
    mig_nodes: int = 0,
    horizon_s: float | None = None,
    backfill_depth: int | None = None,
    failures: Iterator[tuple[float, int, bool]] | None = None,
    repair_s: float = 0.0,
    restart_s: float = 0.0,
    checkpoint_interval_s: float | None = None,
) -> SimOutcome:
    """Run ``jobs`` through the cluster under ``policy``. Inputs are assumed checked (every job fits the cluster).
    ``failures``: (time, whole-GPU node, needs repair) in increasing time, possibly endless (the run ends when every
    job has finished, or at the horizon)."""
    return _Run(
        jobs,
        nodes=nodes,
        per_node=per_node,
        policy=policy,
        nodes_per_leaf=nodes_per_leaf,
        mig_geometry=mig_geometry,
        mig_nodes=mig_nodes,
        horizon_s=horizon_s,
        backfill_depth=backfill_depth,
        failures=failures,
        repair_s=repair_s,
        restart_s=restart_s,
        checkpoint_interval_s=checkpoint_interval_s,
    ).run()
