"""Disaggregated prefill/decode candidates for ``aiinfra capacity --disaggregate`` (DistServe, Zhong et al.
OSDI'24; Splitwise, Patel et al. ISCA'24; the xPyD pools NVIDIA Dynamo and llm-d deploy).

A prefill pool of P replicas and a decode pool of D replicas, both of one layout (the simulator models the pair
this way, so ``--simulate`` can confirm it):

- a prefill replica runs one prompt at a time, service time S = its batch-1 TTFT (prefill is compute-bound: batching
  prompts gains little). Its queue is M/D/1; the 90th-percentile wait uses Kingman's heavy-traffic approximation
  (Kingman 1961: the wait, when there is one, is close to exponential with mean E[W]/ρ, and E[W] = ρS/(2(1 − ρ)) for
  M/D/1 by Pollaczek–Khinchine), so P(W > t) ≈ ρ·exp(−t·ρ/E[W]). The highest load ρ with
  S + W₉₀ + KV transfer ≤ the TTFT target gives the requests/s one prefill replica serves;
- the KV cache of a prompt moves over each accelerator's own link: KV bytes per token per accelerator × prompt tokens
  / the link's one-way bandwidth (scale-out between nodes), as the simulator charges it;
- a decode replica holds the largest batch B whose pure-decode TPOT (no prefill interference: that is the point of
  disaggregating) meets the TPOT target and whose KV fits; it serves B / (output tokens × TPOT) requests/s.

P = ⌈λ / prefill rate⌉ and D = ⌈λ / decode rate⌉ for the demand's request rate λ (users through the interactive
response-time law, N / (R + Z)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import date

from aiinfra.costing.prices import PriceBook, cloud_prices
from aiinfra.errors import AiinfraError
from aiinfra.planning.capacity import Price, layouts, own_system, whole_instance_bill
from aiinfra.planning.inference import estimate, model_for
from aiinfra.specs.parallelism import InferencePlan
from aiinfra.specs.scenario import Scenario
from aiinfra.specs.workload import ServingWorkload

P90 = 0.9
BISECTION_STEPS = 40


@dataclass(frozen=True, kw_only=True, slots=True)
class Disaggregated:
    """A prefill pool and a decode pool of one layout."""

    engine: str
    accelerator: str
    tp: int
    """Tensor-parallel degree of every replica, prefill and decode alike."""
    ep: int
    weight_precision: str
    prefill_replicas: int
    """Prefill replicas: ⌈demand / prefill rate per replica⌉."""
    decode_replicas: int
    """Decode replicas: ⌈demand / decode rate per replica⌉."""
    ratio: str
    """xPyD: prefill and decode replicas."""
    accelerators: int
    """Accelerators of both pools: (prefill + decode replicas) × tp."""
    accelerators_billed: int
    """Accelerators in the whole instances billed (≥ accelerators)."""
    prefill_s: float
    """A prompt's prefill on an idle prefill replica (batch-1 TTFT)."""
    kv_transfer_s: float
    """Moving one prompt's KV cache to a decode replica over the scale-out link."""
    ttft_p90_s: float
    """Prefill + 90th-percentile queueing wait + KV transfer, at the pool's load."""
    decode_batch: int
    """The largest decode batch whose TPOT meets the SLO."""
    tpot_s: float
    """TPOT of a decode replica at decode_batch."""
    prefill_requests_per_s_per_replica: float
    """Requests one prefill replica takes at the highest load whose p90 TTFT meets the SLO."""
    decode_requests_per_s_per_replica: float
    """Requests one decode replica finishes at decode_batch."""
    demand_requests_per_s: float
    """The demand as a request rate (users converted by their response and think time)."""
    usd_per_hour: float | None
    """Hourly bill of the whole instances; None when no on-demand price is known."""
    price: Price | None
    """The on-demand offer billed (None without one)."""
    verdict: str
    """Left '' (the ranking of candidates is the order of the list)."""


def wait_p90_s(rho: float, service_s: float) -> float:
    """90th-percentile M/D/1 wait by Kingman's heavy-traffic approximation (module docstring)."""
    if rho <= 1.0 - P90:
        return 0.0
    mean_w = rho * service_s / (2.0 * (1.0 - rho))
    return mean_w / rho * math.log(rho / (1.0 - P90))


def max_prefill_load(service_s: float, fixed_s: float, ttft_target_s: float | None) -> float:
    """The highest utilisation ρ of a prefill replica with service + p90 wait + ``fixed_s`` within the target."""
    if ttft_target_s is None:
        return 1.0 - 1e-3
    if service_s + fixed_s > ttft_target_s:
        return 0.0
    lo, hi = 0.0, 1.0 - 1e-9
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        if service_s + wait_p90_s(mid, service_s) + fixed_s <= ttft_target_s:
            lo = mid
        else:
            hi = mid
    return lo


