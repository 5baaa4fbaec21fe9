"""Reduce NVIDIA AIConfigurator's measured decode-attention timings (vLLM and SGLang paged KV cache) to the rows of
src/aiinfra/catalog/data/efficiency_aic_paged_decode.yaml: the fraction of the HBM bandwidth a serving engine's
decode-attention kernel reaches against the KV-cache bytes one call reads.

Reads ``<system>/attention/<engine>/<version>/generation_attention_perf.parquet`` from an installed
``aiconfigurator_core`` or from ``--data`` (a folder of that layout, e.g. extracted from the repository at commit
COMMIT_095F58A); prints the YAML. Not imported by the package; prints a message and exits 0 when the data are absent.

Usage: <venv>/bin/python bench/aic_efficiency_paged_decode.py [--data DIR] \
           > src/aiinfra/catalog/data/efficiency_aic_paged_decode.yaml

One call = one layer's decode attention on one rank: ``batch_size`` sequences of one new query token each against a
paged cache of ``ctx`` tokens per sequence, ``num_heads`` query and ``num_key_value_heads`` KV heads, head dim 128,
bf16 query and KV cache (the table's fp8-KV rows are left out). KV bytes read = batch * ctx * kv_heads * 128 * 2
(K and V) * 2 B; fraction = bytes / latency / the catalog HBM bandwidth. ``ctx``: the vLLM collector passes
``seq_lens = step`` (the query token included), the SGLang collector allocates and attends ``step + 1`` tokens.
The shapes' batch, context and head counts are powers of two (the vLLM context one less), so their KV bytes fall on
powers of two. One row per batch size (``m_tokens`` = sequences per call, 1-2048: the kernels spread sequences x KV
heads x KV splits over the SMs, so at equal bytes a few long sequences and many short ones run differently); each
point the median over the row's shapes (context 1-131k, query heads 1-64, KV heads 1-8) whose bytes round to one
power of two from MIN_BYTES, levels with at least MIN_BIN shapes.

Tables read: only those in which no shape reads faster than the catalog HBM bandwidth. The newer collectors'
Hopper tables (vLLM 0.18.0-0.24.0, SGLang 0.5.14, every TensorRT-LLM table) hold shapes at up to 40-150x the HBM peak —
their long-context latencies barely grow with the context, so those shapes did not stream the nominal cache from
HBM — and are left out whole (TensorRT-LLM's XQA therefore keeps the planner's streaming fit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aic_common import (
    ENGINE_NAMES,
    engine_curve_row,
    engine_table_source,
    present_tables,
    reduction_setup,
)

READ_ON = "2026-11-26"
MIN_BIN = 3
MIN_BYTES = 2.0**16
HEAD_DIM = 128
KV_ELEM_BYTES = 2


@dataclass(frozen=True)
class Table:
    system: str
    short: str
    engine: str
    version: str
    ctx_offset: int
    """tokens attended = step + ctx_offset (module docstring)"""
    kernel: str
    """the decode kernel the collector ran, as the engine picks it by default on that part"""


VLLM_KERNEL = (
    "vLLM's FLASH_ATTN backend (vllm_flash_attn, chosen by vLLM's own backend selector: FlashAttention-3 on Hopper, "
    "FlashAttention-2 on Ampere), KV block size 64"
)
SGLANG_KERNEL = (
    "SGLang's FlashAttentionBackend (sgl-kernel FlashAttention-3, SGLang's default attention backend for MHA/GQA "
    "models on Hopper with CUDA >= 12.3, server_args.py), page size 64"
)
VLLM_BLACKWELL_KERNEL = (
    "vLLM's FLASHINFER backend (FlashInfer's paged decode kernels, the backend vLLM's own selector, "
    "current_platform.get_attn_backend_cls, picks on SM100; kernel_source vllm_flashinfer)"
)
TABLES = (
    Table("h200_sxm", "h200", "vllm", "0.14.0", 0, VLLM_KERNEL),
    Table("h100_sxm", "h100", "vllm", "0.14.0", 0, VLLM_KERNEL),
    Table("a100_sxm", "a100", "vllm", "0.14.0", 0, VLLM_KERNEL),
    Table("h200_sxm", "h200", "sglang", "0.5.10", 1, SGLANG_KERNEL),
    Table("h100_sxm", "h100", "sglang", "0.5.10", 1, SGLANG_KERNEL),
    Table("b200_sxm", "b200", "vllm", "0.19.0", 0, VLLM_BLACKWELL_KERNEL),
)
"""The tables reduced. SGLang on A100 is left out: its collector ran the FlashAttention backend there too, while
SGLang's default on Ampere is FlashInfer. vLLM on B200: 0.19.0, its oldest B200 table, whose shapes all stay under
the B200's 8 TB/s (the newest 0.8 of it at 1 GB a call)."""


Point = tuple[float, float, int]
"""(KV bytes, median fraction, shapes)"""


