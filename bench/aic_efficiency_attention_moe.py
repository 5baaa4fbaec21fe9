"""Reduce NVIDIA AIConfigurator 0.12.0's measured TensorRT-LLM kernel timings to attention and MoE efficiency rows.

Reads ``systems/data/<system>/{attention,moe}/trtllm/<version>/*.parquet`` from an installed ``aiconfigurator_core``
(its companion wheel; run this with the Python of a virtual environment that has it and pandas) and prints the rows
of src/aiinfra/catalog/data/efficiency_aic_attention_moe.yaml. Not imported by the package; prints a message and
exits 0 when the data are absent.

Usage: <venv>/bin/python bench/aic_efficiency_attention_moe.py \
           > src/aiinfra/catalog/data/efficiency_aic_attention_moe.yaml
       <venv>/bin/python bench/aic_efficiency_attention_moe.py --moe-csv moe_points.csv  (every MoE point too)

Attention (kind ``attention``): the ``context_attention`` op (bf16 Q/K/V, bf16 KV cache, window 0, head dim 128,
causal prefill of ``batch_size`` sequences of ``isl`` tokens, no cached prefix: ``step`` is 0 for every context row)
in the FlashAttention benchmark setup the main file's attention rows use: batch x seqlen = 16,384 tokens, 16 heads.
x = 2 * causal pairs * (d_qk + d_v) = 4 * B * H * D * S(S+1)/2, the planner's per-layer per-rank count
(analytic/inference.py breakdown); fraction = x / latency / catalog bf16 dense peak; each point is the median over
the table's key-value head counts (1, 2, 4, 8, 16: the same FLOP).

MoE (kind ``moe``): the ``moe`` op, CUTLASS backend (``moe_torch_flow_cutlass``, gated SwiGLU), balanced routing.
``num_tokens`` are the tokens entering the layer before expert-parallel dispatch (each rank computes its 1/ep share).
Per rank: FLOP = 2 * T * k * 3 * h * (i / tp) / ep over E / ep experts; x = FLOP / (2 * E / ep); fraction =
FLOP / latency / catalog dense peak of the dtype. Kept: every local expert receives tokens (T * k >= E) and the
latency exceeds the weight-streaming floor (local expert bytes / catalog HBM bandwidth). Points: median of the kept
shapes within +-1/4 decade of each half-decade x, bins with at least MIN_BIN points.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aic_common import BLOB_URL, MOE_CALL_COLUMNS, READ_ON, SYSTEM_IDS, data_root

ROOT = Path(__file__).resolve().parents[1]
ACCELERATORS = ROOT / "src" / "aiinfra" / "catalog" / "data" / "accelerators.yaml"
MIN_BIN = 5
ATTN_TOKENS = 16384
ATTN_HEADS = 16
ATTN_HEAD_DIM = 128
ATTN_SEQLENS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
MOE_VERSION = "1.3.0rc20"
"""TensorRT-LLM version of the fused-MoE tables reduced (every part has one)."""
MOE_DTYPES = {"bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0), "nvfp4": ("fp4", 0.5 + 1.0 / 16)}
"""table moe_dtype -> (catalog dtype, weight bytes incl. block scales: nvfp4 = 4-bit values + one fp8 scale per 16)."""


@dataclass(frozen=True)
class System:
    name: str
    acc_id: str
    short: str
    attention_version: str
    attention_cross_check: str | None
    """None: a used row; else the main-file row it is compared with (the row is cross_check: true)."""
    moe_cross_check: str | None


FA3_H100 = "attention-fa3-bf16-h100"
VLLM_H100 = "moe-*-h100-vllm-fused"
SYSTEMS = (
    System("b200_sxm", SYSTEM_IDS["b200_sxm"], "b200", "1.3.0rc20", None, None),
    System("gb200", SYSTEM_IDS["gb200"], "gb200", "1.3.0rc20", None, None),
    System("b300_sxm", SYSTEM_IDS["b300_sxm"], "b300", "1.3.0rc20", None, None),
    System("gb300", SYSTEM_IDS["gb300"], "gb300", "1.3.0rc20", None, None),
    System("l40s", SYSTEM_IDS["l40s"], "l40s", "1.3.0rc20", None, None),
    System("rtx_pro_6000_server", SYSTEM_IDS["rtx_pro_6000_server"], "rtxpro6000", "1.3.0rc20", None, None),
    System("h200_sxm", SYSTEM_IDS["h200_sxm"], "h200", "1.3.0rc20", FA3_H100, VLLM_H100),
    System("h100_sxm", SYSTEM_IDS["h100_sxm"], "h100", "1.3.0rc20", FA3_H100, VLLM_H100),
    System("a100_sxm", SYSTEM_IDS["a100_sxm"], "a100", "1.0.0", "attention-fa2-bf16-a100", None),
)


def catalog() -> dict[str, dict[str, Any]]:
    rows = yaml.safe_load(ACCELERATORS.read_text())
    return {str(r["id"]): r for r in rows}


def source(system: str, op: str, version: str, table: str, fields: str) -> str:
    path = f"{system}/{op}/trtllm/{version}/{table}.parquet"
    title = (
        f"ai-dynamo/aiconfigurator 0.12.0 systems/data/{path} (TensorRT-LLM {version} kernel timings, "
        "NVIDIA collection, Apache-2.0; latency in ms)"
    )
    return f"    - {{title: '{title}', url: '{BLOB_URL}/{path}', read_on: '{READ_ON}', fields: [{fields}]}}"


def points_yaml(pts: list[tuple[float, float]]) -> str:
    return "[" + ", ".join(f"[{x:.4e}, {y:.4f}]" for x, y in pts) + "]"


def attention_rows(pd: Any, data: Path, cat: dict[str, dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for s in SYSTEMS:
        f = data / s.name / "attention" / "trtllm" / s.attention_version / "context_attention_perf.parquet"
        if not f.exists():
            print(f"# {s.name}: no {f.name}", file=sys.stderr)
            continue
        peak = float(cat[s.acc_id]["dense_tflop_per_s"]["bf16"]) * 1e12
        df = pd.read_parquet(f)
        d = df[
            df.attn_dtype.isin(["bfloat16", "float16"])
            & df.kv_cache_dtype.isin(["bfloat16", "float16"])
            & (df.window_size == 0)
            & (df.head_dim == ATTN_HEAD_DIM)
            & (df.num_heads == ATTN_HEADS)
            & (df.step == 0)
            & (df.kernel_source == "torch_flow")
        ]
        pts: list[tuple[float, float]] = []
        seq_used: list[int] = []
        ex = ""
        for seq in ATTN_SEQLENS:
            b = ATTN_TOKENS // seq
            g = d[(d.isl == seq) & (d.batch_size == b)]
            if g.empty:
                continue
            x = 4.0 * b * ATTN_HEADS * ATTN_HEAD_DIM * seq * (seq + 1) / 2.0
            lat_ms = float(g.latency.median())
            pts.append((x, x / (lat_ms * 1e-3) / peak))
            seq_used.append(seq)
            if seq == 4096:
                kv = ", ".join(f"{int(k)}: {v:.4f}" for k, v in zip(g.num_key_value_heads, g.latency, strict=True))
                ex = (
                    f"Worked example: S = 4096, B = 4, H = 16, D = 128 -> x = 4*4*16*128*4096*4097/2 = {x:.4e}; "
                    f"latency (ms) by KV heads {{{kv}}}, median {lat_ms:.4f} ms -> {x / (lat_ms * 1e-3) / 1e12:.1f} "
                    f"TFLOP/s / {peak / 1e12:g} = {x / (lat_ms * 1e-3) / peak:.4f}."
                )
        if not pts:
            continue
        rid = f"attention-trtllm-bf16-{s.short}-aic"
        seqs = ", ".join(str(q) for q in seq_used)
        cc = s.attention_cross_check
        note = (
            f"TensorRT-LLM {s.attention_version} context attention op (attention backend TRTLLM, torch flow, CUDA "
            "graph, mean of 6 replays; the op also applies RoPE and writes the paged KV cache), forward only, causal "
            "prefill from an empty cache, bf16 Q/K/V and KV cache, head dim 128, no window. Setup of the "
            "FlashAttention benchmarks the main attention rows read: batch x seqlen = 16,384 tokens, 16 query heads, "
            f"S = {seqs}; each point the median latency over the table's KV-head "
            "counts (1, 2, 4, 8, 16; GQA does not change the FLOP). x = 2 * causal pairs * (d_qk + d_v) per layer "
            "per rank, as analytic/inference.py counts it. " + ex + " FORWARD ONLY: a training lookup of this curve "
            "uses it for the backward too (FlashAttention-3 on H100: forward 0.585 vs fwd+bwd 0.527 at S = 4k), so "
            "training attention is optimistic by about 10 %. kernel trtllm-fmha: TensorRT-LLM's own context FMHA "
            "(fmha_v2 / trtllm-gen kernels), neither FlashAttention-2 nor -3, so a lookup asking for fa2 or fa3 "
            "does not take it."
        )
        if cc:
            note += f" CROSS-CHECK ONLY (not used by the planner): compare {cc}."
        out.append(
            "\n".join(
                [
                    f"- id: {rid}",
                    "  kind: attention",
                    "  kernel: trtllm-fmha",
                    f"  head_dim: {ATTN_HEAD_DIM}",
                    f"  accelerators: [{s.acc_id}]",
                    "  dtype: bf16",
                    "  x: forward attention FLOP per call, causal (2 * pairs * (d_qk + d_v), pairs = B*S(S+1)/2)",
                    *_measured_tail(
                        pts,
                        bool(cc),
                        source(
                            s.name,
                            "attention",
                            s.attention_version,
                            "context_attention_perf",
                            "batch_size, isl, num_heads, num_key_value_heads, head_dim, window_size, attn_dtype, "
                            "kv_cache_dtype, step, latency",
                        ),
                        note,
                    ),
                ]
            )
        )
    return out


def _measured_tail(pts: list[tuple[float, float]], cross_check: bool, source_line: str, note: str) -> list[str]:
    """The YAML lines every row here ends with: points, provenance, engine, cross_check, its source, notes."""
    return [
        f"  points: {points_yaml(pts)}",
        "  provenance: measured",
        "  engine: trtllm",
        *(["  cross_check: true"] if cross_check else []),
        "  sources:",
        source_line,
        "  notes: " + yaml.safe_dump(note, width=10**6, default_style="'").strip(),
    ]


def with_fraction_of_peak(df: Any, acc: dict[str, Any]) -> Any:
    """Adds to a fused-MoE timing table (its ``dtype`` column set) the catalog dense peak of that dtype, the per-rank
    FLOP 2·T·k·3·h·i / moe_tp / moe_ep, the latency in seconds and the fraction of peak it reached."""
    df["peak"] = df.dtype.map(lambda d: float(acc["dense_tflop_per_s"].get(d, float("nan"))) * 1e12)
    df["flop"] = 2.0 * df.num_tokens * df.topk * 3 * df.hidden_size * df.inter_size / df.moe_tp_size / df.moe_ep_size
    df["t_s"] = df.latency * 1e-3
    df["eff"] = df.flop / df.t_s / df.peak
    return df


def moe_points(pd: Any, data: Path, s: System, cat: dict[str, dict[str, Any]]) -> Any:
    f = data / s.name / "moe" / "trtllm" / MOE_VERSION / "moe_perf.parquet"
    df = pd.read_parquet(f)
    df = df[(df.kernel_source == "moe_torch_flow_cutlass") & df.moe_dtype.isin(list(MOE_DTYPES))].copy()
    acc = cat[s.acc_id]
    bw = float(acc["memory_bw_tb_per_s"]) * 1e12
    df["dtype"] = df.moe_dtype.map(lambda m: MOE_DTYPES[m][0])
    df["wbytes"] = df.moe_dtype.map(lambda m: MOE_DTYPES[m][1])
    df = with_fraction_of_peak(df, acc)
    df["e_local"] = df.num_experts / df.moe_ep_size
    df["floor_s"] = df.e_local * 3 * df.hidden_size * df.inter_size / df.moe_tp_size * df.wbytes / bw
    df["x"] = df.flop / (2.0 * df.e_local)
    df["kept"] = (df.num_tokens * df.topk >= df.num_experts) & (df.t_s > df.floor_s)
    return df


def moe_rows(pd: Any, data: Path, cat: dict[str, dict[str, Any]], csv: Path | None) -> list[str]:
    out: list[str] = []
    frames = []
    for s in SYSTEMS:
        f = data / s.name / "moe" / "trtllm" / MOE_VERSION / "moe_perf.parquet"
        if not f.exists():
            print(f"# {s.name}: no {f.name}", file=sys.stderr)
            continue
        df = moe_points(pd, data, s, cat)
        df["system"] = s.name
        frames.append(df)
        key = list(MOE_CALL_COLUMNS)
        bal = df[df.distribution == "balanced"]
        for dt_table, (dt, _) in MOE_DTYPES.items():
            g = bal[(bal.moe_dtype == dt_table) & bal.kept & bal.peak.notna()]
            if g.empty:
                continue
            pts: list[tuple[float, float]] = []
            counts: list[str] = []
            lx = g.x.map(math.log10)
            for e2 in range(10, 30):
                c = e2 / 2.0
                sel = g[(lx > c - 0.25) & (lx <= c + 0.25)]
                if len(sel) >= MIN_BIN:
                    pts.append((10.0**c, float(sel.eff.median())))
                    counts.append(
                        f"{10.0**c:.1e}: n={len(sel)}, IQR {sel.eff.quantile(0.25):.3f}-{sel.eff.quantile(0.75):.3f}"
                    )
            if not pts:
                continue
            ratios = []
            for dist in ("power_law_1.01", "power_law_1.2"):
                m = g.merge(df[(df.distribution == dist)][[*key, "t_s"]], on=key, suffixes=("", "_pl"))
                r = m.t_s_pl / m.t_s
                ratios.append(f"{dist} {r.median():.2f} (IQR {r.quantile(0.25):.2f}-{r.quantile(0.75):.2f})")
            ex = _moe_example(g)
            cc = s.moe_cross_check
            rid = f"moe-{dt}-{s.short}-trtllm-cutlass-aic"
            note = (
                f"TensorRT-LLM 1.3.0rc20 fused MoE op, CUTLASS backend (moe_torch_flow_cutlass: gated SwiGLU, "
                f"{'nvfp4 block-scaled' if dt == 'fp4' else dt_table} weights and activations), balanced routing, one "
                "rank of a moe_tp x moe_ep group (CUDA graph, mean of 6 runs). num_tokens = tokens entering the layer "
                "BEFORE expert-parallel dispatch: at ep > 1 the latency falls about 1/ep at large num_tokens, and "
                "counting num_tokens as per-rank tokens would put ep-8 points above the dense peak. Per rank: FLOP = "
                "2*T*k*3*h*(i/tp)/ep on E/ep experts; x = FLOP / (2 GEMMs x E/ep); fraction = FLOP / latency / "
                f"{dt} dense peak. Kept: T*k >= E (every local expert gets tokens) and latency above the weight "
                f"floor (E/ep * 3*h*i/tp * {MOE_DTYPES[dt_table][1]:g} B / catalog HBM bandwidth); {len(g)} of "
                f"{int((bal.moe_dtype == dt_table).sum())} balanced shapes (every model shape and tp/ep split the "
                "table holds). Points: median within +-1/4 decade of x (" + "; ".join(counts) + "). " + ex + " Skewed "
                "routing (not used; time ratio to balanced at the kept shapes): " + ", ".join(ratios) + "."
            )
            if cc:
                note += f" CROSS-CHECK ONLY (not used by the planner): compare {cc.replace('*', dt)}."
            out.append(
                "\n".join(
                    [
                        f"- id: {rid}",
                        "  kind: moe",
                        f"  accelerators: [{s.acc_id}]",
                        f"  dtype: {dt}",
                        "  x: 'average FLOP per expert GEMM of one MoE layer = total layer FLOP on the rank / "
                        "(2 GEMMs x experts on the rank)'",
                        *_measured_tail(
                            pts,
                            bool(cc),
                            source(
                                s.name,
                                "moe",
                                "1.3.0rc20",
                                "moe_perf",
                                "kernel_source, moe_dtype, num_tokens, hidden_size, inter_size, topk, num_experts, "
                                "moe_tp_size, moe_ep_size, distribution, latency",
                            ),
                            note,
                        ),
                    ]
                )
            )
    if csv is not None and frames:
        pd.concat(frames).to_csv(csv, index=False)
    return out


def _moe_example(g: Any) -> str:
    """One kept Qwen3-235B-A22B-shaped point (h 4096, i 1536, 128 experts, top-8), else the largest-x point."""
    q = g[
        (g.hidden_size == 4096)
        & (g.inter_size == 1536)
        & (g.num_experts == 128)
        & (g.topk == 8)
        & (g.moe_tp_size == 1)
        & (g.moe_ep_size == 8)
    ]
    r = (q if not q.empty else g).sort_values("num_tokens").iloc[-1]
    t, k, h, i, e = int(r.num_tokens), int(r.topk), int(r.hidden_size), int(r.inter_size), int(r.num_experts)
    tp, ep = int(r.moe_tp_size), int(r.moe_ep_size)
    return (
        f"Worked example: h {h}, i {i}, {e} experts, top-{k}, tp {tp}, ep {ep}, {t} tokens: FLOP = "
        f"2*{t}*{k}*3*{h}*{i}/{tp}/{ep} = {r.flop:.4e} in {r.latency:.4f} ms = {r.flop / r.t_s / 1e12:.1f} TFLOP/s "
        f"= {r.eff:.4f} of {r.peak / 1e12:g}, at x = {r.flop:.4e}/(2*{e // ep}) = {r.x:.4e} (weight floor "
        f"{r.floor_s * 1e3:.4f} ms)."
    )


HEADER = """\
# Attention and MoE efficiency curves reduced from NVIDIA AIConfigurator 0.12.0's measured TensorRT-LLM kernel timings
# (ai-dynamo/aiconfigurator, Apache-2.0). Generated by bench/aic_efficiency_attention_moe.py; see
# efficiency_sources.md "AIConfigurator attention and MoE". Same row format as efficiency.yaml. cross_check rows
# document a second measurement of a part the main file already covers; lookups that name no engine ignore them.
# Every row is engine: trtllm (TensorRT-LLM's own ops): a lookup for that engine prefers them, cross_check or not.
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-root", type=Path, default=None, help="aiconfigurator_core/systems/data")
    ap.add_argument("--moe-csv", type=Path, default=None, help="also write every MoE point with its fraction")
    args = ap.parse_args()
    data: Path | None = args.data_root or data_root()
    if data is None:
        print(
            "aiconfigurator_core is not installed here: nothing to reduce (pip install aiconfigurator==0.12.0 "
            "in a separate virtual environment, then run this with its Python)"
        )
        return 0
    try:
        import pandas as pd  # type: ignore[import-untyped]
    except ImportError:
        print("pandas (with pyarrow) is needed to read the parquet tables")
        return 0
    cat = catalog()
    rows = attention_rows(pd, data, cat) + moe_rows(pd, data, cat, args.moe_csv)
    print(HEADER + "\n" + "\n\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
