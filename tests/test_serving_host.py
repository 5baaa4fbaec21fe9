"""Host-side costs that grow with the sequences in a step (issue 29): the API server's time to stream one chunk per
sequence per step, pipelined with the engine, and the per-output time older vLLM releases spent on their streams
between steps — each against the published figure its constant comes from or a hand calculation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_overheads import serial_stream_s, streamed_chunks, streamed_step_s
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


# vllm#8157: single-step serving on one H100 (Llama 3 8B, ShareGPT) at 25.2 requests/s through AsyncLLMEngine and
# 33.3 through MQLLMEngine; vllm#8125, the same authors' run that week: 197,520 tokens generated for 1000 requests
ASYNCIO_S_PER_OUTPUT = (1.0 / 25.2 - 1.0 / 33.3) / (197_520 / 1000)


def _vllm_8b(release: str, streamed: bool, steps: int = 1) -> InferenceModel:
    return InferenceModel(
        model=catalog.model("meta-llama-3.1-8b"),
        cluster=cluster_for("nvidia-h100-sxm5-80gb", 1),
        engine="vllm",
        engine_version=release,
        streamed=streamed,
        scheduler_steps=steps,
    )


def test_the_asyncio_cost_is_pr_8157s_throughput_gain_per_output() -> None:
    vllm = catalog.engine("vllm")
    assert pytest.approx(48.9e-6, rel=1e-3) == ASYNCIO_S_PER_OUTPUT
    for release in ((0, 5, 4), (0, 6, 1, 2), (0, 4, 1)):
        assert vllm.serial_stream_chunk_s(release) == pytest.approx(ASYNCIO_S_PER_OUTPUT, rel=1e-3)
    # the 0.6.2 wheel serves through MQLLMEngine; a run that states no release runs the current one
    assert vllm.serial_stream_chunk_s((0, 6, 2)) == 0.0
    assert vllm.serial_stream_chunk_s(None) == 0.0
    assert catalog.engine("sglang").serial_stream_chunk_s((0, 3, 0)) == 0.0


@pytest.mark.parametrize(
    "batch",
    [StepBatch.decode(8, 1000), StepBatch.decode(100, 400), StepBatch.decode(100, 400) + StepBatch.prefill(512)],
)
def test_a_streamed_0_6_1_step_hands_over_every_output_between_steps(batch: StepBatch) -> None:
    # 0.6.1 and 0.6.2 price the same V0 step (4 ms of host work, the API server pipelined: 100 x 69.9 us = 7 ms stays
    # under the engine's step); 0.6.1 adds one output per chunk, e.g. 101 x 48.9 us = 4.94 ms with a prompt prefilling
    old, new = _vllm_8b("0.6.1", streamed=True), _vllm_8b("0.6.2", streamed=True)
    diff = old.iteration_time_s(batch) - new.iteration_time_s(batch)
    assert diff == pytest.approx(streamed_chunks(batch) * ASYNCIO_S_PER_OUTPUT, rel=1e-3)
    # the LLM class hands whole outputs back: no stream, no per-output time
    assert _vllm_8b("0.6.1", streamed=False).iteration_time_s(batch) == _vllm_8b("0.6.2", False).iteration_time_s(batch)


def test_multi_step_scheduling_hands_the_outputs_over_once_per_call() -> None:
    # 8 decode iterations per scheduler call: 100 x 48.9 us / 8 = 0.61 ms per iteration
    batch = StepBatch.decode(100, 400)
    assert serial_stream_s(batch, "vllm", "0.6.0", domain_tables(), steps_per_call=8) == pytest.approx(
        100 * ASYNCIO_S_PER_OUTPUT / 8, rel=1e-3
    )
    old, new = _vllm_8b("0.6.0", True, steps=8), _vllm_8b("0.6.2", True, steps=8)
    diff = old.iteration_time_s(batch) - new.iteration_time_s(batch)
    assert diff == pytest.approx(100 * ASYNCIO_S_PER_OUTPUT / 8, rel=1e-3)


def test_infer_says_when_a_release_hands_its_outputs_over_between_steps() -> None:
    m, cl = catalog.model("meta-llama-3.1-8b"), cluster_for("nvidia-h100-sxm5-80gb", 1)
    base = {"input_tokens": 200, "output_tokens": 200, "engine": "vllm", "concurrency": 64}
    old = estimate(m, cl, validate(ServingWorkload, {**base, "engine_version": "0.5.4"}))
    # 64 sequences x 48.9 us = 3.13 ms a step
    assert any("handed over between steps, 3.13 ms a step at 64 sequences" in n for n in old.notes)
    new = estimate(m, cl, validate(ServingWorkload, {**base, "engine_version": "0.6.2"}))
    assert not any("handed over between steps" in n for n in new.notes)
    assert new.tpot_s < old.tpot_s
