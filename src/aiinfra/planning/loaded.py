"""A loaded replica: requests in flight, throughput and TTFT / TPOT percentiles of one continuously batched replica
under a load — N users who think Z seconds between an answer and their next request (a closed system; Z = 0 is a
benchmark's fixed concurrency), or open Poisson arrivals at a rate. ``aiinfra infer`` reports it, ``aiinfra
capacity`` sizes fleets on it, and the simulator's searches start from it.

**Requests in flight.** Continuous batching advances every running sequence by one token per iteration, so a
replica is an infinite-server station whose speed depends on how many it holds: R(B) = TTFT(B) + (out − 1)·TPOT(B)
at B in flight (the steady state of :func:`aiinfra.planning.inference.steady_state_step`, chunked prefill and the
step token budget included). Open arrivals at λ: B = λ·R(B) (Little's law); N users thinking Z: B = N·R(B)/(R(B) + Z)
(the interactive response-time law, Lazowska et al. 1984, *Quantitative System Performance* §3.3), both solved as
fixed points. An infinite-server station's occupancy is insensitive to the service-time distribution (BCMP,
Baskett et al. 1975): Poisson with mean B for open arrivals, binomial with variance B·Z/(R + Z) for N users
thinking Z (the finite-source Engset system), so the arrival-driven variances below carry the factor
``f`` = Z/(R + Z) (1 open, 0 for a fixed concurrency).

**TPOT tail.** A request's exclusive TPOT is the mean of the iterations it decodes in: t_dec(n) per iteration with
n decoding, plus Δ for each prompt prefilled meanwhile (Δ = the mean marginal prefill time of a prompt,
(TPOT − t_dec)·out/B). Over its decode time D = (out − 1)·TPOT it sees K ≈ λD prompts and an occupancy n̄
averaged over its life. For Poisson arrivals and sojourns ≈ R: Var K = λD, Var n̄ = (2/3)·λR, Cov(n̄, K) = λD/2
(shot-noise integrals of the triangular occupancy autocorrelation). Each prompt it sees also lengthens its own
decode time and so admits more prompts — a feedback of gain ρ = λΔ (the replica's prefill utilisation) that divides
the deviation by (1 − ρ). TPOT_q = mean + z_q·σ (normal quantiles).

**TTFT tail.** A request waits for the iteration in progress to end, then its prompt is prefilled in the next
iteration together with every prompt that arrived meanwhile (gated batch service, iteration-level scheduling: Orca,
Yu et al. OSDI'22; vLLM admits waiting requests at each schedule). Iteration lengths form a Markov chain: an
iteration starting k prompts lasts T_k = t_dec + k·Δ, and the next starts k' ~ Poisson(λ·T_k). An arrival lands
in an iteration with probability ∝ T_k (length bias; Kleinrock 1975, *Queueing Systems* I §5.2), at a uniform point
of it, and finishes its first token at the end of the next iteration: TTFT = U·T_k + c·t_dec + (1 + J)·Δ with
J ~ Poisson(λ·T_k) prompts arriving alongside and c the iterations its prompt needs at the budget left by the
decodes (chunked prefill, Sarathi-Serve, Agrawal et al. OSDI'24). Percentiles are read off that mixture. An engine
with an overlap scheduler (SGLang, TensorRT-LLM's PyTorch executor) planned the next iteration before the arrival
could join it, so its prompt starts one (mean) iteration later; under n-step multi-step scheduling (vLLM V0) it waits
for the rest of the call it lands in, (n − 1)/2 iterations on average.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiinfra.specs.workload import Slo

if TYPE_CHECKING:  # numpy is imported where a grid or the TTFT chain needs arrays: a fixed concurrency needs neither
    import numpy as np

#: standard normal quantiles Φ⁻¹(0.90) and Φ⁻¹(0.99) of the percentiles reported (Abramowitz & Stegun Table 26.1)
Z_P90 = 1.2815515655446004
Z_P99 = 2.3263478740408408

MAX_PROMPTS_PER_ITERATION = 512
"""Largest prompt count per iteration the TTFT chain tracks (its matrices are this squared): beyond the step budgets
of the engines modelled (TensorRT-LLM's 2,048 sequences at 8,192 tokens admit at most 8,192 one-token prompts, but a
chain that reaches 512 prompts per iteration is far past any SLO)."""


def poisson_pmf(ks: np.ndarray, means: np.ndarray) -> np.ndarray:
    """P(K = k) of Poisson counts: rows = ``means`` (column vector), columns = ``ks`` = 0, 1, …, n (consecutive),
    exp(k·ln m − m − ln k!) with ln k! as a cumulative sum."""
    import numpy as np

    log_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, ks.size)))))
    m = np.maximum(means, 1e-300)
    out: np.ndarray = np.exp(ks[None, :] * np.log(m) - m - log_fact[None, :])
    return out


@dataclass(frozen=True, kw_only=True, slots=True)
class Tails:
    """Percentiles of a latency, seconds."""

    p50_s: float
    p90_s: float
    p99_s: float


@dataclass(frozen=True, slots=True)
class ReplicaState:
    """The steady state of a replica holding ``batch`` sequences (means)."""

    batch: float
    tpot_s: float
    ttft_s: float
    tokens_per_step: float
    decode_tpot_s: float
    """Time per output token of an iteration that decodes only (no prompt in it)."""
    decode_slope_s: float
    """d(decode_tpot_s)/d(batch): what one more sequence in flight adds per output token."""

    def response_s(self, output_tokens: int) -> float:
        """Mean end-to-end time (s) of a request producing ``output_tokens``: TTFT, then TPOT per further token."""
        return self.ttft_s + max(output_tokens - 1, 0) * self.tpot_s


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadPoint:
    """One replica under a load: requests in flight, throughput and latency percentiles."""

    in_flight: float
    """Mean requests in flight (prefilling or decoding; beyond what the replica runs, also those waiting)."""
    batch: int
    """``in_flight`` rounded up: the batch whose steady state the means describe."""
    requests_per_s: float
    ttft_s: float
    tpot_s: float
    ttft: Tails
    tpot: Tails
    e2e_p99_s: float
    prefill_utilisation_frac: float
    """ρ = λ·Δ: the share of the replica's time spent prefilling prompts."""
    in_flight_p99: float
    """99th percentile of the requests in flight (normal approximation of the occupancy)."""
    arrival_variance_frac: float
    """f: 1 for open Poisson arrivals, Z/(R + Z) for users thinking Z, 0 for a fixed concurrency."""
    saturated: bool
    """The load exceeds what the replica serves (more in flight than its KV cache, engine and budget allow, or the
    prefill work alone fills its time)."""
    max_in_flight: int = 0
    """The most sequences the replica runs (KV cache, max_num_seqs, step budget)."""


