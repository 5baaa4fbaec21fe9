"""Benchmark workloads (catalog/data/benchmarks.yaml) and their use for MLPerf rows with blank lengths.

Expected values are copied by hand from the cited sources:
* mlcommons/inference loadgen/mlperf.conf @ b66003e: performance_sample_count_override, Server/Interactive
  ttft_latency and tpot_latency (ms), *.Server.min_duration 600000 ms;
* the language/*/README.md accuracy targets (tokens per sample);
* per-sample token counts in openshift-psap/performance-dashboard mlperf-data/summaries/*.csv @ 71007029
  (sums written below were added up from those files).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from aiinfra import catalog
from aiinfra.app.tables import row_tables
from aiinfra.sim.arrivals import lengths
from aiinfra.specs.serving_sim import LengthDist
from aiinfra.validation import inference_rows

DATA = Path(inference_rows.__file__).parent / "data" / "inference.csv"


def _row(row_id: str) -> dict[str, str]:
    with DATA.open(newline="") as fh:
        for r in csv.DictReader(fh):
            if r["id"] == row_id:
                return {k: v for k, v in r.items() if k != "value"}
    raise KeyError(row_id)


# id -> (samples, server TTFT p99 s, server TPOT p99 s, output tokens per sample) from mlperf.conf / README
CITED = {
    "mlperf-inference-llama2-70b": (24576, 2.0, 0.200, 294.45),
    "mlperf-inference-mixtral-8x7b": (15000, 2.0, 0.200, 144.84),
    "mlperf-inference-llama3.1-405b": (8313, 6.0, 0.175, 684.68),
    "mlperf-inference-llama3.1-8b": (13368, 2.0, 0.100, None),
    "mlperf-inference-deepseek-r1": (4388, 2.0, 0.080, 3886.2274),
}


@pytest.mark.parametrize("bench_id", sorted(CITED))
def test_loader_returns_cited_figures(bench_id: str) -> None:
    samples, ttft_s, tpot_s, out_mean = CITED[bench_id]
    b = catalog.benchmark(bench_id)
    assert b.num_samples == samples
    assert b.min_duration_s == pytest.approx(600.0)
    assert b.latency_constraints["server"].ttft_p99_s == pytest.approx(ttft_s)
    assert b.latency_constraints["server"].tpot_p99_s == pytest.approx(tpot_s)
    if out_mean is None:
        assert b.output_tokens.mean is None  # not published in tokens: absent, never guessed
    else:
        assert b.output_tokens.mean == pytest.approx(out_mean, abs=0.01)
    assert b.sources and all(s.url for s in b.sources)


def test_interactive_limits() -> None:
    # llama2-70b README: "the interactive category requires loadgen to enforce ttft <= 450ms and tpot <= 40ms"
    lim = catalog.benchmark("mlperf-inference-llama2-70b").latency_constraints["interactive"]
    assert (lim.ttft_p99_s, lim.tpot_p99_s) == (pytest.approx(0.45), pytest.approx(0.04))


def test_input_means_match_the_per_sample_sums() -> None:
    # sums of the input_length column over every row of the summary files
    sums = {
        "mlperf-inference-llama2-70b": (5463976, 24576),
        "mlperf-inference-mixtral-8x7b": (6410905, 15000),
        "mlperf-inference-llama3.1-405b": (78380323, 8313),
        "mlperf-inference-llama3.1-8b": (11639915, 13368),
        "mlperf-inference-deepseek-r1": (3527036, 4388),
    }
    for bench_id, (total, n) in sums.items():
        b = catalog.benchmark(bench_id)
        assert b.input_tokens.mean == pytest.approx(total / n, abs=0.005), bench_id
        assert b.num_samples == n


def test_lognormal_sigma_by_moments() -> None:
    # Llama 2 70B prompts: std/mean = 171.5/222.33 = 0.77138; ln(1 + 0.59503) = 0.46688; sqrt = 0.68329
    assert catalog.benchmark("mlperf-inference-llama2-70b").input_tokens.lognormal_sigma == pytest.approx(
        0.68329, abs=1e-4
    )
    # no published spread -> no σ
    assert catalog.benchmark("mlperf-inference-llama2-70b").output_tokens.lognormal_sigma is None


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (("closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99.9/Offline",), "llama2-70b"),
        (("Llama-2-70B",), "llama2-70b"),
        (("Mixtral-8x7B",), "mixtral-8x7b"),
        (("results/x/llama3.1-405b/Server", "Llama-3.1-405B-Instruct"), "llama3.1-405b"),
        (("results/x/llama3.1-8b-interactive/Server",), "llama3.1-8b"),
        (("deepseek-r1/Offline",), "deepseek-r1"),
    ],
)
def test_benchmark_for_matches_result_paths(texts: tuple[str, ...], expected: str) -> None:
    b = catalog.benchmark_for(*texts)
    assert b is not None and b.id == f"mlperf-inference-{expected}"


def test_benchmark_for_unknown_is_none() -> None:
    assert catalog.benchmark_for("Qwen3-235B-A22B", "trtllm perf overview") is None


def test_blank_length_mlperf_offline_row_is_predicted() -> None:
    row = _row("mlperf41-h100x8-llama2-70b-99p9-offline-output-tokens-per-s")
    assert row["input_tokens"] == ""
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted is not None and pred.predicted > 0
    # the dataset mean 5463976 / 24576 = 222.33 rounds to 222
    assert "input_tokens blank: 222" in pred.reason and "benchmarks.yaml" in pred.reason


def test_blank_length_mlperf_server_row_is_simulated_with_the_dataset_lengths() -> None:
    row = _row("mlperf41-h100x8-mixtral-8x7b-server-tpot-s")
    row["request_rate_per_s"] = "2"  # a light load keeps the simulation short: 2/s x 600 s = 1200 requests
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted is not None and pred.predicted > 0
    assert "input_tokens blank: 427" in pred.reason
    assert "1200 Poisson requests" in pred.reason
    assert "lognormal" in pred.reason and "capped at the longest sample 1948" in pred.reason


def test_row_value_wins_over_the_benchmark() -> None:
    row = _row("mlperf41-h100x8-llama2-70b-99p9-offline-requests-per-s")
    row["input_tokens"] = "500"
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted is not None and "input_tokens blank" not in pred.reason


def test_blank_length_non_mlperf_row_reports_its_reason() -> None:
    row = _row("mlperf41-h100x8-llama2-70b-99p9-offline-output-tokens-per-s")
    for key in ("id", "source", "source_url", "notes"):
        row[key] = row[key].replace("MLPerf", "Vendor").replace("mlperf", "vendor")
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted is None
    assert "input_tokens or output_tokens blank" in pred.reason


def test_mlperf_row_of_an_unlisted_benchmark_says_so() -> None:
    row = _row("mlperf41-h100x8-llama2-70b-99p9-offline-output-tokens-per-s")
    for key in ("id", "source", "source_url", "model_name"):
        row[key] = row[key].replace("llama2-70b", "whisper").replace("Llama-2-70B", "Whisper")
    row["notes"] = "Tokens per second (Offline)."  # the original notes name the Llama-2-70B config
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted is None
    assert "no benchmark in catalog/data/benchmarks.yaml matches" in pred.reason


def test_mlperf_benchmark_without_a_published_mean_says_so() -> None:
    row = _row("mlperf41-h100x8-llama2-70b-99p9-offline-output-tokens-per-s")
    row["source"] = row["source"].replace("llama2-70b-99.9", "gptj-99.9")
    row["source_url"] = row["source_url"].replace("llama2-70b-99.9", "gptj-99.9")
    row["model_name"] = "GPT-J-6B"
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted is None
    assert "mlperf-inference-gpt-j has no published mean input length" in pred.reason


def test_lognormal_lengths_are_capped_at_high() -> None:
    rng = np.random.default_rng(0)
    drawn = lengths(rng, LengthDist(kind="lognormal", sigma=1.0, high=50), 40, 2000, "f")
    assert drawn.max() == 50 and drawn.min() >= 1
    # σ = 1 with mean 40: P(x > 50) = P(z > (ln 50 − ln 40 + 0.5)/1) = P(z > 0.723) ≈ 0.235 of draws are capped
    assert abs(float((drawn == 50).mean()) - 0.235) < 0.04
    assert math.isclose(float(np.median(drawn)), 40 * math.exp(-0.5), rel_tol=0.1)  # lognormal median e^μ


def test_capped_server_simulation_matches_the_full_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The validation caps a benchmark-length run at MAX_BENCHMARK_SIM_REQUESTS (100,000) for speed. On a stable queue
    that is the steady state: the MLPerf v4.1 Mixtral Server run on 8x H100 (a Poisson rate x the 600 s minimum run:
    208,800 requests in full) gives the same TTFT and TPOT means within 1 % from its first 100,000. Nearer capacity
    the queue still grows into the run's second half, so a shorter run reads a lower TPOT: the Llama-2-70B Server run
    (75/s x 600 s = 45,000 requests, never capped by the validation) at half its length."""
    from aiinfra.validation import benchmark_rows

    for metric in ("tpot", "ttft"):
        row = _row(f"mlperf41-h100x8-mixtral-8x7b-server-{metric}-s")
        capped = inference_rows.predict_row(row, row_tables())
        assert f"capped at {benchmark_rows.MAX_BENCHMARK_SIM_REQUESTS:,}" in capped.reason
        monkeypatch.setattr(benchmark_rows, "MAX_BENCHMARK_SIM_REQUESTS", 10**9)
        full = inference_rows.predict_row(row, row_tables())
        monkeypatch.undo()
        assert "208800 Poisson requests" in full.reason
        assert capped.predicted == pytest.approx(full.predicted, rel=0.01)
    row = _row("mlperf41-h100x8-llama2-70b-99p9-server-tpot-s")
    monkeypatch.setattr(benchmark_rows, "MAX_BENCHMARK_SIM_REQUESTS", 22_500)
    half = inference_rows.predict_row(row, row_tables())
    assert "capped at 22,500" in half.reason
    monkeypatch.setattr(benchmark_rows, "MAX_BENCHMARK_SIM_REQUESTS", 10**9)
    full = inference_rows.predict_row(row, row_tables())
    assert "45000 Poisson requests" in full.reason
    assert half.predicted is not None and full.predicted is not None
    assert half.predicted < full.predicted


