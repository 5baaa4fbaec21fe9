"""Parallel layouts for training (dp tp pp cp ep vp) and for inference (tp pp ep, replicas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from aiinfra.specs.bounds import MAX_LAYERS, Accelerators, BatchSeqs, InRange
from aiinfra.specs.common import STRICT

Sharding = Literal["none", "zero1", "zero2", "zero3", "fsdp"]
Recompute = Literal["none", "selective", "full"]
Degree = Accelerators
"""A parallel degree or replica count: at most the accelerators of the largest cluster."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ParallelPlan:
    """A training layout. ``dp`` None = derived as count / (tp·pp·cp). EP is carved out of dp×tp
    (Megatron-Core convention), so it does not multiply the accelerator count."""

    __pydantic_config__ = STRICT

    tp: Degree = 1
    """Tensor-parallel degree (Shoeybi et al. 2019)."""
    pp: Degree = 1
    """Pipeline-parallel stages (Narayanan et al. 2021)."""
    dp: Degree | None = None
    """Data-parallel (or FSDP shard) degree."""
    cp: Degree = 1
    """Context-parallel degree (ring attention, Liu et al. 2023)."""
    ep: Degree = 1
    """Expert-parallel degree (MoE)."""
    vp: Annotated[int, InRange(1, MAX_LAYERS)] = 1
    """Virtual pipeline stages per rank (interleaved 1F1B); 1 = not interleaved."""
    microbatch_seqs: BatchSeqs = 1
    """Sequences per micro-batch per data-parallel rank."""
    sharding: Sharding = "none"
    """none | zero1 (optimizer states) | zero2 (+ gradients) | zero3 / fsdp (+ parameters)."""
    recompute: Recompute = "none"
    """Activation recomputation (Korthikanti et al. 2022): none | selective | full."""
    sequence_parallel: bool = True
    """Megatron sequence parallelism with TP (Korthikanti et al. 2022); ignored when tp = 1."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InferencePlan:
    __pydantic_config__ = STRICT

    tp: Degree = 1
    pp: Degree = 1
    ep: Degree = 1
    """Expert-parallel degree inside the tp group (1 = experts tensor-parallel like dense MLPs)."""
    attention_dp: bool = False
    """Attention data-parallel over the tp ranks (TensorRT-LLM ``enable_attention_dp``, vLLM/SGLang DP
    attention): non-expert weights replicated, each rank caches its own sequences, experts split ep ways."""
    replicas: Degree | None = None
    """Model instances; None = as many as the accelerator count allows."""
