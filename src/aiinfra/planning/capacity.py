"""`aiinfra capacity`: the cheapest deployment that serves a demand within its SLOs.

For each candidate (serving engine, accelerator, layout, weight precision, speculative decoding on/off) one replica is
sized on the loaded-replica model (:mod:`aiinfra.planning.loaded`, the one ``aiinfra infer`` reports): the most users
it serves (thinking ``think_time_s`` between requests, or always in flight) or the highest Poisson request rate, with
its TTFT p90, TPOT p99 and end-to-end p99 within the SLO and the peaks of its requests in flight within the KV cache
and the engine's caps. Replicas = ⌈users / users per replica⌉ or ⌈rate / rate per replica⌉.
Prices come from catalog/data/prices/cloud.csv (on-demand): whole instances are billed, never fractions of one, so
each candidate takes the offer with the lowest bill for its replicas (a replica on one instance: instances of at least
tp accelerators, floor(size / tp) replicas each) and says how many billed accelerators sit idle.

Layouts: tensor parallelism over tp ∈ TP_OPTIONS within one scale-up domain; for MoE models also the experts split
ep = tp ways under tensor-parallel attention (vLLM ``--enable-expert-parallel``, TensorRT-LLM ``--ep``), and attention
data parallelism over the tp ranks with ep = tp (TensorRT-LLM ``enable_attention_dp`` + ``--ep``, vLLM/SGLang DP
attention + expert parallelism), the layout NVIDIA's published MoE throughput runs use (TensorRT-LLM perf-overview,
"For MoE models": ``--ep $ep_size`` with ``enable_attention_dp``). DP attention needs no head split, so it is offered
whatever the head counts.

Engines differ in what the catalog knows of them (catalog/data/engines.yaml, efficiency rows with ``engine``): their
scheduler defaults (max_num_seqs, step token budget), how their KV allocator sizes and reserves the cache (vLLM
admits at the running context, TensorRT-LLM's no-evict scheduler reserves the full one) and, where measured, their
own kernel timings (NVIDIA AIConfigurator's vLLM and TensorRT-LLM tables). Nothing else about them is modelled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date

from aiinfra.costing.prices import InstancePrice, PriceBook, cloud_prices
from aiinfra.errors import AiinfraError, InfeasibleError, SpecError, UnknownIdError, suggest
from aiinfra.planning.inference import estimate, estimate_with_replica
from aiinfra.planning.loaded import LoadPoint
from aiinfra.specs.hardware import AcceleratorSpec, ClusterSpec
from aiinfra.specs.model import ModelArch
from aiinfra.specs.parallelism import InferencePlan
from aiinfra.specs.scenario import Scenario
from aiinfra.specs.workload import ENGINES, ServingWorkload

TP_OPTIONS = (1, 2, 4, 8)


@dataclass(frozen=True, kw_only=True, slots=True)
class Price:
    """The cloud offer a deployment is priced at (its prices/cloud.csv row), per accelerator-hour and per instance."""

    usd_per_accelerator_hour: float
    source_id: str
    """The prices/cloud.csv row id."""
    read_on: str
    age_days: int
    """Days since the price was read (0 when undated; ``stale`` says so)."""
    accelerators_per_instance: int = 1
    """Accelerators in the priced instance (the unit billed)."""
    instance_usd_per_hour: float = 0.0
    """Hourly price of one whole instance (0: not recorded)."""
    stale: bool = False
    """Read more than prices.STALE_AFTER_DAYS days ago (or undated): `aiinfra prices refresh` updates it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Deployment:
    """One candidate of ``aiinfra capacity``: a layout of one engine on one accelerator type, the replicas that carry
    the demand, their latency and bill, and its verdict."""

    engine: str
    accelerator: str
    tp: int
    """Tensor-parallel degree: accelerators per replica."""
    ep: int = 1
    """Expert-parallel degree (1 = experts split tensor-parallel like the dense layers)."""
    attention_dp: bool = False
    """Attention data-parallel over the tp ranks (each rank its own sequences and KV cache)."""
    weight_precision: str
    speculative: bool
    batch_per_replica: int
    """Sequences one replica holds at the sized load (0 on a rejected row)."""
    replicas: int
    """Replicas that carry the demand (0 on a rejected row)."""
    accelerators: int
    """Accelerators the replicas use."""
    accelerators_billed: int = 0
    """Accelerators in the instances billed (whole instances: ≥ accelerators; equal when no price is known)."""
    instances: int = 0
    """Instances billed (0: no price known)."""
    ttft_s: float | None
    """None on a rejected row (no deployment, so no latency)."""
    tpot_s: float | None
    """Mean TPOT at the sized load; None on a rejected row."""
    output_tokens_per_s: float
    """Output tokens per second of all replicas, each at its largest batch (the fleet's throughput headroom)."""
    usd_per_hour: float | None
    """Hourly bill of the whole instances billed; None when no price is known."""
    usd_per_million_output_tokens: float | None
    """usd_per_hour over output_tokens_per_s, per million tokens (None without a price)."""
    price: Price | None
    """The offer billed; None when the catalog prices none for this accelerator."""
    verdict: str
    """"chosen", why a feasible row lost (e.g. "costs $12/h more"), or "rejected: ..." with the reason."""
    users_per_replica: int | None = None
    """The most users one replica serves within the SLO (demand given as users)."""
    requests_per_s_per_replica: float = 0.0
    """Requests per second one replica serves at that load."""
    ttft_p90_s: float | None = None
    """90th-percentile TTFT at the sized load (None on a rejected row)."""
    tpot_p99_s: float | None = None
    """99th-percentile TPOT at the sized load (None on a rejected row)."""


