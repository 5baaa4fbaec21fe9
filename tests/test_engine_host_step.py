"""What an engine release does differently (issue 29): vLLM V0's serial scheduler / input-preparation /
output-processing time per iteration, V1's per scheduled request (serial before 0.14, hidden behind the step by
async scheduling from 0.14), SGLang's serial scheduling time before its overlap scheduler (0.4), and V0's scheduler
defaults (256 sequences, 512-token chunks above 32K of
context) — each against the figure its source gives or a hand calculation, in the step model, the planner and the
simulator."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_overheads import host_step_s, step_with_host_s
from aiinfra.analytic.step_time import StepBatch
from aiinfra.app.tables import domain_tables, row_tables
from aiinfra.catalog.resolve import cluster_for, load_scenario
from aiinfra.errors import SpecError
from aiinfra.planning.engine_profile import scheduler_defaults
from aiinfra.planning.inference import estimate, model_for
from aiinfra.specs.common import validate
from aiinfra.specs.engine import parse_version
from aiinfra.specs.workload import ServingWorkload
from aiinfra.validation import switches
from aiinfra.validation.inference_rows import on_off, scheduler_steps
from tests.conftest import LLAMA31_405B_ROW_COLUMNS

from .conftest import EXAMPLES, sim_run

ENGINES = row_tables().engines
"""The catalog's engine profiles: the flag spellings the engine switches read."""


def _llama8b_h100(engine: str, version: str | None) -> InferenceModel:
    return InferenceModel(
        model=catalog.model("meta-llama-3.1-8b"),
        cluster=cluster_for("nvidia-h100-sxm5-80gb", 1),
        engine=engine,
        engine_version=version,
    )


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("0.6.3.post2.dev308+gb489fc3c (nightly wheel)", (0, 6, 3)),
        ("v0.11.0", (0, 11, 0)),
        ("v1.2.0rc1", (1, 2, 0)),
        ("0.8", (0, 8)),
        ("ROCm build, image ghcr.io/embeddedllm/vllm-rocm:cb3b2b9", None),
        ("lmsysorg/sglang:latest (Dec 2024, version not stated)", None),
        ("TensorRT 10.2 / CUDA 12.4 (TRT-LLM)", None),  # another product's version, not the engine's
    ],
)
def test_release_numbers_are_read_from_version_strings(text: str, version: tuple[int, ...] | None) -> None:
    assert parse_version(text) == version


def test_vllm_v0_pays_the_multi_step_rfc_bubble_whatever_the_batch() -> None:
    # vllm#6854: ~4 ms of GPU idle per decode step without multi-step scheduling (V0), one figure per iteration
    for requests in (1, 256):
        assert host_step_s("vllm", "0.6.3", domain_tables(), requests) == (pytest.approx(4e-3), False)
        assert host_step_s("vllm", "0.7.3", domain_tables(), requests) == (pytest.approx(4e-3), False)


# vllm#10634: "about 5-6 ms" of GPU idle between two V1 decode steps at 256 sequences; vllm#19970: minimal at batch
# 1. Per scheduled request: 5.5 ms / 256 = 21.48 us (engines.yaml keeps 21.5 us)
V1_HOST_S_PER_REQUEST = 5.5e-3 / 256


@pytest.mark.parametrize("release", ["0.8.0", "0.8.4", "0.10.1.1", "0.11.0", "0.13.0"])
def test_vllm_v1_before_async_scheduling_pays_its_traced_gap_serially(release: str) -> None:
    # 256 sequences: 256 x 21.5 us = 5.504 ms, the traced 5-6 ms; one sequence: 21.5 us ("already minimal")
    host, overlapped = host_step_s("vllm", release, domain_tables(), 256)
    assert host == pytest.approx(256 * V1_HOST_S_PER_REQUEST, rel=0.01) and not overlapped
    assert 5e-3 <= host <= 6e-3
    assert host_step_s("vllm", release, domain_tables(), 1)[0] == pytest.approx(V1_HOST_S_PER_REQUEST, rel=0.01)


@pytest.mark.parametrize("release", ["0.14.0", "0.15.1", None])
def test_vllm_from_0_14_hides_the_same_host_work_behind_the_step(release: str | None) -> None:
    # v0.14.0 release notes: async scheduling on by default (vllm#27614); an unstated release is the current one
    host, overlapped = host_step_s("vllm", release, domain_tables(), 128)
    assert host == pytest.approx(128 * V1_HOST_S_PER_REQUEST, rel=0.01) and overlapped


