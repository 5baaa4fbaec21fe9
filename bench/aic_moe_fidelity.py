"""How well the planner prices one MoE layer's routed experts, checked against TensorRT-LLM's measured fused-MoE op.

For each MoE model of the catalog whose expert shape (hidden, expert width, experts, top-k) NVIDIA AIConfigurator
0.12.0 timed on H100 with TensorRT-LLM 1.3.0rc20 (moe_perf.parquet: CUTLASS fused MoE, FP8 per-tensor, balanced
routing, moe_tp 1), the planner's term for one layer (``InferenceModel.experts``: the union of touched experts
streaming through the weight-streaming fit, the grouped GEMMs at the measured grouped-GEMM efficiency) is compared
with the measured latency of the op at each token count (tokens entering the layer before expert-parallel dispatch,
the collector's num_tokens) and expert-parallel degree. The planner's grouped-GEMM curve for TensorRT-LLM was reduced
from this same table over all shapes, so this measures how much a shape-blind curve misses per shape, not an
independent accuracy.

Usage (needs the AIConfigurator venv: pyarrow, aiconfigurator_core):
  PYTHONPATH=src <venv>/bin/python bench/aic_moe_fidelity.py
Prints one JSON line per (model, ep, tokens) with the measured and predicted milliseconds and their ratio.
Exits 0 with a message when the data are not installed. Not imported by the package.
"""

from __future__ import annotations

import json
import sys

from aic_common import SYSTEM_IDS, data_root
from aic_efficiency_attention_moe import MOE_VERSION

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.catalog.resolve import cluster_for

MODELS = ("meta-llama-4-scout", "meta-llama-4-maverick", "qwen3-235b-a22b", "qwen3-30b-a3b", "mixtral-8x7b")
TABLE = f"h100_sxm/moe/trtllm/{MOE_VERSION}/moe_perf.parquet"
TOKENS = (64, 256, 1024, 4096, 16384)


def main() -> int:
    root = data_root()
    if root is None:
        print(
            "aiconfigurator_core is not installed (pip install aiconfigurator==0.12.0 in a separate venv)",
            file=sys.stderr,
        )
        return 0
    import pyarrow.parquet as pq

    t = pq.read_table(root / TABLE).to_pandas()
    t = t[
        (t.moe_dtype == "fp8")
        & (t.distribution == "balanced")
        & (t.kernel_source == "moe_torch_flow_cutlass")
        & (t.moe_tp_size == 1)
    ]
    acc_id = SYSTEM_IDS["h100_sxm"]
    for model_id in MODELS:
        m = catalog.model(model_id)
        shape = t[
            (t.hidden_size == m.hidden_size)
            & (t.inter_size == m.expert_ffn)
            & (t.num_experts == m.num_experts)
            & (t.topk == m.experts_per_token)
        ]
        for ep in sorted(set(shape.moe_ep_size)):
            if m.num_experts % ep:
                continue
            im = InferenceModel(
                model=m,
                cluster=cluster_for(acc_id, ep),
                tp=ep,
                ep=ep,
                weight_precision="fp8",
                attention_dp=True,
                engine="trtllm",
            )
            for tokens in TOKENS:
                row = shape[(shape.moe_ep_size == ep) & (shape.num_tokens == tokens)]
                if row.empty:
                    continue
                measured_ms = float(row.latency.median())
                predicted_ms = im.experts(float(tokens), 1.0).time_s * 1e3
                print(
                    json.dumps(
                        {
                            "model": model_id,
                            "ep": int(ep),
                            "tokens": tokens,
                            "measured_ms": round(measured_ms, 4),
                            "predicted_ms": round(predicted_ms, 4),
                            "predicted_over_measured": round(predicted_ms / measured_ms, 3),
                        }
                    )
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
