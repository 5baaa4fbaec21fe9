"""Fleets as operators design them: request classes on a mix of accelerator types, and the load over a day.

Mixed fleets (Mélange, Griggs et al. 2024, arXiv 2404.14527: give each request class the accelerator type that
serves it cheapest, pooling the instances): every class is sized on every accelerator type by
:func:`aiinfra.planning.capacity.plan_capacity` (its own lengths, demand and SLO), then an integer program chooses
one type per class and the whole instances of each type (HiGHS through SciPy's ``milp``). Replicas of different
classes may share an instance. A replica of tp accelerators needs an instance of at least tp (its tensor-parallel
traffic stays on the scale-up link); with power-of-two instance and replica sizes the instances of size ≥ τ must
hold every replica of size ≥ τ, for each size τ used — that condition is also sufficient (place the largest replicas
first). The best single type is the same program with every class on one type; the mix can only cost less or equal.

Load over the day: the chosen deployment's replicas per hour follow the demand; an autoscaler (reactive: asks for
replicas when demand rises, which serve after ``scale_up_delay_s``; predictive: asks that much ahead) is stepped
minute by minute over the profile, billing instances from the moment they are requested. Demand above the serving
capacity in a minute counts as missing the SLO (a fluid approximation of the queue that forms), which gives the SLO
attainment during ramps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date

import numpy as np

from aiinfra.costing.prices import InstancePrice, PriceBook, cloud_prices
from aiinfra.errors import AiinfraError, SpecError
from aiinfra.planning.capacity import Deployment, plan_capacity
from aiinfra.specs.fleet import HOURS_PER_DAY, LoadProfile, RequestClass
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.specs.scenario import Scenario
from aiinfra.specs.workload import ServingWorkload, Slo

MINUTES_PER_HOUR = 60
SHARE_SUM_TOLERANCE = 1e-6


@dataclass(frozen=True, kw_only=True, slots=True)
class ClassPlacement:
    """One class served on one accelerator type: its cheapest deployment there, or why none meets its SLO."""

    request_class: str
    accelerator: str
    deployment: Deployment | None
    """None when no deployment on this type meets the class's SLO."""
    reason: str = ""
    """Why deployment is None ('' otherwise)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Pool:
    """The instances of one accelerator type and offer, and the classes whose replicas they hold."""

    accelerator: str
    offer_id: str
    """prices/cloud.csv id of the instance offer billed."""
    accelerators_per_instance: int
    instances: int
    """Whole instances billed for the pool's replicas."""
    accelerators_used: int
    """Accelerators the replicas use (≤ instances × accelerators per instance)."""
    usd_per_hour: float
    """The pool's hourly bill."""
    classes: tuple[str, ...]
    """The request classes served from this pool."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FleetChoice:
    """An assignment of every class to a type and the instances it bills."""

    placements: tuple[ClassPlacement, ...]
    pools: tuple[Pool, ...]
    usd_per_hour: float
    """Hourly bill of all pools."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SingleType:
    """The cheapest fleet on one accelerator type alone, or why that type cannot serve every class."""

    accelerator: str
    choice: FleetChoice | None
    """None when some class has no deployment on this type within its SLO, or no priced offer."""
    reason: str = ""
    """Why ``choice`` is None ('' otherwise)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class MixedFleet:
    """The cheapest fleet over accelerator types, against the best fleet of one type."""

    mixed: FleetChoice
    single_types: tuple[SingleType, ...]
    best_single: SingleType | None
    """The cheapest single-type fleet that serves every class; None when no type does."""
    saving_usd_per_hour: float | None
    """The best single type's bill minus the mix's; None when no single type serves every class."""
    saving_frac: float | None
    """saving_usd_per_hour as a fraction of the best single type's bill; None as above."""
    verdict: str
    """Whether mixing types pays, in words."""


