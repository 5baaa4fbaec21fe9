"""Validation on the published inference rows — accuracy as a regression guard (see docs/validation.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aiinfra.validation import inference_rows
from aiinfra.validation.runner import by_group, run

DATA = Path(inference_rows.__file__).parent / "data" / "inference.csv"


@pytest.fixture(scope="module")
def result() -> dict:  # type: ignore[type-arg]
    return run(DATA)


# group -> (max median |error|, max p90 |error|) the model achieved (regression guard, not the target)
BOUNDS = {
    "trtllm-v1p0": (0.27, 0.45),
    "trtllm-v0p5-a100": (0.30, 0.50),
    "vllm-fp8kv-h100": (0.20, 0.80),
}


@pytest.mark.parametrize("group", sorted(BOUNDS))
def test_group_accuracy(result, group: str) -> None:  # type: ignore[no-untyped-def]
    s = by_group(result["cases"])[group]
    assert s["n_compared"] == s["n"]
    assert s["median_abs_rel_error"] <= BOUNDS[group][0]
    assert s["p90_abs_rel_error"] <= BOUNDS[group][1]


def test_llama8b_itl_slope_tracks_kv_bytes(result) -> None:  # type: ignore[no-untyped-def]
    # decode ITL slope = KV bytes per context token / achieved bandwidth: bf16 and fp8 KV within 15 %
    cases = {c.id: c for c in result["cases"]}
    for cid in ("vllm-fp8kv-h100-llama31-8b-kvbf16-itl-slope", "vllm-fp8kv-h100-llama31-8b-kvfp8-itl-slope"):
        assert abs(cases[cid].rel_error) <= 0.15


def test_rows_without_inputs_are_listed(result) -> None:  # type: ignore[no-untyped-def]
    missing = [c for c in result["cases"] if c.predicted is None]
    assert missing and all(c.notes for c in missing)
    assert sum(c.predicted is not None for c in result["cases"]) >= 60
