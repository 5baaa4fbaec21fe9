"""Host-side costs that grow with the sequences in a step (issue 29): the API server's time to stream one chunk per
sequence per step, pipelined with the engine — each against the published figure its constant comes from or a hand
calculation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_overheads import streamed_chunks, streamed_step_s
from aiinfra.analytic.step_time import StepBatch
from aiinfra.app.tables import domain_tables
from aiinfra.catalog.resolve import cluster_for
from aiinfra.planning.inference import estimate, model_for
from aiinfra.specs.common import validate
from aiinfra.specs.workload import ServingWorkload


def _llama8b_h100(streamed: bool, engine: str = "vllm") -> InferenceModel:
    return InferenceModel(
        model=catalog.model("meta-llama-3.1-8b"),
        cluster=cluster_for("nvidia-h100-sxm5-80gb", 1),
        engine=engine,
        streamed=streamed,
    )


def test_vllm_chunk_cost_is_the_api_server_bound_throughput_of_pr_12287() -> None:
    # vllm#12287: 400 concurrent streams, API-server bound at 14,308.94 output tokens/s, one token per chunk
    assert catalog.engine("vllm").stream_chunk_s == pytest.approx(1.0 / 14_308.94, rel=1e-3)


def test_sglang_chunk_cost_is_the_measured_openai_conversion() -> None:
    # sglang#10186: 30 us per token for the OpenAI output conversion; 20 x 64 x 30 us = 38.4 ms per step
    assert catalog.engine("sglang").stream_chunk_s == pytest.approx(30e-6)
    assert 20 * 64 * catalog.engine("sglang").stream_chunk_s == pytest.approx(38.4e-3)


def test_trtllm_has_no_streaming_term_without_a_measurement() -> None:
    assert catalog.engine("trtllm").stream_chunk_s == 0.0
    assert streamed_step_s(0.01, StepBatch.decode(4096, 500), "trtllm", domain_tables()) == 0.01


def test_one_chunk_per_decoding_sequence_and_per_prefilling_request() -> None:
    step = StepBatch.decode(300, 400) + StepBatch.prefill(512)
    assert streamed_chunks(step) == 301


def test_streamed_step_is_the_slower_of_engine_and_api_server() -> None:
    plain, streamed = _llama8b_h100(False), _llama8b_h100(True)
    # 1,000 sequences: the API server needs 1000 x 69.9 us = 69.9 ms to stream the step's chunks, longer than the
    # engine's step for an 8B model on one H100 (weights 16 GB at ~3 TB/s plus 1000 x 400 tokens of KV at 128 KiB)
    big = StepBatch.decode(1000, 400)
    engine_s = plain.iteration_time_s(big)
    assert engine_s < 0.0699
    assert streamed.iteration_time_s(big) == pytest.approx(1000 / 14_308.94, rel=1e-3)
    # 8 sequences: 0.56 ms of streaming hides behind the engine's step, which is unchanged
    small = StepBatch.decode(8, 400)
    assert streamed.iteration_time_s(small) == plain.iteration_time_s(small)


def test_server_loads_stream_and_offline_batches_do_not() -> None:
    m, cl = catalog.model("meta-llama-3.1-8b"), cluster_for("nvidia-h100-sxm5-80gb", 1)
    base = {"input_tokens": 200, "output_tokens": 200, "engine": "vllm"}
    served = validate(ServingWorkload, {**base, "request_rate_per_s": 5.0})
    offline = validate(ServingWorkload, {**base, "batch": 64})
    assert model_for(m, cl, served).streamed
    assert not model_for(m, cl, offline).streamed
    # a run that says its requests do not stream (the LLM class) overrides the usage
    quiet = validate(ServingWorkload, {**base, "request_rate_per_s": 5.0, "simulation": {"streaming": False}})
    assert not model_for(m, cl, quiet).streamed
    assert replace(model_for(m, cl, offline), streamed=True).streamed


def test_infer_says_when_the_api_server_sets_the_step() -> None:
    m, cl = catalog.model("meta-llama-3.1-8b"), cluster_for("nvidia-h100-sxm5-80gb", 1)
    base = {"input_tokens": 200, "output_tokens": 200, "engine": "vllm"}
    crowd = estimate(m, cl, validate(ServingWorkload, {**base, "concurrency": 1000}))
    # 1,000 streams: each step at least 1000 x 69.9 us = 69.9 ms (the steady state's prefills add chunks)
    assert crowd.tpot_s >= 1000 / 14_308.94
    assert any("API server's streaming sets the step" in n for n in crowd.notes)
    few = estimate(m, cl, validate(ServingWorkload, {**base, "concurrency": 16}))
    assert few.tpot_s < 0.03 and not any("streaming sets the step" in n for n in few.notes)