def _price(p: InstancePrice) -> Price:
    return Price(
        usd_per_accelerator_hour=p.usd_per_accelerator_hour,
        source_id=p.id,
        read_on=p.read_on,
        age_days=p.age_days if p.age_days is not None else 0,
        accelerators_per_instance=p.accelerators_per_instance,
        instance_usd_per_hour=p.usd_per_hour,
        stale=p.stale,
    )


def cheapest_price(book: PriceBook, accelerator: str, today: date | None = None) -> Price | None:
    """The cheapest on-demand price per accelerator-hour of the catalog's cloud prices (None when none)."""
    prices = cloud_prices(book, accelerator, today, pricing=("on-demand",))
    return _price(prices[0]) if prices else None


@dataclass(frozen=True, slots=True)
class Bill:
    """Whole instances of one offer holding ``replicas`` replicas of ``tp`` accelerators each."""

    price: Price
    instances: int
    """Whole instances billed."""
    accelerators_billed: int
    """Accelerators in those instances."""
    usd_per_hour: float
    """instances × the instance's hourly price."""


def whole_instance_bill(offers: list[InstancePrice], replicas: int, tp: int) -> Bill | None:
    """The offer with the lowest hourly bill for ``replicas`` replicas of ``tp`` accelerators, billed by the whole
    instance: a replica stays inside one instance (its tensor-parallel traffic on the instance's scale-up link), so
    an instance of k ≥ tp accelerators holds floor(k / tp) replicas and ceil(replicas / floor(k / tp)) instances
    are billed. None when no offer has tp accelerators in one instance."""
    best: Bill | None = None
    for p in offers:
        per_instance = p.accelerators_per_instance // tp
        if per_instance == 0:
            continue
        instances = math.ceil(replicas / per_instance)
        bill = Bill(_price(p), instances, instances * p.accelerators_per_instance, instances * p.usd_per_hour)
        if best is None or (bill.usd_per_hour, bill.accelerators_billed) < (
            best.usd_per_hour,
            best.accelerators_billed,
        ):
            best = bill
    return best


@dataclass(frozen=True, slots=True)
class Loaded:
    """Steady-state latency of a replica running ``batch`` sequences with requests arriving continuously."""

    batch: int
    ttft_s: float
    tpot_s: float


