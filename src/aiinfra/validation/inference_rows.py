"""Predict an inference.csv row's metric from its specs only (never from ``value``)."""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass

from aiinfra.analytic.equilibrium import utilisation
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.model_figures import params_total
from aiinfra.analytic.step_time import StepBatch
from aiinfra.planning.engine_profile import SchedulerDefaults, Usage, scheduler_defaults, trtllm_bench_limits
from aiinfra.planning.inference import estimate, kv_capacity
from aiinfra.sim.metrics import SimSummary
from aiinfra.specs.benchmark import BenchmarkSpec
from aiinfra.specs.common import validate
from aiinfra.specs.engine import EngineProfile, parse_version
from aiinfra.specs.model import ModelArch
from aiinfra.specs.workload import ServingWorkload
from aiinfra.validation import switches
from aiinfra.validation.benchmark_rows import (
    benchmark_of,
    fill_lengths,
    is_mlperf,
    latency_limit_flags,
    length_dists,
    prefix_cache,
    sim_settings,
)
from aiinfra.validation.rows import (
    RowError,
    catalog_model_for,
    expert_layout,
    integer,
    model_from_row,
    num,
    reasoned,
)
from aiinfra.validation.types import RowPrediction, RowTables

#: the ITL slope is taken between these two contexts, inside the vLLM sweep's 256–125k input tokens (from its
#: shortest input, so that costs every decode pays whatever its context — a sliding-window layer's call — stay out)
SLOPE_FROM_TOKENS = 256
SLOPE_CONTEXT_TOKENS = 65536


