"""The ``accuracy`` object of every answer: the central 80 % interval of each headline quantity from the error
model (aiinfra.accuracy.model over the shipped error table), the regime it was pooled from, and whether the scenario
lies outside every validated regime (docs/accuracy.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from aiinfra.accuracy.model import INTERVAL, Band, band, combine
from aiinfra.accuracy.regimes import (
    Regime,
    generation_of,
    load_level,
    parallelism_family,
    scale_band,
)
from aiinfra.accuracy.table import ErrorRow, shipped, shipped_meta
from aiinfra.analytic.equilibrium import utilisation
from aiinfra.specs.scenario import Scenario

NEAR_SCALE_RATIO = 4.0
"""A scenario is inside the validated scale when some measurement on its hardware generation used between 1/4 and
4 times its accelerators (the issue's rule; docs/accuracy.md)."""

#: per answer kind, each headline key -> (the regime quantity whose errors it carries, its power of that quantity)
QUANTITIES: dict[str, dict[str, tuple[str, float]]] = {
    "train": {
        "time_to_train_s": ("step_time", 1.0),
        "step_time_s": ("step_time", 1.0),
        "mfu_frac": ("step_time", -1.0),
        "tokens_per_s": ("step_time", -1.0),
        "tokens_per_s_per_accelerator": ("step_time", -1.0),
        "accelerator_hours": ("step_time", 1.0),
        "energy_j": ("step_time", 1.0),
    },
    "infer": {
        "output_tokens_per_s": ("throughput", 1.0),
        "requests_per_s": ("throughput", 1.0),
        "ttft_s": ("ttft", 1.0),
        "tpot_s": ("tpot", 1.0),
        "output_tokens_per_s_per_user": ("tpot", -1.0),
    },
    "capacity": {
        "accelerators": ("throughput", -1.0),
        "replicas": ("throughput", -1.0),
        "usd_per_hour": ("throughput", -1.0),
        "usd_per_million_output_tokens": ("throughput", -1.0),
        "ttft_s": ("ttft", 1.0),
        "tpot_s": ("tpot", 1.0),
    },
    "simulate": {
        "output_tokens_per_s": ("throughput", 1.0),
        "requests_per_s": ("throughput", 1.0),
        "ttft_s.p50": ("ttft", 1.0),
        "ttft_s.mean": ("ttft", 1.0),
        "ttft_s.p90": ("ttft", 1.0),
        "ttft_s.p99": ("ttft", 1.0),
        "tpot_exclusive_s.p50": ("tpot", 1.0),
        "tpot_exclusive_s.mean": ("tpot", 1.0),
        "tpot_exclusive_s.p90": ("tpot", 1.0),
        "tpot_exclusive_s.p99": ("tpot", 1.0),
    },
    "datacenter": {
        "storage.tokens_per_s": ("step_time", -1.0),
        "storage.data_feed_bw_bytes_per_s": ("step_time", -1.0),
    },
    "cost": {
        "duration_s": ("step_time", 1.0),
        "cheapest.total_known_usd": ("step_time", 1.0),
        "cheapest.compute_usd": ("step_time", 1.0),
        "cheapest.usd_per_million_tokens": ("step_time", 1.0),
        "energy.energy_kwh": ("step_time", 1.0),
        "energy.co2e_kg": ("step_time", 1.0),
    },
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Inputs:
    """What the regime of an answer is made of."""

    accelerator: str
    accelerators: int
    moe: bool
    tp: int = 1
    pp: int = 1
    sharding: str = "none"
    engine: str | None = None
    sequences: int | None = None
    """Sequences the load keeps in flight when it is a fixed number (a closed loop, a static batch): 1 is batch-1."""
    offline: bool = False
    """No load given: the deployment at the largest batch that fits."""
    utilisation_frac: float | None = None
    """The load over the capacity the answer's own prediction gives (aiinfra.analytic.equilibrium.utilisation); None:
    unknown (the bands pool every load level)."""
    generations: Mapping[str, str | None]
    """Accelerator id -> its catalog generation (the scenario's and the error table's accelerators)."""


def _regime(quantity: str, i: Inputs) -> Regime:
    gen = generation_of(i.accelerator, i.generations)
    arch = "moe" if i.moe else "dense"
    if quantity == "step_time":
        return Regime(
            kind="training",
            quantity=quantity,
            scale_band=scale_band(i.accelerators),
            arch=arch,
            generation=gen,
            parallelism=parallelism_family(i.tp, i.pp, i.sharding),
        )
    if quantity == "interruptions":
        return Regime(kind="reliability", quantity=quantity, generation=gen)
    return Regime(
        kind="inference",
        quantity=quantity,
        arch=arch,
        generation=gen,
        engine=i.engine or "any",
        load=load_level(i.sequences, i.offline, i.utilisation_frac, quantity),
    )


def extrapolation(kind: str, i: Inputs, table: Sequence[ErrorRow]) -> str | None:
    """Why the scenario lies outside every validated regime of ``kind`` (training, inference, reliability), or
    None when some measurement is near it."""
    gen = generation_of(i.accelerator, i.generations)
    rows = [r for r in table if r.kind == kind]
    if kind == "reliability":
        near = [r for r in rows if r.accelerators_count and _near(r.accelerators_count, i.accelerators)]
        if near:
            return None
        counts = [r.accelerators_count for r in rows if r.accelerators_count]
        nearest = min(counts, key=lambda c: abs(math.log(c / i.accelerators))) if counts else None
        return f"no published failure figure within {NEAR_SCALE_RATIO:g}× of {i.accelerators:,} accelerators" + (
            f" (nearest: {nearest:,})" if nearest else ""
        )
    same = [r for r in rows if generation_of(r.accelerator, i.generations) == gen]
    what = "training" if kind == "training" else "serving"
    if not same:
        return f"no published {what} measurement on {gen} hardware"
    if kind == "training":
        counts = [r.accelerators_count for r in same if r.accelerators_count]
        if not any(_near(c, i.accelerators) for c in counts):
            nearest = min(counts, key=lambda c: abs(math.log(c / i.accelerators))) if counts else None
            return (
                f"no published measurement within {NEAR_SCALE_RATIO:g}× of {i.accelerators:,} accelerators on "
                f"{gen} hardware" + (f" (nearest: {nearest:,})" if nearest else "")
            )
        if i.moe and not any(r.regime.arch == "moe" for r in same):
            return f"no published MoE training measurement on {gen} hardware"
        return None
    if i.engine and not any(r.regime.engine == i.engine for r in same):
        return f"no published {i.engine} measurement on {gen} hardware"
    if i.moe and not any(r.regime.arch == "moe" for r in same):
        return f"no published MoE serving measurement on {gen} hardware"
    return None


def _near(count: int, target: int) -> bool:
    return target / NEAR_SCALE_RATIO <= count <= target * NEAR_SCALE_RATIO


def _get(obj: Mapping[str, Any], dotted: str) -> Any:
    cur: Any = obj
    for part in dotted.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _finite(v: Any) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _band_fields(b: Band) -> dict[str, Any]:
    return {
        "regime": b.regime.label(),
        "rows": b.rows,
        "sources": b.sources,
        "median_abs_error_frac": b.median_abs_error_frac,
    }


def _note(b: Band, reason: str | None) -> str:
    basis = (
        f"the central {INTERVAL * 100:.0f} % interval for a setup the validation has not seen: centred on the "
        f"errors in {b.regime.label()} ({b.rows} published measurements from {b.sources} sources, "
        f"{b.sealed_rows} of them sealed), widened by the spread between publishers"
        + (f" in {b.spread_regime.label()}" if b.spread_regime != b.regime else "")
        + (
            f" and calibrated leave-one-source-out (× {b.calibration_x:.2f})"
            if b.calibrated
            else "; too few publishers to calibrate the band: it is indicative"
        )
    )
    if b.thin:
        basis += "; few rows: the bands are indicative"
    if b.top_source_rows * 3 > b.rows * 2:
        basis += (
            f"; {b.top_source_rows} of the {b.rows} rows come from one publisher ({b.top_source}), so the "
            "bands mostly say how far its setups are from the model"
        )
    if reason:
        return (
            f"outside every validated regime: {reason}; the bands are the errors of the nearest pooled regime "
            f"and may understate the error ({basis})"
        )
    return basis


def _base(table_rows: Sequence[ErrorRow]) -> dict[str, Any]:
    meta = shipped_meta() if table_rows is shipped() else {}
    return {"interval": INTERVAL, "table_made_on": meta.get("made_on"), "table_code_version": meta.get("code_version")}


def _no_band(note: str, extrapolating: bool) -> dict[str, Any]:
    return {
        "interval": INTERVAL,
        "regime": None,
        "rows": 0,
        "sources": 0,
        "median_abs_error_frac": None,
        "extrapolation": extrapolating,
        "note": note,
        "quantities": {},
    }


def bands_for(
    kind: str, i: Inputs, values: Mapping[str, Any], table: Sequence[ErrorRow], round_to: int = 0
) -> dict[str, Any]:
    """The accuracy object of one answer from its headline ``values`` (dotted keys into its JSON)."""
    spec = QUANTITIES[kind]
    quantities: dict[str, dict[str, float]] = {}
    primary: Band | None = None
    bands: dict[str, Band | None] = {}
    beside: dict[str, str] = {}
    for key, (quantity, power) in spec.items():
        v = _get(values, key)
        if not _finite(v):
            continue
        if quantity not in bands:
            bands[quantity] = band(_regime(quantity, i), table)
        b = bands[quantity]
        if b is None:
            continue
        primary = primary or b
        lo, hi = b.interval(float(v), power)
        if key == "accelerators" and round_to >= 1:  # whole replicas
            lo, hi = round_to * math.ceil(lo / round_to - 1e-9), round_to * math.ceil(hi / round_to - 1e-9)
        if key == "replicas":
            lo, hi = math.ceil(lo - 1e-9), math.ceil(hi - 1e-9)
        quantities[key] = {"low": lo, "high": hi}
        if quantity not in beside and not lo <= float(v) <= hi:
            beside[quantity] = _off_centre(quantity, b, power, above=lo > float(v))
    if primary is None:
        return _no_band("no validation row measures this answer's quantities", True)
    reason = extrapolation(primary.asked.kind, i, table)
    note = _note(primary, reason)
    if primary.asked.kind == "inference" and i.utilisation_frac is not None:
        note += (
            f"; the load is {i.utilisation_frac:.0%} of the capacity this prediction gives ({primary.asked.load} "
            "level: an error in the step time comes out of the latency amplified 1 / (1 − ρ) times below saturation "
            "and ρ / (ρ − 1) times past it)"
        )
    if beside:
        note += "; " + "; ".join(beside.values())
    return {
        **_base(table),
        **_band_fields(primary),
        "extrapolation": reason is not None,
        "note": note,
        "quantities": quantities,
    }


_QUANTITY_NAMES = {"step_time": "step time", "ttft": "TTFT", "tpot": "TPOT", "throughput": "throughput"}


def _off_centre(quantity: str, b: Band, power: float, above: bool) -> str:
    """Why an interval leaves out the predicted value itself: the band is centred on the measured errors, and the
    measurements of its regime sit that far from the model (the centre maps a value v to v·exp(−power·centre))."""
    name = _QUANTITY_NAMES.get(quantity, quantity)
    factor = math.exp(-power * b.centre_log)
    return (
        f"the {name} interval lies {'above' if above else 'below'} the predicted value: the measurements of "
        f"{b.regime.label()} sit at {factor:.2f}× the model's at the band's centre"
    )


def reliability_bands(
    i: Inputs, rel: Mapping[str, Any], useful_s: float | None, table: Sequence[ErrorRow]
) -> dict[str, Any]:
    """The reliability section's bands: interruptions from the failure-rate errors; ETTR through its loss
    (1 − ETTR taken as proportional to the failure rate: the downtime and lost-work parts are, the checkpoint part
    grows only as its square root, so the band errs wide); the time to train with failures combines the step-time
    band and the ETTR band as independent factors (log half-widths in quadrature)."""
    b = band(_regime("interruptions", i), table)
    if b is None:
        return _no_band("no published failure figure in the validation", True)
    q: dict[str, dict[str, float]] = {}
    count = rel.get("unexpected_interruptions_count")
    if _finite(count):
        lo, hi = b.interval(float(count))
        q["unexpected_interruptions_count"] = {"low": lo, "high": hi}
    ettr = rel.get("ettr_frac")
    if _finite(ettr) and ettr < 1.0:
        loss_lo, loss_hi = b.interval(1.0 - float(ettr))
        e_lo, e_hi = max(1.0 - loss_hi, 0.0), 1.0 - loss_lo
        q["ettr_frac"] = {"low": e_lo, "high": e_hi}
        wall = rel.get("time_to_train_mean_s")
        t = band(_regime("step_time", i), table)
        if _finite(wall) and t is not None and e_lo > 0 and useful_s:
            # measured / predicted in log: the step time's (−high, −low), 1/ETTR's (ln(ettr/e_hi), ln(ettr/e_lo))
            c_lo, c_hi = combine((-t.high_log, -t.low_log), (math.log(ettr / e_hi), math.log(ettr / e_lo)))
            q["time_to_train_mean_s"] = {"low": float(wall) * math.exp(c_lo), "high": float(wall) * math.exp(c_hi)}
            p90 = rel.get("time_to_train_p90_s")
            if _finite(p90):  # the same factors scale the whole distribution of the time with failures
                q["time_to_train_p90_s"] = {"low": float(p90) * math.exp(c_lo), "high": float(p90) * math.exp(c_hi)}
    reason = extrapolation("reliability", i, table)
    return {
        **_base(table),
        **_band_fields(b),
        "extrapolation": reason is not None,
        "note": _note(b, reason),
        "quantities": q,
    }


TCO_NOTE = (
    "tco prices owning and renting the cluster over its horizon at the given utilisation: no modelled time "
    "or throughput enters it, so its figures are as exact as its price rows (see `aiinfra cost` for the "
    "band of a training run's bill)"
)
DATACENTER_NOTE = (
    "datacenter sizes the nodes, racks, power and fabric from the scenario's counts and the catalog's ratings: "
    "no modelled time or throughput enters them, so they are as exact as their catalog rows"
)
UNVALIDATED_NOTES = {
    "schedule": (
        "schedule replays the trace through the scheduling policy: its queueing delays, utilisation and "
        "preemptions are the simulation's own, and no published cluster measurement in the validation checks them, "
        "so they carry no band"
    ),
    "pack": (
        "pack places the workloads on MIG instances and time slices: the placement is exact for the profiles chosen, "
        "but no published measurement of serving on MIG slices is in the validation, so their latencies carry "
        "no band"
    ),
}


def unvalidated(kind: str) -> dict[str, Any]:
    """The ``accuracy`` object of an answer no validation row measures (``schedule``, ``pack``): no band, and
    ``extrapolation: true`` with the note saying why."""
    return _no_band(UNVALIDATED_NOTES[kind], True)


MEMORY_NOTE = (
    "no published memory measurement is in the validation: the memory figures follow the formulas cited "
    "in docs/training.md, with no measured error band"
)


def _training_inputs(sc: Scenario, obj: Mapping[str, Any], gens: Mapping[str, str | None]) -> Inputs:
    """The error model's inputs of a training answer: its layout (``obj["plan"]``) and the accelerators it uses."""
    plan = obj.get("plan") or {}
    return Inputs(
        generations=gens,
        accelerator=sc.cluster.accelerator.id,
        accelerators=int(obj.get("accelerators_used") or sc.cluster.count),
        moe=sc.model.is_moe,
        tp=int(plan.get("tp", 1)),
        pp=int(plan.get("pp", 1)),
        sharding=str(plan.get("sharding", "none")),
    )


def _serving_load(
    sc: Scenario, saturated_requests_per_s: Any, saturated_seqs: Any, in_flight: Any = None
) -> tuple[int | None, bool, float | None]:
    """(sequences, offline, utilisation) of the scenario's load against the capacity its prediction gives: a request
    rate against the saturated requests/s; a closed loop of users or clients, or a static batch, by the sequences
    it keeps in flight (``in_flight`` where the prediction found them, users who think) against the most that run at
    once; no load: offline."""
    wl = sc.inference
    if wl is None:
        return None, True, None
    rate = wl.request_rate_per_s if wl.batch != "max" else None
    n = wl.concurrency or wl.users or (wl.batch if isinstance(wl.batch, int) else None)
    if rate is None and n is None:
        return None, True, None
    if rate is None and wl.think_time_s and _finite(in_flight):
        n = max(1, round(float(in_flight)))
    rho = utilisation(
        rate_per_s=rate,
        sequences=n if rate is None else None,
        saturated_requests_per_s=float(saturated_requests_per_s) if _finite(saturated_requests_per_s) else None,
        saturated_seqs=float(saturated_seqs) if _finite(saturated_seqs) else None,
    )
    return (n if rate is None else None), False, rho


def accuracy_for(
    kind: str,
    scenario: Scenario,
    values: Mapping[str, Any],
    table: Sequence[ErrorRow] | None = None,
    *,
    generations: Mapping[str, str | None],
    saturation: tuple[float | None, float | None] = (None, None),
) -> dict[str, Any]:
    """The ``accuracy`` object of answer ``kind`` (train, memory, infer, capacity, simulate, cost, tco, datacenter,
    reliability) for ``scenario`` (the regime inputs) and the answer's JSON object ``values`` (its headline
    numbers); ``table``: the error rows to use (default: the shipped error table); ``generations``: accelerator
    id -> catalog generation (read at the application boundary); ``saturation``: a ``simulate`` answer's saturated
    requests/s and sequences (all replicas) by the analytic estimate of the same scenario, for its load level (the
    simulator's own summary does not carry them), or (None, None).

    Long because it is the one dispatch over the answer kinds; each branch is a few lines."""
    rows = shipped() if table is None else table
    gens = generations
    if kind == "tco":
        return {**_no_band(TCO_NOTE, False), "regime": "prices only"}
    if kind == "memory":
        return _no_band(MEMORY_NOTE, True)
    if kind == "train":
        return bands_for("train", _training_inputs(scenario, values, gens), values, rows)
    if kind == "reliability":
        rel = values.get("reliability") or {}
        ins = _training_inputs(scenario, values, gens)
        return reliability_bands(ins, rel, values.get("time_to_train_s"), rows)
    if kind == "cost":
        return _cost(scenario, values, rows, gens)
    if kind == "datacenter":
        return _datacenter(scenario, values, rows, gens)
    if kind == "infer":
        replicas = values.get("replicas") or 1
        seqs, offline, rho = _serving_load(
            scenario,
            values.get("saturated_requests_per_s"),
            (values.get("saturated_batch_seqs") or 0) * replicas,
            (values.get("requests_in_flight") or 0) * replicas,
        )
        i = Inputs(
            generations=gens,
            accelerator=str(values.get("accelerator") or scenario.cluster.accelerator.id),
            accelerators=int(values.get("count") or scenario.cluster.count),
            moe=scenario.model.is_moe,
            tp=int(values.get("tp") or 1),
            engine=str(values.get("engine") or ""),
            sequences=seqs,
            offline=offline,
            utilisation_frac=rho,
        )
        return bands_for("infer", i, values, rows)
    if kind == "capacity":
        ch = values.get("chosen") or {}
        i = Inputs(
            generations=gens,
            accelerator=str(ch.get("accelerator") or scenario.cluster.accelerator.id),
            accelerators=int(ch.get("accelerators") or 1),
            moe=scenario.model.is_moe,
            tp=int(ch.get("tp") or 1),
            engine=str(ch.get("engine") or ""),
            # the fleet is sized to the load each replica meets its SLO at: its utilisation is the search's, not
            # known here, so the latency bands pool every load level
        )
        out = bands_for("capacity", i, ch, rows, round_to=int(ch.get("tp") or 1))
        mixed = _get(values, "fleet.mixed.usd_per_hour")
        thr = band(_regime("throughput", i), rows)
        if _finite(mixed) and thr is not None and out["quantities"]:
            # the mixed fleet's bill scales as 1 / throughput per replica, as the chosen deployment's does
            lo, hi = thr.interval(float(mixed), -1.0)
            out["quantities"]["fleet.mixed.usd_per_hour"] = {"low": lo, "high": hi}
        return out
    if kind == "simulate":
        wl = scenario.inference
        plan = wl.plan if wl is not None else None
        seqs, offline, rho = _serving_load(scenario, *saturation)
        i = Inputs(
            generations=gens,
            accelerator=scenario.cluster.accelerator.id,
            accelerators=scenario.cluster.count,
            moe=scenario.model.is_moe,
            tp=plan.tp if plan else 1,
            engine=wl.engine if wl else None,
            sequences=seqs,
            offline=offline,
            utilisation_frac=rho,
        )
        return bands_for("simulate", i, values, rows)
    raise ValueError(f"accuracy_for: unknown answer kind {kind!r}")


def _cost(
    sc: Scenario, values: Mapping[str, Any], rows: Sequence[ErrorRow], gens: Mapping[str, str | None]
) -> dict[str, Any]:
    """The bill's band: the modelled duration's band carried into the dollars that scale with it (compute, and
    the totals; storage and egress do not scale but are small beside compute). A duration the scenario gives has
    no model error. ``values["plan"]``: the training plan's layout (tp, pp, sharding)."""
    plan = values.get("training_plan")
    if not plan:
        return {
            **_no_band(
                "the duration is given (cost.usage.duration_s), not modelled: the bill is as exact as its price rows",
                False,
            ),
            "regime": "prices only",
        }
    layout = values.get("plan") or {}
    i = _training_inputs(sc, {"plan": layout}, gens)  # the whole cluster: no accelerators_used here
    out = bands_for("cost", i, values, rows)
    useful, wall = plan.get("time_to_train_s"), values.get("duration_s")
    if _finite(useful) and _finite(wall) and wall > useful * (1 + 1e-9):
        # the duration is the expected time with failures: widen by the ETTR band (reliability_bands)
        rel = reliability_bands(i, {"ettr_frac": useful / wall, "time_to_train_mean_s": wall}, useful, rows)
        t = rel["quantities"].get("time_to_train_mean_s")
        if t:
            for key, q in out["quantities"].items():
                v = _get(values, key)
                q["low"], q["high"] = v * t["low"] / wall, v * t["high"] / wall
            out["note"] += "; the failure model's band (ETTR) is combined in"
    return out


def _datacenter(
    sc: Scenario, values: Mapping[str, Any], rows: Sequence[ErrorRow], gens: Mapping[str, str | None]
) -> dict[str, Any]:
    """The storage data feed follows the training plan's tokens/s (its step-time band, inverted); the rest of the
    answer is counts and catalog ratings, with no model error. ``values["plan"]``: the training plan's layout."""
    layout = values.get("plan")
    if not layout or not _finite(_get(values, "storage.tokens_per_s")):
        return {**_no_band(DATACENTER_NOTE, False), "regime": "catalog ratings only"}
    i = _training_inputs(sc, {"plan": layout}, gens)  # the whole cluster: no accelerators_used here
    out = bands_for("datacenter", i, values, rows)
    out["note"] = f"{DATACENTER_NOTE}; the storage data feed follows the training plan's tokens/s: {out['note']}"
    return out
