"""Serving simulator: queueing theory, agreement with the analytic planner, determinism, properties."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra.analytic.step_time import FixedStepTime
from aiinfra.inference import estimate_inference
from aiinfra.sim.run import simulate
from aiinfra.specs.scenario import load_scenario

from .conftest import EXAMPLES, run_cli

EX = EXAMPLES / "simulate-llama70b-h100.yaml"


def test_md1_mean_wait() -> None:
    # M/D/1: Poisson arrivals λ = 0.5/s, deterministic service D = 1 s (batch of one, one output token made by
    # the prefill iteration) → mean wait W = ρ·D / (2(1 − ρ)) = 0.5 (Pollaczek–Khinchine), mean TTFT = W + D
    sc = load_scenario(EX, ["inference.request_rate_per_s=0.5", "inference.num_requests=40000",
                            "inference.output_tokens=1", "inference.simulation.output_lengths=null",
                            "inference.simulation.scheduler={kind: static, max_num_seqs: 1}"])  # fmt: skip
    res = simulate(sc, seed=3, step_model=FixedStepTime(1.0))
    assert res.summary.completed == 40000
    assert res.summary.ttft_s.mean == pytest.approx(1.5, rel=0.03)


def test_low_load_agrees_with_analytic_estimate() -> None:
    sets = ["inference.request_rate_per_s=0.02", "inference.num_requests=40", "inference.simulation=null"]
    sc = load_scenario(EX, sets)
    sim = simulate(sc, seed=0).summary
    ana = estimate_inference(load_scenario(EX, [*sets, "inference.batch=1"]))
    assert sim.ttft_s.mean == pytest.approx(ana.ttft_s, rel=0.02)
    assert sim.tpot_exclusive_s.mean == pytest.approx(ana.tpot_s, rel=0.05)


def test_same_seed_same_result_and_no_shared_state() -> None:
    sc = load_scenario(EX, ["inference.num_requests=300", "inference.request_rate_per_s=20"])
    a = simulate(sc, seed=7).records
    simulate(sc, seed=8)
    b = simulate(sc, seed=7).records
    assert np.array_equal(a.finish_s, b.finish_s) and np.array_equal(a.first_token_s, b.first_token_s)
    c = simulate(sc, seed=8).records
    assert not np.array_equal(a.finish_s, c.finish_s)


@settings(max_examples=12, deadline=None)
@given(
    rate=st.floats(1.0, 60.0),
    n=st.integers(20, 200),
    replicas=st.sampled_from([1, 2]),
    router=st.sampled_from(["round-robin", "least-outstanding-tokens"]),
    preemption=st.sampled_from(["recompute", "swap"]),
    util=st.floats(0.35, 0.9),
)
def test_properties(rate: float, n: int, replicas: int, router: str, preemption: str, util: float) -> None:
    sc = load_scenario(EX, [f"inference.request_rate_per_s={rate}", f"inference.num_requests={n}",
                            f"inference.gpu_memory_utilization={util}", "inference.plan.tp=4",
                            f"inference.simulation.replicas={replicas}", f"inference.simulation.router={router}",
                            f"inference.simulation.scheduler={{preemption: {preemption}}}"])  # fmt: skip
    res = simulate(sc, seed=1)
    r = res.records
    assert res.summary.completed == n  # requests are conserved
    assert np.all(r.first_token_s >= r.arrival_s) and np.all(r.finish_s >= r.first_token_s)  # TTFT ≤ e2e
    assert np.all(np.diff(r.queue_t_s) >= 0)  # time never runs backwards
    assert res.summary.kv_utilisation_max_frac <= 1.0 + 1e-9


def test_kv_pressure_causes_preemption() -> None:
    sc = load_scenario(EX, ["inference.request_rate_per_s=200", "inference.num_requests=400",
                            "inference.gpu_memory_utilization=0.16", "inference.weight_precision=fp8"])  # fmt: skip
    res = simulate(sc, seed=2)
    assert res.summary.completed == 400
    assert res.summary.preemptions > 0


def test_closed_loop_concurrency() -> None:
    sc = load_scenario(EX, ["inference.arrival={kind: concurrency}", "inference.concurrency=16",
                            "inference.num_requests=200", "inference.request_rate_per_s=null"])  # fmt: skip
    res = simulate(sc, seed=0)
    assert res.summary.completed == 200


def test_gamma_burstier_than_poisson() -> None:
    base = ["inference.request_rate_per_s=14", "inference.num_requests=1500"]  # below the ~18.5/s saturation
    calm = simulate(load_scenario(EX, base), seed=4).summary
    bursty = simulate(load_scenario(EX, [*base, "inference.arrival={kind: gamma, cv: 4}"]), seed=4).summary
    assert bursty.ttft_s.p99 > calm.ttft_s.p99


def test_cli_json_plot_and_max_rate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("simulate", str(EX), "--set", "inference.num_requests=200", "--plot", str(tmp_path), "--json")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    assert {"ttft_s", "tpot_exclusive_s", "tpot_inclusive_s", "itl_s", "e2e_s", "goodput_requests_per_s"} <= set(obj)
    assert (tmp_path / "timeline.svg").read_text().startswith("<svg")
    res = run_cli("simulate", str(EX), "--set", "inference.num_requests=150", "--find-max-rate", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["max_request_rate_per_s"] > 0


@pytest.mark.parametrize(
    ("sets", "words"),
    [
        (["inference.request_rate_per_s=0"], ["inference.request_rate_per_s", "> 0"]),
        (["inference.input_tokens=200000"], ["context"]),
        (["inference.arrival={kind: trace, path: /nonexistent.csv}"], ["arrival.path", "not found"]),
        (["inference.arrival={kind: gamma}"], ["inference.arrival.cv"]),
        (["inference.slo={ttft_p90_s: 0.000001}"], ["infeasible", "SLO"]),
    ],
)
def test_bad_input(sets: list[str], words: list[str]) -> None:
    extra = ["--find-max-rate"] if "slo" in sets[0] else []
    args = ["simulate", str(EX), "--set", "inference.num_requests=100", *[x for s in sets for x in ("--set", s)]]
    res = run_cli(*args, *extra)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    for w in words:
        assert w.lower() in res.stderr.lower(), res.stderr


def test_trace_with_bad_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    trace = tmp_path / "t.csv"
    trace.write_text("arrival_s,input_tokens,output_tokens\n0.0,100,10\n0.5,-3,10\n")
    res = run_cli("simulate", str(EX), "--set", f"inference.arrival={{kind: trace, path: {trace}}}")
    assert res.returncode == 2 and "trace row 2.input_tokens" in res.stderr
    trace.write_text("arrival_s,input_tokens,output_tokens\n0.0,100,10\n0.5,200,20\n1.0,50,5\n")
    res = run_cli("simulate", str(EX), "--set", f"inference.arrival={{kind: trace, path: {trace}}}", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["completed"] == 3


def test_prefix_caching_skips_shared_prefill(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = ["arrival_s,input_tokens,output_tokens,prefix_id"] + [f"{i * 2.0},2000,8,sys" for i in range(20)]
    trace = tmp_path / "p.csv"
    trace.write_text("\n".join(rows) + "\n")
    base = [f"inference.arrival={{kind: trace, path: {trace}}}", "inference.simulation.output_lengths=null"]
    off = simulate(load_scenario(EX, base), seed=0).summary
    on = simulate(load_scenario(EX, [*base, "inference.simulation.scheduler={prefix_caching: true}"]), seed=0).summary
    assert on.prefix_cache_hits == 19  # the first request computes the prefix, the other 19 reuse it
    assert off.prefix_cache_hits == 0
    # 1,999 of 2,000 prompt tokens come from the cache: a hit's TTFT is one 1-token prefill step (still
    # streaming every weight), the miss's a 2,000-token prefill
    from aiinfra.analytic.inference import InferenceModel
    from aiinfra.analytic.step_time import StepBatch

    sc = load_scenario(EX, base)
    im = InferenceModel(model=sc.model, cluster=sc.cluster, tp=8, weight_precision="fp8", kv_precision="fp8")
    assert on.ttft_s.p50 == pytest.approx(im.iteration_time_s(StepBatch.prefill(1, 1999)), rel=0.02)
    assert off.ttft_s.p50 == pytest.approx(im.iteration_time_s(StepBatch.prefill(2000)), rel=0.02)
    assert on.ttft_s.p50 < off.ttft_s.p50 / 3
