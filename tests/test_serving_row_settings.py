"""Run settings a serving row states are honoured by its prediction (validation/inference_rows.py)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from aiinfra.app.tables import row_tables
from aiinfra.validation import inference_rows
from tests.conftest import bench_script

OPEN4 = Path(inference_rows.__file__).parent / "data" / "inference_serving4_open.csv"
ROW_ID = "dennislee-a100-qwen2-7b-bf16-vllm-tp1-in1024-out1024-burst1-tpot-s"


def _row(row_id: str, path: Path = OPEN4) -> dict[str, str]:
    with path.open(newline="") as fh:
        for r in csv.DictReader(line for line in fh if not line.startswith("#")):
            if r["id"] == row_id:
                return {k: v for k, v in r.items() if k != "value"}
    raise KeyError(row_id)


def test_stated_memory_share_sizes_the_kv_cache() -> None:
    """dennislee22/vLLM-benchmarking's start-up log of this run (vLLM 0.10.1.1, --gpu-memory-utilization 0.5,
    Qwen2-7B BF16 on one A100 80GB) prints "Available KV cache memory: 24.83 GiB". Qwen2-7B keeps
    28 layers x 4 KV heads x 128 dims x 2 (K and V) x 2 bytes = 57,344 bytes of KV a token, so the engine holds
    24.83 x 2**30 / 57,344 = 464,931 tokens; the prediction must use the row's 0.5, not the 0.9 default. The
    tolerance (15 %) is the model's own activation and runtime reserve, estimated rather than profiled: at a 0.5 share
    a 1 GiB difference in that reserve is 4 % of the KV memory, while the 0.9 default would give about 2.3x as many
    tokens ((0.9 - 0.5) x 79.2 GiB more)."""
    row = _row(ROW_ID)
    assert row["gpu_memory_utilization"] == "0.5"
    pred = inference_rows.predict_row(row, row_tables())
    expected_tokens = 24.83 * 2**30 / (28 * 4 * 128 * 2 * 2)
    assert pred.details["kv_capacity_tokens"] == pytest.approx(expected_tokens, rel=0.15)
    assert "gpu_memory_utilization 0.5 as the row states" in pred.reason
    row["gpu_memory_utilization"] = ""
    default = inference_rows.predict_row(row, row_tables())
    assert default.details["kv_capacity_tokens"] > 1.5 * pred.details["kv_capacity_tokens"]


def test_cookbook_runs_find_the_earlier_runs_prompts_cached() -> None:
    """The SGLang cookbook's Llama 3.1 page (5.1) deploys one server and runs sglang.bench_serving (seed 1 by
    default, a warm-up sending the run's first prompt) at 1, 16 and 100 clients with 10, 80 and 500 prompts, then
    at 1, 16 and 64 with 10, 80 and 320. Each run re-sends the earlier runs' prompts first: the 1-client run finds
    its first prompt cached (the warm-up), the 16-client run the 10 of the 1-client run, the 100- and 64-client runs
    the 80 of the 16-client run."""
    rule = bench_script("validation_prefix_cached")
    runs = {(0, 1): 10, (0, 2): 80, (0, 3): 500}
    assert rule.cached_requests((0, 1), runs, 1) == 1
    assert rule.cached_requests((0, 2), runs, 1) == 10
    assert rule.cached_requests((0, 3), runs, 1) == 80
    assert rule.cached_requests((0, 2), {(0, 1): 10, (0, 2): 4}, 1) == 4  # capped at the run's own requests
    stated = {
        "sglcookbook-a100x8-llama31-70b-bf16-sglang-tp8-in1000-out1000-c1-ttft-s": "1",
        "sglcookbook-a100x8-llama31-70b-bf16-sglang-tp8-in1000-out1000-c16-ttft-s": "10",
        "sglcookbook-a100x8-llama31-70b-bf16-sglang-tp8-in1000-out1000-c100-ttft-s": "80",
        "sglcookbook-a100x8-llama31-70b-bf16-sglang-tp8-in8000-out1000-c64-ttft-s": "80",
        "dennislee-a100-qwen2-7b-bf16-vllm-tp1-in1024-out1024-burst1-tpot-s": "",
    }
    assert {k: _row(k)["prefix_cached_requests"] for k in stated} == stated
    assert rule.main(["--check"]) == 0  # every shipped file holds what the rule gives


def test_cookbook_deepseek_scenarios_sharing_prompts_count_as_one() -> None:
    """The B200 DeepSeek-R1 page deploys once for three scenarios; its 1,000/8,000 runs (10, 80, 320 prompts) draw the
    prompts its 1,000/1,000 runs (10, 80, 500) sent before them, so each finds all of its own prompts cached; the
    8,000/1,000 runs start afresh (one prompt, the warm-up's)."""
    rule = bench_script("validation_prefix_cached")
    runs = {(0, 1): 10, (0, 2): 80, (0, 3): 500, (1, 1): 10, (1, 2): 80, (1, 3): 320}
    assert [rule.cached_requests((1, k), runs, 1) for k in (1, 2, 3)] == [10, 80, 320]
    open6 = OPEN4.with_name("inference_serving6_open.csv")
    stated = {
        "sglcookbook-b200x8-dsr1-0528-fp8-sglang-tp8-in1000-out8000-c1-ttft-s": "10",
        "sglcookbook-b200x8-dsr1-0528-fp8-sglang-tp8-in1000-out8000-c16-ttft-s": "80",
        "sglcookbook-b200x8-dsr1-0528-fp8-sglang-tp8-in8000-out1000-c16-ttft-s": "10",
        "sglcookbook-b200x8-gpt-oss-120b-mxfp4-sglang-tp8-sharegpt-c100-ttft-s": "1",
    }
    assert {k: _row(k, open6)["prefix_cached_requests"] for k in stated} == stated


def test_prompts_cached_before_the_run_shorten_the_predicted_ttft() -> None:
    row = _row("sglcookbook-a100x8-llama31-70b-bf16-sglang-tp8-in1000-out1000-c16-ttft-s")
    warm = inference_rows.predict_row(row, row_tables())
    assert "the first 10 prompts already in the server's prefix cache" in warm.reason
    cold = inference_rows.predict_row({**row, "prefix_cached_requests": ""}, row_tables())
    assert "prefix cache" not in cold.reason
    assert warm.predicted is not None and cold.predicted is not None
    assert warm.predicted < cold.predicted


def test_a_burst_is_dealt_over_the_replicas_the_accelerators_hold() -> None:
    """Two replicas of tp 1 on two accelerators behind a round-robin router (SGLang's --dp controller, the
    simulator's default router) each get half of a burst of 10 fixed-length requests, so each runs what one replica
    runs for a burst of 5: the same TTFT and TPOT (within the first request's head start on replica 0, which the
    burst's arrival order gives it), and twice the output tokens/s. Drained by one replica, the 10 requests queue
    behind each other's prefills and the TTFT grows by about the five extra prompts' prefill."""
    base = _row("dennislee-a100-qwen2-7b-bf16-vllm-tp1-in1024-out1024-burst10-tpot-s")
    tables = row_tables()

    def predicted(n: int, burst: int, metric: str) -> float:
        row = {**base, "num_accelerators": str(n), "batch_or_concurrency": str(burst), "metric": metric}
        value = inference_rows.predict_row(row, tables).predicted
        assert value is not None
        return value

    one = {m: predicted(1, 5, m) for m in ("ttft_s", "tpot_s", "output_tokens_per_s")}
    two = {m: predicted(2, 10, m) for m in ("ttft_s", "tpot_s", "output_tokens_per_s")}
    assert two["ttft_s"] == pytest.approx(one["ttft_s"], rel=0.05)
    assert two["tpot_s"] == pytest.approx(one["tpot_s"], rel=0.05)
    assert two["output_tokens_per_s"] == pytest.approx(2 * one["output_tokens_per_s"], rel=0.05)
    assert predicted(1, 10, "ttft_s") > 1.5 * one["ttft_s"]
