"""Inference step time on one model replica: the analytic StepTimeModel (roofline per kernel).

Per engine iteration (Orca, Yu et al. OSDI'22: iteration-level scheduling) on one replica of tp × pp
accelerators, each decoder layer is a handful of kernels, each timed by the roofline (Williams et al.
2009, CACM): ``max(FLOP / (peak · eff_gemm(FLOP)), t0 + bytes / B∞)`` where

* ``eff_gemm`` is the measured GEMM efficiency curve for the kernel's size (analytic/efficiency.py);
* ``t0 + bytes / B∞`` is a latency-plus-bandwidth fit through the two ends of the accelerator's measured
  memory-streaming curve (Vidur's H100 GEMV profiles: 117 MB at 81 % and 940 MB at 90 % of peak give
  B∞ ≈ 3.06 TB/s and t0 ≈ 5 µs per kernel) — so a model with many small kernels pays a fixed cost per
  kernel, measured, not tuned on any validation row.

Work per step (T = prefill tokens + decoding sequences):

* Linear layers: 2 FLOP per active weight per token (Kaplan et al. 2020, Table 1), reading each weight
  once per step. Decode at small T is weight-bandwidth-bound, prefill compute-bound (ridge ≈ peak / B).
* MoE: the step streams only the experts its tokens touch — expected distinct experts
  E·(1 − (1 − k/E)^T) under uniform top-k routing (the "union of experts"; e.g. Mixtral 8×2 at T = 1
  touches 2 experts, at T = 64 almost all 8) — and does 2·k·expert-params FLOP per token.
* Attention: prefill 2·pairs·(d_qk + d_v) FLOP per layer over causal query·key pairs (FlashAttention
  kernels, efficiency from the attention curve); decode reads each sequence's KV cache
  (context × KV bytes/token) and does 2·ctx·(d_qk + d_v) FLOP (Pope et al. 2022, "Efficiently Scaling
  Transformer Inference" §3), MLA at its kernel's compute-bound efficiency (``_decode_attention_eff``); the read
  runs at the bandwidth the engine's own paged decode kernel reached for the call's bytes and sequences where the
  catalog has it (``_decode_kv_read_s``), else at the streaming fit. MLA decode on a bf16 latent cache runs instead
  at the fraction of its roofline, max(latent read, FLOP), the engine's own measured op reached for the call's bytes
  and local heads where the catalog has it (``_mla_decode_op_s``: SGLang, TensorRT-LLM).
  MLA decodes on the absorbed latent: d_qk = heads·(kv_lora + rope),
  d_v = heads·kv_lora, reading only the latent (DeepSeek-AI 2024, DeepSeek-V2 §2.1.2-2.1.3).
* Tensor parallelism: 2 all-reduces of T·h bf16 activations per layer (Shoeybi et al. 2019, Megatron-LM
  §3), ring times over the measured NCCL curves (analytic/comms.py), or the engine's own all-reduce as measured
  inside it; a release whose own kernels stop at a message size (the custom all-reduce's 8 MiB buffer before
  symmetric-memory all-reduce) sends larger messages, i.e. prefill steps, to NCCL (``allreduce_engine``).
  MLA's down-projections (q_a, kv_a) stay whole on every rank (``mla_replicated_params_per_layer``); the engines
  split only the up- and output projections.
* MLA prefill attention runs in the decompressed multi-head form (192 / 128 dims per head), except where the engine
  release runs it on the absorbed latent (``InferenceModel.prefill_attention_dims``, engines.yaml
  ``mla_absorbed_prefill``: SGLang 0.4.5 with FA3); vLLM before 0.8.5 pads its values to the 192-wide keys
  (``mla_prefill_pads_v``), and a continuing chunk first re-expands its cached prefix from the latent into keys and
  values (``InferenceModel._mla_prefix_reexpansion_s``). With attention data parallelism
  (``attention_dp``: each rank runs attention for its own 1/tp of the sequences, TensorRT-LLM
  ``enable_attention_dp``; vLLM/SGLang "DP attention") the non-expert weights are replicated and the
  routed experts are split ``ep`` ways. Each MoE layer gathers the tokens of all ranks and scatters the
  results back: an all-gather of the step's T·h activations followed by a reduce-scatter of the T·h bf16
  expert outputs. This is what both engines run on a single NVLink domain: TensorRT-LLM's CUTLASS fused MoE
  under attention DP ("dynamic quant + routing + allgather + FusedMoE op + reducescatter", the
  ``CutlassFusedMoE`` docstring, tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py; its all-to-all
  path needs multi-node NVLink), and vLLM's default expert-parallel exchange (``VLLM_ALL2ALL_BACKEND``
  default ``allgather_reducescatter``, vllm/envs.py). TensorRT-LLM quantises the activations before the
  all-gather ("post-quant allgather": 1 B per element for FP8 per-tensor weights, 0.5 B plus one 1-byte
  scale per 16 elements for NVFP4); vLLM gathers bf16. Each token crosses once, whatever its top-k — an
  all-to-all of T·k·h (Lepikhin et al. 2021, GShard §2.2) is not what these engines run. The ranks step
  in lock-step, so when a step says how
  its work is spread (``StepBatch.busiest_rank``) the per-rank layers take the busiest rank's tokens while
  the expert layers take the sum over ranks (TensorRT-LLM tech blog 10, "ADP Balance Strategy": an
  iteration lasts as long as its slowest rank's attention). SGLang before 0.4.10 (engines.yaml
  ``attention_dp_tp_mlp``) keeps only attention data-parallel: every layer all-reduces a zero-padded buffer of
  all ranks' tokens, runs its dense MLP, shared and routed experts split tp ways on them and all-reduces the output
  (``InferenceModel._dp_tp_mlp``).
* Quantised weights move DTYPE_BYTES per weight (int4/fp4: 0.5 B; group scales not counted); their
  matmuls run at the fp4 peak only for fp4 weights on an accelerator with a dense fp4 peak, else
  dequantised to bf16 inside the GEMM (weight-only W4A16: a quarter of the bf16 GEMM at 4× the rows,
  ``InferenceModel._weight_only``); fp8/int8 weights use the fp8/int8 peak where published (W8A8). FP4 routed
  experts on such a part (MXFP4 gpt-oss on H100/H200) take the engine's own weight-only MoE op where NVIDIA
  AIConfigurator timed it at the model's expert shape (``moe_shape`` rows of dtype ``w4a16``, fraction of the bf16
  peak, catalog/data/efficiency_aic_moe_w4a16_by_shape_<engine>.yaml, vLLM and TensorRT-LLM; SGLang takes vLLM's
  rows, engines.yaml ``w4a16_moe_rows_engine``): the dequantising ops reach 0.42-0.57 of the bf16 peak at thousands
  of tokens, not the bf16 GEMM's 0.7.
  Quantisation covers the
  transformer layers' linear weights only: the token embedding and the output head stay in bf16 (NVIDIA
  ModelOpt's export appends ``lm_head`` to ``exclude_modules`` whenever it quantises a layer, and quantises
  linear modules only — modelopt/torch/export/unified_export_hf.py ``_export_hf_checkpoint``), so they are
  stored, streamed and multiplied in bf16.
* Pipeline parallelism: one token crosses the pp stages in sequence, so an iteration costs the sum of
  the stage times plus (pp − 1) activation hops. Engines that keep pp micro-batches in flight (engine profile
  ``pipeline_micro_batches``: vLLM V1 runs ``max_concurrent_batches`` = pp batches,
  vllm/v1/executor/multiproc_executor.py; TensorRT-LLM's PyExecutor one micro-batch per stage,
  ``num_micro_batches = pp_size``, tensorrt_llm/_torch/pyexecutor/py_executor.py; SGLang's PP scheduler one per
  stage, scheduler_pp_mixin.py) split the step into pp micro-batches of B/pp: every sequence advances one token
  per pipeline cycle, which lasts as long as one micro-batch's trip (pp stages + head + pp − 1 hops) or, when
  longer, the last stage's work on all k micro-batches (it also runs the head):
  ``max(pp·t_s(B/k) + t_head + (pp−1)·t_hop, k·(t_s + t_head))`` with k = min(pp, requests in the step) (Huang
  et al. 2019, GPipe §2.2, for the pipeline; the bubble is the hop time the stages wait for).
* A user's calibration (catalog/calibration.py, fitted by ``aiinfra calibrate``) divides the compute, memory and
  communication times by its efficiency scales and adds its per-iteration overhead; neutral without one.
* The engine's fixed costs per iteration (analytic/step_overheads.py): a CUDA-graph launch or, for steps it runs
  eagerly from Python, the host's issue of every kernel as a floor, and its sampler over the vocabulary — measured
  by the project (kernel_overheads_<part>.yaml); behind an API server (``streamed``), at least the server's time to
  stream the step's chunks (the engine profile's measured cost per chunk); and the engine release's measured host
  time per iteration (scheduling, input preparation), added to the step or, under an overlap scheduler, hidden
  behind it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiinfra.analytic.comms import collective_time, engine_allreduce_measured
from aiinfra.analytic.efficiency import NO_DATA, table
from aiinfra.analytic.kernel_time import (
    compute_dtype,
    fp8_block_time_factor,
    gemm_compute_s,
    gemm_efficiency,
    memory_fit,
    mla_bmm_fraction,
    mla_decode_fraction,
    mla_prefill_absorbed_fraction,
    paged_decode_fraction,
    weight_only_moe_dtype,
)
from aiinfra.analytic.mla_terms import (
    mla_kv_b_params_per_layer,
    mla_reexpansion_bytes_per_token,
    mla_reexpansion_flop_per_token,
    mla_replicated_params_per_layer,
)
from aiinfra.analytic.model_figures import attention_dims, param_breakdown
from aiinfra.analytic.moe_decode import (
    busiest_rank_experts,
    expert_stream_bytes_per_s,
    routing_bytes,
    routing_kernels,
)
from aiinfra.analytic.step_overheads import (
    ELEMENTWISE_KERNELS_PER_LAYER,
    engine_overheads,
    kernels_per_step,
    serial_stream_s,
    streamed_step_s,
    with_host_step,
    with_overheads,
)
from aiinfra.analytic.step_time import StepBatch, cached_prefix_tokens, chunk_prefix_tokens
from aiinfra.analytic.window import decode_key_groups, decode_layer_keys, prefill_layer_pairs
from aiinfra.specs.calibration import Factors
from aiinfra.specs.common import DTYPE_BYTES
from aiinfra.specs.engine import UnfusedChannelFp8, WindowedKvMemory, parse_version
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.model import MXFP4_SCALE_BLOCK, ModelArch

ACT_BYTES = 2.0
"""Activations travel in bf16 between layers and in collectives."""

NVFP4_BLOCK_ELEMENTS = 16
"""NVFP4 stores one FP8 (E4M3) scale per 16 FP4 values (NVIDIA technical blog "Introducing NVFP4 for Efficient
and Accurate Low-Precision Inference", 2025: "a shared FP8 (E4M3) scale factor for every 16 values")."""


@dataclass(frozen=True, slots=True)
class StepBreakdown:
    """Time (s) of one engine iteration, its parts (linear layers, attention, communication) and what bounds it."""

    time_s: float
    linear_s: float
    attention_s: float
    communication_s: float
    bound: str
    """compute | memory | communication: the resource whose time dominates the step."""
    compute_s: float = 0.0
    memory_s: float = 0.0


@dataclass(frozen=True, slots=True)
class _Kernels:
    """Aggregated roofline of a group of identical kernels on one accelerator."""

    compute_s: float
    memory_s: float

    @property
    def time_s(self) -> float:
        """Roofline time (s): the slower of compute and memory traffic."""
        return max(self.compute_s, self.memory_s)

    def scaled(self, f: Factors) -> _Kernels:
        """The kernels at the calibrated efficiencies (catalog/calibration.py): compute time / compute scale,
        memory time / memory scale."""
        if f.neutral:
            return self
        return _Kernels(self.compute_s / f.compute_efficiency_scale, self.memory_s / f.memory_efficiency_scale)


def micro_batches(batch: StepBatch, pp: int) -> int:
    """Micro-batches a step splits into on ``pp`` stages: one per stage, but no more than the step's requests (a
    request is never split between micro-batches)."""
    return max(1, min(pp, batch.decode_seqs + batch.prefill_requests))


def micro_batch(batch: StepBatch, parts: int) -> StepBatch:
    """One of ``parts`` micro-batches of a step: sequences and prompt tokens split as evenly as whole units allow (the
    largest part, rounded up), context and attention pairs in proportion to its sequences and tokens."""
    if parts <= 1:
        return batch
    pre = -(-batch.prefill_tokens // parts)
    seqs = -(-batch.decode_seqs // parts)
    ctx = round(batch.decode_context_tokens * seqs / batch.decode_seqs) if batch.decode_seqs else 0
    pairs = batch.prefill_attention_pairs * pre / batch.prefill_tokens if batch.prefill_tokens else 0.0
    rank = micro_batch(batch.busiest_rank, parts) if batch.busiest_rank is not None else None
    n_pre = -(-batch.prefill_requests // parts)
    return StepBatch(pre, pairs, seqs, ctx, batch.decode_queries_per_seq, rank, n_pre)


@dataclass(frozen=True, slots=True)
class _TokenTerms:
    """The token-count-dependent part of a step on one pipeline stage (:meth:`InferenceModel._token_terms`)."""

    stage_linear_s: float
    """Linear layers, element-wise kernels and experts of one stage (calibrated); the head is apart."""
    stage_comm_s: float
    """Tensor-parallel (and attention-DP) collectives of one stage, before the calibration's communication scale."""
    hop_s: float
    """One activation hop between pipeline stages (0 without pp)."""
    linear_compute_s: float
    """One stage's linear compute and memory times (the bound classification)."""
    linear_memory_s: float
    head: _Kernels


@dataclass(frozen=True)
class InferenceModel:
    """Implements :class:`aiinfra.analytic.step_time.StepTimeModel` for one replica (tp × pp accelerators)."""

    model: ModelArch
    cluster: ClusterSpec
    tp: int = 1
    pp: int = 1
    weight_precision: str = "bf16"
    kv_precision: str = "bf16"
    ep: int = 1
    """Expert-parallel degree inside the tp group (1 = experts tensor-parallel like dense MLPs)."""
    attention_dp: bool = False
    """Attention data-parallel over the tp ranks (non-expert weights replicated, KV not sharded)."""
    engine: str | None = None
    """Serving engine (vllm, trtllm, sglang) whose own kernel timings are preferred where the catalog has them."""
    micro_batching: bool | None = None
    """With pp > 1: whether pp micro-batches are in flight (None: as the engine profile says)."""
    engine_version: str | None = None
    """The engine's release (e.g. "0.6.3"): selects its host time per iteration (engines.yaml
    host_step_by_version); None = the current release."""
    scheduler_steps: int = 1
    """Decode iterations per scheduler call (vLLM V0's multi-step scheduling): decode-only iterations pay the host
    time per call divided by it."""
    overlap_scheduling: bool | None = None
    """Whether the engine prepares iteration n + 1 while the GPU runs iteration n (vLLM --async-scheduling /
    --no-async-scheduling as a run states it): its host time per iteration then hides behind the GPU's step;
    None: as the release does by default (engines.yaml host_step_by_version)."""
    cuda_graphs: bool | None = None
    """Whether the engine replays its decode steps as CUDA graphs: False when the run turns them off (vLLM
    --enforce-eager, SGLang --disable-cuda-graph), so every step issues its kernels from Python; None: the engine
    release's rule (engines.yaml cuda_graph_max_batch, cuda_graph_by_version)."""
    streamed: bool = False
    """Requests come through the engine's API server and stream their tokens: a step lasts at least the server's
    time to stream its chunks (analytic/step_overheads.py ``streamed_step_s``)."""

    # ------------------------------------------------------------------ sizes
    @property
    def release(self) -> tuple[int, ...] | None:
        """The engine release's number (None: no release stated, the engine's current one)."""
        return parse_version(self.engine_version) if self.engine_version else None

    @property
    def windowed_kv_memory(self) -> WindowedKvMemory | None:
        """How the engine release frees the model's sliding-window layers' blocks once they leave the window
        (engines.yaml windowed_kv_memory); None where it does not, for a model without a window, or without an
        engine."""
        m = self.model
        if m.sliding_window_tokens is None or self.engine is None:
            return None
        profile = self.cluster.tables.engine(self.engine)
        return profile.windowed_kv_rule(self.release, f"{m.id} {m.name}", self.cluster.accelerator.generation)

    @property
    def vocab_precision(self) -> str:
        """Format of the embedding and output head: the weights' own when 16/32-bit, else bf16 (module docstring)."""
        return self.weight_precision if self.weight_precision in ("bf16", "fp16", "fp32") else "bf16"

    def _bf16_layer_params(self) -> tuple[float, float, float]:
        """(attention, dense-MLP parameters, MLP layers) of one replica that a quantised checkpoint leaves in bf16:
        an FP8 one with ``ModelArch.fp8_bf16_modules`` (every attention projection, the first and last layers'
        MLPs), an FP4 one with ``ModelArch.fp4_bf16_modules`` (everything but the routed experts: attention, dense
        and shared-expert MLPs); (0, 0, 0) otherwise."""
        m = self.model
        pb = param_breakdown(m)
        if self.weight_precision == "fp8" and m.fp8_bf16_modules != "none":
            edge = min(2, pb.dense_layers)
            return m.num_layers * pb.attention_per_layer, edge * pb.dense_mlp_per_layer, float(edge)
        if self.weight_precision == "fp4" and m.fp4_bf16_modules == "all_but_experts":
            shared = pb.moe_layers * pb.moe_shared_per_layer
            mlp_layers = pb.dense_layers + (pb.moe_layers if pb.moe_shared_per_layer else 0)
            mlp = pb.dense_layers * pb.dense_mlp_per_layer + shared
            return m.num_layers * pb.attention_per_layer, mlp, float(mlp_layers)
        return 0.0, 0.0, 0.0

    @property
    def _router_bf16(self) -> bool:
        """The MoE router gate stays bf16: an FP4 checkpoint that quantises only the routed experts."""
        return self.weight_precision == "fp4" and self.model.fp4_bf16_modules == "all_but_experts"

    def stored_bytes(self, fmt: str) -> float:
        """Bytes a weight of format ``fmt`` takes in memory and in a weight stream: the element, plus its share of
        an 8-bit block scale for FP4 where the checkpoint states its block (``ModelArch.fp4_scale_block_elements``)."""
        block = self.model.fp4_scale_block_elements
        return DTYPE_BYTES[fmt] + (1.0 / block if fmt == "fp4" and block else 0.0)

    @property
    def expert_padding_factor(self) -> float:
        """Stored over checkpoint bytes of the routed experts: an MXFP4 checkpoint's experts as the engine release's
        MoE kernel lays them out on this generation (engines.yaml ``mxfp4_moe_padding``: vLLM's Marlin path rounds the
        per-rank expert width up to 128 and the hidden size to 256); 1 where nothing is padded."""
        m = self.model
        mxfp4 = self.weight_precision == "fp4" and m.fp4_scale_block_elements == MXFP4_SCALE_BLOCK
        if self.engine is None or not mxfp4 or not m.is_moe:
            return 1.0
        profile = self.cluster.tables.engine(self.engine)
        rule = profile.mxfp4_padding(self.release, self.cluster.accelerator.generation)
        if rule is None:
            return 1.0
        per_rank = m.expert_ffn / (1 if self.ep > 1 else self.tp)  # expert parallelism keeps experts whole
        return rule.padded_factor(m.hidden_size, per_rank)

    def _split_weight_bytes(self) -> tuple[float, float, float]:
        """(vocab bytes, routed-expert bytes, other layer bytes) of one replica."""
        pb = param_breakdown(self.model)
        vocab = pb.embedding + pb.output
        routed = pb.moe_layers * pb.moe_routed_per_layer
        wb = self.stored_bytes(self.weight_precision)
        attn, mlp, _ = self._bf16_layer_params()
        kept = attn + mlp + (pb.moe_layers * pb.router_per_layer if self._router_bf16 else 0.0)  # left in bf16
        other = (pb.total - vocab - routed - kept) * wb + kept * DTYPE_BYTES["bf16"]
        return vocab * DTYPE_BYTES[self.vocab_precision], routed * wb * self.expert_padding_factor, other

    @property
    def weight_bytes_per_replica(self) -> float:
        """Bytes of all the model's weights at the serving precision (one full copy)."""
        return sum(self._split_weight_bytes())

    @property
    def weight_bytes_per_accelerator(self) -> float:
        """Weight bytes one accelerator holds: the replica's split over tp × pp, plus the part of MLA's replicated
        down-projections a split would have left on the other ranks (``mla_replicated_params_per_layer``: every rank
        holds them whole); with attention DP, its pipeline stage's whole non-expert weights and 1/tp of the stage's
        routed experts."""
        if not self.attention_dp:
            replicated = (
                self._stage_layers
                * mla_replicated_params_per_layer(self.model)
                * self.stored_bytes(self.weight_precision)
            )
            return self.weight_bytes_per_replica / (self.tp * self.pp) + replicated * (1.0 - 1.0 / self.tp)
        vocab, routed, other = self._split_weight_bytes()
        # a release that keeps the MLPs tensor-parallel under attention DP holds 1/tp of the dense MLPs and shared
        # experts too (_dp_tp_mlp)
        mlp = self._dense_mlp_bytes() if self._dp_tp_mlp else 0.0
        return (vocab + other - mlp + mlp / self.tp) / self.pp + routed / (self.pp * self.tp)

    def _dense_mlp_bytes(self) -> float:
        """Bytes of one replica's dense MLPs and shared experts at the serving precision (the part left in bf16 at
        two bytes a weight)."""
        pb = param_breakdown(self.model)
        mlp = pb.dense_layers * pb.dense_mlp_per_layer + pb.moe_layers * pb.moe_shared_per_layer
        bf16_mlp = self._bf16_layer_params()[1]
        return (mlp - bf16_mlp) * self.stored_bytes(self.weight_precision) + bf16_mlp * DTYPE_BYTES["bf16"]

    @property
    def _dp_tp_mlp(self) -> bool:
        """Whether this replica's attention DP keeps the MLPs tensor-parallel (engines.yaml ``attention_dp_tp_mlp``:
        SGLang before 0.4.10): each layer all-reduces a buffer of every rank's tokens to gather them, runs its dense
        MLP, shared and routed experts split tp ways on all of them, and all-reduces the output."""
        if not self.attention_dp or self.engine is None:
            return False
        return self.cluster.tables.engine(self.engine).dp_attention_keeps_tp_mlp(self.release)

    @property
    def moe_gather_bytes_per_element(self) -> float:
        """Bytes per activation element in the attention-DP all-gather before the experts (module docstring):
        TensorRT-LLM gathers the activations already quantised for FP8 / NVFP4 expert weights, vLLM gathers
        bf16 (the engine profile's ``attention_dp_gather_quantised``)."""
        if self.engine is not None and self.cluster.tables.engine(self.engine).attention_dp_gather_quantised:
            if self.weight_precision == "fp8":
                return 1.0
            if self.weight_precision == "fp4":
                return 0.5 + 1.0 / NVFP4_BLOCK_ELEMENTS
        return ACT_BYTES

    @property
    def kv_bytes_per_token_per_accelerator(self) -> float:
        """Bytes one accelerator stores per token it caches. GQA heads shard over TP and are replicated
        when kv_heads < tp (ceil(kv/tp) per rank, as vLLM and Vidur allocate); the MLA latent is
        replicated on every TP rank; with attention DP each rank keeps whole tokens of its own sequences."""
        m = self.model
        nbytes = DTYPE_BYTES[self.kv_precision]
        layers = self._stage_layers
        if m.attention == "mla":
            return layers * ((m.kv_lora_rank or 0) + (m.qk_rope_head_dim or 0)) * nbytes
        heads = m.kv_heads if self.attention_dp else math.ceil(m.kv_heads / self.tp)
        return 2.0 * layers * heads * m.head_size * nbytes

    @property
    def kv_token_shards(self) -> int:
        """Accelerators of a stage that cache disjoint sets of tokens (tp under attention DP, else 1)."""
        return self.tp if self.attention_dp else 1

    # ------------------------------------------------------------------ one iteration
    def _linear(
        self,
        tokens: float,
        params: float,
        n_kernels: float,
        dtype: str,
        split: int,
        weights: str | None = None,
        block_scaled: bool = False,
        channel_scaled: bool = False,
    ) -> _Kernels:
        """``params`` weights (format ``weights``, default the model's) in ``n_kernels`` GEMMs applied to
        ``tokens`` tokens, split ``split`` ways; ``block_scaled``: FP8 weights of a block-scaled checkpoint
        (:func:`fp8_block_time_factor`); ``channel_scaled``: FP8 weights scaled per output channel, which a release
        may run unfused (:meth:`_unfused_channel_fp8`)."""
        acc = self.cluster.accelerator
        flop = 2.0 * tokens * params / split
        nbytes = params * self.stored_bytes(weights or self.weight_precision) / split
        t0, b_inf = memory_fit(self.cluster.tables, acc, self.engine, dtype)
        memory_s = n_kernels * t0 + nbytes / b_inf
        ratio = DTYPE_BYTES[dtype] / DTYPE_BYTES[weights or self.weight_precision]
        if ratio > 1.0:
            return self._weight_only(tokens, flop, n_kernels, dtype, ratio, memory_s, b_inf)
        compute_s = gemm_compute_s(
            self.cluster.tables, acc, dtype, tokens, flop / tokens / n_kernels, n_kernels, self.engine
        )
        if block_scaled and dtype == "fp8":
            compute_s *= fp8_block_time_factor(self.cluster.tables, acc, self.engine, tokens)
        unfused = self._unfused_channel_fp8 if channel_scaled and dtype == "fp8" else None
        if unfused is not None:
            compute_s *= unfused.time_x
            memory_s += n_kernels * unfused.extra_kernels * t0
        return _Kernels(compute_s, memory_s)

    @property
    def _unfused_channel_fp8(self) -> UnfusedChannelFp8 | None:
        """How the engine release runs a channel-scaled FP8 linear layer on this part when it applies the scales
        outside the GEMM (engines.yaml ``unfused_channel_fp8_by_version``: vLLM before 0.7.3 on ROCm: an FP8 GEMM
        into fp32, then the per-token and per-channel scales and the cast as separate kernels); None where fused."""
        if self.engine is None:
            return None
        profile = self.cluster.tables.engine(self.engine)
        return profile.unfused_channel_fp8_rule(self.release, self.cluster.accelerator.vendor)

    def _weight_only(
        self, tokens: float, flop: float, n_kernels: float, dtype: str, ratio: float, memory_s: float, b_inf: float
    ) -> _Kernels:
        """A weight-only quantised GEMM (W4A16: int4 weights, bf16 activations, ``ratio`` = compute-format bytes /
        weight bytes = 4): the kernel dequantises the weights in registers and multiplies in ``dtype`` (Frantar et
        al. 2024, "MARLIN: Mixed-Precision Auto-Regressive Parallel Inference on Large Language Models",
        arXiv 2408.11743; AWQ, Lin et al. MLSys 2024). Per weight byte it does the FLOP of a ``dtype`` GEMM of
        ratio·M rows, so it takes 1/ratio of that GEMM's measured time. Below the compute format's ridge
        (ratio·M < peak / B∞ · bytes per element / 2) that measured time is weight streaming, so it joins the memory
        term and the step is memory-bound; above, it is compute (MARLIN: near-ideal 4x over FP16 up to batch
        16-32 tokens, then the FP16 GEMM's speed)."""
        acc = self.cluster.accelerator
        scaled_s = (
            gemm_compute_s(
                self.cluster.tables, acc, dtype, tokens * ratio, flop / tokens / n_kernels, n_kernels, self.engine
            )
            / ratio
        )
        peak = acc.sustained_flop_per_s(dtype)
        ridge_rows = peak / b_inf * DTYPE_BYTES[dtype] / 2.0
        if tokens * ratio < ridge_rows:
            return _Kernels(flop / peak, max(memory_s, scaled_s))
        return _Kernels(scaled_s, memory_s)

    def experts(self, tokens: float, moe_layers: float) -> _Kernels:
        """The routed experts of ``moe_layers`` MoE layers on one rank for ``tokens`` tokens entering the layer
        (all ranks' tokens under attention DP): the union of experts touched by uniform top-k routing streams its
        weights, split ep (else tp) ways, and the grouped GEMMs run at the measured grouped-GEMM efficiency. The
        weights stream through the bf16 fit: the FP8 streaming rows time dense linear layers, not the grouped MoE
        kernel (bench/aic_moe_fidelity.py compares this term with an engine's measured fused-MoE op)."""
        m, acc = self.model, self.cluster.accelerator
        pb = param_breakdown(m)
        cd = compute_dtype(acc.dense_flop_per_s, self.weight_precision)
        t0, b_inf = memory_fit(self.cluster.tables, acc, self.engine)
        one_expert = pb.moe_routed_per_layer / m.num_experts
        touched = m.num_experts * (1.0 - (1.0 - m.experts_per_token / m.num_experts) ** tokens)
        e_split = self.ep if self.ep > 1 else self.tp
        flop = 2.0 * tokens * m.experts_per_token * one_expert * moe_layers / e_split
        # experts split ep ways: the rank that touched the most sets the pace; tp ways: every rank a 1/tp slice
        # of every touched expert (analytic/moe_decode.py)
        if self.ep > 1:
            rank_experts = busiest_rank_experts(m.num_experts, m.experts_per_token, tokens, self.ep)
        else:
            rank_experts = touched / self.tp
        nbytes = rank_experts * one_expert * moe_layers * self.stored_bytes(self.weight_precision)
        nbytes *= self.expert_padding_factor  # the kernel streams the experts as stored
        n_kernels = max(moe_layers, 1.0) * 2  # grouped GEMMs: up(+gate), down
        memory_s = n_kernels * t0 + nbytes / b_inf
        # the engine's own fused-MoE op timed at this very expert shape and split on this very part, where the
        # catalog has it (moe_shape rows: fraction of the dense peak at the tokens entering the layer). A row of
        # another part is not borrowed: at few tokens its time is that part's weight streaming, and as a fraction
        # of peak it would carry the other part's FLOP-to-bandwidth ratio over (a B200 row on an A100 prices the
        # streaming 7.2 / 4 = 1.8 times too slow); the shape-blind grouped-GEMM curve and this part's memory
        # roofline price it instead
        split = (1, self.ep) if self.ep > 1 else (self.tp, 1)
        shape = (m.hidden_size, m.expert_ffn, m.num_experts, m.experts_per_token, *split)
        peak = acc.dense_flop_per_s.get(cd)
        # FP4 experts on a part without FP4 tensor cores run the engine's weight-only (W4A16) MoE op, timed as a
        # fraction of the bf16 peak where measured (module docstring); else the op timed in the compute format
        w4a16 = weight_only_moe_dtype(acc.dense_flop_per_s, self.weight_precision)
        for shape_dtype in (w4a16, cd):
            if shape_dtype is None or (shape_dtype == w4a16 and not self._runs_timed_w4a16_op):
                continue
            rows_engine = self.w4a16_moe_engine if shape_dtype == w4a16 else self.engine
            # rows timing a stated release's own op apply to that release only (analytic/efficiency.py)
            release = self.release if rows_engine == self.engine else None
            look = table(self.cluster.tables).lookup(
                "moe_shape", acc.id, tokens, dtype=shape_dtype, engine=rows_engine, moe_shape=shape, release=release
            )
            if look.source != NO_DATA and not look.source.startswith("borrowed:") and peak:
                return _Kernels(flop / (peak * look.frac), memory_s)
        per_expert_flop = flop / max(n_kernels * touched / e_split, 1.0)
        eff = gemm_efficiency(
            self.cluster.tables, acc, cd, per_expert_flop, kind="moe", engine=self.engine
        )  # grouped GEMMs, measured
        # shape-blind: the weights stream at the ragged grouped GEMM's measured rate and the layer runs its routing
        # kernels (analytic/moe_decode.py); an engine's own fused-MoE timing above includes both
        rate = expert_stream_bytes_per_s(self.cluster.tables, acc, tokens * m.experts_per_token / max(touched, 1.0))
        if rate is not None:
            memory_s = n_kernels * t0 + nbytes / rate
        n_route = routing_kernels(self.weight_precision) * moe_layers
        route_bytes = routing_bytes(tokens, m.hidden_size, m.experts_per_token, ACT_BYTES) * moe_layers
        memory_s += n_route * t0 + route_bytes / b_inf
        return _Kernels(flop / (acc.sustained_flop_per_s(cd) * eff), memory_s)

    def _rank_work(self, batch: StepBatch) -> tuple[StepBatch, int]:
        """(work, share): one rank of a stage runs 1/share of ``work`` in its per-rank layers — the whole step
        (share 1) without attention DP, 1/tp of it under attention DP spread evenly, or the busiest rank's own
        work (share 1) when the step names it (``StepBatch.busiest_rank``)."""
        if not self.attention_dp:
            return batch, 1
        if batch.busiest_rank is not None:
            return batch.busiest_rank, 1
        return batch, self.tp

    def _decode_attention_eff(self) -> float:
        """Fraction of the bf16 peak an MLA decode kernel reaches: the part's attention curve at its best measured
        point. Absorbed-MLA decode runs one batched kernel over every sequence's cached latent with 128 query heads
        sharing it — compute-bound, not a short prefill — so the curve's small-size end (a context op's fixed time at
        a few thousand tokens) does not price it; DeepSeek's FlashMLA decode kernel reaches 580 TFLOP/s in its
        compute-bound configuration on an H800 (0.59 of 989; deepseek-ai/FlashMLA README, 2025), level with the
        large-size end of the context curves (FlashAttention-3 forward 0.58 at 16k). GQA decode keeps the curve
        at the step's size (no such measurement of its decode kernels is in the catalog)."""
        curve, _ = table(self.cluster.tables).curve(
            "attention", self.cluster.accelerator.id, dtype="bf16", engine=self.engine
        )
        return max(curve.y) if curve is not None else 1.0

    def decode_kv_read_bytes_per_accelerator(self, batch: StepBatch) -> float:
        """KV-cache bytes one accelerator reads for the decode attention of a step: each decoding
        sequence's context once, however many query tokens it runs (a speculative verify pass attends
        γ + 1 queries to the same keys and values in one kernel; Leviathan et al. 2023, Chen et al. 2023); a windowed
        local layer reads only its window or chunk of each (analytic/window.py)."""
        work, share = self._rank_work(batch)
        ctx = decode_layer_keys(self.model, work.decode_context_tokens, work.decode_seqs)
        return ctx * self.kv_bytes_per_token_per_accelerator / share

    def _token_terms(
        self, tokens: int, t_rank: float, logits_tokens: float, cal: Factors, absorbed_rank: float = 0.0
    ) -> _TokenTerms:
        """The parts of a step that depend only on its token counts (all but attention): linear layers, element-wise
        kernels, the output head, experts and communication, memoised per model and calibration (a
        simulation asks for the same token count at many contexts). ``absorbed_rank``: the rank's tokens whose MLA
        up-projection runs as the absorbed matmul pair (priced apart, ``_mla_bmm_s``) rather than as a GEMM."""
        key = (tokens, t_rank, logits_tokens, absorbed_rank)
        memo: tuple[Factors, dict[tuple[int, float, float, float], _TokenTerms]] | None
        memo = self.__dict__.get("_token_memo")
        if memo is None or memo[0] != cal:
            memo = (cal, {})
            object.__setattr__(self, "_token_memo", memo)
        hit = memo[1].get(key)
        if hit is None:
            hit = memo[1][key] = self._token_terms_for(tokens, t_rank, logits_tokens, cal, absorbed_rank)
        return hit

    def _token_terms_for(
        self, tokens: int, t_rank: float, logits_tokens: float, cal: Factors, absorbed_rank: float
    ) -> _TokenTerms:
        """The token-count terms of :meth:`_token_terms`, computed.

        Long because one stage's linear work is the sum of the model's weight groups, each with its own format and
        split (attention, MLA's replicated down-projections and its up-projection, dense and shared-expert MLPs,
        layers left in bf16, the router, the head, the experts), then its collectives; one pass keeps them beside
        each other."""
        m = self.model
        acc = self.cluster.accelerator
        pb = param_breakdown(m)
        cd = compute_dtype(acc.dense_flop_per_s, self.weight_precision)
        pp, tp = self.pp, self.tp
        # parameters per pipeline stage (all of its layers); the head and embedding sit on the last stage
        attn = m.num_layers * pb.attention_per_layer / pp
        dense_mlp = (pb.dense_layers * pb.dense_mlp_per_layer + pb.moe_layers * pb.moe_shared_per_layer) / pp
        router = pb.moe_layers * pb.router_per_layer / pp
        head = float(m.vocab_size * m.hidden_size)
        split = 1 if self.attention_dp else tp
        layers = m.num_layers / pp
        mlp_layers = (pb.dense_layers + (pb.moe_layers if pb.moe_shared_per_layer else 0)) / pp
        # MLA's down-projections (q_a, kv_a) are replicated on every tensor-parallel rank, not split (module docstring)
        replicated = layers * mla_replicated_params_per_layer(m) if split > 1 else 0.0
        # the attention and dense MLP weights of a block- or channel-scaled FP8 checkpoint (not its router gate)
        blk = self.weight_precision == "fp8" and m.fp8_scaling == "block"
        chn = self.weight_precision == "fp8" and m.fp8_scaling == "channel"
        # layers a quantised checkpoint left in bf16 (ModelArch.fp8_bf16_modules, fp4_bf16_modules): stored, streamed
        # and multiplied in bf16, their kernels counted with them (per stage, as the other terms)
        bf16_attn, bf16_mlp, bf16_mlp_layers = (x / pp for x in self._bf16_layer_params())
        # the MLPs' tokens and split: the rank's own, whole weights under attention DP; every rank's, split tp ways
        # where the release keeps them tensor-parallel (_dp_tp_mlp) or without attention DP
        mlp_tokens, mlp_split = (float(tokens), tp) if self._dp_tp_mlp else (t_rank, split)
        cd16 = compute_dtype(acc.dense_flop_per_s, "bf16")
        attn_cd, attn_w = (cd16, "bf16") if bf16_attn else (cd, None)
        mlp_q_layers = mlp_layers - bf16_mlp_layers
        router_format: tuple[str, int, str | None] = (cd16, 1, "bf16") if self._router_bf16 else (cd, 1, None)
        # the MLA up-projection apart where the engine's own absorbed matmuls price it (_mla_bmm_s): a GEMM over the
        # tokens that run the multi-head form only
        kv_b = layers * mla_kv_b_params_per_layer(m) if self._mla_bmm_dtype is not None else 0.0
        gemm_tokens = max(t_rank - absorbed_rank, 0.0)
        parts = [
            self._linear(
                t_rank,
                attn - replicated - kv_b,
                2 * layers,
                attn_cd,
                split,
                attn_w,
                block_scaled=blk,
                channel_scaled=chn,
            ),  # qkv, o
            self._linear(gemm_tokens, kv_b, layers, attn_cd, split, attn_w, block_scaled=blk, channel_scaled=chn)
            if kv_b and gemm_tokens > 0.0
            else _Kernels(0.0, 0.0),
            self._linear(t_rank, replicated, layers, cd, 1, block_scaled=blk, channel_scaled=chn)
            if replicated
            else _Kernels(0.0, 0.0),
            self._linear(
                mlp_tokens, dense_mlp - bf16_mlp, 2 * mlp_q_layers, cd, mlp_split, block_scaled=blk, channel_scaled=chn
            )
            if dense_mlp
            else _Kernels(0.0, 0.0),
            self._linear(mlp_tokens, bf16_mlp, 2 * (mlp_layers - mlp_q_layers), cd16, mlp_split, "bf16")
            if bf16_mlp
            else _Kernels(0.0, 0.0),
            self._linear(t_rank, router, pb.moe_layers / pp, *router_format) if router else _Kernels(0.0, 0.0),
        ]
        t0, b_inf = memory_fit(self.cluster.tables, acc, self.engine)
        n_elem = ELEMENTWISE_KERNELS_PER_LAYER * layers
        parts.append(_Kernels(0.0, n_elem * (t0 + 2.0 * t_rank * m.hidden_size * ACT_BYTES / b_inf)))
        head_cd = compute_dtype(acc.dense_flop_per_s, self.vocab_precision)  # the bf16 head (module docstring)
        head_k = self._linear(max(logits_tokens, 1.0), head, 1, head_cd, split, self.vocab_precision)  # last stage
        if m.is_moe:
            parts.append(self.experts(tokens, pb.moe_layers / pp))
        # the user's calibration of this accelerator and engine, where an overlay has one (neutral otherwise)
        parts = [p.scaled(cal) for p in parts]
        head_k = head_k.scaled(cal)
        linear_compute = sum(p.compute_s for p in parts)
        linear_memory = sum(p.memory_s for p in parts)
        linear_s = sum(p.time_s for p in parts)
        # communication
        comm_s = 0.0
        if tp > 1 and not self.attention_dp:
            message = tokens * m.hidden_size * ACT_BYTES
            one = collective_time(self.cluster, "allreduce", message, tp, engine=self.allreduce_engine(message))
            comm_s = 2.0 * m.num_layers / pp * one.time_s
        if m.is_moe and self.attention_dp and tp > 1:
            # every MoE layer all-gathers the step's tokens from all ranks and reduce-scatters the expert
            # outputs back (module docstring)
            gathered = tokens * m.hidden_size
            ce = self.collective_engine
            ag = collective_time(self.cluster, "allgather", gathered * self.moe_gather_bytes_per_element, tp, engine=ce)
            rs = collective_time(self.cluster, "reducescatter", gathered * ACT_BYTES, tp, engine=ce)
            if self._dp_tp_mlp:
                # every layer all-reduces the zero-padded buffer of every rank's tokens, then its MLP's output
                message = gathered * ACT_BYTES
                one = collective_time(self.cluster, "allreduce", message, tp, engine=self.allreduce_engine(message))
                comm_s += 2.0 * m.num_layers / pp * one.time_s
            else:
                comm_s += pb.moe_layers / pp * (ag.time_s + rs.time_s)
        hop_s = 0.0
        if pp > 1:
            hop_bytes = tokens * m.hidden_size * ACT_BYTES
            hop_s = collective_time(self.cluster, "p2p", hop_bytes, 2, tp, self.collective_engine).time_s
        return _TokenTerms(linear_s, comm_s, hop_s, linear_compute, linear_memory, head_k)

    @property
    def w4a16_moe_engine(self) -> str | None:
        """The engine whose weight-only MXFP4 (W4A16) fused-MoE timings price this replica's FP4 experts on a part
        without FP4 tensor cores: the engine's own, or those its profile names (``w4a16_moe_rows_engine``: SGLang
        0.5.x runs OpenAI's triton_kernels MoE on Hopper, the op vLLM's rows time)."""
        if self.engine is None:
            return None
        return self.cluster.tables.engine(self.engine).w4a16_moe_rows_engine or self.engine

    @property
    def _runs_timed_w4a16_op(self) -> bool:
        """Whether the stated release runs, by default, the W4A16 MoE op its engine's rows time: False for a stated
        release below the profile's ``w4a16_moe_rows_from_version`` (TensorRT-LLM ran CUTLASS, its rows time TRITON)."""
        if self.engine is None or not self.engine_version:
            return True
        return self.cluster.tables.engine(self.engine).runs_timed_w4a16_moe(self.release)

    @property
    def collective_engine(self) -> str | None:
        """The engine whose collective timings price this replica's collectives: the engine's own where the catalog
        has an all-reduce curve of its own for this part (SGLang's on H100, H200 and A100), else those its profile
        names (``collective_rows_engine``: SGLang's custom all-reduce is vLLM's kernel)."""
        if self.engine is None:
            return None
        fallback = self.cluster.tables.engine(self.engine).collective_rows_engine
        if fallback is None or engine_allreduce_measured(self.cluster, self.tp, self.engine):
            return self.engine
        return fallback

    def allreduce_engine(self, message_bytes: float) -> str | None:
        """Whose timings price a tensor-parallel all-reduce of ``message_bytes``: the engine's own (collective_engine),
        or, above the largest message the engine release runs on its own kernels (engines.yaml
        ``own_allreduce_by_version``: the custom all-reduce's 8 MiB buffer, on the parts where the engine-tagged rows
        ran symmetric-memory all-reduce above it), NCCL as the part's main all-reduce curve measures it (None)."""
        ce = self.collective_engine
        if ce is None or self.engine is None:
            return ce
        version = self.release
        generation = self.cluster.accelerator.generation
        limit = self.cluster.tables.engine(self.engine).own_allreduce_max_bytes(version, generation)
        return None if limit is not None and message_bytes > limit else ce

    @property
    def pipelines_micro_batches(self) -> bool:
        """Whether the replica keeps pp micro-batches in flight: ``micro_batching`` when set, else the engine
        profile's ``pipeline_micro_batches``."""
        if self.pp <= 1:
            return False
        if self.micro_batching is not None:
            return self.micro_batching
        return self.engine is not None and self.cluster.tables.engine(self.engine).pipeline_micro_batches

    def breakdown(self, batch: StepBatch) -> StepBreakdown:
        """One iteration's time and its parts: the linear layers and output head, attention, communication (and
        the pipeline's hops), the user's calibration, then the engine's fixed costs; under pipeline parallelism the
        step's micro-batches flow through the stages."""
        whole = batch
        pipelined = self.pipelines_micro_batches
        n_micro = 1
        if pipelined:
            # the step's work split into (up to) pp micro-batches: the largest one (ceil) paces the pipeline
            n_micro = micro_batches(batch, self.pp)
            batch = micro_batch(batch, n_micro)
        m = self.model
        acc = self.cluster.accelerator
        tokens = batch.tokens
        if tokens <= 0:
            return StepBreakdown(0.0, 0.0, 0.0, 0.0, "memory")
        pp = self.pp
        # tokens per rank: attention-DP ranks each hold 1/tp of the sequences, or the busiest rank's share
        # when the step says how the work is spread (StepBatch.busiest_rank); the expert layers see
        # the tokens of every rank
        work, share = self._rank_work(batch)
        t_rank = work.tokens / share
        layers = m.num_layers / pp
        logits_tokens = (work.decode_tokens + (1 if work.prefill_tokens else 0)) / share
        cal = self.cluster.tables.factors_for("inference", acc.id, self.engine)
        absorbed_rank = self._mla_absorbed_tokens(work) / share
        bmm_dtype = self._mla_bmm_dtype
        terms = self._token_terms(tokens, t_rank, logits_tokens, cal, absorbed_rank if bmm_dtype is not None else 0.0)
        attention_compute, attention_memory = self._attention_s(batch, work, layers, cal)
        bmm_s = self._mla_bmm_s(absorbed_rank, layers, bmm_dtype) / cal.compute_efficiency_scale
        bmm_s += self._mla_copies_s(absorbed_rank, layers) / cal.memory_efficiency_scale
        # the absorbed matmuls run as their own kernels before and after the attention op, not inside its roofline;
        # they count on the compute side of the step's bound
        stage_attention_s = max(attention_compute, attention_memory) + bmm_s
        attention_compute += bmm_s
        attention_s = pp * stage_attention_s
        head_k = terms.head
        linear_s = pp * terms.stage_linear_s + head_k.time_s
        comm_s = pp * terms.stage_comm_s
        if pp > 1:
            comm_s += (pp - 1) * terms.hop_s
        comm_s /= cal.communication_efficiency_scale
        if pipelined:
            # pp micro-batches in flight (module docstring): a micro-batch crosses every stage and pp − 1 hops, and
            # the last stage (which also runs the head) must serve all pp micro-batches in the same cycle
            scale = cal.communication_efficiency_scale
            stage_s = terms.stage_linear_s + stage_attention_s + terms.stage_comm_s / scale
            through = pp * stage_s + head_k.time_s + (pp - 1) * terms.hop_s / scale
            total = max(through, n_micro * (stage_s + head_k.time_s)) + cal.step_overhead_s
        else:
            total = linear_s + attention_s + comm_s + cal.step_overhead_s
        compute_part = pp * (terms.linear_compute_s + attention_compute) + head_k.compute_s
        memory_part = pp * (terms.linear_memory_s + attention_memory) + head_k.memory_s
        if comm_s > max(compute_part, memory_part):
            bound = "communication"
        else:
            bound = "compute" if compute_part >= memory_part else "memory"
        if self.engine is not None:
            total = self._engine_costs(total, whole)
        return StepBreakdown(total, linear_s, attention_s, comm_s, bound, compute_part, memory_part)

    def _attention_s(self, batch: StepBatch, work: StepBatch, layers: float, cal: Factors) -> tuple[float, float]:
        """(compute, memory) time of one stage's attention on the busiest rank: heads split tp ways, or (attention
        DP) sequences; decode attention of MLA at its own measured efficiency; the KV cache read at the fitted
        bandwidth."""
        m, acc, tp = self.model, self.cluster.accelerator, self.tp
        t0, b_inf = memory_fit(self.cluster.tables, acc, self.engine)
        # attention: per stage, per rank (heads split tp ways, or sequences split tp ways under DP)
        d_qk, d_v = attention_dims(m)
        if m.attention == "mla":
            dec_qk = m.num_heads * ((m.kv_lora_rank or 0) + (m.qk_rope_head_dim or 0))
            dec_v = m.num_heads * (m.kv_lora_rank or 0)
        else:
            dec_qk, dec_v = d_qk, d_v
        # heads split tp ways, or (attention DP) sequences: evenly, or the busiest rank's own
        att_split = tp if work is batch else 1
        pre_qk, pre_v = self.prefill_attention_dims(work)
        # local (sliding-window, chunked) layers attend part of the context (analytic/window.py)
        pre_pairs = prefill_layer_pairs(m, work)
        dec_pairs = decode_layer_keys(m, work.decode_attention_pairs, work.decode_seqs, work.decode_queries_per_seq)
        pre_flop = 2.0 * layers * pre_pairs * (pre_qk + pre_v) / att_split
        reexpand_s = self._mla_prefix_reexpansion_s(work, layers, att_split, (pre_qk, pre_v), cal)
        dec_flop = 2.0 * layers * dec_pairs * (dec_qk + dec_v) / att_split
        kv_read = self.decode_kv_read_bytes_per_accelerator(batch)
        attn_peak = acc.sustained_flop_per_s("bf16")
        a_eff = gemm_efficiency(
            self.cluster.tables,
            acc,
            "bf16",
            (pre_flop + dec_flop) / max(layers, 1.0),
            kind="attention",
            engine=self.engine,
        )
        pre_s = self._mla_absorbed_prefill_op_s(work, pre_flop, layers)
        if pre_s is None:
            pre_s = pre_flop / (attn_peak * a_eff)
        mla_dec = self._mla_decode_op_s(kv_read, dec_flop, layers, t0) if work.decode_seqs else None
        if mla_dec is not None:
            # the engine's measured op: its time on the side of the roofline that bounds it, replacing both terms
            op_s, compute_bound = mla_dec
            attention_compute = pre_s / cal.compute_efficiency_scale + reexpand_s
            if compute_bound:
                return attention_compute + op_s / cal.compute_efficiency_scale, 0.0
            return attention_compute, op_s / cal.memory_efficiency_scale
        kv_s, measured_op = (
            self._decode_kv_read_s(batch, kv_read, layers, (t0, b_inf)) if work.decode_seqs else (0.0, False)
        )
        # the engine's measured paged decode op times its FLOP and its KV read together (a memory-bound op): the
        # decode FLOP is not priced again on the context-attention curve, whose small-size end is a short prefill's
        dec_eff = self._decode_attention_eff() if m.attention == "mla" else a_eff
        dec_s = 0.0 if measured_op else dec_flop / (attn_peak * dec_eff)
        attention_compute = (pre_s + dec_s) / cal.compute_efficiency_scale + reexpand_s
        attention_memory = kv_s / cal.memory_efficiency_scale
        return attention_compute, attention_memory

    @property
    def _local_heads(self) -> float:
        """Query heads one rank's attention call runs: every head under attention DP (sequences split), else the
        rank's tp-th of them."""
        m = self.model
        return float(m.num_heads) if self.attention_dp else m.num_heads / self.tp

    @property
    def _stage_layers(self) -> int:
        """Layers of one pipeline stage: the attention calls a step makes on one rank."""
        return max(math.ceil(self.model.num_layers / self.pp), 1)

    @property
    def _mla_bmm_dtype(self) -> str | None:
        """The format of the absorbed-MLA matmul pair (W_UK before the attention op, W_UV after it) the engine's own
        timings price on this part (kernel_time ``mla_bmm_fraction``): fp8 for an FP8 checkpoint whose attention
        weights are FP8 where the engine release runs an FP8 op and times one (SGLang before 0.4.7 re-quantises
        kv_b_proj per tensor, engines.yaml ``mla_bmm_bf16_from_version``; TensorRT-LLM), else bf16 (vLLM, and SGLang
        from 0.4.7, dequantise it to bf16 at load; bench/aic_efficiency_mla_bmm.py); None for a model without MLA or
        where the engine has no such curve (kv_b_proj then stays one of the linear layers)."""
        if self.model.attention != "mla" or self.engine is None:
            return None
        bf16_attn = self._bf16_layer_params()[0] > 0.0
        in_bf16 = self.cluster.tables.engine(self.engine).mla_bmm_in_bf16(self.release)
        formats = ("fp8", "bf16") if self.weight_precision == "fp8" and not bf16_attn and not in_bf16 else ("bf16",)
        acc = self.cluster.accelerator
        for dtype in formats:
            if mla_bmm_fraction(self.cluster.tables, acc, self.engine, 1.0, self._local_heads, dtype) is not None:
                return dtype
        return None

    def _mla_absorbed_tokens(self, work: StepBatch) -> float:
        """Tokens of ``work`` whose MLA attention runs in the absorbed form: every decode token (every engine decodes
        MLA absorbed), and the prompt tokens where the release runs its prefill that way (``_mla_prefill_absorbed``)."""
        if self.model.attention != "mla":
            return 0.0
        prompt = work.prefill_tokens if work.prefill_tokens and self._mla_prefill_absorbed(work) else 0.0
        return float(work.decode_tokens + prompt)

    def _mla_bmm_s(self, absorbed_rank: float, layers: float, dtype: str | None) -> float:
        """One stage's absorbed-MLA matmul pairs for ``absorbed_rank`` tokens on the rank: ``layers`` calls of
        tokens x local heads x 2 x 2 x 128 x 512 FLOP at the fraction of the ``dtype`` dense peak the engine's own ops
        reached (``_mla_bmm_dtype``; None: none prices them, 0)."""
        if dtype is None or absorbed_rank <= 0.0:
            return 0.0
        m, acc = self.model, self.cluster.accelerator
        flop = absorbed_rank * mla_reexpansion_flop_per_token(m, 1) / m.num_heads * self._local_heads
        frac = mla_bmm_fraction(self.cluster.tables, acc, self.engine, flop, self._local_heads, dtype)
        if frac is None or frac <= 0.0:
            return 0.0
        return layers * flop / (acc.peak_flop_per_s(dtype) * frac)

    def _mla_copies_s(self, absorbed_rank: float, layers: float) -> float:
        """One stage's extra element-wise kernels in the absorbed path of ``absorbed_rank`` tokens on the rank, where
        the release's code was read (engines.yaml ``mla_absorbed_copies``): per layer each kernel's fixed time t0 plus
        the values they read and write at the fitted bandwidth (kernel_time ``memory_fit``, as the layer's other
        element-wise kernels); 0 elsewhere."""
        if absorbed_rank <= 0.0 or self.engine is None:
            return 0.0
        rule = self.cluster.tables.engine(self.engine).mla_copies(self.release)
        if rule is None:
            return 0.0
        t0, b_inf = memory_fit(self.cluster.tables, self.cluster.accelerator, self.engine)
        values = absorbed_rank * (rule.values_per_token + rule.values_per_token_per_head * self._local_heads)
        return layers * (rule.kernels * t0 + values * ACT_BYTES / b_inf)

    def _mla_absorbed_prefill_op_s(self, work: StepBatch, pre_flop: float, layers: float) -> float | None:
        """Seconds of one stage's MLA prefill attention where the engine release runs it on the absorbed latent
        (``_mla_prefill_absorbed``: SGLang 0.4.5) at the fraction of the bf16 dense peak the engine's own op reached
        for the call's FLOP and local heads (kernel_time ``mla_prefill_absorbed_fraction``: AIConfigurator's SGLang
        context_mla tables, which time that form); None otherwise (the caller keeps the attention curve)."""
        if pre_flop <= 0.0 or self.kv_precision != "bf16" or not self._mla_prefill_absorbed(work):
            return None
        acc = self.cluster.accelerator
        frac = mla_prefill_absorbed_fraction(
            self.cluster.tables, acc, self.engine, pre_flop / max(layers, 1.0), self._local_heads
        )
        if frac is None or frac <= 0.0:
            return None
        return pre_flop / (acc.peak_flop_per_s("bf16") * frac)

    def _mla_decode_op_s(self, kv_read: float, dec_flop: float, layers: float, t0: float) -> tuple[float, bool] | None:
        """(seconds, compute-bound) of one stage's absorbed-MLA decode attention at the fraction of its roofline
        the engine's own op reaches (kernel_time ``mla_decode_fraction``: AIConfigurator's SGLang and TensorRT-LLM
        generation_mla timings, bf16 latent cache), or None where no such curve exists (other engines, an fp8
        cache, GQA/MHA models): the caller keeps its own terms. The kernel streams the latent once and runs both
        matmuls over it in the same pass, so the roofline is the larger of the read at the HBM bandwidth and the
        FLOP at the bf16 dense peak, not their sum (bench/aic_efficiency_mla.py). The timed op includes the new
        token's latent write (and TensorRT-LLM's its RoPE), kernels priced among the element-wise ones
        (ELEMENTWISE_KERNELS_PER_LAYER): one streaming-kernel fixed time t0 per layer comes off, never below the
        roofline."""
        m, acc = self.model, self.cluster.accelerator
        if m.attention != "mla" or self.kv_precision != "bf16" or kv_read <= 0.0:
            return None
        frac = mla_decode_fraction(
            self.cluster.tables, acc, self.engine, kv_read / self._stage_layers, self._local_heads
        )
        if frac is None or frac <= 0.0:
            return None
        read_s = kv_read / acc.memory_bw_bytes_per_s
        flop_s = dec_flop / acc.peak_flop_per_s("bf16")
        roof_s = max(read_s, flop_s)
        return max(roof_s / frac - layers * t0, roof_s), flop_s >= read_s

    def _decode_kv_read_s(
        self, batch: StepBatch, kv_read: float, layers: float, fit: tuple[float, float]
    ) -> tuple[float, bool]:
        """(seconds, whether it is the engine's measured op) one stage's decode attention takes to read ``kv_read``
        KV-cache bytes: at the fraction of the HBM bandwidth the engine's own paged decode kernel reaches for one
        layer's call (each kind of local layer at its own size, analytic/window.py) and the rank's decoding sequences
        (kernel_time ``paged_decode_fraction``; GQA/MHA caches, the kernels measured; the op's time, its FLOP included)
        less the KV-cache write priced elsewhere, else one streaming kernel per layer at the fitted bandwidth ``fit``
        (t0, B∞)."""
        acc = self.cluster.accelerator
        t0, b_inf = fit
        if self.model.attention != "mla" and kv_read > 0.0:
            work, share = self._rank_work(batch)
            bw = acc.memory_bw_bytes_per_s
            per_token = self.kv_bytes_per_token_per_accelerator / share
            total_s = 0.0
            # one call per layer, each kind of layer (full, sliding-window, chunked) at its own call size
            for layer_share, keys in decode_key_groups(self.model, work.decode_context_tokens, work.decode_seqs):
                group_read = layer_share * keys * per_token
                frac = paged_decode_fraction(
                    self.cluster.tables,
                    acc,
                    self.engine,
                    group_read / (layer_share * self._stage_layers),
                    work.decode_seqs / share,
                )
                if frac is None:
                    break
                # the timed op includes the new tokens' KV-cache write, a kernel already priced among the
                # element-wise ones (ELEMENTWISE_KERNELS_PER_LAYER: attn_kv_cache_save): its fixed time t0 per
                # layer comes off
                group_layers = layer_share * layers
                total_s += max(group_read / (frac * bw) - group_layers * t0, group_read / bw)
            else:
                return total_s, True
        return layers * t0 + kv_read / b_inf, False

    def prefill_attention_dims(self, work: StepBatch) -> tuple[int, int]:
        """(query-key, value) dimensions summed over heads of a step's prefill attention: the decompressed multi-head
        form (MLA: 128 heads x 192 / 128, attention_dims; 192 / 192 where the release pads the values to the
        query-key width, engines.yaml ``mla_prefill_pads_v``), or for an MLA model the absorbed latent (128 x 576 /
        512, DeepSeek-V2 §2.1.3) where the engine release runs prefill that way (``_mla_prefill_absorbed``)."""
        m = self.model
        d_qk, d_v = attention_dims(m)
        if m.attention != "mla" or not work.prefill_tokens or self.engine is None:
            return d_qk, d_v
        if self._mla_prefill_absorbed(work):
            lora, rope = m.kv_lora_rank or 0, m.qk_rope_head_dim or 0
            return m.num_heads * (lora + rope), m.num_heads * lora
        version = self.release
        return (d_qk, d_qk) if self.cluster.tables.engine(self.engine).pads_mla_prefill_v(version) else (d_qk, d_v)

    def _mla_prefill_absorbed(self, work: StepBatch) -> bool:
        """Whether the engine release runs this MLA prefill step on the absorbed latent (engines.yaml
        ``mla_absorbed_prefill``). The rule reads the step's cached prefix summed over its prompts; a step's chunks are
        only known through their query-key pairs, so it is taken as that of one chunk (:func:`chunk_prefix_tokens`)."""
        if self.model.attention != "mla" or self.engine is None:
            return False
        version = self.release
        rule = self.cluster.tables.engine(self.engine).mla_prefill_rule(version)
        return rule is not None and rule.absorbed(chunk_prefix_tokens(work))

    def _mla_prefix_reexpansion_s(
        self, work: StepBatch, layers: float, att_split: int, dims: tuple[int, int], cal: Factors
    ) -> float:
        """Time of one stage (busiest rank) to re-expand the cached prefix of a continuing MLA prompt chunk into
        multi-head keys and values (0 for other models, fresh prompts and the absorbed form).

        An MLA cache holds one latent c_KV (kv_lora_rank wide) and one rotary key per token, not per-head keys and
        values (DeepSeek-AI 2024, DeepSeek-V2 §2.1.2-2.1.3), so a chunk whose attention runs in the multi-head form
        against P cached tokens first rebuilds them: every chunk gathers the P latents from the paged cache, multiplies
        them by the up-projection W_UK, W_UV (kv_b_proj: 2·P·kv_lora·heads·(d_nope + d_v) FLOP per layer, heads split
        as the attention's), and writes the P keys and values that the attention kernel then reads. A long prompt in
        c-token chunks pays it once per chunk, for its whole prefix so far: Σ P ≈ L²/(2c) tokens over a prompt of L.
        The engines do exactly this: vLLM's MLA ``_compute_prefill_context`` (gather_cache, kv_b_proj, torch.cat of
        k_nope and k_pe, merge_attn_states; vllm/v1/attention/backends/mla/common.py, 0.8.4) and SGLang's
        ``_chunked_prefix_attn_mha`` (forward_normal_chunked_kv; sglang/srt/models/deepseek_v2.py, 0.4.5.post1).
        Priced as the up-projection GEMM at the measured efficiency (``_linear``, block-scaled FP8 as the other
        projections) plus the bytes moved at the fitted bandwidth: the latent gathered (read and written,
        kv_lora + rope values) and the rebuilt keys and values written and read once (``dims``: the step's
        query-key and value widths summed over heads, padded values included). The prefixes are read from the step's
        aggregates (:func:`cached_prefix_tokens`), for a step that states its chunks (``prefill_seqs``: the
        simulator's steps, ``planning/inference.prefill_steps``); a steady state's mean step of fractional whole
        prompts states none and pays none."""
        m = self.model
        if m.attention != "mla" or not work.prefill_tokens or work.prefill_seqs <= 0:
            return 0.0  # a step that does not state its chunks (a steady state's mean prompts) has no prefix to read
        prefix = cached_prefix_tokens(work)
        if prefix <= 0.0 or self._mla_prefill_absorbed(work):
            return 0.0  # fresh prompts, or the absorbed form (it reads the latent as it is)
        acc = self.cluster.accelerator
        params = layers * mla_reexpansion_flop_per_token(m, 1) / 2.0  # kv_b_proj weights of the stage
        cd = compute_dtype(acc.dense_flop_per_s, self.weight_precision)
        blk = self.weight_precision == "fp8" and m.fp8_scaling == "block"
        gemm = self._linear(prefix, params, layers, cd, att_split, block_scaled=blk).scaled(cal)
        t0, b_inf = memory_fit(self.cluster.tables, acc, self.engine)
        per_token_bytes = mla_reexpansion_bytes_per_token(m, att_split, dims)
        traffic_s = (2.0 * layers * t0 + layers * prefix * per_token_bytes / b_inf) / cal.memory_efficiency_scale
        return gemm.time_s + traffic_s

    def _step_kernels(self) -> float:
        """Kernels one step launches (analytic/step_overheads.py kernels_per_step), with the MoE layers' routing
        kernels (analytic/moe_decode.py)."""
        pb = param_breakdown(self.model)
        kernels = kernels_per_step(self.model.num_layers, self.tp, pb.moe_layers)
        if self.model.is_moe:
            kernels += routing_kernels(self.weight_precision) * pb.moe_layers
        return kernels

    def eager_host_s(self) -> float:
        """Host time of a step the release issues eagerly from Python: one stage's kernels × the release's measured
        time a kernel (engines.yaml eager_host_by_version); 0 where none is measured."""
        return self._eager_host_s(self._step_kernels())

    def draft(self, model: ModelArch) -> InferenceModel:
        """The speculative draft ``model`` served beside this one (Leviathan et al. 2023): the same accelerators,
        tensor and pipeline layout, engine and its release (whose launch, graph and host costs it pays), scheduler
        overlap, weight and KV formats and CUDA graphs, run at its own batch."""
        return InferenceModel(
            model=model,
            cluster=self.cluster,
            tp=self.tp,
            pp=self.pp,
            engine=self.engine,
            engine_version=self.engine_version,
            overlap_scheduling=self.overlap_scheduling,
            weight_precision=self.weight_precision,
            kv_precision=self.kv_precision,
            cuda_graphs=self.cuda_graphs,
        )

    def graph_break_s(self) -> float:
        """Time a captured decode step of one stage loses to the release's graph breaks: its layers × the release's
        measured time a layer (engines.yaml graph_break_by_version); 0 where its graphs hold the attention, or where
        the part has no launch costs to add it to (analytic/step_overheads.py with_overheads)."""
        if self.cuda_graphs is False or self.engine is None:
            return 0.0
        if engine_overheads(self.cluster.accelerator, self.engine, self.cluster.tables) is None:
            return 0.0
        rule = self.cluster.tables.engine(self.engine).graph_break(self.release)
        return 0.0 if rule is None else self._stage_layers * rule.seconds(self.model.attention == "mla")

    def _eager_host_s(self, kernels: float) -> float:
        if self.engine is None:
            return 0.0
        eager = self.cluster.tables.engine(self.engine).eager_host(self.release)
        return 0.0 if eager is None else kernels / self.pp * eager.seconds(self.model.attention == "mla")

    def _engine_costs(self, total: float, whole: StepBatch) -> float:
        """The step with the engine's fixed costs: kernel launches and sampling, host work per iteration by release,
        and the API server's streaming (analytic/step_overheads.py)."""
        acc, tp = self.cluster.accelerator, self.tp
        assert self.engine is not None
        # the engine's kernel launches and sampler (analytic/step_overheads.py)
        kernels = self._step_kernels()
        # under attention DP each rank captures, launches and samples its own share of the sequences
        rank_step, rank_share = self._rank_work(whole)
        total = with_overheads(
            total,
            rank_step,
            acc,
            self.engine,
            kernels=kernels,
            vocab=self.model.vocab_size,
            tp=tp,
            share=rank_share,
            tables=self.cluster.tables,
            engine_version=self.engine_version,
            whole=whole if self.attention_dp else None,
            eager_host_s=self._eager_host_s(kernels),
            graph_break_s=self.graph_break_s(),
            cuda_graphs=self.cuda_graphs is not False,
        )
        # the engine's host work per iteration (scheduler, input preparation), by release
        # (spread over the decode iterations of a multi-step call; iterations with prompt tokens run alone), its
        # per-request part over the requests one engine core schedules (under attention DP each rank has its own)
        calls = self.scheduler_steps if whole.prefill_tokens == 0 else 1
        requests = -(-rank_step.decode_seqs // rank_share) + -(-rank_step.prefill_requests // rank_share)
        total = with_host_step(
            total, self.engine, self.engine_version, self.cluster.tables, calls, requests, self.overlap_scheduling
        )
        if self.streamed:
            # the outputs a release hands to its streams between steps, then one API server streams every rank's
            # sequences (attention DP included)
            total += serial_stream_s(whole, self.engine, self.engine_version, self.cluster.tables, calls)
            total = streamed_step_s(total, whole, self.engine, self.cluster.tables)
        return total

    def iteration_time_s(self, batch: StepBatch) -> float:
        """Wall time (s) of one engine iteration over ``batch`` on one replica."""
        return self.breakdown(batch).time_s