def class_demand(wl: ServingWorkload, c: RequestClass) -> tuple[int | None, float | None]:
    """(users, requests/s) of a class: its own, or its share of the workload's."""
    if c.share is None:
        return c.users, c.request_rate_per_s
    users = wl.users or wl.concurrency
    if users is not None:
        return max(1, math.ceil(c.share * users)), None
    if wl.request_rate_per_s is None:
        raise SpecError(
            "inference.users",
            None,
            f"class {c.name!r} has a share of a demand that is not given",
            "set inference.users or request_rate_per_s, or give the class its own users",
        )
    return None, c.share * wl.request_rate_per_s


def class_scenario(sc: Scenario, c: RequestClass) -> Scenario:
    """The scenario of one class: its lengths, demand, think time and SLO in place of the workload's."""
    wl = sc.inference
    assert wl is not None
    users, rate = class_demand(wl, c)
    slo = wl.slo
    if c.slo is not None:
        base = slo or Slo()
        slo = replace(
            base, ttft_p90_s=c.slo.ttft_p90_s or base.ttft_p90_s, tpot_p99_s=c.slo.tpot_p99_s or base.tpot_p99_s
        )
    cw = replace(
        wl,
        input_tokens=c.input_tokens,
        output_tokens=c.output_tokens,
        users=users,
        concurrency=None,
        request_rate_per_s=rate,
        think_time_s=c.think_time_s if c.think_time_s is not None else wl.think_time_s,
        slo=slo,
        classes=None,
        load_profile=None,
    )
    return replace(sc, inference=cw)


def check_classes(wl: ServingWorkload) -> tuple[RequestClass, ...]:
    """The workload's request classes after checking that their names are distinct and that given shares sum to 1 (a
    SpecError on inference.classes otherwise)."""
    classes = wl.classes or ()
    names = [c.name for c in classes]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise SpecError("inference.classes", dup, "two classes share this name", "name every class differently")
    shares = [c.share for c in classes if c.share is not None]
    if shares and abs(sum(shares) - 1.0) > SHARE_SUM_TOLERANCE:
        raise SpecError(
            "inference.classes",
            round(sum(shares), 6),
            "the classes' shares do not sum to 1",
            "give shares that add up to 1 (or each class its own users / request_rate_per_s)",
        )
    return classes


def _offers(prices: PriceBook, accelerator: str, today: date) -> list[InstancePrice]:
    """On-demand offers of one accelerator, the cheapest per instance size."""
    best: dict[int, InstancePrice] = {}
    for p in cloud_prices(prices, accelerator, today, pricing=("on-demand",)):
        k = p.accelerators_per_instance
        if k not in best or p.usd_per_hour < best[k].usd_per_hour:
            best[k] = p
    return sorted(best.values(), key=lambda p: p.accelerators_per_instance)


def place_classes(
    sc: Scenario,
    accelerators: list[str],
    engines: list[str] | None,
    prices: PriceBook,
    parts: Mapping[str, AcceleratorSpec],
) -> list[ClassPlacement]:
    """Every class sized on every accelerator type (the cheapest deployment of plan_capacity, or the reason)."""
    wl = sc.inference
    assert wl is not None
    out: list[ClassPlacement] = []
    for c in check_classes(wl):
        csc = class_scenario(sc, c)
        for acc in accelerators:
            try:
                best = plan_capacity(csc, [acc], engines, prices=prices, parts=parts)[0]
            except AiinfraError as exc:
                out.append(ClassPlacement(request_class=c.name, accelerator=acc, deployment=None, reason=str(exc)))
                continue
            out.append(ClassPlacement(request_class=c.name, accelerator=acc, deployment=best))
    return out


