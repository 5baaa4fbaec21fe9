"""Parallel layouts for training (dp tp pp cp ep vp) and for inference (tp pp ep, replicas)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Annotated, Literal

from aiinfra.specs.bounds import MAX_LAYERS, Accelerators, BatchSeqs, InRange
from aiinfra.specs.common import STRICT

ShardingName = Literal["none", "zero1", "zero2", "zero3", "fsdp"]
RecomputeName = Literal["none", "selective", "full"]


class Sharding(IntEnum):
    """Data-parallel state sharding; the value is the code plan arrays hold (numpy integers)."""

    NONE = 0
    ZERO1 = 1
    """Optimizer states sharded."""
    ZERO2 = 2
    """+ gradients."""
    ZERO3 = 3
    """+ parameters (gathered layer by layer)."""
    FSDP = 4
    """+ parameters, with fp32 sharded weights and gradients (PyTorch FSDP mixed precision)."""

    @property
    def label(self) -> str:
        """The scenario spelling (zero3)."""
        return self.name.lower()

    @classmethod
    def of(cls, label: str) -> Sharding:
        """The sharding a scenario spells ``label`` (e.g. zero3); a KeyError for an unknown one."""
        return cls[label.upper()]


#: shardings that also split the parameters (gathered for each layer's compute)
PARAMS_SHARDED = (Sharding.ZERO3, Sharding.FSDP)


class Recompute(IntEnum):
    """Activation recomputation; the value is the code plan arrays hold."""

    NONE = 0
    SELECTIVE = 1
    """Attention scores only (Korthikanti et al. 2022)."""
    FULL = 2
    """Whole layers from their inputs."""

    @property
    def label(self) -> str:
        """The scenario spelling (selective)."""
        return self.name.lower()

    @classmethod
    def of(cls, label: str) -> Recompute:
        """The recomputation a scenario spells ``label`` (e.g. full); a KeyError for an unknown one."""
        return cls[label.upper()]


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
    sharding: ShardingName = "none"
    """none | zero1 (optimizer states) | zero2 (+ gradients) | zero3 / fsdp (+ parameters)."""
    recompute: RecomputeName = "none"
    """Activation recomputation (Korthikanti et al. 2022): none | selective | full."""
    sequence_parallel: bool = True
    """Megatron sequence parallelism with TP (Korthikanti et al. 2022); ignored when tp = 1."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InferencePlan:
    """A serving layout: each replica splits the model tp × pp ways; replicas fill the accelerators."""

    __pydantic_config__ = STRICT

    tp: Degree = 1
    """Tensor-parallel degree of one replica."""
    pp: Degree = 1
    """Pipeline-parallel stages of one replica."""
    ep: Degree = 1
    """Expert-parallel degree inside the tp group (1 = experts tensor-parallel like dense MLPs)."""
    attention_dp: bool = False
    """Attention data-parallel over the tp ranks (TensorRT-LLM ``enable_attention_dp``, vLLM/SGLang DP
    attention): non-expert weights replicated, each rank caches its own sequences, experts split ep ways."""
    replicas: Degree | None = None
    """Model instances; None = as many as the accelerator count allows."""
