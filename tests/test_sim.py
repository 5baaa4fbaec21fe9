"""Serving simulator: queueing theory, agreement with the analytic planner, determinism, properties."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra import catalog
from aiinfra.analytic.step_time import FixedStepTime, StepBatch
from aiinfra.catalog.resolve import load_scenario
from aiinfra.errors import InfeasibleError
from aiinfra.planning.inference import estimate_inference
from aiinfra.sim import run as run_module
from aiinfra.sim.metrics import SimSummary
from aiinfra.specs.scenario import Scenario
from aiinfra.specs.workload import Slo

from .conftest import EXAMPLES, run_cli, sim_max_rate, sim_run
from .test_sim_kernel import LinearStep

EX = EXAMPLES / "simulate-llama70b-h100.yaml"


def test_md1_mean_wait() -> None:
    # M/D/1: Poisson arrivals λ = 0.5/s, deterministic service D = 1 s (batch of one, one output token made by
    # the prefill iteration) → mean wait W = ρ·D / (2(1 − ρ)) = 0.5 (Pollaczek–Khinchine), mean TTFT = W + D
    sc = load_scenario(
        EX,
        [
            "inference.request_rate_per_s=0.5",
            "inference.num_requests=40000",
            "inference.output_tokens=1",
            "inference.simulation.output_lengths=null",
            "inference.simulation.scheduler={kind: static, max_num_seqs: 1}",
        ],
    )
    res = sim_run(sc, seed=3, step_model=FixedStepTime(1.0))
    assert res.summary.completed == 40000
    assert res.summary.ttft_s.mean == pytest.approx(1.5, rel=0.03)


def _analytic_step_model_or_skip() -> None:
    mod = pytest.importorskip("aiinfra.analytic.inference")
    if not any(callable(getattr(c, "iteration_time_s", None)) for c in vars(mod).values() if isinstance(c, type)):
        pytest.skip("no analytic StepTimeModel yet")


def test_low_load_agrees_with_analytic_estimate() -> None:
    # one request at a time (λ = 0.02/s, service ≈ 8 s): the simulated TTFT and TPOT are the analytic
    # batch-1 estimates of `aiinfra infer` (same step-time function)
    _analytic_step_model_or_skip()
    sets = ["inference.request_rate_per_s=0.02", "inference.num_requests=40", "inference.simulation=null"]
    sc = load_scenario(EX, sets)
    sim = sim_run(sc, seed=0).summary
    ana = estimate_inference(load_scenario(EX, [*sets, "inference.batch=1"]))
    assert sim.ttft_s.mean == pytest.approx(ana.ttft_s, rel=0.02)
    assert sim.tpot_exclusive_s.mean == pytest.approx(ana.tpot_s, rel=0.05)


def test_same_seed_same_result_and_no_shared_state() -> None:
    sc = load_scenario(EX, ["inference.num_requests=300", "inference.request_rate_per_s=20"])
    a = sim_run(sc, seed=7).records
    sim_run(sc, seed=8)
    b = sim_run(sc, seed=7).records
    assert np.array_equal(a.finish_s, b.finish_s) and np.array_equal(a.first_token_s, b.first_token_s)
    c = sim_run(sc, seed=8).records
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
    sc = load_scenario(
        EX,
        [
            f"inference.request_rate_per_s={rate}",
            f"inference.num_requests={n}",
            f"inference.gpu_memory_utilization={util}",
            "inference.plan.tp=4",
            f"inference.simulation.replicas={replicas}",
            f"inference.simulation.router={router}",
            f"inference.simulation.scheduler={{preemption: {preemption}}}",
        ],
    )
    res = sim_run(sc, seed=1)
    r = res.records
    assert res.summary.completed == n  # requests are conserved
    assert np.all(r.first_token_s >= r.arrival_s) and np.all(r.finish_s >= r.first_token_s)  # TTFT ≤ e2e
    assert np.all(np.diff(r.sample_t_s) >= 0)  # time never runs backwards
    assert res.summary.kv_utilisation_max_frac <= 1.0 + 1e-9


def test_kv_pressure_causes_preemption() -> None:
    sc = load_scenario(
        EX,
        [
            "inference.request_rate_per_s=200",
            "inference.num_requests=400",
            "inference.gpu_memory_utilization=0.175",
            "inference.weight_precision=fp8",
        ],
    )
    res = sim_run(sc, seed=2)
    assert res.summary.completed == 400
    assert res.summary.preemptions > 0


def test_closed_loop_concurrency() -> None:
    sc = load_scenario(
        EX,
        [
            "inference.arrival={kind: concurrency}",
            "inference.concurrency=16",
            "inference.num_requests=200",
            "inference.request_rate_per_s=null",
        ],
    )
    res = sim_run(sc, seed=0)
    assert res.summary.completed == 200
    # every client starts at t = 0, the first reaching the engine alone and the rest an instant after it
    followers = res.records.arrival_s[1:16]
    assert res.records.arrival_s[0] == 0.0 and np.all((followers > 0.0) & (followers < 1e-9))
    # a ramp of 8 s: the 16 clients' first requests at 0, 0.5, 1, ... 7.5 s; later ones at earlier answers' ends
    sets = [
        "inference.arrival={kind: concurrency, ramp_s: 8}",
        "inference.concurrency=16",
        "inference.num_requests=200",
        "inference.request_rate_per_s=null",
    ]
    ramped = sim_run(load_scenario(EX, sets), seed=0)
    assert ramped.records.arrival_s[:16] == pytest.approx([0.5 * i for i in range(16)])
    assert np.all(np.diff(ramped.records.arrival_s[16:]) >= 0.0)
    assert ramped.summary.completed == 200


def test_an_offline_batch_is_handed_over_whole() -> None:
    # the LLM class of an offline benchmark adds every prompt before the engine steps (no API server, no streaming):
    # the batch's requests all reach the engine at t = 0, where a burst through the API server reaches it one at a
    # time (test_closed_loop_concurrency)
    sets = [
        "inference.arrival={kind: concurrency}",
        "inference.concurrency=8",
        "inference.num_requests=8",
        "inference.request_rate_per_s=null",
        "inference.output_tokens=4",
        "inference.simulation.output_lengths=null",
    ]
    offline = sim_run(load_scenario(EX, [*sets, "inference.simulation.streaming=false"]), seed=0)
    assert np.all(offline.records.arrival_s == 0.0)
    served = sim_run(load_scenario(EX, sets), seed=0)
    assert served.records.arrival_s[0] == 0.0 and np.all(served.records.arrival_s[1:] > 0.0)


def test_gamma_burstier_than_poisson() -> None:
    # G/D/1 at ρ = 0.7 (static batch of one, D = 1 s). Kingman: W ≈ ρ/(1 − ρ) · (c_a² + c_s²)/2 · D: Poisson
    # (c_a = 1) 1.17 s; gamma with c_a = 3 gives 5 × that, 5.8 s. Assert a conservative 3×.
    base = [
        "inference.request_rate_per_s=0.7",
        "inference.num_requests=20000",
        "inference.output_tokens=1",
        "inference.simulation.output_lengths=null",
        "inference.simulation.scheduler={kind: static, max_num_seqs: 1}",
    ]
    calm = sim_run(load_scenario(EX, base), seed=4, step_model=FixedStepTime(1.0)).summary
    bursty = sim_run(
        load_scenario(EX, [*base, "inference.arrival={kind: gamma, cv: 3}"]), seed=4, step_model=FixedStepTime(1.0)
    ).summary
    assert calm.ttft_s.mean - 1.0 == pytest.approx(0.7 / 0.3 / 2, rel=0.1)
    assert bursty.ttft_s.mean - 1.0 > 3 * (calm.ttft_s.mean - 1.0)


def test_duration_bounds_the_arrivals() -> None:
    # Poisson at 50/s for 20 s: ≈ 1,000 arrivals (σ ≈ 32), all before 20 s
    sc = load_scenario(
        EX, ["inference.num_requests=null", "inference.duration_s=20", "inference.request_rate_per_s=50"]
    )
    r = sim_run(sc, seed=5, step_model=FixedStepTime(0.01)).records
    assert 850 < len(r.arrival_s) < 1150 and float(r.arrival_s.max()) < 20.0


def test_speculative_decoding_scenario() -> None:
    # α = 0.5, γ = 3: (1 − 0.5⁴)/(1 − 0.5) = 1.875 tokens per step (Leviathan et al. 2023). 16 output tokens:
    # 1 from the prefill, ceil(15 / 1.875) = 8 decode steps → 9 fixed 1-s steps end to end at low load.
    sc = load_scenario(
        EX,
        [
            "inference.num_requests=5",
            "inference.request_rate_per_s=0.01",
            "inference.output_tokens=16",
            "inference.simulation.output_lengths=null",
            "inference.speculative={num_draft_tokens: 3, acceptance_rate: 0.5}",
        ],
    )
    res = sim_run(sc, seed=0, step_model=FixedStepTime(1.0))
    assert res.limits.tokens_per_step == pytest.approx(1.875)
    # plus the engine's serving-path cost per request (engines.yaml request_overhead_ms), outside the engine's steps
    assert res.summary.e2e_s.mean == pytest.approx(9.0 + res.request_overhead_s)


def test_speculative_step_prices_verification_and_draft() -> None:
    from aiinfra.sim.run import SpeculativeStep

    seen: list[StepBatch] = []

    class Probe:
        def iteration_time_s(self, batch: StepBatch) -> float:
            seen.append(batch)
            return 1.0

    # γ = 3: 10 decoding sequences verify 4 tokens each through the target (as `aiinfra infer` prices it) in
    # one pass over their 1000 context tokens; the draft model decodes 3 times → 1 + 3 · 1 = 4 s
    t = SpeculativeStep(Probe(), 3, Probe()).iteration_time_s(StepBatch(decode_seqs=10, decode_context_tokens=1000))
    assert t == 4.0
    assert (seen[0].decode_seqs, seen[0].decode_queries_per_seq, seen[0].decode_tokens) == (10, 4, 40)
    assert seen[0].decode_context_tokens == 1000
    assert seen[1] == StepBatch(decode_seqs=10, decode_context_tokens=1000)


def test_max_rate_search_hand_derived() -> None:
    # Nearly deterministic arrivals (gamma, CV 0.001) into one server with D = 1 s: below 1/s nobody waits;
    # above, request i waits i·(1 − 1/λ). 200 requests, TTFT p90 ≤ 1.5 s ⇒ 0.9·199·(1 − 1/λ) ≤ 0.5 ⇒
    # λ ≤ 1.0028/s. Start 1.5/s → halve to 0.75 (met) → 8 bisections of [0.75, 1.5]: within 0.003 below.

    sc = load_scenario(
        EX,
        [
            "inference.num_requests=200",
            "inference.output_tokens=1",
            "inference.simulation.output_lengths=null",
            "inference.arrival={kind: gamma, cv: 0.001}",
            "inference.simulation.scheduler={kind: static, max_num_seqs: 1}",
            "inference.slo={ttft_p90_s: 1.5}",
        ],
    )
    rate, points = sim_max_rate(sc, start_rate_per_s=1.5, step_model=FixedStepTime(1.0))
    assert 0.999 <= rate <= 1.0028
    assert len(points) == 10 and all(p.meets_slo == (p.request_rate_per_s <= rate) for p in points)
    # unloaded TTFT: the 1-s step plus the engine's serving-path cost per request (vLLM 13 ms, engines.yaml)
    with pytest.raises(InfeasibleError, match="TTFT p90 1013 ms > 500 ms"):
        sim_max_rate(replace_slo(sc, 0.5), start_rate_per_s=1.5, step_model=FixedStepTime(1.0))


def replace_slo(sc: Scenario, ttft_s: float) -> Scenario:
    assert sc.inference is not None
    return dataclasses.replace(sc, inference=dataclasses.replace(sc.inference, slo=Slo(ttft_p90_s=ttft_s)))


def test_cli_json_plot_and_max_rate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("simulate", str(EX), "--set", "inference.num_requests=200", "--plot", str(tmp_path), "--json")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    assert {"ttft_s", "tpot_exclusive_s", "tpot_inclusive_s", "itl_s", "e2e_s", "goodput_requests_per_s"} <= set(obj)
    for stem in ("timeline", "kv_timeline", "latency_distribution"):
        assert (tmp_path / f"{stem}.svg").read_text().lstrip().startswith("<?xml")
        assert (tmp_path / f"{stem}.png").stat().st_size > 0
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
    off = sim_run(load_scenario(EX, base), seed=0).summary
    on = sim_run(load_scenario(EX, [*base, "inference.simulation.scheduler={prefix_caching: true}"]), seed=0).summary
    assert on.prefix_cache_hits == 19  # the first request computes the prefix, the other 19 reuse it
    assert off.prefix_cache_hits == 0
    # 1,999 of 2,000 prompt tokens come from the cache: a hit's TTFT is one 1-token prefill step (still
    # streaming every weight), the miss's a 2,000-token prefill
    from aiinfra.analytic.inference import InferenceModel
    from aiinfra.analytic.step_time import StepBatch

    sc = load_scenario(EX, base)
    assert sc.inference is not None
    im = InferenceModel(
        model=sc.model, cluster=sc.cluster, tp=8, weight_precision="fp8", kv_precision="fp8", engine=sc.inference.engine
    )  # the engine's kernel timings, as the simulator uses
    # each TTFT also carries the engine's serving-path cost per request (engines.yaml request_overhead_ms)
    req_s = catalog.engine(sc.inference.engine).request_overhead_s
    assert on.ttft_s.p50 == pytest.approx(im.iteration_time_s(StepBatch.prefill(1, 1999)) + req_s, rel=0.02)
    assert off.ttft_s.p50 == pytest.approx(im.iteration_time_s(StepBatch.prefill(2000)) + req_s, rel=0.02)
    assert on.ttft_s.p50 < off.ttft_s.p50 / 3


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("arrival_s,input_tokens,output_tokens\n0.0,100,10\n0.5,nan,10\n", ["trace row 2.input_tokens", "finite"]),
        ("arrival_s,input_tokens,output_tokens\n0.0,100.5,10\n", ["trace row 1.input_tokens", "whole number"]),
        ("arrival_s,input_tokens,output_tokens,priority\n0.0,100,10,high\n", ["trace row 1.priority", "not a number"]),
        ("arrival_s,input_tokens\n0.0,100\n", ["trace row 1.output_tokens", "missing"]),
        ("arrival_s,input_tokens,output_tokens\n-1,100,10\n", ["trace row 1.arrival_s", "≥ 0"]),
        ("arrival_s,input_tokens,output_tokens\n0,200000,10\n", ["max_seq_len"]),
    ],
)
def test_bad_trace(tmp_path, text: str, words: list[str]) -> None:  # type: ignore[no-untyped-def]
    trace = tmp_path / "t.csv"
    trace.write_text(text)
    res = run_cli("simulate", str(EX), "--set", f"inference.arrival={{kind: trace, path: {trace}}}")
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in res.stderr, res.stderr


@pytest.mark.parametrize(
    ("sets", "words"),
    [
        (["inference.simulation.output_lengths={kind: lognormal}"], ["output_lengths.sigma"]),
        (["inference.simulation.replicas=2"], ["replicas", "need 16 accelerators"]),
        (["inference.simulation.disaggregation={prefill_replicas: 1, decode_replicas: 1}"], ["need 16"]),
        (["inference.simulation.scheduler={kind: batched}"], ["scheduler.kind"]),
    ],
)
def test_bad_simulation_settings(sets: list[str], words: list[str]) -> None:
    res = run_cli("simulate", str(EX), "--set", "inference.num_requests=50", *[x for s in sets for x in ("--set", s)])
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in res.stderr, res.stderr


def test_trace_example_and_disaggregation_cli(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ex = EXAMPLES / "simulate-trace-priority.yaml"
    obj = json.loads(run_cli("simulate", str(ex), "--json").stdout)
    assert obj["completed"] == 60 and obj["prefix_cache_hits"] > 0
    assert [c["priority"] for c in obj["priority_classes"]] == [0, 1]
    res = run_cli(
        "simulate",
        str(ex),
        "--json",
        "--plot",
        str(tmp_path),
        "--set",
        "inference.simulation.disaggregation={prefill_replicas: 1, decode_replicas: 1}",
    )
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    assert obj["completed"] == 60 and "disaggregated" in obj["notes"][0]
    assert "<svg" in (tmp_path / "kv_timeline.svg").read_text()


def test_engine_sets_the_simulated_allocator() -> None:
    # engines.yaml: vLLM allocates 16-token blocks as tokens arrive; TensorRT-LLM 32-token blocks, the whole
    # context reserved at admission (GUARANTEED_NO_EVICT), its server defaults 2,048 sequences / 8,192 tokens
    from aiinfra.planning.inference import model_for
    from aiinfra.sim.run import limits_for

    for engine, block, full in (("vllm", 16, False), ("trtllm", 32, True)):
        sc = load_scenario(EX, [f"inference.engine={engine}"])
        assert sc.inference is not None
        lim = limits_for(
            sc, sc.inference, model_for(sc.model, sc.cluster, sc.inference), engine=catalog.engine(sc.inference.engine)
        )
        assert (lim.block_tokens, lim.reserve_full_context) == (block, full)
        assert lim.kv_capacity_tokens % block == 0
    assert lim.max_num_seqs == 2048 and lim.max_num_batched_tokens == 8192


def test_max_clients_search_hand_derived() -> None:
    # Closed loop, 1-token prompts and 20-token answers, a toy step of 1 ms per token it computes. With c clients
    # each always has one request in flight (the next one arrives as the last answer ends), so every step
    # computes c tokens (one prefill or decode per client) and lasts c ms: TPOT = c ms. SLO TPOT p99 ≤ 50.5 ms
    # ⇒ at most 50 clients. Start 30 (met) → 60 (missed) → bisect to 50.

    sc = load_scenario(
        EX,
        [
            "inference.input_tokens=1",
            "inference.output_tokens=20",
            "inference.simulation.output_lengths=null",
            "inference.request_rate_per_s=null",
            # no overlap scheduler: a request that arrives joins the very next step
            "inference.simulation.scheduler="
            "{max_num_seqs: 256, max_num_batched_tokens: 4096, overlap_scheduling: false}",
            "inference.slo={tpot_p99_s: 0.0505}",
        ],
    )
    # the toy has no serving path between the clients and the engine (request_overhead_s 0), so a client's next
    # request reaches the engine as its last answer ends
    from aiinfra.app.tables import serving_tables
    from aiinfra.sim.search import max_clients_meeting_slo

    tables = serving_tables(sc)
    tables = dataclasses.replace(tables, engine=dataclasses.replace(tables.engine, request_overhead_s=0.0))
    clients, points = max_clients_meeting_slo(sc, start_clients=30, step_model=LinearStep(0.0, 0.001), tables=tables)
    assert clients == 50
    by = {p.clients: p for p in points}
    assert by[50].tpot_p99_s == pytest.approx(0.050) and by[51].tpot_p99_s == pytest.approx(0.051)
    assert all(p.meets_slo == (p.clients <= 50) for p in points)
    with pytest.raises(InfeasibleError, match="one client alone"):
        max_clients_meeting_slo(sc, start_clients=4, step_model=LinearStep(0.0, 0.1), tables=tables)


def test_closed_loop_client_waits_out_the_serving_path() -> None:
    # One client, 5 requests of 4 output tokens, every engine step 0.1 s: a request takes 4 steps in the engine
    # (the prefill step gives the first token). Its client sees the last token r after the engine made it and its
    # next request reaches the engine r after it was sent, r + r' = the serving path's cost per request c
    # (request_overhead_s, vLLM 13 ms). So the engine sees request i at i·(0.4 + c), not at i·0.4; the client sees
    # TTFT 0.1 + c and an answer every 0.4 + c s; the run lasts 5·0.4 + 4·c.
    sc = load_scenario(
        EX,
        [
            "inference.arrival={kind: concurrency}",
            "inference.concurrency=1",
            "inference.num_requests=5",
            "inference.request_rate_per_s=null",
            "inference.output_tokens=4",
            "inference.simulation.output_lengths=null",
        ],
    )
    res = sim_run(sc, seed=0, step_model=FixedStepTime(0.1))
    c = res.request_overhead_s
    assert c == pytest.approx(0.013)
    assert res.records.arrival_s == pytest.approx([i * (0.4 + c) for i in range(5)])
    assert res.summary.ttft_s.mean == pytest.approx(0.1 + c)
    assert res.summary.e2e_s.mean == pytest.approx(0.4 + c)
    assert float(res.records.finish_s.max()) == pytest.approx(5 * 0.4 + 4 * c)


def test_benchmark_closed_loop_scores_the_opening_burst() -> None:
    # vllm bench serve / sglang.bench_serving at --max-concurrency 2 --num-prompts 3, request rate inf: requests 0
    # and 1 leave at once, request 2 when the first answer ends, and every request is averaged. Step time
    # 1 ms per token (LinearStep), prompts of 100 tokens, answers of 2, serving-path cost c per request. Request 0
    # reaches the idle engine first and runs alone; request 1 arrives an instant later, during that iteration, and
    # (vLLM's async scheduling: overlap_admission) joins the iteration after the next:
    #   [0, 0.1]          prefill 0 (100 tokens): its first token at 0.1
    #   [0.1, 0.101]      decode 0: answer 0 ends at 0.101
    #   [0.101, 0.201]    prefill 1: its first token at 0.201
    #   [0.201, 0.202]    decode 1
    #   request 2 reaches the engine at 0.101 + c (the return path; c = 13 ms, during the prefill of 1), so it joins
    #   [0.202, 0.302] (first token at 0.302) and decodes [0.302, 0.303]
    # TTFT as the client sees it (+ c each): 0.1 + c, 0.201 + c, 0.302 - (0.101 + c) + c = 0.201: mean
    # (0.502 - c) / 3 + c, median 0.201; TPOT (finish - first) / (2 - 1): 0.001 each; the run lasts from the first
    # arrival to the last finish, 0.303, and its throughput is 6 tokens over it. closed_loop_run would leave
    # requests 0 and 1 out.
    from aiinfra.app.tables import serving_tables
    from aiinfra.sim.search import benchmark_closed_loop_run

    sc = load_scenario(
        EX,
        [
            "inference.input_tokens=100",
            "inference.output_tokens=2",
            "inference.simulation.output_lengths=null",
        ],
    )
    tables = serving_tables(sc)
    c = tables.engine.request_overhead_s
    s = benchmark_closed_loop_run(sc, 2, 3, step_model=LinearStep(0.0, 0.001), tables=tables)
    assert (s.requests, s.completed) == (3, 3)
    assert s.ttft_s.mean == pytest.approx((0.502 - c) / 3 + c)
    assert s.ttft_s.p50 == pytest.approx(0.201)
    assert s.tpot_exclusive_s.mean == pytest.approx(0.001)
    assert s.duration_s == pytest.approx(0.303)
    assert s.output_tokens_per_s == pytest.approx(6 / 0.303)


def _closed_loop_of_127_token_prompts(setting: str) -> tuple[SimSummary, float]:
    """The summary of 2 clients sending 3 requests of 127-token prompts and 2-token answers at 1 ms per token with
    ``setting`` (an ``inference.simulation`` override), and the engine's serving-path cost per request."""
    from aiinfra.app.tables import serving_tables
    from aiinfra.sim.search import benchmark_closed_loop_run

    base = ["inference.input_tokens=127", "inference.output_tokens=2", "inference.simulation.output_lengths=null"]
    sc = load_scenario(EX, [*base, f"inference.simulation.{setting}"])
    tables = serving_tables(sc)
    summary = benchmark_closed_loop_run(sc, 2, 3, step_model=LinearStep(0.0, 0.001), tables=tables)
    return summary, tables.engine.request_overhead_s


