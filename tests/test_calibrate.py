"""`aiinfra calibrate`: result files read by format, factors fitted, the overlay applied by infer/train, the API's
``catalog=`` and the web app; bad files refused with nothing written.

The vLLM and training inputs are made in the test from the tool's own uncalibrated prediction times known
factors (1.3× TTFT, 1.5× TPOT; 1.25× step time), so the expected effect of the overlay is known by construction.
The GuideLLM, CSV and log inputs are recorded by hand from each format's documentation
(tests/data/calibrate/README.md names the source of every field)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

import aiinfra
from aiinfra import app
from aiinfra.calibration.readers import ServingResult, TrainingResult, read
from aiinfra.catalog import Catalog, use
from aiinfra.catalog.calibration import NEUTRAL, factors_for
from aiinfra.cli import main
from aiinfra.errors import SpecError

DATA = Path(__file__).parent / "data" / "calibrate"

SERVING: dict[str, Any] = {
    "model": "meta-llama-3.1-8b",
    "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 1},
    "inference": {"engine": "vllm", "input_tokens": 1024, "output_tokens": 256, "concurrency": 16},
}
TRAINING: dict[str, Any] = {
    "model": "meta-llama-3.1-8b",
    "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 16},
    "training": {
        "tokens": 1e9,
        "seq_len": 4096,
        "global_batch_seqs": 64,
        "precision": "bf16",
        "plan": {"tp": 1, "pp": 1},
    },
}
TTFT_X, TPOT_X, STEP_X = 1.3, 1.5, 1.25


def _serving(concurrency: int, catalog: Catalog | None = None, **inference: Any) -> tuple[float, float]:
    m = copy.deepcopy(SERVING)
    m["inference"] |= {"concurrency": concurrency, **inference}
    e = aiinfra.infer(m, catalog=catalog).estimate
    return e.ttft_s, e.tpot_s


def _step(plan: dict[str, int], catalog: Catalog | None = None) -> float:
    m = copy.deepcopy(TRAINING)
    m["training"]["plan"] = plan
    step: float = aiinfra.train(m, catalog=catalog).to_dict()["step_time_s"]
    return step


def _vllm_json(path: Path, concurrency: int, ttft_s: float, tpot_s: float, n: int = 200) -> str:
    """A `vllm bench serve --save-result` file (vllm/benchmarks/serve.py result_json keys) for ``n`` requests of
    1024 + 256 tokens at ``max_concurrency`` clients."""
    path.write_text(
        json.dumps(
            {
                "date": "20261120-101500",
                "backend": "vllm",
                "model_id": "meta-llama/Llama-3.1-8B",
                "num_prompts": n,
                "request_rate": "inf",
                "burstiness": 1.0,
                "max_concurrency": concurrency,
                "duration": 60.0,
                "completed": n,
                "total_input_tokens": n * 1024,
                "total_output_tokens": n * 256,
                "output_throughput": concurrency / tpot_s,
                "mean_ttft_ms": ttft_s * 1e3,
                "median_ttft_ms": ttft_s * 1e3,
                "p99_ttft_ms": 2 * ttft_s * 1e3,
                "mean_tpot_ms": tpot_s * 1e3,
                "median_tpot_ms": tpot_s * 1e3,
                "p99_tpot_ms": 1.2 * tpot_s * 1e3,
            }
        )
    )
    return str(path)


@pytest.fixture(scope="module")
def serving_overlay(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, app.CalibrateResult]:
    d = tmp_path_factory.mktemp("cal")
    files = []
    for c in (8, 64):
        ttft, tpot = _serving(c)
        files.append(_vllm_json(d / f"vllm-c{c}.json", c, TTFT_X * ttft, TPOT_X * tpot))
    scenario = d / "deployment.yaml"
    scenario.write_text(yaml.safe_dump(SERVING))
    result = aiinfra.calibrate(scenario, files, out=d / "overlay")
    return d / "overlay", result


def test_vllm_results_move_a_third_concurrency_by_the_measured_factors(serving_overlay: Any) -> None:
    overlay, result = serving_overlay
    assert result.applies_to == "inference" and result.engine == "vllm"
    assert result.mean_abs_error_before_frac > 0.2  # 1.3× and 1.5× the prediction: 23 % and 33 % off before
    assert result.mean_abs_error_after_frac < 0.06
    cat = Catalog.default().with_overlay(overlay)
    ttft0, tpot0 = _serving(32)
    ttft1, tpot1 = _serving(32, catalog=cat)
    assert ttft1 / ttft0 == pytest.approx(TTFT_X, rel=0.10)
    assert tpot1 / tpot0 == pytest.approx(TPOT_X, rel=0.10)
    notes = aiinfra.infer(SERVING, catalog=cat).estimate.notes
    assert any(n.startswith("calibrated by calibrated-inference-nvidia-h100-sxm5-80gb-vllm") for n in notes)


def test_overlay_row_names_its_results_dates_and_values(serving_overlay: Any) -> None:
    overlay, _ = serving_overlay
    rows = yaml.safe_load((overlay / "calibration.yaml").read_text())
    assert len(rows) == 1
    row = rows[0]
    assert row["accelerator"] == "nvidia-h100-sxm5-80gb" and row["engine"] == "vllm"
    assert [f["file"] for f in row["results"]] == ["vllm-c8.json", "vllm-c64.json"]
    assert {f["date"] for f in row["results"]} == {"2026-11-20"}  # the files' own "date" 20261120-101500
    assert all(len(f["sha256"]) == 64 for f in row["results"])
    for name in row["fitted"]:
        lo, hi = row["bounds"][name]
        assert lo <= row["factors"][name] <= hi
    assert (overlay / "calibration.md").exists()
    # the shipped catalog carries no calibration: every factor neutral there
    assert factors_for("inference", "nvidia-h100-sxm5-80gb", "vllm") == NEUTRAL


def test_other_engines_and_accelerators_are_not_calibrated(serving_overlay: Any) -> None:
    overlay, _ = serving_overlay
    cat = Catalog.default().with_overlay(overlay)
    with use(cat):
        assert factors_for("inference", "nvidia-h100-sxm5-80gb", "trtllm") == NEUTRAL
        assert factors_for("inference", "nvidia-a100-sxm4-80gb", "vllm") == NEUTRAL
        assert factors_for("training", "nvidia-h100-sxm5-80gb") == NEUTRAL
    assert _serving(16, catalog=cat, engine="trtllm") == _serving(16, engine="trtllm")


def test_cli_applies_the_overlay_and_web_app_reads_it(serving_overlay: Any, tmp_path: Path) -> None:
    overlay, _ = serving_overlay
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(SERVING))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["infer", str(scenario), "--json", "--catalog-overlay", str(overlay)]) == 0
    cli_ttft = json.loads(out.getvalue())["ttft_s"]
    cat = Catalog.default().with_overlay(overlay)
    api_ttft = aiinfra.infer(SERVING, catalog=cat).estimate.ttft_s
    assert cli_ttft == pytest.approx(api_ttft, rel=1e-12)

    pytest.importorskip("fastapi")
    import httpx

    from aiinfra.web.server import create_app

    async def post() -> Any:
        transport = httpx.ASGITransport(app=create_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return (await client.post("/api/v1/infer", json=SERVING)).json()

    with use(cat):  # what `aiinfra web --catalog-overlay DIR` does around the server
        web = asyncio.run(post())
    assert web["ttft_s"] == pytest.approx(api_ttft, rel=1e-12)
    assert web["ttft_s"] > aiinfra.infer(SERVING).estimate.ttft_s * 1.2


def test_web_heavy_answers_run_against_the_catalog_of_the_caller(serving_overlay: Any) -> None:
    """A heavy answer runs in a worker process: it lays the request's overlays over the shipped catalog again."""
    pytest.importorskip("fastapi")
    import httpx

    from aiinfra.web.server import create_app

    cat = Catalog.default().with_overlay(serving_overlay[0])
    body = {**SERVING, "inference": {**SERVING["inference"], "concurrency": None, "users": 64}}
    want = aiinfra.capacity(body, catalog=cat).chosen.ttft_s
    assert want != aiinfra.capacity(body).chosen.ttft_s  # the overlay moves the answer

    async def post() -> Any:
        transport = httpx.ASGITransport(app=create_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=300) as client:
            return (await client.post("/api/v1/capacity", json=body)).json()

    with use(cat):  # what `aiinfra web --catalog-overlay DIR` does around the server
        got = asyncio.run(post())
    assert got["chosen"]["ttft_s"] == pytest.approx(want, rel=1e-12)


