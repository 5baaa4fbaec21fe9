"""Local attention layers (analytic/window.py): sliding windows and chunks, their keys, FLOP, KV reads and KV memory,
worked by hand."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from aiinfra import catalog
from aiinfra.analytic.model_figures import attention_dims, attention_flop_per_token_forward
from aiinfra.analytic.step_time import StepBatch
from aiinfra.analytic.window import causal_mean_keys, decode_layer_keys, held_kv_tokens, prefill_layer_pairs
from aiinfra.catalog.hf_config import arch_from_hf_config
from aiinfra.specs.common import FieldProblem

from .conftest import node_model

H100 = "nvidia-h100-sxm5-80gb"


def _full(arch: Any) -> Any:
    """The same model with every layer attending the whole context."""
    return dataclasses.replace(arch, sliding_window_tokens=None, sliding_window_layers=0)


def test_catalog_windows_from_the_configs() -> None:
    # openai/gpt-oss-120b config.json: sliding_window 128, layer_types alternating, 18 of 36 sliding; Mistral 7B
    # paper Table 1: window_size 4096 on all 32 layers
    oss = catalog.model("gpt-oss-120b")
    assert (oss.sliding_window_tokens, oss.sliding_window_layers) == (128, 18)
    assert oss.windowed_layer_frac == 0.5
    mistral = catalog.model("mistral-7b")
    assert (mistral.sliding_window_tokens, mistral.sliding_window_layers) == (4096, 32)


def test_decode_keys_capped_on_the_windowed_half() -> None:
    # 10 sequences at 1,000 tokens: 10,000 keys on a full layer, 10 x 128 = 1,280 on a windowed one;
    # half the layers each: (10,000 + 1,280) / 2 = 5,640 per layer on average
    oss = catalog.model("gpt-oss-120b")
    assert decode_layer_keys(oss, 10_000.0, 10) == pytest.approx(5_640.0)
    # contexts shorter than the window: nothing to cap (8 sequences x 100 tokens < 8 x 128)
    assert decode_layer_keys(oss, 800.0, 8) == pytest.approx(800.0)
    assert decode_layer_keys(_full(oss), 10_000.0, 10) == 10_000.0


def test_training_attention_flop_with_a_window() -> None:
    # Mistral 7B, 8,192-token sequences, causal: query i attends min(i, 4096) keys; the mean is
    # W - W^2 / (2 L) = 4096 - 4096^2 / 16384 = 3,072 (full attention: L / 2 = 4,096), on all 32 layers
    mistral = catalog.model("mistral-7b")
    assert causal_mean_keys(mistral, 8192.0, causal=True) == pytest.approx(3072.0)
    d_qk, d_v = attention_dims(mistral)
    assert attention_flop_per_token_forward(mistral, 8192.0, causal=True) == pytest.approx(
        32 * 2.0 * 3072.0 * (d_qk + d_v)
    )
    # non-causal: min(L, W) = 4,096; at or below the window the window changes nothing
    assert causal_mean_keys(mistral, 8192.0, causal=False) == 4096.0
    assert causal_mean_keys(mistral, 2048.0, causal=True) == 1024.0


def test_held_kv_tokens_of_a_windowed_cache() -> None:
    # gpt-oss-120b, 1,000 tokens of context, 16-token blocks, the engine freeing out-of-window blocks:
    # 18 full layers hold 1,000, 18 windowed ones 128 + 16 -> (1,000 + 144) / 2 = 572 slots of every layer
    oss = catalog.model("gpt-oss-120b")
    assert held_kv_tokens(oss, 1000.0, 16) == pytest.approx(572.0)
    assert held_kv_tokens(_full(oss), 1000.0, 16) == 1000.0


def _gpt_oss_model(engine: str | None) -> Any:
    """gpt-oss-120b's MXFP4 checkpoint on one H100."""
    return node_model("gpt-oss-120b", H100, weight_precision="fp4", engine=engine, tp=1)


def test_decode_kv_read_of_a_step() -> None:
    # 8 sequences at 1,000 tokens: 8,000 KV entries per full layer, 8 x 128 = 1,024 per windowed one;
    # the step reads (8,000 + 1,024) / 2 = 4,512 tokens' KV of every layer: 4,512 / 8,000 = 0.564 of full attention
    im = _gpt_oss_model(None)
    full = dataclasses.replace(im, model=_full(im.model))
    step = StepBatch.decode(8, 1000)
    ratio = im.decode_kv_read_bytes_per_accelerator(step) / full.decode_kv_read_bytes_per_accelerator(step)
    assert ratio == pytest.approx(4512.0 / 8000.0)
    assert im.iteration_time_s(step) < full.iteration_time_s(step)


