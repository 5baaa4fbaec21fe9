"""The event loop of one mixed replica, fused with its scheduler: the fast path of :class:`Simulation.run`.

Most simulations (the capacity checks, ``aiinfra simulate`` on one replica, the speed bench) run a single replica of
the vLLM continuous-batching scheduler with recompute preemption. For those, this module runs the same algorithm as
:class:`aiinfra.sim.replica.Replica` driven by :meth:`aiinfra.sim.engine.Simulation.run` — the same admissions,
chunks, preemptions, step-time lookups (the replica's own memo, ``Replica._at``) and records, event for event — with
the request state in per-request lists indexed by request id instead of one object per request, the arrivals read
from their sorted array instead of an event heap (one replica needs no heap: its only other event is the end of its
iteration), and the replica's methods inlined into one loop. ``tests/test_sim_single.py`` checks it against the
general path on every scheduler feature it covers; anything else (several replicas, static batching, swap,
prefix caching, attention DP, disaggregation) takes the general path.

What keeps it fast, each a rewriting of the same arithmetic in the same order (so the same floats):

* consecutive decode-only iterations (nothing arrives, waits, prefills or overflows the KV) run in an inner loop
  that keeps the decode set's per-step terms and the last priced grid interval of each bucket of sequences, and
  leaves on the first arrival (the general branch then finishes that iteration) or when the set changes the plan;
* a decoding sequence's join is one tuple (request, context at join, decode-step counter), kept in ``decode`` and
  in the bucket of the decode step at which it finishes (a dict of lists instead of Replica's heap: every decode
  step visits its own bucket once, in join order, the heap's (step, join) order);
* a request admitted with its whole prompt finishes its prefill with that iteration, so it never enters the
  prefilling list or the prompt reservation (nothing reads them in between);
* the open loop writes finish times where requests finish (the closed loop keeps them in order for its clients).
"""

from __future__ import annotations

import gc
import heapq
import math
from typing import Any

import numpy as np

from aiinfra.analytic.step_time import StepBatch
from aiinfra.sim.arrivals import Requests
from aiinfra.sim.replica import Replica

DECODE_RUNS = True
"""Run consecutive decode-only iterations in the tight inner loop of :func:`_run` (False: one at a time through
the general branches; the tests compare both)."""


def eligible(rep: Replica) -> bool:
    """Whether :func:`run_single` covers this replica's scheduler settings."""
    lim = rep.lim
    return (
        not lim.static
        and lim.role == "mixed"
        and lim.preemption == "recompute"
        and not lim.prefix_caching
        and lim.scheduler_steps == 1
        and not lim.prefill_alone
        and not lim.whole_prompts_with_decodes
        and not rep.has_work()
        and rep.iterations == 0
    )