def test_training_csv_moves_a_third_layout_by_the_measured_factor(tmp_path: Path) -> None:
    layouts = [{"tp": 2, "pp": 1}, {"tp": 8, "pp": 1}, {"tp": 4, "pp": 2}]
    before = [_step(p) for p in layouts]
    measured = [f"{p['tp']},{p['pp']},{STEP_X * t}\n" for p, t in zip(layouts[:2], before[:2], strict=True)]
    (tmp_path / "steps.csv").write_text("tp,pp,step_time_s\n" + "".join(measured))  # the first two layouts only
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(TRAINING))
    result = aiinfra.calibrate(tmp_path / "job.yaml", [tmp_path / "steps.csv"], out=tmp_path / "ov")
    assert result.applies_to == "training"
    after = _step(layouts[2], catalog=Catalog.default().with_overlay(tmp_path / "ov"))
    assert 1.2 <= after / before[2] <= 1.3


def test_guidellm_report_is_read_from_its_schema() -> None:
    runs = read(str(DATA / "guidellm-report.json"))
    assert all(isinstance(r, ServingResult) for r in runs)
    first, second = runs
    assert (first.concurrency, second.concurrency) == (4, 16)  # config.strategy.streams
    assert (first.input_tokens, first.output_tokens) == (512, 128)
    assert first.ttft_s == pytest.approx(0.0192)  # time_to_first_token_ms.successful.mean 19.2
    # TPOT is GuideLLM's inter_token_latency_ms (8.1), not its time_per_output_token_ms (8.2, counts token 1)
    assert first.tpot_s == pytest.approx(0.0081)
    assert first.percentiles["ttft_p99_s"] == pytest.approx(0.031)
    assert first.date == "2026-11-20"


