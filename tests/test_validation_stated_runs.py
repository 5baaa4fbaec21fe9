"""What a validation row states about its run reaches every simulated mode: scheduler limits, a client's length
range, and the script that sets those input columns from the sources (bench/validation_stated_runs.py)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from aiinfra.app.tables import row_tables
from aiinfra.validation.benchmark_rows import length_dists
from aiinfra.validation.inference_rows import predict_row, stated_limits
from aiinfra.validation.rows import RowError
from tests.conftest import bench_script

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data"


@pytest.mark.parametrize(
    ("cell", "mean_in", "mean_out", "expected_in", "expected_out"),
    [
        # InferenceX's client: randint(int(0.8 L), L + 1); L = 1024 -> [819, 1024], mean 921.5; L = 8192 ->
        # [6553, 8192], mean 7372.5
        ("uniform:0.8", "7372.5", "921.5", (6553, 8192), (819, 1024)),
        # vLLM's own random dataset: uniform on [floor(L (1 - R)), ceil(L (1 + R))]; the vLLM blog's "~20k input
        # tokens and ~2k output tokens (+-15% variance)": R = 0.15 -> [17000, 23000] and [1700, 2300]
        ("uniform_about:0.15", "20000", "2000", (17000, 23000), (1700, 2300)),
    ],
)
def test_range_ratio_lengths_by_hand(
    cell: str, mean_in: str, mean_out: str, expected_in: tuple[int, int], expected_out: tuple[int, int]
) -> None:
    flags: list[str] = []
    got = length_dists({"length_distribution": cell, "input_tokens": mean_in, "output_tokens": mean_out}, None, flags)
    assert got["input_lengths"] == {"kind": "uniform", "low": expected_in[0], "high": expected_in[1]}
    assert got["output_lengths"] == {"kind": "uniform", "low": expected_out[0], "high": expected_out[1]}
    assert f"range ratio {cell.split(':')[1]}" in flags[0]
    with pytest.raises(RowError, match=r"length_distribution='uniform:1\.5'.*range ratio"):
        length_dists({"length_distribution": "uniform:1.5", "input_tokens": "10", "output_tokens": "10"}, None, [])


def test_a_client_that_sends_the_requested_lengths_is_fixed_and_an_unknown_draw_is_refused() -> None:
    # vLLM's client logs its draw as "Sampling input_len from [low, high]"; at range ratio 0 low = high (127 prompt
    # tokens of a nominal 128 less the tokenizer's BOS), a fixed length; sglang.bench_serving at range ratio 0 draws
    # uniformly up to the requested length
    from aiinfra.validation.switches import from_notes

    vllm = "random_range_ratio=0.0 ... INFO [datasets.py:612] Sampling input_len from [127, 127] and output_len"
    assert from_notes(vllm, "inference")["length_distribution"] == "fixed"
    assert from_notes("sglang.bench_serving random_range_ratio=0.0", "inference")["length_distribution"] == "uniform"
    flags: list[str] = []
    fixed = {"length_distribution": "fixed", "input_tokens": "127", "output_tokens": "128"}
    assert length_dists(fixed, None, flags) == {}
    assert "fixed" in flags[0]
    with pytest.raises(RowError, match=r"length_distribution='lognormal'.*fixed, uniform"):
        length_dists({"length_distribution": "lognormal", "input_tokens": "10", "output_tokens": "10"}, None, [])


def test_the_vllm_blog_rows_state_their_length_range() -> None:
    rows = [r for r in csv.DictReader((DATA / "inference_serving7_open.csv").open()) if r["id"].startswith("vllmblog")]
    assert rows and all(r["length_distribution"] == "uniform_about:0.15" for r in rows)


def test_length_ratio_rule_and_shipped_files() -> None:
    script = bench_script("validation_stated_runs")
    assert script.ratio_mean(1024, 0.8) == 921.5  # (819 + 1024) / 2
    assert script.ratio_mean(8192, 0.8) == 7372.5  # (6553 + 8192) / 2
    for name in ("inference_serving2_open.csv", "inference_serving2_sealed.csv"):
        with (DATA / name).open(newline="") as f:
            text = f.read()
        assert script.filled(text) == text, f"{name}: run bench/validation_stated_runs.py"
    rows = [r for r in csv.DictReader((DATA / "inference_serving2_open.csv").open()) if "InferenceX" in r["source"]]
    assert rows and all(r["length_distribution"] == "uniform:0.8" for r in rows)


def test_system_rule_and_shipped_files() -> None:
    script = bench_script("validation_stated_runs")
    assert script.system_of("https://x/closed/Dell/results/XE8640_H100_SXM_80GBx4_TRT/llama") == "hgx-h100-4gpu"
    assert script.system_of("https://x/closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama") == ""
    for name in ("inference_serving5_open.csv", "inference_serving5_sealed.csv"):
        with (DATA / name).open(newline="") as f:
            text = f.read()
        assert script.filled(text) == text, f"{name}: run bench/validation_stated_runs.py"


def test_stated_limits_reach_a_closed_loop() -> None:
    # eight clients against a server the row caps at two running requests: six wait in the queue, so the mean TTFT
    # is longer than with the engine's default cap (hundreds of sequences)
    rows = [r for r in csv.DictReader((DATA / "inference_serving2_open.csv").open()) if "-c8-ttft-s" in r["id"]]
    assert rows
    row = {**rows[0], "max_num_seqs": "", "max_num_batched_tokens": ""}
    assert stated_limits(row) == {}
    capped = {**row, "max_num_seqs": "2"}
    assert stated_limits(capped) == {"max_num_seqs": 2}
    free, held = predict_row(row, row_tables()), predict_row(capped, row_tables())
    assert free.predicted is not None and held.predicted is not None
    assert held.predicted > 2 * free.predicted