def test_engines_without_a_measured_host_time_get_none() -> None:
    for engine, releases in (("trtllm", (None, "0.5.0", "1.2.0")), ("sglang", (None, "0.4.0", "0.5.5"))):
        for release in releases:
            assert host_step_s(engine, release, domain_tables(), 256) == (0.0, False)


@pytest.mark.parametrize("release", ["0.2.13", "0.3.0", "0.3.6"])
def test_sglang_before_its_overlap_scheduler_pays_the_measured_scheduling_time_serially(release: str) -> None:
    # WukLab's SGLang-on-A100 per-iteration scheduling times, ms: 1.91, 2.70, 2.16, 1.87 (Llama3-8B), 5.3, 2.3, 4.2
    # (Llama3-70B); sorted 1.87 1.91 2.16 [2.3] 2.70 4.2 5.3, the median 2.3 ms, serial with the GPU's step
    for requests in (1, 256):
        assert host_step_s("sglang", release, domain_tables(), requests) == (pytest.approx(2.3e-3), False)


@pytest.mark.parametrize("batch", [StepBatch.decode(8, 1000), StepBatch.decode(200, 400), StepBatch.prefill(2048)])
def test_an_sglang_0_3_step_is_the_overlapped_0_4_step_plus_2_3_ms(batch: StepBatch) -> None:
    # both releases capture CUDA graphs up to 160 sequences; 0.4 overlaps its scheduler with the GPU
    old, new = _llama8b_h100("sglang", "0.3.0"), _llama8b_h100("sglang", "0.4.0")
    assert old.iteration_time_s(batch) - new.iteration_time_s(batch) == pytest.approx(2.3e-3, rel=1e-9)


def test_serial_host_time_adds_and_overlapped_host_time_hides() -> None:
    # serial: 26 ms on the GPU + 4 ms between steps = 30 ms; overlapped: max(26, 4) = 26 ms, max(2, 4) = 4 ms
    assert step_with_host_s(0.026, 0.004, overlapped=False) == pytest.approx(0.030)
    assert step_with_host_s(0.026, 0.004, overlapped=True) == pytest.approx(0.026)
    assert step_with_host_s(0.002, 0.004, overlapped=True) == pytest.approx(0.004)


@pytest.mark.parametrize("batch", [StepBatch.decode(8, 1000), StepBatch.decode(200, 400), StepBatch.prefill(2048)])
def test_a_v0_step_is_the_async_v1_step_plus_4_ms(batch: StepBatch) -> None:
    # Llama 3.1 8B on an H100: the GPU step outlasts 200 x 21.5 us = 4.3 ms of hidden V1 host work
    v0, v1 = _llama8b_h100("vllm", "0.6.3"), _llama8b_h100("vllm", "0.14.0")
    assert v0.iteration_time_s(batch) - v1.iteration_time_s(batch) == pytest.approx(4e-3, rel=1e-9)


@pytest.mark.parametrize(
    ("batch", "requests"),
    [(StepBatch.decode(8, 1000), 8), (StepBatch.decode(200, 400), 200), (StepBatch.prefill(2048), 1)],
)
def test_a_synchronous_v1_step_is_the_async_step_plus_its_requests_host_time(batch: StepBatch, requests: int) -> None:
    # 0.11 (serial) vs 0.14 (hidden behind a longer GPU step): the difference is requests x 21.5 us, e.g. 200
    # decoding sequences: 4.30 ms
    sync, async_ = _llama8b_h100("vllm", "0.11.0"), _llama8b_h100("vllm", "0.14.0")
    diff = sync.iteration_time_s(batch) - async_.iteration_time_s(batch)
    assert diff == pytest.approx(requests * V1_HOST_S_PER_REQUEST, rel=0.01)


