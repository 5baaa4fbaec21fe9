"""bench/replicate_spread.py: pairs of measurements of one configuration and the model-error floor they imply."""

from __future__ import annotations

import math

import pytest

from tests.conftest import bench_script

spread_mod = bench_script("replicate_spread")


def _row(row_id: str, value: float, **over: str) -> dict[str, str]:
    row = {
        "id": row_id,
        "source": "a benchmark",
        "source_url": "https://github.com/someone/bench/blob/abc/results.json",
        "notes": "",
        "derived": "",
        "engine_version": "1.0",
        "model_name": "m",
        "accelerator": "nvidia-h200-sxm-141gb",
        "num_accelerators": "8",
        "tp": "8",
        "metric": "tpot_s",
        "request_rate_per_s": "10",
        "value": str(value),
    }
    row.update(over)
    return row


def test_a_pair_is_one_publisher_s_one_configuration_measured_twice() -> None:
    rows = [
        _row("dgx", 0.100),
        _row("other-cloud", 0.125),
        _row("other-publisher", 0.2, source_url="https://github.com/else/bench/blob/abc/r.json"),
        _row("other-rate", 0.3, request_rate_per_s="5"),
    ]
    found = spread_mod.pairs(rows)
    assert [p.ids for p in found] == [("dgx", "other-cloud")]
    assert found[0].same_release
    # ln(0.100 / 0.125) = ln 0.8 = -0.22314
    assert found[0].log_ratio == pytest.approx(-0.22314, abs=1e-5)


def test_throughput_compares_per_accelerator_whatever_the_run_size_and_rate() -> None:
    rows = [
        _row("x4", 400.0, metric="output_tokens_per_s", num_accelerators="4", request_rate_per_s="3"),
        _row("x8", 1000.0, metric="output_tokens_per_s", num_accelerators="8", request_rate_per_s="7"),
    ]
    (pair,) = spread_mod.pairs(rows)
    # 400 / 4 = 100 against 1000 / 8 = 125 per accelerator
    assert pair.log_ratio == pytest.approx(math.log(100 / 125))


def test_a_pair_across_releases_is_told_apart() -> None:
    (pair,) = spread_mod.pairs([_row("old", 0.1, engine_version="0.21"), _row("new", 0.1, engine_version="1.0")])
    assert not pair.same_release


def test_the_floor_is_the_pairs_median_disagreement_over_root_two() -> None:
    rows = [_row("a", 0.100), _row("b", 0.125)]
    s = spread_mod.spread(spread_mod.pairs(rows))
    # median |ln r| = 0.22314; a model exact on the typical value: expm1(0.22314 / sqrt 2) = expm1(0.15779) = 0.17093
    assert s.median_abs_log_ratio == pytest.approx(0.22314, abs=1e-5)
    assert s.floor_median_abs_error_frac == pytest.approx(0.17093, abs=1e-4)
    # |0.100 / 0.125 - 1| = 20 % <= 25 %
    assert s.within_25pct_frac == 1.0


def test_the_shipped_open_rows_pair_the_same_run_on_two_machines() -> None:
    # the vLLM maintainers ran one command set on a DGX H200 and a Nebius H200 (same release, vllm 0.8.4): their
    # TPOT rows at 10000/500 tokens and 10 req/s differ only in the machine named in the id
    found = {p.ids: p for p in spread_mod.pairs(spread_mod.open_rows())}
    dgx = "vllmbench-dgxh200-deepseek-r1-fp8-vllm-tp8-in10000-out500-rps10-tpot-s"
    nebius = "vllmbench-nebiush200-deepseek-r1-fp8-vllm-tp8-in10000-out500-rps10-tpot-s"
    pair = found.get((dgx, nebius)) or found.get((nebius, dgx))
    assert pair is not None and pair.same_release and pair.metric == "tpot_s"
