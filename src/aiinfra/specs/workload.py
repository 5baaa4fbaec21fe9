"""What is run: a training job or a serving workload, as a scenario file states it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, get_args

from aiinfra.specs.bounds import (
    MAX_SIMULATED_REQUESTS,
    MAX_USERS,
    MAX_WIDTH,
    BatchSeqs,
    Constraint,
    Count,
    Fraction,
    FractionOrZero,
    InRange,
    RatePerS,
    Ratio,
    Seconds,
    SeqTokens,
    Tokens,
)
from aiinfra.specs.common import STRICT
from aiinfra.specs.fleet import MAX_CLASSES, LoadProfile, RequestClass
from aiinfra.specs.parallelism import InferencePlan, ParallelPlan
from aiinfra.specs.serving_sim import SimulationConfig

TrainPrecision = Literal["bf16", "fp16", "fp8", "fp32"]
WeightPrecision = Literal["bf16", "fp16", "fp8", "int8", "int4", "fp4"]
KvPrecision = Literal["bf16", "fp16", "fp8", "int8"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Finetune:
    """Parameter-efficient fine-tuning (Hu et al. 2021 LoRA; Dettmers et al. 2023 QLoRA)."""

    __pydantic_config__ = STRICT

    method: Literal["full", "lora", "qlora"] = "lora"
    rank: Annotated[int, InRange(1, MAX_WIDTH)] = 8
    """LoRA rank r (8 = Hugging Face PEFT LoraConfig default)."""
    target_modules: tuple[Literal["q", "k", "v", "o", "gate", "up", "down"], ...] = ("q", "v")
    """Adapted projections (q, v = PEFT's default for Llama-family models)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingJob:
    """The ``training:`` section of a scenario: the run's tokens, sequence length and batch, precision, and a layout or
    the search for one."""

    __pydantic_config__ = STRICT

    tokens: Tokens
    """Training tokens in the whole run."""
    seq_len: SeqTokens
    """Tokens per training sequence."""
    global_batch_seqs: BatchSeqs
    """Sequences per optimizer step."""
    precision: TrainPrecision = "bf16"
    """Matmul precision (mixed precision with fp32 master weights for bf16/fp16/fp8)."""
    plan: ParallelPlan | None = None
    """None = search every valid plan."""
    optimizer: Literal["adam", "sgd"] = "adam"
    finetune: Finetune | None = None
    offload: Literal["none", "optimizer", "optimizer+params"] = "none"
    """ZeRO-Offload / ZeRO-Infinity style CPU offload (Ren et al. 2021)."""
    top_k_plans: Count = 5
    """How many ranked plans to show when searching."""
    ep_comm_overlap: bool = False
    """MoE: hide each micro-batch's expert-parallel all-to-all behind another micro-batch's compute (Megatron
    ``--overlap-moe-expert-parallel-comm``, DeepSeek-V3 DualPipe); needs pipeline or gradient accumulation."""
    tp_comm_overlap: bool = False
    """Overlap tensor-parallel communication with the GEMMs (Megatron ``--tp-comm-overlap``, Transformer Engine
    userbuffers): each collective is split into tp chunks pipelined with its GEMM (Wang et al. 2023)."""
    fsdp_shard_ranks: Count | None = None
    """Hybrid sharding (HSDP) for plans with zero3/fsdp sharding: shard over groups of this many data-parallel
    ranks (e.g. 8 = one node) and replicate across the groups (PyTorch FSDP HYBRID_SHARD); None = shard over the
    whole data-parallel group."""
    moe_routing_skew_cv: FractionOrZero = 0.0
    """MoE: relative spread (σ/μ) of the experts' expected loads under the learned router, beyond routing's own
    sampling noise (from the run's router statistics); 0 = uniform routing (forced balance). The step waits for the
    busiest expert-parallel rank (docs/training-network.md, "Expert load")."""
    attention_kernel: Literal["flash", "flash2", "triton"] = "flash"
    """Fused attention kernel: "flash" = the fastest FlashAttention measured for the accelerator (FA3 / cuDNN
    on Hopper: Megatron+TE cuDNN attention); "flash2" = FlashAttention-2 kernels (flash-attn 2, and PyTorch
    SDPA's default FLASH backend on Hopper from PyTorch 2.5.1 until 2.10 prefers cuDNN, so PyTorch-native
    stacks such as torchtitan/FSDP2 scripts of that period should set it; about half FA3's speed on H100);
    "triton" = the Triton FlashAttention kernel (llm-foundry ``attn_impl: triton``), about half FA2's speed on
    A100 (FlashAttention-2 paper Fig. 4). The default stays "flash" (the Megatron/TE-class kernel)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Slo:
    """Latency limits of a serving workload; None = no limit on that metric."""

    __pydantic_config__ = STRICT

    ttft_p90_s: Seconds | None = None
    """Limit on the 90th-percentile time to first token."""
    tpot_p99_s: Seconds | None = None
    """Limit on the 99th-percentile time per output token after the first."""
    e2e_p99_s: Seconds | None = None
    """Limit on the 99th-percentile end-to-end request latency."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Speculative:
    """Speculative decoding (Leviathan et al. 2023)."""

    __pydantic_config__ = STRICT

    num_draft_tokens: Count
    """γ: tokens drafted per target step."""
    acceptance_rate: Fraction
    """α: per-token acceptance probability."""
    draft_model: str | None = None
    """Catalog id of the draft model; None = draft cost neglected (n-gram / MTP heads)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Arrival:
    """How simulated requests arrive: open-loop Poisson or gamma gaps, a closed loop of clients, or a recorded trace."""

    __pydantic_config__ = STRICT

    kind: Literal["poisson", "gamma", "concurrency", "trace"] = "poisson"
    cv: Ratio | None = None
    """Coefficient of variation of inter-arrival times (gamma)."""
    path: str | None = None
    """Trace file (CSV or JSONL) for kind: trace."""
    ramp_s: Seconds | None = None
    """kind concurrency: the clients' first requests start evenly spaced over this many seconds (a load
    generator's ramp-up); None = all at t = 0. With equal request lengths, clients that start together finish
    together and stay in step, so every refill arrives as one burst."""


EngineName = Literal["vllm", "trtllm", "sglang"]
"""Serving engines the catalog profiles (catalog/data/engines.yaml)."""
ENGINES: tuple[str, ...] = get_args(EngineName)


@dataclass(frozen=True, kw_only=True, slots=True)
class ServingWorkload:
    """The ``inference:`` section of a scenario: precisions, engine, request lengths, the load (batch, concurrency,
    users or rate), SLO and simulator settings."""

    __pydantic_config__ = STRICT

    weight_precision: WeightPrecision = "bf16"
    kv_precision: KvPrecision | None = None
    """None = bf16 (the engines' default KV dtype for bf16/fp16/fp8/int4 weights)."""
    engine: EngineName = "vllm"
    """Serving engine: its scheduler and KV-allocator defaults (catalog/data/engines.yaml) and, where the
    catalog has them, kernel timings measured inside it (efficiency rows with ``engine``)."""
    engine_version: Annotated[str, Constraint("Len", 1, 64)] | float | None = None
    """The engine's release, MAJOR.MINOR[.PATCH] (e.g. "0.6.3"): selects what the catalog knows of that release (its
    measured host time per iteration, its scheduler defaults: catalog/data/engines.yaml). None = the current release.
    A YAML number (0.8) is refused with a fix: it would read 0.10 as 0.1."""
    input_tokens: SeqTokens
    """Prompt tokens per request."""
    output_tokens: SeqTokens
    """Output tokens per request."""
    batch: BatchSeqs | Literal["max"] | None = None
    """A static batch of this many sequences; "max" = the largest steady-state batch (what the KV cache holds,
    capped by the engine's max_num_seqs and the step token budget); None = from the other load fields."""
    concurrency: BatchSeqs | None = None
    """Requests kept in flight (a closed loop of this many clients)."""
    request_rate_per_s: RatePerS | None = None
    """Open-loop arrival rate over the whole deployment."""
    users: Annotated[int, InRange(1, MAX_USERS)] | None = None
    """Concurrent users (capacity planning)."""
    think_time_s: Seconds | None = None
    """Users / concurrency: mean time a user reads and types between an answer and their next request, drawn
    exponentially (the interactive closed system of Lazowska et al. 1984, Quantitative System Performance §3.3:
    N users with think time Z and response time R send N/(R + Z) requests/s). None = the next request at once
    (a benchmark client's concurrency mode)."""
    plan: InferencePlan | None = None
    slo: Slo | None = None
    gpu_memory_utilization: Fraction = 0.9
    """Fraction of accelerator memory the engine may use (vLLM's default 0.9)."""
    block_size_tokens: SeqTokens = 16
    """Paged-KV block size (vLLM's default 16)."""
    speculative: Speculative | None = None
    arrival: Arrival | None = None
    num_requests: Annotated[int, InRange(1, MAX_SIMULATED_REQUESTS)] | None = None
    """Requests to simulate (or duration_s: every arrival within it)."""
    duration_s: Seconds | None = None
    """Simulated arrivals span this long (open loop), when num_requests is not given."""
    simulation: SimulationConfig | None = None
    """Simulator settings (aiinfra simulate)."""
    classes: Annotated[tuple[RequestClass, ...], Constraint("Len", 1, MAX_CLASSES)] | None = None
    """Request classes with their own lengths, demand and SLO: ``aiinfra capacity`` sizes a pool per accelerator
    type and assigns each class to one (docs/examples/fleet.md)."""
    load_profile: LoadProfile | None = None
    """Demand hour by hour: ``aiinfra capacity`` sizes the fleet per hour and prices autoscaled, always-on and
    reserved-base-plus-on-demand fleets."""
