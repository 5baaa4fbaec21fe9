"""What a routed-expert (MoE) layer costs at decode beyond its GEMMs' FLOP and its touched experts' weights.

Three mechanisms, each from a source outside the validation rows:

* **Ragged grouped-GEMM streaming.** Serving engines run the routed experts as one grouped GEMM over tokens sorted
  by expert (vLLM and SGLang ``fused_moe`` Triton kernels, TensorRT-LLM's CUTLASS grouped GEMM), not as one dense
  batched GEMM. The project's own H200 measurement (catalog/data/efficiency_moe_decode.yaml, kind ``moe_stream``,
  from bench/gpu/results/h200-2026-11-26.json) has torch._grouped_mm streaming expert weights at 0.59-0.65 of
  peak bandwidth at 1-64 tokens per expert, where torch.bmm over the same weights streams at 0.89-0.93 and the
  dense-GEMV fit the other layers use at 0.86: the expert weights are priced at the grouped rate. A part without
  its own curve borrows one of its architecture generation (H100 the H200's: the same SM90 kernels); other
  generations keep the dense streaming fit (torch._grouped_mm is a CUTLASS SM90 kernel, and on Ampere the engines'
  Triton kernel has no such measurement here).
* **Routing kernels.** Besides its two grouped GEMMs and the router's GEMM, an MoE layer runs the top-k
  selection, the sort of token slots by expert (``moe_align_block_size``) and the weighted sum of each token's
  k expert outputs (``moe_sum``); with FP8 weights (W8A8, block-scaled) the activations entering each grouped
  GEMM are quantised first (``per_token_group_quant_fp8``, twice). This is the kernel sequence of vLLM's
  ``fused_experts_impl`` (vllm/model_executor/layers/fused_moe/fused_moe.py) and of SGLang's copy
  (sglang/srt/layers/moe/fused_moe_triton/fused_moe.py); the activation between the GEMMs is already one of the
  layer's element-wise kernels (analytic/step_overheads.py ``ELEMENTWISE_KERNELS_PER_LAYER``). Each kernel pays
  the part's measured per-kernel latency t0 plus its activation bytes, as the element-wise kernels do.
* **The busiest expert-parallel rank.** With experts split ``ep`` ways, each rank holds E/ep experts and a step
  touches each with probability p = 1 − (1 − k/E)^T under uniform top-k routing; the ranks step in lock-step, so
  the layer lasts as long as the rank that touched the most: E[max of ep Binomial(E/ep, p)] experts' weights,
  not the mean E·p/ep (exact for independent experts; Gumbel 1958 for the maximum of i.i.d. counts).
"""

from __future__ import annotations

import math

from aiinfra.analytic.efficiency import table
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.specs.tables import DomainTables

ROUTING_KERNELS_PER_MOE_LAYER = 3
"""top-k selection, sort of token slots by expert, weighted sum of the k expert outputs (module docstring)."""

FP8_QUANT_KERNELS_PER_MOE_LAYER = 2
"""per-token-group FP8 quantisation of the activations entering each of the two grouped GEMMs (W8A8)."""


def routing_kernels(weight_precision: str) -> int:
    """Kernels an MoE layer runs around its grouped GEMMs (module docstring)."""
    quant = FP8_QUANT_KERNELS_PER_MOE_LAYER if weight_precision == "fp8" else 0
    return ROUTING_KERNELS_PER_MOE_LAYER + quant


def routing_bytes(tokens: float, hidden: int, top_k: int, act_bytes: float) -> float:
    """Activation bytes the routing kernels of one MoE layer move for ``tokens`` tokens: the weighted sum reads the
    k expert outputs of each token and writes one (the top-k and the sort move a few bytes per token)."""
    return (top_k + 1) * tokens * hidden * act_bytes


def expert_stream_bytes_per_s(tables: DomainTables, acc: AcceleratorSpec, tokens_per_expert: float) -> float | None:
    """Rate at which a grouped MoE GEMM streams expert weights at ``tokens_per_expert`` tokens per touched expert:
    the part's ``moe_stream`` curve (own, or one of its architecture generation) times its peak bandwidth; None
    where neither exists."""
    curve, _ = table(tables).curve("moe_stream", acc.id, dtype="bf16")
    if curve is None:
        return None
    if acc.id not in curve.accelerators:
        parts = tables.accelerators()
        donors = {parts[a].generation for a in curve.accelerators if a in parts}
        if acc.generation is None or acc.generation not in donors:
            return None  # another architecture's grouped kernel (torch._grouped_mm is an SM90 CUTLASS kernel)
    return float(curve.at(max(tokens_per_expert, 1.0))) * acc.memory_bw_bytes_per_s


def busiest_rank_experts(num_experts: int, top_k: int, tokens: float, ep: int) -> float:
    """Expected largest number of distinct experts one of ``ep`` ranks (E/ep experts each) streams in a step of
    ``tokens`` tokens under uniform top-k routing: E[max of ep i.i.d. Binomial(E/ep, p)], p = 1 − (1 − k/E)^T
    (module docstring). With ep = 1 it is the union E·p."""
    p = 1.0 - math.pow(1.0 - top_k / num_experts, tokens)
    if ep <= 1:
        return num_experts * p
    n = num_experts // ep
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return float(n)
    # E[max] = sum over x = 0..n-1 of P(max > x) = 1 - F(x)^ep
    cdf, expected = 0.0, 0.0
    for x in range(n):
        cdf += math.comb(n, x) * p**x * (1.0 - p) ** (n - x)
        expected += 1.0 - min(cdf, 1.0) ** ep
    return expected