def test_the_planner_prices_the_release_it_is_given() -> None:
    m, cl = catalog.model("meta-llama-3.1-8b"), cluster_for("nvidia-h100-sxm5-80gb", 1)
    base = {"input_tokens": 128, "output_tokens": 256, "engine": "vllm", "batch": 8}
    old = estimate(m, cl, validate(ServingWorkload, {**base, "engine_version": "0.6.3"}))
    now = estimate(m, cl, validate(ServingWorkload, base))
    # a static batch of 8 decodes in steps of the batch: every step 4 ms longer on V0
    assert old.tpot_s - now.tpot_s == pytest.approx(4e-3, rel=0.02)
    # under a load, infer says what the release adds
    loaded = estimate(
        m, cl, validate(ServingWorkload, {**base, "batch": None, "request_rate_per_s": 2.0, "engine_version": "0.6.3"})
    )
    assert any("4 ms of host work per iteration" in n for n in loaded.notes)


def test_vllm_admits_one_step_later_once_async_scheduling_is_its_default() -> None:
    # vllm#19970: the scheduler runs one step ahead, so TTFT "slightly increases"; default from 0.14 (vllm#27614)
    vllm = catalog.engine("vllm")
    assert not vllm.overlaps_scheduling((0, 13, 0)) and not vllm.overlaps_scheduling((0, 8, 4))
    assert vllm.overlaps_scheduling((0, 14, 0)) and vllm.overlaps_scheduling(None)


@pytest.mark.parametrize("batch", [StepBatch.decode(200, 400), StepBatch.prefill(512) + StepBatch.decode(64, 500)])
def test_a_run_that_states_async_scheduling_gets_it_whatever_its_release(batch: StepBatch) -> None:
    # --async-scheduling on 0.11 (opt-in since vllm#19970) hides the host work as 0.14 does by default, and
    # --no-async-scheduling on 0.14 pays it serially as 0.11 does
    on = replace(_llama8b_h100("vllm", "0.11.0"), overlap_scheduling=True)
    off = replace(_llama8b_h100("vllm", "0.14.0"), overlap_scheduling=False)
    assert on.iteration_time_s(batch) == pytest.approx(_llama8b_h100("vllm", "0.14.0").iteration_time_s(batch))
    assert off.iteration_time_s(batch) == pytest.approx(_llama8b_h100("vllm", "0.11.0").iteration_time_s(batch))


@pytest.mark.parametrize(
    ("notes", "overlap"),
    [
        ("vllm serve openai/gpt-oss-120b --max-model-len 32768 --async-scheduling -tp 2", True),
        ("vllm serve Qwen/Qwen3-8B --no-async-scheduling", False),
        ("vllm serve Qwen/Qwen3-8B", None),
        ("vllm serve X --async-scheduling-foo", None),  # another flag that starts alike is not this one
    ],
)
def test_a_row_states_its_overlap_scheduler(notes: str, overlap: bool | None) -> None:
    assert catalog.engine("vllm").overlap_flags == ("--async-scheduling", "--no-async-scheduling")
    legacy = {"engine": "vllm", "engine_version": "v0.10.2", "notes": notes}
    row = switches.with_columns(legacy, "inference", ENGINES)  # no column: the notes rule fills it
    assert row["overlap_scheduling"] == {True: "on", False: "off", None: ""}[overlap]
    assert on_off(row, "overlap_scheduling") is overlap
    # a column present wins over the notes
    stated = switches.with_columns({**legacy, "overlap_scheduling": "off"}, "inference", ENGINES)
    assert on_off(stated, "overlap_scheduling") is False
    # an engine without the flags (TensorRT-LLM) is never read as stating one
    trtllm = {"engine": "trtllm", "engine_version": "1.0", "notes": notes}
    assert switches.with_columns(trtllm, "inference", ENGINES)["overlap_scheduling"] == ""


def test_the_overlap_flag_may_be_quoted_in_engine_version() -> None:
    row = {"engine": "vllm", "engine_version": "v0.11.0 --async-scheduling", "notes": ""}
    assert switches.overlap_scheduling_stated(row, ENGINES) == "on"


def test_the_planner_says_what_a_synchronous_v1_release_adds_at_its_batch() -> None:
    m, cl = catalog.model("meta-llama-3.1-8b"), cluster_for("nvidia-h100-sxm5-80gb", 1)
    wl = {"input_tokens": 128, "output_tokens": 256, "engine": "vllm", "request_rate_per_s": 2.0}
    est = estimate(m, cl, validate(ServingWorkload, {**wl, "engine_version": "0.11.0"}))
    # its note prices the batch it settles at: batch x 21.5 us
    note = next(n for n in est.notes if "of host work per iteration at" in n)
    assert "added to every step" in note
    found = re.search(r"([\d.]+) ms of host work per iteration at (\d+) sequences", note)
    assert found is not None
    assert float(found.group(1)) == pytest.approx(int(found.group(2)) * 21.5e-3, rel=5e-3)
    hidden = estimate(m, cl, validate(ServingWorkload, {**wl, "engine_version": "0.14.0"}))
    assert any("hidden behind every step" in n for n in hidden.notes)


