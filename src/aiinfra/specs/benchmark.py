"""Serving benchmarks as published (catalog/data/benchmarks.yaml): sample count, token lengths, latency limits.

Token counts are in tokens, times in seconds. A statistic a source does not give is None (never guessed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated

from aiinfra.specs.bounds import Constraint
from aiinfra.specs.common import STRICT, Source

#: ``pydantic.NonNegativeFloat`` (the same constraint), without importing ``pydantic.types`` or annotated_types at
#: start-up
NonNeg = Annotated[float, Constraint("Ge", 0)]


@dataclass(frozen=True, kw_only=True, slots=True)
class TokenStats:
    """Per-request token counts over a benchmark's samples (population statistics)."""

    __pydantic_config__ = STRICT

    mean: NonNeg | None = None
    std: NonNeg | None = None
    """Population standard deviation; None where only the mean (or nothing) is published."""
    min: NonNeg | None = None
    p50: NonNeg | None = None
    p90: NonNeg | None = None
    p99: NonNeg | None = None
    max: NonNeg | None = None
    quantiles: tuple[NonNeg, ...] | None = None
    """The lengths at evenly spaced probabilities 0, 1/K, ..., 1 (minimum first, maximum last), where the samples
    were counted: the simulator draws from them (``LengthDist`` kind empirical) rather than from a lognormal fit."""

    @property
    def lognormal_sigma(self) -> float | None:
        """σ of a lognormal with this mean and standard deviation (method of moments): for a lognormal,
        Var/E² = exp(σ²) − 1, so σ = √ln(1 + (std/mean)²). None when std or mean is unknown."""
        if self.std is None or not self.mean:
            return None
        return math.sqrt(math.log1p((self.std / self.mean) ** 2))


@dataclass(frozen=True, kw_only=True, slots=True)
class LatencyConstraint:
    """Limits a scenario enforces at the 99th percentile (MLPerf LoadGen Server/Interactive)."""

    __pydantic_config__ = STRICT

    ttft_p99_s: NonNeg | None = None
    tpot_p99_s: NonNeg | None = None
    e2e_p99_s: NonNeg | None = None
    """Whole-query latency limit (benchmarks that do not track token latencies, e.g. GPT-J)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class BenchmarkSpec:
    """One serving benchmark's workload."""

    __pydantic_config__ = STRICT

    id: str
    name: str
    suite: str
    """e.g. mlperf-inference."""
    model: str
    """The model the benchmark runs (Hugging Face id)."""
    match: tuple[str, ...]
    """Lower-case names that identify the benchmark in a result's path or notes (llama2-70b, mixtral-8x7b)."""
    dataset: str
    sources: tuple[Source, ...]
    introduced_in: str | None = None
    """Round that added the benchmark (v4.0 ...), where a source says."""
    num_samples: int | None = None
    """Samples in the performance set."""
    min_duration_s: NonNeg | None = None
    """Shortest valid performance run (MLPerf LoadGen min_duration)."""
    input_tokens: TokenStats = field(default_factory=TokenStats)
    output_tokens: TokenStats = field(default_factory=TokenStats)
    latency_constraints: dict[str, LatencyConstraint] = field(default_factory=dict)
    """Per scenario (server, interactive)."""
    notes: str = ""


def benchmark_named(specs: Iterable[BenchmarkSpec], *texts: str) -> BenchmarkSpec | None:
    """The benchmark a result names: the longest ``match`` name found in any of ``texts`` (a result path,
    notes, a model name), compared lower-case and also with punctuation removed ("Llama-2-70B" matches
    llama2-70b). None when no benchmark matches."""
    low = [t.lower() for t in texts if t]
    squashed = ["".join(ch for ch in t if ch.isalnum()) for t in low]
    best: tuple[int, BenchmarkSpec] | None = None
    for spec in specs:
        for name in spec.match:
            flat = "".join(ch for ch in name if ch.isalnum())
            found = any(name in t for t in low) or any(flat in t for t in squashed)
            if found and (best is None or len(flat) > best[0]):
                best = (len(flat), spec)
    return best[1] if best else None