def meets(p: LoadPoint, slo: Slo | None) -> bool:
    """True when ``p`` meets every limit of ``slo`` (TTFT p90, TPOT p99, end-to-end p99), as the simulator reads
    them (aiinfra.sim.metrics.slo_misses), and the 99th percentile of its requests in flight fits the replica."""
    if p.saturated or (p.max_in_flight and p.in_flight_p99 > p.max_in_flight):
        # at the peaks of the occupancy the KV cache or the engine's cap would be full: requests queue or are
        # preempted, which the percentiles above do not include
        return False
    if slo is None:
        return True
    return (
        (slo.ttft_p90_s is None or p.ttft.p90_s <= slo.ttft_p90_s)
        and (slo.tpot_p99_s is None or p.tpot.p99_s <= slo.tpot_p99_s)
        and (slo.e2e_p99_s is None or p.e2e_p99_s <= slo.e2e_p99_s)
    )


class LoadedReplica:
    """The loaded-replica model of one deployment (module docstring).

    ``steady(B)`` gives (TPOT, mean TTFT, tokens per sequence per iteration) at B in flight; ``decode_step_s(B)``
    one decode-only iteration's time with B sequences; ``max_in_flight`` the most sequences the KV cache, the
    engine's max_num_seqs and its step budget allow; ``prefill_iterations`` the iterations one prompt needs at the
    budget left by the decodes. ``grid`` prices the steady state on a geometric grid of batches and interpolates
    (the capacity search evaluates many loads); else every batch exactly."""

    def __init__(
        self,
        steady: Callable[[int], tuple[float, float, float]],
        decode_step_s: Callable[[int], float],
        *,
        output_tokens: int,
        max_in_flight: int,
        prefill_iterations: Callable[[int], int] = lambda _b: 1,
        grid: bool = False,
        request_overhead_s: float = 0.0,
        admission_delay_iterations: float = 0.0,
    ) -> None:
        self._steady = steady
        self.admission_delay_iterations = admission_delay_iterations
        """Mean iterations an arrival waits beyond the next one before its prompt is scheduled: 1 under an overlap
        scheduler (it planned the next iteration already), (n − 1)/2 under n-step multi-step scheduling (the rest of
        the call it lands in). Already in ``steady``'s TTFT; the TTFT chain adds as many mean iterations."""
        self._decode = decode_step_s
        self.output_tokens = output_tokens
        self.max_in_flight = max(1, max_in_flight)
        self._chunks = prefill_iterations
        self.request_overhead_s = request_overhead_s
        """Serving-path time of each request outside the iterations (already in ``steady``'s TTFT): shifts the
        TTFT percentiles of the iteration chain."""
        self._memo: dict[int, ReplicaState] = {}
        self._grid: list[int] | None = None
        if grid:
            import numpy as np

            pts = np.unique(np.round(np.geomspace(1, self.max_in_flight, 18)).astype(int))
            self._grid = [int(x) for x in pts]

    # ------------------------------------------------------------------ the steady state at B in flight
    def _exact(self, b: int) -> ReplicaState:
        st = self._memo.get(b)
        if st is None:
            tpot, ttft, tok = self._steady(b)
            d = self._decode(b) / tok
            h = max(1, b // 8)
            lo, hi = max(1, b - h), b + h
            slope = (self._decode(hi) - self._decode(lo)) / (tok * (hi - lo))
            st = self._memo[b] = ReplicaState(float(b), tpot, ttft, tok, min(d, tpot), max(slope, 0.0))
        return st

    def state(self, b: float) -> ReplicaState:
        """The steady state at ``b`` sequences in flight (≥ 1; interpolated linearly between grid batches)."""
        b = min(max(b, 1.0), float(self.max_in_flight))
        if self._grid is None:
            return self._exact(max(1, math.ceil(b - 1e-9)))
        g = self._grid
        i = bisect_left(g, b)  # np.searchsorted(g, b): the first grid batch >= b
        if (i < len(g) and g[i] == b) or i == 0:
            return self._exact(g[min(i, len(g) - 1)])
        lo, hi = self._exact(g[i - 1]), self._exact(g[min(i, len(g) - 1)])
        w = (b - lo.batch) / (hi.batch - lo.batch) if hi.batch > lo.batch else 0.0

        def mix(a: float, c: float) -> float:
            return a + w * (c - a)

        return ReplicaState(
            b,
            mix(lo.tpot_s, hi.tpot_s),
            mix(lo.ttft_s, hi.ttft_s),
            mix(lo.tokens_per_step, hi.tokens_per_step),
            mix(lo.decode_tpot_s, hi.decode_tpot_s),
            mix(lo.decode_slope_s, hi.decode_slope_s),
        )

    def saturation_rate_per_s(self) -> float:
        """Requests per second the replica serves at its largest batch."""
        st = self.state(self.max_in_flight)
        return st.batch / st.response_s(self.output_tokens)

    # ------------------------------------------------------------------ loads
    def at_rate(self, rate_per_s: float) -> LoadPoint:
        """Open Poisson arrivals at ``rate_per_s``: B = λ·R(B) (Little's law)."""
        out = self.output_tokens
        if rate_per_s >= self.saturation_rate_per_s():
            return self._point(self.state(self.max_in_flight), rate_per_s, 1.0, saturated=True)
        lo, hi = 0.0, float(self.max_in_flight)  # B − λR(B) < 0 at lo, ≥ 0 at hi
        if 1.0 - rate_per_s * self.state(1.0).response_s(out) >= 0.0:
            b = max(rate_per_s * self.state(1.0).response_s(out), 1e-9)
            return self._point(self.state(1.0), rate_per_s, 1.0, in_flight=b)
        lo = 1.0
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if mid - rate_per_s * self.state(mid).response_s(out) >= 0.0:
                hi = mid
            else:
                lo = mid
            if hi - lo < 0.01 * max(lo, 1.0):
                break
        return self._point(self.state(hi), rate_per_s, 1.0, in_flight=hi)

    def with_users(self, users: float, think_s: float) -> LoadPoint:
        """``users`` users each thinking ``think_s`` on average between an answer and their next request
        (``think_s`` = 0: a fixed concurrency, every user always in flight): B = N·R(B)/(R(B) + Z)."""
        out = self.output_tokens
        if think_s <= 0.0:
            st = self.state(users)
            rate = min(users, self.max_in_flight) / st.response_s(out)
            return self._point(st, rate, 0.0, saturated=users > self.max_in_flight, in_flight=users)

        def excess(b: float) -> float:
            r = self.state(b).response_s(out)
            return b - users * r / (r + think_s)

        cap = float(self.max_in_flight)
        if excess(cap) < 0.0:
            # more users want a request in flight than the replica runs: it serves X = cap/R(cap) and the rest wait
            # (the asymptotic bound of a closed system, Lazowska et al. 1984 §5.2); N − X·Z requests are in the
            # system (Little's law at the think station), those beyond cap in the queue
            st = self.state(cap)
            r = st.response_s(out)
            rate = cap / r
            in_system = max(users - rate * think_s, cap)
            wait = in_system / rate - r
            return self._point(st, rate, think_s / (r + think_s), saturated=True, in_flight=in_system, wait_s=wait)
        lo, hi = 0.0, cap
        if excess(1.0) >= 0.0:
            r = self.state(1.0).response_s(out)
            b = users * r / (r + think_s)
            return self._point(self.state(1.0), b / r, think_s / (r + think_s), in_flight=b)
        lo = 1.0
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if excess(mid) >= 0.0:
                hi = mid
            else:
                lo = mid
            if hi - lo < 0.01 * max(lo, 1.0):
                break
        st = self.state(hi)
        r = st.response_s(out)
        return self._point(st, users / (r + think_s), think_s / (r + think_s), in_flight=hi)

    # ------------------------------------------------------------------ percentiles
    def _point(
        self,
        st: ReplicaState,
        rate_per_s: float,
        f: float,
        saturated: bool = False,
        in_flight: float | None = None,
        wait_s: float = 0.0,
    ) -> LoadPoint:
        """The load point at state ``st``; ``wait_s``: mean queueing before admission (a saturated closed system),
        added to TTFT."""
        out = self.output_tokens
        b = st.batch if in_flight is None else in_flight
        resp = st.response_s(out)
        # Δ: the mean marginal prefill time of one prompt (TPOT = t_dec + (B/out)·Δ, module docstring)
        delta = max(st.tpot_s - st.decode_tpot_s, 0.0) * out / max(st.batch, 1e-9)
        rho = rate_per_s * delta
        if rho >= 1.0:
            saturated, rho = True, 0.999
        dec_s = max(out - 1, 0) * st.tpot_s
        m_k = rate_per_s * dec_s  # prompts prefilled during one request's decode
        m_n = rate_per_s * resp  # occupancy (Little)
        c = delta / max(out - 1, 1)
        var = f * (st.decode_slope_s**2 * (2.0 / 3.0) * m_n + c**2 * m_k + st.decode_slope_s * c * m_k)
        sd = math.sqrt(max(var, 0.0)) / (1.0 - rho)
        tpot = Tails(p50_s=st.tpot_s, p90_s=st.tpot_s + Z_P90 * sd, p99_s=st.tpot_s + Z_P99 * sd)
        # the mean TTFT is the steady state's (the response time R of the fixed point); its spread comes from the
        # gated chain when arrivals are random
        ttft_mean = st.ttft_s + wait_s
        if saturated:  # no steady state: the queue grows; the percentiles are the steady state's at the cap
            ttft = Tails(p50_s=ttft_mean, p90_s=ttft_mean, p99_s=ttft_mean)
        elif f > 0.0:
            ttft = self._ttft_tails(st, rate_per_s, delta)
            ttft = Tails(p50_s=ttft.p50_s + wait_s, p90_s=ttft.p90_s + wait_s, p99_s=ttft.p99_s + wait_s)
        else:  # a fixed concurrency: requests arrive as others finish, one refill at a time (steady-state mean)
            ttft = Tails(p50_s=ttft_mean, p90_s=ttft_mean, p99_s=ttft_mean)
        e2e = ttft_mean + dec_s + Z_P99 * max(out - 1, 0) * sd
        return LoadPoint(
            in_flight=b,
            batch=max(1, math.ceil(b - 1e-9)),
            requests_per_s=rate_per_s,
            ttft_s=ttft_mean,
            tpot_s=st.tpot_s,
            ttft=ttft,
            tpot=tpot,
            e2e_p99_s=e2e,
            prefill_utilisation_frac=rho,
            in_flight_p99=b + Z_P99 * math.sqrt(f * b),
            arrival_variance_frac=f,
            saturated=saturated,
            max_in_flight=self.max_in_flight,
        )

    def _ttft_tails(self, st: ReplicaState, rate_per_s: float, delta_s: float) -> Tails:
        """TTFT percentiles of the gated batch-service chain of iteration lengths (module docstring)."""
        import numpy as np

        d = st.decode_tpot_s * st.tokens_per_step  # one decode-only iteration
        lam = rate_per_s
        chunks = max(1, self._chunks(max(1, round(st.batch))))
        mean_k = lam * d / max(1.0 - lam * delta_s, 1e-3)
        k_max = min(int(mean_k + 12.0 * math.sqrt(mean_k + 1.0) + 12), MAX_PROMPTS_PER_ITERATION)
        ks = np.arange(k_max + 1)
        t_k = d + ks * delta_s
        # transition k -> k' ~ Poisson(λ·T_k); stationary law by power iteration from Poisson(mean_k)
        trans = poisson_pmf(ks, lam * t_k[:, None])
        trans /= trans.sum(axis=1, keepdims=True)
        pi = poisson_pmf(ks, np.array([[mean_k]]))[0]
        pi /= pi.sum()
        for _ in range(200):
            nxt = pi @ trans
            if np.abs(nxt - pi).max() < 1e-12:
                pi = nxt
                break
            pi = nxt
        pi /= pi.sum()
        w_step = pi * t_k / float(pi @ t_k)  # the iteration an arrival lands in: length-biased
        # others arriving in that iteration: J ~ Poisson(λ·T_k); the first token ends the next iteration
        js = ks
        p_j = poisson_pmf(js, lam * t_k[:, None])
        p_j /= p_j.sum(axis=1, keepdims=True)
        weight = (w_step[:, None] * p_j).ravel()
        # an overlap scheduler or a multi-step call admits the arrival later: as many mean iterations of the chain
        later = self.admission_delay_iterations * float(pi @ t_k)
        start = np.tile(chunks * d + (1 + js) * delta_s + later, ks.size)
        width = np.repeat(t_k, js.size)
        keep = weight > 1e-14
        weight, start, width = weight[keep] / weight[keep].sum(), start[keep], width[keep]

        def cdf(x: float) -> float:
            return float(weight @ np.clip((x - start) / width, 0.0, 1.0))

        def quantile(q: float) -> float:
            lo, hi = float(start.min()), float((start + width).max())
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if cdf(mid) >= q:
                    hi = mid
                else:
                    lo = mid
            return hi

        floor = st.ttft_s if st.batch <= 1 else 0.0
        c = self.request_overhead_s
        return Tails(
            p50_s=max(quantile(0.5) + c, floor),
            p90_s=max(quantile(0.9) + c, floor),
            p99_s=max(quantile(0.99) + c, floor),
        )

    # ------------------------------------------------------------------ the largest load meeting an SLO
    def max_users(self, slo: Slo | None, think_s: float) -> tuple[int, LoadPoint] | None:
        """The most users (thinking ``think_s``) one replica serves within ``slo``, with their load point; None
        when even one misses it."""
        first = self.with_users(1, think_s)
        if not meets(first, slo):
            return None
        out = self.output_tokens
        st = self.state(self.max_in_flight)
        r = st.response_s(out)
        hi = max(2, math.ceil(self.max_in_flight * (r + think_s) / r) + 1)  # beyond: more in flight than held
        lo, best = 1, first
        while hi - lo > 1:  # meets at lo, not at hi
            mid = (lo + hi) // 2
            p = self.with_users(mid, think_s)
            if meets(p, slo):
                lo, best = mid, p
            else:
                hi = mid
        return lo, best

    def max_rate(self, slo: Slo | None) -> tuple[float, LoadPoint] | None:
        """The highest Poisson rate one replica serves within ``slo``; None when even a trickle misses it."""
        sat = self.saturation_rate_per_s()
        lo = sat / 1000.0
        first = self.at_rate(lo)
        if not meets(first, slo):
            return None
        hi, best = sat, first
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            p = self.at_rate(mid)
            if meets(p, slo):
                lo, best = mid, p
            else:
                hi = mid
            if hi - lo < 0.002 * hi:
                break
        return lo, best
