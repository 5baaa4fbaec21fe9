"""Serving-engine profiles: an engines.yaml row and the behaviours it implies, as one policy object.

vLLM V1 (``EngineArgs._set_default_args``, vllm/engine/arg_utils.py; the row cites the commit) chooses
``max_num_batched_tokens`` and ``max_num_seqs`` by usage context — the ``LLM`` class (offline benchmarks:
benchmark_throughput, benchmark_latency) or the OpenAI API server (``vllm serve``, benchmark_serving) — and
by the device: total memory ≥ 70 GiB and a device name without "a100" gets the larger table; the chosen
``max_num_seqs`` is then capped at ``max_num_batched_tokens``. TensorRT-LLM's row holds one fixed pair (the
LLM API defaults). Code asks a profile (read from the catalog by the application layer and passed down) what an
engine does; it never compares names. Also the runtime memory reserve of runtime.yaml (:class:`RuntimeReserve`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypeVar

from aiinfra.errors import DataError
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.units import GB, GiB

Usage = Literal["offline", "server"]
"""offline: the engine driven in-process over a fixed batch of prompts (vLLM's LLM class);
server: the engine behind an API server receiving requests over time (vLLM's OpenAI API server)."""

KvAllocator = Literal["total_memory_fraction", "free_memory_fraction", "static_memory_fraction"]


@dataclass(frozen=True, kw_only=True, slots=True)
class RuntimeReserve:
    """Memory frameworks take per accelerator before model state (runtime.yaml)."""

    id: str
    figures_gb: dict[str, float]
    """The row's figures in its decimal GB: other_gb (CUDA context, allocator), nccl_gb (communicator buffers)."""

    def reserve_bytes(self, with_nccl: bool) -> float:
        """The reserve, with NCCL's buffers where the run communicates."""
        other, nccl = self.figures_gb["other_gb"], self.figures_gb["nccl_gb"]
        return (other + (nccl if with_nccl else 0.0)) * GB


@dataclass(frozen=True, kw_only=True, slots=True)
class SchedulerDefaults:
    """An engine's default scheduler limits for one device and usage context (engines.yaml), with why."""

    max_num_batched_tokens: int
    """Token budget of one iteration (prompt chunks plus decodes)."""
    max_num_seqs: int
    """Most sequences running at once."""
    basis: str
    """Why these values (engine, usage context, device rule) — printed in notes."""
    chunked_prefill: bool | None = None
    """Whether the release chunks prompts by default under these limits (None: the engine profile's flag)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ReleaseRange:
    """The releases a behaviour or a cost of an engine applies to (engines.yaml ``overlap_scheduler``,
    ``host_step_by_version``)."""

    from_version: tuple[int, ...] | None = None
    """First release it applies to (None: every earlier one)."""
    below_version: tuple[int, ...] | None = None
    """First release it no longer applies to (None: through the current release)."""
    when_unstated: bool = True
    """Whether it applies when no release is stated (the current release); False where the measured code path is
    one of several the engine ships (TensorRT-LLM's PyTorch executor beside its TensorRT engines)."""
    source: str = ""

    def applies(self, version: tuple[int, ...] | None) -> bool:
        """Whether release ``version`` has it; an unstated release (None) is the current one."""
        if version is None:
            return self.below_version is None and self.when_unstated
        return (self.from_version is None or version >= self.from_version) and (
            self.below_version is None or version < self.below_version
        )


class _ReleaseRule(Protocol):
    """An engines.yaml entry that applies to a range of releases."""

    @property
    def releases(self) -> ReleaseRange:
        """The releases the entry applies to."""
        ...


_Rule = TypeVar("_Rule", bound=_ReleaseRule)


def _for_release(rules: Iterable[_Rule], version: tuple[int, ...] | None) -> _Rule | None:
    """The first of ``rules`` whose releases include ``version`` (None: the current release); None: none does."""
    return next((r for r in rules if r.releases.applies(version)), None)


@dataclass(frozen=True, kw_only=True, slots=True)
class MlaAbsorbedCopies:
    """The element-wise kernels a release runs in an MLA layer's absorbed path beside the two per-layer norms, the
    rotary embedding and the KV-cache write every layer prices (the latent down-projections' own norms, and the
    copies that assemble the query and key and unpack the output), read in its code (engines.yaml
    ``mla_absorbed_copies``; analytic/inference.py ``InferenceModel._mla_copies_s``)."""

    releases: ReleaseRange
    kernels: int
    """Kernels per layer."""
    values_per_token: int
    """bf16 values the kernels read and write per absorbed token and layer, apart from the per-head ones."""
    values_per_token_per_head: int
    """bf16 values they read and write per absorbed token, layer and local query head."""


@dataclass(frozen=True, kw_only=True, slots=True)
class WindowedKvMemory:
    """Releases whose KV cache frees the sliding-window layers' blocks once they fall out of the window, and how
    (engines.yaml ``windowed_kv_memory``; analytic/window.py ``context_per_kv_slot``)."""

    releases: ReleaseRange
    swa_pool_ratio: float | None = None
    """Tokens the windowed layers' pool holds per token of the full layers' pool, split once at start-up (SGLang's
    ``swa_full_tokens_ratio``); None: one pool shared by every layer (vLLM's hybrid KV cache manager)."""
    model_names: tuple[str, ...] = ()
    """Only for models whose id or name contains one of these (lower case; an engine's allow-list); empty: every
    model with sliding-window layers."""
    generations: tuple[str, ...] = ()
    """Only on these accelerator generations (where the release's default attention backend supports it); empty:
    on every one."""

    def covers(self, version: tuple[int, ...] | None, model_name: str, generation: str | None) -> bool:
        """Whether release ``version`` applies it to the model named ``model_name`` (its id and name, joined) on an
        accelerator of ``generation``."""
        if not self.releases.applies(version):
            return False
        if self.generations and generation not in self.generations:
            return False
        name = model_name.lower()
        return not self.model_names or any(n in name for n in self.model_names)


@dataclass(frozen=True, kw_only=True, slots=True)
class SingleGpuReserve:
    """Memory a release keeps besides weights, activations and KV on a one-GPU replica (engines.yaml
    ``single_gpu_reserve``)."""

    releases: ReleaseRange
    reserve_bytes: float


@dataclass(frozen=True, kw_only=True, slots=True)
class ProfileSampler:
    """A release whose memory profiling at start-up also runs its sampler over the largest batch of requests it
    schedules, so the activation peak it sizes the KV cache by is at least that sampler's (engines.yaml
    ``profile_sampler``)."""

    releases: ReleaseRange
    logit_bytes: float
    """Bytes live per (request, vocabulary entry) at the sampler's peak."""

    def peak_bytes(self, requests: int, vocab: int) -> float:
        """The sampler's live bytes over ``requests`` requests of a ``vocab``-entry vocabulary."""
        return requests * vocab * self.logit_bytes


@dataclass(frozen=True, kw_only=True, slots=True)
class Mxfp4Padding:
    """How a release lays out an MXFP4 checkpoint's routed experts on a generation of accelerator: the kernel it picks
    needs the expert matrices' hidden and per-rank expert widths rounded up to these multiples, and stores them so
    (engines.yaml ``mxfp4_moe_padding``; analytic/inference.py ``expert_padding_factor``)."""

    releases: ReleaseRange
    generations: tuple[str, ...]
    hidden_multiple: int
    expert_ffn_multiple: int
    """Of the expert width on one tensor-parallel rank (``intermediate_size_per_partition``)."""

    def padded_factor(self, hidden: int, expert_ffn_per_rank: float) -> float:
        """Stored elements over checkpoint elements of one expert matrix (hidden x per-rank expert width)."""
        width = max(math.ceil(expert_ffn_per_rank), 1)
        padded_h = -(-hidden // self.hidden_multiple) * self.hidden_multiple
        padded_w = -(-width // self.expert_ffn_multiple) * self.expert_ffn_multiple
        return padded_h * padded_w / (hidden * width)


@dataclass(frozen=True, kw_only=True, slots=True)
class HostStepCost:
    """Host time an engine release spends per iteration outside the GPU's kernels (scheduling, input preparation,
    output processing) and how it meets the GPU's step (engines.yaml ``host_step_by_version``)."""

    step_s: float
    """The fixed part, per iteration."""
    overlapped: bool
    """True: the engine prepares the next step while the GPU runs this one (an overlap scheduler), so the step
    lasts max(GPU, host); False: the host work runs between the GPU steps, so the step lasts GPU + host."""
    releases: ReleaseRange
    per_request_s: float = 0.0
    """The part that grows with the requests the iteration schedules, per request (0 where the source gives one
    figure per iteration)."""

    def seconds(self, requests: int) -> float:
        """Host time of an iteration that schedules ``requests`` requests."""
        return self.step_s + self.per_request_s * max(requests, 0)


@dataclass(frozen=True, kw_only=True, slots=True)
class SerialStreamCost:
    """Engine-process time per streamed output that a release spends between its steps, serial with them
    (engines.yaml ``serial_stream_by_version``): vLLM before 0.6.2 ran its AsyncLLMEngine on an asyncio event loop
    that also carried every request's output stream, so each sequence's output of a step was queued, pickled and sent
    on that loop before the next step was scheduled."""

    chunk_s: float
    """Seconds per streamed output (one per sequence per step)."""
    releases: ReleaseRange


@dataclass(frozen=True, kw_only=True, slots=True)
class UnfusedChannelFp8:
    """Releases that run an FP8 linear layer with per-channel weight and per-token activation scales as an FP8 GEMM
    into fp32 followed by separate kernels that apply the two scales and cast the result (engines.yaml
    ``unfused_channel_fp8_by_version``): on parts of ``vendors``, the GEMM takes ``time_x`` times the fused
    op's time where it is compute-bound, and each GEMM issues ``extra_kernels`` more kernels."""

    time_x: float
    extra_kernels: int
    vendors: tuple[str, ...]
    releases: ReleaseRange


@dataclass(frozen=True, kw_only=True, slots=True)
class OwnAllReduceLimit:
    """The largest tensor-parallel all-reduce an engine release runs on its own kernels (custom one-/two-shot,
    symmetric memory); larger messages go to NCCL (engines.yaml ``own_allreduce_by_version``)."""

    max_bytes: float
    generations: tuple[str, ...]
    """Accelerator generations it applies to: those on which the engine-tagged timings ran a faster all-reduce above
    ``max_bytes`` (symmetric memory); elsewhere those timings are NCCL's already."""
    releases: ReleaseRange


@dataclass(frozen=True, kw_only=True, slots=True)
class MlaAbsorbedPrefill:
    """When an engine release runs a prefill step's MLA attention on the absorbed latent (the decode form: 128 heads
    of 576 query-key and 512 value dimensions, DeepSeek-V2 §2.1.3) rather than the decompressed multi-head form
    (192 / 128 per head): steps whose prompts' cached prefixes sum to fewer than ``prefix_below_tokens`` tokens, and,
    if ``fresh_prompts``, steps of fresh prompts too (engines.yaml ``mla_absorbed_prefill``)."""

    prefix_below_tokens: int
    fresh_prompts: bool
    releases: ReleaseRange

    def absorbed(self, prefix_tokens: float) -> bool:
        """Whether a prefill step whose requests' cached prefixes sum to ``prefix_tokens`` runs absorbed."""
        if prefix_tokens <= 0.0:
            return self.fresh_prompts
        return prefix_tokens < self.prefix_below_tokens


@dataclass(frozen=True, kw_only=True, slots=True)
class AdmissionReserve:
    """An engine release's admission rule that holds KV back for the running requests' outputs (engines.yaml
    ``admission_reserve_by_version``; SGLang's PrefillAdder): the ratio of each running request's remaining outputs
    held back starts at ``init_ratio`` (× ``dp_attention_ratio`` under attention data parallelism), falls by
    ``decay_per_step`` per decode step to ``floor_ratio``, outputs counted up to ``clip_tokens`` per request; after a
    retraction the ratio becomes (decoded + ``retract_decode_steps`` per request) / requested."""

    init_ratio: float
    floor_ratio: float
    decay_per_step: float
    clip_tokens: int
    retract_decode_steps: int
    dp_attention_ratio: float
    releases: ReleaseRange

    def for_layout(self, attention_dp: bool) -> AdmissionReserve:
        """The rule a replica runs: under attention data parallelism the start ratio × ``dp_attention_ratio``
        (capped at 1), the floor and the decay scaled with it (SGLang's Scheduler.__init__: floor = start × 0.14,
        decay = (start − floor) / 600, both from the start); without it the rule as it is."""
        if not attention_dp:
            return self
        init = min(self.init_ratio * self.dp_attention_ratio, 1.0)
        scale = init / self.init_ratio
        return replace(
            self, init_ratio=init, floor_ratio=self.floor_ratio * scale, decay_per_step=self.decay_per_step * scale
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class CudaGraphRule:
    """Which decode steps an engine release replays as CUDA graphs where it differs from the profile's current
    rule (engines.yaml ``cuda_graph_by_version``): its own memory bands, and under attention DP whether the limit
    applies to the sequences summed over every rank, captured only when no rank runs prompt tokens."""

    bands: tuple[tuple[float | None, int, int], ...]
    """(memory below GiB or None, max batch at tp < 4, at tp ≥ 4), as ``EngineProfile.cuda_graph_bands``."""
    attention_dp_global: bool
    releases: ReleaseRange
    python_eager_launch: bool | None = None
    """Whether the release's steps outside its graphs issue their kernels from Python, where it differs from the
    profile's ``python_eager_launch`` (TensorRT-LLM's PyTorch executor from 1.0 beside its C++ TensorRT runtime);
    None: the profile's."""


@dataclass(frozen=True, kw_only=True, slots=True)
class MlaOrOther:
    """A release's measured time that differs between a model with MLA attention and any other (engines.yaml
    ``eager_host_by_version``: the host time per kernel of a step issued eagerly from Python, the engine's own forward
    timed eager against graphed and spread over the kernels the model counts for that step, kernels_per_step;
    ``graph_break_by_version``: the time a captured decode step loses at every layer to leaving its attention outside
    the CUDA graph, vLLM V1's piecewise graphs, the release's decode time per token piecewise against full graphs
    over the model's layers)."""

    mla_s: float
    """For a model with MLA attention (measured on DeepSeek-V3 and Kimi-K2.6: MLA, MoE routing, FP8 quantisation)."""
    other_s: float
    """For any other model (measured on a dense GQA model)."""
    releases: ReleaseRange

    def seconds(self, mla: bool) -> float:
        """The time for a model with MLA attention (``mla``) or another."""
        return self.mla_s if mla else self.other_s


def parse_version(text: str) -> tuple[int, ...] | None:
    """The release number ``text`` starts with ("0.6.3.post2.dev308+gb489fc3c", "v0.11.0", "v1.2.0rc1" -> (0, 6, 3),
    (0, 11, 0), (1, 2, 0)); None when it does not start with a MAJOR.MINOR number (an image tag, "latest", another
    product's version further on)."""
    m = re.match(r"\s*v?(\d+)\.(\d+)(?:\.(\d+))?(?![\d])", text)
    if m is None:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


@dataclass(frozen=True, kw_only=True, slots=True)
class MemFractionByRanks:
    """A release's default --mem-fraction-static by tensor-parallel size where it differs from the profile's
    reserved-memory rule (engines.yaml ``mem_fraction_by_version``): the fraction of the first band whose minimum
    tp the replica reaches."""

    bands: tuple[tuple[int, float], ...]
    """(minimum tp, fraction), largest tp first."""
    releases: ReleaseRange

    def fraction(self, tp: int) -> float:
        """The default fraction at tensor parallelism ``tp``."""
        for min_tp, frac in self.bands:
            if tp >= min_tp:
                return frac
        raise DataError(f"mem_fraction_by_version has no band for tp {tp}")


@dataclass(frozen=True, kw_only=True, slots=True)
class EngineProfile:
    """One serving engine as the catalog knows it (engines.yaml)."""

    id: str
    kv_allocator: KvAllocator
    """total_memory_fraction: KV gets util·HBM minus weights, activations and reserve (vLLM
    gpu_memory_utilization); free_memory_fraction: a fraction of what is left after them (TensorRT-LLM
    KvCacheConfig.free_gpu_memory_fraction)."""
    block_size_tokens: int | None
    block_size_from_scenario: bool
    """True when the scenario's block_size_tokens is the engine's own flag (vLLM --block-size)."""
    gpu_memory_utilization_frac: float | None
    kv_cache_free_gpu_mem_frac: float | None
    reserves_full_context: bool
    """kv_reservation full: a request's whole prompt + output is reserved at admission (TensorRT-LLM
    GUARANTEED_NO_EVICT); else blocks are allocated as tokens arrive."""
    chunked_prefill: bool
    """Whether the engine chunks prompts by default (else a step's budget admits whole prompts)."""
    attention_dp_gather_quantised: bool
    """The attention-DP all-gather before the experts carries activations already quantised to the FP8 / NVFP4
    expert-weight format (TensorRT-LLM); else 16-bit activations (vLLM)."""
    max_num_seqs: int | None
    max_num_batched_tokens: int | None
    attention_dp_dispatch: Literal["balanced", "round_robin"] = "balanced"
    """How new requests reach the attention-DP ranks: ``balanced`` (TensorRT-LLM's executor: a shared queue, each
    request to the rank with the fewest active prompt tokens, none beyond the ranks' sequence limits) or
    ``round_robin`` (SGLang's data-parallel controller: each request, as it arrives, to the next rank in turn)."""
    pipeline_micro_batches: bool = False
    """With pipeline parallelism the engine keeps one micro-batch per stage in flight (analytic/inference.py)."""
    cuda_graph_max_batch: int | None = None
    """Decode-only steps of up to this many sequences replay a captured CUDA graph (analytic/step_overheads.py)."""
    python_eager_launch: bool = False
    """Steps outside its graphs issue their kernels from Python one by one (PyTorch eager); False: a C++ runtime or
    graphs throughout, no host-issue floor modelled."""
    sampling_method: str | None = None
    """The sampler its benchmarks run (a kernel_overheads ``method``: greedy, temperature, top_p_sort); None: no
    sampling term."""
    cuda_graph_bands: tuple[tuple[float | None, int, int], ...] = ()
    """Device-dependent CUDA-graph limit (SGLang): (memory below GiB or None, max batch at tp < 4, at tp ≥ 4)."""
    mem_fraction_rule: Mapping[str, Any] | None = field(default=None, repr=False)
    """static_memory_fraction allocator (SGLang): the rule that sets the fraction of memory for weights + KV pool."""
    mem_fraction_by_version: tuple[MemFractionByRanks, ...] = ()
    """Releases whose default --mem-fraction-static is a table by tp (SGLang 0.4.5) instead of mem_fraction_rule."""
    collective_rows_engine: str | None = None
    """Whose engine-tagged collective timings its collectives follow on a part without its own (SGLang's custom
    all-reduce is adapted from vLLM's kernel)."""
    w4a16_moe_rows_engine: str | None = None
    """Whose engine-tagged weight-only MXFP4 (W4A16) fused-MoE timings its FP4 experts follow on a part without FP4
    tensor cores (SGLang runs OpenAI's triton_kernels MoE on Hopper, the op vLLM's rows time)."""
    w4a16_moe_rows_from_version: tuple[int, ...] | None = None
    """The first release whose default MoE backend is the op its W4A16 rows time; a stated earlier release runs
    another (TensorRT-LLM's CUTLASS default before AUTO) and keeps the shape-blind term. None: every release."""
    mla_bmm_bf16_from_version: tuple[int, ...] | None = None
    """The first release that multiplies an FP8 checkpoint's absorbed-MLA matmuls (W_UK, W_UV) in bf16, having
    dequantised kv_b_proj at load, where earlier releases re-quantised it per tensor and ran FP8 (SGLang). None: the
    engine's own format in every release."""
    scheduler_table: Mapping[str, Any] | None = field(default=None, repr=False)
    """Device- and usage-dependent defaults (vLLM V1); None = the fixed pair above."""
    bench_tool: str | None = None
    """The engine's own offline benchmark whose derived limits bench_tuning describes (trtllm-bench)."""
    bench_tuning: Mapping[str, Any] | None = field(default=None, repr=False)
    request_overhead_s: float = 0.0
    """Serving-path time a request's first token pays outside the engine's iterations: the API server's HTTP
    handling, chat template and tokenisation, the hand-off to the scheduler and the first token's detokenisation and
    streaming (engines.yaml request_overhead_ms, measured at one client; 0 = none measured). Added to TTFT."""
    stream_chunk_s: float = 0.0
    """API-server time per streamed chunk (one per sequence per step: output processing, detokenisation, the chunk's
    JSON and HTTP write), in a process pipelined with the engine (engines.yaml stream_chunk_us; 0 = none measured):
    a step's tokens reach the clients no faster than chunks × this (analytic/step_overheads.py)."""
    legacy_scheduler: Mapping[str, Any] | None = field(default=None, repr=False)
    """Scheduler defaults of the releases before ``below_version`` (vLLM V0; engines.yaml legacy_scheduler)."""
    host_step_costs: tuple[HostStepCost, ...] = ()
    """Host time per iteration by release (engines.yaml host_step_by_version; none: not priced)."""
    serial_stream_costs: tuple[SerialStreamCost, ...] = ()
    """Engine-process time per streamed output, serial with the steps, by release (engines.yaml
    serial_stream_by_version; none: the streaming is pipelined, ``stream_chunk_s``)."""
    unfused_channel_fp8: tuple[UnfusedChannelFp8, ...] = ()
    """Releases and parts whose channel-scaled FP8 linear layers run unfused (engines.yaml
    unfused_channel_fp8_by_version; none: fused everywhere)."""
    eager_hosts: tuple[MlaOrOther, ...] = ()
    """Host time per kernel of an eager step by release (engines.yaml eager_host_by_version; none: the part's
    generic per-kernel launch floor alone)."""
    graph_breaks: tuple[MlaOrOther, ...] = ()
    """Time a captured decode step loses per layer by release (engines.yaml graph_break_by_version; none: its graphs
    hold the attention too)."""

    multi_step_flag: str | None = None
    """The command-line flag that sets multi-step scheduling (vLLM V0 --num-scheduler-steps); None: the engine has
    none."""
    chunked_prefill_flag: str | None = None
    """The command-line flag that turns chunked prefill on (vLLM --enable-chunked-prefill, which takes an optional
    boolean value; engines.yaml chunked_prefill_flag): a run that states it runs with it; None: none."""
    context_length_flag: str | None = None
    """The command-line flag that sets the served context length (vLLM --max-model-len, SGLang --context-length;
    engines.yaml context_length_flag): a run that states it serves that context, not the model's; None: none."""
    cuda_graphs_off_flag: str | None = None
    """The command-line flag that turns CUDA graphs off (vLLM --enforce-eager, SGLang --disable-cuda-graph;
    engines.yaml cuda_graphs_off_flag): a run that states it issues every step eagerly; None: none."""
    overlap_flags: tuple[str, str] | None = None
    """The command-line flags that turn the overlap scheduler on and off (vLLM --async-scheduling /
    --no-async-scheduling; engines.yaml overlap_flags); None: the engine has none."""
    legacy_engine: Mapping[str, Any] | None = field(default=None, repr=False)
    """What a run that states no release ran when its build predates the current engine generation, or that selects
    the legacy generation on a release that still carries it (engines.yaml legacy_engine: the release it is priced
    as, the date the current generation became the default, the setting that selects it: ``stated_by``)."""
    overlap_scheduler: ReleaseRange | None = None
    """Releases whose scheduler plans iteration n + 1 while the GPU runs iteration n (engines.yaml
    overlap_scheduler): a request arriving during an iteration joins the one after the next."""

    mlperf_kv_reservation: str | None = None
    """The KV admission policy NVIDIA's MLPerf Inference harness runs this engine with (engines.yaml
    mlperf_kv_reservation: incremental = TensorRT-LLM's MAX_UTILIZATION, the harness's default); None: the
    engine's own default. Read by the validation of MLPerf rows."""
    mla_absorbed_prefill: tuple[MlaAbsorbedPrefill, ...] = ()
    """Releases whose MLA prefill runs on the absorbed latent, and when (engines.yaml mla_absorbed_prefill; none: the
    decompressed multi-head form throughout)."""

    mla_prefill_pads_v: ReleaseRange | None = None
    """Releases whose multi-head MLA prefill pads the value heads with zeros to the query-key head width before the
    attention kernel (engines.yaml mla_prefill_pads_v): the kernel then multiplies 192-wide values, not 128-wide.
    None: values at their own width."""

    attention_dp_tp_mlp: tuple[ReleaseRange, ...] = ()
    """Releases whose attention DP keeps the MLPs tensor-parallel (engines.yaml ``attention_dp_tp_mlp``): every layer
    gathers the step's tokens by all-reducing a zero-padded buffer, runs its dense MLP, shared and routed experts split
    over the ranks on all of them and all-reduces the output; only attention is data-parallel."""
    mla_absorbed_copies: tuple[MlaAbsorbedCopies, ...] = ()
    """Per release, the element-wise kernels of an MLA layer's absorbed path beyond the ones every layer prices;
    none: no release read."""
    windowed_kv_memory: tuple[WindowedKvMemory, ...] = ()
    """Releases whose KV cache frees a sliding-window layer's blocks once they fall out of its window (engines.yaml
    windowed_kv_memory), so such a layer holds about a window per sequence. None: every layer holds the whole
    context (the window still bounds the attention's compute and reads)."""

    cuda_graph_by_version: tuple[CudaGraphRule, ...] = ()
    """Releases whose CUDA-graph limit differs from ``cuda_graph_bands`` (engines.yaml cuda_graph_by_version)."""

    mxfp4_moe_padding: tuple[Mxfp4Padding, ...] = ()
    """Releases and generations whose MXFP4 MoE kernel stores the routed experts padded (engines.yaml
    mxfp4_moe_padding); none: as the checkpoint."""

    single_gpu_reserve: tuple[SingleGpuReserve, ...] = ()
    """Releases that reserve, besides weights, activations and KV, only this many bytes when a replica runs on one
    GPU (engines.yaml single_gpu_reserve); none: the catalog's runtime reserve."""

    profile_sampler: ProfileSampler | None = None
    """Releases whose start-up memory profile runs the sampler over its largest batch of requests (engines.yaml
    profile_sampler); None: the forward pass's activations alone."""

    fused_moe_chunk_tokens: int | None = None
    """Most tokens the engine's fused MoE op takes in one call, its buffers sized for that many (engines.yaml
    fused_moe_chunk_tokens); None: the whole batch at once."""

    own_allreduce_limits: tuple[OwnAllReduceLimit, ...] = ()
    """Releases whose own all-reduce stops at a message size below what the engine-tagged timings cover, NCCL above
    it (engines.yaml own_allreduce_by_version; none: the engine-tagged timings at every size)."""

    admission_reserves: tuple[AdmissionReserve, ...] = ()
    """Releases that admit a prompt only when the KV cache also holds the running requests' expected outputs
    (engines.yaml admission_reserve_by_version; none: a prompt is admitted when its own blocks fit)."""

    prefill_steps_alone: ReleaseRange | None = None
    """Releases in which an iteration that prefills prompt chunks runs without the decodes even under chunked
    prefill (SGLang without --enable-mixed-chunk): the decoding sequences wait for it. None: chunks and decodes
    share an iteration."""

    whole_prompts_with_decodes: bool = False
    """Without chunked prefill, whole prompts are prefilled in the same iterations as the decodes (TensorRT-LLM's
    in-flight batching); False: a prompt iteration runs alone (vLLM V0)."""

    def admission_reserve(self, version: tuple[int, ...] | None) -> AdmissionReserve | None:
        """The output-reservation admission rule of release ``version`` (None: the current release); None: none."""
        return _for_release(self.admission_reserves, version)

    def prefill_alone(self, version: tuple[int, ...] | None) -> bool:
        """Whether release ``version`` (None: the current one) runs its prefill iterations without the decodes."""
        return self.prefill_steps_alone is not None and self.prefill_steps_alone.applies(version)

    def graph_rule(self, version: tuple[int, ...] | None) -> CudaGraphRule | None:
        """The CUDA-graph rule of release ``version`` (None: the current release) where it has its own."""
        return _for_release(self.cuda_graph_by_version, version)

    def mla_prefill_rule(self, version: tuple[int, ...] | None) -> MlaAbsorbedPrefill | None:
        """The absorbed-MLA prefill rule of release ``version`` (None: the current release); None: never absorbed."""
        return _for_release(self.mla_absorbed_prefill, version)

    def pads_mla_prefill_v(self, version: tuple[int, ...] | None) -> bool:
        """Whether release ``version`` (None: the current one) pads MLA's prefill values to the query-key width."""
        return self.mla_prefill_pads_v is not None and self.mla_prefill_pads_v.applies(version)

    def windowed_kv_rule(
        self, version: tuple[int, ...] | None, model_name: str, generation: str | None
    ) -> WindowedKvMemory | None:
        """How release ``version`` (None: the current one) holds the sliding-window layers' KV of the named model on
        an accelerator of ``generation``, where it frees their out-of-window blocks; None: it keeps the whole context
        on every layer."""
        return next((r for r in self.windowed_kv_memory if r.covers(version, model_name, generation)), None)

    def mxfp4_padding(self, version: tuple[int, ...] | None, generation: str | None) -> Mxfp4Padding | None:
        """The expert padding release ``version`` (None: the current one) applies to MXFP4 experts on an accelerator
        of ``generation``; None: stored as the checkpoint."""
        return _for_release((r for r in self.mxfp4_moe_padding if generation in r.generations), version)

    def single_gpu_reserve_bytes(self, version: tuple[int, ...] | None) -> float | None:
        """The memory release ``version`` (None: the current one) keeps outside weights, activations and KV on a
        one-GPU replica, where the engine states it; None: the catalog's runtime reserve."""
        rule = _for_release(self.single_gpu_reserve, version)
        return None if rule is None else rule.reserve_bytes

    def sampler_profile_bytes(self, version: tuple[int, ...] | None, requests: int, vocab: int) -> float:
        """Bytes release ``version`` (None: the current one) holds at the sampler's peak of its start-up profile over
        ``requests`` requests (0 where its profile runs no sampler)."""
        rule = self.profile_sampler
        if rule is None or not rule.releases.applies(version):
            return 0.0
        return rule.peak_bytes(requests, vocab)

    def runs_timed_w4a16_moe(self, version: tuple[int, ...] | None) -> bool:
        """Whether release ``version`` (None: unstated, taken as current) runs by default the W4A16 MoE op its rows
        time (``w4a16_moe_rows_from_version``)."""
        first = self.w4a16_moe_rows_from_version
        return first is None or version is None or version >= first

    def mla_bmm_in_bf16(self, version: tuple[int, ...] | None) -> bool:
        """Whether release ``version`` (None: unstated, taken as current) runs an FP8 checkpoint's absorbed-MLA matmuls
        in bf16 (``mla_bmm_bf16_from_version``)."""
        first = self.mla_bmm_bf16_from_version
        return first is not None and (version is None or version >= first)

    def dp_attention_keeps_tp_mlp(self, version: tuple[int, ...] | None) -> bool:
        """Whether release ``version`` runs attention DP with tensor-parallel MLPs (``attention_dp_tp_mlp``)."""
        return any(r.applies(version) for r in self.attention_dp_tp_mlp)

    def mla_copies(self, version: tuple[int, ...] | None) -> MlaAbsorbedCopies | None:
        """The absorbed-MLA copies release ``version`` runs (``mla_absorbed_copies``); None where none was read."""
        return _for_release(self.mla_absorbed_copies, version)

    def overlaps_scheduling(self, version: tuple[int, ...] | None) -> bool:
        """Whether release ``version`` (None: the current one) plans each iteration one ahead."""
        return self.overlap_scheduler is not None and self.overlap_scheduler.applies(version)

    def own_allreduce_max_bytes(self, version: tuple[int, ...] | None, generation: str | None) -> float | None:
        """The largest all-reduce message (bytes) release ``version`` (None: the current one) runs on its own kernels
        on a part of ``generation``, NCCL above it; None: no limit below the engine-tagged timings."""
        rule = _for_release((r for r in self.own_allreduce_limits if generation in r.generations), version)
        return None if rule is None else rule.max_bytes

    def graph_break(self, version: tuple[int, ...] | None) -> MlaOrOther | None:
        """The time a captured decode step of release ``version`` (None: the current release) loses per layer to
        attention outside its graphs; None: the graphs hold the attention."""
        return _for_release(self.graph_breaks, version)

    def eager_host(self, version: tuple[int, ...] | None) -> MlaOrOther | None:
        """The host time per kernel of an eager step of release ``version`` (None: the current release); None: not
        measured."""
        return _for_release(self.eager_hosts, version)

    def unfused_channel_fp8_rule(self, version: tuple[int, ...] | None, vendor: str) -> UnfusedChannelFp8 | None:
        """How release ``version`` (None: the current release) runs a channel-scaled FP8 linear layer on a part of
        ``vendor`` when it does not fuse the scales into the GEMM; None where it does."""
        return _for_release((r for r in self.unfused_channel_fp8 if vendor in r.vendors), version)

    def serial_stream_chunk_s(self, version: tuple[int, ...] | None) -> float:
        """Seconds per streamed output that release ``version`` (None: the current release) spends serially with its
        steps; 0 where its streaming is pipelined or not measured."""
        rule = _for_release(self.serial_stream_costs, version)
        return 0.0 if rule is None else rule.chunk_s

    def host_step_cost(self, version: tuple[int, ...] | None) -> HostStepCost | None:
        """The host time per iteration of release ``version`` (None: the current release); None when not measured."""
        return _for_release(self.host_step_costs, version)

    @property
    def device_dependent_defaults(self) -> bool:
        """True when the default scheduler limits depend on the device and usage (a scheduler table)."""
        return self.scheduler_table is not None

    def kv_block_tokens(self, scenario_block_tokens: int) -> int:
        """KV block size the engine allocates."""
        if self.block_size_from_scenario or self.block_size_tokens is None:
            return scenario_block_tokens
        return self.block_size_tokens

    def graph_max_batch(self, memory_bytes: float, tp: int, version: tuple[int, ...] | None = None) -> int | None:
        """Largest decode batch replayed as a CUDA graph on a part of ``memory_bytes`` at tensor parallelism ``tp``
        by release ``version`` (None: the current release)."""
        rule = self.graph_rule(version)
        for below_gib, small_tp, large_tp in rule.bands if rule is not None else self.cuda_graph_bands:
            if below_gib is None or memory_bytes / GiB < below_gib:
                return small_tp if tp < 4 else large_tp
        return self.cuda_graph_max_batch

    def static_memory_fraction(
        self, memory_bytes: float, ranks: int, tp: int, version: tuple[int, ...] | None = None
    ) -> float:
        """SGLang's default --mem-fraction-static (ServerArgs._handle_gpu_memory_settings): (memory − reserved) /
        memory, reserved (MiB) = base + chunk·per_chunk_token + graph batch·per_graph_seq + ranks·per_rank, at least
        the floor on parts above floor_above_gib; rounded to 3 decimals. Release ``version`` (None: the current one)
        takes its own table by tp where mem_fraction_by_version has one."""
        table = _for_release(self.mem_fraction_by_version, version)
        if table is not None:
            return table.fraction(tp)
        rule = self.mem_fraction_rule
        if rule is None:
            raise DataError(f"engines.yaml row {self.id!r} has no mem_fraction_rule")
        mib = memory_bytes / 2**20
        chunk = self.scheduler_defaults_by_memory(memory_bytes).max_num_batched_tokens
        graph = self.graph_max_batch(memory_bytes, tp) or 0
        reserved = (
            float(rule["base_mib"])
            + max(chunk, int(rule["min_chunk_tokens"])) * float(rule["per_chunk_token_mib"])
            + graph * float(rule["per_graph_seq_mib"])
            + ranks * float(rule["per_rank_mib"])
        )
        if memory_bytes / GiB > float(rule["floor_above_gib"]):
            reserved = max(reserved, float(rule["floor_mib"]))
        return round((mib - reserved) / mib, 3)

    def kv_cache_bytes(
        self,
        *,
        memory_bytes: float,
        weights_bytes: float,
        activation_bytes: float,
        reserve_bytes: float,
        util_frac: float,
        free_frac: float | None = None,
        ranks: int = 1,
        tp: int = 1,
        version: tuple[int, ...] | None = None,
        capacity_bytes: float | None = None,
    ) -> float:
        """Memory the KV allocator takes on one accelerator (negative: nothing fits) after the weights, the
        activation peak and the runtime reserve; ``memory_bytes``: the total the runtime reports. ``free_frac``
        overrides the engine's free-memory fraction. The static-fraction allocator (SGLang) keeps activations and
        graphs in the memory its fraction leaves out, so the pool is fraction·memory − weights (``ranks`` = tp·pp,
        ``tp`` and the part's ``capacity_bytes``, default ``memory_bytes``, set that fraction)."""
        if self.kv_allocator == "static_memory_fraction":
            frac = self.static_memory_fraction(capacity_bytes or memory_bytes, ranks, tp, version)
            return frac * memory_bytes - weights_bytes
        fraction = free_frac if free_frac is not None else self.kv_cache_free_gpu_mem_frac
        if self.kv_allocator == "total_memory_fraction" or fraction is None:
            return util_frac * memory_bytes - weights_bytes - activation_bytes - reserve_bytes
        return fraction * (memory_bytes - weights_bytes - activation_bytes - reserve_bytes)

    def scheduler_defaults_by_memory(self, memory_bytes: float) -> SchedulerDefaults:
        """Defaults chosen by the part's memory alone (a ``memory_bands`` table: SGLang's chunked_prefill_size)."""
        table = self.scheduler_table
        if table is None or "memory_bands" not in table:
            raise DataError(f"engines.yaml row {self.id!r} has no scheduler_defaults.memory_bands table")
        gib = memory_bytes / GiB
        for below, tokens in table["memory_bands"]:
            if below is None or gib < float(below):
                seqs = int(table["max_num_seqs"])
                return SchedulerDefaults(
                    max_num_batched_tokens=int(tokens),
                    max_num_seqs=seqs,
                    basis=f"{self.id} default for a {gib:.0f} GiB device: chunked prefill {int(tokens)} tokens, "
                    f"{seqs} running requests",
                )
        raise DataError(f"engines.yaml row {self.id!r}: memory_bands must end with a [null, tokens] band")

    def unstated_release(self, build_text: str, multi_step: bool) -> tuple[tuple[int, ...], str] | None:
        """The release a run that states none is priced as, and why: the legacy generation's (engines.yaml
        legacy_engine) when ``build_text`` (the run's engine description) carries a build date (YYYYMMDD or
        YYYY-MM-DD) before the day the current generation became the default, or when the run uses multi-step
        scheduling (``multi_step``), which only the legacy generation runs; None otherwise."""
        table = self.legacy_engine
        if table is None:
            return None
        release = self._legacy_release(table)
        cutoff = str(table["default_from_date"]).replace("-", "")
        if multi_step:
            return release, (
                f"multi-step scheduling, which only the engine generation before {table['default_from_date']} runs"
            )
        for m in re.finditer(r"(?<!\d)(20\d\d)-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])(?!\d)", build_text):
            built = "".join(m.groups())
            if built < cutoff:
                return release, f"build dated {built}, before the default engine of {table['default_from_date']}"
        return None

    def selected_legacy_release(self, stated: tuple[int, ...] | None) -> tuple[tuple[int, ...], str]:
        """The release a run that selects the previous engine generation on release ``stated`` (vLLM ``VLLM_USE_V1=0``:
        engines.yaml legacy_engine ``stated_by``) is priced as, and why; a ValueError naming the fix when the engine
        has no such generation, or ``stated`` no longer carries it (``carried_below``)."""
        table = self.legacy_engine
        if table is None or not table.get("stated_by"):
            raise ValueError(f"engine {self.id!r} has no previous generation a run can select")
        carried = parse_version(str(table.get("carried_below") or ""))
        if stated is not None and carried is not None and stated >= carried:
            raise ValueError(
                f"{self.id} {'.'.join(map(str, stated))} no longer carries its previous generation (releases below "
                f"{table['carried_below']} do)"
            )
        release = self._legacy_release(table)
        return release, (
            f"the engine's previous generation as the run selects it ({table['stated_by']}): priced as {self.id} "
            f"{table['release']}, its last release as the default"
        )

    def _legacy_release(self, table: Mapping[str, Any]) -> tuple[int, ...]:
        release = parse_version(str(table["release"]))
        if release is None:
            raise DataError(f"engines.yaml row {self.id!r}: legacy_engine release {table['release']!r} is no release")
        return release

    def legacy_scheduler_defaults(
        self, release: tuple[int, ...], max_model_len: int, chunked_prefill: bool | None = None
    ) -> SchedulerDefaults | None:
        """The defaults of an older release (vLLM V0: vllm/engine/arg_utils.py and vllm/config.py SchedulerConfig,
        engines.yaml legacy_scheduler), or None when ``release`` is not older than the table's ``below_version``:
        max_num_seqs fixed; chunked prefill turned on by default for a context longer than
        ``long_context_above_tokens`` (``chunked_prefill``: as the run sets it instead), with a budget of
        ``chunked_budget_tokens`` per step; else whole prompts, the budget max(max_model_len, ``min_budget_tokens``)."""
        table = self.legacy_scheduler
        if table is None:
            return None
        below = parse_version(str(table["below_version"]))
        if below is None or release >= below:
            return None
        seqs = int(table["max_num_seqs"])
        long_context = max_model_len > int(table["long_context_above_tokens"])
        chunked = long_context if chunked_prefill is None else chunked_prefill
        tokens = int(table["chunked_budget_tokens"]) if chunked else max(max_model_len, int(table["min_budget_tokens"]))
        why = "chunked prefill on (context above" if chunked else "chunked prefill off (context up to"
        if chunked_prefill is not None:
            why = f"chunked prefill {'on' if chunked else 'off'} as the run sets it (the default: on above"
        return SchedulerDefaults(
            max_num_batched_tokens=tokens,
            max_num_seqs=seqs,
            basis=f"{self.id} {'.'.join(map(str, release))} (before {table['below_version']}) default: "
            f"{why} {int(table['long_context_above_tokens'])} tokens), max_num_batched_tokens {tokens}, "
            f"max_num_seqs {seqs}",
            chunked_prefill=chunked,
        )

    def scheduler_defaults(
        self,
        accelerator: AcceleratorSpec,
        usage: Usage,
        *,
        release: tuple[int, ...] | None = None,
        max_model_len: int | None = None,
        chunked_prefill: bool | None = None,
    ) -> SchedulerDefaults:
        """The engine's default token budget per step and sequence cap on ``accelerator`` in ``usage``; of release
        ``release`` (None: the current one) serving a context of ``max_model_len`` where an older release's
        defaults differ (:meth:`legacy_scheduler_defaults`)."""
        if release is not None and max_model_len is not None:
            legacy = self.legacy_scheduler_defaults(release, max_model_len, chunked_prefill)
            if legacy is not None:
                return legacy
        table = self.scheduler_table
        if table is not None and "memory_bands" in table:
            return self.scheduler_defaults_by_memory(accelerator.memory_bytes)
        if table is None:
            if self.max_num_batched_tokens is None or self.max_num_seqs is None:
                raise DataError(f"engines.yaml row {self.id!r} gives no scheduler defaults")
            return SchedulerDefaults(
                max_num_batched_tokens=self.max_num_batched_tokens,
                max_num_seqs=self.max_num_seqs,
                basis=f"{self.id} defaults",
            )
        mem_gib = accelerator.memory_bytes / GiB
        large, why = self._large_device(table, accelerator, release)
        entry = table["large_device" if large else "other_device"][usage]
        tokens = int(entry["max_num_batched_tokens"])
        seqs = min(int(entry["max_num_seqs"]), tokens)
        context = "LLM class (offline)" if usage == "offline" else "OpenAI API server"
        return SchedulerDefaults(
            max_num_batched_tokens=tokens,
            max_num_seqs=seqs,
            basis=f"{self.id} V1 default for the {context} on a {mem_gib:.0f} GiB {why} device: "
            f"max_num_batched_tokens {tokens}, max_num_seqs {seqs}",
        )

    def _large_device(
        self, table: Mapping[str, Any], accelerator: AcceleratorSpec, release: tuple[int, ...] | None
    ) -> tuple[bool, str]:
        """Whether release ``release`` (None: the current one) picks the scheduler table's large-device defaults on
        ``accelerator``, and why: by the device's name alone (an entry of ``large_device_by_version`` with
        ``names``), or by its memory less excluded names (another entry's, else the table's own)."""
        name = f"{accelerator.id} {accelerator.name}".lower()
        rule: Mapping[str, Any] = table
        min_key, excluded_key = "large_device_min_memory_gib", "large_device_excluded_names"
        for entry in table.get("large_device_by_version", []):
            if _release_range(entry).applies(release):
                rule, min_key, excluded_key = entry, "min_memory_gib", "excluded_names"
                break
        if "names" in rule:
            named = [str(n).lower() for n in rule["names"] if str(n).lower() in name]
            others = "/".join(str(n) for n in rule["names"])
            return bool(named), f"'{named[0]}'" if named else f"not {others}-named"
        bound = float(rule[min_key])
        excluded = [str(n).lower() for n in rule.get(excluded_key, []) if str(n).lower() in name]
        large = accelerator.memory_bytes / GiB >= bound and not excluded
        return large, f"≥ {bound:g} GiB" if large else f"'{excluded[0]}'" if excluded else f"< {bound:g} GiB"


def _opt_int(row: Mapping[str, Any], key: str) -> int | None:
    return int(row[key]) if row.get(key) is not None else None


def _opt_float(row: Mapping[str, Any], key: str) -> float | None:
    return float(row[key]) if row.get(key) is not None else None


def version_or_none(value: Any) -> tuple[int, ...] | None:
    """A catalog row's release bound parsed (None: no bound); a ValueError when it holds no MAJOR.MINOR number, so a
    mistyped bound is refused rather than read as none."""
    if value is None:
        return None
    parsed = parse_version(str(value))
    if parsed is None:
        raise ValueError(f"version {value!r} has no MAJOR.MINOR number")
    return parsed


_Entry = TypeVar("_Entry")


def _per_release(
    row: Mapping[str, Any], key: str, make: Callable[[Mapping[str, Any], ReleaseRange], _Entry]
) -> tuple[_Entry, ...]:
    """The row's ``key`` list (engines.yaml ``*_by_version`` and the like), each entry built by ``make`` from the entry
    and its release range."""
    return tuple(make(e, _release_range(e)) for e in row.get(key) or ())


def _release_range(entry: Mapping[str, Any]) -> ReleaseRange:
    return ReleaseRange(
        from_version=version_or_none(entry.get("from_version")),
        below_version=version_or_none(entry.get("below_version")),
        when_unstated=bool(entry.get("when_unstated", True)),
        source=str(entry["source"]["url"]),
    )


def _mla_copies(e: Mapping[str, Any], releases: ReleaseRange) -> MlaAbsorbedCopies:
    return MlaAbsorbedCopies(
        releases=releases,
        kernels=int(e["kernels"]),
        values_per_token=int(e["values_per_token"]),
        values_per_token_per_head=int(e["values_per_token_per_head"]),
    )


def _windowed_kv(e: Mapping[str, Any], releases: ReleaseRange) -> WindowedKvMemory:
    ratio = e.get("swa_pool_ratio")
    return WindowedKvMemory(
        releases=releases,
        swa_pool_ratio=float(ratio) if ratio is not None else None,
        model_names=tuple(str(n).lower() for n in e.get("model_names") or ()),
        generations=tuple(str(g) for g in e.get("generations") or ()),
    )


def _single_gpu_reserve(e: Mapping[str, Any], releases: ReleaseRange) -> SingleGpuReserve:
    return SingleGpuReserve(releases=releases, reserve_bytes=float(e["reserve_gib"]) * GiB)


def _profile_sampler(row: Mapping[str, Any]) -> ProfileSampler | None:
    entry = row.get("profile_sampler")
    if not entry:
        return None
    return ProfileSampler(releases=_release_range(entry), logit_bytes=float(entry["logit_bytes"]))


def _mxfp4_padding(e: Mapping[str, Any], releases: ReleaseRange) -> Mxfp4Padding:
    return Mxfp4Padding(
        releases=releases,
        generations=tuple(str(g) for g in e["generations"]),
        hidden_multiple=int(e["hidden_multiple"]),
        expert_ffn_multiple=int(e["expert_ffn_multiple"]),
    )


def _host_cost(e: Mapping[str, Any], releases: ReleaseRange) -> HostStepCost:
    return HostStepCost(
        step_s=float(e["host_step_ms"]) / 1e3,
        overlapped=bool(e["overlapped"]),
        releases=releases,
        per_request_s=float(e.get("host_step_us_per_request", 0.0)) / 1e6,
    )


def _serial_stream(e: Mapping[str, Any], releases: ReleaseRange) -> SerialStreamCost:
    return SerialStreamCost(chunk_s=float(e["chunk_us"]) / 1e6, releases=releases)


def _unfused_channel_fp8(e: Mapping[str, Any], releases: ReleaseRange) -> UnfusedChannelFp8:
    return UnfusedChannelFp8(
        time_x=float(e["time_x"]),
        extra_kernels=int(e["extra_kernels"]),
        vendors=tuple(str(v) for v in e["vendors"]),
        releases=releases,
    )


def _mla_or_other(per: str) -> Callable[[Mapping[str, Any], ReleaseRange], MlaOrOther]:
    """The parser of a ``*_by_version`` entry that gives ``mla_<per>_us`` and ``other_<per>_us``."""

    def make(e: Mapping[str, Any], releases: ReleaseRange) -> MlaOrOther:
        return MlaOrOther(
            mla_s=float(e[f"mla_{per}_us"]) / 1e6, other_s=float(e[f"other_{per}_us"]) / 1e6, releases=releases
        )

    return make


def _graph_rule(e: Mapping[str, Any], releases: ReleaseRange) -> CudaGraphRule:
    return CudaGraphRule(
        bands=tuple((float(b) if b is not None else None, int(lo), int(hi)) for b, lo, hi in e["cuda_graph_bands"]),
        attention_dp_global=bool(e["attention_dp_global"]),
        releases=releases,
        python_eager_launch=bool(e["python_eager_launch"]) if "python_eager_launch" in e else None,
    )


def _own_allreduce_limit(e: Mapping[str, Any], releases: ReleaseRange) -> OwnAllReduceLimit:
    return OwnAllReduceLimit(
        max_bytes=float(e["max_mib"]) * 2**20, generations=tuple(str(g) for g in e["generations"]), releases=releases
    )


def _admission_reserve(e: Mapping[str, Any], releases: ReleaseRange) -> AdmissionReserve:
    return AdmissionReserve(
        init_ratio=float(e["init_ratio"]),
        floor_ratio=float(e["floor_ratio"]),
        decay_per_step=float(e["decay_per_step"]),
        clip_tokens=int(e["clip_tokens"]),
        retract_decode_steps=int(e["retract_decode_steps"]),
        dp_attention_ratio=float(e["dp_attention_ratio"]),
        releases=releases,
    )


def _mla_prefill_rule(e: Mapping[str, Any], releases: ReleaseRange) -> MlaAbsorbedPrefill:
    return MlaAbsorbedPrefill(
        prefix_below_tokens=int(e["prefix_below_tokens"]), fresh_prompts=bool(e["fresh_prompts"]), releases=releases
    )


def _mem_fraction(e: Mapping[str, Any], releases: ReleaseRange) -> MemFractionByRanks:
    return MemFractionByRanks(bands=tuple((int(t), float(f)) for t, f in e["by_tp"]), releases=releases)


def _kv_policy(row: Mapping[str, Any], key: str) -> str | None:
    """The row's ``key`` as a scheduler kv_reservation (full | incremental), or None when absent."""
    value = row.get(key)
    if value is None:
        return None
    if value not in ("full", "incremental"):
        raise ValueError(f"{key} {value!r}")
    return str(value)


def _dispatch(row: Mapping[str, Any]) -> Literal["balanced", "round_robin"]:
    """The row's attention_dp_dispatch (balanced when absent)."""
    value = row.get("attention_dp_dispatch", "balanced")
    if value == "balanced":
        return "balanced"
    if value == "round_robin":
        return "round_robin"
    raise ValueError(f"attention_dp_dispatch {value!r}")


def profile(row: Mapping[str, Any]) -> EngineProfile:
    """An engines.yaml row as a profile (a malformed shipped row is a data bug)."""
    try:
        allocator = str(row["kv_allocator"])
        if allocator not in ("total_memory_fraction", "free_memory_fraction", "static_memory_fraction"):
            raise ValueError(f"kv_allocator {allocator!r}")
        reservation = str(row.get("kv_reservation", "average"))
        if reservation not in ("full", "average"):
            raise ValueError(f"kv_reservation {reservation!r}")
        return EngineProfile(
            id=str(row["id"]),
            kv_allocator=allocator,  # type: ignore[arg-type]
            block_size_tokens=_opt_int(row, "block_size_tokens"),
            block_size_from_scenario=bool(row.get("block_size_from_scenario", False)),
            gpu_memory_utilization_frac=_opt_float(row, "gpu_memory_utilization_frac"),
            kv_cache_free_gpu_mem_frac=_opt_float(row, "kv_cache_free_gpu_mem_fraction"),
            reserves_full_context=reservation == "full",
            chunked_prefill=bool(row["chunked_prefill"]),
            attention_dp_gather_quantised=bool(row["attention_dp_gather_quantised"]),
            max_num_seqs=_opt_int(row, "max_num_seqs"),
            max_num_batched_tokens=_opt_int(row, "max_num_batched_tokens"),
            attention_dp_dispatch=_dispatch(row),
            pipeline_micro_batches=bool(row.get("pipeline_micro_batches", False)),
            cuda_graph_max_batch=_opt_int(row, "cuda_graph_max_batch"),
            python_eager_launch=bool(row.get("python_eager_launch", False)),
            sampling_method=str(row["sampling_method"]) if row.get("sampling_method") else None,
            cuda_graph_bands=tuple(
                (float(b) if b is not None else None, int(lo), int(hi)) for b, lo, hi in row.get("cuda_graph_bands", [])
            ),
            mem_fraction_rule=row.get("mem_fraction_rule"),
            mem_fraction_by_version=_per_release(row, "mem_fraction_by_version", _mem_fraction),
            collective_rows_engine=str(row["collective_rows_engine"]) if row.get("collective_rows_engine") else None,
            w4a16_moe_rows_engine=(str(row["w4a16_moe_rows_engine"]) if row.get("w4a16_moe_rows_engine") else None),
            w4a16_moe_rows_from_version=(
                parse_version(str(row["w4a16_moe_rows_from_version"]))
                if row.get("w4a16_moe_rows_from_version")
                else None
            ),
            mla_bmm_bf16_from_version=(
                parse_version(str(row["mla_bmm_bf16_from_version"])) if row.get("mla_bmm_bf16_from_version") else None
            ),
            scheduler_table=row.get("scheduler_defaults"),
            bench_tool=str(row["bench_tool"]) if row.get("bench_tool") else None,
            bench_tuning=row.get("bench_tuning"),
            request_overhead_s=(_opt_float(row, "request_overhead_ms") or 0.0) / 1e3,
            stream_chunk_s=(_opt_float(row, "stream_chunk_us") or 0.0) / 1e6,
            host_step_costs=_per_release(row, "host_step_by_version", _host_cost),
            serial_stream_costs=_per_release(row, "serial_stream_by_version", _serial_stream),
            unfused_channel_fp8=_per_release(row, "unfused_channel_fp8_by_version", _unfused_channel_fp8),
            eager_hosts=_per_release(row, "eager_host_by_version", _mla_or_other("kernel")),
            graph_breaks=_per_release(row, "graph_break_by_version", _mla_or_other("layer")),
            legacy_scheduler=row.get("legacy_scheduler"),
            overlap_scheduler=_release_range(row["overlap_scheduler"]) if row.get("overlap_scheduler") else None,
            multi_step_flag=str(row["multi_step_flag"]) if row.get("multi_step_flag") else None,
            context_length_flag=str(row["context_length_flag"]) if row.get("context_length_flag") else None,
            chunked_prefill_flag=str(row["chunked_prefill_flag"]) if row.get("chunked_prefill_flag") else None,
            cuda_graphs_off_flag=str(row["cuda_graphs_off_flag"]) if row.get("cuda_graphs_off_flag") else None,
            overlap_flags=(str(row["overlap_flags"]["enable"]), str(row["overlap_flags"]["disable"]))
            if row.get("overlap_flags")
            else None,
            legacy_engine=row.get("legacy_engine"),
            cuda_graph_by_version=_per_release(row, "cuda_graph_by_version", _graph_rule),
            own_allreduce_limits=_per_release(row, "own_allreduce_by_version", _own_allreduce_limit),
            whole_prompts_with_decodes=bool(row.get("whole_prompts_with_decodes", False)),
            prefill_steps_alone=_release_range(row["prefill_steps_alone"]) if row.get("prefill_steps_alone") else None,
            mla_prefill_pads_v=_release_range(row["mla_prefill_pads_v"]) if row.get("mla_prefill_pads_v") else None,
            windowed_kv_memory=_per_release(row, "windowed_kv_memory", _windowed_kv),
            mla_absorbed_copies=_per_release(row, "mla_absorbed_copies", _mla_copies),
            attention_dp_tp_mlp=_per_release(row, "attention_dp_tp_mlp", lambda _e, releases: releases),
            mxfp4_moe_padding=_per_release(row, "mxfp4_moe_padding", _mxfp4_padding),
            single_gpu_reserve=_per_release(row, "single_gpu_reserve", _single_gpu_reserve),
            profile_sampler=_profile_sampler(row),
            fused_moe_chunk_tokens=_opt_int(row, "fused_moe_chunk_tokens"),
            admission_reserves=_per_release(row, "admission_reserve_by_version", _admission_reserve),
            mla_absorbed_prefill=_per_release(row, "mla_absorbed_prefill", _mla_prefill_rule),
            mlperf_kv_reservation=_kv_policy(row, "mlperf_kv_reservation"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"catalog data engines.yaml row {row.get('id', '?')}: {exc}") from exc


def profiles(rows: tuple[dict[str, Any], ...]) -> dict[str, EngineProfile]:
    """Every engines.yaml row as an :class:`EngineProfile`, by id (a :class:`DataError` naming the row when one is
    malformed)."""
    return {str(r["id"]): profile(r) for r in rows}