def test_prompts_cached_before_the_run_prefill_only_their_last_token() -> None:
    # As test_benchmark_closed_loop_scores_the_opening_burst (2 clients, 3 requests, answers of 2 tokens, 1 ms per
    # token, serving-path cost c, request 0 alone first and request 1 two iterations later), prompts of 127 tokens
    # (the simulator memoises step times in 64-token prefill buckets; 128 and 127 fall in different ones), on a
    # server that already served request 0's prompt (prefix_cached_requests 1, e.g. an earlier run of the same
    # seeded client): its prefill computes only the prompt's last token (SGLang matches at most input_len - 1
    # tokens), so
    #   [0, 0.001]         prefill 0 (1 token): its first token at 0.001
    #   [0.001, 0.002]     decode 0: answer 0 ends at 0.002
    #   [0.002, 0.129]     prefill 1 (127 tokens, cold): first token at 0.129; [0.129, 0.130] decode 1
    #   request 2 (cold) reaches the engine at 0.002 + c, during the prefill of 1: prefill [0.130, 0.257], decode to
    #   0.258
    # TTFT 0.001 + c, 0.129 + c, 0.257 - (0.002 + c) + c: mean (0.385 - c) / 3 + c; the run lasts 0.258. Cold:
    # prefill 0 [0, 0.127], decode to 0.128, prefill 1 [0.128, 0.255], decode to 0.256; request 2 at 0.128 + c,
    # prefilled [0.256, 0.383]: TTFT 0.127 + c, 0.255 + c, 0.383 - (0.128 + c) + c, mean (0.637 - c) / 3 + c.
    s, c = _closed_loop_of_127_token_prompts("prefix_cached_requests=1")
    assert (s.completed, s.prefix_cache_hits) == (3, 1)
    assert s.ttft_s.mean == pytest.approx((0.385 - c) / 3 + c)
    assert s.duration_s == pytest.approx(0.258)
    assert s.output_tokens_per_s == pytest.approx(6 / 0.258)
    s0, _ = _closed_loop_of_127_token_prompts("prefix_cached_requests=0")
    assert (s0.ttft_s.mean, s0.prefix_cache_hits) == (pytest.approx((0.637 - c) / 3 + c), 0)