def loaded_latency(sc: Scenario, wl: ServingWorkload, cluster: ClusterSpec, plan: InferencePlan, batch: int) -> Loaded:
    """Mean TTFT and TPOT of a replica of ``plan`` holding ``batch`` sequences in the steady state of continuous
    batching: every iteration also prefills the B/out prompts that replace finished requests (Little's law), so
    the prefill share of the replica's time stretches both TPOT and a new request's TTFT
    (:func:`aiinfra.planning.inference.steady_state_step`)."""
    est = estimate(
        sc.model,
        cluster,
        replace(wl, batch=None, users=None, request_rate_per_s=None, think_time_s=None, concurrency=batch, plan=plan),
    )
    return Loaded(batch, est.ttft_s, est.tpot_s)


@dataclass(frozen=True, slots=True)
class Sized:
    """The most load one replica serves within the SLO (:mod:`aiinfra.planning.loaded`)."""

    point: LoadPoint
    users: int | None
    """Users per replica (demand given as users); None for a request rate."""
    rate_per_s: float
    full_rate_per_s: float = 0.0
    """Requests per second one replica serves at its largest batch (the headroom the tie-break compares)."""


def own_system(sc: Scenario, accelerator: str) -> str | None:
    """The scenario's system for a replica of ``accelerator`` when it is the scenario's own part on a switchless
    board (its pairs' links carry over to every replica: ClusterSpec.scale_up_peer_bw_one_way_bytes_per_s), else
    None: the part's usual system, as for any other candidate."""
    c = sc.cluster
    if accelerator == c.accelerator.id and c.scale_up_peer_bw_one_way_bytes_per_s is not None:
        return c.system_id
    return None


def _size_replica(sc: Scenario, wl: ServingWorkload, acc: str, plan: InferencePlan) -> tuple[Sized | None, str]:
    """The largest load one replica of ``plan`` on ``acc`` serves within the SLO's percentiles: users (thinking
    ``think_time_s``, or always in flight) or a Poisson request rate."""
    cluster = sc.cluster.tables.cluster_for(acc, plan.tp, own_system(sc, acc))
    try:
        _, rep = estimate_with_replica(
            sc.model, cluster, replace(wl, batch="max", plan=plan), usage="server", grid=True
        )
    except AiinfraError as exc:
        return None, str(exc)
    assert rep is not None
    if wl.request_rate_per_s and not (wl.users or wl.concurrency):
        found = rep.max_rate(wl.slo)
        if found is None:
            return None, "no load meets the SLO (even a trickle of requests misses TTFT or TPOT)"
        return Sized(found[1], None, found[0], rep.saturation_rate_per_s()), ""
    got = rep.max_users(wl.slo, wl.think_time_s or 0.0)
    if got is None:
        return None, "no load meets the SLO (even one user misses TTFT or TPOT)"
    return Sized(got[1], got[0], got[1].requests_per_s, rep.saturation_rate_per_s()), ""


