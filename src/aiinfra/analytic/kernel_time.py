"""Kernel times the inference step model reads: the tensor-core format of a weight format, measured GEMM
efficiency (dense, grouped MoE, block-scaled FP8) made monotone in the row count, and the latency-plus-bandwidth
fit of the memory-streaming curve (analytic/inference.py module docstring: the roofline per kernel)."""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field

from aiinfra.analytic.efficiency import NO_DATA, table
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.specs.precision import DTYPE_BYTES
from aiinfra.specs.tables import DomainTables


def compute_dtype(acc_peaks: dict[str, float], weight_precision: str) -> str:
    """The tensor-core format the matmuls run in for a weight format (see module docstring)."""
    if weight_precision == "fp4" and "fp4" in acc_peaks:
        return "fp4"
    if weight_precision in ("fp8", "int8") and weight_precision in acc_peaks:
        return weight_precision
    return "bf16"


def weight_only_moe_dtype(acc_peaks: dict[str, float], weight_precision: str) -> str | None:
    """``"w4a16"`` for FP4 expert weights on a part with no dense FP4 peak (Hopper, Ampere): the engines dequantise
    them to bf16 inside the fused-MoE GEMM, and the catalog keys those ops' measured timings (kind ``moe_shape``,
    fraction of the bf16 peak) by that name; None otherwise."""
    return "w4a16" if weight_precision == "fp4" and compute_dtype(acc_peaks, weight_precision) == "bf16" else None


@dataclass
class _MemoryFits:
    """(accelerator, bandwidth, engine, dtype) -> (t0_s, B∞) of :func:`memory_fit_for`, per catalog tables."""

    fits: dict[tuple[str, float, str | None, str], tuple[float, float]] = field(default_factory=dict)


def memory_fit(
    tables: DomainTables, acc: AcceleratorSpec, engine: str | None = None, dtype: str = "bf16"
) -> tuple[float, float]:
    """(t0_s, B∞ bytes/s) of :func:`memory_fit_for` for ``acc``, kept per catalog tables."""
    key = (acc.id, acc.memory_bw_bytes_per_s, engine, dtype)
    fits = (tables.cached(_MemoryFits) or tables.keep(_MemoryFits())).fits
    if key not in fits:
        fits[key] = memory_fit_for(tables, *key)
    return fits[key]


def memory_fit_for(
    tables: DomainTables, acc_id: str, bw: float, engine: str | None = None, dtype: str = "bf16"
) -> tuple[float, float]:
    """(t0_s, B∞ bytes/s): kernel time = t0 + bytes / B∞ through the ends of the measured memory curve.

    ``dtype``: the GEMM's compute format; an fp8 lookup naming an engine takes that engine's FP8 weight-streaming
    row where measured (its quantised op's fixed cost included), else the part's bf16 streaming curve; bf16 (the
    default, also for element-wise kernels and KV reads) never takes a row measured in another format.
    With one measured point (or none) the fit degenerates to t0 = 0 and B∞ = bw · efficiency."""
    curve, _ = table(tables).curve("memory", acc_id, dtype=dtype, engine=engine)
    if curve is None:
        return 0.0, bw
    if len(curve.log_x) < 2:
        return 0.0, bw * curve.y[0]
    return memory_fit_through_ends(
        10.0 ** curve.log_x[0], curve.y[0], 10.0 ** curve.log_x[-1], curve.y[-1], bw, max(curve.y)
    )


def paged_decode_fraction(
    tables: DomainTables, acc: AcceleratorSpec, engine: str | None, kv_bytes_per_call: float, seqs_per_call: float
) -> float | None:
    """Fraction of ``acc``'s HBM bandwidth the serving ``engine``'s own decode-attention kernel reaches reading
    ``kv_bytes_per_call`` KV-cache bytes of ``seqs_per_call`` sequences in one call (one layer on one rank): the
    engine's ``paged_decode`` curves (catalog efficiency_aic_paged_decode.yaml, one per sequence count, interpolated
    in log bytes and in log2 of the sequence count) measured on this part or its family; None with no engine or no
    such curve (the caller keeps the streaming fit). A paged decode kernel does not stream like a GEMV: it gathers
    each sequence's pages and spreads sequences x KV heads x KV splits over the SMs, so at a few hundred MB per call
    it reaches 0.5-0.7 of the bandwidth where the GEMV curve gives 0.85 (vLLM 0.14.0 and SGLang 0.5.10 on H200)."""
    return _engine_keyed_fraction(tables, acc, engine, "paged_decode", kv_bytes_per_call, seqs_per_call)


