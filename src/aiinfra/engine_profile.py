"""Serving-engine scheduler defaults (catalog/data/engines.yaml), picked the way the engine picks them.

vLLM V1 (``EngineArgs._set_default_args``, vllm/engine/arg_utils.py; the row cites the commit) chooses
``max_num_batched_tokens`` and ``max_num_seqs`` by usage context — the ``LLM`` class (offline benchmarks:
benchmark_throughput, benchmark_latency) or the OpenAI API server (``vllm serve``, benchmark_serving) — and
by the device: total memory ≥ 70 GiB and a device name without "a100" gets the larger table; the chosen
``max_num_seqs`` is then capped at ``max_num_batched_tokens``. TensorRT-LLM's row holds one fixed pair.
"""

from __future__ import annotations

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
