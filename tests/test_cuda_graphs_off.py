"""A run that turns the engine's CUDA graphs off (vLLM --enforce-eager, SGLang --disable-cuda-graph) issues every
decode step from Python, and one that selects vLLM's previous engine (VLLM_USE_V1=0) is priced as that engine. The
eager floor is the project's own launch measurement (kernel_overheads_h200.yaml: 10.42 µs a PyTorch op issued from
Python); the expected values are that arithmetic, written out here."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.step_overheads import engine_overheads, kernels_per_step, sampling_s, with_overheads
from aiinfra.analytic.step_time import StepBatch
from aiinfra.app.tables import domain_tables, row_tables
from aiinfra.validation.inference_rows import _release
from aiinfra.validation.rows import RowError
from aiinfra.validation.switches import cuda_graphs_stated, legacy_engine_stated

from .conftest import deepseek_v3_estimate, node_model

H200 = "nvidia-h200-sxm-141gb"
EAGER_S_PER_KERNEL = 1.042e-05  # kernel_overheads_h200.yaml launch-h200-pytorch-eager


def test_a_decode_step_without_graphs_lasts_its_kernels_issue_time() -> None:
    # Llama-3.1-8B (32 layers) at tp 1, 8 sequences decoding, 1 µs of kernels: captured, the step is the kernels, one
    # graph launch and the sampler; eager, the host issues every kernel at 10.42 µs each, and the sampler follows
    tables = domain_tables()
    acc = catalog.accelerator(H200)
    kernels = kernels_per_step(32, 1, 0)
    kw = dict(kernels=kernels, vocab=128256, tables=tables, engine_version="0.11.0")
    decode = StepBatch.decode(8, 8 * 1000)
    ov = engine_overheads(acc, "vllm", tables)
    assert ov is not None and ov.eager_launch_s_per_kernel == pytest.approx(EAGER_S_PER_KERNEL)
    sampler = sampling_s(ov, "greedy", 8, 128256)
    eager = with_overheads(1e-6, decode, acc, "vllm", cuda_graphs=False, **kw)  # type: ignore[arg-type]
    assert eager == pytest.approx(kernels * EAGER_S_PER_KERNEL + sampler, rel=1e-9)
    captured = with_overheads(1e-6, decode, acc, "vllm", **kw)  # type: ignore[arg-type]
    assert captured == pytest.approx(1e-6 + ov.graph_launch_s + sampler, rel=1e-9)
    # a GPU step longer than the issue time is not lengthened by it
    assert with_overheads(1.0, decode, acc, "vllm", cuda_graphs=False, **kw) == pytest.approx(1.0 + sampler)  # type: ignore[arg-type]


def test_an_eager_replica_pays_no_graph_break_and_is_host_bound_when_its_gpu_work_is_small() -> None:
    # vLLM 0.10.1's piecewise graphs cost a captured step 32 × 42.1 µs; without graphs there is no captured step, and
    # Llama-3.1-8B at tp 8 on H200 (a fraction of a ms of GPU work per rank) lasts its kernels' issue time instead
    kw = dict(weight_precision="bf16", engine="vllm", engine_version="0.10.1")
    eager = node_model("meta-llama-3.1-8b", H200, cuda_graphs=False, **kw)
    graphed = node_model("meta-llama-3.1-8b", H200, **kw)
    assert eager.graph_break_s() == 0.0 and graphed.graph_break_s() == pytest.approx(32 * 42.1e-6)
    step = StepBatch.decode(1, 1000)
    kernels = kernels_per_step(32, 8, 0)
    assert eager.iteration_time_s(step) >= kernels * EAGER_S_PER_KERNEL
    assert eager.iteration_time_s(step) > graphed.iteration_time_s(step)


def test_infer_notes_the_eager_steps() -> None:
    note = "CUDA graphs off as the scenario sets"
    assert not any(note in n for n in deepseek_v3_estimate("vllm", 16, None).notes)
    from aiinfra.catalog.resolve import cluster_for
    from aiinfra.planning.inference import estimate
    from aiinfra.specs.common import validate
    from aiinfra.specs.workload import ServingWorkload

    wl = {
        "input_tokens": 1024,
        "output_tokens": 256,
        "engine": "vllm",
        "concurrency": 4,
        "simulation": {"scheduler": {"cuda_graphs": False}},
    }
    est = estimate(catalog.model("meta-llama-3.1-8b"), cluster_for(H200, 1), validate(ServingWorkload, wl))
    assert any(note in n for n in est.notes)


def test_the_run_states_its_graphs_and_engine_generation() -> None:
    engines = row_tables().engines
    vllm = {"engine": "vllm", "engine_version": "0.19.0"}
    assert (
        cuda_graphs_stated({**vllm, "notes": "vllm serve Qwen/Qwen3-32B --enforce-eager --max-model-len 8192"}, engines)
        == "off"
    )
    assert cuda_graphs_stated({**vllm, "notes": "LLM(model, enforce_eager=True)"}, engines) == ""  # not a flag
    assert cuda_graphs_stated({**vllm, "notes": "--enforce-eager=False"}, engines) == ""
    assert cuda_graphs_stated({**vllm, "notes": "vllm serve m --max-model-len 8192"}, engines) == ""
    sgl = {"engine": "sglang", "notes": "python -m sglang.launch_server --disable-cuda-graph --tp 8"}
    assert cuda_graphs_stated(sgl, engines) == "off"
    v0 = {"engine": "vllm", "engine_version": "0.9.1", "notes": "docker run -e VLLM_USE_V1=0 rocm/vllm ..."}
    assert legacy_engine_stated(v0, engines) == "on"
    assert legacy_engine_stated({**v0, "notes": "VLLM_USE_V1=1"}, engines) == ""
    assert legacy_engine_stated({**sgl, "notes": "VLLM_USE_V1=0"}, engines) == ""  # SGLang has no such setting


def test_a_run_on_the_previous_engine_is_priced_as_its_last_release() -> None:
    # engines.yaml vllm legacy_engine: V0's last default release is 0.7.3
    flags: list[str] = []
    profile = catalog.engine("vllm")
    row = {"engine": "vllm", "engine_version": "0.9.1", "legacy_engine": "on"}
    assert _release(row, profile, 1, flags) == "0.7.3"
    assert "priced as vllm 0.7.3" in flags[0] and "VLLM_USE_V1=0" in flags[0]
    assert _release({**row, "legacy_engine": ""}, profile, 1, []) == "0.9.1"
    # 0.11.0 ships V1 only: the switch names a setting that release no longer has
    with pytest.raises(RowError, match="no longer carries"):
        _release({**row, "engine_version": "0.11.0"}, profile, 1, [])
    # an engine without a selectable previous generation refuses the column
    with pytest.raises(RowError, match="no previous generation"):
        _release(
            {"engine": "sglang", "engine_version": "0.5.6", "legacy_engine": "on"}, catalog.engine("sglang"), 1, []
        )


def test_the_int4_note_follows_the_weight_format() -> None:
    # accuracy_notes.yaml vllm-int4-awq-a100 names int4 weights: a bf16 or fp8 scenario of the same model and engine
    # does not print it, an int4 one does, and a scenario that names no format falls under no format-bound row
    from aiinfra.catalog import accuracy_notes_for
    from aiinfra.specs.accuracy import NoteQuery

    def int4_note(precision: str | None) -> bool:
        q = NoteQuery(
            model_id="qwen3-32b", engine="vllm", accelerator_id="nvidia-a100-pcie-80gb", weight_precision=precision
        )
        notes = accuracy_notes_for(q)
        return any("int4 (W4A16, AWQ)" in n for n in notes)

    assert int4_note("int4")
    assert not int4_note("bf16") and not int4_note("fp8") and not int4_note(None)
    assert not any(
        "int4 (W4A16" in n
        for n in accuracy_notes_for(
            NoteQuery(
                model_id="qwen3-32b", engine="sglang", accelerator_id="nvidia-a100-pcie-80gb", weight_precision="int4"
            )
        )
    )
