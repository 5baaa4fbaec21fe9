"""Reduce NVIDIA AIConfigurator's measured MLA decode-attention timings (SGLang, TensorRT-LLM) to the rows of
src/aiinfra/catalog/data/efficiency_aic_mla.yaml: the fraction of its roofline an engine's absorbed-MLA decode op
reaches against the latent-cache bytes one call reads, one curve per local query-head count.

Reads ``<system>/mla/<engine>/<version>/generation_mla_perf.parquet`` from an installed ``aiconfigurator_core`` or
from ``--data`` (a folder of that layout, e.g. extracted from the repository at commit COMMIT_095F58A); prints the
YAML. Not imported by the package; prints a message and exits 0 when the data are absent.

Usage: <venv>/bin/python bench/aic_efficiency_mla.py [--data DIR] > src/aiinfra/catalog/data/efficiency_aic_mla.yaml

One call = one layer's decode attention on one rank in the absorbed form (DeepSeek-V2 §2.1.3): ``batch_size``
sequences of one new query token, ``num_heads`` local query heads of 512 + 64 query-key and 512 value dimensions
sharing one cached latent of 512 + 64 values per token, bf16 cache (the fp8-cache rows are left out). For ``ctx``
tokens attended per sequence (the SGLang collector attends ``step + 1``, TensorRT-LLM's ``step``):

    latent bytes  = batch * ctx * 576 * 2
    FLOP          = 2 * batch * heads * ctx * (576 + 512)
    roofline time = max(bytes / HBM bandwidth, FLOP / bf16 dense peak)      (catalog accelerators.yaml)
    fraction      = roofline time / latency

The kernel streams the latent once and runs both matmuls over it in the same pass (FlashMLA, FlashAttention-3's MLA
path, TensorRT-LLM's MLA generation kernel), so time ≈ the larger of the two, not their sum: at 16 local heads a call
does 30 FLOP per byte (memory-bound on Hopper: the ridge is 989 / 4.8 = 206 FLOP/B on an H200), at 128 heads 242
(compute-bound). The tables bear the max out: on an H100 (ridge 295 FLOP/B) the 128-head op at 242 FLOP/B has its
bandwidth and FLOP times within 20 % of each other, so a sum would cap the fraction near 0.55, and both engines reach
0.76-0.79 there at 8 GB a call. Each point is the median fraction over the row's shapes (batch 1-1024 x context
1-131k) whose bytes round to one power of two from MIN_BYTES, placed at their median bytes; levels with at least
MIN_BIN shapes.

Tables: SGLang's and TensorRT-LLM's oldest on H100 and H200, the nearest to the spring-2025 releases the validation
rows ran (SGLang 0.5.6.post2, TensorRT-LLM 1.2.0rc5), and SGLang's oldest on B200 (0.5.9), whose collector ran the
trtllm_mla backend: the one SGLang 0.5.6 (the release of the B200 serving rows) picks for DeepSeek-V3 on SM100 (sglang
0.5.6 wheel, server_args.py ServerArgs._handle_model_specific_adjustments: attention_backend "trtllm_mla" when no
backend is given; its context op is that backend's own prefill path, not reduced). Every generation_mla table of those
parts at that commit (all releases) passes the sanity check: no shape above the HBM bandwidth or the bf16 peak (the
script stops on one that does). vLLM 0.14.0's table is left out, for two reasons: its collector timed ``impl.forward``
eagerly with CUDA events (no CUDA graph), so every shape that reads under about 1 GB takes 0.10-0.17 ms whatever its
size (a host launch floor, with outliers to 0.6 ms) and only the shapes above a serving step's per-call sizes show the
kernel; and its bf16-cache rows ran vLLM 0.14's FLASH_ATTN_MLA backend, where vLLM 0.8.x on Hopper ran FlashMLA (its
FlashMLA rows hold an fp8 cache). vLLM keeps the step model's own MLA decode terms.

Prefill (``context_mla_perf.parquet``, kind ``mla_prefill_absorbed``): SGLang's context tables on Hopper time the
absorbed form: the collector's FlashAttentionBackend path (not its Blackwell trtllm_mla one) sets 512 + 64 query-key
and 512 value dimensions for prefill as for decode (collector/sglang/collect_mla.py since 2026-01-13, cc24d1377),
and the latencies confirm it: 0.63-0.71 of the bf16 peak counted as 2 x causal pairs x heads x (576 + 512), where
the 192 / 128 form would be 0.19, far below FA3. That is the form SGLang 0.4.5.post1 ran fresh prompts and short
prefixes in (engines.yaml ``mla_absorbed_prefill``), so the rows price that form only. One call = ``batch_size``
fresh prompts of ``isl`` tokens, causal pairs = batch * isl * (isl + 1) / 2; x = FLOP per call
2 * pairs * heads * 1088, fraction = FLOP / latency / bf16 dense peak, one curve per local head count, each point the
median FLOP and fraction of the shapes whose FLOP rounds to one power of two. Not reduced: TensorRT-LLM's context op
(the decompressed 192 / 128 form, 0.55-0.59 of the peak on H200, level with the step's FA3 curve; the April-2025 build
of the validation rows may have run an Ampere-style kernel there, docs/serving.md) and vLLM's (eager host floor, and
``MLAImpl.forward`` runs kv_b_proj on the new tokens, a GEMM the step prices among its linear layers).
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
LATENT = 512
ROPE = 64
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


SGLANG_KERNEL = (
    "SGLang's FlashAttentionBackend (FA3, SGLang's default MLA backend on Hopper) through RadixAttention on the "
    "absorbed latent, the new token's latent written to the cache (page size 1) included; CUDA-graph replay "
    "(helper.benchmark_with_power)"
)
TRTLLM_KERNEL = (
    "TensorRT-LLM's MLA attention op (MLA generation path of the TRTLLM attention backend: RoPE on the new token, its "
    "latent appended to the paged cache, the absorbed-latent decode kernel); CUDA-graph replay "
    "(helper.benchmark_with_power)"
)
SGLANG_BLACKWELL_KERNEL = (
    "SGLang's TRTLLMMLABackend (FlashInfer's TensorRT-LLM MLA decode kernel, page size 64), the backend SGLang "
    "0.5.6's ServerArgs picks for DeepseekV3ForCausalLM on SM100 when none is given, on the absorbed latent through "
    "RadixAttention, the new token's latent written to the cache included; CUDA-graph replay "
    "(helper.benchmark_with_power)"
)
TABLES = (
    Table("h200_sxm", "h200", "sglang", "0.5.6.post2", 1, SGLANG_KERNEL),
    Table("h100_sxm", "h100", "sglang", "0.5.6.post2", 1, SGLANG_KERNEL),
    Table("h200_sxm", "h200", "trtllm", "1.2.0rc5", 0, TRTLLM_KERNEL),
    Table("h100_sxm", "h100", "trtllm", "1.2.0rc5", 0, TRTLLM_KERNEL),
    Table("b200_sxm", "b200", "sglang", "0.5.9", 1, SGLANG_BLACKWELL_KERNEL),
)

CONTEXT_TABLES = (
    Table("h200_sxm", "h200", "sglang", "0.5.6.post2", 0, SGLANG_KERNEL),
    Table("h100_sxm", "h100", "sglang", "0.5.6.post2", 0, SGLANG_KERNEL),
)
"""The context tables reduced (kind mla_prefill_absorbed; module docstring)."""

Point = tuple[float, float, int]
"""(latent bytes, median fraction, shapes)"""


def shape_fractions(d: Any, ctx_offset: int, bw: float, peak: float) -> Any:
    """Add ctx, latent bytes, FLOP and the fraction of the roofline (module docstring) to ``d``'s shapes (columns
    batch_size, num_heads, step, latency in ms)."""
    d = d.copy()
    d["ctx"] = d.step + ctx_offset
    d["bytes"] = d.batch_size * d.ctx * (LATENT + ROPE) * KV_ELEM_BYTES
    d["flop"] = 2.0 * d.batch_size * d.num_heads * d.ctx * (LATENT + ROPE + LATENT)
    roof = (d.bytes / bw).where(d.bytes / bw >= d.flop / peak, d.flop / peak)
    d["frac"] = roof / (d.latency * 1e-3)
    d["level"] = d.bytes.map(lambda b: round(math.log2(b)))
    return d


def table_shapes(pd: Any, path: Path, t: Table, bw: float, peak: float) -> Any:
    """The table's bf16-cache shapes with their fractions; stops on a table with a shape above the roofline."""
    df = pd.read_parquet(path)
    d = shape_fractions(df[df.kv_cache_dtype.isin(["bfloat16", "float16"]) & (df.isl == 1)], t.ctx_offset, bw, peak)
    if (d.frac > 1.0).any():
        raise SystemExit(f"{path}: {(d.frac > 1.0).sum()} shapes above the roofline; table not usable")
    return d


