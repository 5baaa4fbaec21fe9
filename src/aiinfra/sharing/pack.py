"""Packing a portfolio of workloads onto MIG-partitioned GPUs: the fewest GPUs (or the cheapest) and a MIG layout
per GPU.

Each workload picks one option: a MIG profile (or the whole GPU) of one accelerator type and how many instances
of it it needs. A service's instances are replicas sized by the inference planner on that instance (tp = 1: the
largest batch whose steady-state TTFT and TPOT meet the SLO, as :mod:`aiinfra.planning.capacity` sizes a fleet;
replicas = ⌈in-flight sequences / batch⌉, in-flight by Little's law λ·(TTFT + out·TPOT)); a notebook or small
fine-tune needs one instance with at least its memory (and, if given, its compute share) per copy.

Optimum: an integer program solved with SciPy's ``milp`` (HiGHS). Variables: y[t, L] GPUs of type t cut into the
maximal layout L (every valid layout is part of a maximal one, :func:`aiinfra.sharing.mig.full_layouts`; the whole
GPU without MIG is one more layout), x[w, o] ∈ {0, 1} workload w takes option o. Constraints: Σ_o x[w, o] = 1;
for every type t and profile p, Σ_w Σ_{o on (t, p)} count_o · x[w, o] ≤ Σ_L n(L, p) · y[t, L]. Objective: Σ y[t, L]
(GPUs) or Σ price_t · y[t, L] (cost per hour). The greedy fallback (large portfolios, or asked): every workload
takes its option of fewest compute slices per GPU of its type, then first-fit-decreasing onto GPUs checked by
:func:`aiinfra.sharing.mig.place`; its gap is reported against the LP relaxation's bound.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from aiinfra.errors import AiinfraError, SpecError
from aiinfra.planning.capacity import loaded_latency
from aiinfra.planning.inference import estimate
from aiinfra.sharing import mig as m
from aiinfra.specs.parallelism import InferencePlan
from aiinfra.specs.scenario import Scenario

WHOLE = "whole"
"""The profile name of a whole GPU without MIG."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Option:
    """One way to run a workload: ``count`` instances of ``profile`` on accelerator type ``accelerator``."""

    accelerator: str
    profile: str
    count: int
    compute_slices: int
    """Compute slices of one instance (the GPU's compute slices for a whole GPU)."""
    detail: str = ""
    ttft_s: float | None = None
    """A service replica's steady-state TTFT at its batch on this instance (None for other workloads)."""
    tpot_s: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Workload:
    """One portfolio workload with every way it can be placed and the ways ruled out."""

    name: str
    kind: str
    options: tuple[Option, ...]
    """Ways to run it: an accelerator, a MIG profile or a whole GPU, and how many instances."""
    rejected: tuple[str, ...]
    """Options ruled out and why (profile too small, SLO missed)."""
    memory_bytes: float
    """Memory the workload needs in all (service: per replica × replicas on its smallest option), for the
    time-slicing / MPS lower bound."""


@dataclass(frozen=True, kw_only=True, slots=True)
class GpuPlan:
    """One GPU of the packing: its MIG layout and the workload on each instance."""

    accelerator: str
    layout: tuple[str, ...]
    """Instances on this GPU (profile names; ('whole',) for a GPU without MIG)."""
    assigned: tuple[str, ...]
    """The workload each instance serves ('' = idle)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Packing:
    """The solver's answer: every GPU with its layout and workloads, each workload's chosen option, the objective's
    value and its lower bound."""

    method: str
    """milp (optimal) | greedy."""
    objective: str
    """gpus | cost."""
    gpus: tuple[GpuPlan, ...]
    choice: dict[str, Option]
    """Workload name -> the option it runs on."""
    objective_value: float
    """In the objective's unit: GPUs (objective gpus) or $ per hour (objective cost)."""
    lower_bound: float
    """LP-relaxation bound of the objective (the optimum is at least this)."""


def slices_of(geo: m.MigGeometry | None, profile: str) -> int:
    """Compute slices of one instance of ``profile``: a whole GPU's slices for ``whole`` (1 without MIG geometry), else
    the profile's."""
    if profile == WHOLE or geo is None:
        return geo.compute_slices if geo else 1
    return geo.profile(profile).compute_slices


