"""The planner's prediction for each measured run, under candidate calibration factors, and the factors' bounds.

Serving runs are predicted by planning.inference (the ``aiinfra infer`` estimate) at the run's own lengths and
load; training layouts by planning.training at the file's layout (the ``aiinfra train`` estimate of a given
plan). The bounds keep every factor physical: an efficiency scale may not lift the achieved fraction above the
peak (scale ≤ 1 / the largest efficiency the catalog's curve uses, or the accelerator's peak bandwidth over the
fitted streaming bandwidth), and a per-step overhead may not exceed the shortest measured step (TPOT or step time).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from aiinfra.calibration.fit import Param
from aiinfra.calibration.readers import ServingResult, TrainingResult
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.specs.calibration import SCALE_MIN, Factors
from aiinfra.specs.scenario import Scenario

_LOAD_KEYS = ("batch", "concurrency", "request_rate_per_s", "users", "think_time_s")


@dataclass(frozen=True, slots=True)
class Case:
    """A measured run and the scenario that reproduces it."""

    result: ServingResult | TrainingResult
    scenario: Scenario
    measured: dict[str, float]
    """metric -> measured seconds (ttft_s, tpot_s; or step_time_s)."""


def serving_cases(
    base: Scenario, results: Sequence[ServingResult], scenario_of: Callable[[Mapping[str, Any]], Scenario]
) -> list[Case]:
    """One case per serving result: the base scenario at the result's lengths and load, resolved by
    ``scenario_of`` (the application layer's resolution against the catalog)."""
    if base.inference is None or base.mapping is None:
        raise SpecError(
            "scenario.inference",
            None,
            "serving results need the deployment they measured",
            "add the inference: section (model, engine, plan, precisions) of the measured deployment",
        )
    plan = base.inference.plan
    cases = []
    for r in results:
        if r.server_tp is not None and plan is not None and plan.tp != r.server_tp:
            raise SpecError(
                f"{r.file} ({r.label}): server_info.tp_size",
                r.server_tp,
                f"the measured server ran tensor parallel {r.server_tp}, the scenario's plan tp {plan.tp}",
                f"set inference.plan.tp: {r.server_tp} in the scenario, or give the results of a tp {plan.tp} server",
            )
        data = copy.deepcopy(base.mapping)
        inf = data["inference"]
        for key in _LOAD_KEYS:
            inf.pop(key, None)
        inf["input_tokens"], inf["output_tokens"] = r.input_tokens, r.output_tokens
        if r.concurrency is not None:
            inf["concurrency"] = r.concurrency
        elif r.request_rate_per_s is not None:
            inf["request_rate_per_s"] = r.request_rate_per_s
        else:
            inf["batch"] = r.batch
        try:
            sc = scenario_of(data)
        except SpecError as exc:
            raise SpecError(f"{r.file} ({r.label}): {exc.field}", exc.value, exc.problem, exc.fix) from None
        cases.append(Case(r, replace(sc, path=base.path), {"ttft_s": r.ttft_s, "tpot_s": r.tpot_s}))
    return cases


def training_cases(
    base: Scenario, results: Sequence[TrainingResult], scenario_of: Callable[[Mapping[str, Any]], Scenario]
) -> list[Case]:
    """One case per training result: the base scenario with the result's job and layout, resolved by
    ``scenario_of``."""
    if base.training is None or base.mapping is None:
        raise SpecError(
            "scenario.training",
            None,
            "training results need the job they measured",
            "add the training: section (seq_len, global_batch_seqs, precision) of the measured job",
        )
    cases = []
    for r in results:
        data = copy.deepcopy(base.mapping)
        job = data["training"]
        job.update(r.job)
        if not r.plan and not job.get("plan"):
            raise SpecError(
                "scenario.training.plan",
                None,
                f"{r.file} is a log of one run, whose layout the "
                "scenario must give (else the planner would search its own)",
                "add training.plan: {tp: ..., pp: ..., dp: ...} of the logged run",
            )
        if r.plan:
            plan = dict(job.get("plan") or {})
            if "dp" not in r.plan and any(k in r.plan for k in ("tp", "pp", "cp")):
                plan.pop("dp", None)  # derived again from the count and the file's layout
            plan.update(r.plan)
            job["plan"] = plan
        try:
            sc = scenario_of(data)
        except SpecError as exc:
            raise SpecError(f"{r.file} ({r.label}): {exc.field}", exc.value, exc.problem, exc.fix) from None
        step = r.step_time_s
        if step is None:  # torchtitan: tokens per second per accelerator
            assert sc.training is not None and r.tokens_per_s_per_accelerator is not None
            tokens = sc.training.global_batch_seqs * sc.training.seq_len
            step = tokens / (r.tokens_per_s_per_accelerator * sc.cluster.count)
        cases.append(Case(r, replace(sc, path=base.path), {"step_time_s": step}))
    return cases


def with_factors(case: Case, factors: Factors) -> Case:
    """``case`` priced with the candidate ``factors`` in place of any calibration row (its cluster's tables answer
    them: :meth:`aiinfra.specs.tables.DomainTables.with_trial`)."""
    cluster = replace(case.scenario.cluster, tables=case.scenario.cluster.tables.with_trial(factors))
    return replace(case, scenario=replace(case.scenario, cluster=cluster))


def predict(case: Case) -> dict[str, float]:
    """The planner's figures for ``case`` (with the factors of :func:`with_factors`, where the caller set them)."""
    try:
        if isinstance(case.result, ServingResult):
            from aiinfra.planning.inference import estimate_inference

            e = estimate_inference(case.scenario)
            return {"ttft_s": e.ttft_s, "tpot_s": e.tpot_s}
        from aiinfra.planning.training import plan_training

        report = plan_training(case.scenario)
    except SpecError as exc:  # e.g. the file's lengths exceed the model's context
        raise SpecError(
            f"{case.result.file} ({case.result.label}): {exc.field}", exc.value, exc.problem, exc.fix
        ) from None
    except InfeasibleError as exc:
        raise SpecError(
            f"{case.result.file} ({case.result.label})",
            case.result.load,
            f"the scenario cannot reproduce this run: {exc}",
            "describe the measured deployment in the scenario (accelerator count, precisions)",
        ) from None
    if not report.estimates:
        raise SpecError(
            f"{case.result.file} ({case.result.label})",
            case.result.load,
            "no valid layout",
            "check tp, pp, dp against the scenario's accelerator count",
        )
    return {"step_time_s": report.estimates[0].step_time_s}


def residuals(cases: Sequence[Case], factors: Factors) -> np.ndarray:
    """log(predicted / measured) of every metric of every case, priced with the candidate ``factors``."""
    out = []
    for c in cases:
        pred = predict(with_factors(c, factors))
        out += [math.log(pred[k] / v) for k, v in c.measured.items()]
    return np.array(out)


def serving_params(base: Scenario, cases: Sequence[Case]) -> list[Param]:
    """Memory and compute efficiency, per-step overhead, communication efficiency (fit priority order)."""
    from aiinfra.analytic.efficiency import table
    from aiinfra.analytic.kernel_time import compute_dtype, memory_fit

    assert base.inference is not None
    acc, engine = base.cluster.accelerator, base.inference.engine
    _, b_inf = memory_fit(base.cluster.tables, acc, engine)
    cd = compute_dtype(acc.dense_flop_per_s, base.inference.weight_precision)
    eff = table(base.cluster.tables)
    gemm, _ = eff.curve("gemm", acc.id, dtype=cd, engine=engine)
    comm, _ = eff.curve("allreduce", acc.id, engine=engine)
    tpot_min = min(c.measured["tpot_s"] for c in cases)
    return [
        _scale("memory_efficiency_scale", acc.memory_bw_bytes_per_s / b_inf),
        _scale("compute_efficiency_scale", 1.0 / max(gemm.y) if gemm is not None else 1.0),
        Param("step_overhead_s", 0.0, tpot_min, 0.0, 0.5 * tpot_min, log=False),
        _scale("communication_efficiency_scale", 1.0 / max(comm.y) if comm is not None else 1.0),
    ]


def training_params(base: Scenario, cases: Sequence[Case]) -> list[Param]:
    """Compute and communication efficiency, per-step overhead (fit priority order)."""
    from aiinfra.analytic.efficiency import table

    assert base.training is not None
    acc = base.cluster.accelerator
    dtype = "bf16" if base.training.precision in ("bf16", "fp16") else base.training.precision
    eff = table(base.cluster.tables)
    gemm, _ = eff.curve("gemm", acc.id, dtype=dtype)
    comm, _ = eff.curve("allreduce", acc.id)
    step_min = min(c.measured["step_time_s"] for c in cases)
    return [
        _scale("compute_efficiency_scale", 1.0 / max(gemm.y) if gemm is not None else 1.0),
        _scale("communication_efficiency_scale", 1.0 / max(comm.y) if comm is not None else 1.0),
        Param("step_overhead_s", 0.0, step_min, 0.0, 0.5 * step_min, log=False),
    ]


def _scale(name: str, hi: float) -> Param:
    hi = max(hi, 1.0)
    return Param(name, SCALE_MIN, hi, 1.0, 0.5)


def plan_of(scenario: Scenario) -> dict[str, Any]:
    """What the row records of the measured deployment."""
    out: dict[str, Any] = {"model": scenario.model.id, "accelerator_count": scenario.cluster.count}
    if scenario.inference is not None:
        wl = scenario.inference
        out |= {"engine": wl.engine, "weight_precision": wl.weight_precision, "kv_precision": wl.kv_precision or "bf16"}
        if wl.plan is not None:
            out |= {"tp": wl.plan.tp, "pp": wl.plan.pp, "ep": wl.plan.ep}
    if scenario.training is not None:
        out |= {"precision": scenario.training.precision, "seq_len": scenario.training.seq_len}
    return out
