"""Local attention layers: the keys a step's queries attend when some layers see only part of the context.

Two kinds. A sliding-window layer's query attends the last W positions (Beltagy et al. 2020, Longformer §3.1; Jiang
et al. 2023, Mistral 7B §2; gpt-oss's alternate layers). A chunked layer's query attends the positions of its own
C-token chunk up to itself, (i mod C) + 1 keys at position i (Llama 4's RoPE layers, ``attention_chunk_size`` 8,192:
HF Llama4TextConfig lays out chunked_attention on the layers that use RoPE, full attention on every fourth). Their
score and value FLOP and their KV-cache reads stop growing with the context. The engines' attention kernels take the
window or chunk as an argument (FlashAttention's ``window_size``, FlashInfer's ``window_left``, vLLM's local-attention
metadata) whether or not their KV cache frees the positions they no longer read, so compute and reads are local in
every engine; the cache memory of a sliding window is the engine's choice (``specs/engine.py`` ``WindowedKvMemory``),
a chunked layer's is priced as held whole.

A step is described by aggregates (``analytic/step_time.StepBatch``), not per sequence:

* windowed layer: min(Σ keys, W · queries), exact when every query's context is at least W (or every one below it)
  and an upper bound otherwise, since Σ min(c_i, W) ≤ min(Σ c_i, W · n);
* chunked layer, prompt chunks: the step's chunks read as n equal chunks of c tokens after the mean cached prefix p
  (step_time.cached_prefix_tokens), n · (F(p + c) − F(p)) with F(x) = ⌊x/C⌋·C(C + 1)/2 + r(r + 1)/2 (r = x mod C) the
  pairs of the first x positions; exact for one chunk or equal chunks;
* chunked layer, decodes: each sequence at the mean context c̄ reads c̄ keys while c̄ ≤ C, else C/2, the mean of
  (c mod C) over a phase spread evenly across the chunk (decoding sequences' contexts differ by more than C once
  they pass it in a loaded replica; at one sequence it is the expectation over its position)."""

from __future__ import annotations

import math

from aiinfra.analytic.step_time import StepBatch, cached_prefix_tokens
from aiinfra.specs.model import ModelArch


def _chunk_pairs_upto(positions: float, chunk: int) -> float:
    """F(x): query·key pairs of the first x positions under chunked causal attention (chunk C)."""
    whole = math.floor(positions / chunk)
    rest = positions - whole * chunk
    return whole * chunk * (chunk + 1) / 2.0 + rest * (rest + 1) / 2.0


def _local_mix(arch: ModelArch, full: float, windowed: float, chunked: float) -> float:
    """The per-layer mean of a quantity that is ``full`` on full-attention layers, ``windowed`` and ``chunked`` on
    the local ones."""
    fw, fc = arch.windowed_layer_frac, arch.chunked_layer_frac
    return (1.0 - fw - fc) * full + fw * windowed + fc * chunked


def prefill_layer_pairs(arch: ModelArch, work: StepBatch) -> float:
    """Causal query·key pairs of a step's prompt chunks per layer, averaged over the layers."""
    pairs = work.prefill_attention_pairs
    if pairs <= 0.0 or not arch.has_local_attention:
        return pairs
    windowed = chunked = pairs
    if arch.sliding_window_tokens is not None:
        windowed = min(pairs, arch.sliding_window_tokens * work.prefill_tokens)
    if arch.attention_chunk_tokens is not None:
        n = work.prefill_requests
        c = work.prefill_tokens / n
        prefix = cached_prefix_tokens(work) / n
        size = arch.attention_chunk_tokens
        chunked = n * (_chunk_pairs_upto(prefix + c, size) - _chunk_pairs_upto(prefix, size))
    return _local_mix(arch, pairs, windowed, chunked)


def decode_key_groups(arch: ModelArch, keys: float, seqs: float, queries_per_seq: int = 1) -> list[tuple[float, float]]:
    """(share of the layers, KV entries or query·key pairs per layer) of a step's decoding sequences for each kind of
    layer the model has: ``keys`` on the full layers; at most W per query on the windowed ones; on the chunked ones
    those of a query at the mean context (module docstring). One group, (1, ``keys``), for a model without local
    layers. Kernels are timed per call, so a call's size is its group's, not the mean over the layers."""
    window, size = arch.sliding_window_tokens, arch.attention_chunk_tokens
    queries = seqs * queries_per_seq
    if keys <= 0.0 or queries <= 0 or not arch.has_local_attention:
        return [(1.0, keys)]
    fw, fc = arch.windowed_layer_frac, arch.chunked_layer_frac
    groups = [(1.0 - fw - fc, keys)]
    if window is not None:
        groups.append((fw, min(keys, window * queries)))
    if size is not None:
        groups.append((fc, queries * size / 2.0 if keys / queries > size else keys))
    return [(share, k) for share, k in groups if share > 0.0]