def test_hf_config_window_rules() -> None:
    base = {
        "num_hidden_layers": 36,
        "hidden_size": 2880,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "intermediate_size": 2880,
        "vocab_size": 201088,
        "model_type": "gpt_oss",
    }
    types = ["sliding_attention", "full_attention"] * 18
    arch = arch_from_hf_config({**base, "sliding_window": 128, "layer_types": types})
    assert (arch.sliding_window_tokens, arch.sliding_window_layers) == (128, 18)
    # Qwen2/Qwen3 configs carry a sliding_window value with use_sliding_window false: no window
    qwen = arch_from_hf_config({**base, "model_type": "qwen3", "sliding_window": 32768, "use_sliding_window": False})
    assert qwen.sliding_window_tokens is None and qwen.sliding_window_layers == 0
    # Gemma 3: sliding_window_pattern 6, every sixth layer full: 36 - 36 // 6 = 30 windowed
    gemma3 = arch_from_hf_config(
        {**base, "model_type": "gemma3_text", "sliding_window": 1024, "sliding_window_pattern": 6}
    )
    assert gemma3.sliding_window_layers == 30
    # Mistral 7B v0.1: a window and nothing saying which layers: every layer
    mistral = arch_from_hf_config({**base, "model_type": "mistral", "sliding_window": 4096})
    assert mistral.sliding_window_layers == 36


def test_window_fields_go_together() -> None:
    oss = catalog.model("gpt-oss-120b")
    with pytest.raises(FieldProblem) as no_layers:
        dataclasses.replace(oss, sliding_window_layers=0)
    assert no_layers.value.field == "sliding_window_layers"
    with pytest.raises(FieldProblem) as too_many:
        dataclasses.replace(oss, sliding_window_layers=37)
    assert too_many.value.field == "sliding_window_layers" and "num_layers 36" in str(too_many.value)


def test_context_per_kv_slot_shared_and_split_pools() -> None:
    from aiinfra.analytic.window import context_per_kv_slot

    oss = catalog.model("gpt-oss-120b")
    # one shared pool (vLLM): 1,000 tokens of context take 572 slots (above): 1,000 / 572 = 1.748 per slot
    assert context_per_kv_slot(oss, 1000.0, 16, None) == pytest.approx(1000.0 / 572.0)
    # SGLang's split at r = 0.8: the full pool holds 36 / (18 + 0.8 x 18) = 1.111 tokens per slot, the windowed one
    # 0.889; a 1,000-token sequence needs 144 windowed tokens, far inside it: the full pool bounds it at 1.111
    assert context_per_kv_slot(oss, 1000.0, 16, 0.8) == pytest.approx(36.0 / 32.4)
    # 100-token sequences need as many tokens in the windowed pool as in the full one: 0.8 x 1.111 = 0.889 per slot
    assert context_per_kv_slot(oss, 100.0, 16, 0.8) == pytest.approx(0.8 * 36.0 / 32.4)


def test_replica_capacity_follows_the_release() -> None:
    # vLLM's hybrid KV cache manager arrived in 0.9.1 (engines.yaml windowed_kv_memory): the same memory holds
    # 1 / 0.572 = 1.748 times the context of 1,000-token sequences there, and the same slots before (0.14: Hopper's
    # MXFP4 experts stored as the checkpoint, as in the earlier release; 0.10-0.11 pad them, test_fp4_checkpoints.py)
    from aiinfra.planning.inference import kv_capacity

    im = _gpt_oss_model("vllm")
    before = kv_capacity(dataclasses.replace(im, engine_version="0.9.0"), 0.9, 16, 8192, "vllm", None, 1000.0)
    after = kv_capacity(dataclasses.replace(im, engine_version="0.14.0"), 0.9, 16, 8192, "vllm", None, 1000.0)
    assert before.kv_capacity_tokens == after.kv_capacity_tokens > 0
    assert before.context_capacity_tokens == before.kv_capacity_tokens
    assert after.context_capacity_tokens == pytest.approx(after.kv_capacity_tokens * 1000.0 / 572.0, abs=1)
    # TensorRT-LLM 1.x keeps one full pool (no windowed_kv_memory rule)
    trt = kv_capacity(dataclasses.replace(im, engine="trtllm"), 0.9, 32, 8192, "trtllm", 0.9, 1000.0)
    assert trt.context_per_slot_ratio == 1.0


def test_llama4_chunked_layers_from_the_config() -> None:
    # transformers' Llama4TextConfig: attention_chunk_size 8192, a NoPE (global) layer every 4th: 48 - 12 = 36 chunked
    for mid in ("meta-llama-4-scout", "meta-llama-4-maverick"):
        arch = catalog.model(mid)
        assert (arch.attention_chunk_tokens, arch.chunked_attention_layers) == (8192, 36)
        assert arch.chunked_layer_frac == 0.75
    base = {
        "num_hidden_layers": 48,
        "hidden_size": 5120,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 8192,
        "vocab_size": 202048,
    }
    text = arch_from_hf_config({"text_config": {**base, "model_type": "llama4_text", "attention_chunk_size": 8192}})
    assert (text.attention_chunk_tokens, text.chunked_attention_layers) == (8192, 36)
    listed = arch_from_hf_config({**base, "attention_chunk_size": 8192, "no_rope_layers": [1, 0] * 24})
    assert listed.chunked_attention_layers == 24


