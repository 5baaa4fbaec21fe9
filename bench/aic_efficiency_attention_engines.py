"""Reduce NVIDIA AIConfigurator's measured vLLM and SGLang prefill-attention timings to attention efficiency rows.

Reads ``<system>/attention/{vllm,sglang}/<version>/context_attention_perf.parquet`` of AIConfigurator's
systems/data (``--data``: that folder, e.g. a checkout of ai-dynamo/aiconfigurator at commit 095f58a; else the
installed ``aiconfigurator_core``) and prints src/aiinfra/catalog/data/efficiency_aic_attention_engines.yaml.
Not imported by the package; prints a message and exits 0 when the data or pandas are absent.

Usage: PYTHONPATH=src <venv>/bin/python bench/aic_efficiency_attention_engines.py [--data DATA] \
           > src/aiinfra/catalog/data/efficiency_aic_attention_engines.yaml
       ... --compare   (every version's curve at the benchmark setup, on stderr, instead of the rows)
       ... --all-shapes  (alternative reduction, not the shipped rows: see ``all_shapes_curve``)

Reduction as bench/aic_efficiency_attention_moe.py's TensorRT-LLM attention rows: the ``context_attention`` op
(one causal prefill of ``batch_size`` sequences of ``isl`` tokens from an empty cache, ``step`` 0), bf16 Q/K/V and
bf16 KV cache, window 0, head dim 128, in the FlashAttention benchmark setup (batch x seqlen = 16,384 tokens, 16 query
heads, S = 128 ... 16,384). x = 2 * causal pairs * (d_qk + d_v) = 4 * B * H * D * S(S+1)/2, the planner's per-layer
per-rank count (analytic/inference.py); fraction = x / latency / catalog bf16 dense peak; each point the median
latency over the table's key-value head counts (1, 2, 4, 8, 16: the same FLOP). Kernel: the table's
``kernel_source`` (the backend the engine picks by default on that part: the collectors time that one).

Versions: per engine and part, the newest version folder holding its own table (a folder with ``reuse.yaml``
borrows another version's table and is skipped). Only Hopper (H100 SXM, H200) and A100 tables are read.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aic_common import (
    BLOB_URL,
    COMMIT_095F58A,
    ENGINE_NAMES,
    SYSTEM_IDS,
    catalog_accelerators,
    reduction_inputs,
)

READ_ON = "2026-11-26"
ATTN_TOKENS = 16384
ATTN_HEADS = 16
ATTN_HEAD_DIM = 128
ATTN_SEQLENS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
EXAMPLE_SEQ = 4096
MIN_BIN = 5
SHORT = {"h100_sxm": "h100", "h200_sxm": "h200", "a100_sxm": "a100"}


@dataclass(frozen=True)
class Table:
    engine: str
    system: str
    version: str
    kernel_source: str
    """the table's kernel_source reduced: the backend the engine runs by default on the part."""
    main_row: str
    """the engine-free main-file row the curve is compared with in the notes."""


TABLES = (
    Table("vllm", "h100_sxm", "0.24.0", "vllm_flash_attn_fa3", "attention-fa3-bf16-h100"),
    Table("vllm", "h200_sxm", "0.24.0", "vllm_flash_attn_fa3", "attention-cudnn-bf16-h200-measured"),
    Table("vllm", "a100_sxm", "0.14.0", "vllm_flash_attn", "attention-fa2-bf16-a100"),
    Table("sglang", "h100_sxm", "0.5.14", "fa3", "attention-fa3-bf16-h100"),
    Table("sglang", "h200_sxm", "0.5.14", "fa3", "attention-cudnn-bf16-h200-measured"),
    Table("sglang", "a100_sxm", "0.5.10", "flash_attention", "attention-fa2-bf16-a100"),
)


def peak_bf16(system: str) -> float:
    rows = catalog_accelerators()
    return float(rows[SYSTEM_IDS[system]]["dense_tflop_per_s"]["bf16"]) * 1e12


def setup_rows(pd: Any, path: Path) -> Any:
    """The benchmark-setup rows of a context-attention table (bf16, bf16 KV, window 0, head dim 128, 16 heads)."""
    df = pd.read_parquet(path)
    window = df.window_size if "window_size" in df else 0
    return df[
        (df.attn_dtype == "bfloat16")
        & (df.kv_cache_dtype == "bfloat16")
        & (window == 0)
        & (df.head_dim == ATTN_HEAD_DIM)
        & (df.num_heads == ATTN_HEADS)
        & (df.step == 0)
    ]


def causal_flop(batch: int, seq: int) -> float:
    """2 * causal pairs * (d_qk + d_v) over the setup's heads: 4 * B * H * D * S(S+1)/2."""
    return 4.0 * batch * ATTN_HEADS * ATTN_HEAD_DIM * seq * (seq + 1) / 2.0