def test_a_client_cap_truncates_the_dataset_answers_and_keeps_the_rows_mean() -> None:
    from aiinfra.validation.benchmark_rows import _capped
    from aiinfra.validation.switches import from_notes

    # the cap as notes state it: a number after max_tokens, not a formula
    assert from_notes("greedy, max_tokens 512 (suite output_tokens_max)", "inference")["max_output_tokens"] == "512"
    assert from_notes("ignore_eos=True, max_tokens=output_len", "inference")["max_output_tokens"] == ""
    # a table [4, 100, 1000] (piecewise-linear mean (52 + 550) / 2 = 301) for answers of mean 200 under a cap of 300:
    # with 100·s < 300 < 1000·s the capped table [4s, 100s, 300] has mean ((4s + 100s) / 2 + (100s + 300) / 2) / 2
    # = 51·s + 75 = 200, so s = 125 / 51
    flags: list[str] = []
    dist = _capped({"kind": "empirical", "quantiles": [4.0, 100.0, 1000.0]}, 200.0, 300, flags)
    s = 125 / 51
    assert dist["high"] == 300
    assert dist["quantiles"] == pytest.approx([4 * s, 100 * s, 300.0], rel=1e-9)
    assert "max_output_tokens 300" in flags[0]
    # the simulator's draws from that table keep the mean and never pass the cap
    drawn = lengths(np.random.default_rng(0), LengthDist(**dist), 200, 200_000, "output_lengths")  # type: ignore[arg-type]
    assert drawn.max() <= 300 and drawn.mean() == pytest.approx(200, rel=0.01)
    # a mean at the cap: every answer at the cap; a lognormal spread is cut at the cap, below a longer sample's
    assert _capped({"kind": "empirical", "quantiles": [4.0, 1000.0]}, 300.0, 300, [])["kind"] == "fixed"
    assert _capped({"kind": "lognormal", "sigma": 0.7, "high": 1024}, 200.0, 300, [])["high"] == 300