def heads_points(d: Any) -> list[Point]:
    """Median bytes and median fraction of the shapes whose bytes round to one power of two (levels with at least
    MIN_BIN shapes, from MIN_BYTES): a shape reads 9 x 2^k bytes (576 x 2 B a token, powers of two of sequences and
    tokens), 1.125 x the nearest power of two, so the point sits at the shapes' own bytes."""
    pts: list[Point] = []
    for k, g in d.groupby("level"):
        if len(g) >= MIN_BIN and 2.0 ** int(k) >= MIN_BYTES:
            pts.append((float(g.bytes.median()), float(g.frac.median()), len(g)))
    return pts


def context_shapes(pd: Any, path: Path, peak: float) -> Any:
    """The table's bf16-cache fresh-prompt shapes with FLOP per call (absorbed form) and fraction of ``peak``; stops on
    a table with a shape above the peak."""
    df = pd.read_parquet(path)
    d = df[df.kv_cache_dtype.isin(["bfloat16", "float16"]) & (df.step == 0)].copy()
    d["pairs"] = d.batch_size * d.isl * (d.isl + 1) / 2.0
    d["flop"] = 2.0 * d.pairs * d.num_heads * (LATENT + ROPE + LATENT)
    d["frac"] = d.flop / (d.latency * 1e-3) / peak
    if (d.frac > 1.0).any():
        raise SystemExit(f"{path}: {(d.frac > 1.0).sum()} shapes above the bf16 peak; table not usable")
    d["level"] = d.flop.map(lambda f: round(math.log2(f)))
    return d