def test_guidellm_report_as_yaml_reads_the_same(tmp_path: Path) -> None:
    data = json.loads((DATA / "guidellm-report.json").read_text())
    (tmp_path / "report.yaml").write_text(yaml.safe_dump(data))  # GuideLLM also saves its report as YAML
    assert read(str(tmp_path / "report.yaml")) == [
        replace(r, file="report.yaml") for r in read(str(DATA / "guidellm-report.json"))
    ]


def test_serving_csv_calibrates_with_a_leave_one_out_check(tmp_path: Path) -> None:
    runs = read(str(DATA / "serving.csv"))
    assert [(r.input_tokens, r.output_tokens, r.concurrency) for r in runs] == [
        (2048, 256, 8),
        (2048, 256, 32),
        (2048, 256, 64),
    ]
    assert runs[1].tpot_s == pytest.approx(0.0170) and runs[2].percentiles["tpot_p99_s"] == pytest.approx(0.0310)
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SERVING))
    result = app.calibrate(app.load_scenario(tmp_path / "s.yaml"), [str(DATA / "serving.csv")], tmp_path / "ov")
    assert result.mean_abs_error_after_frac < result.mean_abs_error_before_frac
    assert len(result.leave_one_out) == 2 * 3  # 3 runs, TTFT and TPOT each
    assert result.leave_one_out_mean_abs_error_frac is not None


def test_training_logs_give_the_median_step_after_warm_up() -> None:
    (mega,) = read(str(DATA / "megatron.log"))
    assert isinstance(mega, TrainingResult)
    # iterations 2-4 (the first, 9120 ms, is warm-up): median of 2050, 2040, 2070 ms
    assert mega.step_time_s == pytest.approx(2.050)
    assert mega.job == {"global_batch_seqs": 64}
    (titan,) = read(str(DATA / "torchtitan.log"))
    assert isinstance(titan, TrainingResult)
    assert titan.tokens_per_s_per_accelerator == pytest.approx(5000.0)  # median of 5,000 5,100 4,900
    from aiinfra.calibration.predict import training_cases
    from aiinfra.catalog.resolve import scenario_of

    (case,) = training_cases(app.load_scenario(TRAINING), [titan], scenario_of)
    # 64 sequences × 4096 tokens per step over 16 accelerators at 5000 tokens/s each: 262144 / 80000 s
    assert case.measured["step_time_s"] == pytest.approx(3.2768)
    no_plan = copy.deepcopy(TRAINING)
    del no_plan["training"]["plan"]
    with pytest.raises(SpecError, match=r"torchtitan\.log is a log of one run"):
        training_cases(app.load_scenario(no_plan), [titan], scenario_of)


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ('{"completed": 10, "total_input_tokens": 100, "total_output_tokens": 100, "mean_ttft_ms": 5}', "mean_tpot_ms"),
        (
            '{"completed": 10, "total_input_tokens": 100, "total_output_tokens": 100, "mean_ttft_ms": -5, '
            '"mean_tpot_ms": 2}',
            "mean_ttft_ms",
        ),
        ('{"completed": 10, "total_input_tokens": 1', "line 1"),
        ("input_tokens,output_tokens,ttft_s,tpot_s\n100,50,0.1,0.01\n", "concurrency"),
        ("input_tokens,output_tokens,concurrency,ttft_s,tpot_s\n100,50,4,abc,0.01\n", "line 2 ttft_s"),
        ('{"benchmarks": [{"config": {"strategy": {"type_": "throughput"}}, "metrics": {}}]}', "strategy.type_"),
        ("hello\n", "(format)"),
        ("tp,pp,step_time_s\n2,,1.5\n", "line 2 tp"),
        ("tp,pp,step_time_s\n2,1,0\n", "line 2 step_time_s"),
        ("input_tokens,output_tokens,concurrency,ttft_s,tpot_s,date\n100,50,4,0.1,0.01,last week\n", "line 2 date"),
        ("input_tokens,output_tokens,concurrency,ttft_s,tpot_s\n200000,50,4,0.1,0.01\n", "inference.input_tokens"),
    ],
)
def test_bad_files_name_the_file_and_field_and_write_nothing(tmp_path: Path, content: str, field: str) -> None:
    good = _vllm_json(tmp_path / "good.json", 8, 0.05, 0.01)
    bad = tmp_path / "bad-result.txt"
    bad.write_text(content)
    with pytest.raises(SpecError) as err:
        app.calibrate(app.load_scenario(SERVING), [good, str(bad)], tmp_path / "ov")
    assert "bad-result.txt" in err.value.field and field in err.value.field
    assert not (tmp_path / "ov").exists()


