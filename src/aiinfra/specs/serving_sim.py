"""Simulator settings (``inference.simulation``): scheduler, request lengths, replicas, router, disaggregation.

Scheduler defaults are not set here: None means the engine default from catalog/data/engines.yaml, picked as
vLLM V1 picks it for an API server (``EngineArgs._set_default_args`` in ``vllm/engine/arg_utils.py``:
``max_num_batched_tokens`` 8192 and ``max_num_seqs`` 1024 on devices with ≥ 70 GiB other than A100, else
2048 and 256; see :func:`aiinfra.planning.engine_profile.scheduler_defaults`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

from aiinfra.specs.bounds import (
    MAX_BATCH_TOKENS,
    MAX_LENGTH_QUANTILES,
    MAX_LOG_SIGMA,
    MAX_SEQ_TOKENS,
    MAX_SIMULATED_REPLICAS,
    MAX_SIMULATED_REQUESTS,
    BatchSeqs,
    Constraint,
    InRange,
    SeqTokens,
)
from aiinfra.specs.common import STRICT

if TYPE_CHECKING:
    from aiinfra.specs.engine import EngineProfile
    from aiinfra.specs.model import ModelArch

Replicas = Annotated[int, InRange(1, MAX_SIMULATED_REPLICAS)]


@dataclass(frozen=True, kw_only=True, slots=True)
class SchedulerConfig:
    """How a replica batches work (vLLM-style continuous batching by default)."""

    __pydantic_config__ = STRICT

    kind: Literal["continuous", "static"] = "continuous"
    """continuous: iteration-level scheduling (Orca, Yu et al. OSDI'22; vLLM); static: take up to
    max_num_seqs waiting requests, run them to completion, then take the next batch."""
    max_num_seqs: BatchSeqs | None = None
    """Sequences per iteration; None = the engine's default for the device (catalog/data/engines.yaml)."""
    max_num_batched_tokens: Annotated[int, InRange(1, MAX_BATCH_TOKENS)] | None = None
    """Token budget per iteration; None = the engine's default (catalog/data/engines.yaml)."""
    chunked_prefill: bool | None = None
    """Split long prompts across iterations and mix them with decodes (Sarathi-Serve, Agrawal et al. 2024;
    on by default in vLLM v1). False: prompt iterations run alone, stalling decodes (vLLM v0). None: the engine
    release's own default (vLLM V0: on only above 32K of context), else on."""
    prefix_caching: bool = False
    """Reuse the KV of a prompt prefix already computed on the replica (trace prefix_id groups; vLLM
    automatic prefix caching). Cached prefixes are never evicted in this model."""
    num_scheduler_steps: Annotated[int, InRange(1, 64)] = 1
    """vLLM V0's multi-step scheduling (--num-scheduler-steps): decode iterations run per scheduler call, so the
    engine's host time per call (engines.yaml host_step_by_version) is spread over them; iterations with prompt
    tokens run one at a time (vllm#7000)."""
    overlap_scheduling: bool | None = None
    """Whether the engine plans iteration n + 1 while the GPU runs iteration n (TensorRT-LLM's
    enable_overlap_scheduler, SGLang's overlap schedule, vLLM's --async-scheduling), so a request arriving during an
    iteration joins the one after the next and the engine's host time per iteration hides behind the GPU's step;
    None: the engine release's default (catalog/data/engines.yaml overlap_scheduler, host_step_by_version)."""
    cuda_graphs: bool | None = None
    """Whether the engine replays decode steps as CUDA graphs; False: the run turns them off (vLLM
    --enforce-eager, SGLang --disable-cuda-graph) and every step issues its kernels from Python, lasting at least
    their host issue time (analytic/step_overheads.py); None: the engine release's own rule
    (catalog/data/engines.yaml cuda_graph_max_batch, cuda_graph_by_version)."""
    kv_reservation: Literal["full", "incremental"] | None = None
    """KV admission policy: full = a request is admitted only when its whole prompt + output fits, reserved until it
    ends, nothing ever preempted (TensorRT-LLM's CapacitySchedulerPolicy GUARANTEED_NO_EVICT); incremental = blocks
    allocated as tokens arrive, the latest requests preempted when they run out (vLLM; TensorRT-LLM's
    MAX_UTILIZATION, which pauses requests); None: the engine's default (catalog/data/engines.yaml kv_reservation)."""
    preemption: Literal["recompute", "swap"] = "recompute"
    """When KV blocks run out: drop the preempted sequence's KV and recompute it later (vLLM's default),
    or copy it to host memory over PCIe and back."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LengthDist:
    """Token-count distribution of prompts or outputs."""

    __pydantic_config__ = STRICT

    kind: Literal["fixed", "uniform", "lognormal", "empirical"] = "fixed"
    low: SeqTokens | None = None
    """uniform: smallest value (default 1)."""
    high: SeqTokens | None = None
    """uniform: largest value (default 2·mean − low, so the mean is input/output_tokens); lognormal: optional
    cap on the draws (e.g. a dataset's longest sample)."""
    sigma: Annotated[float, InRange(0, MAX_LOG_SIGMA, lo_open=True)] | None = None
    """lognormal (required): σ of log(length); the mean is input/output_tokens."""
    quantiles: (
        Annotated[
            tuple[Annotated[float, InRange(1, MAX_SEQ_TOKENS)], ...],
            Constraint("Len", 2, MAX_LENGTH_QUANTILES),
        ]
        | None
    ) = None
    """empirical (required): a dataset's lengths at evenly spaced probabilities 0, 1/K, ..., 1 (its minimum, its
    K − 1 inner quantiles, its maximum), non-decreasing; draws interpolate between them (inverse CDF) and are
    scaled so that their mean is input/output_tokens, so the table keeps the dataset's shape (its share of short
    answers) whatever tokenizer counted the row's means."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Disaggregation:
    """Prefill/decode disaggregation (DistServe, Zhong et al. OSDI'24; Splitwise, Patel et al. ISCA'24)."""

    __pydantic_config__ = STRICT

    prefill_replicas: Replicas
    """Replicas that only prefill (each tp·pp accelerators)."""
    decode_replicas: Replicas
    """Replicas that only decode; a request's KV moves to one of them after its first token."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SimulationConfig:
    """The ``inference.simulation:`` section (``aiinfra simulate``): replicas, router, scheduler, KV and prefill/decode
    disaggregation settings."""

    __pydantic_config__ = STRICT

    replicas: Replicas | None = None
    """Model replicas; None = hardware.count / (tp·pp)."""
    router: Literal["round-robin", "least-outstanding-tokens"] = "round-robin"
    scheduler: SchedulerConfig | None = None
    input_lengths: LengthDist | None = None
    output_lengths: LengthDist | None = None
    disaggregation: Disaggregation | None = None
    """None = every replica prefills and decodes."""
    streaming: bool | None = None
    """Whether requests stream their tokens through the engine's API server (each step then lasts at least the
    server's time to stream its chunks); None = as the workload's usage: server loads stream, offline batches not."""
    prefix_cached_requests: Annotated[int, InRange(0, MAX_SIMULATED_REQUESTS)] | None = None
    """Generated requests, counted in the order they are sent, whose whole prompt every replica's prefix cache
    already holds when the run starts (the same server served that prompt before: an earlier run of a benchmark
    client that samples its prompts with a fixed seed, or the client's warm-up request); their prefill computes only
    the prompt's last token, as SGLang's radix cache matches at most the prompt less one token (sglang 0.5.6
    ``Req.init_next_round_input``: ``max_prefix_len = input_len - 1``; page size 1 unless set). Stating it states
    that the engine's prefix cache was on (SGLang's radix cache is unless ``--disable-radix-cache``); the cached
    prompts are never evicted in this model. Generated requests only (a trace states its prefixes with
    prefix_id). None or 0: a cold cache."""
    prefix_cached_modulo_tokens: SeqTokens | None = None
    """K: every generated prompt of L tokens finds its first ((L − 1) mod K) + 1 tokens in the replica's prefix
    cache when the run starts: the same server ran the same seeded random-length benchmark before at a nominal
    length of K tokens. sglang.bench_serving (0.5.7 ``compute_random_lens``) draws each length with
    ``np.random.randint(1, nominal + 1)`` after ``np.random.seed(seed)``, and NumPy's legacy bounded draw masks the
    same 32-bit words (``random_buffered_bounded_uint32``: ``next_uint32() & mask``, no rejection when the range is
    a power of two), so a run at nominal K draws the low bits of the lengths a run at 2K draws; both repeat the
    same sampled ShareGPT prompt's tokens (``sample_random_requests``), so the shorter prompt is the longer one's
    prefix. A prompt no longer than K was served whole (all but its last token reused, as
    ``prefix_cached_requests``). None: no earlier run."""


@dataclass(frozen=True, slots=True)
class ServingTables:
    """What a serving simulation reads from the catalog, resolved at the application boundary
    (catalog.resolve.serving_tables): the profile of the workload's engine and the speculative draft model the
    workload names (None without one)."""

    engine: EngineProfile
    draft_model: ModelArch | None = None