def context_points(d: Any) -> list[Point]:
    """Median FLOP and median fraction of the shapes whose FLOP rounds to one power of two (at least MIN_BIN)."""
    return [
        (float(g.flop.median()), float(g.frac.median()), len(g)) for _, g in d.groupby("level") if len(g) >= MIN_BIN
    ]


def context_row(t: Table, acc_id: str, peak: float, heads: int, pts: list[Point]) -> str:
    name = ENGINE_NAMES[t.engine]
    shapes = ", ".join(str(n) for _, _, n in pts)
    note = (
        f"ENGINE {t.engine} ONLY (cross_check: serves lookups naming this engine). {name} {t.version} MLA prefill "
        f"attention in the absorbed form (512 + 64 query-key, 512 value dimensions per head) at {heads} local query "
        f"heads as the collector timed it: {t.kernel}; fresh prompts (no cached prefix), causal. Newer than SGLang "
        "0.4.5.post1 of the validation rows, whose absorbed prefill it prices (engines.yaml mla_absorbed_prefill). "
        "m_tokens = local query heads per call; x = FLOP per call, 2 x batch x isl x (isl + 1) / 2 x heads x 1088; "
        f"fraction = x / latency / {peak / 1e12:g} TFLOP/s bf16; each point the median FLOP and fraction of the batch "
        f"sizes and prompt lengths whose FLOP rounds to one power of two (shapes per point: {shapes}); "
        "bench/aic_efficiency_mla.py."
    )
    pts_yaml = "[" + ", ".join(f"[{x:.4e}, {y:.4g}]" for x, y, _ in pts) + "]"
    x = "FLOP of one absorbed-MLA prefill-attention call (one layer on one rank)"
    return _curve_row(
        t, acc_id, heads, "context_mla", ("mla_prefill_absorbed", "mla-prefill-absorbed"), x, pts_yaml, note
    )


def worked_example(d: Any, bw: float, peak: float) -> str:
    ex = d[(d.batch_size == 64) & (d.num_heads == 16) & (d.ctx >= 8191) & (d.ctx <= 8192)]
    if ex.empty:
        return ""
    r = ex.iloc[0]
    return (
        f"Worked example: 64 sequences x {int(r.ctx)} tokens, 16 heads -> bytes 64*{int(r.ctx)}*576*2 = "
        f"{r.bytes:.4e} B ({r.bytes / bw * 1e3:.4f} ms at {bw / 1e12:g} TB/s), FLOP 2*64*16*{int(r.ctx)}*1088 = "
        f"{r.flop:.4e} ({r.flop / peak * 1e3:.4f} ms at {peak / 1e12:g} TFLOP/s); measured {r.latency:.4f} ms -> "
        f"fraction {r.frac:.3f}."
    )