def test_chunked_prefill_pairs_by_hand() -> None:
    scout = catalog.model("meta-llama-4-scout")
    # a fresh 20,000-token prompt: full layers 20,000 x 20,001 / 2 = 200,010,000 pairs; chunked layers restart every
    # 8,192 positions: 2 x 8,192 x 8,193 / 2 + 3,616 x 3,617 / 2 = 67,117,056 + 6,539,536 = 73,656,592;
    # 12 full and 36 chunked layers: 0.25 x 200,010,000 + 0.75 x 73,656,592 = 105,244,944 per layer
    fresh = StepBatch.prefill(20_000, 0)
    assert fresh.prefill_attention_pairs == pytest.approx(200_010_000.0)
    assert prefill_layer_pairs(scout, fresh) == pytest.approx(0.25 * 200_010_000 + 0.75 * 73_656_592)
    # the second 8,192-token chunk of a 16,384-token prompt starts a chunk of its own: 8,192 x 8,193 / 2 =
    # 33,558,528 pairs, against 8,192 x (8,192 + 8,193 / 2) = 100,667,392 on a full layer
    second = StepBatch.prefill(8192, 8192)
    assert second.prefill_attention_pairs == pytest.approx(100_667_392.0)
    assert prefill_layer_pairs(scout, second) == pytest.approx(0.25 * 100_667_392 + 0.75 * 33_558_528)


def test_chunked_decode_and_training_keys_by_hand() -> None:
    scout = catalog.model("meta-llama-4-scout")
    # 10 sequences at 20,000 tokens: a chunked layer reads 8,192 / 2 = 4,096 per sequence (its position's mean over a
    # chunk); 0.25 x 200,000 + 0.75 x 40,960 = 80,720 per layer. Below the chunk every layer reads the whole context
    assert decode_layer_keys(scout, 200_000.0, 10) == pytest.approx(80_720.0)
    assert decode_layer_keys(scout, 50_000.0, 10) == 50_000.0
    # training on 20,000-token sequences, causal: chunked mean (2 x 8,192^2 + 3,616^2) / 20,000 / 2 = 3,682.3 keys,
    # full 10,000: 0.25 x 10,000 + 0.75 x 3,682.3
    chunked = (2 * 8192**2 + 3616**2) / 20_000 / 2
    assert causal_mean_keys(scout, 20_000.0, causal=True) == pytest.approx(0.25 * 10_000 + 0.75 * chunked)


def test_local_layers_counted_once() -> None:
    scout = catalog.model("meta-llama-4-scout")
    with pytest.raises(FieldProblem) as both:
        dataclasses.replace(scout, sliding_window_tokens=128, sliding_window_layers=13)
    assert both.value.field == "chunked_attention_layers"


@pytest.mark.parametrize(
    ("release", "accelerator", "split"),
    [
        ("0.5.7", H100, False),  # forced off for gpt-oss (server_args: disable_hybrid_swa_memory = True)
        ("0.5.9", H100, True),  # on with Hopper's default attention backend
        ("0.5.9", "nvidia-b200-sxm-180gb", False),  # off with Blackwell's trtllm_mha backend
        ("0.5.10", "nvidia-b200-sxm-180gb", True),  # on with every backend
    ],
)
def test_sglang_gpt_oss_pools_by_release(release: str, accelerator: str, split: bool) -> None:
    from aiinfra.app.tables import row_tables

    tables = row_tables()
    gen = catalog.accelerator(accelerator).generation
    rule = tables.engine("sglang").windowed_kv_rule(tuple(int(x) for x in release.split(".")), "gpt-oss-120b", gen)
    assert (rule is not None and rule.swa_pool_ratio == 0.8) == split


def test_windowed_layers_leave_the_full_layers_calls_alone() -> None:
    # decode at one sequence from 256 to 65,792 tokens of context (the vLLM FP8-KV blog's sweep starts at 256): the
    # full layers' calls read what they read in the all-full model, the windowed ones 128 tokens at both ends, so
    # the context's cost is half the all-full model's
    im = _gpt_oss_model("vllm")
    full = dataclasses.replace(im, model=_full(im.model))

    def slope(m: Any) -> float:
        return m.iteration_time_s(StepBatch.decode(1, 65_792)) - m.iteration_time_s(StepBatch.decode(1, 256))

    assert slope(im) == pytest.approx(0.5 * slope(full), rel=0.01)