def mla_decode_fraction(
    tables: DomainTables, acc: AcceleratorSpec, engine: str | None, latent_bytes_per_call: float, heads_per_call: float
) -> float | None:
    """Fraction of its roofline, max(latent bytes / HBM bandwidth, FLOP / bf16 dense peak), the serving ``engine``'s
    own absorbed-MLA decode-attention op reaches reading ``latent_bytes_per_call`` bytes of cached latent with
    ``heads_per_call`` local query heads (one layer on one rank): the engine's ``mla_decode`` curves (catalog
    efficiency_aic_mla.yaml, one per local head count, interpolated in log bytes and in log2 of the head count)
    measured on this part or its family; None with no engine or no such curve (the caller keeps its own terms)."""
    return _engine_keyed_fraction(tables, acc, engine, "mla_decode", latent_bytes_per_call, heads_per_call)


def mla_prefill_absorbed_fraction(
    tables: DomainTables, acc: AcceleratorSpec, engine: str | None, flop_per_call: float, heads_per_call: float
) -> float | None:
    """Fraction of ``acc``'s bf16 dense peak the serving ``engine``'s own MLA prefill attention reaches in the
    absorbed form (512 + 64 query-key, 512 value dimensions per head) for ``flop_per_call`` FLOP with
    ``heads_per_call`` local query heads: the engine's ``mla_prefill_absorbed`` curves (catalog efficiency_aic_mla.yaml:
    SGLang's context tables) on this part or its family; None where there are none (the caller keeps the attention
    curve)."""
    return _engine_keyed_fraction(tables, acc, engine, "mla_prefill_absorbed", flop_per_call, heads_per_call)


def mla_bmm_fraction(
    tables: DomainTables,
    acc: AcceleratorSpec,
    engine: str | None,
    flop_per_call: float,
    heads_per_call: float,
    dtype: str,
) -> float | None:
    """Fraction of ``acc``'s ``dtype`` dense peak the serving ``engine``'s own pair of absorbed-MLA matmuls (W_UK
    before the attention op, W_UV after it) reaches for ``flop_per_call`` FLOP with ``heads_per_call`` local query
    heads: the engine's ``mla_bmm`` curves (catalog efficiency_aic_mla_bmm.yaml, AIConfigurator's mla_bmm tables) of
    that format, on this part or its family; None where there are none."""
    return _engine_keyed_fraction(tables, acc, engine, "mla_bmm", flop_per_call, heads_per_call, dtype)


def _engine_keyed_fraction(
    tables: DomainTables, acc: AcceleratorSpec, engine: str | None, kind: str, x: float, key: float, dtype: str = "bf16"
) -> float | None:
    """An engine-only ``kind`` curve family of ``dtype`` keyed (``m_tokens``) by sequences or local heads per call, at
    ``x``, measured on ``acc`` or its family; None with no engine or no such curve."""
    if engine is None:
        return None
    eff = table(tables)
    m = max(key, 1.0)
    curve, _ = eff.curve(kind, acc.id, dtype=dtype, engine=engine, m_tokens=m)
    if (
        curve is None
        or curve.engine != engine
        or curve.m_tokens is None
        or curve.dtype != dtype
        or eff.similarity(acc.id, curve) > 1
    ):
        return None
    return eff.lookup(kind, acc.id, x, dtype=dtype, engine=engine, m_tokens=m).frac


def memory_fit_through_ends(
    x0_bytes: float, frac0: float, x1_bytes: float, frac1: float, bw: float, frac_max: float
) -> tuple[float, float]:
    """(t0_s, B∞ bytes/s) of t = t0 + bytes / B∞ through two points of a memory curve (bytes, fraction of
    ``bw``); where the two points admit no such line (t0 < 0 or B∞ above ``bw``), t0 = 0 at the best fraction."""
    t_0, t_1 = x0_bytes / (bw * frac0), x1_bytes / (bw * frac1)
    b_inf = (x1_bytes - x0_bytes) / (t_1 - t_0) if t_1 > t_0 else bw * frac1
    t0 = t_0 - x0_bytes / b_inf
    if t0 < 0.0 or b_inf > bw:
        return 0.0, bw * frac_max
    return t0, b_inf


def gemm_efficiency(
    tables: DomainTables,
    acc: AcceleratorSpec,
    dtype: str,
    flop_per_kernel: float,
    kind: str = "gemm",
    engine: str | None = None,
    m_tokens: float | None = None,
) -> float:
    """Measured fraction of peak; an fp8/fp4 kernel with no curve of its own borrows the bf16 curve (the
    same tensor cores at a higher rate; assuming 100 % would be an unmeasured optimism). ``engine``: the
    serving engine whose own kernel timings are preferred; ``m_tokens``: the GEMM's row count, for the
    engine's per-M curves where they exist (efficiency module docstring)."""
    eff = table(tables)
    look = eff.lookup(kind, acc.id, flop_per_kernel, dtype=dtype, engine=engine, m_tokens=m_tokens)
    if look.source == NO_DATA and dtype != "bf16":
        look = eff.lookup(kind, acc.id, flop_per_kernel, dtype="bf16", engine=engine, m_tokens=m_tokens)
    if look.source == NO_DATA and kind == "moe":
        return gemm_efficiency(tables, acc, dtype, flop_per_kernel, engine=engine)  # no grouped-GEMM data: dense GEMMs
    if kind == "gemm" and look.engine is not None:  # an engine table: burst timings, own or borrowed
        return look.frac * burst_sustained_factor(acc, dtype, m_tokens)
    return look.frac


