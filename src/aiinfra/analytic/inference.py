"""Inference step time and memory per replica: the analytic StepTimeModel.

Per engine iteration (Orca, Yu et al. OSDI'22) on one model replica of tp × pp accelerators:

* Linear layers: 2 FLOP per active parameter per token (Kaplan et al. 2020), timed by the roofline
  (Williams et al. 2009) against the bytes of weights they stream — decode is weight-bandwidth-bound,
  prefill compute-bound. MoE layers stream only the experts the step's tokens touch: expected distinct
  experts E·(1 − (1 − k/E)^T) for T tokens under uniform routing.
* Attention: prefill 2·pairs·(d_qk + d_v) FLOP over causal query·key pairs; decode reads each sequence's
  KV cache (bytes = context × KV bytes per token) and does 2·ctx·(d_qk + d_v) FLOP (Pope et al. 2022,
  "Efficiently Scaling Transformer Inference" §3).
* Tensor parallelism: 2 all-reduces of T·h activations per layer (Shoeybi et al. 2019).
* Quantised weights: int4/fp4 weights halve (vs fp8) the bytes streamed; their matmuls run at the fp4
  peak where the accelerator has one, else at the bf16 peak after dequantisation; fp8/int8 weights use
  the fp8/int8 peak where published.
* Pipeline parallelism: a token crosses the pp stages in sequence, so one iteration takes the sum of the
  stage times (pipelining of several micro-batches is not modelled: conservative for throughput).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiinfra.analytic.comms import collective_time
from aiinfra.analytic.efficiency import table
from aiinfra.analytic.model_figures import attention_dims, param_breakdown
from aiinfra.analytic.step_time import StepBatch
from aiinfra.specs.common import DTYPE_BYTES
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.model import ModelArch


@dataclass(frozen=True, slots=True)
class StepBreakdown:
    time_s: float
    linear_s: float
    attention_s: float
    communication_s: float
    bound: str
    """compute | memory | communication: what dominates the step."""


def compute_dtype(acc_peaks: dict[str, float], weight_precision: str) -> str:
    """The tensor-core format the matmuls run in for a weight format."""
    if weight_precision in ("fp4", "int4"):
        return "fp4" if "fp4" in acc_peaks and weight_precision == "fp4" else "bf16"
    if weight_precision in ("fp8", "int8"):
        key = "fp8" if weight_precision == "fp8" else "int8"
        return key if key in acc_peaks else "bf16"
    return "bf16"


@dataclass(frozen=True)
class InferenceModel:
    """Implements :class:`aiinfra.analytic.step_time.StepTimeModel` for one replica."""

    model: ModelArch
    cluster: ClusterSpec
    tp: int = 1
    pp: int = 1
    weight_precision: str = "bf16"
    kv_precision: str = "bf16"

    # --- sizes
    @property
    def weight_bytes_per_replica(self) -> float:
        return param_breakdown(self.model).total * DTYPE_BYTES[self.weight_precision]

    @property
    def weight_bytes_per_accelerator(self) -> float:
        return self.weight_bytes_per_replica / (self.tp * self.pp)

    @property
    def kv_bytes_per_token_per_accelerator(self) -> float:
        """KV heads shard over TP, replicated when kv_heads < tp (vLLM, Vidur: ceil(kv/tp)); MLA latent replicated."""
        m = self.model
        nbytes = DTYPE_BYTES[self.kv_precision]
        layers = math.ceil(m.num_layers / self.pp)
        if m.attention == "mla":
            return layers * ((m.kv_lora_rank or 0) + (m.qk_rope_head_dim or 0)) * nbytes
        return 2.0 * layers * math.ceil(m.kv_heads / self.tp) * m.head_size * nbytes

    # --- one iteration
    def breakdown(self, batch: StepBatch) -> StepBreakdown:
        m = self.model
        acc = self.cluster.accelerator
        cd = compute_dtype(acc.dense_flop_per_s, self.weight_precision)
        peak = acc.peak_flop_per_s(cd)
        bw = acc.memory_bw_bytes_per_s
        tokens = batch.tokens
        if tokens <= 0:
            return StepBreakdown(0.0, 0.0, 0.0, 0.0, "memory")
        pb = param_breakdown(m)
        wb = DTYPE_BYTES[self.weight_precision]
        # linear layers: dense parts always streamed; MoE: experts touched by this step's tokens
        dense_params = pb.dense_layers * pb.dense_mlp_per_layer + m.num_layers * pb.attention_per_layer
        dense_params += pb.moe_layers * (pb.moe_shared_per_layer + pb.router_per_layer)
        active_flop_params = dense_params + pb.moe_layers * pb.moe_routed_active_per_layer
        streamed_params = dense_params
        if m.is_moe:
            touched = m.num_experts * (1.0 - (1.0 - m.experts_per_token / m.num_experts) ** tokens)
            streamed_params += pb.moe_layers * pb.moe_routed_per_layer * touched / m.num_experts
        logits_tokens = batch.decode_seqs + (1 if batch.prefill_tokens else 0)
        head_params = m.vocab_size * m.hidden_size
        flop = 2.0 * tokens * active_flop_params + 2.0 * logits_tokens * head_params
        wbytes = (streamed_params + head_params) * wb
        n_dev = self.tp  # pp stages run in sequence: per-stage work / tp, summed over stages
        gemm_eff = table().lookup("gemm", acc.id, flop / n_dev / max(m.num_layers, 1) / 4, dtype=cd)
        mem_eff = table().lookup("memory", acc.id, wbytes / n_dev / max(m.num_layers, 1) / 4)
        linear_compute = flop / n_dev / (peak * gemm_eff.frac)
        linear_memory = wbytes / n_dev / (bw * mem_eff.frac)
        linear_s = max(linear_compute, linear_memory)
        # attention
        d_qk, d_v = attention_dims(m)
        attn_flop = 2.0 * m.num_layers * (batch.prefill_attention_pairs + batch.decode_context_tokens) * (d_qk + d_v)
        kv_read = batch.decode_context_tokens * self.kv_bytes_per_token_per_accelerator * self.pp
        aeff = table().lookup("attention", acc.id, attn_flop / n_dev / max(m.num_layers, 1), dtype="bf16")
        kv_eff = table().lookup("memory", acc.id, kv_read / max(m.num_layers, 1))
        attn_peak = acc.peak_flop_per_s("bf16")
        attention_compute = attn_flop / n_dev / (attn_peak * aeff.frac)
        attention_memory = kv_read / (bw * kv_eff.frac)
        attention_s = max(attention_compute, attention_memory)
        # tensor-parallel all-reduces: 2 per layer
        comm_s = 0.0
        if self.tp > 1:
            one = collective_time(self.cluster, "allreduce", tokens * m.hidden_size * 2.0, self.tp)
            comm_s = 2.0 * m.num_layers * one.time_s
        if self.pp > 1:
            hop = collective_time(self.cluster, "p2p", tokens * m.hidden_size * 2.0, 2, self.tp)
            comm_s += (self.pp - 1) * hop.time_s
        total = linear_s + attention_s + comm_s
        compute_part = max(linear_compute, 0.0) + attention_compute
        memory_part = linear_memory + attention_memory
        if comm_s > max(compute_part, memory_part):
            bound = "communication"
        else:
            bound = "compute" if compute_part >= memory_part else "memory"
        return StepBreakdown(total, linear_s, attention_s, comm_s, bound)

    def iteration_time_s(self, batch: StepBatch) -> float:
        return self.breakdown(batch).time_s