def plan_capacity(
    scenario: Scenario,
    accelerators: list[str] | None = None,
    engines: list[str] | None = None,
    *,
    prices: PriceBook,
    parts: Mapping[str, AcceleratorSpec],
) -> list[Deployment]:
    """Every candidate, cheapest first (``verdict`` says why each lost); ``engines`` None = the scenario's;
    ``prices``: the catalog's price rows; ``parts``: the catalog's accelerators by id."""
    wl = scenario.inference
    if wl is None:
        raise SpecError("inference", None, "the scenario has no inference section", "add inference: {...}")
    if not (wl.users or wl.concurrency or wl.request_rate_per_s):
        raise SpecError(
            "inference.users",
            None,
            "capacity needs a demand",
            "set inference.users (concurrent users) or inference.request_rate_per_s",
        )
    accs = accelerators or [scenario.cluster.accelerator.id]
    options: list[Deployment] = []
    for engine in engines or [wl.engine]:
        if engine not in ENGINES:
            raise SpecError(
                "engines",
                engine,
                f"unknown serving engine (known: {', '.join(ENGINES)})",
                "name engines from that list, comma-separated",
            )
        options += _candidates(scenario, replace(wl, engine=engine), accs, prices, parts)  # type: ignore[arg-type]
    feasible = [o for o in options if o.accelerators > 0]
    if not feasible:
        raise InfeasibleError("no deployment meets the SLO: " + "; ".join(sorted({o.verdict for o in options})))
    # ties (same bill) go to the candidate with the most throughput headroom: the lowest $ per million output
    # tokens when every replica runs at its batch
    key = (
        (lambda o: (o.usd_per_hour, o.accelerators, o.usd_per_million_output_tokens or 0.0))
        if all(o.usd_per_hour for o in feasible)
        else (lambda o: (o.accelerators, -o.output_tokens_per_s, 0.0))
    )
    ranked = sorted(feasible, key=key)
    best = ranked[0]
    out = [replace(best, verdict="chosen")]
    for o in ranked[1:]:
        if o.usd_per_hour is not None and best.usd_per_hour is not None:
            why = f"costs ${o.usd_per_hour - best.usd_per_hour:,.0f}/h more"
            if round(o.usd_per_hour - best.usd_per_hour) == 0 and o.usd_per_million_output_tokens is not None:
                why = same_bill_verdict(
                    o.usd_per_hour - best.usd_per_hour,
                    o.usd_per_million_output_tokens - (best.usd_per_million_output_tokens or 0.0),
                )
        else:
            why = f"needs {o.accelerators - best.accelerators} more accelerators"
        out.append(replace(o, verdict=why))
    out += [o for o in options if o.accelerators == 0]
    return out


def same_bill_verdict(usd_per_hour_more: float, usd_per_million_more: float) -> str:
    """Why a row whose hourly bill rounds to the chosen one's lost: the sign of each difference in words (a row can
    cost a few cents an hour less yet lose on the key's tie-break, or cost more per million tokens at full batch)."""
    hourly = (
        f"${abs(usd_per_hour_more):.2f}/h {'more' if usd_per_hour_more > 0 else 'less'}"
        if round(usd_per_hour_more, 2)
        else "same $/h"
    )
    if round(usd_per_million_more, 2) > 0:
        return (
            f"same bill ({hourly}), less headroom: ${usd_per_million_more:.2f} more per million output tokens "
            "at full batch"
        )
    if round(usd_per_million_more, 2) < 0:
        return (
            f"same bill ({hourly}), ${-usd_per_million_more:.2f} less per million output tokens at full batch, "
            "but the chosen row needs fewer accelerators"
        )
    return f"same bill ({hourly}), same $ per million output tokens: ranked after on accelerators"


def layouts(model: ModelArch, domain: int) -> list[InferencePlan]:
    """The replica layouts the search tries within a scale-up domain of ``domain`` accelerators (module docstring):
    tensor parallelism where the heads split evenly, and for MoE models ep = tp under it and under attention DP."""
    plans: list[InferencePlan] = []
    for tp in TP_OPTIONS:
        if tp > domain:
            continue
        experts_split = model.is_moe and tp > 1 and model.num_experts % tp == 0
        if not (model.num_heads % tp or (model.kv_heads % tp and tp % model.kv_heads)):
            plans.append(InferencePlan(tp=tp))
            if experts_split:
                plans.append(InferencePlan(tp=tp, ep=tp))
        if experts_split:
            plans.append(InferencePlan(tp=tp, ep=tp, attention_dp=True))
    return plans


@dataclass(frozen=True, slots=True)
class _Option:
    """One candidate's identity: accelerator, layout, precision and speculation, with the accelerator's offers."""

    acc_id: str
    plan: InferencePlan
    wl: ServingWorkload
    offers: list[InstancePrice]
    price: Price | None


