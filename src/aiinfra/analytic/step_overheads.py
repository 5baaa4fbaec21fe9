"""Fixed costs of an engine iteration beyond its kernels' GPU time: launching the kernels, and picking the tokens.

The kernel times of analytic/inference.py are GPU times measured with the kernels replayed back to back (their fixed
per-kernel cost, t0, included). An engine adds, per iteration:

* launch: a decode step the engine captured as a CUDA graph costs one graph launch on the host (``per_graph_s``); a
  step it runs eagerly issues every kernel from Python, and the GPU cannot run ahead of the host, so the step lasts at
  least ``kernels × per_kernel_s`` of eager issue (the GPU time when longer). Which steps are captured is the engine
  profile's ``cuda_graph_max_batch`` (decode-only steps up to that many sequences; steps with prompt tokens run eagerly:
  vLLM's graphs stop at the same size), or its release's rule (``cuda_graph_by_version``), unless the run turns the
  graphs off (vLLM --enforce-eager: every step eager); the floor applies to engines that issue from Python
  (``python_eager_launch``, or the release rule's: TensorRT-LLM's PyTorch executor from 1.0), not to a C++ runtime.
  A release whose decode graphs leave the attention outside (vLLM V1's piecewise graphs, its default before 0.11)
  loses its measured time per layer on every captured step besides (``graph_break_by_version``);
* sampling: the sampler the engine runs after the forward pass, outside its graphs, over the whole vocabulary for each
  sequence that produces a token; the measured time at the step's batch (interpolated; below the smallest batch
  measured its time; above the largest, the last measured segment continued, as the sampler's kernels read and
  write batch × vocabulary logits once the GPU is full: a 1,000-sequence burst samples 4× the rows of the largest
  batch measured, 256), its batch-dependent part scaled by vocabulary / the measured vocabulary (the fixed part is
  launches).

Behind an API server (requests that stream their tokens), the server's process turns each sequence's new token into
one streamed chunk (output processing, incremental detokenisation, the chunk's JSON, the HTTP write). vLLM V1 and
SGLang run that process beside the engine's, pipelined with it, so it does not lengthen the engine's step, but the
tokens of a step reach the clients no faster than ``chunks × stream_chunk_s`` (the engine profile's measured cost):
the step the clients see lasts ``max(engine step, chunks × stream_chunk_s)`` (:func:`streamed_step_s`), which binds at
hundreds of sequences in flight. Where a release handles each output in the engine's own process between its steps
(vLLM before 0.6.2: the engine loop and the requests' output streams shared one asyncio event loop), that time is
serial with the steps instead: ``chunks × serial cost`` is added to the step (:func:`serial_stream_s`).

The engine's own host work per iteration (scheduling, input preparation, output processing) is priced where a
release's cost was measured (the engine profile's ``host_step_by_version``, :func:`with_host_step`): serial with the
GPU's step where the engine does it between steps (vLLM V0, V1 before async scheduling became its default, SGLang
before its overlap scheduler), so
the step lasts GPU + host; under an overlap scheduler that prepares step n + 1 while the GPU runs step n (vLLM V1's
async scheduling), max(GPU, host). The cost is a fixed part per iteration plus, where the source gives its growth
with the batch (vLLM V1), a part per scheduled request (decoding sequences and prompts of the iteration, per engine
core: under attention DP each rank's); releases without a measurement (SGLang from 0.4, TensorRT-LLM) get none.

The figures are the project's own microbenchmarks (catalog/data/kernel_overheads_<part>.yaml: launch costs of eager
PyTorch ops and of graph replay, samplers at batch 1–256). A part without its own rows borrows those of a part of its
vendor (the host-side costs are the CUDA stack's, not the GPU's); a part of another vendor gets none (no term), as
does a step priced with no engine.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from aiinfra.analytic.step_time import StepBatch
from aiinfra.specs.engine import parse_version
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.specs.tables import DomainTables

ELEMENTWISE_KERNELS_PER_LAYER = 6
"""Non-GEMM kernels of a decoder layer, from Vidur's per-layer op list (Agrawal et al. MLSys 2024,
vidur/profiling: input_layernorm, post_attention_layernorm, attn_rope, attn_kv_cache_save, mlp_act, add):
each reads and writes the step's T·h activations and pays the measured per-kernel latency t0."""


