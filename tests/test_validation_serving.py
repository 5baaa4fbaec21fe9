"""Serving rows under load (issue 29): the sealed split is the committed one, both files are found by the accuracy
table with their split, and every row states the load it was measured under (docs/validation.md, "Serving rows
under load")."""

from __future__ import annotations

import csv
import hashlib
import math
from pathlib import Path

import pytest

from aiinfra.accuracy.table import validation_files
from aiinfra.app.tables import row_tables
from aiinfra.validation import runner

DATA = Path(runner.__file__).parent / "data"
OPEN, SEALED, SEAL = "inference_serving_open.csv", "inference_serving_sealed.csv", "inference_serving_seal.csv"


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(newline="") as f:
        return list(csv.DictReader(f))


def _seal() -> dict[str, str]:
    seal: dict[str, str] = {}
    for line in (DATA / SEAL).read_text().splitlines():
        if line and not line.startswith("#"):
            rid, state = line.split(",")[:2]
            seal[rid] = state
    return seal


def test_sealed_rows_are_the_hash_third_and_every_candidate_was_sealed_first() -> None:
    seal = _seal()
    open_ids, sealed_ids = {r["id"] for r in _rows(OPEN)}, {r["id"] for r in _rows(SEALED)}
    assert not open_ids & sealed_ids
    # every candidate listed before its value was read became a row, and no row skipped the seal list
    assert open_ids | sealed_ids == set(seal)
    for rid in open_ids | sealed_ids:
        is_sealed = int(hashlib.sha256(rid.encode()).hexdigest(), 16) % 3 == 0
        assert seal[rid] == ("SEALED" if is_sealed else "open"), rid
        assert (rid in sealed_ids) == is_sealed, rid


def test_the_accuracy_table_reads_both_files_with_their_split_and_skips_the_seal_list() -> None:
    split = {p.name: s for p, s in validation_files(DATA)}
    assert split[OPEN] == "open"
    assert split[SEALED] == "sealed"
    assert SEAL not in split


@pytest.mark.parametrize("name", [OPEN, SEALED])
def test_every_row_states_its_load_lengths_and_source(name: str) -> None:
    for r in _rows(name):
        mode = r["mode"]
        assert mode in ("offline", "batch", "burst", "concurrency", "poisson"), r["id"]
        if mode in ("batch", "burst", "concurrency"):
            assert int(r["batch_or_concurrency"]) >= 1, r["id"]
        if mode == "poisson":
            assert float(r["request_rate_per_s"]) > 0, r["id"]
        assert float(r["input_tokens"]) > 0 and float(r["output_tokens"]) > 0, r["id"]
        value = float(r["value"])
        assert math.isfinite(value) and value > 0, r["id"]
        assert r["source_url"].startswith("https://github.com/") and "/blob/" in r["source_url"], r["id"]
        assert "Read on" in r["notes"] and "| arch:" in r["notes"], r["id"]
        # latencies are seconds: a TTFT or TPOT in milliseconds would be read as minutes
        if r["metric"] == "tpot_s":
            assert value < 5.0, r["id"]


@pytest.mark.slow
def test_every_serving_row_is_predicted() -> None:
    for name in (OPEN, SEALED):
        res = runner.run(DATA / name, row_tables())
        missing = [c.id for c in res["cases"] if c.predicted is None]
        assert not missing, missing