def curve(d: Any, peak: float) -> tuple[list[tuple[float, float]], list[int], str]:
    """(points, sequence lengths used, worked example at EXAMPLE_SEQ) of one kernel's setup rows."""
    pts: list[tuple[float, float]] = []
    seqs: list[int] = []
    ex = ""
    for seq in ATTN_SEQLENS:
        b = ATTN_TOKENS // seq
        g = d[(d.isl == seq) & (d.batch_size == b)].sort_values("num_key_value_heads")
        if g.empty:
            continue
        x = causal_flop(b, seq)
        lat_ms = float(g.latency.median())
        pts.append((x, x / (lat_ms * 1e-3) / peak))
        seqs.append(seq)
        if seq == EXAMPLE_SEQ:
            kv = ", ".join(f"{int(k)}: {v:.4f}" for k, v in zip(g.num_key_value_heads, g.latency, strict=True))
            ex = (
                f"Worked example: S = {seq}, B = {b}, H = {ATTN_HEADS}, D = {ATTN_HEAD_DIM} -> x = "
                f"4*{b}*{ATTN_HEADS}*{ATTN_HEAD_DIM}*{seq}*{seq + 1}/2 = {x:.4e}; latency (ms) by KV heads {{{kv}}}, "
                f"median {lat_ms:.4f} ms -> {x / (lat_ms * 1e-3) / 1e12:.1f} TFLOP/s / {peak / 1e12:g} = "
                f"{x / (lat_ms * 1e-3) / peak:.4f}."
            )
    return pts, seqs, ex


def all_shapes_curve(df: Any, kernel_source: str, peak: float) -> list[tuple[float, float]]:
    """Alternative reduction over every shape of the table (not the shipped rows): each bf16 / head dim 128 / window 0
    row of the kernel with isl >= 128 (any batch, query and KV heads) as (x, x / latency / peak); each point the median
    of the rows within +-1/4 decade of a half-decade x from 1e10 (the setup curve's range; >= MIN_BIN rows). At equal
    x a single sequence with few heads (tensor parallelism) runs far faster than the setup's 16,384 tokens x 16 heads,
    whose Q/K/V/O traffic bounds its short-sequence points; bench/aic_efficiency_attention_engines.py --all-shapes."""
    window = df.window_size if "window_size" in df else 0
    d = df[
        (df.attn_dtype == "bfloat16")
        & (df.kv_cache_dtype == "bfloat16")
        & (window == 0)
        & (df.head_dim == ATTN_HEAD_DIM)
        & (df.step == 0)
        & (df.kernel_source == kernel_source)
        & (df.isl >= ATTN_SEQLENS[0])
    ]
    x = 4.0 * d.batch_size * d.num_heads * ATTN_HEAD_DIM * d.isl * (d.isl + 1) / 2.0
    eff = x / (d.latency * 1e-3) / peak
    lx = x.map(math.log10)
    pts: list[tuple[float, float]] = []
    for e2 in range(20, 30):
        c = e2 / 2.0
        sel = eff[(lx > c - 0.25) & (lx <= c + 0.25)]
        if len(sel) >= MIN_BIN:
            pts.append((10.0**c, float(sel.median())))
    return pts


def own_versions(data: Path, system: str, engine: str) -> list[str]:
    """Version folders of ``system``'s ``engine`` attention tables that hold their own context table (no reuse.yaml)."""
    folder = data / system / "attention" / engine
    if not folder.is_dir():
        return []
    return sorted(
        (
            p.name
            for p in folder.iterdir()
            if (p / "context_attention_perf.parquet").exists() and not (p / "reuse.yaml").exists()
        ),
        key=lambda v: tuple(int(t) if t.isdigit() else 0 for t in v.replace("post", "").split(".")),
    )


def points_yaml(pts: list[tuple[float, float]]) -> str:
    return "[" + ", ".join(f"[{x:.4e}, {y:.4f}]" for x, y in pts) + "]"