def size_service(sc: Scenario) -> tuple[int, int, float, float] | str:
    """(replicas, batch per replica, TTFT s, TPOT s) of the scenario's service on one instance of its accelerator
    (tp = 1), or why it cannot meet its SLO there."""
    wl = sc.inference
    assert wl is not None and wl.request_rate_per_s is not None
    plan = InferencePlan(tp=1)
    try:
        top = estimate(sc.model, sc.cluster, replace(wl, batch="max", plan=plan), usage="server")
    except AiinfraError as exc:
        return str(exc)
    slo = wl.slo
    lo, hi, best = 0, top.batch_seqs, None
    while lo < hi:  # the largest batch meeting the SLO (latency grows with the batch)
        mid = (lo + hi + 1) // 2
        load = loaded_latency(sc, wl, sc.cluster, plan, mid)
        ok = slo is None or (
            (slo.tpot_p99_s is None or load.tpot_s <= slo.tpot_p99_s)
            and (slo.ttft_p90_s is None or load.ttft_s <= slo.ttft_p90_s)
        )
        if ok:
            lo, best = mid, load
        else:
            hi = mid - 1
    if best is None:
        if not top.batch_seqs:
            return "the model does not fit"
        return "no batch meets the SLO (even one request misses TTFT or TPOT)"
    in_flight = math.ceil(wl.request_rate_per_s * (best.ttft_s + wl.output_tokens * best.tpot_s))
    return max(1, math.ceil(in_flight / best.batch)), best.batch, best.ttft_s, best.tpot_s


def _layouts(acc: str, geo: m.MigGeometry | None) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [(WHOLE,)]
    if geo is not None:
        out += [tuple(pl.profile for pl in lay) for lay in m.full_layouts(geo)]
    return out


def _assign(y: dict[tuple[str, tuple[str, ...]], int], choice: dict[str, Option]) -> tuple[GpuPlan, ...]:
    """Instances of every workload placed on the GPUs of each layout (any free instance of its profile)."""
    free: dict[tuple[str, str], list[tuple[int, int]]] = {}
    plans: list[list[str]] = []
    meta: list[tuple[str, tuple[str, ...]]] = []
    for (acc, lay), n in sorted(y.items()):
        for _ in range(n):
            g = len(plans)
            plans.append([""] * len(lay))
            meta.append((acc, lay))
            for k, p in enumerate(lay):
                free.setdefault((acc, p), []).append((g, k))
    for name, o in sorted(choice.items()):
        slots = free[(o.accelerator, o.profile)]
        for _ in range(o.count):
            g, k = slots.pop(0)
            plans[g][k] = name
    return tuple(GpuPlan(accelerator=a, layout=lay, assigned=tuple(p)) for (a, lay), p in zip(meta, plans, strict=True))


def _program(
    works: list[Workload], geos: dict[str, m.MigGeometry | None], price: dict[str, float], objective: str
) -> tuple[Any, Any, Any, list[tuple[str, tuple[str, ...]]], list[tuple[int, Option]]]:
    """The integer program of the module docstring: objective, constraints, bounds, y columns, x columns."""
    from scipy.optimize import Bounds, LinearConstraint  # type: ignore[import-untyped,unused-ignore]
    from scipy.sparse import coo_array  # type: ignore[import-untyped,unused-ignore]

    cols: list[tuple[str, tuple[str, ...]]] = [(a, lay) for a, g in geos.items() for lay in _layouts(a, g)]
    xs: list[tuple[int, Option]] = [(w, o) for w, wk in enumerate(works) for o in wk.options]
    ny, nx = len(cols), len(xs)
    c = np.zeros(ny + nx)
    for j, (a, _) in enumerate(cols):
        c[j] = price[a] if objective == "cost" else 1.0
    r_idx: list[int] = []
    c_idx: list[int] = []
    vals: list[float] = []
    lo: list[float] = []
    hi: list[float] = []
    for k, (w, _) in enumerate(xs):  # each workload takes exactly one option
        r_idx.append(w)
        c_idx.append(ny + k)
        vals.append(1.0)
    lo += [1.0] * len(works)
    hi += [1.0] * len(works)
    row = len(works)
    for a, g in geos.items():  # instances chosen of each (type, profile) ≤ instances the layouts provide
        for p in [WHOLE] + ([q.name for q in g.profiles] if g else []):
            users = [(k, o.count) for k, (_, o) in enumerate(xs) if o.accelerator == a and o.profile == p]
            if not users:
                continue
            for j, (aa, lay) in enumerate(cols):
                if aa == a and p in lay:
                    r_idx.append(row)
                    c_idx.append(j)
                    vals.append(-float(lay.count(p)))
            for k, count in users:
                r_idx.append(row)
                c_idx.append(ny + k)
                vals.append(float(count))
            lo.append(-np.inf)
            hi.append(0.0)
            row += 1
    matrix = coo_array((vals, (r_idx, c_idx)), shape=(row, ny + nx)).tocsr()
    cons = LinearConstraint(matrix, lo, hi)
    bounds = Bounds(np.zeros(ny + nx), np.concatenate([np.full(ny, np.inf), np.ones(nx)]))
    return c, cons, bounds, cols, xs


def lp_bound(
    works: list[Workload], geos: dict[str, m.MigGeometry | None], price: dict[str, float], objective: str
) -> float:
    """The LP relaxation's optimum: no packing does better."""
    from scipy.optimize import milp  # type: ignore[import-untyped,unused-ignore]

    c, cons, bounds, cols, xs = _program(works, geos, price, objective)
    lp = milp(c, constraints=cons, bounds=bounds, integrality=np.zeros(len(cols) + len(xs)))
    return float(lp.fun) if lp.x is not None else 0.0


