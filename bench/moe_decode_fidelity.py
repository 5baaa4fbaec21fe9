"""The shape-blind routed-expert term at decode against the engines' own measured fused-MoE ops.

The catalog's ``moe_shape`` rows (efficiency_aic_moe_by_shape_vllm.yaml / _trtllm.yaml: NVIDIA AIConfigurator's
timings of vLLM's and TensorRT-LLM's fused-MoE op per expert shape, split and token count, balanced routing) give
the measured time of one MoE layer: per-rank FLOP / (fraction · catalog dense peak). For each row of a part and
engine whose shape is a catalog model's, this compares that time at 1-64 tokens with ``InferenceModel.experts`` for
one layer with no engine named (so the shape-blind path prices it: touched experts streamed at the grouped-GEMM
rate, routing kernels, analytic/moe_decode.py). Prints the median predicted / measured and its 10th-90th
percentiles by format and by token range (≤ 8 tokens, 16-64).

Usage: PYTHONPATH=src python bench/moe_decode_fidelity.py [accelerator id] [vllm|trtllm]
(default nvidia-h200-sxm-141gb vllm). Not imported by the package.
"""

from __future__ import annotations

import statistics
import sys

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.app.tables import domain_tables, row_tables

FILES = {"vllm": "efficiency_aic_moe_by_shape_vllm.yaml", "trtllm": "efficiency_aic_moe_by_shape_trtllm.yaml"}
MODELS = ("deepseek-v3", "qwen3-235b-a22b", "mixtral-8x7b", "qwen3-30b-a3b")


def ratios(acc_id: str, engine: str, max_tokens: float = 64.0) -> dict[tuple[str, str], list[float]]:
    """Predicted / measured time of one MoE layer, by (format, token range)."""
    tables = row_tables()
    models = {}
    for mid in MODELS:
        m = catalog.model(mid)
        models[(m.hidden_size, m.expert_ffn, m.num_experts, m.experts_per_token)] = m
    out: dict[tuple[str, str], list[float]] = {}
    for r in domain_tables().file_rows(FILES[engine]):
        if list(r["accelerators"]) != [acc_id]:
            continue
        h, i, e, k, moe_tp, moe_ep = (int(v) for v in r["moe_shape"])
        m = models.get((h, i, e, k))
        if m is None:
            continue
        n = max(moe_tp, moe_ep)
        cluster = tables.cluster_for(acc_id, n)
        dtype = str(r["dtype"])
        im = InferenceModel(model=m, cluster=cluster, tp=n, ep=moe_ep, weight_precision=dtype, attention_dp=moe_ep > 1)
        peak = cluster.accelerator.dense_flop_per_s[dtype]
        for x, frac in r["points"]:
            if x > max_tokens:
                continue
            flop = 2.0 * x * k * 3 * h * i / moe_tp / moe_ep
            measured_s = flop / (frac * peak)
            key = (dtype, "1-8 tokens" if x <= 8 else "16-64 tokens")
            out.setdefault(key, []).append(im.experts(float(x), 1.0).time_s / measured_s)
    return out


def main() -> int:
    acc_id = sys.argv[1] if len(sys.argv) > 1 else "nvidia-h200-sxm-141gb"
    engine = sys.argv[2] if len(sys.argv) > 2 else "vllm"
    for (dtype, span), vals in sorted(ratios(acc_id, engine).items()):
        v = sorted(vals)
        print(
            f"{acc_id} {engine} {dtype} {span}: {len(v)} points, predicted/measured median "
            f"{statistics.median(v):.2f} (p10 {v[len(v) // 10]:.2f}, p90 {v[9 * len(v) // 10]:.2f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