@pytest.mark.parametrize(("release", "says"), [("latest", "no release number"), (0.1, "quote it")])
def test_an_unreadable_release_names_the_field(release: object, says: str) -> None:
    # a YAML number is refused: 0.10 would read as 0.1
    m, cl = catalog.model("meta-llama-3.1-8b"), cluster_for("nvidia-h100-sxm5-80gb", 1)
    wl = validate(ServingWorkload, {"input_tokens": 128, "output_tokens": 256, "engine_version": release})
    with pytest.raises(SpecError, match=r"inference\.engine_version") as err:
        model_for(m, cl, wl)
    assert says in str(err.value)


def test_the_simulator_adds_the_host_time_to_every_iteration() -> None:
    # one client's requests in turn (each its prompt step and 63 decode steps, the next sent when the answer ends)
    # run the same iterations whatever they cost, so the V0 run lasts exactly iterations x 4 ms longer (a burst of
    # several would not: the releases admit a request that arrives mid-iteration to different iterations). Steps of
    # at most 256 tokens keep every tensor-parallel all-reduce at 256 x 8,192 x 2 B = 4 MiB, under the 8 MiB
    # custom-kernel buffer that 0.6.3 shares with the current release (above it the two releases' all-reduces differ
    # too: tests/test_inference_allreduce_limit.py)
    sets = [
        "inference.simulation.scheduler={max_num_batched_tokens: 256, max_num_seqs: 256}",
        "inference.request_rate_per_s=null",
        "inference.num_requests=4",
        "inference.concurrency=1",
        "inference.arrival={kind: concurrency}",
        "inference.input_tokens=64",
        "inference.output_tokens=64",
        "inference.simulation.output_lengths=null",
        "inference.simulation.input_lengths=null",
    ]
    now = sim_run(load_scenario(EXAMPLES / "simulate-llama70b-h100.yaml", sets), seed=0)
    old = sim_run(
        load_scenario(EXAMPLES / "simulate-llama70b-h100.yaml", [*sets, "inference.engine_version=0.6.3"]), seed=0
    )
    assert old.records.iterations == now.records.iterations == 4 * 64
    assert old.records.end_s - now.records.end_s == pytest.approx(now.records.iterations * 4e-3, rel=1e-6)


def test_vllm_v0_scheduler_defaults_follow_the_context_length() -> None:
    # vLLM 0.6.x: chunked prefill on for max_model_len > 32,768 with 512 tokens per step; else whole prompts with a
    # budget of max(max_model_len, 2048); 256 sequences either way. V1 (0.8 on): its own table (H100: 8192 / 1024)
    vllm, h100 = catalog.engine("vllm"), catalog.accelerator("nvidia-h100-sxm5-80gb")
    long_ = scheduler_defaults(vllm, h100, "offline", release="0.6.3", max_model_len=131_072)
    assert (long_.max_num_batched_tokens, long_.max_num_seqs, long_.chunked_prefill) == (512, 256, True)
    short = scheduler_defaults(vllm, h100, "server", release="0.6.3", max_model_len=8192)
    assert (short.max_num_batched_tokens, short.max_num_seqs, short.chunked_prefill) == (8192, 256, False)
    tiny = scheduler_defaults(vllm, h100, "server", release="0.5.4", max_model_len=1024)
    assert tiny.max_num_batched_tokens == 2048
    v1 = scheduler_defaults(vllm, h100, "server", release="0.11.0", max_model_len=131_072)
    assert (v1.max_num_batched_tokens, v1.max_num_seqs, v1.chunked_prefill) == (8192, 1024, None)