def solve_milp(
    works: list[Workload],
    geos: dict[str, m.MigGeometry | None],
    price: dict[str, float],
    objective: str,
    time_limit_s: float,
) -> Packing:
    """The optimum by HiGHS (scipy.optimize.milp); also returns the LP bound."""
    from scipy.optimize import milp  # type: ignore[import-untyped,unused-ignore]

    c, cons, bounds, cols, xs = _program(works, geos, price, objective)
    ny, nx = len(cols), len(xs)
    lp = milp(c, constraints=cons, bounds=bounds, integrality=np.zeros(ny + nx))
    res = milp(c, constraints=cons, bounds=bounds, integrality=np.ones(ny + nx), options={"time_limit": time_limit_s})
    if res.x is None:
        raise AiinfraError(f"the solver found no packing ({res.message})")
    y = {cols[j]: round(res.x[j]) for j in range(ny) if round(res.x[j]) > 0}
    choice = {works[w].name: o for k, (w, o) in enumerate(xs) if res.x[ny + k] > 0.5}
    method = "milp" if res.status == 0 else "milp (time limit: best found, not proven optimal)"
    return Packing(
        method=method,
        objective=objective,
        gpus=_assign(y, choice),
        choice=choice,
        objective_value=float(res.fun),
        lower_bound=float(lp.fun) if lp.x is not None else 0.0,
    )


def solve_greedy(
    works: list[Workload],
    geos: dict[str, m.MigGeometry | None],
    price: dict[str, float],
    objective: str,
    lower_bound: float,
) -> Packing:
    """Each workload its option of the least GPU share (compute slices × count / slices per GPU, × price for
    cost); instances first-fit decreasing (largest first) onto open GPUs, a layout checked by mig.place."""
    choice: dict[str, Option] = {}
    for wk in works:

        def share(o: Option) -> tuple[float, str, str]:
            g = geos[o.accelerator]
            per_gpu = g.compute_slices if g else 1
            s = o.count * o.compute_slices / per_gpu
            return (s * (price[o.accelerator] if objective == "cost" else 1.0), o.accelerator, o.profile)

        choice[wk.name] = min(wk.options, key=share)
    items = sorted(
        ((o.compute_slices, o.accelerator, o.profile, name) for name, o in choice.items() for _ in range(o.count)),
        reverse=True,
    )
    gpus: list[tuple[str, list[str], list[str]]] = []
    open_gpus: dict[str, list[int]] = {}  # per type: MIG GPUs with compute slices left, in opening order
    used: list[int] = []
    used_mem: list[int] = []
    for slices, acc, prof, name in items:
        geo = geos[acc]
        if prof != WHOLE and geo is not None:
            mem = geo.profile(prof).memory_slices
            for g in open_gpus.setdefault(acc, []):
                if used[g] + slices > geo.compute_slices or used_mem[g] + mem > geo.memory_slices:
                    continue
                try:
                    m.place(geo, [*gpus[g][1], prof])
                except SpecError:
                    continue
                gpus[g][1].append(prof)
                gpus[g][2].append(name)
                used[g] += slices
                used_mem[g] += mem
                if used[g] == geo.compute_slices or used_mem[g] == geo.memory_slices:
                    open_gpus[acc].remove(g)
                break
            else:
                open_gpus[acc].append(len(gpus))
                gpus.append((acc, [prof], [name]))
                used.append(slices)
                used_mem.append(mem)
            continue
        gpus.append((acc, [prof], [name]))
        used.append(slices)
        used_mem.append(0)
    value = sum(price[a] if objective == "cost" else 1.0 for a, _, _ in gpus)
    plans = tuple(GpuPlan(accelerator=a, layout=tuple(lay), assigned=tuple(who)) for a, lay, who in gpus)
    return Packing(
        method="greedy", objective=objective, gpus=plans, choice=choice, objective_value=value, lower_bound=lower_bound
    )


def whole_gpu_count(works: list[Workload]) -> int:
    """No sharing: every instance a whole GPU (the whole-GPU option's count where there is one)."""
    total = 0
    for wk in works:
        whole = [o.count for o in wk.options if o.profile == WHOLE]
        total += min(whole) if whole else min(o.count for o in wk.options)
    return total


def memory_bound_count(works: list[Workload], gpu_memory_bytes: float) -> int:
    """Time-slicing / MPS: GPUs needed if memory were the only limit (first-fit decreasing by memory). A lower
    bound: the latency of workloads sharing a GPU's compute is not modelled."""
    bins: list[float] = []
    for need in sorted((w.memory_bytes for w in works), reverse=True):
        for k, used in enumerate(bins):
            if used + need <= gpu_memory_bytes:
                bins[k] = used + need
                break
        else:
            bins.append(need)
    return len(bins)


def layout_counts(p: Packing) -> dict[str, int]:
    """How many GPUs carry each layout, keyed "accelerator: profile+profile..."."""
    return dict(Counter(f"{g.accelerator}: {'+'.join(g.layout)}" for g in p.gpus))
