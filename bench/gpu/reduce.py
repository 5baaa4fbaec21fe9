"""Reduce bench/gpu/microbench.py's raw timings to catalog rows.

``python bench/gpu/reduce.py bench/gpu/results/h200-2026-11-26.json --accelerator nvidia-h200-sxm-141gb
--tag h200`` writes ``src/aiinfra/catalog/data/efficiency_measured_<tag>.yaml`` (GEMM bf16 and fp8 by FLOP,
weight streaming by bytes, attention fwd+bwd by FLOP for the FlashAttention-2 and cuDNN kernels) and
``kernel_overheads_<tag>.yaml`` (kernel launch, CUDA-graph replay, token sampling, decode-attention KV reads).

The method follows the catalog's other GEMM curves (efficiency_sources.md, ``gemm-bf16-h100-vidur``): a GEMM's
efficiency is 2·M·N·K / time / dense peak, over compute-bound shapes only (arithmetic intensity above the
ridge peak / HBM bandwidth), each point the median of the shapes within ±1/4 decade of a half-decade centre;
weight streaming is bytes / time / HBM bandwidth over the shapes with M ≤ 16, median within ±1/8 decade.
Peaks and bandwidths are read from the catalog's accelerator row, so the fractions multiply back exactly.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parents[2] / "src" / "aiinfra" / "catalog" / "data"


def _accelerator(acc_id: str) -> dict[str, Any]:
    rows = yaml.safe_load((DATA / "accelerators.yaml").read_text())
    for row in rows:
        if row["id"] == acc_id:
            return dict(row)
    raise SystemExit(f"no accelerator {acc_id} in accelerators.yaml")


def _binned(points: list[tuple[float, float]], half_width_decades: float, step_decades: float, min_n: int) -> list:
    """Median fraction of the points within ±half_width of each centre on a grid of ``step`` decades."""
    if not points:
        return []
    lo = math.floor(min(math.log10(x) for x, _ in points) / step_decades) * step_decades
    hi = math.ceil(max(math.log10(x) for x, _ in points) / step_decades) * step_decades
    out = []
    centre = lo
    while centre <= hi + 1e-9:
        inside = [f for x, f in points if abs(math.log10(x) - centre) <= half_width_decades + 1e-9]
        if len(inside) >= min_n:
            out.append([float(f"{10**centre:.4e}"), round(statistics.median(inside), 4), len(inside)])
        centre += step_decades
    return out


def _source(facts: dict[str, Any], raw: str, fields: list[str]) -> dict[str, Any]:
    return {
        "title": (
            f"aiinfra's own measurement: bench/gpu/microbench.py on one {facts['device']} "
            f"({facts['nvidia_smi']}; PyTorch {facts['torch']}, CUDA {facts['cuda']}, cuDNN {facts['cudnn']}); "
            f"raw timings {raw}"
        ),
        "url": raw,
        "read_on": facts["date_utc"],
        "fields": fields,
    }


def gemm_rows(doc: dict[str, Any], acc: dict[str, Any], tag: str, raw: str) -> list[dict[str, Any]]:
    bw = float(acc["memory_bw_tb_per_s"]) * 1e12
    rows = []
    for dtype, elem_bytes in (("bf16", 2), ("fp8", 1)):
        peak = float(acc["dense_tflop_per_s"][dtype]) * 1e12
        ridge = peak / bw
        pts = []
        for r in doc["results"]:
            if r["op"] != "gemm" or r["dtype"] != dtype or "time_s" not in r:
                continue
            m, n, k = r["m"], r["n"], r["k"]
            flop = 2.0 * m * n * k
            bytes_moved = elem_bytes * (m * k + k * n) + 2 * m * n  # fp8 in, bf16 out
            if flop / bytes_moved > ridge:
                pts.append((flop, flop / r["time_s"] / peak))
        binned = _binned(pts, 0.25, 0.5, 3)
        worked = max(
            (r for r in doc["results"] if r["op"] == "gemm" and r["dtype"] == dtype and "time_s" in r),
            key=lambda r: (r["m"] == 4096, r["n"] * r["k"]),
        )
        wf = 2.0 * worked["m"] * worked["n"] * worked["k"]
        rows.append(
            {
                "id": f"gemm-{dtype}-{tag}-measured",
                "kind": "gemm",
                "accelerators": [acc["id"]],
                "dtype": dtype,
                "x": "flop per GEMM (2*M*N*K)",
                "points": [[x, f] for x, f, _ in binned],
                "provenance": "measured",
                "sources": [_source(doc["facts"], raw, ["gemm time_s"])],
                "notes": (
                    f"{'torch.matmul (cuBLAS)' if dtype == 'bf16' else 'torch._scaled_mm per-tensor scales (cuBLASLt)'}"
                    f", {len(pts)} compute-bound shapes (intensity > ridge {ridge:.0f} FLOP/byte) of M 1-16384 x 12 "
                    f"(N, K) model shapes; CUDA-graph replay, inputs rotated past L2. efficiency = 2MNK / time / "
                    f"{peak / 1e12:.1f} TFLOP/s (catalog dense {dtype}); median within +-1/4 decade. Shapes per "
                    f"point: {', '.join(str(c) for _, _, c in binned)}. Worked example: {worked['m']}x{worked['n']}x"
                    f"{worked['k']} -> {wf:.4e} FLOP in {worked['time_s'] * 1e3:.4f} ms = "
                    f"{wf / worked['time_s'] / 1e12:.1f} TFLOP/s = {wf / worked['time_s'] / peak:.3f}."
                ),
            }
        )
    # weight streaming: bf16 GEMMs with M <= 16 move the weight once
    pts = []
    for r in doc["results"]:
        if r["op"] == "gemm" and r["dtype"] == "bf16" and "time_s" in r and r["m"] <= 16:
            m, n, k = r["m"], r["n"], r["k"]
            b = 2.0 * (m * k + k * n + m * n)
            pts.append((b, min(1.0, b / r["time_s"] / bw)))
    binned = _binned(pts, 0.125, 0.25, 2)
    rows.append(
        {
            "id": f"memory-{tag}-measured-gemv",
            "kind": "memory",
            "accelerators": [acc["id"]],
            "x": "bytes moved per kernel (weights + activations in + out)",
            "points": [[x, f] for x, f, _ in binned],
            "provenance": "measured",
            "cross_check": True,
            "sources": [_source(doc["facts"], raw, ["gemm time_s, M <= 16"])],
            "notes": (
                "CROSS-CHECK ONLY (a part's GEMV curve from NVIDIA AIConfigurator's far larger sweep, where one "
                "exists, stays in use; this row checks it). "
                f"bf16 torch.matmul with M = 1-16 rows (GEMV-like weight streaming), {len(pts)} shapes, weights "
                f"4-906 MB; bytes = 2*(MK + KN + MN), efficiency = bytes / time / "
                f"{bw / 1e12:.2f} TB/s (catalog); median within +-1/8 decade (shapes per point: "
                f"{', '.join(str(c) for _, _, c in binned)}). Below the smallest point the lookup clamps "
                "(a 2 MiB device copy took 2.4 us, a 32 MiB one 10 us)."
            ),
        }
    )
    return rows


def attention_rows(doc: dict[str, Any], acc: dict[str, Any], tag: str, raw: str) -> list[dict[str, Any]]:
    peak = float(acc["dense_tflop_per_s"]["bf16"]) * 1e12
    rows = []
    for backend, kernel, label in (("cudnn", "fa3", "cuDNN fused attention"), ("flash", "fa2", "FlashAttention-2")):
        res = [r for r in doc["results"] if r["op"] == "attention_prefill" and r.get("backend") == backend]
        res = [r for r in res if "time_fwd_bwd_s" in r]
        if not res:
            continue
        pts = [
            [float(f"{r['flop_fwd_causal']:.4e}"), round(3.5 * r["flop_fwd_causal"] / r["time_fwd_bwd_s"] / peak, 4)]
            for r in sorted(res, key=lambda r: r["seq"])
        ]
        fwd = ", ".join(
            f"{r['flop_fwd_causal'] / r['time_fwd_s'] / 1e12:.0f}" for r in sorted(res, key=lambda r: r["seq"])
        )
        both = ", ".join(
            f"{3.5 * r['flop_fwd_causal'] / r['time_fwd_bwd_s'] / 1e12:.0f}"
            for r in sorted(res, key=lambda r: r["seq"])
        )
        rows.append(
            {
                "id": f"attention-{backend}-bf16-{tag}-measured",
                "kind": "attention",
                "kernel": kernel,
                "head_dim": 128,
                "accelerators": [acc["id"]],
                "dtype": "bf16",
                "x": "forward attention FLOP per call, causal-halved (4*B*H*S^2*D/2)",
                "points": pts,
                "provenance": "measured",
                "sources": [_source(doc["facts"], raw, ["attention_prefill time_fwd_s, time_fwd_bwd_s"])],
                "notes": (
                    f"PyTorch SDPA, {label} backend, causal, bf16, head dim 128, 16 heads, batch x seq = 16k tokens "
                    f"(the FlashAttention papers' set-up), seq 512-16k. Points are forward+backward: efficiency = "
                    f"3.5 x forward FLOP / (fwd+bwd time) / {peak / 1e12:.1f} TFLOP/s (backward = 2.5 x forward). "
                    f"Host-timed eager calls, launches included. Forward alone, TFLOP/s at 512..16k: {fwd}; "
                    f"forward+backward: {both}."
                ),
            }
        )
    return rows


def overhead_rows(doc: dict[str, Any], acc: dict[str, Any], tag: str, raw: str) -> list[dict[str, Any]]:
    facts = doc["facts"]
    res = doc["results"]

    def launch(mode: str) -> float:
        vals = [
            r.get("time_per_kernel_s") or r.get("time_per_graph_s")
            for r in res
            if r["op"] == "launch" and r["mode"] == mode
        ]
        return statistics.median(v for v in vals if v)

    rows: list[dict[str, Any]] = [
        {
            "id": f"launch-{tag}-pytorch-eager",
            "kind": "launch",
            "accelerators": [acc["id"]],
            "per_kernel_s": float(f"{launch('eager_pytorch'):.3e}"),
            "sources": [_source(facts, raw, ["launch eager_pytorch"])],
            "notes": "Issue rate of tiny PyTorch ops launched eagerly from Python (x.add_(1) on one element, "
            "2,000 in a row, host-timed): the CPU cost per kernel an engine pays outside CUDA graphs. "
            "Median of the two runs.",
        },
        {
            "id": f"launch-{tag}-cuda-graph-replay",
            "kind": "launch",
            "accelerators": [acc["id"]],
            "per_kernel_s": float(f"{launch('cuda_graph_replay'):.3e}"),
            "per_graph_s": float(f"{launch('graph_launch_host'):.3e}"),
            "sources": [_source(facts, raw, ["launch cuda_graph_replay", "launch graph_launch_host"])],
            "notes": "per_kernel_s: GPU time per tiny kernel inside a replayed CUDA graph (200 back-to-back); "
            "per_graph_s: host time to launch a one-kernel graph (500 replays). A decode step under CUDA graphs pays "
            "per_graph_s once plus per_kernel_s per kernel.",
        },
    ]
    samp = [r for r in res if r["op"] == "sampling"]
    for method in sorted({r["method"] for r in samp}):
        pts = sorted((r["batch"], r["time_s"]) for r in samp if r["method"] == method)
        rows.append(
            {
                "id": f"sampling-{tag}-{method.replace('_', '-')}",
                "kind": "sampling",
                "accelerators": [acc["id"]],
                "vocab": samp[0]["vocab"],
                "method": method,
                "points_batch_s": [[b, float(f"{t:.3e}")] for b, t in pts],
                "sources": [_source(facts, raw, ["sampling time_s"])],
                "notes": {
                    "greedy": "argmax over fp32 logits per sequence",
                    "temperature": "softmax(logits / T) then torch.multinomial",
                    "top_p_sort": (
                        "full-vocabulary sort, softmax, cumulative sum, top-p mask (p = 0.9), multinomial, gather"
                    ),
                }[method]
                + "; eager, host-timed (50 calls x 5), launches included, as engines run the sampler outside "
                "their graphs.",
            }
        )
    dec = [r for r in res if r["op"] == "attention_decode" and "time_s" in r]
    for backend in sorted({r["backend"] for r in dec}):
        pts = sorted((r["kv_bytes"], r["batch"], r["ctx"], r["time_s"]) for r in dec if r["backend"] == backend)
        rows.append(
            {
                "id": f"decode-attention-{tag}-{backend}",
                "kind": "decode_attention",
                "accelerators": [acc["id"]],
                "points_kv_bytes_s": [[b, float(f"{t:.3e}")] for b, _, _, t in pts],
                "sources": [_source(facts, raw, ["attention_decode time_s"])],
                "notes": (
                    f"PyTorch SDPA {backend} backend, one new token per sequence, GQA 64 query / 8 KV heads, head dim "
                    "128, bf16 KV; (batch, context) = "
                    + ", ".join(f"({b_}, {c}) {kv / t / 1e12:.2f} TB/s" for kv, b_, c, t in pts)
                    + f" (of {acc['memory_bw_tb_per_s']} TB/s). CUDA-graph replay, KV rotated past L2."
                ),
            }
        )
    moe = [r for r in res if r["op"] == "moe_grouped" and "time_s" in r]
    for kernel in sorted({r["kernel"] for r in moe}):
        pts = sorted(
            (r["experts"], r["hidden"], r["width"], r["m_per_expert"], r["time_s"])
            for r in moe
            if r["kernel"] == kernel
        )
        rows.append(
            {
                "id": f"grouped-gemm-{tag}-{kernel.replace('_', '-')}",
                "kind": "grouped_gemm",
                "accelerators": [acc["id"]],
                "dtype": "bf16",
                "points_shape_s": [[e, h, w, m, float(f"{t:.3e}")] for e, h, w, m, t in pts],
                "sources": [_source(facts, raw, ["moe_grouped time_s"])],
                "notes": (
                    "Routed-expert GEMM with balanced routing, "
                    f"{'torch.bmm' if kernel == 'bmm' else 'torch._grouped_mm'}: "
                    "[experts, hidden, expert width, tokens per expert, seconds]. Weight-streaming rate at 1 token "
                    "per expert: "
                    + ", ".join(f"{e}x{h}x{w} {e * h * w * 2 / t / 1e12:.2f} TB/s" for e, h, w, m, t in pts if m == 1)
                    + "."
                ),
            }
        )
    return rows


def _dump(rows: list[dict[str, Any]], header: str) -> str:
    return header + "\n" + yaml.safe_dump(rows, sort_keys=False, width=200, allow_unicode=True, default_flow_style=None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("raw", help="microbench.py output (JSON)")
    parser.add_argument("--accelerator", required=True, help="catalog accelerator id the device is")
    parser.add_argument("--tag", required=True, help="short name used in row ids and file names")
    parser.add_argument(
        "--cross-check",
        action="store_true",
        help="mark every curve cross_check (kept for the record, not used by lookups) and write no fixed-cost file",
    )
    args = parser.parse_args()
    doc = json.loads(Path(args.raw).read_text())
    acc = _accelerator(args.accelerator)
    raw = Path(args.raw).as_posix().split("bench/", 1)[-1]
    raw = f"bench/{raw}"
    eff = gemm_rows(doc, acc, args.tag, raw) + attention_rows(doc, acc, args.tag, raw)
    head = (
        f"# Efficiency curves measured by the project on one {doc['facts']['device']} ({doc['facts']['date_utc']}).\n"
        f"# Generated by bench/gpu/reduce.py from {raw}; format as efficiency.yaml. Do not edit by hand."
    )
    if args.cross_check:
        for row in eff:
            row["cross_check"] = True
            row["notes"] = "CROSS-CHECK ONLY (the part's published curves stay in use; this row checks them). " + str(
                row["notes"]
            )
    (DATA / f"efficiency_measured_{args.tag}.yaml").write_text(_dump(eff, head))
    if args.cross_check:
        for r in eff:
            print(r["id"], r["points"])
        return 0
    over = overhead_rows(doc, acc, args.tag, raw)
    head = (
        f"# Fixed per-kernel and per-step costs measured by the project on one {doc['facts']['device']} "
        f"({doc['facts']['date_utc']}).\n# Generated by bench/gpu/reduce.py from {raw}. Do not edit by hand. "
        "Kinds: launch (per_kernel_s, per_graph_s), sampling (points_batch_s: [batch, seconds]),\n# decode_attention "
        "(points_kv_bytes_s: [KV bytes read, seconds]), grouped_gemm (points_shape_s: [experts, hidden, width, tokens "
        "per expert, seconds])."
    )
    (DATA / f"kernel_overheads_{args.tag}.yaml").write_text(_dump(over, head))
    for r in eff:
        print(r["id"], r["points"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
