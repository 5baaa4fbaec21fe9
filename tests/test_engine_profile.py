"""Engine scheduler defaults. Expected values are vLLM's, read from vllm/engine/arg_utils.py
(EngineArgs._set_default_args @ 99d7eb5d): device memory >= 70 GiB and no "a100" in the device name →
LLM class 16384 tokens / 1024 seqs, OpenAI API server 8192 / 1024; otherwise 8192 / 256 and 2048 / 256;
a defaulted max_num_seqs is min(default, max_num_batched_tokens). TensorRT-LLM: max_num_tokens 8192,
max_batch_size 2048 (LLM API reference)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.app.tables import row_tables
from aiinfra.catalog.resolve import cluster_for, load_scenario
from aiinfra.planning.engine_profile import scheduler_defaults, trtllm_bench_limits
from aiinfra.planning.inference import estimate, workload_usage
from aiinfra.sim.run import limits_for
from aiinfra.specs.common import validate
from aiinfra.specs.workload import ServingWorkload
from aiinfra.validation import inference_rows
from aiinfra.validation.inference_rows import predict_row
from aiinfra.validation.runner import read_cases

from .conftest import EXAMPLES


@pytest.mark.parametrize(
    ("accelerator", "usage", "tokens", "seqs"),
    [
        ("nvidia-h100-sxm5-80gb", "offline", 16384, 1024),  # 80 GiB ≥ 70
        ("nvidia-h100-sxm5-80gb", "server", 8192, 1024),
        ("nvidia-rtx-pro-6000", "server", 8192, 1024),  # 96 GiB ≥ 70
        ("nvidia-a100-sxm4-80gb", "offline", 8192, 256),  # 80 GiB, but the name holds "a100"
        ("nvidia-a100-sxm4-80gb", "server", 2048, 256),
        ("nvidia-l40s", "server", 2048, 256),  # 48 GB = 44.7 GiB < 70
        ("nvidia-l40s", "offline", 8192, 256),
    ],
)
def test_vllm_defaults_by_device_and_usage(accelerator: str, usage: str, tokens: int, seqs: int) -> None:
    sd = scheduler_defaults(catalog.engine("vllm"), catalog.accelerator(accelerator), usage)  # type: ignore[arg-type]
    assert (sd.max_num_batched_tokens, sd.max_num_seqs) == (tokens, seqs)


def test_trtllm_defaults_do_not_depend_on_device() -> None:
    for acc in ("nvidia-h100-sxm5-80gb", "nvidia-l40s"):
        sd = scheduler_defaults(catalog.engine("trtllm"), catalog.accelerator(acc), "server")
        assert (sd.max_num_batched_tokens, sd.max_num_seqs) == (8192, 2048)


def _wl(**kw: object) -> ServingWorkload:
    return validate(ServingWorkload, {"input_tokens": 1000, "output_tokens": 1000} | kw)


def test_usage_context_of_a_workload() -> None:
    assert workload_usage(_wl(batch="max")) == "offline"
    assert workload_usage(_wl(batch=8)) == "offline"
    assert workload_usage(_wl(request_rate_per_s=2.0)) == "server"
    assert workload_usage(_wl(concurrency=16)) == "server"


def test_infer_uses_the_offline_budget_on_h100_and_the_server_budget_under_load() -> None:
    m = catalog.model("meta-llama-3.1-8b")
    c = cluster_for("nvidia-h100-sxm5-80gb", 1)
    short = {"input_tokens": 100, "output_tokens": 100, "batch": "max"}
    # KV room ≈ 0.9 · 80 GiB − 16 GB of bf16 weights ≈ 57 GB / 131,072 B per token ≈ 430k tokens, i.e.
    # ~2,700 sequences of 160 tokens: the scheduler limits, not the KV cache, set the batch below
    off = estimate(m, c, _wl(**short))
    assert any("max_num_batched_tokens 16384, max_num_seqs 1024" in n for n in off.notes)
    # offline budget 16384: B·(1 + in/out) ≤ budget → B ≤ 8192; the 1024-sequence cap binds
    assert off.batch_seqs == 1024
    srv = estimate(m, c, _wl(**short), usage="server")
    # server budget 8192 → B ≤ 4096; cap 1024 binds
    assert any("max_num_batched_tokens 8192" in n for n in srv.notes) and srv.batch_seqs == 1024
    a100 = estimate(m, cluster_for("nvidia-a100-sxm4-80gb", 1), _wl(**short), usage="server")
    # A100: budget 2048 → B ≤ 1024; cap 256 binds
    assert a100.batch_seqs == 256
    # a scenario's scheduler settings win over the defaults
    own = estimate(m, c, _wl(**short, simulation={"scheduler": {"max_num_seqs": 100}}))
    assert own.batch_seqs == 100


def test_simulator_limits_use_server_defaults_and_cap_seqs_at_the_budget() -> None:
    sc = load_scenario(EXAMPLES / "simulate-llama70b-h100.yaml", ["inference.simulation.output_lengths=null"])
    wl = sc.inference
    assert wl is not None
    tp = wl.plan.tp if wl.plan else 1
    im = InferenceModel(model=sc.model, cluster=sc.cluster, tp=tp, weight_precision=wl.weight_precision)
    lim = limits_for(sc, wl, im, engine=catalog.engine(wl.engine))
    assert (lim.max_num_batched_tokens, lim.max_num_seqs) == (8192, 1024)  # H100, API server
    sc2 = load_scenario(
        EXAMPLES / "simulate-llama70b-h100.yaml", ["inference.simulation.scheduler={max_num_batched_tokens: 512}"]
    )
    assert sc2.inference is not None
    lim2 = limits_for(sc2, sc2.inference, im, engine=catalog.engine(sc2.inference.engine))
    assert (lim2.max_num_batched_tokens, lim2.max_num_seqs) == (512, 512)  # min(1024, 512), as vLLM caps it


def test_row_notes_scheduler_settings_override_defaults() -> None:
    _, cases = read_cases(Path(inference_rows.__file__).parent / "data" / "inference.csv")
    rows = {r["id"]: r for r in cases}
    row = rows["llmservingsim-rtxpro6000-llama-3p1-8b-tpot-mean"]
    pred = predict_row(row, row_tables())
    assert "max_num_batched_tokens 2048 as the notes state" in pred.reason
    assert "max_num_seqs 128 as the notes state" in pred.reason


# trtllm-bench (v1.0, PyTorch backend) heuristic, TensorRT-LLM bench/build/tuning.py calc_engine_setting +
# finetune_setting, evaluated by hand. An 8.03e9-parameter FP8 model with FP8 KV, 32 layers, 8 KV heads of 128,
# one 80 GiB GPU, kv_cache_free_gpu_mem_fraction 0.95:
#   KV per token = 2·32·8·128·1 B = 65536 B = 6.1035e-5 GiB;  weights = 8.03e9 / 2^30 = 7.4785 GiB
#   cache = (80 − 7.4785) · 0.95 = 68.895 GiB
#   ISL/OSL 1000/1000: requests = 68.895 / (6.1035e-5 · 2000) = 564.4 -> raw_bs 564.4 (256 ≤ raw_bs < 1024)
#     -> max_batch_size 128·ceil(564.4/128) = 640; raw_tokens 564.4·2 = 1128.8 < 4096 -> max(2048, 1280) = 2048;
#     chunked prefill off: max(2048, 1000 + 640) = 2048
#   ISL/OSL 128/128: requests = 68.895 / (6.1035e-5 · 256) = 4409 -> capped at 4096 -> max_batch_size 4096;
#     raw_tokens = 4096·2 = 8192 (not < 8192) -> 1024·8 = 8192; max(8192, 128 + 4096) = 8192
_BENCH = dict(
    params=8.03e9,
    num_layers=32,
    kv_heads=8,
    head_dim=128,
    tp=1,
    pp=1,
    device_memory_bytes=80 * 2**30,
    weight_precision="fp8",
    kv_precision="fp8",
    kv_free_frac=0.95,
    bench_tuning=catalog.engine("trtllm").bench_tuning,
)


@pytest.mark.parametrize(("isl", "osl", "seqs", "tokens"), [(1000, 1000, 640, 2048), (128, 128, 4096, 8192)])
def test_trtllm_bench_heuristic_by_hand(isl: int, osl: int, seqs: int, tokens: int) -> None:
    lim = trtllm_bench_limits(**_BENCH, input_tokens=isl, output_tokens=osl)  # type: ignore[arg-type]
    assert lim is not None
    assert (lim.max_num_seqs, lim.max_num_batched_tokens) == (seqs, tokens)


def test_trtllm_bench_heuristic_per_attention_dp_rank_and_untuned_precision() -> None:
    # v1.0 computes the limits without the attention-DP flag and each of the 4 DP ranks applies them
    lim = trtllm_bench_limits(**_BENCH, input_tokens=1000, output_tokens=1000, attention_dp_ranks=4)  # type: ignore[arg-type]
    assert lim is not None and (lim.max_num_seqs, lim.max_num_batched_tokens) == (4 * 640, 4 * 2048)
    # a quantisation the heuristic does not tune (get_benchmark_engine_settings: BuildConfig defaults instead)
    assert (
        trtllm_bench_limits(
            **{**_BENCH, "weight_precision": "int4"},
            input_tokens=1000,  # type: ignore[arg-type]
            output_tokens=1000,
        )
        is None
    )


def test_trtllm_bench_rows_use_the_heuristic() -> None:
    with (Path(inference_rows.__file__).parent / "data" / "inference.csv").open() as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    pred = predict_row(rows["trtllm-v1p0-llama31-8b-h100-tp1pp1-1000-1000"], row_tables())
    assert "trtllm-bench heuristic" in pred.reason and "max_batch_size 640" in pred.reason
    mlperf = next(r for i, r in rows.items() if i.startswith("mlperf41-h100x8-llama2-70b") and r["mode"] == "offline")
    assert "trtllm-bench heuristic" not in predict_row(mlperf, row_tables()).reason