def decode_layer_keys(arch: ModelArch, keys: float, seqs: float, queries_per_seq: int = 1) -> float:
    """KV entries (``queries_per_seq`` 1) or query·key pairs of a step's decoding sequences per layer, averaged over
    the layers (:func:`decode_key_groups`)."""
    if not arch.has_local_attention:
        return keys  # every layer full: the simulator's common case, kept cheap
    return sum(share * k for share, k in decode_key_groups(arch, keys, seqs, queries_per_seq))


def causal_mean_keys(arch: ModelArch, context_tokens: float, causal: bool) -> float:
    """Keys per query averaged over the layers for a sequence of L = ``context_tokens``: L (``causal``: L/2, the
    convention of model_figures.attention_flop_per_token_forward) on a full layer; on a windowed one min(L, W), or
    causally (query i attends min(i, W) keys) L/2 up to W and W − W²/(2L) beyond; on a chunked one the mean over the
    chunks, (⌊L/C⌋·C² + r²)/L with r = L mod C (causally half of it)."""
    full = context_tokens / 2.0 if causal else context_tokens
    window, size = arch.sliding_window_tokens, arch.attention_chunk_tokens
    if not arch.has_local_attention or context_tokens <= 0.0:
        return full
    windowed = chunked = full
    if window is not None:
        if not causal:
            windowed = min(context_tokens, float(window))
        elif context_tokens > window:
            windowed = window - window * window / (2.0 * context_tokens)
    if size is not None:
        whole = math.floor(context_tokens / size)
        rest = context_tokens - whole * size
        chunked = (whole * size * size + rest * rest) / context_tokens
        if causal:
            chunked /= 2.0
    return _local_mix(arch, full, windowed, chunked)


def held_kv_tokens(arch: ModelArch, context_tokens: float, block_tokens: int) -> float:
    """KV-cache slots one sequence of ``context_tokens`` holds in one pool shared by every layer, counted in tokens of
    every layer (the unit of the replica's KV capacity), where the engine frees what falls out of the window (vLLM's
    hybrid KV cache manager): the context on the other layers, W plus one partly filled block on the windowed ones."""
    window = arch.sliding_window_tokens
    if window is None:
        return context_tokens
    frac = arch.windowed_layer_frac
    return (1.0 - frac) * context_tokens + frac * min(context_tokens, float(window + block_tokens))


def context_per_kv_slot(
    arch: ModelArch, context_tokens: float, block_tokens: int, swa_pool_ratio: float | None
) -> float:
    """Tokens of context one KV slot (one token's KV on every layer) serves for sequences of ``context_tokens``, where
    the engine frees the windowed layers' out-of-window blocks.

    ``swa_pool_ratio`` None: one pool shared by both kinds of layer (vLLM's hybrid KV cache manager), so a sequence
    takes :func:`held_kv_tokens` slots. A ratio r: SGLang's two pools split once at start-up, the windowed layers'
    holding r tokens for each token of the full layers' (``swa_full_tokens_ratio``); with n_f full and n_w windowed
    layers of L the full pool holds L / (n_f + r·n_w) tokens per slot and the windowed pool r times that, and a
    sequence needs its context in the first and at most W plus a block in the second: the fuller pool bounds it."""
    window = arch.sliding_window_tokens
    if window is None or context_tokens <= 0.0:
        return 1.0
    if swa_pool_ratio is None:
        return context_tokens / held_kv_tokens(arch, context_tokens, block_tokens)
    layers = arch.num_layers
    windowed = arch.sliding_window_layers
    full = layers - windowed
    windowed_need = min(context_tokens, float(window + block_tokens))
    per_slot = layers / (full + swa_pool_ratio * windowed)
    swa_bound = swa_pool_ratio * per_slot * context_tokens / windowed_need
    return swa_bound if full == 0 else min(per_slot, swa_bound)
