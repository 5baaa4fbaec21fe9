"""Latency and throughput statistics of a simulated run.

TPOT is given two ways (tools disagree; see ai-dynamo/aiconfigurator PR #1141):
* exclusive TPOT = (finish − first token) / (output tokens − 1): the mean gap between output tokens;
* inclusive TPOT = (finish − arrival) / output tokens: end-to-end time per output token (TTFT included).
ITL is the per-token gap distribution: every iteration contributes its duration once per decoding sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aiinfra.sim.engine import Records
from aiinfra.specs.workload import Slo


@dataclass(frozen=True, kw_only=True, slots=True)
class Percentiles:
    mean: float
    p50: float
    p90: float
    p99: float


def pct(values: np.ndarray) -> Percentiles:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return Percentiles(mean=float("nan"), p50=float("nan"), p90=float("nan"), p99=float("nan"))
    p50, p90, p99 = np.percentile(v, [50, 90, 99])
    return Percentiles(mean=float(v.mean()), p50=float(p50), p90=float(p90), p99=float(p99))


def weighted_pct(values: list[float], weights: list[int]) -> Percentiles:
    if not values:
        return pct(np.array([]))
    v = np.asarray(values)
    w = np.asarray(weights, dtype=float)
    order = np.argsort(v)
    v, w = v[order], w[order]
    cum = np.cumsum(w) / w.sum()
    q = [float(v[min(int(np.searchsorted(cum, x)), len(v) - 1)]) for x in (0.5, 0.9, 0.99)]
    return Percentiles(mean=float((v * w).sum() / w.sum()), p50=q[0], p90=q[1], p99=q[2])


@dataclass(frozen=True, kw_only=True, slots=True)
class SimSummary:
    requests: int
    completed: int
    duration_s: float
    ttft_s: Percentiles
    tpot_exclusive_s: Percentiles
    tpot_inclusive_s: Percentiles
    itl_s: Percentiles
    e2e_s: Percentiles
    output_tokens_per_s: float
    requests_per_s: float
    goodput_requests_per_s: float | None
    slo_attainment_frac: float | None
    kv_utilisation_mean_frac: float
    kv_utilisation_max_frac: float
    queue_length_max: int
    preemptions: int
    prefix_cache_hits: int
    iterations: int


def summarise(rec: Records, slo: Slo | None) -> SimSummary:
    done = np.isfinite(rec.finish_s)
    ttft = rec.first_token_s - rec.arrival_s
    e2e = rec.finish_s - rec.arrival_s
    out = rec.output_tokens.astype(float)
    multi = out > 1
    tpot_ex = np.where(multi, (rec.finish_s - rec.first_token_s) / np.maximum(out - 1, 1), np.nan)
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
        attain = float(ok.sum() / done.sum())
        good = float(ok.sum() / span) if span > 0 else 0.0
    kv = np.asarray(rec.kv_util_frac) if rec.kv_util_frac else np.zeros(1)
    return SimSummary(
        requests=len(rec.arrival_s), completed=int(done.sum()), duration_s=span, ttft_s=pct(ttft[done]),
        tpot_exclusive_s=pct(tpot_ex[done]), tpot_inclusive_s=pct(tpot_in[done]),
        itl_s=weighted_pct(rec.itl_s, rec.itl_weight), e2e_s=pct(e2e[done]),
        output_tokens_per_s=float(out[done].sum() / span) if span > 0 else 0.0,
        requests_per_s=float(done.sum() / span) if span > 0 else 0.0, goodput_requests_per_s=good,
        slo_attainment_frac=attain, kv_utilisation_mean_frac=float(kv.mean()),
        kv_utilisation_max_frac=float(kv.max()), queue_length_max=max(rec.queue_len, default=0),
        preemptions=rec.preemptions, prefix_cache_hits=rec.prefix_hits, iterations=rec.iterations,
    )  # fmt: skip
