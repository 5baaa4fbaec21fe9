"""Times one engine release's own block-FP8 fused-MoE op (Triton kernels, the release's tuned tile configs) on one GPU,
at DeepSeek-V3/R1's routed-expert shape as one rank of an 8-GPU server holds it, from decode to prefill token counts.

Why: the planner prices vLLM's routed experts from NVIDIA AIConfigurator's timings of vLLM 0.14.0's op
(catalog/data/efficiency_aic_moe_fp8_block_by_shape_vllm.yaml), while the DeepSeek-R1 serving rows ran vLLM 0.8.x,
whose kernel configs differ, and the SGLang rows 0.4.5 (docs/serving.md, "prefill of one prompt": the experts are the
largest prefill term with no other public timing to check). This script runs the older releases' code paths
themselves; engine_moe_shim.py builds them from the wheels. Shapes (hidden 7,168, expert width 2,048, 256 experts,
top-8):

- ``tp8``: every expert, each sliced to width 256 (vLLM's default tensor-parallel MoE at tp 8);
- ``ep8``: 32 whole experts (vLLM's ``--enable-expert-parallel``), tokens routed over all 256, so about one in eight
  token-expert pairs is local; the op sees every token, as vLLM 0.8's EP does (vLLM only).

Routing is uniform random top-8 by default (the planner's own model of which experts a step touches; balanced on
average, as AIConfigurator's tables, but at few tokens it touches fewer experts); ``--routing balanced`` deals the
token-expert pairs round-robin as those tables do. Weights random FP8 with random 128x128 block scales. Each point is
timed twice: eagerly, as an engine's prefill step calls it (3 warm-up calls, then
the median of 10 calls bracketed by CUDA events, so host launch time the GPU waits for is included), and as the
replay of a CUDA graph holding the op (median of 10 replays: GPU time alone, as engines run decode steps and as
AIConfigurator's tables are collected). The stand-in SiLU-and-multiply (three PyTorch kernels where vLLM has one) is
timed alone at each size, both ways, so that its share can be taken out of the op's time measured the same way.

Usage (device): PYTHONPATH=.gpu_carry/vllm-0.8.3 VLLM_ENABLE_MOE_ALIGN_BLOCK_SIZE_TRITON=1 \
    python bench/gpu/engine_moe.py --engine vllm --release 0.8.3 --out $OUT/moe-vllm-0.8.3.json
  PYTHONPATH=.gpu_carry/sglang-0.4.5.post1 ENABLE_MOE_ALIGN_BLOCK_SIZE_TRITON=1 \
    python bench/gpu/engine_moe.py --engine sglang --release 0.4.5.post1 --shapes tp8 --out $OUT/moe-sglang.json
Not imported by the package.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time
from typing import Any

import torch
from decode_step import events_ms, graph_ms

REPS = 10
"""Timed calls or graph replays per point; the median is kept."""

# DeepSeek-V3/R1's routed experts (deepseek-ai/DeepSeek-V3 config.json: hidden_size, moe_intermediate_size,
# n_routed_experts, num_experts_per_tok, quantization_config.weight_block_size); reduce_engine_moe.py checks them
# against the catalog's deepseek-v3 row
HIDDEN, WIDTH, EXPERTS, TOP_K, BLOCK = 7168, 2048, 256, 8, 128
TOKENS = (1, 8, 32, 128, 512, 1024, 2048, 4096, 8192, 16384)
SHAPES = {"tp8": (EXPERTS, WIDTH // 8), "ep8": (EXPERTS // 8, WIDTH)}


def _timed_ms(fn: Any, warmup: int = 3, reps: int = REPS) -> float:
    """Median milliseconds of ``fn()`` over ``reps`` eager calls after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    return events_ms(fn, reps)


