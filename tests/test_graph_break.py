"""vLLM V1's piecewise decode graphs (the attention op outside them, called from Python at every layer), its default
before 0.11.0: the decode time per token the maintainers measured piecewise against full graphs, over the model's
layers (engines.yaml graph_break_by_version). Expected values are the cited measurements' arithmetic, written out
here."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.step_overheads import kernels_per_step, with_overheads
from aiinfra.analytic.step_time import StepBatch
from aiinfra.app.tables import domain_tables

from .conftest import deepseek_v3_estimate, node_model

H100 = "nvidia-h100-sxm5-80gb"
H200 = "nvidia-h200-sxm-141gb"


def test_layer_times_are_the_prs_arithmetic_for_the_piecewise_releases_only() -> None:
    vllm = catalog.engine("vllm")
    for release in ((0, 8, 4), (0, 9, 1), (0, 10, 1, 1), (0, 10, 2)):
        rule = vllm.graph_break(release)
        assert rule is not None
        # vllm#42885: Kimi-K2.6 (61 MLA layers), median TPOT 32.0 ms piecewise, 28.9 ms full
        assert 61 * rule.seconds(mla=True) == pytest.approx((32.0 - 28.9) * 1e-3, rel=2e-3)
        # vllm#20059: Qwen2.5-7B (28 layers), median TPOT 11.04 ms piecewise, 9.86 ms full
        assert 28 * rule.seconds(mla=False) == pytest.approx((11.04 - 9.86) * 1e-3, rel=2e-3)
    # V0 (before 0.8) captured whole decode graphs; 0.11.0 made FULL_AND_PIECEWISE the default; an unstated release
    # is the current one; the other engines' graphs hold their attention
    for release in ((0, 7, 3), (0, 11, 0), (0, 14, 1), None):
        assert vllm.graph_break(release) is None
    assert catalog.engine("sglang").graph_break((0, 4, 5)) is None
    assert catalog.engine("trtllm").graph_break((1, 0)) is None


def test_a_captured_step_pays_the_break_an_eager_one_its_own_floor() -> None:
    # a graph-captured decode step of 8 sequences: 10 ms of kernels + one graph launch + the sampler, and the break
    # (61 × 50.8 µs = 3.10 ms) on top; a prompt step (not captured) is floored by its eager issue instead and pays no
    # break
    tables = domain_tables()
    acc = catalog.accelerator(H200)
    kw = dict(kernels=kernels_per_step(61, 8, 58), vocab=129280, tables=tables, engine_version="0.8.4")
    decode = StepBatch.decode(8, 8000)
    broken = with_overheads(0.010, decode, acc, "vllm", graph_break_s=61 * 50.8e-6, **kw)  # type: ignore[arg-type]
    whole = with_overheads(0.010, decode, acc, "vllm", **kw)  # type: ignore[arg-type]
    assert broken - whole == pytest.approx(61 * 50.8e-6, rel=1e-9)
    prompt = StepBatch.prefill(1000)
    eager = with_overheads(0.010, prompt, acc, "vllm", graph_break_s=61 * 50.8e-6, **kw)  # type: ignore[arg-type]
    assert eager == pytest.approx(with_overheads(0.010, prompt, acc, "vllm", **kw), rel=1e-12)  # type: ignore[arg-type]


def test_decode_step_of_a_piecewise_release_is_its_layers_longer() -> None:
    # Llama-3.1-8B (32 layers) at tp 1 on an H100, 16 sequences decoding: vLLM 0.10.1 takes 32 × 42.1 µs = 1.35 ms
    # longer a step than 0.11.0 (same kernels; async scheduling is the default from 0.14 only, so both run their host
    # work serially); DeepSeek-V3 (61 MLA layers) at tp 8 on H200: 0.10.1 takes 61 × 50.8 µs = 3.10 ms longer
    step = StepBatch.decode(16, 16 * 2000)
    old, new = (
        node_model("meta-llama-3.1-8b", H100, weight_precision="bf16", engine="vllm", engine_version=release)
        for release in ("0.10.1", "0.11.0")
    )
    assert old.iteration_time_s(step) - new.iteration_time_s(step) == pytest.approx(32 * 42.1e-6, rel=1e-6)
    old, new = (
        node_model("deepseek-v3", H200, weight_precision="fp8", engine="vllm", engine_version=release)
        for release in ("0.10.1", "0.11.0")
    )
    assert old.iteration_time_s(step) - new.iteration_time_s(step) == pytest.approx(61 * 50.8e-6, rel=1e-6)


def test_infer_says_what_the_graph_breaks_cost() -> None:
    # DeepSeek-V3 at tp 8 on H200 with vLLM 0.8.4: 61 × 50.8 µs = 3.10 ms a captured decode step, named in the notes;
    # the current release (FULL_AND_PIECEWISE) has no such note
    old = deepseek_v3_estimate("vllm", 16, "0.8.4")
    note = next(n for n in old.notes if "decode graphs leave the attention outside" in n)
    assert "3.1 ms a captured decode step" in note
    new = deepseek_v3_estimate("vllm", 16, None)
    assert not any("decode graphs leave the attention outside" in n for n in new.notes)


def test_a_part_without_launch_costs_pays_no_break() -> None:
    # the engine's fixed costs are the CUDA stack's (kernel_overheads_h200.yaml, borrowed by the NVIDIA parts): an
    # MI300X gets none of them, this one included; an A100 borrows them and pays 32 × 42.1 µs for Llama-3.1-8B
    amd = node_model("meta-llama-3.1-8b", "amd-mi300x", weight_precision="bf16", engine="vllm", engine_version="0.10.1")
    assert amd.graph_break_s() == 0.0
    a100 = node_model(
        "meta-llama-3.1-8b", "nvidia-a100-sxm4-80gb", weight_precision="bf16", engine="vllm", engine_version="0.10.1"
    )
    assert a100.graph_break_s() == pytest.approx(32 * 42.1e-6, rel=1e-9)


def test_a_speculative_draft_pays_its_targets_release() -> None:
    # the draft runs in the target's engine, so a target on vLLM 0.10.1 (piecewise graphs) has a draft that loses
    # 32 × 42.1 µs a captured step with Llama-3.1-8B's 32 layers; on the current release neither loses any
    draft = catalog.model("meta-llama-3.1-8b")
    old, new = (
        node_model("meta-llama-3.1-70b", H100, weight_precision="bf16", engine="vllm", engine_version=release)
        for release in ("0.10.1", None)
    )
    assert old.draft(draft).graph_break_s() == pytest.approx(32 * 42.1e-6, rel=1e-9)
    assert new.draft(draft).graph_break_s() == 0.0