@dataclass(frozen=True, slots=True)
class KernelOverheads:
    """Measured fixed costs of one part (kernel_overheads_<part>.yaml)."""

    eager_launch_s_per_kernel: float
    graph_launch_s: float
    sampling_points: dict[str, tuple[tuple[int, ...], tuple[float, ...]]]
    """Per sampling method: (batch sizes, seconds)."""
    sampling_vocab: int
    source: str
    """Ids of the rows (prefixed 'borrowed:' when another part's)."""


@dataclass
class _Memo:
    """The kernel_overheads_<part>.yaml rows of one catalog's tables and the figures built from them per part."""

    rows: tuple[dict[str, Any], ...] | None = None
    by_part: dict[str, KernelOverheads | None] = field(default_factory=dict)


def _rows(tables: DomainTables) -> tuple[dict[str, Any], ...]:
    memo = tables.cached(_Memo) or tables.keep(_Memo())
    if memo.rows is None:
        memo.rows = tuple(r for n in tables.kernel_overhead_files() for r in tables.file_rows(n))
    return memo.rows


def overheads_for(acc: AcceleratorSpec, tables: DomainTables) -> KernelOverheads | None:
    """The part's measured fixed costs, or a same-vendor part's (borrowed); None when neither exists."""
    memo = (tables.cached(_Memo) or tables.keep(_Memo())).by_part
    if acc.id not in memo:
        memo[acc.id] = _build(acc, tables)
    return memo[acc.id]


def _build(acc: AcceleratorSpec, tables: DomainTables) -> KernelOverheads | None:
    rows = _rows(tables)
    own = [r for r in rows if acc.id in r.get("accelerators", [])]
    borrowed = False
    if not own:
        donors = sorted({a for r in rows for a in r.get("accelerators", [])})
        for donor in donors:
            if tables.accelerators()[donor].vendor == acc.vendor:
                own = [r for r in rows if donor in r.get("accelerators", [])]
                borrowed = True
                break
    eager = [r for r in own if r.get("kind") == "launch" and "per_graph_s" not in r]
    graph = [r for r in own if r.get("kind") == "launch" and "per_graph_s" in r]
    samplers = [r for r in own if r.get("kind") == "sampling"]
    if not eager or not graph or not samplers:
        return None
    points: dict[str, tuple[tuple[int, ...], tuple[float, ...]]] = {}
    for r in samplers:
        pts = sorted((int(b), float(t)) for b, t in r["points_batch_s"])
        points[str(r["method"])] = (tuple(b for b, _ in pts), tuple(t for _, t in pts))
    ids = ", ".join(str(r["id"]) for r in (eager[0], graph[0], *samplers))
    return KernelOverheads(
        eager_launch_s_per_kernel=float(eager[0]["per_kernel_s"]),
        graph_launch_s=float(graph[0]["per_graph_s"]),
        sampling_points=points,
        sampling_vocab=int(samplers[0]["vocab"]),
        source=("borrowed:" if borrowed else "") + ids,
    )


def sampling_s(ov: KernelOverheads, method: str, seqs: int, vocab: int) -> float:
    """Time to pick the next token of ``seqs`` sequences over ``vocab`` logits with ``method`` (module docstring)."""
    if seqs <= 0 or method not in ov.sampling_points:
        return 0.0
    batches, times = ov.sampling_points[method]
    if seqs <= batches[0] or len(batches) == 1:
        t = times[0] if seqs <= batches[0] else times[-1]
    else:
        # between two measured batches: linear; beyond the largest: the last segment continued (module docstring)
        i = min(bisect_left(batches, seqs), len(batches) - 1)
        b0, b1, t0, t1 = batches[i - 1], batches[i], times[i - 1], times[i]
        t = t0 + (t1 - t0) * (seqs - b0) / (b1 - b0)
    return times[0] + (t - times[0]) * vocab / ov.sampling_vocab


