"""Serving-engine scheduler defaults (catalog/data/engines.yaml), picked the way the engine picks them.

vLLM V1 (``EngineArgs._set_default_args``, vllm/engine/arg_utils.py; the row cites the commit) chooses
``max_num_batched_tokens`` and ``max_num_seqs`` by usage context — the ``LLM`` class (offline benchmarks:
benchmark_throughput, benchmark_latency) or the OpenAI API server (``vllm serve``, benchmark_serving) — and
by the device: total memory ≥ 70 GiB and a device name without "a100" gets the larger table; the chosen
``max_num_seqs`` is then capped at ``max_num_batched_tokens``. TensorRT-LLM's row holds one fixed pair (the
LLM API defaults); ``trtllm-bench throughput`` instead derives the pair from the model, the GPUs and the dataset's
lengths (:func:`trtllm_bench_limits`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from aiinfra import catalog
from aiinfra.errors import DataError
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.units import GiB

Usage = Literal["offline", "server"]
"""offline: the engine driven in-process over a fixed batch of prompts (vLLM's LLM class);
server: the engine behind an API server receiving requests over time (vLLM's OpenAI API server)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SchedulerDefaults:
    max_num_batched_tokens: int
    max_num_seqs: int
    basis: str
    """Why these values (engine, usage context, device rule) — printed in notes."""


def _row(engine: str) -> dict[str, Any]:
    for row in catalog.raw_rows("engines"):
        if row["id"] == engine:
            return dict(row)
    raise DataError(f"engines.yaml has no row for engine {engine!r}")


def scheduler_defaults(engine: str, accelerator: AcceleratorSpec, usage: Usage) -> SchedulerDefaults:
    """The engine's default token budget per step and sequence cap on ``accelerator`` in ``usage``."""
    row = _row(engine)
    table = row.get("scheduler_defaults")
    if table is None:
        if "max_num_batched_tokens" not in row or "max_num_seqs" not in row:
            raise DataError(f"engines.yaml row {engine!r} gives no scheduler defaults")
        return SchedulerDefaults(max_num_batched_tokens=int(row["max_num_batched_tokens"]),
                                 max_num_seqs=int(row["max_num_seqs"]), basis=f"{engine} defaults")  # fmt: skip
    mem_gib = accelerator.memory_bytes / GiB
    name = f"{accelerator.id} {accelerator.name}".lower()
    excluded = [n for n in table.get("large_device_excluded_names", []) if str(n).lower() in name]
    large = mem_gib >= float(table["large_device_min_memory_gib"]) and not excluded
    entry = table["large_device" if large else "other_device"][usage]
    tokens = int(entry["max_num_batched_tokens"])
    seqs = min(int(entry["max_num_seqs"]), tokens)
    why = (f"≥ {table['large_device_min_memory_gib']} GiB" if large
           else f"'{excluded[0]}' device" if excluded else f"< {table['large_device_min_memory_gib']} GiB")  # fmt: skip
    context = "LLM class (offline)" if usage == "offline" else "OpenAI API server"
    return SchedulerDefaults(
        max_num_batched_tokens=tokens, max_num_seqs=seqs,
        basis=f"{engine} V1 default for the {context} on a {mem_gib:.0f} GiB {why} device: "
              f"max_num_batched_tokens {tokens}, max_num_seqs {seqs}",
    )  # fmt: skip


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
    """
    tuning = _row("trtllm").get("bench_tuning")
    if tuning is None:
        raise DataError("engines.yaml trtllm row has no bench_tuning table")
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
        max_num_batched_tokens=max_tokens * dp, max_num_seqs=max_bs * dp,
        basis=f"trtllm-bench heuristic (bench/build/tuning.py): {requests:.0f} requests fit its KV estimate -> "
              f"max_batch_size {max_bs}, max_num_tokens {max_tokens}{per_rank}",
    )  # fmt: skip