def test_an_earlier_run_at_a_shorter_nominal_length_leaves_each_prompts_head_cached() -> None:
    # As test_prompts_cached_before_the_run_prefill_only_their_last_token, with every prompt's head cached by an
    # earlier run of the same seeded benchmark at nominal 64 tokens (prefix_cached_modulo_tokens 64): a prompt of
    # 127 tokens finds its first ((127 - 1) mod 64) + 1 = 63 tokens cached and prefills the other 64, so
    #   [0, 0.064] prefill 0: first token at 0.064; [0.064, 0.065] decode 0: answer 0 ends at 0.065
    #   [0.065, 0.129] prefill 1: first token at 0.129; [0.129, 0.130] decode 1
    #   request 2 reaches the engine at 0.065 + c: prefill [0.130, 0.194], decode to 0.195
    # TTFT 0.064 + c, 0.129 + c, 0.194 - (0.065 + c) + c: mean (0.322 - c) / 3 + c; the run lasts 0.195.
    s, c = _closed_loop_of_127_token_prompts("prefix_cached_modulo_tokens=64")
    assert (s.completed, s.prefix_cache_hits) == (3, 3)
    assert s.ttft_s.mean == pytest.approx((0.322 - c) / 3 + c)
    assert s.duration_s == pytest.approx(0.195)


