"""Tensor-parallel all-reduce beyond an engine's own kernels (issue 29, docs/serving.md "Step mechanisms"): the
engine-tagged all-reduce rows time vLLM 0.24.0's dispatch (symmetric-memory all-reduce up to 64 MiB at tp 8 on
Hopper); SGLang's custom all-reduce and vLLM's before symmetric memory was on by default stop at their 8 MiB IPC
buffer (CustomAllreduce max_size = 8192 * 1024) and run larger messages, i.e. prefill steps, on NCCL.

Expected values by hand from the part's NCCL curve (catalog/data/efficiency.yaml ``allreduce-h100-8gpu-nvlink4``,
Vidur's H100 DGX profile): its point 15.96 MB at 0.5541 of the 450 GB/s NVLink 4 one-way bandwidth, busbw =
bytes / time x 2(n - 1)/n, so one all-reduce of 15.96 MB on 8 ranks takes
15.96e6 x 2 x 7/8 / (0.5541 x 450e9) = 112.01 us."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.comms import collective_time
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch

from .conftest import node_model

H100 = "nvidia-h100-sxm5-80gb"
NCCL_16MB_8RANKS_S = 15.96e6 * 2 * 7 / 8 / (0.5541 * 450e9)
"""The hand calculation of the module docstring: 112.01 us."""
LAYERS = 80
"""Llama 3.1 70B's decoder layers (its config.json num_hidden_layers); two all-reduces each."""
TOKENS_16MB = 974
"""974 tokens x hidden 8,192 x 2 B = 15,958,016 B: the curve's 15.96 MB point to 0.01 %."""


def _model(engine: str, version: str | None = None, accelerator: str = H100) -> InferenceModel:
    im: InferenceModel = node_model(
        "meta-llama-3.1-70b", accelerator, weight_precision="bf16", engine=engine, engine_version=version
    )
    return im


@pytest.mark.parametrize(("engine", "version"), [("sglang", None), ("sglang", "0.5.6"), ("vllm", "0.8.4")])
def test_prefill_all_reduce_above_the_custom_buffer_is_nccl(engine: str, version: str | None) -> None:
    # 2 x 80 all-reduces of 15.96 MB on the NCCL curve: 160 x 112.01 us = 17.92 ms of the step
    step = _model(engine, version).breakdown(StepBatch.prefill(TOKENS_16MB))
    assert step.communication_s == pytest.approx(2 * LAYERS * NCCL_16MB_8RANKS_S, rel=1e-3)


def test_release_with_symmetric_memory_keeps_the_engine_rows() -> None:
    # vLLM 0.11.0 (symmetric memory on by default, PR #25070) and the current release: the engine's own rows, which
    # at 16 MiB on 8 H100 (vLLM 0.24.0, efficiency 0.7062 at 16,777,216 B) are faster than NCCL's 112 us
    im = _model("vllm", "0.11.0")
    msg = TOKENS_16MB * 8192 * 2
    assert im.allreduce_engine(msg) == "vllm"
    assert _model("vllm").allreduce_engine(msg) == "vllm"
    own = collective_time(im.cluster, "allreduce", msg, 8, engine="vllm").time_s
    assert own < NCCL_16MB_8RANKS_S
    step = im.breakdown(StepBatch.prefill(TOKENS_16MB))
    assert step.communication_s == pytest.approx(2 * LAYERS * own, rel=1e-9)


def test_messages_within_the_custom_buffer_keep_the_engine_rows() -> None:
    # 512 tokens x 8,192 x 2 B = 8,388,608 B = exactly the 8 MiB buffer (not above it): the custom kernel's rows;
    # one more token crosses it
    # (SGLang's own all-reduce rows on H100, efficiency_aic_comm_sglang.yaml)
    sgl = _model("sglang")
    assert sgl.allreduce_engine(512 * 8192 * 2) == "sglang"
    assert sgl.allreduce_engine(513 * 8192 * 2) is None
    # decode steps (a token per sequence) stay far below it
    assert sgl.allreduce_engine(256 * 8192 * 2) == "sglang"


def test_engine_without_a_limit_is_unchanged() -> None:
    assert catalog.engine("trtllm").own_allreduce_max_bytes(None, "nvidia-hopper") is None
    assert _model("trtllm").allreduce_engine(64 * 2**20) == "trtllm"


def test_parts_without_symmetric_memory_keep_the_engine_rows() -> None:
    # vLLM 0.24.0 runs symmetric-memory all-reduce on compute capability 9.0 / 10.x only
    # (SYMM_MEM_ALL_REDUCE_MAX_SIZES);
    # on an A100 the engine rows above 8 MiB are NCCL already (SGLang's own A100 rows time its dispatch, pynccl
    # above the buffer), so SGLang keeps them
    assert _model("sglang", accelerator="nvidia-a100-sxm4-80gb").allreduce_engine(16 * 2**20) == "sglang"
    assert catalog.engine("sglang").own_allreduce_max_bytes(None, "nvidia-ampere") is None