@reasoned("inference")
def predict_row(row: dict[str, str], tables: RowTables) -> RowPrediction:
    """The row's metric from its columns: layout, formats and engine, then by metric an ITL fit, the KV capacity,
    a simulation (Poisson and closed-loop rows) or the analytic estimate. Long (about 100 lines) because it reads
    the row's columns once each, in the order its assumption flags are reported (the flags' order is the reason
    text `validate` prints); its parts that stand alone are the helpers below."""
    model, flags = model_from_row(row, tables.models)
    n = integer(row, "num_accelerators") or 0
    if not n:
        # blank: one replica of the stated layout (tp x pp), else one accelerator
        n = (integer(row, "tp") or 1) * (integer(row, "pp", 1) or 1)
        flags.append(f"num_accelerators blank: assumed {n} (one replica of the stated tp x pp)")
    tp = integer(row, "tp")
    if tp is None:
        return _best_tp(row, n, tables)
    pp = integer(row, "pp", 1) or 1
    wp = (row.get("weight_precision") or "bf16").strip()
    kvp = _kv_precision(row, wp, flags)
    engine = _engine(row, flags, tables)
    steps = scheduler_steps(row)
    context = stated_context_tokens(row)
    if context is not None and context != model.max_seq_len:
        model = dataclasses.replace(model, max_seq_len=context)
        flags.append(f"context length {context} tokens as the run states (its engine defaults follow it)")
    elif not model.max_seq_len:
        # the engines' default max_model_len is the model's context: the catalog model's where the row's columns
        # give none (never below the run's own request, which the engine served), which an older release's
        # scheduler defaults follow in every mode (vLLM V0: chunked prefill above 32K, its token budget, 256
        # sequences)
        cat = catalog_model_for(row.get("model_name") or "", tables.models)
        if cat is not None and cat.max_seq_len:
            request = (integer(row, "input_tokens") or 0) + (integer(row, "output_tokens") or 0)
            model = dataclasses.replace(model, max_seq_len=max(cat.max_seq_len, request))
    overlap = on_off(row, "overlap_scheduling")
    if overlap is not None:
        flags.append(f"overlap scheduler {'on' if overlap else 'off'} as the run states")
    chunked = on_off(row, "chunked_prefill")
    if chunked is not None:
        flags.append(f"chunked prefill {'on' if chunked else 'off'} as the run states")
    graphs = on_off(row, "cuda_graphs")
    if graphs is not None:
        flags.append(f"CUDA graphs {'on' if graphs else 'off (every step issued eagerly)'} as the run states")
    metric = row["metric"].strip()
    mode = row["mode"].strip()
    inp = integer(row, "input_tokens")
    out = integer(row, "output_tokens")
    ep, attention_dp = expert_layout(row, tp, model.is_moe)
    if attention_dp:
        flags.append(f"attention data-parallel over {tp} ranks, experts split ep = {ep} ways (as the notes state)")
    free_frac = num(row, "kv_cache_free_gpu_mem_fraction")
    mem_util = num(row, "gpu_memory_utilization")
    release = _release(row, tables.engine(engine), steps, flags)
    system = switches.text(row, "system") or None
    if system:
        flags.append(f"system {system} as the run states (its board's nodes and wiring)")
    cluster = tables.cluster_for(row["accelerator"].strip(), n, system)
    im = InferenceModel(
        model=model,
        cluster=cluster,
        tp=tp,
        pp=pp,
        weight_precision=wp,
        kv_precision=kvp,
        ep=ep,
        attention_dp=attention_dp,
        engine=engine,
        engine_version=release,
        scheduler_steps=steps,
        overlap_scheduling=overlap,
        cuda_graphs=graphs,
    )
    if metric in ("itl_intercept_s", "itl_slope_s_per_context_token"):
        return _itl(im, metric, flags)
    if metric == "kv_capacity_tokens":
        return _kv_capacity(im, engine, row, free_frac, flags, tables)
    bench = benchmark_of(row, tables)
    # an offline benchmark of a stated number of prompts is simulated as that set handed over at once (_burst)
    offline_set = integer(row, "num_requests") if mode == "offline" else None
    if inp is None or out is None:
        inp, out = fill_lengths(row, bench, inp, out, flags)
        if mode != "poisson" and not offline_set:
            flags.append("analytic estimate at the mean lengths")
    batch = integer(row, "batch_or_concurrency")
    # the KV admission policy the MLPerf harness runs the engine with (engines.yaml mlperf_kv_reservation), else
    # the engine's default
    kv_policy = tables.engine(engine).mlperf_kv_reservation if is_mlperf(row) else None
    row_sched: dict[str, object] = {
        **_stated_scheduler(steps, overlap, chunked, graphs),
        **({"kv_reservation": kv_policy} if kv_policy else {}),
    }
    if kv_policy:
        flags.append(f"KV reservation {kv_policy}: the policy of the MLPerf harness ({engine} mlperf_kv_reservation)")
    wl_data: dict[str, object] = {
        "weight_precision": wp,
        "kv_precision": kvp,
        "input_tokens": inp,
        "output_tokens": max(out, 1),
        "plan": {"tp": tp, "pp": pp},
        **({"engine_version": release} if release else {}),
        **({"simulation": {"scheduler": row_sched}} if row_sched else {}),
    }
    if mem_util is not None:  # the run's own memory share (vLLM --gpu-memory-utilization): sizes the KV cache
        wl_data["gpu_memory_utilization"] = mem_util
        flags.append(f"gpu_memory_utilization {mem_util:g} as the row states")
    # scheduler settings the row states (a run's own configuration); else the engine's defaults for the
    # device and the usage context: offline/batch rows are LLM-class benchmarks, the others API-server runs
    stated = stated_limits(row)
    for name, val in stated.items():
        flags.append(f"{name} {val} as the notes state")
    stated_budget, stated_seqs = stated.get("max_num_batched_tokens"), stated.get("max_num_seqs")
    usage: Usage = "offline" if mode in ("offline", "batch") else "server"
    budget, stated_seqs = _budget(
        row, model, im, engine, mode, (inp, out, batch), free_frac, (stated_budget, stated_seqs), flags, tables
    )
    if mode == "offline":
        wl_data["batch"] = "max"
    elif mode == "batch":
        wl_data["batch"] = batch or 1
    elif mode == "concurrency":
        wl_data["concurrency"] = batch or 1
    elif mode in ("poisson", "burst"):
        wl_data["batch"] = "max"
    wl = validate(ServingWorkload, wl_data, where=f"row {row['id']}")
    est = estimate(
        model,
        cluster,
        wl,
        engine=engine,
        prefill_budget_tokens=budget,
        attention_dp=attention_dp,
        kv_free_frac=free_frac,
        usage=usage,
        max_num_seqs=stated_seqs,
    )
    details = {
        "batch_seqs": est.batch_seqs,
        "kv_capacity_tokens": est.kv_capacity_tokens,
        "decode_bound": est.decode_bound,
        "prefill_bound": est.prefill_bound,
        # the load over the capacity the prediction itself gives (the error bands' load level, accuracy/regimes.py)
        "utilisation_frac": utilisation(
            rate_per_s=num(row, "request_rate_per_s") if mode == "poisson" else None,
            sequences=batch if mode in ("concurrency", "burst", "batch") else None,
            saturated_requests_per_s=est.saturated_requests_per_s,
            saturated_seqs=est.saturated_batch_seqs * est.replicas,
        ),
    }
    served = _Served(
        model,
        row["accelerator"].strip(),
        n,
        tp,
        pp,
        wp,
        kvp,
        engine,
        inp,
        out,
        release=release,
        scheduler_steps=steps,
        overlap_scheduling=overlap,
        chunked_prefill=chunked,
        cuda_graphs=graphs,
        gpu_memory_utilization_frac=mem_util,
        ep=ep,
        attention_dp=attention_dp,
        system=system,
        per_node=cluster.per_node,
    )
    if mode == "poisson":
        sched: dict[str, int | bool | str] = dict(stated_limits(row))
        if kv_policy:
            sched["kv_reservation"] = kv_policy
        rate = num(row, "request_rate_per_s")
        sim = sim_settings(row, tables.engine(engine), budget, sched, bench, rate_per_s=rate, flags=flags)
        return _simulated(row, served, metric, flags, details, sim, bench, tables)
    if mode in ("burst", "batch") or offline_set:
        return _burst(row, served, offline_set or batch, metric, flags, details, bench, tables)
    if mode == "concurrency" and metric in CLOSED_LOOP_METRICS:
        return _closed_loop(row, served, batch or 1, metric, flags, details, bench, tables)
    if metric == "output_tokens_per_s":
        return RowPrediction(est.output_tokens_per_s, "; ".join(flags), details)
    if metric == "requests_per_s":
        return RowPrediction(est.requests_per_s, "; ".join(flags), details)
    if metric == "ttft_s":
        return RowPrediction(est.ttft_s, "; ".join(flags), details)
    if metric == "tpot_s":
        return RowPrediction(est.tpot_s, "; ".join(flags), details)
    raise RowError(f"metric {metric!r} in mode {mode!r} not modelled")


