"""Serving rows under load (issue 29): bursts and fixed batches drained from t = 0, the benchmark clients' length
spreads, the statistic a row measured, and the per-request serving-path cost — each against a hand calculation or
the published figure its constant comes from."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch
from aiinfra.app.tables import row_tables
from aiinfra.catalog.resolve import cluster_for
from aiinfra.planning.inference import estimate
from aiinfra.planning.loaded import LoadedReplica
from aiinfra.sim.metrics import Percentiles, SimSummary
from aiinfra.specs.common import validate
from aiinfra.specs.workload import ServingWorkload
from aiinfra.validation import inference_rows, switches
from aiinfra.validation.benchmark_rows import benchmark_of, length_dists
from aiinfra.validation.rows import model_from_row

DATA = Path(inference_rows.__file__).parent / "data"
# the architecture and hardware columns of an open GPUStack row (Qwen3-8B, one H100, vLLM); tests change the load
BASE_ID = "gpustack-h100-qwen3-8b-vllm-bf16-tp1-sharegpt-c1-ttft-s"


def _base() -> dict[str, str]:
    with (DATA / "inference_serving_open.csv").open(newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["id"] == BASE_ID)
    return {**row, "notes": "| arch: test", "value": "1"}


def test_sharegpt_rows_draw_lengths_from_the_datasets_own_table() -> None:
    row = _base()
    bench = benchmark_of(row, row_tables())
    assert bench is not None and bench.id == "sharegpt-v3-serving-sampler"
    dists = length_dists(row, bench, [])
    assert bench.input_tokens.quantiles is not None and bench.output_tokens.quantiles is not None
    assert dists["input_lengths"] == {"kind": "empirical", "quantiles": list(bench.input_tokens.quantiles)}
    assert dists["output_lengths"] == {"kind": "empirical", "quantiles": list(bench.output_tokens.quantiles)}
    out = bench.output_tokens.quantiles
    # 51 points, every 2 %: the minimum is the clients' 4-token filter, the median and the maximum the published
    # p50 and max of the same counts
    assert len(out) == 51 and out[0] == 4 and out[25] == bench.output_tokens.p50 and out[-1] == bench.output_tokens.max
    # a quarter of the answers are shorter than 30 tokens (between the 24 % point, 28.5, and the 26 % point, 32.2),
    # where the lognormal of the same mean and std (σ 0.845, median 230.1·exp(−σ²/2) = 161.0) puts
    # Φ((ln 30 − ln 161.0)/0.845) = Φ(−1.99) = 2.3 %
    assert out[12] < 30 < out[13]
    # the filter of the clients' sampler bounds the prompts: nothing above 1024 tokens
    assert bench.input_tokens.max is not None and bench.input_tokens.max <= 1024


def test_a_stated_length_draw_wins_over_the_dataset_the_id_names() -> None:
    # a row whose id names ShareGPT but whose client sampled fixed-length random prompts (vllm bench serve with
    # --hf-name and no --dataset-name): the column says so, and the dataset's table is not drawn
    row = {**_base(), "length_distribution": "fixed"}
    bench = benchmark_of(row, row_tables())
    assert bench is not None and bench.id == "sharegpt-v3-serving-sampler"
    flags: list[str] = []
    assert length_dists(row, bench, flags) == {}
    assert flags == ["lengths fixed at the row's means (the client sends the requested lengths)"]


def test_the_clients_mean_tpot_weighs_every_request_once() -> None:
    """vllm bench serve and sglang.bench_serving report mean TPOT as the mean over requests of (latency − TTFT) /
    (output tokens − 1) (vllm/benchmarks/serve.py calculate_metrics), so in a burst a 3-token answer that decodes
    during two 300 ms prefill-chunk steps weighs as much as a 101-token answer decoded at 10 ms a step: mean
    (0.300 + 0.010)/2 = 0.155 s, where the token-weighted mean (the ITL) is (2·0.300 + 100·0.010)/102 = 0.0157 s."""
    import numpy as np

    from aiinfra.sim.engine import Records
    from aiinfra.sim.metrics import summarise

    rec = Records(
        arrival_s=np.array([0.0, 0.0]),
        first_token_s=np.array([0.3, 0.3]),
        finish_s=np.array([0.3 + 2 * 0.300, 0.3 + 100 * 0.010]),
        input_tokens=np.array([200, 200]),
        output_tokens=np.array([3, 101]),
        priority=np.array([0, 0]),
        itl_s=[0.300, 0.010],
        itl_weight=[2, 100],
    )
    s = summarise(rec, None)
    assert s.tpot_exclusive_s.mean == pytest.approx(0.155)
    assert s.itl_s.mean == pytest.approx(1.6 / 102)


def test_random_range_ratio_zero_rows_are_uniform_and_other_rows_fixed() -> None:
    notes = "random dataset with random_range_ratio 0.0 | arch: t"
    row = {**_base(), "id": "x-random-rps1-tpot-s", "notes": notes, **switches.from_notes(notes, "inference")}
    assert row["length_distribution"] == "uniform"
    assert benchmark_of(row, row_tables()) is None
    assert length_dists(row, None, []) == {"input_lengths": {"kind": "uniform"}, "output_lengths": {"kind": "uniform"}}
    assert length_dists({**row, "length_distribution": ""}, None, []) == {}


def _burst_row(n: int, inp: int, out: int, metric: str) -> dict[str, str]:
    return {
        **_base(),
        "id": f"test-burst-{metric}",
        "mode": "burst",
        "batch_or_concurrency": str(n),
        "input_tokens": str(inp),
        "output_tokens": str(out),
        "metric": metric,
        "kv_precision": "bf16",
    }


def test_a_burst_is_drained_from_t0_not_a_steady_state() -> None:
    """64 requests of 2,048 prompt and 101 output tokens at t = 0 on one H100 (Qwen3-8B, vLLM server defaults:
    8,192 tokens per step, decodes first). By hand: each step fills the budget left by the decodes with prompt
    tokens; a prompt whose last token is computed decodes from the next step on; once the 131,072 prompt tokens are
    in, the last prompt still needs 100 decode steps at ≤ 64 sequences. Makespan = Σ ramp steps + 100·t(decode of
    64) within 10 %; throughput = 6,464 tokens / makespan, well below the offline steady state at batch 64 (which
    has no prefill ramp)."""
    n, inp, out, budget = 64, 2048, 101, 8192
    row = _burst_row(n, inp, out, "output_tokens_per_s")
    model, _ = model_from_row(row, catalog.rows("models"))
    cluster = cluster_for(row["accelerator"], 1)
    im = InferenceModel(model=model, cluster=cluster, tp=1, pp=1, weight_precision="bf16", kv_precision="bf16")
    ramp_s, left, done = 0.0, n * inp, 0
    while left > 0:
        chunk = min(budget - done, left)
        step = StepBatch(
            prefill_tokens=chunk,
            prefill_attention_pairs=chunk * inp / 2,
            decode_seqs=done,
            decode_context_tokens=done * inp,
        )
        ramp_s += im.iteration_time_s(step)
        left -= chunk
        done = (n * inp - left) // inp
    makespan = ramp_s + (out - 1) * im.iteration_time_s(StepBatch.decode(n, inp + out // 2))
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted == pytest.approx(n * out / makespan, rel=0.10), pred.reason
    assert pred.details is not None and pred.details["makespan_s"] == pytest.approx(makespan, rel=0.10)
    # a steady state of 64 decoding sequences would give 64 tokens per decode step
    assert pred.predicted < 0.8 * n / im.iteration_time_s(StepBatch.decode(n, inp + out // 2))
    req = inference_rows.predict_row({**row, "metric": "requests_per_s"}, row_tables())
    assert req.predicted == pytest.approx(n / pred.details["makespan_s"], rel=1e-6)


def test_burst_and_batch_rows_need_the_request_count() -> None:
    row = {**_burst_row(64, 200, 100, "tpot_s"), "batch_or_concurrency": ""}
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted is None and "batch_or_concurrency" in pred.reason


def _summary(mean: float, p50: float) -> SimSummary:
    p = Percentiles(mean=mean, p50=p50, p90=p50, p99=p50)
    return SimSummary(
        requests=1,
        completed=1,
        duration_s=1.0,
        ttft_s=p,
        tpot_exclusive_s=p,
        tpot_inclusive_s=p,
        itl_s=Percentiles(mean=mean, p50=p50 / 2, p90=p50, p99=p50),
        e2e_s=p,
        output_tokens_per_s=1.0,
        requests_per_s=1.0,
        goodput_requests_per_s=None,
        slo_attainment_frac=None,
        kv_utilisation_mean_frac=0.0,
        kv_utilisation_max_frac=0.0,
        queue_length_max=0,
        running_seqs_max=0,
        preemptions=0,
        prefix_cache_hits=0,
        iterations=1,
    )


def test_a_row_that_measured_medians_is_predicted_by_medians() -> None:
    s = _summary(mean=0.30, p50=0.10)
    over = catalog.engine("vllm").request_overhead_s
    median = switches.from_notes("median_ttft_ms 85 (statistic: median)", "inference")
    assert median["statistic"] == "median"
    # the simulated summary already carries the serving-path cost (sim/metrics.py): the row takes its statistic
    assert over > 0
    assert inference_rows._sim_value(median, s, "ttft_s", "vllm", [], row_tables()) == pytest.approx(0.10)
    assert inference_rows._sim_value({"notes": ""}, s, "ttft_s", "vllm", [], row_tables()) == pytest.approx(0.30)
    # a median TPOT is the median over requests; a median inter-token latency the median token gap
    assert inference_rows._sim_value(median, s, "tpot_s", "vllm", [], row_tables()) == pytest.approx(0.10)
    itl = switches.from_notes("median_itl_ms 85 (statistic: median inter-token latency)", "inference")
    assert inference_rows._sim_value(itl, s, "tpot_s", "vllm", [], row_tables()) == pytest.approx(0.05)
    assert inference_rows._sim_value({"notes": ""}, s, "tpot_s", "vllm", [], row_tables()) == pytest.approx(0.30)


def test_vllm_request_overhead_is_the_published_ttft_less_the_forward_pass() -> None:
    """ray-project/ray#59681: bare `vllm serve`, Qwen2.5-0.5B-Instruct on an RTX 5050, one client: TTFT p50 16.9 ms.
    The forward pass reads the 0.99 GB of BF16 weights once at 80 % of 320 GB/s: 3.87 ms; the rest, 13.0 ms, is the
    serving path."""
    forward_ms = 0.99e9 / (0.8 * 320e9) * 1e3
    assert catalog.engine("vllm").request_overhead_s * 1e3 == pytest.approx(16.9 - forward_ms, abs=0.05)


def test_ttft_behind_an_api_server_pays_the_serving_path_once() -> None:
    row = _base()
    model, _ = model_from_row(row, catalog.rows("models"))
    cluster = cluster_for(row["accelerator"], 1)
    common = {"input_tokens": 200, "output_tokens": 100, "plan": {"tp": 1}}
    served = estimate(model, cluster, validate(ServingWorkload, {**common, "concurrency": 1}), usage="server")
    offline = estimate(model, cluster, validate(ServingWorkload, {**common, "concurrency": 1}), usage="offline")
    assert served.ttft_s - offline.ttft_s == pytest.approx(catalog.engine("vllm").request_overhead_s, rel=1e-9)
    assert served.tpot_s == pytest.approx(offline.tpot_s)
    assert any("serving path" in n for n in served.notes)


def test_loaded_replica_ttft_percentiles_shift_by_the_overhead() -> None:
    # decode-only iterations of d = 20 ms: an arrival waits U·d, then one more iteration (p50 = 1.5 d), plus c
    d, c = 0.02, 0.013
    rep = LoadedReplica(
        lambda b: (d, c, 1.0), lambda b: d, output_tokens=101, max_in_flight=10_000, request_overhead_s=c
    )
    p = rep.at_rate(5.0)
    assert p.ttft.p50_s == pytest.approx(1.5 * d + c, rel=1e-3)
    assert p.ttft.p99_s == pytest.approx(1.99 * d + c, rel=1e-3)
    assert math.isfinite(p.ttft_s)


def _offline_row(rid: str, **cols: str) -> dict[str, str]:
    return {
        **_base(),
        "id": rid,
        "mode": "offline",
        "batch_or_concurrency": "",
        "request_rate_per_s": "",
        "metric": "requests_per_s",
        "kv_precision": "bf16",
        **cols,
    }


def test_an_offline_set_of_stated_prompts_is_drained_with_the_datasets_lengths() -> None:
    """benchmark_throughput.py with --num-prompts 200 on ShareGPT hands 200 prompts of the dataset's lengths to the
    engine at once: simulated as that batch (the LLM class's defaults, no streaming) and drained to the last answer.
    Its rate falls well below the steady state at the same mean lengths, which keeps the batch full to the end: a
    quarter of ShareGPT's answers are under 30 tokens and the longest 1,706 (the dataset's quantile table above), so
    the last requests decode nearly alone. Without a stated number of prompts the row stays a steady state."""
    row = _offline_row("test-sharegpt-offline200", num_requests="200", input_tokens="", output_tokens="230.1")
    drained = inference_rows.predict_row(row, row_tables())
    steady = inference_rows.predict_row({**row, "num_requests": ""}, row_tables())
    assert "simulated: a batch of 200 prompts handed over at once" in drained.reason
    assert "output lengths: the dataset's own distribution" in drained.reason
    assert "analytic estimate at the mean lengths" in steady.reason
    assert drained.predicted is not None and steady.predicted is not None
    assert drained.predicted < 0.8 * steady.predicted


def test_a_fixed_length_offline_set_is_the_batch_of_the_same_prompts() -> None:
    """An offline run of 64 fixed 512/128 prompts (no dataset in its id) is the fixed batch of 64 those prompts make."""
    row = _offline_row("test-fixed-offline64", num_requests="64", input_tokens="512", output_tokens="128")
    offline = inference_rows.predict_row(row, row_tables())
    batch = inference_rows.predict_row(
        {**row, "mode": "batch", "batch_or_concurrency": "64", "num_requests": ""}, row_tables()
    )
    assert "lengths fixed at the row's means" in offline.reason
    assert offline.predicted == pytest.approx(batch.predicted, rel=1e-9)
