"""Validation on the published inference rows — accuracy as a regression guard (see docs/validation.md).

Bounds are the model's achieved accuracy plus a margin (not the issue's targets). Known misses, documented:

* MoE rows of TensorRT-LLM v1.0 (Llama 4 Scout/Maverick, Qwen3-235B; attention-DP + EP), priced with
  TensorRT-LLM's own kernel timings: median |error| 32 %. Qwen3 comes within +4 … +24 % except 5000/500
  (−31 %); the Llama 4 decode-heavy rows stay +33 … +68 %, and the Maverick cells the v0.21 page keeps from
  v0.20 (before that release's Llama 4 attention regression) are +26 … +71 %: their decode is faster in the
  model than measured, unexplained (docs/validation-analysis.md lists what is ruled out).
* gpt-oss-20b ITL slopes: the attention sinks and the MXFP4 attention path are not modelled.
* TensorRT-LLM v0.5 TTFT at 128 tokens: fixed per-request costs (tokenisation, scheduling) not modelled.
* MLPerf v4.1 H100 rows (tp blank: the throughput-maximising tp is chosen, TP2 × 4 for Llama-2-70B, TP1 × 8
  for Mixtral): Llama-2-70B throughput within 3 %, Mixtral Server −5 %, offline +28 %; Server TTFT and TPOT
  are under-predicted by ≈ 75 % (TensorRT-LLM's Server runs batch up to the 200 ms TPOT limit; the simulator
  schedules as soon as it can).
* llmservingsim (RTX PRO 6000): the measured run caps the batch at max_num_seqs 128 (its notes), so 10
  req/s queue (mean TTFT 7.1 s); with that cap the simulator queues too (docs/validation.md has the errors).
"""

from __future__ import annotations

import csv
import math
import re
import statistics
from pathlib import Path

import pytest

from aiinfra import catalog
from aiinfra.app.tables import row_tables
from aiinfra.validation import inference_rows
from aiinfra.validation.runner import by_group, run

DATA = Path(inference_rows.__file__).parent / "data" / "inference.csv"
MOE = ("scout", "maverick", "qwen3")


@pytest.fixture(scope="module")
def result() -> dict:  # type: ignore[type-arg]
    return run(DATA, row_tables())


# group -> (max median |error|, max p90 |error|) the model achieved, with a margin (regression guard)
BOUNDS = {
    # priced with TensorRT-LLM's own (later-version) A100 kernel timings: 10.6 % / 18.1 % with the per-M GEMM rows
    # (19.4 % / 30.4 % with FLOP-only curves, the margin this bound keeps)
    "trtllm-v0p5-a100": (0.22, 0.36),
    "vllm-fp8kv-h100": (0.10, 0.50),
    # regression guard only (achieved + margin): ROCm vLLM on 8x MI300X, Llama 3.1 70B/405B FP8 static batches
    # 1-128 — -19 ... +27 % (11.5 % median, p90 18.5 %) with the
    # MI300X's weight streaming at AMD's own GEMV timings (memory-mi300x-aiter-gemv); vLLM V1's offline token budget
    # of 16384 on >= 70 GiB devices removes prefill/decode interference
    "rocm-vllm-mi300x": (0.31, 0.95),
    # vLLM's performance-benchmark latency tests (batch 8, 32 in / 128 out, bf16) on H200, H100 and A100 — 13.9 %
    # median, p90 26 %, worst +29 % (H200 8B); every row over-predicted, the dense rows by 10-29 % (the 2024 vLLM,
    # timed by this model with vLLM 0.24 kernel tables)
    "vllm-perfci": (0.18, 0.35),
}


