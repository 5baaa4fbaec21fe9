"""Serving-engine scheduler limits: the engine's defaults (its catalog profile,
:class:`aiinfra.specs.engine.EngineProfile`, given by the caller)
and the limits ``trtllm-bench throughput`` derives from the model, the GPUs and the dataset's lengths
(:func:`trtllm_bench_limits`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from aiinfra.errors import DataError
from aiinfra.specs.engine import EngineProfile, SchedulerDefaults, Usage, parse_version
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.units import GiB

__all__ = ["SchedulerDefaults", "Usage", "scheduler_defaults", "trtllm_bench_limits"]


def scheduler_defaults(
    engine: EngineProfile,
    accelerator: AcceleratorSpec,
    usage: Usage,
    *,
    release: str | None = None,
    max_model_len: int | None = None,
    chunked_prefill: bool | None = None,
) -> SchedulerDefaults:
    """The engine's default token budget per step and sequence cap on ``accelerator`` in ``usage``; of the engine
    release ``release`` (MAJOR.MINOR[.PATCH]; None: the current one) serving a context of ``max_model_len`` tokens
    where an older release's defaults differ (EngineProfile.legacy_scheduler_defaults), with chunked prefill as the
    run sets it (None: the release's default)."""
    version = parse_version(release) if release else None
    return engine.scheduler_defaults(
        accelerator, usage, release=version, max_model_len=max_model_len, chunked_prefill=chunked_prefill
    )


def _stepped(value: float, floor: int, steps: list[list[int | None]]) -> int:
    """Round ``value`` up to the multiple its band of ``steps`` ([upper bound or None, multiple], ...) names."""
    for bound, mult in steps:
        if bound is None or value < bound:
            assert mult is not None
            return max(floor, int(mult * math.ceil(value / mult)))
    raise DataError("engines.yaml bench_tuning steps must end with a [null, multiple] band")


def trtllm_bench_limits(
    *,
    params: float,
    num_layers: int,
    kv_heads: int,
    head_dim: int,
    tp: int,
    pp: int,
    device_memory_bytes: float,
    weight_precision: str,
    kv_precision: str,
    input_tokens: int,
    output_tokens: int,
    kv_free_frac: float,
    attention_dp_ranks: int = 1,
    bench_tuning: Mapping[str, Any] | None,
    engine: str = "trtllm",
) -> SchedulerDefaults | None:
    """max_batch_size / max_num_tokens that ``trtllm-bench throughput`` (PyTorch backend, v1.0) derives when
    the run states neither: TensorRT-LLM tensorrt_llm/bench/build/tuning.py ``calc_engine_setting`` and
    ``finetune_setting``, called from bench/benchmark/utils/general.py ``get_settings`` (commits and the
    formula in catalog/data/engines.yaml, trtllm row, ``bench_tuning``). With Q bytes per parameter and K
    bytes per KV element (fp8 1, fp4 0.5, 16-bit 2):

        kv_per_token = 2 · layers · max(tp, kv_heads) · head_dim · K
        requests     = (tp·pp·device − params·Q) · kv_free_frac / (kv_per_token · (isl + osl))
        raw_bs       = min(requests, 4096) / pp;   raw_tokens = min(raw_bs · (1 + isl/osl), 32768)

    rounded up in bands (batch ≥ 64, tokens ≥ 2048); with chunked prefill off (its default) max_num_tokens is
    raised to max_isl + max_batch_size. v1.0 passes no attention-DP flag, and the executor applies both limits
    per attention-DP rank, so ``attention_dp_ranks`` multiplies them for the replica. Returns None for a weight
    precision the heuristic does not tune (the engine's fixed defaults then apply, as in get_benchmark_engine_settings).
    ``bench_tuning``: the engine profile's table of those constants (engines.yaml, ``engine``'s row).
    """
    tuning = bench_tuning
    if tuning is None:
        raise DataError(f"engines.yaml {engine} row has no bench_tuning table")
    per_elem = {str(k): float(v) for k, v in tuning["bytes_per_elem"].items()}
    if weight_precision not in per_elem:
        return None
    q = per_elem[weight_precision]
    k = per_elem.get(kv_precision, 2.0)  # BYTES_PER_ELEM.get(kv_cache_quant_algo, 2): unquantised KV = 2 bytes
    kv_per_token_gib = 2 * num_layers * max(tp, kv_heads) * head_dim * k / GiB
    cache_gib = (tp * pp * device_memory_bytes / GiB - params * q / GiB) * kv_free_frac
    requests = cache_gib / (kv_per_token_gib * (input_tokens + output_tokens))
    if requests < 1:
        return None  # trtllm-bench stops with "KV cache memory is insufficient"; the estimate reports the misfit
    raw_bs = min(requests, float(tuning["max_requests_cap"])) / pp
    raw_tokens = min(raw_bs * (1 + input_tokens / output_tokens), float(tuning["max_num_tokens_cap"]))
    max_bs = _stepped(raw_bs, int(tuning["batch_size_floor"]), tuning["batch_size_steps"])
    max_tokens = _stepped(raw_tokens, int(tuning["num_tokens_floor"]), tuning["num_tokens_steps"])
    max_tokens = max(max_tokens, input_tokens + max_bs)  # chunked prefill off: a whole prompt plus the batch
    dp = max(attention_dp_ranks, 1)
    per_rank = f" per attention-DP rank, x{dp} for the replica" if dp > 1 else ""
    return SchedulerDefaults(
        max_num_batched_tokens=max_tokens * dp,
        max_num_seqs=max_bs * dp,
        basis=f"trtllm-bench heuristic (bench/build/tuning.py): {requests:.0f} requests fit its KV estimate -> "
        f"max_batch_size {max_bs}, max_num_tokens {max_tokens}{per_rank}",
    )