def _release(row: dict[str, str], profile: EngineProfile, steps: int, flags: list[str]) -> str | None:
    """The engine release the row's ``engine_version`` starts with, as MAJOR.MINOR.PATCH ("0.6.3.post2.dev308+g…" ->
    "0.6.3", "0.5 (static batching)" -> "0.5.0"). When it starts with none (an image tag, "latest", "TensorRT
    10.2 …"): the engine's legacy generation where the run shows it ran that one (a build dated before the current
    generation became the default, or multi-step scheduling: ``EngineProfile.unstated_release``, flagged), else None:
    the current release's costs apply. A run that selects the legacy generation on a release still carrying it
    (column ``legacy_engine`` on: vLLM ``VLLM_USE_V1=0`` on 0.8-0.10) is priced as that generation's release."""
    text = row.get("engine_version") or ""
    version = parse_version(text)
    if on_off(row, "legacy_engine"):
        try:
            version, why = profile.selected_legacy_release(version)
        except ValueError as exc:
            raise RowError(f"column legacy_engine=on, but {exc}: blank the column") from None
        flags.append(why)
    elif version is None:
        legacy = profile.unstated_release(text, steps > 1)
        if legacy is None:
            return None
        version, why = legacy
        flags.append(f"engine release not stated: priced as {profile.id} {'.'.join(map(str, version))} ({why})")
    return ".".join(str(p) for p in (*version, 0, 0)[:3])  # three parts: never read back as a number


def on_off(row: dict[str, str], column: str) -> bool | None:
    """An on/off switch column (``overlap_scheduling``, ``chunked_prefill``): True (on), False (off), None when
    blank (not stated); RowError for another value."""
    cell = switches.text(row, column).lower()
    if not cell:
        return None
    if cell in ("on", "off"):
        return cell == "on"
    raise RowError(f"column {column}={cell!r} is not on or off (blank: not stated)")


def _stated_scheduler(
    steps: int, overlap: bool | None, chunked: bool | None = None, graphs: bool | None = None
) -> dict[str, object]:
    """The workload's simulation.scheduler fields a run states: multi-step scheduling, the overlap scheduler, chunked
    prefill, CUDA graphs."""
    sched: dict[str, object] = {"num_scheduler_steps": steps} if steps > 1 else {}
    if overlap is not None:
        sched["overlap_scheduling"] = overlap
    if chunked is not None:
        sched["chunked_prefill"] = chunked
    if graphs is not None:
        sched["cuda_graphs"] = graphs
    return sched


def scheduler_steps(row: dict[str, str]) -> int:
    """Decode iterations per scheduler call as the run states them (``num_scheduler_steps``, vLLM V0
    ``--num-scheduler-steps``); 1 when blank."""
    steps = integer(row, "num_scheduler_steps")
    if steps is not None and steps < 1:
        raise RowError(f"column num_scheduler_steps={steps} is below 1 (blank: 1, one step per scheduler call)")
    return steps or 1


def stated_context_tokens(row: dict[str, str]) -> int | None:
    """The context length the run's server was started with (``max_model_len_tokens``: vLLM ``--max-model-len``,
    SGLang ``--context-length``); None when blank (the model's own)."""
    tokens = integer(row, "max_model_len_tokens")
    if tokens is not None and tokens < 1:
        raise RowError(f"column max_model_len_tokens={tokens} is below 1 (blank: the model's context length)")
    return tokens


