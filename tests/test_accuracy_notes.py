"""The scope of the planner's known accuracy gaps (catalog/data/accuracy_notes.yaml): which scenarios print a note.
Each note's stated range against its validation cases is checked in tests/test_validation_inference.py."""

from __future__ import annotations

import pytest

from aiinfra.catalog import accuracy_notes_for
from aiinfra.specs.accuracy import AccuracyNote, NoteQuery


def test_the_v0_note_follows_the_engine_release() -> None:
    # accuracy_notes.yaml vllm-mi300x-v0-small-model covers vLLM's V0 engine on MI300X (below_version 0.8): a
    # scenario stating a V0 release prints it, the current release (none stated) and a V1 release do not
    def v0_note(release: str | None) -> bool:
        notes = accuracy_notes_for(
            NoteQuery(model_id="meta-llama-3.1-8b", engine="vllm", accelerator_id="amd-mi300x", release=release)
        )
        return any("V0 engine on MI300X" in n for n in notes)

    assert v0_note("0.6.3") and v0_note("0.7.3")
    assert not v0_note(None) and not v0_note("0.8.0") and not v0_note("0.11.0")


def test_infer_prints_a_release_bound_note_only_at_its_releases(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # the planner passes the scenario's inference.engine_version to the notes (the application layer infer uses)
    from aiinfra.app.inference import infer
    from aiinfra.app.scenario import load_scenario

    text = """model: meta-llama-3.1-8b
hardware: {accelerator: amd-mi300x, count: 1}
inference: {engine: vllm, input_tokens: 128, output_tokens: 128, batch: 8%s}
"""

    def gap_notes(extra: str) -> list[str]:
        path = tmp_path / "s.yaml"
        path.write_text(text % extra)
        notes = infer(load_scenario(path)).estimate.notes
        return [n for n in notes if n.startswith("accuracy:") and "V0 engine on MI300X" in n]

    assert gap_notes(", engine_version: '0.7.3'")
    assert not gap_notes("")


def test_the_deepseek_ttft_note_covers_h200_and_b200() -> None:
    # deepseek-ttft-h200-b200: DeepSeek-R1/V3 on 8 x H200 or 8 x B200, any engine; not a dense model there, not H100
    def ds_note(model: str, accelerator: str) -> bool:
        return any(
            "DeepSeek-R1/V3" in n
            for n in accuracy_notes_for(NoteQuery(model_id=model, engine="sglang", accelerator_id=accelerator))
        )

    assert ds_note("deepseek-v3", "nvidia-h200-sxm-141gb") and ds_note("deepseek-v3", "nvidia-b200-sxm-180gb")
    assert not ds_note("deepseek-v3", "nvidia-h100-sxm5-80gb")
    assert not ds_note("meta-llama-3.1-70b", "nvidia-b200-sxm-180gb")


def test_the_rtx_pro_6000_note_is_for_tensorrt_llm() -> None:
    # trtllm-rtx-pro-6000: the only published runs on that card for TensorRT-LLM; vLLM there has its own rows
    def note(engine: str) -> bool:
        return any(
            "RTX PRO 6000" in n
            for n in accuracy_notes_for(
                NoteQuery(model_id="meta-llama-3.1-8b", engine=engine, accelerator_id="nvidia-rtx-pro-6000")
            )
        )

    assert note("trtllm") and not note("vllm")


def test_the_l40s_moe_note_is_for_its_model() -> None:
    # qwen3-30b-a3b-l40s: the model's only published runs on an L40S; a dense model there prints nothing
    def note(model: str) -> bool:
        return any(
            "L40S" in n
            for n in accuracy_notes_for(NoteQuery(model_id=model, engine="vllm", accelerator_id="nvidia-l40s"))
        )

    assert note("qwen3-30b-a3b") and not note("meta-llama-3.1-8b")


def test_a_release_bound_that_is_no_release_is_refused() -> None:
    # a mistyped bound must not match as "no bound" (every release)
    note = AccuracyNote(id="x", below_version="eight", cases="^x", signed_error_range=(0.0, 0.0), note="x")
    with pytest.raises(ValueError, match=r"no MAJOR\.MINOR"):
        note.releases()