def burst_sustained_factor(acc: AcceleratorSpec, dtype: str, m_tokens: float | None) -> float:
    """Factor from an engine table's short-burst GEMM rate to the rate the part sustains at its power limit
    (``burst_matmul_sustained_frac``): 1 up to the roofline ridge in rows M (M·bytes/2 FLOP per weight byte =
    peak / bandwidth; below it the GEMM streams weights and the power limit does not bind), the full fraction from
    twice the ridge, geometric in between. NVIDIA's sustained H200 table (accelerators.yaml notes) runs its
    weight-streaming shapes (M <= 128) at 1.02-1.04x the burst tables' rate and its compute-bound shapes at
    0.87-0.91x (median per burst table), with the turn between M = 160 and 512 (M = 256: 0.94-0.98x).
    1 without the field or without M."""
    frac = acc.burst_matmul_sustained_frac
    if frac is None or m_tokens is None:
        return 1.0
    ridge_m = acc.peak_flop_per_s(dtype) / acc.memory_bw_bytes_per_s * DTYPE_BYTES[dtype] / 2.0
    if m_tokens <= ridge_m:
        return 1.0
    return math.pow(float(frac), min(math.log2(m_tokens / ridge_m), 1.0))


def fp8_block_time_factor(tables: DomainTables, acc: AcceleratorSpec, engine: str | None, tokens: float) -> float:
    """Time of an engine's block-scaled FP8 linear op over its per-tensor FP8 op at ``tokens`` rows: the
    ``fp8_block_gemm`` row the engine's own timings give for this very part (bench/aic_efficiency_gemm_fp8_block.py:
    AIConfigurator's tables, median over shapes per M, interpolated in log M); 1 with no engine or no such row. A
    block-scaled checkpoint (DeepSeek-V3 report §3.3.2: 128x128 weight blocks, 1x128 activation groups quantised at
    run time) runs a different kernel, with a scale per block of K to apply, whose time the per-tensor GEMM curves
    do not carry: vLLM 0.14.0's op takes 1.9-2.1x the per-tensor time at one token and 1.3-1.4x at thousands on H100
    and H200; SGLang's and TensorRT-LLM's block op are level with or faster than their per-tensor op."""
    if engine is None:
        return 1.0
    look = table(tables).lookup("fp8_block_gemm", acc.id, max(tokens, 1.0), dtype="fp8", engine=engine)
    return 1.0 if look.source == NO_DATA or look.source.startswith("borrowed:") else look.frac


#: rows M of the grid over which a GEMM's time is made monotone in M: every integer to 64 (the decode batches
#: where the per-M curves' interpolation dips), then eighth octaves up to 2^15 (beyond the largest per-M row)
_ENVELOPE_M = tuple(float(m) for m in range(1, 65)) + tuple(64.0 * 2.0 ** (k / 8) for k in range(1, 73))


def gemm_compute_s(
    tables: DomainTables,
    acc: AcceleratorSpec,
    dtype: str,
    tokens: float,
    flop_per_token_per_kernel: float,
    n_kernels: float,
    engine: str | None = None,
) -> float:
    """Time of ``n_kernels`` GEMMs of ``tokens`` rows (``flop_per_token_per_kernel`` = 2·N·K each) at the measured
    efficiency, made non-decreasing in the row count M: a GEMM of M rows on the same weights reads the same weights
    and does no more work than one of M' > M rows (the roofline lower bound max(2·M·N·K / peak, bytes / bandwidth),
    Williams et al. 2009, grows with M), and an engine can always pad M rows to M' (vLLM pads decode batches to its
    CUDA-graph sizes), so t(M) = min over M' ≥ M of the interpolated t(M'). The per-M curves are interpolated
    linearly in log2(M) in efficiency (efficiency.py), which between the measured M = 1 and M = 16 rows puts
    M = 2 several times more efficient than M = 1 and so faster in time — the dip this removes."""
    peak = acc.sustained_flop_per_s(dtype)

    def one(m: float) -> float:
        x = m * flop_per_token_per_kernel
        return x / (peak * gemm_efficiency(tables, acc, dtype, x, engine=engine, m_tokens=m))

    t = one(tokens)
    if tokens > _ENVELOPE_M[-1]:
        return n_kernels * t
    memo = table(tables).envelopes
    key = (acc.id, dtype, engine, flop_per_token_per_kernel)
    env = memo.get(key)
    if env is None:
        times = [one(m) for m in _ENVELOPE_M]
        for i in range(len(times) - 2, -1, -1):  # suffix minimum: t(M) ≤ t(M') for every M' ≥ M
            times[i] = min(times[i], times[i + 1])
        env = memo[key] = (list(_ENVELOPE_M), times)
    grid, times = env
    i = bisect_left(grid, tokens)  # first grid M ≥ tokens
    return n_kernels * min(t, times[i])