def run_single(*args: Any) -> tuple[float, int, int]:
    """:func:`_run` with the cyclic garbage collector paused: the loop allocates hundreds of thousands of small
    tuples that live for the whole run (heap entries, samples) and make no reference cycles, so the collector's
    repeated passes over them would cost more than the loop itself."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _run(*args)
    finally:
        if paused:
            gc.enable()


def _run(
    rep: Replica,
    reqs: Requests,
    closed_loop_clients: int | None,
    arrival_s: np.ndarray,
    first_token_s: np.ndarray,
    finish_s: np.ndarray,
    itl_s: list[float],
    itl_weight: list[int],
    sample_t_s: list[float],
    queue_len: list[int],
    running_seqs: list[int],
    kv_util_frac: list[float],
) -> tuple[float, int, int]:
    """Simulate ``reqs`` on ``rep``, filling the records' arrays and lists in place (``arrival_s`` gets the send
    times of a closed loop's requests); returns (end time s, iterations, preemptions).

    Long because it is the whole scheduler in one loop: its state lives in this frame's local variables, CPython's
    cheapest to read and write, and a call per step or per request would cost more than most steps' own work."""
    lim = rep.lim
    cap = lim.kv_capacity_tokens
    block = lim.block_tokens
    half_block = (block - 1) / 2.0
    tps = lim.tokens_per_step
    slots = lim.budget_tokens_per_decode
    full = lim.reserve_full_context
    chunked = lim.chunked_prefill
    overlap = lim.overlap_admission  # the next plan admits only what arrived by the last iteration's start
    max_seqs = lim.max_num_seqs
    max_tokens = lim.max_num_batched_tokens
    cache = rep.time_cache
    cache_get = cache.get
    time_of = rep._time
    heappush, heappop = heapq.heappush, heapq.heappop
    ceil = math.ceil
    unit_step = tps == 1.0  # ceil(k / 1.0) == k: skip the division
    runs = DECODE_RUNS

    n = len(reqs)
    # per-request state of its current admission (a preempted request is re-admitted under the same id);
    # astype(int64) truncates as int() does
    prompt: list[int] = reqs.input_tokens.astype(np.int64).tolist()
    out: list[int] = reqs.output_tokens.astype(np.int64).tolist()
    prio: list[int] = reqs.priority.astype(np.int64).tolist()
    pref = [0] * n
    gen = [0] * n
    kv_res = [0.0] * n
    first: list[float | None] = [None] * n

    waiting: list[tuple[int, float, int]] = []
    prefilling: list[int] = []
    # the decoding sequences: request id -> its join (request id, context at its first decode step, the decode-step
    # counter when it joined); a preempted request that rejoins gets a new join object
    decode: dict[int, tuple[int, float, int]] = {}
    # the decode step at which each join finishes -> its joins in join order (the order of Replica.finish_heap's
    # (step, join id) entries; every decode step visits its own entry exactly once); a join no longer in
    # ``decode`` was preempted since
    finish_at: dict[int, list[tuple[int, float, int]]] = {}
    finish_pop = finish_at.pop
    chunks: list[tuple[int, int]] = []
    # the requests admitted this iteration with their whole prompt as its chunk: they finish their prefill with the
    # iteration, so (unlike Replica) they never enter ``prefilling`` nor the prompt reservation, which nothing reads
    # in between (a request leaves the waiting queue with nothing prefilled: pref is 0)
    fresh: list[int] = []
    decode_steps = iterations = preemptions = 0
    sum_ctx = 0.0
    reserved_prompt = 0
    reserved_full = 0.0
    n_step_dec = 0
    step_s = 0.0

    # arrivals: the open loop's in (time, id) order; the closed loop's in a heap of (time, push order, id).
    # sched[rid]: the request's arrival (its send time in a closed loop, set when its client sends it)
    sched: list[float] = arrival_s.tolist()
    closed = bool(closed_loop_clients)
    think: list[float] | None = reqs.think_s.tolist() if reqs.think_s is not None else None
    pending: list[tuple[float, int, int]] = []
    order: list[int] = []
    times: list[float] = []
    pos = 0
    next_rid = n
    pushes = 0
    inf = math.inf
    if closed:
        assert closed_loop_clients is not None
        next_rid = min(closed_loop_clients, n)
        for rid in range(next_rid):
            pushes += 1
            pending.append((sched[rid], pushes, rid))
        heapq.heapify(pending)
        t_next = pending[0][0] if pending else inf
    else:
        idx = np.argsort(arrival_s, kind="stable")
        order = idx.tolist()
        times = arrival_s[idx].tolist()
        t_next = times[0] if n else inf
    n_times = len(times)
    finish = [math.nan] * n

    # Replica._time's bucket of the decoding sequences, by count (the scheduler never runs more than max_num_seqs)
    seq_key = [(k >> max(0, k.bit_length() - 6)) << 4 | max(0, k.bit_length() - 6) for k in range(max_seqs + 1)]
    # the decode-only price of the last grid interval looked up: its bucket key, context range [m_lo, m_end) and
    # the cached times at its ends (cache entries never change, so the interpolation below is Replica._time's)
    m_key, m_lo, m_end, m_t_lo, m_diff, m_width = -1, 0, 0, 0.0, 0.0, 1
    # and by bucket key, the last such interval of each (the decode set's size moves among a few buckets)
    last_interval: dict[int, tuple[int, int, float, float, int]] = {}
    last_interval_get = last_interval.get
    # the cached times at both ends of the grid intervals mixed iterations looked up, by the lower end's cache key
    interval_ends: dict[tuple[int, int, int, int], tuple[float, float]] = {}
    ends_get = interval_ends.get
    itl_add, itl_w_add, t_add = itl_s.append, itl_weight.append, sample_t_s.append
    q_add, run_add, kv_add = queue_len.append, running_seqs.append, kv_util_frac.append
    cap_div = cap if cap else math.inf  # KV fraction kv / cap_div (0 without a capacity)
    room = math.inf if full else cap  # a decode step's growth beyond it preempts (never under full reservation)
    block_f = float(block)
    growth_tps = 0.0 if full else tps  # KV growth per decoding sequence per step (inside the reservations: none)
    budget_slots = slots if chunked else 0  # budget a decoding sequence takes (none: a prefill runs alone)
    now = 0.0
    admit_until = math.inf  # Replica.admit_until_s
    busy = False
    done: list[int] = []
    while True:
        if busy:
            end = now + step_s
            if t_next <= end:  # arrivals during the iteration, and at its very end, come first (event order)
                if closed:
                    pos, t_next = _admit(end, pos, times, order, pending, prio, waiting)
                else:
                    while True:
                        rid = order[pos]
                        pos += 1
                        heappush(waiting, (prio[rid], t_next, rid))
                        if pos == n_times:
                            t_next = inf
                            break
                        t_next = times[pos]
                        if t_next > end:
                            break
            now = end
            # ---- finish the iteration (Replica.finish_step)
            iterations += 1
            if overlap:
                admit_until = now - step_s
            if n_step_dec:
                decode_steps += 1
                sum_ctx += n_step_dec * tps
                ending = finish_pop(decode_steps, None)
                if ending is not None:
                    for e in ending:
                        rid = e[0]
                        if decode.get(rid) is not e:
                            continue  # preempted since
                        # leaves the decode set (Replica._leave_decode)
                        if full:
                            reserved_full -= kv_res[rid]
                            kv_res[rid] = 0.0
                        del decode[rid]
                        sum_ctx -= e[1] + (decode_steps - e[2]) * tps
                        if closed:
                            done.append(rid)
                        else:
                            finish[rid] = now
            if chunks:
                for rid, take in chunks:
                    p = pref[rid] + take
                    pref[rid] = p
                    if p < prompt[rid]:
                        continue
                    prefilling.remove(rid)
                    reserved_prompt -= p + 1
                    if first[rid] is None:
                        first[rid] = now
                    g = gen[rid] + 1  # the prefill samples a token
                    gen[rid] = g
                    if g >= out[rid]:
                        reserved_full -= kv_res[rid]
                        kv_res[rid] = 0.0
                        if closed:
                            done.append(rid)
                        else:
                            finish[rid] = now
                    else:  # joins the decode set (Replica._join_decode)
                        ctx_f = p + 1.0
                        e = decode[rid] = (rid, ctx_f, decode_steps)
                        sum_ctx += ctx_f
                        g = out[rid] - g
                        step = decode_steps + (g if unit_step else ceil(g / tps))
                        bucket = finish_at.get(step)
                        if bucket is None:
                            finish_at[step] = [e]
                        else:
                            bucket.append(e)
                chunks = []
            if fresh:
                for rid in fresh:
                    if first[rid] is None:
                        first[rid] = now
                    g = gen[rid] + 1  # the prefill samples a token
                    gen[rid] = g
                    if g >= out[rid]:
                        reserved_full -= kv_res[rid]
                        kv_res[rid] = 0.0
                        if closed:
                            done.append(rid)
                        else:
                            finish[rid] = now
                    else:  # joins the decode set
                        ctx_f = prompt[rid] + 1.0
                        e = decode[rid] = (rid, ctx_f, decode_steps)
                        sum_ctx += ctx_f
                        g = out[rid] - g
                        step = decode_steps + (g if unit_step else ceil(g / tps))
                        bucket = finish_at.get(step)
                        if bucket is None:
                            finish_at[step] = [e]
                        else:
                            bucket.append(e)
                fresh.clear()
            busy = False
            # ---- records (Simulation.run)
            if n_step_dec:
                itl_add(step_s)
                itl_w_add(n_step_dec)
            t_add(now)
            q_add(len(waiting))
            n_dec = len(decode)
            n_run = n_dec + len(prefilling)
            run_add(n_run)
            kv = reserved_full if full else sum_ctx + reserved_prompt + n_run * half_block
            kv_add(kv / cap_div)
            if done:  # the closed loop's finished requests, in order: each client sends its next request
                for rid in done:
                    finish[rid] = now
                    if next_rid < n:
                        sent = now + (think[next_rid] if think is not None else 0.0)
                        sched[next_rid] = sent
                        pushes += 1
                        heappush(pending, (sent, pushes, next_rid))
                        next_rid += 1
                done.clear()
                # requests sent at this very instant (no think time)
                pos, t_next = _admit(now, pos, times, order, pending, prio, waiting)
        else:  # idle (or holding work it could not place): nothing changes until the next arrival
            if t_next == inf:
                break
            now = t_next
            pos, t_next = _admit(now, pos, times, order, pending, prio, waiting)
            n_dec = len(decode)
            kv = reserved_full if full else sum_ctx + reserved_prompt + (n_dec + len(prefilling)) * half_block
        # ---- plan the next iteration (Replica.plan)
        if not waiting and not prefilling:
            if not n_dec:
                continue
            if full or kv + n_dec * tps <= cap:
                # decodes only. With DECODE_RUNS, the iterations that follow while nothing arrives, nothing is
                # admitted and the KV fits run here, each one the fused loop's steps for it (same arithmetic, same
                # order), without the general branches
                key = seq_key[n_dec]
                dtps = n_dec * tps  # context growth per step
                hb = n_dec * half_block
                while True:
                    # Replica._time's lookup inlined (price)
                    ctx_i = int(sum_ctx)
                    if key == m_key and m_lo <= ctx_i < m_end:
                        step_s = m_t_lo if ctx_i == m_lo else m_t_lo + m_diff * (ctx_i - m_lo) / m_width
                    elif (mm := last_interval_get(key)) is not None and mm[0] <= ctx_i < mm[1]:
                        m_lo, m_end, m_t_lo, m_diff, m_width = mm
                        m_key = key
                        step_s = m_t_lo if ctx_i == m_lo else m_t_lo + m_diff * (ctx_i - m_lo) / m_width
                    else:
                        shift = ctx_i.bit_length() - 4
                        if shift < 8:
                            shift = 8
                        lo = (ctx_i >> shift) << shift
                        width = 1 << shift
                        t_lo = cache_get((0, 0, key, lo))
                        if ctx_i == lo:
                            step_s = t_lo if t_lo is not None else time_of(StepBatch(0, 0.0, n_dec, ctx_i))
                        else:
                            t_hi = cache_get((0, 0, key, lo + width))
                            if t_lo is None or t_hi is None:
                                step_s = time_of(StepBatch(0, 0.0, n_dec, ctx_i))
                            else:
                                m_key, m_lo, m_end, m_width = key, lo, lo + width, width
                                m_t_lo, m_diff = t_lo, t_hi - t_lo
                                last_interval[key] = (lo, m_end, t_lo, m_diff, width)
                                step_s = t_lo + m_diff * (ctx_i - lo) / width
                    end = now + step_s
                    if not runs or t_next <= end:
                        # one step at a time, or an arrival: the general branch above finishes this iteration
                        n_step_dec = n_dec
                        busy = True
                        break
                    # ---- finish the iteration: decodes only, no arrival
                    now = end
                    iterations += 1
                    if overlap:
                        admit_until = now - step_s
                    decode_steps += 1
                    sum_ctx += dtps
                    itl_add(step_s)
                    itl_w_add(n_dec)
                    t_add(now)
                    q_add(0)  # nothing waits
                    ending = finish_pop(decode_steps, None)
                    if ending is not None:
                        for e in ending:
                            rid = e[0]
                            if decode.get(rid) is not e:
                                continue  # preempted since
                            if full:
                                reserved_full -= kv_res[rid]
                                kv_res[rid] = 0.0
                            del decode[rid]
                            sum_ctx -= e[1] + (decode_steps - e[2]) * tps
                            if closed:
                                done.append(rid)
                            else:
                                finish[rid] = now
                        n_dec = len(decode)
                        key = seq_key[n_dec]
                        dtps = n_dec * tps
                        hb = n_dec * half_block
                    run_add(n_dec)  # nothing prefills
                    # nothing prefills, so no prompt is reserved (reserved_prompt is 0)
                    kv = reserved_full if full else sum_ctx + hb
                    kv_add(kv / cap_div)
                    if done:
                        for rid in done:
                            finish[rid] = now
                            if next_rid < n:
                                sent = now + (think[next_rid] if think is not None else 0.0)
                                sched[next_rid] = sent
                                pushes += 1
                                heappush(pending, (sent, pushes, next_rid))
                                next_rid += 1
                        done.clear()
                        pos, t_next = _admit(now, pos, times, order, pending, prio, waiting)
                        if waiting:
                            break
                    if not n_dec or kv + dtps > room:
                        break  # idle, or preempt below
                if busy or not (waiting or n_dec):
                    continue
        n_dec = len(decode)
        while n_dec and kv + n_dec * tps > room:
            # preempt the running sequence with the largest (priority, arrival); recompute it later
            victim = max(decode, key=lambda r: (prio[r], sched[r], r))
            _, ctx_f, joined = decode.pop(victim)
            produced = min(out[victim] - 1, int(gen[victim] + (decode_steps - joined) * tps))
            reserved_full -= kv_res[victim]
            kv_res[victim] = 0.0
            ctx = ctx_f + (decode_steps - joined) * tps
            sum_ctx -= ctx
            prompt[victim] = int(ctx)
            pref[victim] = 0
            gen[victim] = produced
            preemptions += 1
            heappush(waiting, (prio[victim], sched[victim], victim))
            n_dec = len(decode)
            kv = sum_ctx + reserved_prompt + (n_dec + len(prefilling)) * half_block
        growth = n_dec * growth_tps
        budget = max_tokens - n_dec * budget_slots
        for rid in prefilling:
            take = prompt[rid] - pref[rid]
            if chunked and take > budget:
                take = budget
            if 0 < take <= budget:
                chunks.append((rid, take))
                budget -= take
        kv_free = cap - kv - growth
        running = n_dec + len(prefilling)
        partial = None
        cutoff = admit_until if overlap and running > 0 else inf
        while waiting and running < max_seqs and budget > 0:
            if waiting[0][1] > cutoff:
                break  # arrived after the overlap scheduler planned this iteration
            rid = waiting[0][2]
            p = prompt[rid]
            reserve = float(ceil((p + out[rid] - gen[rid]) / block) * block) if full else p + block_f
            if reserve > kv_free:
                break
            if p > budget and (chunked or running > 0):
                if chunked:  # the budget's worth of its prompt: the last admission of this iteration
                    heappop(waiting)
                    prefilling.append(rid)
                    reserved_prompt += p + 1  # + the slot of its first decode token
                    if full:
                        kv_res[rid] = reserve
                        reserved_full += reserve
                    partial = (rid, budget)
                break
            heappop(waiting)
            if full:
                kv_res[rid] = reserve
                reserved_full += reserve
            running += 1
            fresh.append(rid)
            budget -= p
            kv_free -= reserve
        if not chunks and not fresh and partial is None and not decode:
            continue  # nothing fits: wait for the next event
        # the step's prompt tokens and attention pairs, added in Replica.plan's order: chunks of the prefilling
        # sequences, whole prompts admitted, the partial one admitted last
        pre, pairs = 0, 0.0
        for r, c in chunks:
            pre += c
            pairs += c * (pref[r] + (c + 1) / 2.0)
        for r in fresh:
            c = prompt[r]
            pre += c
            pairs += c * ((c + 1) / 2.0)  # nothing prefilled yet (pref 0; 0 + x is x)
        if partial is not None:
            chunks.append(partial)
            r, c = partial
            pre += c
            pairs += c * (pref[r] + (c + 1) / 2.0)
        n_step_dec = 0 if ((chunks or fresh) and not chunked) else len(decode)
        # Replica._time's lookup inlined (price): the grid interval [lo, lo + width) of the context, the last decode
        # run's when the context is still in it
        if n_step_dec:
            ctx_i = int(sum_ctx)
            if m_lo <= ctx_i < m_end:
                lo, width = m_lo, m_width
            else:
                shift = ctx_i.bit_length() - 4
                if shift < 8:
                    shift = 8
                lo = (ctx_i >> shift) << shift
                width = 1 << shift
        else:
            ctx_i = lo = 0
            width = 256
        k = (pre // 64, int(pairs) >> 16, seq_key[n_step_dec], lo)
        ends = ends_get(k)
        if ends is not None:
            t_lo, t_hi = ends
            step_s = t_lo if ctx_i == lo else t_lo + (t_hi - t_lo) * (ctx_i - lo) / width
        else:
            t_lo = cache_get(k)
            t_hi = t_lo if ctx_i == lo else cache_get((k[0], k[1], k[2], lo + width))
            if t_lo is None or t_hi is None:
                step_s = time_of(StepBatch(pre, pairs, n_step_dec, ctx_i, prefill_seqs=len(chunks) + len(fresh)))
            elif ctx_i == lo:
                step_s = t_lo
            else:
                interval_ends[k] = (t_lo, t_hi)
                step_s = t_lo + (t_hi - t_lo) * (ctx_i - lo) / width
        busy = True
    # the per-request records: finished requests' first-token and finish times, the closed loop's send times
    fin = np.array(finish, dtype=float)
    finish_s[:] = fin
    ended = ~np.isnan(fin)
    first_token_s[ended] = np.array(first, dtype=float)[ended]
    if closed:
        arrival_s[:] = sched
    return now, iterations, preemptions


def _admit(
    t: float,
    pos: int,
    times: list[float],
    order: list[int],
    pending: list[tuple[float, int, int]],
    prio: list[int],
    waiting: list[tuple[int, float, int]],
) -> tuple[int, float]:
    """Enqueue every request that has arrived by ``t``, in event order: the closed loop's from its heap ``pending``
    (``times`` empty), the open loop's from the sorted ``times`` / ``order`` from position ``pos``. Returns the new
    position and the next arrival time (inf when none is left)."""
    heappush = heapq.heappush
    if not times:
        while pending and pending[0][0] <= t:
            ts, _, rid = heapq.heappop(pending)
            heappush(waiting, (prio[rid], ts, rid))
        return pos, pending[0][0] if pending else math.inf
    n = len(times)
    while pos < n:
        ts = times[pos]
        if ts > t:
            return pos, ts
        rid = order[pos]
        pos += 1
        heappush(waiting, (prio[rid], ts, rid))
    return pos, math.inf