def test_nim_closed_loop_rows(result) -> None:  # type: ignore[no-untyped-def]
    # NVIDIA NIM 1.8.0 concurrency sweeps (Llama 3.3 70B FP8 TP2 on 2 x H100, Llama 3.1 8B FP8 TP1 on 1 x H100;
    # 5 ISL/OSL, concurrency 1, 25, 100 and the table's largest), predicted by a closed-loop simulation with the
    # clients started together (regression guard, achieved + margin). The rows state the fp8 KV cache the page's own
    # saturated cells require (REFERENCE_README, nim180-h100; a bf16 cache would hold half the sequences they
    # measure): output tokens/s 8.5 % median, ITL 6.2 %, TTFT 25.5 % (+10 % signed). TTFT at moderate load swings
    # from -80 % (clients out of step) to +200 % (in step) with the arrival phase
    cases = [c for c in result["cases"] if c.group == "nim180-h100"]
    assert len(cases) == 120
    for metric, bound in (("output-tokens-per-s", 0.12), ("tpot-s", 0.10), ("ttft-s", 0.40)):
        errs = [abs(c.rel_error) for c in cases if c.id.endswith(metric)]
        assert len(errs) == 40
        assert statistics.median(errs) <= bound
    # batch-1 (concurrency 1) ITL of the 70B: the decode step alone, within 10 %
    one = [c for c in cases if "70b" in c.id and "-c1-tpot" in c.id]
    assert len(one) == 5 and all(abs(c.rel_error) <= 0.10 for c in one)
    # the KV-bound cells (20000/2000 at 100 and 250 clients): the concurrency the KV cache admits sets the output
    # rate; with an fp8 cache both models' rates are 13-17 % low (with bf16 they were 45-53 % low)
    kv_bound = [c for c in cases if any(f"20000-2000-c{n}-output" in c.id for n in (100, 250))]
    assert len(kv_bound) == 4 and all(-0.20 <= c.rel_error <= 0.0 for c in kv_bound)


