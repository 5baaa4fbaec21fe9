"""Validation rows with blank cells: documented fallbacks, each flagged in the reason string."""

from __future__ import annotations

import csv
from pathlib import Path

from aiinfra import catalog
from aiinfra.app.tables import row_tables
from aiinfra.validation import inference_rows, training_rows
from aiinfra.validation.rows import catalog_model_for

ENGINES = row_tables().engines
"""The catalog's engine profiles: the flag spellings the engine switches read."""

DATA = Path(training_rows.__file__).parent / "data"


def _row(kind: str, row_id: str) -> dict[str, str]:
    return next(r for r in csv.DictReader((DATA / f"{kind}.csv").open()) if r["id"] == row_id)


def test_model_names_match_catalog_rows_without_size_confusion() -> None:
    assert catalog_model_for("Llama-3.1-70B-Instruct", catalog.rows("models")).id == "meta-llama-3.1-70b"  # type: ignore[union-attr]
    assert catalog_model_for("Llama 2 7B", catalog.rows("models")).id == "meta-llama-2-7b"  # type: ignore[union-attr]
    assert catalog_model_for("Llama-2-70B", catalog.rows("models")).id == "meta-llama-2-70b"  # type: ignore[union-attr]
    assert catalog_model_for("Some Unknown Model 9B", catalog.rows("models")) is None


def test_blank_architecture_is_taken_from_the_catalog_model() -> None:
    full = _row("inference", "trtllm-v1p0-llama31-8b-h100-tp1pp1-1000-1000")
    blank = {**full, "num_layers": "", "hidden_size": "", "vocab_size": "", "model_name": "Llama 3.1 8B"}
    a, b = inference_rows.predict_row(full, row_tables()), inference_rows.predict_row(blank, row_tables())
    assert b.predicted is not None
    assert "taken from catalog model meta-llama-3.1-8b" in b.reason
    # the catalog row is the same architecture (32 layers, 4096 hidden, 128,256 vocabulary): same prediction
    assert abs(b.predicted - a.predicted) / a.predicted < 1e-9  # type: ignore[operator]


def test_unknown_model_with_blank_architecture_still_says_why() -> None:
    row = {**_row("training", "narayanan2021-t1-1p7b"), "vocab_size": "", "model_name": "Unlisted GPT"}
    assert training_rows.predict_row(row, row_tables()).reason == "vocab_size blank"


def test_blank_accelerator_count_is_one_replica_of_the_layout() -> None:
    row = {**_row("inference", "trtllm-v1p0-llama33-70b-h100-tp2pp1-1000-1000"), "num_accelerators": ""}
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted is not None
    assert "num_accelerators blank: assumed 2" in pred.reason


def test_attention_dp_is_read_only_where_stated() -> None:
    from aiinfra.validation.switches import states_attention_dp

    assert states_attention_dp("MoE run with trtllm-bench --ep $ep_size and enable_attention_dp (ep not listed)")
    assert states_attention_dp("llm_options: enable_attention_dp: true")
    for negated in (
        "no enable_attention_dp in its llm_options",
        "run without enable_attention_dp",
        "enable_attention_dp: false",
        "enable_attention_dp=False",
        "",
    ):
        assert not states_attention_dp(negated), negated


def test_expert_layout_of_a_row() -> None:
    from aiinfra.validation.rows import expert_layout
    from aiinfra.validation.switches import with_columns

    stated = {"attention_dp": "yes"}
    # attention DP stated, ep blank: experts split tp ways; ep given: as given
    assert expert_layout({**stated, "ep": ""}, 8, True) == (8, True)
    assert expert_layout({**stated, "ep": "4"}, 8, True) == (4, True)
    # neither stated: TensorRT-LLM's mapping default, experts tensor-parallel (ep 1); a dense model never runs DP
    assert expert_layout({"attention_dp": "", "ep": ""}, 8, True) == (1, False)
    assert expert_layout({**stated, "ep": ""}, 8, False) == (1, False)
    # a row in the reference schema (no attention_dp column) states it in its notes
    legacy = {"notes": "MoE run with trtllm-bench --ep $ep_size and enable_attention_dp", "ep": ""}
    assert expert_layout(with_columns(legacy, "inference", ENGINES), 8, True) == (8, True)
    assert expert_layout(with_columns({"notes": "TP Size 8 only", "ep": ""}, "inference", ENGINES), 8, True) == (
        1,
        False,
    )