def _options(
    scenario: Scenario, wl: ServingWorkload, accs: list[str], prices: PriceBook, parts: Mapping[str, AcceleratorSpec]
) -> list[_Option]:
    """Every (accelerator, layout, precision, speculation) of ``wl.engine`` to size, in the order they are shown:
    the workload's precision first, then FP8 (where the part has FP8 rates) and INT4; with and without the draft."""
    precisions = [wl.weight_precision] + [p for p in ("fp8", "int4") if p != wl.weight_precision]
    out: list[_Option] = []
    for acc_id in accs:
        given = "hardware.accelerator" if acc_id == scenario.cluster.accelerator.id else "--accelerators"
        if acc_id not in parts:
            raise UnknownIdError(given, acc_id, "accelerators", suggest(acc_id, list(parts)))
        acc = parts[acc_id]
        offers = cloud_prices(prices, acc_id, pricing=("on-demand",))
        price = _price(offers[0]) if offers else None
        # PCIe-only parts split a replica over the GPUs of one server (NCCL's ring over PCIe, comms.py)
        domain = acc.scale_up.domain_size if acc.scale_up else (acc.default_per_node or 1)
        for plan in layouts(scenario.model, domain):
            for prec in precisions:
                if prec == "fp8" and "fp8" not in acc.dense_flop_per_s:
                    continue
                for spec in [wl.speculative, None] if wl.speculative else [None]:
                    cand = replace(wl, weight_precision=prec, speculative=spec)  # type: ignore[arg-type]
                    out.append(_Option(acc_id, plan, cand, offers, price))
    return out


def _rejected(o: _Option, why: str) -> Deployment:
    """A candidate that cannot serve the load, with the reason."""
    return Deployment(
        engine=o.wl.engine,
        accelerator=o.acc_id,
        tp=o.plan.tp,
        ep=o.plan.ep,
        attention_dp=o.plan.attention_dp,
        weight_precision=o.wl.weight_precision,
        speculative=o.wl.speculative is not None,
        batch_per_replica=0,
        replicas=0,
        accelerators=0,
        ttft_s=None,
        tpot_s=None,
        output_tokens_per_s=0.0,
        usd_per_hour=None,
        usd_per_million_output_tokens=None,
        price=o.price,
        verdict=f"rejected: {why}",
    )


def _deployment(o: _Option, est: Sized) -> Deployment:
    """The fleet of replicas of a sized candidate that carries the demand, billed by the whole instance."""
    wl, tp, p = o.wl, o.plan.tp, est.point
    users = wl.users or wl.concurrency
    if est.users is not None and users is not None:
        replicas = math.ceil(users / est.users)
    else:
        assert wl.request_rate_per_s is not None
        replicas = math.ceil(wl.request_rate_per_s / est.rate_per_s)
    n = replicas * tp
    tps = replicas * est.full_rate_per_s * wl.output_tokens  # every replica at its largest batch
    bill = whole_instance_bill(o.offers, replicas, tp)
    usd_h = bill.usd_per_hour if bill else None
    return Deployment(
        engine=wl.engine,
        accelerator=o.acc_id,
        tp=tp,
        ep=o.plan.ep,
        attention_dp=o.plan.attention_dp,
        weight_precision=wl.weight_precision,
        speculative=wl.speculative is not None,
        batch_per_replica=p.batch,
        replicas=replicas,
        accelerators=n,
        accelerators_billed=bill.accelerators_billed if bill else n,
        instances=bill.instances if bill else 0,
        ttft_s=p.ttft_s,
        tpot_s=p.tpot_s,
        output_tokens_per_s=tps,
        usd_per_hour=usd_h,
        users_per_replica=est.users,
        requests_per_s_per_replica=est.rate_per_s,
        ttft_p90_s=p.ttft.p90_s,
        tpot_p99_s=p.tpot.p99_s,
        usd_per_million_output_tokens=usd_h / (tps * 3600) * 1e6 if usd_h else None,
        price=bill.price if bill else o.price,
        verdict="",
    )


def _candidates(
    scenario: Scenario,
    wl: ServingWorkload,
    accs: list[str],
    prices: PriceBook,
    parts: Mapping[str, AcceleratorSpec],
) -> list[Deployment]:
    """Every (accelerator, layout, precision, speculation) candidate of ``wl.engine``, rejected ones with their
    reason."""
    out: list[Deployment] = []
    for o in _options(scenario, wl, accs, prices, parts):
        est, why = _size_replica(scenario, o.wl, o.acc_id, o.plan)
        out.append(_rejected(o, why) if est is None else _deployment(o, est))
    return out