@pytest.mark.parametrize(
    ("accelerator", "release", "expected"),
    [
        # 0.8.0 - 0.8.4: the large table ('h100' or 'h200' in the device name) or the other (2048 tokens, 256 seqs)
        ("amd-mi300x", "0.8.4", (2048, 256)),
        ("nvidia-h200-sxm-141gb", "0.8.4", (8192, 1024)),
        # 0.8.5: any device of 70 GiB or more, the A100 80 GB included
        ("nvidia-a100-sxm4-80gb", "0.8.5", (8192, 1024)),
        ("amd-mi300x", "0.8.5", (8192, 1024)),
        # 0.9.0 on, and the current release: 70 GiB or more without 'a100' in the name
        ("nvidia-a100-sxm4-80gb", "0.9.0", (2048, 256)),
        ("nvidia-a100-sxm4-80gb", None, (2048, 256)),
        ("amd-mi300x", None, (8192, 1024)),
    ],
)
def test_vllm_v1_server_defaults_by_release_and_device(
    accelerator: str, release: str | None, expected: tuple[int, int]
) -> None:
    sd = scheduler_defaults(catalog.engine("vllm"), catalog.accelerator(accelerator), "server", release=release)
    assert (sd.max_num_batched_tokens, sd.max_num_seqs) == expected


def test_a_v0_simulation_schedules_with_the_v0_defaults() -> None:
    # Llama 3.1 70B's 131,072-token context: V0 chunks prompts 512 tokens a step, so a 1,024-token prompt takes two
    # iterations before its first token (V1's 8,192-token budget: one)
    sets = [
        "inference.request_rate_per_s=null",
        "inference.num_requests=1",
        "inference.concurrency=1",
        "inference.arrival={kind: concurrency}",
        "inference.output_tokens=1",
        "inference.simulation.output_lengths=null",
    ]
    ex = EXAMPLES / "simulate-llama70b-h100.yaml"
    assert sim_run(load_scenario(ex, sets), seed=0).records.iterations == 1
    old = sim_run(load_scenario(ex, [*sets, "inference.engine_version=0.6.3"]), seed=0)
    assert old.limits.max_num_batched_tokens == 512 and old.limits.max_num_seqs == 256
    assert old.records.iterations == 2


def test_multi_step_scheduling_pays_the_host_time_once_per_call() -> None:
    # vllm#6854: with multi-step-8 "the 4ms only needs to be incurred once for every 8 decode steps"; here 10 steps
    # per call: 0.4 ms per decode iteration; an iteration with prompt tokens runs alone and pays the 4 ms (vllm#7000)
    v1 = _llama8b_h100("vllm", "0.14.0")
    multi = replace(_llama8b_h100("vllm", "0.6.0"), scheduler_steps=10)
    decode, prefill = StepBatch.decode(64, 500), StepBatch.prefill(512) + StepBatch.decode(64, 500)
    assert multi.iteration_time_s(decode) - v1.iteration_time_s(decode) == pytest.approx(0.4e-3, rel=1e-9)
    assert multi.iteration_time_s(prefill) - v1.iteration_time_s(prefill) == pytest.approx(4e-3, rel=1e-9)


@pytest.mark.parametrize(
    ("version", "notes", "steps"),
    [
        ("0.6.0 (multi-step scheduling, --num-scheduler-steps 10)", "", 10),
        ("0.6.3.post2", "benchmark_throughput.py ... --num-scheduler-step 1 --input-len 2048", 1),
        ("v0.11.0", "vllm serve Qwen/Qwen3-8B", 1),
    ],
)
def test_a_row_states_its_scheduler_steps(version: str, notes: str, steps: int) -> None:
    assert catalog.engine("vllm").multi_step_flag == "--num-scheduler-steps"
    row = switches.with_columns({"engine": "vllm", "engine_version": version, "notes": notes}, "inference", ENGINES)
    assert scheduler_steps(row) == steps
    # an engine without the flag (SGLang) runs single-step even where its notes quote vLLM's setting
    legacy = {"engine": "sglang", "engine_version": "0.3.0", "notes": f"vLLM: {version}"}
    sglang = switches.with_columns(legacy, "inference", ENGINES)
    assert sglang["num_scheduler_steps"] == ""
    assert scheduler_steps(sglang) == 1
    # the column wins over the notes, blank included (blank: 1)
    assert scheduler_steps({"num_scheduler_steps": "", "notes": "--num-scheduler-steps 10"}) == 1