def test_cli_bad_result_exits_2_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SERVING))
    (tmp_path / "r.json").write_text('{"completed": 0}')
    assert main(["calibrate", str(tmp_path / "s.yaml"), str(tmp_path / "r.json"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "r.json" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_edited_overlay_factor_out_of_bounds_is_refused(tmp_path: Path) -> None:
    (tmp_path / "calibration.yaml").write_text(
        yaml.safe_dump(
            [
                {
                    "id": "x",
                    "applies_to": "inference",
                    "accelerator": "nvidia-h100-sxm5-80gb",
                    "engine": "vllm",
                    "factors": {"memory_efficiency_scale": 0.0},
                    "sources": [{"title": "t", "read_on": "2026-11-20"}],
                }
            ]
        )
    )
    with pytest.raises(SpecError) as err:
        Catalog.default().with_overlay(tmp_path)
    assert err.value.field.endswith("[x].factors.memory_efficiency_scale")


def test_the_worked_example_files_read_as_documented() -> None:
    """docs/calibrate.md's example: three vLLM files of 500 requests, 512,000 prompt and 128,000 output tokens."""
    folder = Path(__file__).parents[1] / "examples" / "calibrate"
    runs = [r for p in sorted(folder.glob("vllm-*.json")) for r in read(str(p))]
    assert sorted((r.concurrency, r.input_tokens, r.output_tokens) for r in runs if isinstance(r, ServingResult)) == [
        (8, 1024, 256),
        (32, 1024, 256),
        (64, 1024, 256),
    ]
    assert app.load_scenario(folder / "deployment.yaml").inference is not None


def test_sglang_json_lines_read_one_run_per_line_and_flag_repeated_prompts(tmp_path: Path) -> None:
    """sglang.bench_serving appends one JSON object per run to its --output-file; both runs here list the same
    varied prompt lengths (the client's seeded draw), so they sent the same prompts, and the calibration says that a
    server with its prefix cache on served the second run's prompts from cache."""
    runs = read(str(DATA / "sglang-bench-serving.jsonl"))
    assert [(r.format, r.label) for r in runs] == [
        ("sglang", "line 1: concurrency 8"),
        ("sglang", "line 2: concurrency 32"),
    ]
    first, second = runs
    assert isinstance(first, ServingResult) and isinstance(second, ServingResult)
    # 8,240 prompt tokens and 2,048 output tokens over 8 requests
    assert (first.input_tokens, first.output_tokens, first.ttft_s, first.server_tp) == (1030, 256, 0.040, 1)
    assert first.prompt_set is not None and first.prompt_set == second.prompt_set
    scenario = tmp_path / "deployment.yaml"
    scenario.write_text(yaml.safe_dump({**SERVING, "inference": {**SERVING["inference"], "engine": "sglang"}}))
    result = aiinfra.calibrate(scenario, [str(DATA / "sglang-bench-serving.jsonl")], out=tmp_path / "overlay")
    repeated = [n for n in result.notes if n.startswith("the same prompts in")]
    assert len(repeated) == 1 and "(line 1: concurrency 8)" in repeated[0] and "--seed" in repeated[0]
    # one vLLM file of fixed-length prompts has no prompt set to compare (any seed gives the same lengths)
    fixed = read(_vllm_json(tmp_path / "v.json", 8, 0.04, 0.01))[0]
    assert isinstance(fixed, ServingResult) and fixed.prompt_set is None


def test_a_server_run_at_another_tensor_parallel_size_is_refused(tmp_path: Path) -> None:
    scenario = tmp_path / "deployment.yaml"
    scenario.write_text(yaml.safe_dump({**SERVING, "inference": {**SERVING["inference"], "plan": {"tp": 2}}}))
    with pytest.raises(SpecError, match=r"server_info\.tp_size"):
        aiinfra.calibrate(scenario, [str(DATA / "sglang-bench-serving.jsonl")], out=tmp_path / "overlay")
    assert not (tmp_path / "overlay").exists()
