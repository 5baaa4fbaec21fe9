"""Serving mechanisms of the step model (issue 29, item 3): pipeline-parallel micro-batches, per-step engine
overheads, small-message tensor-parallel all-reduce. Expected values are hand calculations written in each test or
published microbenchmark figures."""

from __future__ import annotations

import dataclasses

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch
from aiinfra.planning.inference import cluster_for

L70 = catalog.model("meta-llama-3.1-70b")
H100 = "nvidia-h100-sxm5-80gb"


def _model(pp: int, micro: bool | None, layers: int | None = None) -> InferenceModel:
    arch = L70 if layers is None else dataclasses.replace(L70, num_layers=layers)
    return InferenceModel(
        model=arch, cluster=cluster_for(H100, pp), tp=1, pp=pp, engine="vllm", micro_batching=micro
    )


def test_engines_keep_pp_micro_batches_in_flight() -> None:
    # vLLM V1 (max_concurrent_batches = pp) and TensorRT-LLM's PyExecutor (num_micro_batches = pp_size)
    assert catalog.engine("vllm").pipeline_micro_batches
    assert catalog.engine("trtllm").pipeline_micro_batches
    assert _model(2, None).pipelines_micro_batches and not _model(1, None).pipelines_micro_batches


def test_one_request_is_not_split_over_the_pipeline() -> None:
    # batch 1: k = min(pp, 1) = 1 micro-batch, so the cycle is one trip through both stages, the head and one
    # hop: max(2·t_s + t_head + t_hop, 1·(t_s + t_head)) = the unpipelined sum
    one = StepBatch.decode(1, 2000)
    piped = _model(2, True).iteration_time_s(one)
    plain = _model(2, False).iteration_time_s(one)
    assert piped == pytest.approx(plain, rel=1e-12)


def test_decode_cycle_is_the_last_stage_serving_both_micro_batches() -> None:
    # 128 decoding sequences on pp = 2 (tp = 1, no collectives): two micro-batches of 64. The last stage runs 40
    # layers plus the head for each of them, i.e. a 40-layer model at batch 64 (t_s + t_head), twice per cycle; the
    # trip 2·t_s + t_head + t_hop is shorter because the hop of 64 × 8192 × 2 B = 1 MiB over NVLink (~10 µs) is
    # shorter than the head's read of 128256 × 8192 × 2 B = 2.1 GB (~0.7 ms). So the cycle = 2 × T(40 layers, 64).
    piped = _model(2, True).iteration_time_s(StepBatch.decode(128, 3000))
    half = _model(1, None, layers=40).iteration_time_s(StepBatch.decode(64, 3000))
    assert piped == pytest.approx(2 * half, rel=1e-9)


def test_compute_bound_prefill_pipelines_to_about_half() -> None:
    # 8 prompts of 2048 tokens (16,384 tokens, compute-bound) on pp = 2: without micro-batches the two stages run in
    # turn, 2·t_s(16384) + t_head + t_hop; with two micro-batches of 8192 tokens each stage works on one while the
    # other works on the other (GPipe, Huang et al. 2019), and t_s(8192) ≈ t_s(16384)/2 when compute-bound, so the
    # step takes about half as long (a little more: the hop and the head).
    step = StepBatch()
    for _ in range(8):
        step = step + StepBatch.prefill(2048)
    assert step.prefill_requests == 8
    piped = _model(2, True).iteration_time_s(step)
    plain = _model(2, False).iteration_time_s(step)
    assert 0.45 < piped / plain < 0.6
