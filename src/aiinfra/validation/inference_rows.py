"""Predict an inference.csv row's metric from its specs only (never from ``value``)."""

from __future__ import annotations

from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch
from aiinfra.errors import AiinfraError
from aiinfra.inference import cluster_for, estimate, prefill_time_s
from aiinfra.specs.common import validate
from aiinfra.specs.workload import ServingWorkload
from aiinfra.validation.rows import RowError, integer, model_from_row, num
from aiinfra.validation.types import RowPrediction

#: context length at which the ITL slope is evaluated (the vLLM sweep spans 256–125k input tokens)
SLOPE_CONTEXT_TOKENS = 65536


def predict_row(row: dict[str, str]) -> RowPrediction:
    try:
        return _predict(row)
    except (RowError, AiinfraError) as exc:
        return RowPrediction(None, reason=str(exc))


def _predict(row: dict[str, str]) -> RowPrediction:
    model, flags = model_from_row(row)
    n = integer(row, "num_accelerators") or 1
    tp = integer(row, "tp")
    if tp is None:
        tp = n
        flags.append(f"tp blank: assumed tp = num_accelerators = {n}")
    pp = integer(row, "pp", 1) or 1
    wp = (row.get("weight_precision") or "bf16").strip()
    kvp = (row.get("kv_precision") or "").strip()
    engine = (row.get("engine") or "vllm").strip()
    if not kvp:
        kvp = "bf16"  # the engines' default KV dtype when none is requested
        flags.append(f"kv_precision blank: assumed {kvp}")
    if kvp == "fp4":
        raise RowError("fp4 KV cache not modelled")
    if engine != "vllm":
        flags.append(f"{engine}: batch bounded by KV capacity only (engine's own scheduler caps not in the catalog)")
    metric = row["metric"].strip()
    mode = row["mode"].strip()
    inp = integer(row, "input_tokens")
    out = integer(row, "output_tokens")
    if "sliding" in (row.get("notes") or "").lower():
        flags.append("sliding-window layers modelled as full attention")
    cluster = cluster_for(row["accelerator"].strip(), n)
    im = InferenceModel(model=model, cluster=cluster, tp=tp, pp=pp, weight_precision=wp, kv_precision=kvp)
    if metric == "itl_intercept_s":
        return RowPrediction(im.iteration_time_s(StepBatch.decode(1, 0)), "; ".join(flags))
    if metric == "itl_slope_s_per_context_token":
        t0 = im.iteration_time_s(StepBatch.decode(1, 0))
        t1 = im.iteration_time_s(StepBatch.decode(1, SLOPE_CONTEXT_TOKENS))
        return RowPrediction((t1 - t0) / SLOPE_CONTEXT_TOKENS, "; ".join(flags))
    if inp is None or out is None:
        raise RowError("input_tokens or output_tokens blank (mean prompt length not stated by the source)")
    batch = integer(row, "batch_or_concurrency")
    wl_data: dict[str, object] = {"weight_precision": wp, "kv_precision": kvp, "input_tokens": inp,
                                  "output_tokens": max(out, 1), "plan": {"tp": tp, "pp": pp}}  # fmt: skip
    budget = None if engine == "vllm" else inp * (batch or 1)  # TRT-LLM prefills whole prompts
    if mode == "offline":
        wl_data["batch"] = "max"
    elif mode in ("batch", "concurrency"):
        wl_data["batch"] = batch or 1
    elif mode == "poisson":
        wl_data["batch"] = "max"
    wl = validate(ServingWorkload, wl_data, where=f"row {row['id']}")
    est = estimate(model, cluster, wl, engine=engine, cap_batch=engine == "vllm", prefill_budget_tokens=budget)
    details = {"batch_seqs": est.batch_seqs, "kv_capacity_tokens": est.kv_capacity_tokens,
               "decode_bound": est.decode_bound, "prefill_bound": est.prefill_bound}  # fmt: skip
    if mode == "poisson":
        return _poisson(row, im, est.output_tokens_per_s, inp, out, metric, flags, details)
    if metric == "output_tokens_per_s":
        return RowPrediction(est.output_tokens_per_s, "; ".join(flags), details)
    if metric == "requests_per_s":
        return RowPrediction(est.requests_per_s, "; ".join(flags), details)
    if metric == "ttft_s":
        return RowPrediction(est.ttft_s, "; ".join(flags), details)
    if metric == "tpot_s":
        return RowPrediction(est.tpot_s, "; ".join(flags), details)
    raise RowError(f"metric {metric!r} in mode {mode!r} not modelled")


def _poisson(
    row: dict[str, str], im: InferenceModel, saturated_tps: float, inp: int, out: int, metric: str,
    flags: list[str], details: dict[str, object],
) -> RowPrediction:  # fmt: skip
    """Open-loop arrivals at rate λ below saturation: throughput λ·out; the decode batch N follows Little's
    law N = λ·(TTFT + out·TPOT), solved by fixed-point iteration; prefill work takes a share
    ρ = λ·t_prefill(in) of the time, stretching TTFT and TPOT by 1/(1 − ρ)."""
    rate = num(row, "request_rate_per_s")
    if not rate:
        raise RowError("request_rate_per_s blank")
    flags.append("Poisson load: analytic Little's-law approximation (no queueing simulation)")
    t_pre, _ = prefill_time_s(im, 1, inp, 2048)
    rho = rate * t_pre
    capacity_rps = saturated_tps / out
    if rho >= 1.0 or rate >= capacity_rps:
        flags.append("arrival rate at or above the predicted capacity: saturated")
        values = {"output_tokens_per_s": saturated_tps, "requests_per_s": capacity_rps}
        if metric in values:
            return RowPrediction(values[metric], "; ".join(flags), details)
        raise RowError("latency of a saturated (unstable) queue is not defined analytically")
    n_seqs = 1.0
    tpot = ttft = 0.0
    for _ in range(50):
        tpot = im.iteration_time_s(StepBatch.decode(max(1, round(n_seqs)), inp + out // 2)) / (1.0 - rho)
        ttft = t_pre / (1.0 - rho)
        n_seqs = rate * (ttft + out * tpot)
    values = {"output_tokens_per_s": rate * out, "requests_per_s": rate, "ttft_s": ttft, "tpot_s": tpot}
    if metric not in values:
        raise RowError(f"metric {metric!r} not modelled for poisson rows")
    return RowPrediction(values[metric], "; ".join(flags), details)
