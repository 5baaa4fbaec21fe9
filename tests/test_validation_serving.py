"""Serving rows under load (issue 29), all five batches: the sealed split is the committed one, the files are found by
the accuracy table with their split, and every row states the load it was measured under (docs/validation.md,
"Serving rows under load")."""

from __future__ import annotations

import csv
import hashlib
import math
import re
from pathlib import Path

import pytest

from aiinfra.accuracy.table import validation_files
from aiinfra.app.tables import row_tables
from aiinfra.validation import runner

DATA = Path(runner.__file__).parent / "data"
BATCHES = [
    (seal.name.replace("_seal", "_open"), seal.name.replace("_seal", "_sealed"), seal.name)
    for seal in sorted(DATA.glob("inference_serving*_seal.csv"))
]
"""(open, sealed, seal list) of each batch."""
ROW_FILES = [name for batch in BATCHES for name in batch[:2]]
NOT_PREDICTED = {
    # TensorRT-LLM 0.16 ran this batch (emulated static batching, 128 x (2048 + 2048) tokens of Llama 3.1 405B FP8 on
    # 8 H100); the memory model finds no KV-cache room left at that batch (docs/validation.md, batch 2)
    "rocmblog-h100-llama31-405b-fp8-tp8-in2048-out2048-bs128-output-tokens-per-s",
    # the Server scenario of ASUSTeK's 8x H100 PCIe system (batch 5): the serving simulation needs the accelerators
    # per node, which the catalog does not give for nvidia-h100-pcie-80gb and the row schema has no column for (its
    # Offline row is predicted)
    "asustek-mlperf41-h100pciex8-llama2-70b-99p9-trtllm-fp8-server-output-tokens-per-s",
    "asustek-mlperf41-h100pciex8-llama2-70b-99p9-trtllm-fp8-server-ttft-s",
    "asustek-mlperf41-h100pciex8-llama2-70b-99p9-trtllm-fp8-server-tpot-s",
}
"""Rows the model cannot predict yet, each with the reason; any other row without a prediction fails."""


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(newline="") as f:
        return list(csv.DictReader(f))


def _seal(name: str) -> dict[str, str]:
    seal: dict[str, str] = {}
    for line in (DATA / name).read_text().splitlines():
        if line and not line.startswith("#"):
            rid, state = line.split(",")[:2]
            seal[rid] = state
    return seal


@pytest.mark.parametrize(("open_name", "sealed_name", "seal_name"), BATCHES)
def test_sealed_rows_are_the_hash_third_and_every_candidate_was_sealed_first(
    open_name: str, sealed_name: str, seal_name: str
) -> None:
    seal = _seal(seal_name)
    open_ids, sealed_ids = {r["id"] for r in _rows(open_name)}, {r["id"] for r in _rows(sealed_name)}
    assert not open_ids & sealed_ids
    # every candidate listed before its value was read became a row, and no row skipped the seal list
    assert open_ids | sealed_ids == set(seal)
    for rid in open_ids | sealed_ids:
        is_sealed = int(hashlib.sha256(rid.encode()).hexdigest(), 16) % 3 == 0
        assert seal[rid] == ("SEALED" if is_sealed else "open"), rid
        assert (rid in sealed_ids) == is_sealed, rid


def test_no_id_is_in_two_batches() -> None:
    ids = [{r["id"] for n in batch[:2] for r in _rows(n)} for batch in BATCHES]
    for i, earlier in enumerate(ids):
        for later in ids[i + 1 :]:
            assert not earlier & later


@pytest.mark.parametrize(("open_name", "sealed_name", "seal_name"), BATCHES)
def test_the_accuracy_table_reads_both_files_with_their_split_and_skips_the_seal_list(
    open_name: str, sealed_name: str, seal_name: str
) -> None:
    split = {p.name: s for p, s in validation_files(DATA)}
    assert split[open_name] == "open"
    assert split[sealed_name] == "sealed"
    assert seal_name not in split


@pytest.mark.parametrize("name", ROW_FILES)
def test_every_row_states_its_load_lengths_and_source(name: str) -> None:
    for r in _rows(name):
        mode = r["mode"]
        assert mode in ("offline", "batch", "burst", "concurrency", "poisson"), r["id"]
        if mode in ("batch", "burst", "concurrency"):
            assert int(r["batch_or_concurrency"]) >= 1, r["id"]
        if mode == "poisson":
            assert float(r["request_rate_per_s"]) > 0, r["id"]
        # a blank prompt length only where the source gives none (MLPerf logs), and the notes say so
        assert float(r["input_tokens"] or 0) > 0 or "input_tokens blank" in r["notes"], r["id"]
        assert float(r["output_tokens"]) > 0, r["id"]
        value = float(r["value"])
        assert math.isfinite(value) and value > 0, r["id"]
        # a repository file is cited at a commit, an issue by its number; other pages by their address
        url = r["source_url"]
        assert url.startswith("https://"), r["id"]
        pinned = re.search(r"/blob/[0-9a-f]{40}/|/(issues|pull)/[0-9]+$", url)
        assert not url.startswith("https://github.com/") or pinned, r["id"]
        assert "Read on" in r["notes"] and "| arch:" in r["notes"], r["id"]
        # latencies are seconds: a TTFT or TPOT in milliseconds would be read as minutes
        if r["metric"] == "tpot_s":
            assert value < 5.0, r["id"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ROW_FILES)
def test_every_serving_row_is_predicted(name: str) -> None:
    # one file per test, so that parallel workers share the files
    res = runner.run(DATA / name, row_tables())
    missing = {c.id for c in res["cases"] if c.predicted is None}
    assert missing <= NOT_PREDICTED, missing - NOT_PREDICTED