def _solve(
    placements: list[ClassPlacement], classes: list[str], offers: dict[str, list[InstancePrice]]
) -> FleetChoice | None:
    """The cheapest choice of one placement per class and whole instances per offer (None: infeasible)."""
    from scipy.optimize import Bounds, LinearConstraint, milp  # type: ignore[import-untyped,unused-ignore]

    cand = [p for p in placements if p.deployment is not None and offers.get(p.accelerator)]
    if {p.request_class for p in cand} != set(classes):
        return None
    offer_vars = [(acc, o) for acc in sorted({p.accelerator for p in cand}) for o in offers[acc]]
    nx, no = len(cand), len(offer_vars)
    cost = np.concatenate([np.zeros(nx), [o.usd_per_hour for _, o in offer_vars]])
    rows: list[np.ndarray] = []
    lo: list[float] = []
    hi: list[float] = []
    for c in classes:  # one placement per class
        r = np.zeros(nx + no)
        for i, p in enumerate(cand):
            if p.request_class == c:
                r[i] = 1.0
        rows.append(r)
        lo.append(1.0)
        hi.append(1.0)
    for acc in sorted({p.accelerator for p in cand}):
        sizes = sorted({p.deployment.tp for p in cand if p.accelerator == acc and p.deployment})
        for tau in sizes:  # instances of size >= tau hold every replica of size >= tau (module docstring)
            r = np.zeros(nx + no)
            for j, (a, o) in enumerate(offer_vars):
                if a == acc and o.accelerators_per_instance >= tau:
                    r[nx + j] = o.accelerators_per_instance
            for i, p in enumerate(cand):
                if p.accelerator == acc and p.deployment is not None and p.deployment.tp >= tau:
                    r[i] = -p.deployment.accelerators
            rows.append(r)
            lo.append(0.0)
            hi.append(np.inf)
    res = milp(
        cost,
        constraints=LinearConstraint(np.array(rows), lo, hi),
        integrality=np.ones(nx + no),
        bounds=Bounds(np.zeros(nx + no), np.concatenate([np.ones(nx), np.full(no, np.inf)])),
    )
    if res.status != 0 or res.x is None:
        return None
    x = np.round(res.x).astype(int)
    chosen = tuple(p for i, p in enumerate(cand) if x[i] == 1)
    pools = []
    for j, (acc, o) in enumerate(offer_vars):
        n = int(x[nx + j])
        if n == 0:
            continue
        on = [p for p in chosen if p.accelerator == acc]
        pools.append(
            Pool(
                accelerator=acc,
                offer_id=o.id,
                accelerators_per_instance=o.accelerators_per_instance,
                instances=n,
                accelerators_used=sum(p.deployment.accelerators for p in on if p.deployment),
                usd_per_hour=n * o.usd_per_hour,
                classes=tuple(p.request_class for p in on),
            )
        )
    return FleetChoice(placements=chosen, pools=tuple(pools), usd_per_hour=float(sum(p.usd_per_hour for p in pools)))


