"""The planner's prefill (prompt) time for long prompts, checked against public prefill-only measurements.

Issue 29: TTFT is under-predicted on most open serving rows, and a decomposition of the DeepSeek-R1 FP8 tp 8 H200
runs (docs/serving.md) found their prompt chunks about 1.45x slower than the step model prices. This script asks
which prefill term a public measurement that is NOT a validation row can pin. Two parts:

1. Attention core at long sequence length against an independent FlashAttention-3 measurement: pytorch/benchmark
   PR #2391 (merged 2024-07-24, commit ff65cb6 "Fix dimension order for FlashAttention-3") prints FA3's forward
   TFLOPS on an H100 in the FA3 paper's setup (bf16, head dim 128, B*S = 16k, H*D = 2048, so 16 heads). The
   operator (torchbenchmark/operators/flash_attention/operator.py) runs without ``--causal`` by default and counts
   4*B*H*S^2*D FLOP (halved only when causal), so these are non-causal calls. The planner's attention curve is
   evaluated at the same FLOP per call; its rows were read from other sources (the FA3 paper's causal figure; NVIDIA
   AIConfigurator's engine context-attention tables), so this is a cross-check, not a fit.
2. Dense block-FP8 GEMMs at prefill sizes (M = 4,096 rows) against DeepGEMM's README table (deepseek-ai/DeepGEMM
   @55ab91f, 2025-03-25: FP8 1x128 / 128x128 block-scaled GEMMs at DeepSeek-V3's shapes on an H800, which has the
   H100 SXM's SMs and FP8 peak). The engine-free FP8 curve was built from this very table (efficiency.yaml
   ``gemm-fp8-h100-deepgemm``), so only the engine-tagged columns (NVIDIA AIConfigurator's own timings of each
   engine's op, times the engine's block-scaled factor) are a check. SGLang 0.4.5 runs its dense block-FP8 layers on
   DeepGEMM (``SGL_ENABLE_JIT_DEEPGEMM=1``), vLLM 0.8.x on its CUTLASS block-FP8 GEMM.
3. The planner's own per-component prefill time of one prompt (batch 1, no chunking, empty cache) for the setups the
   brief names: Llama-3.1 8B (tp 1) and 70B (tp 4) bf16 on H100 with vLLM; DeepSeek-R1 FP8 on 8x H200 with the
   three engine releases of the open vllmbench rows (vLLM 0.8.4 tp 8, SGLang 0.4.5.post1 tp 8, TensorRT-LLM ep 8).
   Each row gives the step's time, its parts (non-expert linear layers incl. head and element-wise kernels, routed
   experts, attention core, tensor-parallel communication) and the rate each part implies (its FLOP / its time).

4. The whole prefill step at tp 4 and tp 8 against TokenWeave's artifact (microsoft/tokenweave
   artifacts_results/output/figure_2_11_summary.csv @e29a8d6; Gond et al., arXiv 2505.11329): vLLM's V1 engine (a
   fork of 0.8.5) timing ``LLM.generate`` of one prompt with one output token (30 runs after 10 warm-ups,
   ``--enforce-eager --disable-custom-all-reduce``, one chunk, prefix caching off, clocks locked with ``nvidia-smi -lgc
   tdp``) for Llama-3.3-70B-Instruct bf16 on an 8x H100 DGX. ``no_ar`` removes the all-reduces, so it checks the
   planner's compute terms (GEMMs, attention, element-wise kernels, the engine's launch and sampling costs) without
   its communication term; ``baseline_multimem`` keeps them, run by a multimem (NVLS) all-reduce kernel rather than
   the stock NCCL path the planner prices.

Usage: PYTHONPATH=src python bench/prefill_check.py [--json]
Not imported by the package.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.kernel_time import fp8_block_time_factor, gemm_compute_s, gemm_efficiency
from aiinfra.analytic.model_figures import param_breakdown
from aiinfra.analytic.step_time import StepBatch
from aiinfra.catalog.resolve import cluster_for

H100 = "nvidia-h100-sxm5-80gb"
H200 = "nvidia-h200-sxm-141gb"

#: pytorch/benchmark PR #2391 test plan, flash_v3 column: (batch, heads, seqlen, head dim) -> forward TFLOPS on H100
FA3_PR2391_TFLOPS: dict[tuple[int, int, int, int], float] = {
    (32, 16, 512, 128): 430.32,
    (16, 16, 1024, 128): 517.099,
    (8, 16, 2048, 128): 565.544,
    (4, 16, 4096, 128): 590.233,
    (2, 16, 8192, 128): 614.234,
    (1, 16, 16384, 128): 620.73,
}

#: DeepGEMM README @55ab91f, "Normal GEMMs for dense models", M = 4096 rows: (M, N, K) -> TFLOPS on H800
DEEPGEMM_DENSE_TFLOPS: dict[tuple[int, int, int], float] = {
    (4096, 2112, 7168): 1058.0,
    (4096, 24576, 1536): 990.0,
    (4096, 32768, 512): 590.0,
    (4096, 7168, 16384): 1358.0,
    (4096, 4096, 7168): 1304.0,
    (4096, 7168, 2048): 1025.0,
}

PROMPT_TOKENS = (1024, 2048, 4096, 8192, 16384, 30000)

#: TokenWeave figure_2_11_summary.csv, Llama-3.3-70B-Instruct: (tp, prompt tokens) -> (baseline_multimem, no_ar) ms
TOKENWEAVE_PREFILL_MS: dict[tuple[int, int], tuple[float, float]] = {
    (8, 1024): (53.501, 41.570),
    (8, 2048): (93.775, 74.287),
    (8, 4096): (179.085, 144.541),
    (8, 8192): (354.890, 289.740),
    (8, 16384): (734.012, 611.719),
    (8, 32768): (1621.156, 1374.094),
    (4, 1024): (81.894, 70.631),
    (4, 2048): (150.699, 134.682),
    (4, 4096): (295.225, 262.497),
    (4, 8192): (609.824, 543.928),
    (4, 16384): (1290.574, 1155.518),
    (4, 32768): (2881.338, 2597.961),
}


def fa3_noncausal_flop(batch: int, heads: int, seq: int, head_dim: int) -> float:
    """Forward FLOP of one non-causal attention call as the benchmark counts it: two matmuls of 2*B*H*S^2*D."""
    return 4.0 * batch * heads * seq * seq * head_dim


def attention_rows() -> list[dict[str, object]]:
    """The planner's attention-curve rate (TFLOPS) at each FA3 call's FLOP, engine-free and per engine, on H100."""
    cluster = cluster_for(H100, 1)
    acc = cluster.accelerator
    peak = acc.sustained_flop_per_s("bf16")
    out: list[dict[str, object]] = []
    for shape, published in FA3_PR2391_TFLOPS.items():
        flop = fa3_noncausal_flop(*shape)
        row: dict[str, object] = {"shape": shape, "flop": flop, "published_tflops": published}
        for eng in (None, "vllm", "sglang", "trtllm"):
            eff = gemm_efficiency(cluster.tables, acc, "bf16", flop, kind="attention", engine=eng)
            row[f"model_{eng or 'curve'}_tflops"] = eff * peak / 1e12
        out.append(row)
    return out


def dense_fp8_rows() -> list[dict[str, object]]:
    """The planner's block-FP8 GEMM rate (TFLOPS, compute side of the roofline) at DeepGEMM's M = 4,096 shapes on
    H100 SXM, engine-free and per engine."""
    cluster = cluster_for(H100, 1)
    acc = cluster.accelerator
    out: list[dict[str, object]] = []
    for (m_rows, n, k), published in DEEPGEMM_DENSE_TFLOPS.items():
        flop = 2.0 * m_rows * n * k
        row: dict[str, object] = {"shape": (m_rows, n, k), "published_tflops": published}
        for eng in (None, "vllm", "sglang", "trtllm"):
            t_s = gemm_compute_s(cluster.tables, acc, "fp8", m_rows, 2.0 * n * k, 1, eng)
            t_s *= fp8_block_time_factor(cluster.tables, acc, eng, m_rows)
            row[f"model_{eng or 'curve'}_tflops"] = flop / t_s / 1e12
        out.append(row)
    return out


@dataclass(frozen=True)
class Setup:
    """One prefill setup of the brief."""

    label: str
    model: str
    accelerator: str
    tp: int
    weight_precision: str
    engine: str
    version: str | None = None
    ep: int = 1


SETUPS = (
    Setup("Llama-3.1-8B bf16 H100 tp1 vLLM", "meta-llama-3.1-8b", H100, 1, "bf16", "vllm"),
    Setup("Llama-3.1-70B bf16 H100 tp4 vLLM", "meta-llama-3.1-70b", H100, 4, "bf16", "vllm"),
    Setup("DeepSeek-R1 fp8 H200 tp8 vLLM 0.8.4", "deepseek-v3", H200, 8, "fp8", "vllm", "0.8.4"),
    Setup("DeepSeek-R1 fp8 H200 tp8 SGLang 0.4.5.post1", "deepseek-v3", H200, 8, "fp8", "sglang", "0.4.5.post1"),
    Setup("DeepSeek-R1 fp8 H200 ep8 TensorRT-LLM", "deepseek-v3", H200, 8, "fp8", "trtllm", None, 8),
)


def prefill_rows(setup: Setup) -> list[dict[str, object]]:
    """The planner's prefill step for one prompt of each length: time, parts and the rates they imply."""
    m = catalog.model(setup.model)
    cluster = cluster_for(setup.accelerator, setup.tp)
    im = InferenceModel(
        model=m,
        cluster=cluster,
        tp=setup.tp,
        weight_precision=setup.weight_precision,
        ep=setup.ep,
        engine=setup.engine,
        engine_version=setup.version,
    )
    pb = param_breakdown(m)
    out: list[dict[str, object]] = []
    for n in PROMPT_TOKENS:
        b = im.breakdown(StepBatch.prefill(n))
        experts_s = im.experts(n, pb.moe_layers).time_s if m.is_moe else 0.0
        d_qk, d_v = im.prefill_attention_dims(StepBatch.prefill(n))
        # causal pairs S(S+1)/2 per layer, 2 FLOP per pair per query-key and value dimension, heads split tp ways
        att_flop = 2.0 * m.num_layers * (n * (n + 1) / 2.0) * (d_qk + d_v) / setup.tp
        out.append(
            {
                "tokens": n,
                "total_ms": b.time_s * 1e3,
                "tokens_per_s": n / b.time_s,
                "linear_ms": (b.linear_s - experts_s) * 1e3,
                "experts_ms": experts_s * 1e3,
                "attention_ms": b.attention_s * 1e3,
                "attention_tflops": att_flop / b.attention_s / 1e12 if b.attention_s else 0.0,
                "comm_ms": b.communication_s * 1e3,
                "other_ms": (b.time_s - b.linear_s - b.attention_s - b.communication_s) * 1e3,
            }
        )
    return out


