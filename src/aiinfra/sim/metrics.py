"""Latency and throughput statistics of a simulated run.

Per request (arrival a, first token f, finish e, n output tokens):
* TTFT = f − a (queueing + prefill);
* exclusive TPOT = (e − f) / (n − 1): the mean gap between output tokens after the first (vLLM's
  benchmark_serving and NVIDIA GenAI-Perf "inter-token latency" per request; requests with n = 1 have none);
* inclusive TPOT = (e − a) / n: end-to-end time per output token, TTFT included (what some tools call
  TPOT; the two differ most for short outputs and long queues — see ai-dynamo/aiconfigurator PR #1141);
* end-to-end latency = e − a.
ITL is the distribution of gaps between consecutive output tokens over all tokens: every decoding
iteration contributes its duration once per sequence it advanced (with speculative decoding a gap
delivers ≈ (1 − α^(γ+1))/(1 − α) tokens at once).
Goodput (DistServe, Zhong et al. OSDI'24) = completed requests that meet every SLO limit, per second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aiinfra.sim.engine import Records
from aiinfra.specs.workload import Slo


@dataclass(frozen=True, kw_only=True, slots=True)
class Percentiles:
    """Mean and percentiles of one latency over the requests (or the token gaps) of a run, in the unit of the field
    holding it."""

    mean: float
    """Mean over the finite values."""
    p50: float
    """Median."""
    p90: float
    """90th percentile."""
    p99: float
    """99th percentile."""


#: the percentiles reported, as fractions
QUANTILES = (0.5, 0.9, 0.99)


def quantiles(v: np.ndarray, qs: tuple[float, ...] = QUANTILES) -> list[float]:
    """Quantiles of the finite values ``v`` by linear interpolation between order statistics (Hyndman & Fan 1996,
    definition 7: position (n − 1)·q), with numpy.percentile's default arithmetic step for step (so the same
    floats): one partial sort at the order statistics needed instead of numpy's general path (which also imports
    numpy.ma on first use)."""
    n = int(v.size)
    spots = []
    for q in qs:
        at = (n - 1) * q
        lo = math.floor(at)
        if at >= n - 1:  # at or past the last value: the maximum
            lo, frac = n - 1, 0.0
        else:
            frac = at - lo
        spots.append((lo, frac))
    kth = sorted({k for lo, frac in spots for k in (lo, min(lo + 1, n - 1))})
    part = np.partition(v, kth)
    out = []
    for lo, frac in spots:
        a = float(part[lo])
        b = float(part[min(lo + 1, n - 1)]) if frac else a
        diff = b - a
        # numpy's lerp: from the nearer end, a + (b − a)·t below t = 0.5, b − (b − a)·(1 − t) from it on
        out.append(b - diff * (1 - frac) if frac >= 0.5 else a + diff * frac)
    return out


def pct(values: np.ndarray) -> Percentiles:
    """Mean, p50, p90 and p99 of the finite ``values`` (NaN everywhere when none is finite)."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return Percentiles(mean=float("nan"), p50=float("nan"), p90=float("nan"), p99=float("nan"))
    p50, p90, p99 = quantiles(v)
    return Percentiles(mean=float(v.mean()), p50=p50, p90=p90, p99=p99)


def weighted_pct(values: list[float], weights: list[int]) -> Percentiles:
    """Mean and percentiles of ``values`` each counted ``weights`` times (the ITL: an iteration's duration once per
    sequence it advanced); each percentile is the smallest value whose cumulative weight reaches it."""
    if not values:
        return pct(np.array([]))
    v = np.fromiter(values, dtype=float, count=len(values))
    w = np.fromiter(weights, dtype=float, count=len(weights))
    order = np.argsort(v)
    v, w = v[order], w[order]
    cum = np.cumsum(w) / w.sum()
    q = [float(v[min(int(np.searchsorted(cum, x)), len(v) - 1)]) for x in (0.5, 0.9, 0.99)]
    return Percentiles(mean=float((v * w).sum() / w.sum()), p50=q[0], p90=q[1], p99=q[2])


@dataclass(frozen=True, kw_only=True, slots=True)
class ClassSummary:
    """Latencies of one priority class (lower value = served first)."""

    priority: int
    requests: int
    """Requests of this class sent (the percentiles cover those that finished)."""
    ttft_s: Percentiles
    e2e_s: Percentiles


@dataclass(frozen=True, kw_only=True, slots=True)
class SimSummary:
    """The statistics of one simulated run (module docstring: the definitions of TTFT, TPOT, ITL and goodput)."""

    requests: int
    """Requests sent."""
    completed: int
    """Requests that finished before the run ended; the latency statistics cover these only."""
    duration_s: float
    """From the first arrival to the last finish (0 when none finished)."""
    ttft_s: Percentiles
    """Time to first token per completed request (the engine's serving-path cost per request included)."""
    tpot_exclusive_s: Percentiles
    """Per request (finish − first token)/(output − 1): the mean gap after the first token."""
    tpot_inclusive_s: Percentiles
    """Per request end-to-end / output tokens (TTFT included)."""
    itl_s: Percentiles
    """Gaps between consecutive output tokens over all tokens (each decoding iteration once per sequence it
    advanced)."""
    e2e_s: Percentiles
    """Arrival to last token per completed request (the engine's serving-path cost per request included)."""
    output_tokens_per_s: float
    """Output tokens of the completed requests / duration_s."""
    requests_per_s: float
    """Completed requests / duration_s."""
    goodput_requests_per_s: float | None
    """Completed requests meeting every SLO limit / duration_s (None without an SLO or when none finished)."""
    slo_attainment_frac: float | None
    """Share of all requests sent that finished within every SLO limit (None without an SLO or when none finished)."""
    kv_utilisation_mean_frac: float
    """KV cache in use / capacity, mean over the ends of all iterations (of the replica whose iteration ended)."""
    kv_utilisation_max_frac: float
    """KV cache in use / capacity, the highest at the end of any iteration."""
    queue_length_max: int
    """Most requests waiting for admission at once, over all replicas (sampled at iteration ends)."""
    running_seqs_max: int
    """Most sequences admitted (prefilling or decoding) at once, over all replicas."""
    preemptions: int
    """Sequences preempted, all replicas."""
    prefix_cache_hits: int
    """Admissions that reused a cached prompt prefix, all replicas."""
    iterations: int
    """Scheduler iterations run, all replicas."""
    priority_classes: tuple[ClassSummary, ...] = ()
    """Per-class latencies when the requests carry more than one priority."""