def plan_mixed(
    sc: Scenario,
    accelerators: list[str],
    engines: list[str] | None,
    today: date | None = None,
    *,
    prices: PriceBook,
    parts: Mapping[str, AcceleratorSpec],
) -> MixedFleet:
    """The cheapest mixed fleet for the scenario's request classes over ``accelerators``, and every single-type
    fleet beside it; ``prices``: the catalog's price rows; ``parts``: the catalog's accelerators by id."""
    wl = sc.inference
    assert wl is not None
    today = today or date.today()
    placements = place_classes(sc, accelerators, engines, prices, parts)
    classes = [c.name for c in check_classes(wl)]
    offers = {acc: _offers(prices, acc, today) for acc in accelerators}
    singles = []
    for acc in accelerators:
        mine = [p for p in placements if p.accelerator == acc]
        missing = [p for p in mine if p.deployment is None]
        if missing:
            singles.append(
                SingleType(
                    accelerator=acc, choice=None, reason=f"class {missing[0].request_class!r}: {missing[0].reason}"
                )
            )
            continue
        if not offers[acc]:
            singles.append(SingleType(accelerator=acc, choice=None, reason="no on-demand price in the catalog"))
            continue
        singles.append(SingleType(accelerator=acc, choice=_solve(mine, classes, offers)))
    mixed = _solve(placements, classes, offers)
    if mixed is None:
        why = "; ".join(f"{p.request_class} on {p.accelerator}: {p.reason}" for p in placements if p.deployment is None)
        raise SpecError(
            "inference.classes",
            ", ".join(classes),
            f"no accelerator type serves some class within its SLO ({why or 'no priced offer'})",
            "relax that class's SLO or add accelerators",
        )
    priced = [s for s in singles if s.choice is not None]
    best = min(priced, key=lambda s: s.choice.usd_per_hour if s.choice else math.inf) if priced else None
    saving = frac = None
    types_used = {p.accelerator for p in mixed.pools}
    if best is not None and best.choice is not None:
        saving = best.choice.usd_per_hour - mixed.usd_per_hour
        frac = saving / best.choice.usd_per_hour if best.choice.usd_per_hour else None
    if len(types_used) == 1:
        verdict = (
            f"mixing does not help: every class is cheapest on {next(iter(types_used))}, the single-type "
            "fleet is the answer"
        )
    elif best is None:
        verdict = "no single type serves every class: the mix is the only fleet"
    else:
        verdict = f"the mix saves ${saving:,.2f}/h ({(frac or 0.0) * 100:.1f} %) against {best.accelerator} alone"
    return MixedFleet(
        mixed=mixed,
        single_types=tuple(singles),
        best_single=best,
        saving_usd_per_hour=saving,
        saving_frac=frac,
        verdict=verdict,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Strategy:
    """One way to run the day's fleet (always-on on-demand or reserved, autoscaled on-demand, reserved base plus
    on-demand peak): its daily bill and how much of the demand it covers."""

    name: str
    usd_per_day: float | None
    """None: the catalog has no price of that kind for the offer."""
    slo_attainment_frac: float
    """Share of the day's demand the serving instances cover, minute by minute (demand-weighted; a minute covered
    in part counts in part)."""
    worst_minute_coverage_frac: float
    """Serving capacity / demand in the worst-covered minute (at most 1)."""
    reserved_instances: int = 0
    """Reserved instances always on (0 for on-demand-only strategies)."""
    note: str = ""
    """Why a strategy has no price ('' otherwise)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DayFleet:
    """The chosen deployment sized hour by hour over a load profile, and the strategies that run it, priced per day."""

    hours: int
    """Hours in the profile."""
    demand_by_hour: tuple[float, ...]
    """Demand of each hour in demand_unit."""
    replicas_by_hour: tuple[int, ...]
    """Replicas each hour needs: ⌈demand / per_replica_demand⌉."""
    instances_by_hour: tuple[int, ...]
    """Instances each hour needs (replicas packed whole into instances)."""
    per_replica_demand: float
    """The load one replica carries within the SLO, in demand_unit."""
    demand_unit: str
    """users | requests/s."""
    on_demand_offer: str
    """prices/cloud.csv id of the on-demand offer."""
    reserved_offer: str | None
    """prices/cloud.csv id of the cheapest reserved offer of the same instance size; None when there is none."""
    scale_up_delay_s: float
    """Time from asking for an instance to it serving (the profile's)."""
    autoscaler: str
    """reactive | predictive (the profile's)."""
    strategies: tuple[Strategy, ...]


def hourly_demand(wl: ServingWorkload, profile: LoadProfile, arrivals_s: np.ndarray | None) -> tuple[np.ndarray, str]:
    """Demand per hour (users or requests/s) and its unit."""
    if profile.hourly_ratio is not None:
        users = wl.users or wl.concurrency
        base = float(users) if users is not None else float(wl.request_rate_per_s or 0.0)
        return np.asarray(profile.hourly_ratio, dtype=float) * base, "users" if users is not None else "requests/s"
    assert arrivals_s is not None
    if wl.users or wl.concurrency:
        raise SpecError(
            "inference.load_profile.arrivals_csv",
            profile.arrivals_csv,
            "arrival times give a request rate, but the workload's demand is users",
            "use hourly_ratio, or give request_rate_per_s",
        )
    hour = (np.floor(arrivals_s / 3600.0).astype(np.int64)) % HOURS_PER_DAY
    days = max(1.0, float(np.ceil((arrivals_s.max() - arrivals_s.min() + 1.0) / 86400.0)))
    counts = np.bincount(hour, minlength=HOURS_PER_DAY).astype(float)
    return counts / days / 3600.0, "requests/s"


def _minute_demand(by_hour: np.ndarray) -> np.ndarray:
    """Demand each minute: linear between hour midpoints, wrapping around the period."""
    n = len(by_hour)
    t = np.arange(n * MINUTES_PER_HOUR) / MINUTES_PER_HOUR  # hours
    centres = np.arange(n) + 0.5
    xs = np.concatenate([[centres[-1] - n], centres, [centres[0] + n]])
    out: np.ndarray = np.interp(t, xs, np.concatenate([[by_hour[-1]], by_hour, [by_hour[0]]]))
    return out


def _autoscale(need: np.ndarray, delay_min: int, predictive: bool) -> tuple[np.ndarray, np.ndarray]:
    """(instances serving, instances billed) each minute of a period, in the steady state of a repeating period:
    an instance is billed from its request and serves ``delay_min`` minutes later; surplus instances are released
    at once (pending ones first)."""
    n = len(need)
    serving = np.zeros(n, dtype=np.int64)
    billed = np.zeros(n, dtype=np.int64)
    active = int(need.max())
    pending: list[int] = []  # minutes at which pending instances start serving
    for lap in range(2):  # the first lap settles the state the period starts from
        for m in range(n):
            pending.sort()
            while pending and pending[0] <= lap * n + m:
                pending.pop(0)
                active += 1
            # predictive: what the next delay_min minutes will need, requested now
            target = max(int(need[m]), int(need[(m + delay_min) % n])) if predictive else int(need[m])
            have = active + len(pending)
            if target > have:
                pending += [lap * n + m + delay_min] * (target - have)
            elif target < have:
                drop = have - target
                cancel = min(drop, len(pending))
                del pending[len(pending) - cancel :]
                active -= drop - cancel
            if lap == 1:
                serving[m], billed[m] = active, active + len(pending)
    return serving, billed


def _per_replica_demand(dep: Deployment, unit: str) -> float:
    """The load one replica of ``dep`` carries in the demand's unit; an error where it has none or no price."""
    per_replica = (
        float(dep.users_per_replica)
        if unit == "users" and dep.users_per_replica
        else dep.requests_per_s_per_replica
        if unit == "requests/s"
        else 0.0
    )
    if per_replica <= 0 or dep.price is None:
        raise SpecError(
            "inference.load_profile",
            None,
            "the chosen deployment has no per-replica load or no price",
            "check the scenario's demand and that the accelerator has an on-demand price",
        )
    return per_replica


@dataclass(frozen=True, slots=True)
class _Minutes:
    """The day minute by minute: demand, and what one instance carries of it."""

    demand: np.ndarray
    per_replica: float
    replicas_per_instance: int
    days: float

    def attainment(self, cap_instances: np.ndarray) -> tuple[float, float]:
        """(share of the demand served, worst minute's coverage) with ``cap_instances`` instances each minute."""
        cap = cap_instances * self.per_replica * self.replicas_per_instance
        minute = self.demand
        covered = np.minimum(1.0, np.divide(cap, minute, out=np.ones_like(minute), where=minute > 0))
        total = minute.sum()
        return (float((minute * covered).sum() / total) if total > 0 else 1.0), float(covered.min())


def _reserved_base(
    m: _Minutes, serving: np.ndarray, billed: np.ndarray, peak: int, od_hour: float, res_hour: float, pricing: str
) -> Strategy:
    """A reserved base B always on, on-demand instances above it: the B (0 … peak) with the lowest bill."""
    best_b, best_cost = 0, math.inf
    for b in range(peak + 1):
        cost = (b * res_hour * len(m.demand) + np.maximum(billed - b, 0).sum() * od_hour) / MINUTES_PER_HOUR / m.days
        if cost < best_cost:
            best_b, best_cost = b, cost
    att = m.attainment(np.maximum(serving, best_b))
    return Strategy(
        name=f"{pricing} base + on-demand peak",
        usd_per_day=best_cost,
        slo_attainment_frac=att[0],
        worst_minute_coverage_frac=att[1],
        reserved_instances=best_b,
    )


def plan_day(
    dep: Deployment,
    wl: ServingWorkload,
    profile: LoadProfile,
    today: date | None = None,
    arrivals_s: np.ndarray | None = None,
    *,
    prices: PriceBook,
) -> DayFleet:
    """Size the chosen deployment hour by hour and price three ways to run it over the profile (``prices``: the
    catalog's price rows)."""
    demand, unit = hourly_demand(wl, profile, arrivals_s)
    per_replica = _per_replica_demand(dep, unit)
    assert dep.price is not None
    per_instance = dep.price.accelerators_per_instance // dep.tp
    replicas = np.ceil(demand / per_replica - 1e-9).astype(np.int64)
    instances = np.ceil(replicas / per_instance).astype(np.int64)
    od_hour = dep.price.instance_usd_per_hour
    reserved = [
        p
        for p in cloud_prices(prices, dep.accelerator, today or date.today(), pricing=(profile.reserved_pricing,))
        if p.accelerators_per_instance == dep.price.accelerators_per_instance
    ]
    res_hour = min((p.usd_per_hour for p in reserved), default=None)
    res_id = min(reserved, key=lambda p: p.usd_per_hour).id if reserved else None
    m = _Minutes(_minute_demand(demand), per_replica, per_instance, len(demand) / HOURS_PER_DAY)
    need = np.ceil(m.demand / (per_replica * per_instance) - 1e-9).astype(np.int64)
    delay_min = math.ceil(profile.scale_up_delay_s / 60.0)
    serving, billed = _autoscale(need, delay_min, profile.autoscaler == "predictive")
    peak = int(need.max())
    steady = m.attainment(np.full_like(need, peak))
    auto = m.attainment(serving)
    strategies = [
        Strategy(
            name="always-on on-demand (sized for the peak)",
            usd_per_day=peak * od_hour * 24.0,
            slo_attainment_frac=steady[0],
            worst_minute_coverage_frac=steady[1],
        ),
        Strategy(
            name=f"always-on {profile.reserved_pricing} (sized for the peak)",
            usd_per_day=None if res_hour is None else peak * res_hour * 24.0,
            slo_attainment_frac=steady[0],
            worst_minute_coverage_frac=steady[1],
            reserved_instances=peak,
            note="" if res_hour is not None else f"no {profile.reserved_pricing} row for this instance",
        ),
        Strategy(
            name=f"autoscaled on-demand ({profile.autoscaler})",
            usd_per_day=float(billed.sum()) / MINUTES_PER_HOUR * od_hour / m.days,
            slo_attainment_frac=auto[0],
            worst_minute_coverage_frac=auto[1],
        ),
    ]
    if res_hour is not None:
        strategies.append(_reserved_base(m, serving, billed, peak, od_hour, res_hour, profile.reserved_pricing))
    return DayFleet(
        hours=len(demand),
        demand_by_hour=tuple(float(d) for d in demand),
        replicas_by_hour=tuple(int(r) for r in replicas),
        instances_by_hour=tuple(int(i) for i in instances),
        per_replica_demand=per_replica,
        demand_unit=unit,
        on_demand_offer=dep.price.source_id,
        reserved_offer=res_id,
        scale_up_delay_s=profile.scale_up_delay_s,
        autoscaler=profile.autoscaler,
        strategies=tuple(strategies),
    )