def _fp8_weight(experts: int, rows: int, cols: int) -> tuple[torch.Tensor, torch.Tensor]:
    w = (torch.randn(experts, rows, cols, device="cuda", dtype=torch.bfloat16) * 0.05).to(torch.float8_e4m3fn)
    scale = torch.rand(experts, -(rows // -BLOCK), -(cols // -BLOCK), device="cuda", dtype=torch.float32) * 0.01
    return w, scale


def _module(engine: str) -> Any:
    if engine == "vllm":
        from vllm.model_executor.layers.fused_moe import fused_moe as fm
    else:
        from sglang.srt.layers.moe.fused_moe_triton import fused_moe as fm  # type: ignore[no-redef]
    return fm


def _topk_ids(tokens: int, routing: str) -> torch.Tensor:
    """Each token's top-8 experts: ``uniform`` picks 8 distinct experts at random per token; ``balanced`` deals the
    token-expert pairs round-robin (token t takes experts 8t .. 8t + 7 mod 256), so every expert gets an equal share
    and T·k ≥ 256 pairs touch them all, as AIConfigurator's balanced routing does."""
    if routing == "balanced":
        ids = (torch.arange(tokens * TOP_K, device="cuda") % EXPERTS).view(tokens, TOP_K)
        return ids.to(torch.int32)
    return torch.rand(tokens, EXPERTS, device="cuda").topk(TOP_K, dim=1).indices.to(torch.int32)


def run_shape(
    engine: str,
    name: str,
    results: list[dict[str, Any]],
    routing: str = "uniform",
    tokens_list: tuple[int, ...] = TOKENS,
) -> None:
    fm = _module(engine)

    local_experts, width = SHAPES[name]
    w1, w1_scale = _fp8_weight(local_experts, 2 * width, HIDDEN)
    w2, w2_scale = _fp8_weight(local_experts, HIDDEN, width)
    # vLLM's op takes the global expert count and, under expert parallelism, the map of local experts; SGLang
    # 0.4.x's takes neither (tp8 only)
    expert_split: dict[str, Any] = {}
    if engine == "vllm":
        expert_split["global_num_experts"] = EXPERTS
        if local_experts != EXPERTS:
            expert_map = torch.full((EXPERTS,), -1, device="cuda", dtype=torch.int32)
            expert_map[:local_experts] = torch.arange(local_experts, device="cuda", dtype=torch.int32)
            expert_split["expert_map"] = expert_map
    for tokens in tokens_list:
        x = torch.randn(tokens, HIDDEN, device="cuda", dtype=torch.bfloat16)
        topk_ids = _topk_ids(tokens, routing)
        topk_weights = torch.rand(tokens, TOP_K, device="cuda", dtype=torch.float32)

        def call(x: torch.Tensor = x, ids: torch.Tensor = topk_ids, wts: torch.Tensor = topk_weights) -> torch.Tensor:
            return fm.fused_experts_impl(
                x,
                w1,
                w2,
                wts,
                ids,
                inplace=False,
                activation="silu",
                use_fp8_w8a8=True,
                w1_scale=w1_scale,
                w2_scale=w2_scale,
                block_shape=[BLOCK, BLOCK],
                **expert_split,
            )

        act_in = torch.randn(tokens * TOP_K, 2 * width, device="cuda", dtype=torch.bfloat16)
        act_out = torch.empty(tokens * TOP_K, width, device="cuda", dtype=torch.bfloat16)
        try:
            op_ms = _timed_ms(call)
            op_graph_ms = graph_ms(call, REPS)
            act_ms = _timed_ms(lambda o=act_out, i=act_in: torch.ops._C.silu_and_mul(o, i))
            act_graph_ms = graph_ms(lambda o=act_out, i=act_in: torch.ops._C.silu_and_mul(o, i), REPS)
            config = fm.try_get_optimal_moe_config(
                w1.shape, w2.shape, TOP_K, "fp8_w8a8", block_shape=[BLOCK, BLOCK], M=tokens
            )
        except Exception as exc:  # a failed point is recorded, the sweep goes on
            results.append({"shape": name, "tokens": tokens, "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        results.append(
            {
                "shape": name,
                "routing": routing,
                "hidden": HIDDEN,
                "expert_width": width,
                "local_experts": local_experts,
                "experts": EXPERTS,
                "top_k": TOP_K,
                "tokens": tokens,
                "op_ms": op_ms,
                "graph_ms": op_graph_ms,
                "standin_silu_mul_ms": act_ms,
                "standin_silu_mul_graph_ms": act_graph_ms,
                "config": config,
            }
        )
        print(
            f"{name} {tokens:6d} tokens: {op_ms:8.3f} ms eager, {op_graph_ms:8.3f} ms graph",
            f"(stand-in act {act_ms:.3f} ms eager, {act_graph_ms:.3f} ms graph) {config}",
            flush=True,
        )


def facts(engine: str, release: str) -> dict[str, Any]:
    import triton

    smi = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {
        "date": time.strftime("%Y-%m-%d"),
        "device": torch.cuda.get_device_name(),
        "nvidia_smi": smi,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "engine": engine,
        "release": release,
        "method": "fused_experts_impl; eager: CUDA events, 3 warm-ups then median of 10 calls; graph: median of 10 "
        "replays of a CUDA graph holding one call",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("vllm", "sglang"), default="vllm")
    parser.add_argument("--release", required=True, help="the release the shim was built from")
    parser.add_argument("--shapes", default="tp8,ep8")
    parser.add_argument("--routing", choices=("uniform", "balanced"), default="uniform")
    parser.add_argument("--max-tokens", type=int, default=TOKENS[-1])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    for name in args.shapes.split(","):
        run_shape(args.engine, name, results, args.routing, tuple(t for t in TOKENS if t <= args.max_tokens))
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"facts": facts(args.engine, args.release), "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
