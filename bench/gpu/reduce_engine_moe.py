"""Reduce bench/gpu/engine_moe.py's raw timings of an engine release's fused-MoE op to catalog ``moe_shape`` rows.

``python bench/gpu/reduce_engine_moe.py`` reads the raw files named in RUNS below (bench/gpu/results/) and writes
``src/aiinfra/catalog/data/efficiency_measured_moe_fp8_block_by_shape_<engine>.yaml``, one row per engine, release
range and shape, in the format of efficiency_aic_moe_fp8_block_by_shape_<engine>.yaml (x = tokens entering the
layer; fraction = per-rank FLOP 2·T·k·3·h·i / moe_tp / moe_ep over the op's time over the catalog's dense FP8 peak).

The op's time is the CUDA-graph replay (GPU time, the way the engine tables it stands beside were collected), less
the stand-in SiLU-and-multiply timed alone at the same size in a CUDA graph too (three PyTorch kernels), plus the
engine's fused kernel at the HBM roofline: T·k rows read at 2·i and written at i bf16 elements over the catalog's HBM
bandwidth (a lower bound of that kernel's time, a few per cent of the op). Peaks and bandwidths come from the
catalog's accelerator row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from aiinfra import catalog
from aiinfra.specs.common import DTYPE_BYTES

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "aiinfra" / "catalog" / "data"
RESULTS = Path(__file__).resolve().parent / "results"
#: the catalog model whose routed experts engine_moe.py times
MODEL_ID = "deepseek-v3"

#: raw file -> (engine, releases whose block-FP8 path the file's release shares as engines.yaml ranges them
#: (from_version, below_version), the releases in words, why)
RUNS: dict[str, tuple[str, dict[str, str], str, str]] = {
    "h200-2026-11-27-moe-vllm-0.8.4.json": (
        "vllm",
        {"from_version": "0.8.3", "below_version": "0.8.5"},
        "0.8.3-0.8.4",
        "vLLM 0.8.3 was timed too (h200-2026-11-27-moe-vllm-0.8.3.json): within 2 % of 0.8.4 at every size from 1k "
        "tokens; both releases ship the same H200 tile config for this shape",
    ),
    "h200-2026-11-27-moe-sglang-0.4.5.post1.json": (
        "sglang",
        {"from_version": "0.4.5", "below_version": "0.4.6"},
        "0.4.5",
        "0.4.5.post3's block-FP8 path and H200 tile config are the same as 0.4.5.post1's (its fused_moe.py differs "
        "only in the per-tensor FP8 path and imports)",
    ),
}
#: engine_moe.py's shape names -> (moe_tp, moe_ep)
SPLITS = {"tp8": (8, 1), "ep8": (1, 8)}


def op_seconds(point: dict[str, Any], hbm_bytes_per_s: float) -> float:
    """The op's GPU time with the engine's fused SiLU-and-multiply at its roofline in place of the stand-in's."""
    rows = point["tokens"] * point["top_k"]
    fused_act_s = rows * 3 * point["expert_width"] * DTYPE_BYTES["bf16"] / hbm_bytes_per_s
    return (point["graph_ms"] - point["standin_silu_mul_graph_ms"]) / 1e3 + fused_act_s


def fraction(point: dict[str, Any], split: tuple[int, int], peak_flop_per_s: float, hbm_bytes_per_s: float) -> float:
    """Per-rank FLOP over the op's time over the dense FP8 peak (the catalog's moe_shape convention): the rank's
    expert slices (``expert_width`` is already the tp share) over its 1 / ep of the token-expert pairs."""
    flop = 2.0 * point["tokens"] * point["top_k"] * 3 * point["hidden"] * point["expert_width"] / split[1]
    return flop / op_seconds(point, hbm_bytes_per_s) / peak_flop_per_s


def _check_shape(point: dict[str, Any], split: tuple[int, int]) -> None:
    """The raw file timed the catalog model's experts (engine_moe.py states them as constants)."""
    m = catalog.model(MODEL_ID)
    want = (m.hidden_size, m.expert_ffn, m.num_experts, m.experts_per_token)
    got = (point["hidden"], point["expert_width"] * split[0], point["experts"], point["top_k"])
    if got != want:
        raise SystemExit(f"raw shape {got} is not the catalog's {MODEL_ID} experts {want}")


