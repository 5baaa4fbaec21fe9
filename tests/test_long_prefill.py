"""Long-prompt prefill of MLA models (issue 29, docs/serving.md "Long prompts: the cached prefix re-expanded"): every
continuing chunk re-expands its cached prefix into multi-head keys and values, and vLLM before 0.8.5 pads the values
to the query-key width. Expected values are counted by hand from DeepSeek-V3's dimensions (61 layers, 128 heads,
kv_lora_rank 512, rope 64, nope 128, value 128) and the H200's catalog peaks (HBM 4.8 TB/s, FP8 1,978.9 TFLOP/s)."""

from __future__ import annotations

import dataclasses

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.mla_terms import (
    mla_reexpansion_bytes_per_token,
    mla_reexpansion_flop_per_token,
)
from aiinfra.analytic.step_time import StepBatch, cached_prefix_tokens
from aiinfra.planning.inference import prefill_time_s

from .conftest import node_model

H200 = "nvidia-h200-sxm-141gb"


def _model(engine: str | None, version: str | None = None, model: str = "deepseek-v3") -> InferenceModel:
    im: InferenceModel = node_model(model, H200, weight_precision="fp8", engine=engine, engine_version=version)
    return im


def _unstated(step: StepBatch) -> StepBatch:
    """The same work with its chunk count unstated (no prefix read, no re-expansion)."""
    return dataclasses.replace(step, prefill_seqs=0)


def test_cached_prefix_of_chunks_by_hand() -> None:
    # one chunk of 8,192 after 16,384 cached: pairs = 8192 * (16384 + 4096.5) -> 16,384
    assert cached_prefix_tokens(StepBatch.prefill(8192, 16384)) == pytest.approx(16384.0)
    # two equal chunks of 1,024 after 8,192 and 4,096 cached: 8,192 + 4,096 = 12,288
    two = StepBatch.prefill(1024, 8192) + StepBatch.prefill(1024, 4096)
    assert cached_prefix_tokens(two) == pytest.approx(12288.0)
    # fresh prompts find nothing cached
    assert cached_prefix_tokens(StepBatch.prefill(4096, 0) + StepBatch.prefill(4096, 0)) == 0.0
    assert cached_prefix_tokens(StepBatch()) == 0.0


def test_reexpansion_flop_and_bytes_per_token_by_hand() -> None:
    m = catalog.model("deepseek-v3")
    # kv_b_proj 512 -> 128 x (128 + 128): 2 * 512 * 32,768 = 33,554,432 FLOP; 8 ranks: 4,194,304
    assert mla_reexpansion_flop_per_token(m, 1) == 33_554_432.0
    assert mla_reexpansion_flop_per_token(m, 8) == 4_194_304.0
    # bf16: latent + rope 576 values read and written (1,152), keys 128 x 192 and values 128 x 128 written and read
    # on one of 8 ranks (2 * 40,960 / 8 = 10,240): (1,152 + 10,240) * 2 B = 22,784 B
    assert mla_reexpansion_bytes_per_token(m, 8, (128 * 192, 128 * 128)) == 22_784.0
    # values padded to 192: (1,152 + 2 * 49,152 / 8) * 2 = 26,880 B
    assert mla_reexpansion_bytes_per_token(m, 8, (128 * 192, 128 * 192)) == 26_880.0
    assert mla_reexpansion_flop_per_token(catalog.model("meta-llama-3.1-70b"), 8) == 0.0


def test_a_continuing_chunk_pays_at_least_the_roofline_of_its_reexpansion() -> None:
    # vLLM 0.8.5 (no padding), an 8,192-token chunk after 16,384 cached tokens, 61 layers at tp 8:
    # bytes 16,384 * 61 * 22,784 = 2.277e10 B over 4.8 TB/s = 4.74 ms; FLOP 16,384 * 61 * 4,194,304 = 4.192e12 over
    # the FP8 peak 1,978.9 TFLOP/s = 2.12 ms: the two serial kernels take at least 6.86 ms more than the same step
    # without a prefix to rebuild
    im = _model("vllm", "0.8.5")
    step = StepBatch.prefill(8192, 16384)
    extra_s = im.breakdown(step).attention_s - im.breakdown(_unstated(step)).attention_s
    assert extra_s >= 4.74e-3 + 2.12e-3
    # and it is a fraction of the chunk's own attention (2 * 8192 * 20480.5 * 128 * 320 / 8 * 61 = 1.05e14 FLOP)
    assert extra_s < 0.5 * im.breakdown(_unstated(step)).attention_s