def test_the_scenario_sets_the_scheduler_steps() -> None:
    m, cl = catalog.model("meta-llama-3.1-8b"), cluster_for("nvidia-h100-sxm5-80gb", 1)
    base = {"input_tokens": 128, "output_tokens": 256, "engine_version": "0.6.0"}
    multi = {**base, "simulation": {"scheduler": {"num_scheduler_steps": 10}}}
    assert model_for(m, cl, validate(ServingWorkload, multi)).scheduler_steps == 10
    assert model_for(m, cl, validate(ServingWorkload, base)).scheduler_steps == 1


@pytest.mark.parametrize(
    ("text", "multi_step", "release"),
    [
        # a build dated 2025-01-12, before vLLM 0.8.0 made V1 the default (2025-03-18, vllm#13726): V0's last release
        ("ROCm build, image rocm/vllm-dev:20250112", False, (0, 7, 3)),
        ("nightly of 2025-03-17", False, (0, 7, 3)),
        # the day V1 became the default, and later: the current release's costs (None)
        ("nightly of 2025-03-18", False, None),
        ("rocm/vllm-dev:20250601", False, None),
        # no date at all: None, unless the run uses multi-step scheduling, which V1 never runs (0.8's
        # _is_v1_supported_oracle falls back to V0 for --num-scheduler-steps)
        ("ROCm build, image ghcr.io/embeddedllm/vllm-rocm:cb3b2b9", False, None),
        ("ROCm build, image ghcr.io/embeddedllm/vllm-rocm:cb3b2b9", True, (0, 7, 3)),
        # digits that are no date (a commit hash, a month 13) are not read as one
        ("image abc20251399", False, None),
    ],
)
def test_a_run_that_states_no_release_ran_v0_when_its_build_shows_it(
    text: str, multi_step: bool, release: tuple[int, ...] | None
) -> None:
    found = catalog.engine("vllm").unstated_release(text, multi_step)
    assert (found[0] if found else None) == release
    # engines without a legacy generation in the catalog never guess one
    assert catalog.engine("sglang").unstated_release(text, multi_step) is None


def test_a_dated_v0_build_row_pays_v0s_host_time_and_defaults() -> None:
    """A fixed batch of 4 × 128/2048 on Llama 3.1 405B FP8, 8 MI300X, vLLM image rocm/vllm-dev:20250112 (no release
    number): priced as V0 (0.7.3), so its flags say so and its decode steps carry V0's 4 ms of serial host time:
    the same row stated as "v0.8.0" (V1, no host term) predicts more tokens per second."""
    from aiinfra.app.tables import row_tables
    from aiinfra.validation.inference_rows import predict_row

    row = {
        "id": "test-rocm-dated-bs4",
        "model_name": "Llama-3.1-405B",
        **LLAMA31_405B_ROW_COLUMNS,
        "num_experts": "1",
        "experts_per_token": "1",
        "accelerator": "amd-mi300x",
        "num_accelerators": "8",
        "tp": "8",
        "pp": "1",
        "engine": "vllm",
        "engine_version": "ROCm build, image rocm/vllm-dev:20250112",
        "weight_precision": "fp8",
        "kv_precision": "bf16",
        "input_tokens": "128",
        "output_tokens": "2048",
        "mode": "batch",
        "batch_or_concurrency": "4",
        "metric": "output_tokens_per_s",
        "value": "1",
        "notes": "| arch: test",
    }
    v0 = predict_row(row, row_tables())
    v1 = predict_row({**row, "engine_version": "v0.8.0"}, row_tables())
    assert "priced as vllm 0.7.3 (build dated 20250112" in v0.reason
    assert v0.predicted is not None and v1.predicted is not None
    # a decode step of 4 sequences lasts t + 4 ms under V0 and t + 4 × 21.5 us under V1 0.8 (tokens/s = 4 / step):
    # 1/v0 − 1/v1 is 2,047 decode steps × (4 − 0.086) ms / (4 × 2,048 tokens) ≈ 1 ms per token, within what the
    # different V0 scheduler defaults (a 512-token budget: the 128-token prompts still fit one step) leave
    assert 1 / v0.predicted - 1 / v1.predicted == pytest.approx(
        2047 * (4e-3 - 4 * V1_HOST_S_PER_REQUEST) / (4 * 2048), rel=0.05
    )