def row(pd: Any, data: Path, t: Table, all_shapes: bool = False) -> str | None:
    rel = f"{t.system}/attention/{t.engine}/{t.version}/context_attention_perf.parquet"
    if not (data / rel).exists():
        print(f"# no {rel}", file=sys.stderr)
        return None
    peak = peak_bf16(t.system)
    d = setup_rows(pd, data / rel)
    d = d[d.kernel_source == t.kernel_source]
    pts, seqs, ex = curve(d, peak)
    if not pts:
        return None
    if all_shapes:
        pts = all_shapes_curve(pd.read_parquet(data / rel), t.kernel_source, peak)
        ex = "ALTERNATIVE all-shapes reduction (median over every shape per half decade of x), not the shipped rows."
    name = ENGINE_NAMES[t.engine]
    others = [v for v in own_versions(data, t.system, t.engine) if v != t.version]
    note = (
        f"ENGINE {t.engine} ONLY (cross_check: serves lookups naming engine {t.engine}; training and engine-free "
        f"lookups keep {t.main_row} and the other main rows). {name} {t.version} context attention op "
        f"(kernel_source {t.kernel_source}; AIConfigurator's collector times the backend's KV-cache write plus its "
        "forward, CUDA graph, mean of 6 replays), forward only, causal prefill from an empty cache, bf16 Q/K/V and "
        "KV cache, head dim 128, no window. Setup of the FlashAttention benchmarks the main attention rows read: "
        f"batch x seqlen = 16,384 tokens, 16 query heads, S = {', '.join(str(q) for q in seqs)}; each point the "
        "median latency over the table's KV-head counts (1, 2, 4, 8, 16; GQA does not change the FLOP). x = 2 * "
        "causal pairs * (d_qk + d_v) per layer per rank, as analytic/inference.py counts it. "
        + ex
        + f" Version: the newest {name} folder with its own table (others with their own: "
        + (", ".join(others) or "none")
        + "; see efficiency_sources.md for how they differ). FORWARD ONLY: no training lookup names an engine, so "
        "none takes it."
    )
    url = f"{BLOB_URL.replace('/main/', f'/{COMMIT_095F58A}/')}/{rel}"
    title = (
        f"ai-dynamo/aiconfigurator systems/data/{rel} ({name} {t.version} attention kernel timings, NVIDIA "
        f"collection, Apache-2.0, commit {COMMIT_095F58A[:7]}; latency in ms)"
    )
    fields = (
        "kernel_source, batch_size, isl, num_heads, num_key_value_heads, head_dim, window_size, attn_dtype, "
        "kv_cache_dtype, step, latency"
    )
    return "\n".join(
        [
            f"- id: attention-bf16-{SHORT[t.system]}-aic-{t.engine}",
            "  kind: attention",
            f"  kernel: {t.kernel_source}",
            f"  head_dim: {ATTN_HEAD_DIM}",
            f"  accelerators: [{SYSTEM_IDS[t.system]}]",
            "  dtype: bf16",
            "  x: forward attention FLOP per call, causal (2 * pairs * (d_qk + d_v), pairs = B*S(S+1)/2)",
            f"  points: {points_yaml(pts)}",
            "  provenance: measured",
            f"  engine: {t.engine}",
            "  cross_check: true",
            "  sources:",
            f"    - {{title: '{title}', url: '{url}', read_on: '{READ_ON}', fields: [{fields}]}}",
            "  notes: " + yaml.safe_dump(note, width=10**6, default_style="'").strip(),
        ]
    )


def compare(pd: Any, data: Path) -> None:
    """Every own-table version's curve (fraction of peak at S = 128 ... 16k) per engine, part and kernel, on stderr."""
    for t in TABLES:
        peak = peak_bf16(t.system)
        for v in own_versions(data, t.system, t.engine):
            d = setup_rows(pd, data / t.system / "attention" / t.engine / v / "context_attention_perf.parquet")
            for ks in sorted(d.kernel_source.unique()):
                pts, seqs, _ = curve(d[d.kernel_source == ks], peak)
                vals = " ".join(f"{y:.3f}" for _, y in pts)
                print(f"{t.engine:6s} {t.system:9s} {v:12s} {ks:22s} S={seqs[0]}..{seqs[-1]}: {vals}", file=sys.stderr)


HEADER = """\
# Prefill (context) attention efficiency of vLLM's and SGLang's own attention ops, reduced from NVIDIA
# AIConfigurator's measured kernel tables (ai-dynamo/aiconfigurator, Apache-2.0). Generated by
# bench/aic_efficiency_attention_engines.py; see efficiency_sources.md "AIConfigurator vLLM and SGLang prefill
# attention". Same row format as efficiency_aic_attention_moe.yaml's TensorRT-LLM attention rows. Every row is
# engine + cross_check: only a lookup naming that engine (a vLLM or SGLang serving step) uses it.
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="AIConfigurator systems/data folder")
    ap.add_argument("--compare", action="store_true", help="print every version's curve on stderr instead")
    ap.add_argument("--all-shapes", action="store_true", help="alternative reduction over every shape (not shipped)")
    args = ap.parse_args()
    inputs = reduction_inputs(args.data)
    if inputs is None:
        return 0
    data, pd = inputs
    if args.compare:
        compare(pd, data)
        return 0
    rows = [r for t in TABLES if (r := row(pd, data, t, args.all_shapes)) is not None]
    print(HEADER + "\n" + "\n\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