def _kv_precision(row: dict[str, str], wp: str, flags: list[str]) -> str:
    """The KV-cache format of a row's run: as stated; blank with a ModelOpt FP8/NVFP4 checkpoint, fp8 (ModelOpt
    exports write kv_cache_quant_algo: FP8 into hf_quant_config.json, ModelOpt convert_hf_quant_config_format
    docstring example, and the engines' KV dtype "auto" follows it); else bf16, the engines' default."""
    kvp = (row.get("kv_precision") or "").strip()
    if not kvp and switches.text(row, "quantizer").lower() == "modelopt" and wp in ("fp8", "fp4"):
        kvp = "fp8"
        flags.append("kv_precision blank: fp8, the KV format a ModelOpt checkpoint declares (dtype auto follows it)")
    if not kvp:
        kvp = "bf16"
        flags.append(f"kv_precision blank: assumed {kvp}")
    if kvp == "fp4":
        raise RowError("fp4 KV cache not modelled")
    return kvp


def _engine(row: dict[str, str], flags: list[str], tables: RowTables) -> str:
    """The row's engine; one with no profile of its own (SGLang, vendor engines) runs as a paged-KV
    continuous-batching engine with vLLM's published scheduler and allocator defaults, and the row says so."""
    engine = (row.get("engine") or "vllm").strip()
    if engine not in tables.engines:
        flags.append(f"engine {engine!r} has no profile in catalog/data/engines.yaml: vLLM's defaults assumed")
        engine = "vllm"
    return engine


def _itl(im: InferenceModel, metric: str, flags: list[str]) -> RowPrediction:
    """A batch-1 inter-token-latency fit: its intercept (the empty-context decode step), or its slope per context
    token over SLOPE_CONTEXT_TOKENS from SLOPE_FROM_TOKENS (sliding-window layers stop growing at their window)."""
    t0 = im.iteration_time_s(StepBatch.decode(1, 0))
    if metric == "itl_intercept_s":
        return RowPrediction(t0, "; ".join(flags))
    low = im.iteration_time_s(StepBatch.decode(1, SLOPE_FROM_TOKENS))
    high = im.iteration_time_s(StepBatch.decode(1, SLOPE_FROM_TOKENS + SLOPE_CONTEXT_TOKENS))
    return RowPrediction((high - low) / SLOPE_CONTEXT_TOKENS, "; ".join(flags))


def _budget(
    row: dict[str, str],
    model: ModelArch,
    im: InferenceModel,
    engine: str,
    mode: str,
    lengths: tuple[int, int, int | None],
    free_frac: float | None,
    stated: tuple[int | None, int | None],
    flags: list[str],
    tables: RowTables,
) -> tuple[int | None, int | None]:
    """(prefill token budget, max_num_seqs) of the run: as stated; an engine without chunked prefill (TensorRT-LLM
    schedules whole prompts by default) admits at least one prompt; an offline trtllm-bench row that states
    neither gets the limits trtllm-bench derives (:func:`_trtllm_bench`). ``lengths``: (input, output, batch);
    ``stated``: the row's (max_num_batched_tokens, max_num_seqs)."""
    inp, out, batch = lengths
    stated_budget, stated_seqs = stated
    chunked = tables.engine(engine).chunked_prefill
    budget = stated_budget if chunked else max(inp * (batch or 1) if mode == "batch" else inp, 8192)
    tuned = _trtllm_bench(row, model, im, engine, mode, inp, out, free_frac, im.attention_dp, tables)
    if tuned is not None and stated_budget is None and stated_seqs is None:
        budget, stated_seqs = tuned.max_num_batched_tokens, tuned.max_num_seqs
        flags.append(tuned.basis)
    return budget, stated_seqs


def _trtllm_bench(
    row: dict[str, str],
    model: ModelArch,
    im: InferenceModel,
    engine: str,
    mode: str,
    inp: int | None,
    out: int | None,
    free_frac: float | None,
    attention_dp: bool,
    tables: RowTables,
) -> SchedulerDefaults | None:
    """The limits ``trtllm-bench throughput`` derives for an offline row run with it (engine_version says so)
    that states neither max_batch_size nor max_num_tokens
    (:func:`aiinfra.planning.engine_profile.trtllm_bench_limits`)."""
    profile = tables.engine(engine)
    if profile.bench_tool is None or mode != "offline" or profile.bench_tool not in (row.get("engine_version") or ""):
        return None
    if inp is None or out is None or out < 1:
        return None
    frac = free_frac if free_frac is not None else profile.kv_cache_free_gpu_mem_frac
    if frac is None:
        return None
    return trtllm_bench_limits(
        params=params_total(model),
        num_layers=model.num_layers,
        kv_heads=model.kv_heads,
        head_dim=model.head_size,
        tp=im.tp,
        pp=im.pp,
        device_memory_bytes=im.cluster.accelerator.memory_bytes,
        weight_precision=im.weight_precision,
        kv_precision=im.kv_precision,
        input_tokens=inp,
        output_tokens=out,
        kv_free_frac=frac,
        bench_tuning=profile.bench_tuning,
        attention_dp_ranks=im.tp if attention_dp else 1,
        engine=engine,
    )