def slo_misses(s: SimSummary, slo: Slo) -> list[str]:
    """The SLO's percentile limits that a run misses, each as "metric value > limit" (empty = met).
    ttft_p90_s bounds the 90th-percentile TTFT, tpot_p99_s the 99th-percentile exclusive TPOT,
    e2e_p99_s the 99th-percentile end-to-end latency; an unfinished request fails the SLO."""
    out: list[str] = []
    checks = (
        ("TTFT p90", s.ttft_s.p90, slo.ttft_p90_s),
        ("TPOT p99", s.tpot_exclusive_s.p99, slo.tpot_p99_s),
        ("end-to-end p99", s.e2e_s.p99, slo.e2e_p99_s),
    )
    for name, value, limit in checks:
        if limit is not None and not value <= limit:  # NaN (nothing measured) fails
            out.append(f"{name} {value * 1e3:.4g} ms > {limit * 1e3:.4g} ms")
    if s.completed < s.requests:
        out.append(f"only {s.completed} of {s.requests} requests finished")
    return out


def per_request(rec: Records, request_overhead_s: float = 0.0) -> dict[str, np.ndarray]:
    """Each request's TTFT, exclusive TPOT ((e2e − TTFT)/(output − 1); NaN for one-token answers) and e2e, s;
    ``request_overhead_s`` (the serving-path cost per request) is added to TTFT and e2e."""
    out = rec.output_tokens.astype(float)
    tpot_ex = np.where(out > 1, (rec.finish_s - rec.first_token_s) / np.maximum(out - 1, 1), np.nan)
    return {
        "ttft_s": rec.first_token_s - rec.arrival_s + request_overhead_s,
        "tpot_exclusive_s": tpot_ex,
        "e2e_s": rec.finish_s - rec.arrival_s + request_overhead_s,
    }


def summarise(rec: Records, slo: Slo | None, request_overhead_s: float = 0.0) -> SimSummary:
    """The run's statistics; ``request_overhead_s`` (the engine's serving-path cost per request: API server,
    tokenisation, first-token streaming, EngineProfile.request_overhead_s) is added to every request's TTFT and
    end-to-end latency, as ``infer`` adds it, since the simulated engine starts at the scheduler."""
    done = np.isfinite(rec.finish_s)
    lat = per_request(rec, request_overhead_s)
    ttft, e2e, tpot_ex = lat["ttft_s"], lat["e2e_s"], lat["tpot_exclusive_s"]
    out = rec.output_tokens.astype(float)
    multi = out > 1
    tpot_in = e2e / out
    span = float(np.nanmax(rec.finish_s) - np.nanmin(rec.arrival_s)) if done.any() else 0.0
    good = None
    attain = None
    if slo is not None and done.any():
        ok = done.copy()
        if slo.ttft_p90_s is not None:
            ok &= ttft <= slo.ttft_p90_s
        if slo.tpot_p99_s is not None:
            ok &= np.where(multi, tpot_ex <= slo.tpot_p99_s, True)
        if slo.e2e_p99_s is not None:
            ok &= e2e <= slo.e2e_p99_s
        attain = float(ok.sum() / ok.size)  # an unfinished request misses the SLO
        good = float(ok.sum() / span) if span > 0 else 0.0
    kv_frac = rec.kv_util_frac
    kv = np.fromiter(kv_frac, dtype=float, count=len(kv_frac)) if kv_frac else np.zeros(1)
    classes: tuple[ClassSummary, ...] = ()
    pr = rec.priority
    if pr.size and pr.min() != pr.max():  # (np.unique alone would import numpy.ma on first use)
        levels = np.unique(pr)
        classes = tuple(
            ClassSummary(
                priority=int(p),
                requests=int((rec.priority == p).sum()),
                ttft_s=pct(ttft[done & (rec.priority == p)]),
                e2e_s=pct(e2e[done & (rec.priority == p)]),
            )
            for p in levels
        )
    return SimSummary(
        requests=len(rec.arrival_s),
        completed=int(done.sum()),
        duration_s=span,
        ttft_s=pct(ttft[done]),
        tpot_exclusive_s=pct(tpot_ex[done]),
        tpot_inclusive_s=pct(tpot_in[done]),
        itl_s=weighted_pct(rec.itl_s, rec.itl_weight),
        e2e_s=pct(e2e[done]),
        output_tokens_per_s=float(out[done].sum() / span) if span > 0 else 0.0,
        requests_per_s=float(done.sum() / span) if span > 0 else 0.0,
        goodput_requests_per_s=good,
        slo_attainment_frac=attain,
        kv_utilisation_mean_frac=float(kv.mean()),
        kv_utilisation_max_frac=float(kv.max()),
        queue_length_max=max(rec.queue_len, default=0),
        running_seqs_max=max(rec.running_seqs, default=0),
        preemptions=rec.preemptions,
        prefix_cache_hits=rec.prefix_hits,
        iterations=rec.iterations,
        priority_classes=classes,
    )
