"""Simulator settings: scheduler, request lengths, replicas and router."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pydantic

from aiinfra.specs.common import STRICT

PosInt = pydantic.PositiveInt
PosFloat = pydantic.PositiveFloat


@dataclass(frozen=True, kw_only=True, slots=True)
class SchedulerConfig:
    """How a replica batches work (vLLM-style continuous batching by default)."""

    __pydantic_config__ = STRICT

    kind: Literal["continuous", "static"] = "continuous"
    """continuous: iteration-level scheduling (Orca / vLLM); static: fill a batch, run it to completion."""
    max_num_seqs: PosInt | None = None
    """Sequences per iteration; None = the engine's default (catalog/data/engines.yaml)."""
    max_num_batched_tokens: PosInt | None = None
    """Token budget per iteration; None = the engine's default."""
    chunked_prefill: bool = True
    """Split long prompts across iterations (Sarathi-Serve, Agrawal et al. 2024)."""
    prefix_caching: bool = False
    """Reuse the KV of a prompt prefix already computed on the replica (trace prefix_id groups; vLLM
    automatic prefix caching). Cached prefixes are never evicted in this model."""
    preemption: Literal["recompute", "swap"] = "recompute"
    """When KV blocks run out: drop the newest sequence's KV and recompute it later, or swap it to host."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LengthDist:
    """Token-count distribution of prompts or outputs."""

    __pydantic_config__ = STRICT

    kind: Literal["fixed", "uniform", "lognormal"] = "fixed"
    low: PosInt | None = None
    """uniform: smallest value (the mean from input/output_tokens is the centre when omitted)."""
    high: PosInt | None = None
    sigma: PosFloat | None = None
    """lognormal: σ of log(length); the mean is input/output_tokens."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SimulationConfig:
    __pydantic_config__ = STRICT

    replicas: PosInt | None = None
    """Model replicas; None = hardware.count / (tp·pp)."""
    router: Literal["round-robin", "least-outstanding-tokens"] = "round-robin"
    scheduler: SchedulerConfig | None = None
    input_lengths: LengthDist | None = None
    output_lengths: LengthDist | None = None