def _best_tp(row: dict[str, str], n: int, tables: RowTables) -> RowPrediction:
    """A row that does not state tp: the operator of a throughput benchmark (MLPerf, offline sweeps) picks the
    layout that serves most, so every tp dividing the accelerator count (replicas = n / tp) is estimated at
    offline saturation and the row is predicted with the fastest one that fits."""
    pp = integer(row, "pp", 1) or 1
    best: tuple[float, int] | None = None
    reasons: list[str] = []
    for cand in (t for t in range(1, n // pp + 1) if (n // pp) % t == 0):
        trial = {**row, "tp": str(cand), "metric": "output_tokens_per_s", "mode": "offline"}
        pred = predict_row(trial, tables)
        if pred.predicted is None:
            reasons.append(f"tp {cand}: {pred.reason}")
            continue
        if best is None or pred.predicted > best[0]:
            best = (pred.predicted, cand)
    if best is None:
        raise RowError("tp blank and no tp dividing num_accelerators fits: " + "; ".join(reasons[:2]))
    chosen = predict_row({**row, "tp": str(best[1])}, tables)
    flag = (
        f"tp blank: tp = {best[1]} ({n // (best[1] * pp)} replicas), the layout with the highest predicted "
        f"offline throughput among the divisors of num_accelerators = {n}"
    )
    return RowPrediction(chosen.predicted, "; ".join(x for x in (flag, chosen.reason) if x), chosen.details)


def _kv_capacity(
    im: InferenceModel, engine: str, row: dict[str, str], free_frac: float | None, flags: list[str], tables: RowTables
) -> RowPrediction:
    """KV token slots the engine allocates (``inference.kv_capacity``), with the gpu_memory_utilization,
    max_num_batched_tokens (the profiling pass's token count) and block size the row's columns state, else the
    engine defaults of catalog/data/engines.yaml (flagged)."""
    eng = tables.engine(engine)
    settings: dict[str, float] = {}
    for key, default in (
        ("gpu_memory_utilization", eng.gpu_memory_utilization_frac),
        ("max_num_batched_tokens", eng.max_num_batched_tokens),
        ("block_size", eng.block_size_tokens),
    ):
        stated = num(row, key)
        if stated is not None:
            settings[key] = stated
        elif default is not None:
            settings[key] = float(default)
            flags.append(f"{key} not in notes: engine default {default}")
        else:
            raise RowError(f"{key} not stated and no {engine} default in catalog/data/engines.yaml")
    seqs = num(row, "max_num_seqs")
    if seqs is None and eng.max_num_seqs is not None:
        seqs = float(eng.max_num_seqs)
        flags.append(f"max_num_seqs not in notes: engine default {eng.max_num_seqs}")
    cap = kv_capacity(
        im,
        settings["gpu_memory_utilization"],
        int(settings["block_size"]),
        int(settings["max_num_batched_tokens"]),
        engine,
        free_frac,
        max_num_seqs=int(seqs) if seqs is not None else None,
    )
    details = {
        "weights_bytes": cap.weights_bytes,
        "activation_peak_bytes": cap.activation_peak_bytes,
        "reserve_bytes": cap.reserve_bytes,
        "kv_cache_bytes": cap.kv_cache_bytes,
        "blocks": cap.blocks,
    }
    return RowPrediction(float(cap.kv_capacity_tokens), "; ".join(flags), details)


def _simulated(
    row: dict[str, str],
    served: _Served,
    metric: str,
    flags: list[str],
    details: dict[str, object],
    sim: dict[str, object],
    bench: BenchmarkSpec | None,
    tables: RowTables,
) -> RowPrediction:
    """Open-loop Poisson rows are predicted by the serving simulator (same step-time model). Request count,
    length distributions and scheduler limits come from ``sim`` (benchmark_rows.sim_settings)."""
    rate = num(row, "request_rate_per_s")
    if not rate:
        raise RowError("request_rate_per_s blank")
    sim = dict(sim)
    n_req = sim.pop("num_requests")
    scenario = served.scenario(request_rate_per_s=rate, num_requests=n_req, simulation=sim)
    summ = _simulate(scenario, tables)
    if bench is not None:
        flags.extend(latency_limit_flags(row, bench, summ.ttft_s.p99, summ.tpot_exclusive_s.p99))
    return RowPrediction(_sim_value(row, summ, metric, served.engine, flags, tables), "; ".join(flags), details)


def _burst(
    row: dict[str, str],
    served: _Served,
    batch: int | None,
    metric: str,
    flags: list[str],
    details: dict[str, object],
    bench: BenchmarkSpec | None,
    tables: RowTables,
) -> RowPrediction:
    """N requests that all arrive at t = 0 and are drained by the row's replicas (an API server's, dealt
    round-robin; the LLM class's one engine), simulated (the same step-time model): a ``burst`` (a serving
    benchmark's ``--request-rate inf`` without a concurrency cap, against the API server), a fixed ``batch`` (an
    offline throughput benchmark handing N prompts of fixed lengths to the engine at once, the LLM class's scheduler
    defaults) or an ``offline`` run stating its N prompts (the same, with the lengths of the dataset the client
    sampled: benchmark_throughput.py's ``--num-prompts`` drawn from ShareGPT). The makespan includes what a steady
    state leaves out: the prefill ramp of N prompts, the KV cache filling (preemption, waves) and the drain on the
    longest requests. Throughput = tokens (requests) / makespan; TPOT = the mean over requests of
    (finish - first token) / (output - 1), as the benchmarks report."""
    if not batch:
        raise RowError(f"mode {row['mode'].strip()} needs batch_or_concurrency (the requests sent at once)")
    sim: dict[str, object] = {}
    mode = row["mode"].strip()
    if mode in ("batch", "offline"):
        acc = tables.cluster_for(served.accelerator, served.n, served.system).accelerator
        # the release's own defaults where an older one differs (vLLM V0), at the model's context length (the
        # engines' default max_model_len: the run's, else its catalog model's, predict_row)
        context = getattr(served.model, "max_seq_len", None)
        sd = scheduler_defaults(
            tables.engine(served.engine),
            acc,
            "offline",
            release=served.release,
            max_model_len=context,
            chunked_prefill=served.chunked_prefill,
        )
        limits: dict[str, object] = {
            "max_num_batched_tokens": sd.max_num_batched_tokens,
            "max_num_seqs": sd.max_num_seqs,
        }
        if sd.chunked_prefill is not None:
            limits["chunked_prefill"] = sd.chunked_prefill
        sim["scheduler"] = {**limits, **stated_limits(row)}
        sim["streaming"] = False  # the LLM class returns whole outputs: no API server streams the tokens
        flags.append(f"simulated: a batch of {batch} prompts handed over at once; scheduler: {sd.basis}")
        if mode == "batch":
            flags.append("lengths fixed at the row's means (a fixed-length benchmark)")
        else:
            sim.update(length_dists(row, bench, flags))
    else:
        flags.append(f"simulated: a burst of {batch} requests arriving at t = 0 (the engine's server defaults)")
        sim.update(length_dists(row, bench, flags))
        if stated := stated_limits(row):
            sim["scheduler"] = stated
    sim.update(prefix_cache(row, flags))
    # the LLM class is one engine; an API server spreads its requests over every replica the row's accelerators hold
    replicas = 1 if mode in ("batch", "offline") else served.server_replicas(flags)
    scenario = served.scenario(
        replicas=replicas, arrival={"kind": "concurrency"}, concurrency=batch, num_requests=batch, simulation=sim
    )
    summ = _simulate(scenario, tables)
    details = {**details, "makespan_s": summ.duration_s, "preemptions": summ.preemptions}
    return RowPrediction(_sim_value(row, summ, metric, served.engine, flags, tables), "; ".join(flags), details)


def stated_limits(row: dict[str, str]) -> dict[str, int]:
    """The scheduler limits the row states (``max_num_batched_tokens``, ``max_num_seqs``: the run's own server
    settings), for a simulation of any mode: what the row does not state stays the engine's default."""
    return {k: v for k in ("max_num_batched_tokens", "max_num_seqs") if (v := integer(row, k))}


def _sim_value(
    row: dict[str, str], summ: SimSummary, metric: str, engine: str, flags: list[str], tables: RowTables
) -> float:
    """The statistic of a simulated run that the row measured: the mean, or the median where the row's ``statistic``
    column says "median" (TTFT p50; a median inter-token latency is the p50 of the token gaps). The simulated TTFT
    includes the engine's serving-path cost per request (``EngineProfile.request_overhead_s``, sim/metrics.py)."""
    statistic = switches.text(row, "statistic")
    median = statistic in ("median", "median_itl")
    if metric == "ttft_s":
        overhead = tables.engine(engine).request_overhead_s
        if overhead:
            flags.append(f"TTFT + {overhead * 1e3:.3g} ms serving-path cost per request ({engine} profile)")
        return summ.ttft_s.p50 if median else summ.ttft_s.mean
    if metric == "tpot_s":
        # vLLM's benchmarks/benchmark_serving.py and SGLang's bench_serving.py (calculate_metrics) report both:
        # median_tpot_ms = np.median over requests of (latency - ttft) / (output_len - 1), median_itl_ms =
        # np.median over every token gap. They differ under load: an iteration that prefills alone (SGLang's
        # prefill batches, vLLM V0's whole prompts) stalls every running decode once, so it lengthens each
        # request's TPOT by its share of the iterations but sits in the tail of the token gaps, above their median
        if statistic == "median_itl":
            flags.append("median inter-token latency: p50 of the simulated token gaps")
            return summ.itl_s.p50
        if median:
            flags.append("median TPOT: p50 over the simulated requests of (finish - first token) / (output - 1)")
            return summ.tpot_exclusive_s.p50
        return summ.tpot_exclusive_s.mean
    if metric == "output_tokens_per_s":
        return summ.output_tokens_per_s
    if metric == "requests_per_s":
        return summ.requests_per_s
    raise RowError(f"metric {metric!r} not modelled for simulated rows")


@dataclass(frozen=True, slots=True)
class _Served:
    """What a simulated row runs: the row's model on ``n`` of its accelerators in its layout, formats, engine and
    mean lengths."""

    model: object
    accelerator: str
    n: int
    tp: int
    pp: int
    wp: str
    kvp: str
    engine: str
    inp: int
    out: int
    release: str | None = None
    """The engine release the row ran (MAJOR.MINOR[.PATCH]), or None when the row does not state one."""
    scheduler_steps: int = 1
    """vLLM V0's --num-scheduler-steps the run states (1: single-step)."""
    overlap_scheduling: bool | None = None
    """The overlap scheduler as the run states it (vLLM --async-scheduling), else None: the release's default."""
    chunked_prefill: bool | None = None
    """Chunked prefill as the run states it (vLLM --enable-chunked-prefill), else None: the release's default."""
    cuda_graphs: bool | None = None
    """CUDA graphs as the run states them (vLLM --enforce-eager: off), else None: the release's rule."""
    gpu_memory_utilization_frac: float | None = None
    """The memory share the run states (vLLM --gpu-memory-utilization), else None: the workload's default."""
    ep: int = 1
    """Expert-parallel degree the run states (rows.expert_layout)."""
    attention_dp: bool = False
    """Attention data parallelism over the tp ranks, as the run states (rows.expert_layout)."""
    system: str | None = None
    """The catalog system the run states (column ``system``: its board's nodes and wiring), else None: the
    accelerator's usual system."""
    per_node: int | None = None
    """Accelerators per node as the analytic estimate resolved them (catalog/resolve.py cluster_for: one host holding
    them all for a part the catalog gives no node size), so that the simulation runs on the same cluster."""

    def server_replicas(self, flags: list[str]) -> int:
        """The replicas of the row's layout its accelerators hold (num_accelerators / (tp x pp)), which an API
        server's requests are spread over round-robin (SGLang's --dp controller, load_balance_method round_robin by
        default: sglang 0.5.7 server_args.py; the simulator's default router)."""
        replicas = max(1, self.n // (self.tp * self.pp))
        if replicas > 1:
            flags.append(f"{replicas} replicas of tp {self.tp} x pp {self.pp}, requests dealt round-robin")
        return replicas

    def scenario(self, replicas: int | None = None, **inference: object) -> str:
        """The scenario as canonical JSON (the key of the memoised simulations), with ``replicas`` in the plan
        when given and the ``inference`` fields given."""
        from aiinfra.report.render import jsonable

        arch = {k: v for k, v in jsonable(self.model).items() if k not in ("sources", "notes")}
        stated = _stated_scheduler(
            self.scheduler_steps, self.overlap_scheduling, self.chunked_prefill, self.cuda_graphs
        )
        if stated:  # the run's multi-step scheduling and overlap scheduler, beside whatever scheduler it states
            sim = dict(inference.get("simulation") or {})  # type: ignore[call-overload]
            sim["scheduler"] = {**(sim.get("scheduler") or {}), **stated}
            inference = {**inference, "simulation": sim}
        plan: dict[str, object] = {"tp": self.tp, "pp": self.pp}
        if self.ep > 1:  # the run's expert and attention layout, as the analytic estimate gets it
            plan["ep"] = self.ep
        if self.attention_dp:
            plan["attention_dp"] = True
        if replicas is not None:
            plan["replicas"] = replicas
        scenario = {
            "model": arch,
            "hardware": {
                "accelerator": self.accelerator,
                "count": self.n,
                **({"system": self.system} if self.system else {}),
                **({"per_node": self.per_node} if self.per_node else {}),
            },
            "inference": {
                "weight_precision": self.wp,
                "kv_precision": self.kvp,
                "engine": self.engine,
                **({"engine_version": self.release} if self.release else {}),
                **(
                    {"gpu_memory_utilization": self.gpu_memory_utilization_frac}
                    if self.gpu_memory_utilization_frac
                    else {}
                ),
                "input_tokens": self.inp,
                "output_tokens": self.out,
                "plan": plan,
                **inference,
            },
        }
        return json.dumps(scenario, sort_keys=True)


CLOSED_LOOP_METRICS = ("output_tokens_per_s", "ttft_s", "tpot_s")
"""Metrics of a concurrency (closed-loop) row predicted by simulating the clients, as ``capacity --simulate`` checks a
fleet for N concurrent users: the analytic steady state has no queue, and a client count past what the KV cache
holds queues (TTFT)."""


def _closed_loop(
    row: dict[str, str],
    served: _Served,
    clients: int,
    metric: str,
    flags: list[str],
    details: dict[str, object],
    bench: BenchmarkSpec | None,
    tables: RowTables,
) -> RowPrediction:
    """A closed loop of ``clients`` clients, each sending its next request when its answer ends (the benchmark
    clients' concurrency mode, all started at once as the benchmark tools launch them), simulated with the same
    step-time model and the engine's server defaults (where the row states no limit): the mean TTFT, exclusive TPOT
    and output tokens/s of the steady state after the first ``clients`` requests (sim.search.closed_loop_run)."""
    sim = {**length_dists(row, bench, flags), **prefix_cache(row, flags)}
    if limits := stated_limits(row):
        sim["scheduler"] = limits
    scenario = served.scenario(replicas=served.server_replicas(flags), simulation=sim)
    stated = integer(row, "num_requests")
    if stated:
        summ = _benchmark_closed_loop_in(tables, scenario, clients, stated)
        flags.append(
            f"simulated: the benchmark's {stated} requests behind {clients} concurrent clients, the first {clients} "
            "sent at once and every request scored (as vllm bench serve and sglang.bench_serving score them), "
            "the engine's server defaults"
        )
    else:
        summ = _closed_loop_summary(scenario, clients, tables)
        flags.append(
            f"simulated: closed loop of {clients} clients started together ({summ.completed} steady-state "
            "requests, the first one of each client left out), the engine's server defaults"
        )
    return RowPrediction(_sim_value(row, summ, metric, served.engine, flags, tables), "; ".join(flags), details)


def _closed_loop_summary(scenario_json: str, clients: int, tables: RowTables) -> SimSummary:
    """One closed-loop simulation per distinct scenario, client count and catalog (``tables``): a row's three metrics
    share it."""
    return _closed_loop_in(tables, scenario_json, clients)


@functools.lru_cache(maxsize=16)
def _closed_loop_in(tables: RowTables, scenario_json: str, clients: int) -> SimSummary:
    from aiinfra.sim.search import closed_loop_run

    sc = tables.scenario_of(json.loads(scenario_json))
    return closed_loop_run(sc, clients, ramp=False, tables=tables.serving_tables(sc))[1]


@functools.lru_cache(maxsize=16)
def _benchmark_closed_loop_in(tables: RowTables, scenario_json: str, clients: int, num_requests: int) -> SimSummary:
    """The benchmark's own run of ``num_requests`` at ``clients`` concurrency, every request scored (one per
    scenario, client count, request count and catalog: a row's three metrics share it)."""
    from aiinfra.sim.search import benchmark_closed_loop_run

    sc = tables.scenario_of(json.loads(scenario_json))
    return benchmark_closed_loop_run(sc, clients, num_requests, tables=tables.serving_tables(sc))


def _simulate(scenario_json: str, tables: RowTables) -> SimSummary:
    """One simulation per distinct scenario and catalog (``tables``): the TTFT, TPOT and throughput rows of one run
    share it."""
    return _simulate_in(tables, scenario_json)


@functools.lru_cache(maxsize=8)
def _simulate_in(tables: RowTables, scenario_json: str) -> SimSummary:
    from aiinfra.sim.run import simulate

    sc = tables.scenario_of(json.loads(scenario_json))
    return simulate(sc, seed=0, tables=tables.serving_tables(sc)).summary
