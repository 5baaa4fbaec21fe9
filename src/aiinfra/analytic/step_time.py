"""The one step-time seam shared by the analytic inference planner and the serving simulator.

An engine iteration (Orca, Yu et al. OSDI'22: iteration-level scheduling) processes some prompt
tokens (whole prompts or chunks, Sarathi-Serve) and one token for each decoding sequence. The
simulator describes an iteration by four aggregates, so a call is O(1) whatever the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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
    decode_queries_per_seq: int = 1
    """Query tokens each decoding sequence runs this step: 1, or γ + 1 when a speculative-decoding verify
    pass scores γ drafted tokens plus the bonus position (Leviathan et al. 2023 §3; Chen et al. 2023).
    The γ + 1 queries of one sequence share its context, so that context's KV is read once."""
    busiest_rank: StepBatch | None = None
    """Under attention data parallelism: the work of the rank with the most prompt tokens this step (its own
    prompts, decodes and contexts), while the fields above hold the sum over all ranks. The ranks step in
    lock-step, so the per-rank layers (attention, its projections, dense MLPs) last as long as this rank's
    share, while the expert layers process the tokens of every rank. None = the work is spread evenly."""
    prefill_seqs: int = 0
    """Requests whose prompt chunks make up ``prefill_tokens`` (0: not stated, one when there are prompt tokens); it
    bounds how many pipeline micro-batches the step splits into."""

    @property
    def prefill_requests(self) -> int:
        """Requests prefilling this step (at least one when there are prompt tokens)."""
        return max(self.prefill_seqs, 1 if self.prefill_tokens else 0)

    @property
    def decode_tokens(self) -> int:
        """Token positions the decoding sequences run through the model this step."""
        return self.decode_seqs * self.decode_queries_per_seq

    @property
    def decode_attention_pairs(self) -> float:
        """Query·key pairs of the decode queries: query j (0-based) of a sequence with context c attends
        c + j keys, so a sequence contributes q·c + q(q − 1)/2 pairs (q = decode_queries_per_seq)."""
        q = self.decode_queries_per_seq
        return float(q * self.decode_context_tokens + self.decode_seqs * q * (q - 1) / 2.0)

    @property
    def tokens(self) -> int:
        """Tokens the iteration runs through the model: prefill plus decode."""
        return self.prefill_tokens + self.decode_tokens

    @staticmethod
    def prefill(chunk_tokens: int, cached_tokens: int = 0) -> StepBatch:
        """An iteration prefilling one sequence's chunk of ``chunk_tokens`` after ``cached_tokens`` already in its KV
        cache; attention pairs each new token with every cached token and, causally, (chunk + 1)/2 of the chunk's."""
        return StepBatch(
            prefill_tokens=chunk_tokens,
            prefill_attention_pairs=chunk_tokens * (cached_tokens + (chunk_tokens + 1) / 2.0),
            prefill_seqs=1 if chunk_tokens else 0,
        )

    @staticmethod
    def decode(seqs: int, context_tokens_each: int) -> StepBatch:
        """An iteration decoding one token for each of ``seqs`` sequences holding ``context_tokens_each`` tokens."""
        return StepBatch(decode_seqs=seqs, decode_context_tokens=seqs * context_tokens_each)

    def __add__(self, other: StepBatch) -> StepBatch:
        """The two batches' work in one iteration (a per-rank split, ``busiest_rank``, is not carried over)."""
        q = other.decode_queries_per_seq if self.decode_seqs == 0 else self.decode_queries_per_seq
        if self.decode_seqs and other.decode_seqs and other.decode_queries_per_seq != q:
            raise ValueError("cannot add decode batches with different query tokens per sequence")
        return StepBatch(
            self.prefill_tokens + other.prefill_tokens,
            self.prefill_attention_pairs + other.prefill_attention_pairs,
            self.decode_seqs + other.decode_seqs,
            self.decode_context_tokens + other.decode_context_tokens,
            q,
            prefill_seqs=self.prefill_requests + other.prefill_requests,
        )

    def verify(self, draft_tokens: int) -> StepBatch:
        """This step as a speculative-decoding verify pass: every decoding sequence scores its
        ``draft_tokens`` drafted tokens plus one bonus position in a single target-model forward
        (Leviathan et al. 2023 §3; Chen et al. 2023 Algorithm 2). Weights and each context's KV are read
        once; linear-layer FLOPs and attention query·key pairs scale with the γ + 1 query tokens."""
        rank = self.busiest_rank.verify(draft_tokens) if self.busiest_rank is not None else None
        return replace(self, decode_queries_per_seq=self.decode_queries_per_seq * (draft_tokens + 1), busiest_rank=rank)


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
        """The fixed ``step_time_s``, whatever the batch."""
        return self.step_time_s


def chunk_prefix_tokens(work: StepBatch) -> float:
    """Cached prefix (tokens) of a step's prefill read as one chunk's: Σ pairs / tokens − (tokens + 1) / 2, exact for
    a single chunk (what a long prompt's continuing chunk fills), 0 for fresh prompts (never negative)."""
    t = work.prefill_tokens
    if t <= 0:
        return 0.0
    return max(0.0, work.prefill_attention_pairs / t - (t + 1) / 2.0)


def cached_prefix_tokens(work: StepBatch) -> float:
    """Σ over a step's prompt chunks of the tokens each finds already cached, read from its aggregates as n equal
    chunks of c = tokens / n (n = ``prefill_requests``): pairs = Σ c·(p_i + (c + 1)/2), so Σ p_i = pairs / c −
    n·(c + 1)/2. Exact for one chunk and for equal chunks; 0 for fresh prompts (never negative)."""
    n = work.prefill_requests
    if work.prefill_tokens <= 0 or n <= 0:
        return 0.0
    c = work.prefill_tokens / n
    return max(0.0, work.prefill_attention_pairs / c - n * (c + 1) / 2.0)