def table_fractions(pd: Any, path: Path, t: Table, bw: float) -> Any:
    """The table's bf16 decode shapes with their context, KV bytes and fraction of ``bw``."""
    df = pd.read_parquet(path)
    d = df[
        df.kv_cache_dtype.isin(["bfloat16", "float16"])
        & df.attn_dtype.isin(["bfloat16", "float16"])
        & (df.head_dim == HEAD_DIM)
        & (df.isl == 1)
    ].copy()
    d["ctx"] = d.step + t.ctx_offset
    d["kv_bytes"] = d.batch_size * d.ctx * d.num_key_value_heads * HEAD_DIM * 2 * KV_ELEM_BYTES
    d["frac"] = d.kv_bytes / (d.latency * 1e-3) / bw
    if (d.frac > 1.0).any():
        raise SystemExit(f"{path}: {(d.frac > 1.0).sum()} shapes above the HBM bandwidth; table not usable")
    d["level"] = d.kv_bytes.map(lambda b: round(math.log2(b)))
    return d


def batch_points(d: Any) -> list[Point]:
    """Median fraction per power of two of KV bytes (levels with at least MIN_BIN shapes, from MIN_BYTES)."""
    pts: list[Point] = []
    for k, g in d.groupby("level"):
        if len(g) >= MIN_BIN and 2.0 ** int(k) >= MIN_BYTES:
            pts.append((2.0 ** int(k), float(g.frac.median()), len(g)))
    return pts


def worked_example(d: Any, bw: float) -> str:
    ex = d[(d.batch_size == 256) & (d.step == 255) & (d.num_heads == 32) & (d.num_key_value_heads == 8)]
    if ex.empty:
        return ""
    r = ex.iloc[0]
    lvl = d[(d.batch_size == 256) & (d.level == r.level)]
    return (
        f"Worked example: batch 256, {int(r.ctx)} tokens, 32 query / 8 KV heads -> 256*{int(r.ctx)}*8*128*2*2 = "
        f"{r.kv_bytes:.4e} B in {r.latency:.4f} ms = {r.kv_bytes / (r.latency * 1e-3) / 1e12:.2f} TB/s = "
        f"{r.frac:.3f} of {bw / 1e12:g} TB/s; the batch-256 row's point at 2^{int(r.level)} B is the median of "
        f"{len(lvl)} shapes, {float(lvl.frac.median()):.4f}."
    )


def row(t: Table, acc_id: str, bw: float, batch: int, pts: list[Point], example: str) -> str:
    rel = f"{t.system}/attention/{t.engine}/{t.version}/generation_attention_perf.parquet"
    title, url = engine_table_source(rel, t.engine, t.version, "generation_attention kernel timings")
    name = ENGINE_NAMES[t.engine]
    shapes = ", ".join(str(n) for _, _, n in pts)
    note = (
        f"ENGINE {t.engine} ONLY (cross_check: serves lookups naming this engine). {name} {t.version} decode "
        f"attention of {batch} sequences per call as the collector timed it: {t.kernel}; one new bf16 query token "
        "per sequence against a bf16 paged KV cache, head dim 128, CUDA-graph replay (helper.benchmark_with_power), "
        "the op's KV-cache write of the new token included. m_tokens = sequences per call; x = KV bytes one call "
        f"reads; fraction = x / latency / {bw / 1e12:g} TB/s (catalog); each point the median over the contexts and "
        f"head counts whose bytes round to that power of two (shapes per point: {shapes}); "
        "bench/aic_efficiency_paged_decode.py. " + example
    )
    pts_yaml = "[" + ", ".join(f"[{x:.4e}, {y:.4f}]" for x, y, _ in pts) + "]"
    return engine_curve_row(
        row_id=f"paged-decode-bf16-{t.short}-aic-{t.engine}-b{batch}",
        kind="paged_decode",
        acc_id=acc_id,
        m_tokens=batch,
        x="KV-cache bytes one decode-attention call reads (one layer on one rank)",
        pts_yaml=pts_yaml,
        engine=t.engine,
        source=(
            title,
            url,
            READ_ON,
            "kernel_source, batch_size, isl, step, num_heads, num_key_value_heads, head_dim, attn_dtype, "
            "kv_cache_dtype, latency",
        ),
        note=note,
    )


def main() -> int:
    setup = reduction_setup(
        __doc__ or "",
        "# Paged decode-attention efficiency of serving engines' own kernels, reduced by "
        "bench/aic_efficiency_paged_decode.py\n# from NVIDIA AIConfigurator's generation_attention tables. Do not edit "
        "by hand. Every row is engine-only (cross_check: true\n# with an engine): it serves lookups naming that "
        "engine.",
    )
    if setup is None:
        return 0
    data, pd, cat = setup
    for t, acc_id, path in present_tables(data, TABLES, "attention", "generation_attention"):
        bw = float(cat[acc_id]["memory_bw_tb_per_s"]) * 1e12
        d = table_fractions(pd, path, t, bw)
        example = worked_example(d, bw)
        for batch, g in d.groupby("batch_size"):
            pts = batch_points(g)
            if len(pts) >= 2:
                print()
                print(row(t, acc_id, bw, int(batch), pts, example if int(batch) == 256 else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
