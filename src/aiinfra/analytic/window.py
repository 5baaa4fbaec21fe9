"""Sliding-window attention: the keys a step's queries attend when some layers see only the last W positions.

A windowed layer's query attends at most W keys (Beltagy et al. 2020, Longformer §3.1; Jiang et al. 2023, Mistral 7B
§2), so its score and value FLOP and its KV-cache read stop growing with the context once the context passes W. The
engines' attention kernels take the window as an argument (FlashAttention's ``window_size``, FlashInfer's
``window_left``) whether or not their KV cache frees the positions outside it, so compute and reads are windowed in
every engine; the cache memory is the engine's choice (``specs/engine.py`` ``WindowedKvMemory``).

A step is described by aggregates (``analytic/step_time.StepBatch``), not per sequence, so a windowed layer's keys are
taken as min(Σ keys, W · queries): exact when every query's context is at least W (or every one below it) and an
upper bound otherwise, since Σ min(c_i, W) ≤ min(Σ c_i, W · n)."""

from __future__ import annotations

from aiinfra.specs.model import ModelArch


def layer_mean_keys(arch: ModelArch, keys: float, queries: float) -> float:
    """Query·key pairs (or KV entries read) per layer, averaged over the layers: ``keys`` on a full-attention layer,
    at most W per query on a windowed one."""
    window = arch.sliding_window_tokens
    if window is None or keys <= 0.0:
        return keys
    frac = arch.windowed_layer_frac
    return (1.0 - frac) * keys + frac * min(keys, window * queries)


def causal_mean_keys(arch: ModelArch, context_tokens: float, causal: bool) -> float:
    """Keys per query averaged over the layers for a sequence of ``context_tokens``: the context (``causal``: half of
    it, the convention of model_figures.attention_flop_per_token_forward) on a full layer; on a windowed layer
    min(L, W), or causally (query i attends min(i, W) keys) L/2 up to W and W − W²/(2L) beyond."""
    full = context_tokens / 2.0 if causal else context_tokens
    window = arch.sliding_window_tokens
    if window is None or context_tokens <= 0.0:
        return full
    if not causal:
        windowed = min(context_tokens, float(window))
    elif context_tokens <= window:
        windowed = full
    else:
        windowed = window - window * window / (2.0 * context_tokens)
    frac = arch.windowed_layer_frac
    return (1.0 - frac) * full + frac * windowed


def held_kv_tokens(arch: ModelArch, context_tokens: float, block_tokens: int, windowed_memory: bool) -> float:
    """KV-cache slots one sequence of ``context_tokens`` holds, counted in tokens of every layer (the unit of the
    replica's KV capacity): the whole context, or — where the engine frees what falls out of the window — the
    context on the full layers and W plus one partly filled block on the windowed ones (vLLM's hybrid KV cache
    manager frees a windowed layer's blocks once they fall out of the window)."""
    window = arch.sliding_window_tokens
    if not windowed_memory or window is None:
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
        return context_tokens / held_kv_tokens(arch, context_tokens, block_tokens, True)
    layers = arch.num_layers
    windowed = arch.sliding_window_layers
    full = layers - windowed
    windowed_need = min(context_tokens, float(window + block_tokens))
    per_slot = layers / (full + swa_pool_ratio * windowed)
    swa_bound = swa_pool_ratio * per_slot * context_tokens / windowed_need
    return swa_bound if full == 0 else min(per_slot, swa_bound)
