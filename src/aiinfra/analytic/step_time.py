"""The one step-time seam shared by the analytic inference planner and the serving simulator.

An engine iteration (Orca, Yu et al. OSDI'22: iteration-level scheduling) processes some prompt
tokens (whole prompts or chunks, Sarathi-Serve) and one token for each decoding sequence. The
simulator describes an iteration by four aggregates, so a call is O(1) whatever the batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class StepBatch:
    """What one engine iteration computes."""

    prefill_tokens: int = 0
    """Prompt tokens computed this step (sum of all prefill chunks)."""
    prefill_attention_pairs: float = 0.0
    """Σ over prefill chunks of chunk·(cached_context + (chunk + 1)/2): causal query·key pairs."""
    decode_seqs: int = 0
    """Sequences producing one token this step."""
    decode_context_tokens: int = 0
    """Σ of the decoding sequences' context lengths (KV entries read)."""

    @property
    def tokens(self) -> int:
        return self.prefill_tokens + self.decode_seqs

    @staticmethod
    def prefill(chunk_tokens: int, cached_tokens: int = 0) -> StepBatch:
        return StepBatch(
            prefill_tokens=chunk_tokens,
            prefill_attention_pairs=chunk_tokens * (cached_tokens + (chunk_tokens + 1) / 2.0),
        )

    @staticmethod
    def decode(seqs: int, context_tokens_each: int) -> StepBatch:
        return StepBatch(decode_seqs=seqs, decode_context_tokens=seqs * context_tokens_each)

    def __add__(self, other: StepBatch) -> StepBatch:
        return StepBatch(
            self.prefill_tokens + other.prefill_tokens,
            self.prefill_attention_pairs + other.prefill_attention_pairs,
            self.decode_seqs + other.decode_seqs,
            self.decode_context_tokens + other.decode_context_tokens,
        )


class StepTimeModel(Protocol):
    """Anything that prices an iteration: the analytic roofline, a fixed time (tests), a table."""

    def iteration_time_s(self, batch: StepBatch) -> float:
        """Wall time of one engine iteration on one model replica."""
        ...


@dataclass(frozen=True, slots=True)
class FixedStepTime:
    """A constant iteration time (for queueing-theory tests)."""

    step_time_s: float

    def iteration_time_s(self, batch: StepBatch) -> float:
        return self.step_time_s