def test_nim_rows_state_the_kv_dtype_their_saturated_cells_need() -> None:
    # the NIM page prints no KV dtype; its 20000/2000 cells at 250 clients rule out a 16-bit cache (REFERENCE_README,
    # nim180-h100). By hand: sequences decoding at once = output tokens/s x ITL (Little's law), each holding at
    # least its 20,000-token prompt; KV bytes per token per GPU = 2 (K, V) x layers x kv_heads / tp x head_dim x
    # bytes; an H100 holds 80 GB, less the FP8 weights (1 byte per parameter, split over tp)
    with DATA.open(newline="") as f:
        rows = {r["id"]: r for r in csv.DictReader(f) if r["id"].startswith("nim180-h100")}
    assert len(rows) == 120 and {r["kv_precision"] for r in rows.values()} == {"fp8"}
    memory_bytes = 80e9
    for model, params, layers, kv_heads, tp in (("llama31-8b", 8.0e9, 32, 8, 1), ("llama33-70b", 70.6e9, 80, 8, 2)):
        cell = f"nim180-h100-{model}-fp8-tp{tp}-20000-2000-c250"
        tput = float(rows[f"{cell}-output-tokens-per-s"]["value"])
        itl = float(rows[f"{cell}-tpot-s"]["value"])
        sequences = math.floor(tput * itl)  # 8B: 1337.66 x 0.03162 = 42.3; 70B: 427.06 x 0.05013 = 21.4
        free = memory_bytes - params / tp  # FP8 weights per GPU
        for kv_bytes, fits in ((2, False), (1, True)):
            per_token = 2 * layers * (kv_heads // tp) * 128 * kv_bytes
            assert (sequences * 20_000 * per_token <= free) is fits, (model, kv_bytes)


@pytest.mark.parametrize("group", sorted(BOUNDS))
def test_group_accuracy(result, group: str) -> None:  # type: ignore[no-untyped-def]
    s = by_group(result["cases"])[group]
    assert s["n_compared"] == s["n"]
    assert s["median_abs_rel_error"] <= BOUNDS[group][0]
    assert s["p90_abs_rel_error"] <= BOUNDS[group][1]


def test_dense_saturated_throughput(result) -> None:  # type: ignore[no-untyped-def]
    # TensorRT-LLM v1.0 offline throughput, dense Llama 8B/70B/405B on H100 (30 rows): achieved median
    # 9.1 %, 93 % of rows within ±25 %, worst +35 % (405B 128/4096) with engine-free curves; 4.2 %, 100 %,
    # worst −11 % (8B 128/4096) with TensorRT-LLM's own per-M kernel timings (2026-11-23). With trtllm-bench's
    # heuristic limits (max_batch_size up to 4096 instead of the LLM API's 2048) the 128/128 rows run a larger
    # batch: 8B +14 % -> +21 %
    errs = [abs(c.rel_error) for c in result["cases"] if c.group == "trtllm-v1p0" and not any(k in c.id for k in MOE)]
    assert len(errs) == 30
    assert statistics.median(errs) <= 0.11
    assert sum(e <= 0.25 for e in errs) / len(errs) >= 0.9
    assert max(errs) <= 0.40


def test_trtllm_v021_page(result) -> None:  # type: ignore[no-untyped-def]
    # TensorRT-LLM perf-overview as of v0.21 (commit 258c7540), its 36 H100 cells (regression guard): the 32 dense
    # cells (Llama 3.1 8B / 3.3 70B / 3.1 405B FP8 at v0.21) come out at -9 ... +18 %; the 4 Llama 4 Maverick cells,
    # kept from v0.20 (before the v0.21 attention regression) and predicted at the engine's mapping default (experts
    # tensor-parallel, ep 1), +26 ... +71 %: the Llama 4 miss predates the regression (docs/validation-analysis.md)
    cases = [c for c in result["cases"] if c.group == "trtllm-v0p21"]
    assert len(cases) == 36
    dense = [abs(c.rel_error) for c in cases if "maverick" not in c.id]
    assert len(dense) == 32
    assert statistics.median(dense) <= 0.08
    assert max(dense) <= 0.25
    maverick = [c.rel_error for c in cases if "maverick" in c.id]
    assert len(maverick) == 4 and all(e > 0.15 for e in maverick)


def _serving_cases(pattern: str) -> list:  # type: ignore[type-arg]
    """The validated cases of every serving-row file (open and sealed) holding a row whose id matches ``pattern``:
    a known gap measured on serving rows under load rather than on inference.csv."""
    out = []
    for path in sorted(DATA.parent.glob("inference_serving*_*.csv")):
        if path.stem.endswith("_seal"):
            continue
        with path.open(newline="") as f:
            if any(re.match(pattern, r["id"]) for r in csv.DictReader(f)):
                out.extend(run(path, row_tables())["cases"])
    return out


def test_accuracy_notes_match_the_validation(result) -> None:  # type: ignore[no-untyped-def]
    # every known gap that infer/capacity print (catalog/data/accuracy_notes.yaml) names published cases, and
    # their signed errors still lie in the range the note states: a note cannot outlive (or understate) its gap
    notes = catalog.accuracy_notes()
    assert {n.id for n in notes} >= {"trtllm-llama4-h100-throughput", "gpt-oss-triton-moe-jit"}
    for n in notes:
        cases = result["cases"] if any(re.match(n.cases, c.id) for c in result["cases"]) else _serving_cases(n.cases)
        errs = [c.rel_error for c in cases if re.match(n.cases, c.id) and c.rel_error is not None]
        lo, hi = n.signed_error_range
        assert errs, n.id
        assert all(lo <= e <= hi for e in errs), (n.id, min(errs), max(errs))
        # and the range is not padded: its ends sit within 2 points of the extreme cases
        assert min(errs) - lo <= 0.02 and hi - max(errs) <= 0.02, (n.id, min(errs), max(errs))


def test_moe_throughput_miss_is_documented(result) -> None:  # type: ignore[no-untyped-def]
    errs = [c.rel_error for c in result["cases"] if c.group == "trtllm-v1p0" and any(k in c.id for k in MOE)]
    assert len(errs) == 22
    # regression guard (see module docstring): Qwen3 +4 … +24 % except 5000/500 (−31 %); the Llama 4
    # decode-heavy rows stay ≈ +33 … +68 % (median of the 22 rows 33 %)
    assert statistics.median(abs(e) for e in errs) <= 0.50
    assert sum(e > 0.5 for e in errs) >= 5  # the Llama 4 decode miss is still there and documented


def test_batch1_decode_itl(result) -> None:  # type: ignore[no-untyped-def]
    # batch-1 decode step (ITL intercept) and KV slope of Llama-3.1-8B on H100: within 10 %
    cases = {c.id: c for c in result["cases"]}
    for kv in ("kvbf16", "kvfp8"):
        for fit in ("itl-intercept", "itl-slope"):
            cid = f"vllm-fp8kv-h100-llama31-8b-{kv}-{fit}"
            assert abs(cases[cid].rel_error) <= 0.10, cid


def test_vllm_kv_capacity(result) -> None:  # type: ignore[no-untyped-def]
    # regression guard: vLLM 0.28.0 allocated 574,608 KV token slots for Llama-3.1-8B BF16 on one RTX PRO 6000
    # at gpu_memory_utilization 0.92 (LLMServingSim meta.json); the allocator model is within 2 %
    case = {c.id: c for c in result["cases"]}["llmservingsim-kv-rtxpro6000-llama-3p1-8b-kv-capacity-tokens"]
    assert case.measured == 574608
    assert abs(case.rel_error) <= 0.02


def test_rows_without_inputs_are_listed(result) -> None:  # type: ignore[no-untyped-def]
    missing = [c for c in result["cases"] if c.predicted is None]
    assert all(c.notes for c in missing)
    assert sum(c.predicted is not None for c in result["cases"]) >= 60


def test_engine_without_profile_is_predicted_with_a_flag() -> None:
    # an engine the catalog has no profile for (Hugging Face TGI): vLLM's defaults stand in and the reason says so
    row = next(r for r in csv.DictReader(DATA.open()) if r["id"] == "trtllm-v1p0-llama31-8b-h100-tp1pp1-1000-1000")
    row = {**row, "engine": "tgi", "id": "tgi-test", "notes": ""}
    pred = inference_rows.predict_row(row, row_tables())
    assert pred.predicted is not None and pred.predicted > 0
    assert "'tgi' has no profile" in pred.reason


def test_mlperf_throughput(result) -> None:  # type: ignore[no-untyped-def]
    # regression guard: Llama-2-70B offline/server tokens/s and requests/s within 11 % with the chosen TP2 x 4
    # (offline −1.1 % with TensorRT-LLM's own per-M kernel timings; −9.8 % since those burst timings are scaled to
    # the rate a 700 W H100 sustains, burst_matmul_sustained_frac; server −0.6 %)
    cases = {c.id: c for c in result["cases"]}
    for cid in (
        "offline-output-tokens-per-s",
        "offline-requests-per-s",
        "server-output-tokens-per-s",
        "server-requests-per-s",
    ):
        assert abs(cases[f"mlperf41-h100x8-llama2-70b-99p9-{cid}"].rel_error) <= 0.11, cid


def test_mlperf_rows_take_lengths_from_the_benchmark(result) -> None:  # type: ignore[no-untyped-def]
    # the 11 MLPerf v4.1 rows leave input_tokens blank; catalog/data/benchmarks.yaml supplies the dataset mean
    cases = [c for c in result["cases"] if c.group == "mlperf41-h100x8"]
    assert len(cases) == 11
    assert all(c.predicted is not None and "benchmarks.yaml" in c.notes for c in cases)


def test_accuracy_targets_by_hand() -> None:
    from aiinfra.validation.runner import Case, by_target, target_of

    assert target_of({"metric": "kv_capacity_tokens"}) == "kv_capacity"
    assert target_of({"metric": "itl_intercept_s", "batch_or_concurrency": ""}) == "batch1_tpot"
    assert target_of({"metric": "tpot_s", "batch_or_concurrency": "1"}) == "batch1_tpot"
    assert target_of({"metric": "tpot_s", "batch_or_concurrency": "25"}) is None
    assert target_of({"metric": "output_tokens_per_s", "mode": "offline"}) == "saturated_throughput"
    assert target_of({"metric": "requests_per_s", "mode": "offline"}) is None  # the same runs, not counted twice
    assert target_of({"metric": "output_tokens_per_s", "mode": "poisson"}) is None

    def case(err: float, target: str) -> Case:
        return Case("x", "g", "m", 1.0, 1.0 + err, err, "", "predictive", target)

    # saturated: |errors| 0.05, 0.10, 0.20, 0.30 -> median 0.15 (meets <= 15 %), 3 of 4 within 25 % (< 90 %)
    t = by_target([case(e, "saturated_throughput") for e in (0.1, -0.3, 0.05, 0.2)])["saturated_throughput"]
    assert t["median_abs_rel_error"] == pytest.approx(0.15)
    assert t["share_within_25pct_frac"] == pytest.approx(0.75)
    assert t["met"] is False
    assert by_target([case(-0.04, "kv_capacity")])["kv_capacity"]["met"] is True
    assert by_target([case(0.06, "kv_capacity")])["kv_capacity"]["met"] is False
    assert (
        by_target([case(0.3, "batch1_tpot"), case(0.05, "batch1_tpot"), case(0.08, "batch1_tpot")])["batch1_tpot"][
            "met"
        ]
        is True
    )


def test_validate_cli_reports_targets(tmp_path: Path) -> None:
    from .conftest import cli_json, run_cli

    with DATA.open(newline="") as fh:
        reader = csv.DictReader(fh)
        fields = list(reader.fieldnames or [])
        keep = [r for r in reader if r["id"].startswith(("llmservingsim-kv-", "vllm-fp8kv-h100-llama31-8b-"))]
    path = tmp_path / "few.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(keep)
    obj = cli_json("validate", str(path))
    # one KV-capacity row and the two ITL intercepts; the two ITL slopes count toward no target
    assert obj["targets"]["kv_capacity"]["n_compared"] == 1
    assert obj["targets"]["batch1_tpot"]["n_compared"] == 2
    assert "saturated_throughput" not in obj["targets"]
    text = run_cli("validate", str(path)).stdout
    assert "target kv_capacity" in text and "target batch1_tpot" in text
    # --markdown rewrites the report but keeps the reliability section written by bench/reliability_validation.py
    from aiinfra.reliability.validation import MARK

    md = tmp_path / "validation.md"
    md.write_text("old report\n\n" + MARK + "\n\n## Reliability (operational figures)\n")
    assert run_cli("validate", str(path), "--markdown", str(md)).returncode == 0
    new_md = md.read_text()
    assert "old report" not in new_md and new_md.endswith(MARK + "\n\n## Reliability (operational figures)\n")
    # a section another script wrote stays in place, and a rerun replaces only the report's own section
    own = "## inference rows (few.csv)"
    md.write_text(new_md.replace(MARK, "## Serving rows (bench script)\n\nkept\n\n" + MARK))
    assert run_cli("validate", str(path), "--markdown", str(md)).returncode == 0
    again = md.read_text()
    assert again.count(own) == 1 and "kept" in again
    assert again.index(own) < again.index("## Serving rows (bench script)") < again.index(MARK)
    bad = run_cli("validate", str(tmp_path / "missing.csv"))
    assert bad.returncode == 2 and "CASES.csv" in bad.stderr and "Traceback" not in bad.stderr