def rows_of(raw_name: str, acc_id: str, short: str) -> list[dict[str, Any]]:
    engine, releases, label, why = RUNS[raw_name]
    raw = json.loads((RESULTS / raw_name).read_text())
    facts = raw["facts"]
    acc = catalog.accelerator(acc_id)
    peak, hbm = acc.dense_flop_per_s["fp8"], acc.memory_bw_bytes_per_s
    rows = []
    for shape_name, split in SPLITS.items():
        pts = [p for p in raw["results"] if p.get("shape") == shape_name and "graph_ms" in p]
        if not pts:
            continue
        p0 = pts[0]
        _check_shape(p0, split)
        h, i, e, k = p0["hidden"], p0["expert_width"] * split[0], p0["experts"], p0["top_k"]
        shape = [h, i, e, k, *split]
        points = [[p["tokens"], float(f"{fraction(p, split, peak, hbm):.4g}")] for p in pts]
        big = max(pts, key=lambda p: p["tokens"])
        example = (
            f"{big['tokens']} tokens: graph {big['graph_ms']:.4f} ms - stand-in activation "
            f"{big['standin_silu_mul_graph_ms']:.4f} ms + fused activation at the HBM roofline = "
            f"{op_seconds(big, hbm) * 1e3:.4f} ms; fraction {fraction(big, split, peak, hbm):.4g}"
        )
        rows.append(
            {
                "id": f"moe-fp8block-{short}-h{h}-i{i}-e{e}-k{k}-tp{split[0]}-ep{split[1]}-{engine}-{label}-measured",
                "kind": "moe_shape",
                "accelerators": [acc_id],
                "dtype": "fp8",
                "moe_shape": shape,
                "x": "tokens entering the MoE layer (before expert-parallel dispatch)",
                "points": points,
                "provenance": "measured",
                "engine": engine,
                "releases": dict(releases),
                "cross_check": True,
                "sources": [
                    {
                        "title": f"aiinfra's own measurement: bench/gpu/engine_moe.py, {engine} {facts['release']}'s "
                        f"fused_experts_impl on one {facts['device']} ({facts['nvidia_smi']}; PyTorch {facts['torch']},"
                        f" CUDA {facts['cuda']}, Triton {facts['triton']}); raw timings bench/gpu/results/{raw_name}",
                        "url": f"bench/gpu/results/{raw_name}",
                        "read_on": facts["date"],
                        "fields": ["graph_ms", "standin_silu_mul_graph_ms"],
                    }
                ],
                "notes": (
                    f"{engine} {facts['release']}'s own block-FP8 fused MoE (its Triton GEMM, quantisation and "
                    "sorting kernels, its tuned H200 tile configs), DeepSeek-V3/R1 routed experts, uniform random "
                    f"top-8 routing; CUDA-graph replay, median of 10. Applies to releases {label}: {why}. Run under "
                    "the device's Triton, not the release's pinned one. "
                    f"Worked example: {example}."
                ),
            }
        )
    return rows


def main() -> int:
    by_engine: dict[str, list[dict[str, Any]]] = {}
    for raw_name, (engine, *_) in RUNS.items():
        by_engine.setdefault(engine, []).extend(rows_of(raw_name, "nvidia-h200-sxm-141gb", "h200"))
    for engine, rows in by_engine.items():
        out = DATA / f"efficiency_measured_moe_fp8_block_by_shape_{engine}.yaml"
        header = (
            f"# Block-FP8 fused-MoE curves the project timed itself from older {engine} releases' own code on one "
            "NVIDIA H200.\n# Generated by bench/gpu/reduce_engine_moe.py from bench/gpu/results/; format as "
            f"efficiency_aic_moe_fp8_block_by_shape_{engine}.yaml. Do not edit by hand.\n# releases: only lookups "
            "stating a release in [from_version, below_version) use a row (analytic/efficiency.py).\n"
        )
        out.write_text(
            header + yaml.safe_dump(rows, sort_keys=False, width=120, allow_unicode=True, default_flow_style=None)
        )
        print(f"{out.relative_to(ROOT)}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