def demand_rate(wl: ServingWorkload, response_s: float) -> float:
    """Requests/s of the demand: the rate, or N users with think time Z and response time R at N / (R + Z)."""
    if wl.request_rate_per_s:
        return wl.request_rate_per_s
    users = wl.users or wl.concurrency or 0
    return users / (response_s + (wl.think_time_s or 0.0))


def _candidate(
    sc: Scenario, wl: ServingWorkload, acc: str, plan: InferencePlan, prec: str, prices: PriceBook
) -> Disaggregated | str:
    slo = wl.slo
    cand = replace(
        wl,
        weight_precision=prec,  # type: ignore[arg-type]
        plan=plan,
        users=None,
        request_rate_per_s=None,
        think_time_s=None,
        concurrency=None,
    )
    cluster = sc.cluster.tables.cluster_for(acc, plan.tp, own_system(sc, acc))
    one = estimate(sc.model, cluster, replace(cand, batch=1), usage="server")
    prefill_s = one.ttft_s
    im = model_for(sc.model, cluster, cand)
    bw = cluster.scale_out_bw_one_way_bytes_per_s
    if bw is None:
        return f"the scale-out bandwidth of {acc} is unknown, so the KV transfer time is unknown"
    xfer_s = im.kv_bytes_per_token_per_accelerator * wl.input_tokens / bw
    top = estimate(sc.model, cluster, replace(cand, batch="max"), usage="server")
    target_tpot = slo.tpot_p99_s if slo else None

    def tpot(b: int) -> float:
        return estimate(sc.model, cluster, replace(cand, batch=b), usage="server").tpot_s

    lo, hi = 0, top.batch_seqs
    while lo < hi:  # the largest decode batch within the TPOT target (TPOT grows with the batch)
        mid = (lo + hi + 1) // 2
        if target_tpot is None or tpot(mid) <= target_tpot:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return "no decode batch meets the TPOT target"
    tpot_b = tpot(lo)
    decode_rate = lo / (wl.output_tokens * tpot_b)
    rho = max_prefill_load(prefill_s, xfer_s, slo.ttft_p90_s if slo else None)
    if rho <= 0:
        return f"prefill {prefill_s * 1e3:.0f} ms + KV transfer {xfer_s * 1e3:.0f} ms exceed the TTFT target"
    prefill_rate = rho / prefill_s
    ttft_p90 = prefill_s + wait_p90_s(rho, prefill_s) + xfer_s
    lam = demand_rate(wl, ttft_p90 + wl.output_tokens * tpot_b)
    p, d = math.ceil(lam / prefill_rate), math.ceil(lam / decode_rate)
    offers = cloud_prices(prices, acc, date.today(), pricing=("on-demand",))
    bill = whole_instance_bill(offers, p + d, plan.tp)
    g = math.gcd(p, d)
    return Disaggregated(
        engine=wl.engine,
        accelerator=acc,
        tp=plan.tp,
        ep=plan.ep,
        weight_precision=prec,
        prefill_replicas=p,
        decode_replicas=d,
        ratio=f"{p // g}P{d // g}D",
        accelerators=(p + d) * plan.tp,
        accelerators_billed=bill.accelerators_billed if bill else (p + d) * plan.tp,
        prefill_s=prefill_s,
        kv_transfer_s=xfer_s,
        ttft_p90_s=ttft_p90,
        decode_batch=lo,
        tpot_s=tpot_b,
        prefill_requests_per_s_per_replica=prefill_rate,
        decode_requests_per_s_per_replica=decode_rate,
        demand_requests_per_s=lam,
        usd_per_hour=bill.usd_per_hour if bill else None,
        price=bill.price if bill else None,
        verdict="",
    )


def plan_disaggregated(
    sc: Scenario, accelerators: list[str], engines: list[str], *, prices: PriceBook
) -> list[Disaggregated | str]:
    """Every disaggregated candidate (or the reason it is not one), cheapest first; ``prices``: the catalog's price
    rows."""
    wl = sc.inference
    assert wl is not None
    found: list[Disaggregated] = []
    reasons: list[str] = []
    precisions = [wl.weight_precision] + [p for p in ("fp8",) if p != wl.weight_precision]
    for engine in engines:
        ewl = replace(wl, engine=engine)  # type: ignore[arg-type]
        for acc in accelerators:
            accel = sc.cluster.tables.cluster_for(acc, 1).accelerator
            domain = accel.scale_up.domain_size if accel.scale_up else 1
            for plan in layouts(sc.model, domain):
                if plan.attention_dp:
                    continue
                for prec in precisions:
                    if prec == "fp8" and "fp8" not in accel.dense_flop_per_s:
                        continue
                    try:
                        got = _candidate(sc, ewl, acc, plan, prec, prices)
                    except AiinfraError as exc:
                        got = str(exc)
                    if isinstance(got, str):
                        reasons.append(f"{engine} tp{plan.tp} {prec} on {acc}: {got}")
                    else:
                        found.append(got)
    found.sort(key=lambda c: (c.usd_per_hour if c.usd_per_hour is not None else math.inf, c.accelerators))
    return [*found, *reasons]