def row(t: Table, acc_id: str, bw: float, peak: float, heads: int, pts: list[Point], example: str) -> str:
    name = ENGINE_NAMES[t.engine]
    shapes = ", ".join(str(n) for _, _, n in pts)
    note = (
        f"ENGINE {t.engine} ONLY (cross_check: serves lookups naming this engine). {name} {t.version} absorbed-MLA "
        f"decode attention at {heads} local query heads as the collector timed it: {t.kernel}. Newer than the "
        f"spring-2025 releases of the validation rows (no older table exists); applied per engine. m_tokens = local "
        "query heads per call; x = latent-cache bytes one call reads (sequences x tokens x 576 x 2 B); fraction = "
        f"max(x / {bw / 1e12:g} TB/s, FLOP / {peak / 1e12:g} TFLOP/s bf16) / latency, FLOP = 2 x sequences x heads x "
        "tokens x 1088; each point the median bytes and fraction of the batch sizes and contexts whose bytes round "
        f"to one power of two (shapes per point: {shapes}); bench/aic_efficiency_mla.py. " + example
    )
    pts_yaml = "[" + ", ".join(f"[{x:.4e}, {y:.4f}]" for x, y, _ in pts) + "]"
    x = "latent-cache bytes one MLA decode-attention call reads (one layer on one rank)"
    return _curve_row(t, acc_id, heads, "generation_mla", ("mla_decode", "mla-decode"), x, pts_yaml, note)


def _curve_row(
    t: Table, acc_id: str, heads: int, op: str, kind: tuple[str, str], x: str, pts_yaml: str, note: str
) -> str:
    """The catalog row of ``t``'s ``op`` table (generation_mla, context_mla) at ``heads`` local query heads;
    ``kind``: the curve kind and its row-id prefix."""
    rel = f"{t.system}/mla/{t.engine}/{t.version}/{op}_perf.parquet"
    title, url = engine_table_source(rel, t.engine, t.version, f"{op} kernel timings")
    return engine_curve_row(
        row_id=f"{kind[1]}-bf16-{t.short}-aic-{t.engine}-h{heads}",
        kind=kind[0],
        acc_id=acc_id,
        m_tokens=heads,
        x=x,
        pts_yaml=pts_yaml,
        engine=t.engine,
        source=(title, url, READ_ON, "kernel_source, kv_cache_dtype, num_heads, batch_size, isl, step, latency"),
        note=note,
    )


def main() -> int:
    setup = reduction_setup(
        __doc__ or "",
        "# Absorbed-MLA decode-attention efficiency of serving engines' own ops (fraction of the roofline) and\n"
        "# SGLang's absorbed MLA prefill attention (fraction of the bf16 peak), reduced by\n"
        "# bench/aic_efficiency_mla.py from NVIDIA AIConfigurator's generation_mla / context_mla tables.\n"
        "# Do not edit by hand.\n"
        "# Every row is engine-only (cross_check: true with an engine): it serves lookups naming that engine.",
    )
    if setup is None:
        return 0
    data, pd, cat = setup
    for t, acc_id, path in present_tables(data, TABLES, "mla", "generation_mla"):
        bw = float(cat[acc_id]["memory_bw_tb_per_s"]) * 1e12
        peak = float(cat[acc_id]["dense_tflop_per_s"]["bf16"]) * 1e12
        d = table_shapes(pd, path, t, bw, peak)
        example = worked_example(d, bw, peak)
        for heads, g in d.groupby("num_heads"):
            pts = heads_points(g)
            if len(pts) >= 2:
                print()
                print(row(t, acc_id, bw, peak, int(heads), pts, example if int(heads) == 16 else ""))
    for t, acc_id, path in present_tables(data, CONTEXT_TABLES, "mla", "context_mla"):
        peak = float(cat[acc_id]["dense_tflop_per_s"]["bf16"]) * 1e12
        d = context_shapes(pd, path, peak)
        for heads, g in d.groupby("num_heads"):
            pts = context_points(g)
            if len(pts) >= 2:
                print()
                print(context_row(t, acc_id, peak, int(heads), pts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