def test_no_reexpansion_for_fresh_prompts_other_models_or_the_absorbed_form() -> None:
    fresh = StepBatch.prefill(8192, 0)
    im = _model("vllm", "0.8.5")
    assert im.breakdown(fresh).attention_s == im.breakdown(_unstated(fresh)).attention_s
    # a GQA model caches per-head keys and values: nothing to rebuild
    llama = _model("vllm", "0.8.5", model="meta-llama-3.1-70b")
    cont = StepBatch.prefill(8192, 16384)
    assert llama.breakdown(cont).attention_s == llama.breakdown(_unstated(cont)).attention_s
    # SGLang 0.4.5 runs a chunk with fewer than 8,192 cached tokens on the absorbed latent, which reads the cache as is
    sgl = _model("sglang", "0.4.5")
    short = StepBatch.prefill(1024, 7168)
    assert sgl.breakdown(short).attention_s == sgl.breakdown(_unstated(short)).attention_s
    # from 8,192 cached tokens it runs the multi-head form and rebuilds the prefix
    long = StepBatch.prefill(1024, 16384)
    assert sgl.breakdown(long).attention_s > sgl.breakdown(_unstated(long)).attention_s


def test_vllm_084_pads_the_values_of_a_fresh_prompt() -> None:
    # a fresh 30,000-token prompt (no prefix, compute-bound at the attention curve's flat end): the padded kernel does
    # (192 + 192) / (192 + 128) = 1.2 times the work of 0.8.5's 192 / 128 kernel
    step = StepBatch.prefill(30000, 0)
    padded = _model("vllm", "0.8.4").breakdown(step).attention_s
    unpadded = _model("vllm", "0.8.5").breakdown(step).attention_s
    assert padded / unpadded == pytest.approx(1.2, rel=1e-3)


def test_pads_by_release() -> None:
    vllm = catalog.engine("vllm")
    assert vllm.pads_mla_prefill_v((0, 8, 4))
    assert not vllm.pads_mla_prefill_v((0, 8, 5))
    assert not vllm.pads_mla_prefill_v(None)  # the current release runs FA3's 192 / 128 kernel on Hopper
    assert not catalog.engine("sglang").pads_mla_prefill_v((0, 4, 5))


def test_chunked_prefill_of_a_long_prompt_pays_the_reexpansion_of_every_later_chunk() -> None:
    # a 30,000-token prompt in 8,192-token chunks (prefixes 0, 8,192, 16,384, 24,576): the planner's prefill time is
    # the sum of the four chunk steps, the last three rebuilding their prefixes
    im = _model("vllm", "0.8.4")
    chunks = [(8192, 0), (8192, 8192), (8192, 16384), (5424, 24576)]
    with_reexp = sum(im.iteration_time_s(StepBatch.prefill(c, p)) for c, p in chunks)
    without = sum(im.iteration_time_s(_unstated(StepBatch.prefill(c, p))) for c, p in chunks)
    total_s, _ = prefill_time_s(im, 1, 30000, 8192)
    assert total_s == pytest.approx(with_reexp, rel=1e-9)
    assert with_reexp > without


def test_the_simulator_prefills_a_long_prompt_in_the_same_chunk_steps() -> None:
    # one 30,000-token request on vLLM 0.8.4 with an 8,192-token budget: the simulated TTFT is the four chunk steps
    # (prefixes 0, 8,192, 16,384, 24,576; the last three rebuilding their prefixes) plus the profile's serving-path
    # cost per request (13 ms)
    from aiinfra.app.tables import row_tables
    from aiinfra.sim.run import simulate

    tables = row_tables()
    sc = tables.scenario_of(
        {
            "model": "deepseek-v3",
            "hardware": {"accelerator": H200, "count": 8},
            "inference": {
                "weight_precision": "fp8",
                "kv_precision": "bf16",
                "engine": "vllm",
                "engine_version": "0.8.4",
                "input_tokens": 30000,
                "output_tokens": 2,
                "plan": {"tp": 8, "replicas": 1},
                "request_rate_per_s": 0.01,
                "num_requests": 1,
                "simulation": {"scheduler": {"max_num_batched_tokens": 8192}},
            },
        }
    )
    ttft_s = simulate(sc, seed=0, tables=tables.serving_tables(sc)).summary.ttft_s.mean
    im = _model("vllm", "0.8.4")
    chunks = [(8192, 0), (8192, 8192), (8192, 16384), (5424, 24576)]
    steps_s = sum(im.iteration_time_s(StepBatch.prefill(c, p)) for c, p in chunks)
    assert ttft_s == pytest.approx(steps_s + catalog.engine("vllm").request_overhead_s, rel=1e-6)