def test_the_cached_head_is_the_shorter_runs_draw() -> None:
    # sglang.bench_serving draws each length as np.random.randint(1, nominal + 1) after np.random.seed(seed); for
    # power-of-two nominals NumPy's legacy bounded draw masks the same 32-bit words, so the run at 4,096 drew the
    # low bits of the run at 8,192's lengths: ((L - 1) mod 4096) + 1, the head prefix_cached_modulo_tokens caches
    np.random.seed(1)
    longer = np.random.randint(1, 8193, size=1000)
    np.random.seed(1)
    shorter = np.random.randint(1, 4097, size=1000)
    assert np.array_equal(shorter, (longer - 1) % 4096 + 1)
    ids, heads = run_module._warm_prefixes(np.array([3000, 1000, 2048, 2049]), 0, 2048)
    assert ids is not None and heads is not None
    assert ids.tolist() == [0, 1, 2, 3]
    assert heads.tolist() == [952, 1000, 2048, 1]


def test_prompts_cached_before_the_run_are_refused_with_a_trace(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from aiinfra.errors import SpecError

    trace = tmp_path / "t.csv"
    trace.write_text("arrival_s,input_tokens,output_tokens\n0.0,100,10\n")
    sc = load_scenario(
        EX,
        [f"inference.arrival={{kind: trace, path: {trace}}}", "inference.simulation.prefix_cached_requests=1"],
    )
    with pytest.raises(SpecError, match="prefix_cached_requests"):
        sim_run(sc, seed=0)