def tokenweave_rows() -> list[dict[str, object]]:
    """The planner's prefill step of one Llama-3.3-70B bf16 prompt on H100 (vLLM 0.8.5) beside TokenWeave's measured
    step: total against ``baseline_multimem``, total less the all-reduce term against ``no_ar``."""
    m = catalog.model("meta-llama-3.3-70b")
    out: list[dict[str, object]] = []
    for (tp, tokens), (baseline_ms, no_ar_ms) in TOKENWEAVE_PREFILL_MS.items():
        im = InferenceModel(
            model=m,
            cluster=cluster_for(H100, tp),
            tp=tp,
            weight_precision="bf16",
            engine="vllm",
            engine_version="0.8.5",
        )
        b = im.breakdown(StepBatch.prefill(tokens))
        out.append(
            {
                "tp": tp,
                "tokens": tokens,
                "measured_ms": baseline_ms,
                "measured_no_ar_ms": no_ar_ms,
                "model_ms": b.time_s * 1e3,
                "model_no_comm_ms": (b.time_s - b.communication_s) * 1e3,
            }
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print JSON lines instead of tables")
    args = ap.parse_args()
    att = attention_rows()
    if args.json:
        for row in att:
            print(json.dumps({"part": "attention", **row}))
    else:
        print("Attention core, H100 bf16, head dim 128, non-causal (pytorch/benchmark PR #2391, FA3) vs planner")
        print(f"{'B,H,S,D':>18} {'GFLOP':>8} {'FA3':>6} {'curve':>6} {'vllm':>6} {'sglang':>6} {'trtllm':>6}")
        for row in att:
            print(
                f"{row['shape']!s:>18} {float(row['flop']) / 1e9:8.0f} {row['published_tflops']:6.0f} "  # type: ignore[arg-type]
                f"{row['model_curve_tflops']:6.0f} {row['model_vllm_tflops']:6.0f} "
                f"{row['model_sglang_tflops']:6.0f} {row['model_trtllm_tflops']:6.0f}"
            )
    dense = dense_fp8_rows()
    if args.json:
        for row in dense:
            print(json.dumps({"part": "dense_fp8", **row}))
    else:
        print("\nBlock-FP8 dense GEMMs, M = 4096, H100 SXM (DeepGEMM README on H800) vs planner (TFLOPS)")
        print(f"{'M,N,K':>20} {'DeepGEMM':>8} {'curve':>6} {'vllm':>6} {'sglang':>6} {'trtllm':>6}")
        for row in dense:
            print(
                f"{row['shape']!s:>20} {row['published_tflops']:8.0f} {row['model_curve_tflops']:6.0f} "
                f"{row['model_vllm_tflops']:6.0f} {row['model_sglang_tflops']:6.0f} {row['model_trtllm_tflops']:6.0f}"
            )
    for setup in SETUPS:
        rows = prefill_rows(setup)
        if args.json:
            for row in rows:
                print(json.dumps({"part": "prefill", "setup": setup.label, **row}))
            continue
        print(f"\n{setup.label}: planner prefill of one prompt (ms; attention rate in TFLOPS)")
        head = ("tokens", "total", "tok/s", "linear", "experts", "attn", "attnTF", "comm")
        print(" ".join(f"{h:>8}" for h in head))
        for r in rows:
            print(
                f"{r['tokens']:>8} {r['total_ms']:8.1f} {r['tokens_per_s']:8.0f} {r['linear_ms']:8.1f} "
                f"{r['experts_ms']:8.1f} {r['attention_ms']:8.1f} {r['attention_tflops']:8.0f} {r['comm_ms']:8.1f}"
            )
    tw = tokenweave_rows()
    if args.json:
        for row in tw:
            print(json.dumps({"part": "tokenweave_prefill", **row}))
    else:
        print("\nLlama-3.3-70B bf16 prefill step on H100, vLLM 0.8.5 (TokenWeave artifact) vs planner (ms)")
        head = ("tp", "tokens", "measured", "model", "error", "no_ar", "no comm", "error")
        print(" ".join(f"{h:>9}" for h in head))
        for r in tw:
            total, no_comm = float(r["model_ms"]), float(r["model_no_comm_ms"])  # type: ignore[arg-type]
            meas, meas_no_ar = float(r["measured_ms"]), float(r["measured_no_ar_ms"])  # type: ignore[arg-type]
            print(
                f"{r['tp']:>9} {r['tokens']:>9} {meas:9.1f} {total:9.1f} {total / meas - 1:+9.1%} "
                f"{meas_no_ar:9.1f} {no_comm:9.1f} {no_comm / meas_no_ar - 1:+9.1%}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
