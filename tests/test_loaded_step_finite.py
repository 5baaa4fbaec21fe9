"""bench/loaded_step.py's measured load of a finite benchmark run (benchmark_serving --num-prompts N): never more than N
sequences in flight. Expected values by hand."""

from __future__ import annotations

import pytest

from tests.conftest import bench_script


def test_a_run_of_50_requests_never_holds_more_than_50() -> None:
    # 10 req/s, 1000-token prompts, 2000-token answers, TPOT 42.1 ms: Little's law gives 10 x 2000 x 0.0421 = 842
    # in flight, but the run sends 50 prompts (all arrived within ~5 s, before the first of them finishes after
    # 2000 x 42 ms = 84 s); its 50 x 1000 prompt tokens spread over the 2000 decode steps: 25 per step.
    n, prompt = bench_script("loaded_step").measured_load(10.0, 1000, 2000, 0.0421, 50)
    assert n == pytest.approx(50.0)
    assert prompt == pytest.approx(25.0)


def test_a_steady_state_below_the_request_count_keeps_littles_law() -> None:
    # 2 req/s, I 500, L 200, TPOT 30 ms: n = 2 x 200 x 0.03 = 12 < 1000 requests; prompts per step 2 x 500 x 0.03 = 30.
    n, prompt = bench_script("loaded_step").measured_load(2.0, 500, 200, 0.03, 1000)
    assert n == pytest.approx(12.0)
    assert prompt == pytest.approx(30.0)


def test_no_stated_count_keeps_littles_law() -> None:
    n, prompt = bench_script("loaded_step").measured_load(10.0, 1000, 2000, 0.0421, None)
    assert n == pytest.approx(842.0)
    assert prompt == pytest.approx(421.0)