def kernels_per_step(layers: float, tp: int, moe_layers: float) -> float:
    """Kernels one iteration launches on a replica: per decoder layer the qkv and output projections, the two MLP
    GEMMs, the attention kernel and the element-wise kernels (ELEMENTWISE_KERNELS_PER_LAYER, also priced by
    analytic/inference.py), two all-reduces under tensor parallelism, and per MoE layer the router and two grouped
    GEMMs; plus the output head."""
    per_layer = 2 + 2 + 1 + ELEMENTWISE_KERNELS_PER_LAYER + (2 if tp > 1 else 0)
    return layers * per_layer + 3 * moe_layers + 1


def engine_overheads(acc: AcceleratorSpec, engine: str, tables: DomainTables) -> KernelOverheads | None:
    """The launch and sampling costs an iteration of ``engine`` on ``acc`` pays (:func:`with_overheads`): the part's
    (or one of its vendor's) measured ones where the engine profile names its sampler; None: none are priced."""
    return overheads_for(acc, tables) if tables.engine(engine).sampling_method is not None else None


def with_overheads(
    gpu_s: float,
    batch: StepBatch,
    acc: AcceleratorSpec,
    engine: str,
    *,
    kernels: float,
    vocab: int,
    tp: int = 1,
    share: int = 1,
    tables: DomainTables,
    engine_version: str | None = None,
    whole: StepBatch | None = None,
    eager_host_s: float = 0.0,
    graph_break_s: float = 0.0,
    cuda_graphs: bool = True,
) -> float:
    """The iteration time with the engine's launch and sampling costs on top of its kernels' GPU time ``gpu_s``;
    ``batch`` / ``share`` is what one rank captures and samples (attention DP: each rank its own sequences);
    ``tables``: the catalog's (the cluster's) engine profiles and kernel overheads. ``engine_version``: the release
    (None: the current one); ``whole``: under attention DP, the step summed over every rank, which a release whose
    graph rule is global (SGLang 0.4.5: ``CudaGraphRunner.can_run`` compares the ranks' summed tokens with
    ``cuda_graph_max_bs``, and the scheduler replays graphs only when every rank decodes) captures as one.
    ``eager_host_s``: the release's measured host time of the step's kernels when it runs eagerly (the engine
    profile's ``eager_host``; 0: none measured), a floor beside the generic per-kernel one. ``graph_break_s``: the time
    a captured step loses to the release's graph breaks (the engine profile's ``graph_break`` over the step's layers:
    vLLM V1's piecewise graphs before 0.11; 0: its graphs hold the attention). ``cuda_graphs``: False when the run
    turns the engine's graphs off (vLLM --enforce-eager, SGLang --disable-cuda-graph): every step is issued eagerly."""
    prof = tables.engine(engine)
    ov = engine_overheads(acc, engine, tables)
    if ov is None or prof.sampling_method is None:  # the second: a None ov already says so (for the type checker)
        return gpu_s
    version = parse_version(engine_version) if engine_version else None
    graph_max = prof.graph_max_batch(acc.memory_bytes, tp, version)
    seqs = -(-batch.decode_seqs // share)
    rule = prof.graph_rule(version)
    if not cuda_graphs:
        captured = False
    elif whole is not None and rule is not None and rule.attention_dp_global:
        captured = graph_max is not None and whole.prefill_tokens == 0 and 0 < whole.decode_seqs <= graph_max
    else:
        captured = graph_max is not None and batch.prefill_tokens == 0 and 0 < seqs <= graph_max
    release_says = None if rule is None else rule.python_eager_launch
    eager_from_python = prof.python_eager_launch if release_says is None else release_says
    if captured:
        t = gpu_s + ov.graph_launch_s + graph_break_s
    elif eager_from_python:
        t = max(gpu_s, kernels * ov.eager_launch_s_per_kernel, eager_host_s)
    else:
        t = gpu_s
    return t + sampling_s(ov, prof.sampling_method, seqs + -(-batch.prefill_requests // share), vocab)


def streamed_chunks(batch: StepBatch) -> int:
    """Chunks a step streams: one per decoding sequence (its new token, or its accepted speculative tokens together)
    and one per request prefilling this step (counted as emitting its first token; chunked prompts overcount)."""
    return batch.decode_seqs + batch.prefill_requests


def streamed_step_s(step_s: float, batch: StepBatch, engine: str, tables: DomainTables) -> float:
    """The step as the streaming clients see it: the engine's ``step_s``, or the API server's time to stream the
    step's chunks where that is longer (module docstring)."""
    per_chunk_s = tables.engine(engine).stream_chunk_s
    return max(step_s, streamed_chunks(batch) * per_chunk_s) if per_chunk_s > 0.0 else step_s


def serial_stream_s(
    batch: StepBatch, engine: str, engine_version: str | None, tables: DomainTables, steps_per_call: int = 1
) -> float:
    """Engine-process time a streamed step of ``batch`` spends on its outputs between the GPU's steps, for releases
    that do it serially (the engine profile's ``serial_stream_costs``; 0 otherwise): one output per streamed chunk
    (:func:`streamed_chunks`), handed over once per scheduler call under multi-step scheduling (vLLM V0
    --num-scheduler-steps streams after the call's last step)."""
    version = parse_version(engine_version) if engine_version else None
    per_chunk_s = tables.engine(engine).serial_stream_chunk_s(version)
    return streamed_chunks(batch) * per_chunk_s / max(steps_per_call, 1)


def host_step_s(
    engine: str,
    engine_version: str | None,
    tables: DomainTables,
    requests: int = 0,
    overlapped: bool | None = None,
) -> tuple[float, bool]:
    """(host seconds per iteration, overlapped with the GPU's step) of release ``engine_version`` of ``engine``
    (None or a text without a release number: the current release) for an iteration that schedules ``requests``
    requests (decoding sequences and prompts; the per-request part of the release's cost); (0, False) where none is
    measured. ``overlapped``: the overlap scheduler as the run sets it (None: the release's default). ``tables``: the
    catalog's (the cluster's) engine profiles."""
    version = parse_version(engine_version) if engine_version else None
    cost = tables.engine(engine).host_step_cost(version)
    if cost is None:
        return 0.0, False
    return cost.seconds(requests), cost.overlapped if overlapped is None else overlapped


def with_host_step(
    step_s: float,
    engine: str,
    engine_version: str | None,
    tables: DomainTables,
    steps_per_call: int = 1,
    requests: int = 0,
    overlapped: bool | None = None,
) -> float:
    """The iteration with the engine's host work per step (module docstring) for ``requests`` scheduled requests:
    ``step_s`` + host when the host work runs between GPU steps, max(``step_s``, host) when an overlap scheduler
    hides it behind the GPU's step (``overlapped``: as the run sets it, None: the release's default); under
    multi-step scheduling (``steps_per_call`` decode iterations per scheduler call, vLLM V0 --num-scheduler-steps)
    the host work is paid once per call (vllm#6854: "the 4ms only needs to be incurred once for every 8 decode
    steps")."""
    host_s, hidden = host_step_s(engine, engine_version, tables, requests, overlapped)
    return step_with_host_s(step_s, host_s / max(steps_per_call, 1), hidden)


def step_with_host_s(gpu_step_s: float, host_s: float, overlapped: bool) -> float:
    """A step of ``gpu_step_s`` on the GPU with ``host_s`` of host work: hidden behind it when ``overlapped`` (the
    host prepares step n + 1 while the GPU runs step n: max), else between the steps (sum)."""
    return max(gpu_step_s, host_s) if overlapped else gpu_step_s + host_s
