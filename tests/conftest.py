from __future__ import annotations

import contextlib
import datetime
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


#: test kinds, selected with ``pytest -m`` (pyproject.toml registers them); a file's tests are ``unit`` unless listed:
#: ``browser`` drives Chromium; ``integration`` runs whole commands through the CLI, the web API or a sweep
LLAMA31_405B_ROW_COLUMNS: dict[str, str] = {
    "num_layers": "126",
    "hidden_size": "16384",
    "num_heads": "128",
    "num_kv_heads": "8",
    "head_dim": "128",
    "ffn_hidden_size": "53248",
    "mlp": "swiglu",
    "vocab_size": "128256",
    "attention": "gqa",
}
"""Architecture columns of a validation row of Llama 3.1 405B (HF config meta-llama/Llama-3.1-405B: 126 layers,
hidden 16384, 128 query / 8 KV heads of 128, intermediate 53248, vocab 128256)."""

BROWSER_FILES = {"test_web_browser.py"}
INTEGRATION_FILES = {
    "test_cli_errors.py",
    "test_cost_cli.py",
    "test_web_api.py",
    "test_sweep.py",
    "test_app_layer.py",
    "test_answers.py",
    "test_cli_startup.py",
}
#: ``slow``: left out of the fast loop (README: ``pytest -m "not slow and not browser" -n auto``), run by .ci/run. Whole
#: files (a module fixture that runs every validation row; process pools) or single tests: ``file::function`` (all
#: its parameters) or one parametrised id. The tests listed took more than 0.5 s of CPU each when the fast loop was
#: timed test by test (2026-11-26; after merging main: 967 tests, 139 s of CPU, 123 s of it in the 24 then over 0.5 s)
SLOW_FILES = {"test_validation_inference.py", "test_validation_training.py", "test_sweep.py"}
SLOW_TESTS = {
    "test_answers.py::test_capacity_bills_the_whole_instances_its_replicas_occupy",
    "test_answers.py::test_capacity_for_users_who_think_needs_fewer_accelerators",
    "test_answers.py::test_capacity_moves_past_a_candidate_its_simulation_finds_infeasible",
    "test_answers.py::test_infer_at_a_request_rate_agrees_with_the_simulation_of_the_same_file",
    "test_answers.py::test_tpot_never_falls_when_the_batch_grows[meta-llama-3.1-8b-nvidia-b200-sxm-180gb-1-fp8]",
    "test_answers.py::test_ttft_under_load_is_never_below_the_unloaded_ttft",
    "test_answers.py::test_users_with_think_time_follow_the_interactive_response_time_law",
    "test_app_layer.py::test_a_notebook_user_plans_estimates_and_sweeps_into_a_dataframe",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[capacity-diurnal]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[capacity-llama70b-10k-users]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[capacity-long-prompts]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[capacity-two-classes]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[cost-serve-70b-5-regions]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[cost-train-70b-32xh100]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[infer-llama3.1-70b-h100]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[pack-portfolio]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[schedule-sample]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[schedule-synthetic]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[simulate-llama70b-h100]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[train-175b-dgx-h100-30days-operations]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[train-175b-dgx-h100-30days-reliability]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[train-175b-dgx-h100-30days]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[train-gpt3-175b-a100]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[train-llama2-70b-a100]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[train-llama3.1-70b-h100]",
    "test_app_layer.py::test_every_example_gives_the_same_answer_from_the_api_and_the_cli[train-reliability-llama3-405b]",
    "test_app_layer.py::test_the_api_notebook_executes",
    "test_app_layer.py::test_the_api_page_snippet_runs",
    "test_benchmarks.py::test_blank_length_mlperf_offline_row_is_predicted",
    "test_benchmarks.py::test_blank_length_mlperf_server_row_is_simulated_with_the_dataset_lengths",
    "test_benchmarks.py::test_capped_server_simulation_matches_the_full_run",
    "test_calibrate.py::test_serving_csv_calibrates_with_a_leave_one_out_check",
    "test_calibrate.py::test_vllm_results_move_a_third_concurrency_by_the_measured_factors",
    "test_catalog.py::test_data_files_parse_as_yaml_lists",
    "test_catalog_object.py::test_cache_hit_equals_a_fresh_parse",
    "test_cost.py::test_tco_cli_and_plot",
    "test_cost_cli.py::test_tco_cli_and_plot",
    "test_cost_units.py::test_tco_startup_hand_calculation",
    "test_decode_attention_b200.py::test_b200_decode_attention_compute_by_hand",
    "test_efficiency_aic_attention_moe.py::test_h100_rows_are_cross_checks_only",
    "test_export.py::test_every_format_for_each_serving_example[capacity-llama70b-10k-users.yaml]",
    "test_export.py::test_kubernetes_manifest_of_the_capacity_choice",
    "test_fleet.py::test_disaggregation_chosen_for_long_prompts_under_a_tight_tpot",
    "test_fleet.py::test_one_type_says_mixing_cannot_help",
    "test_fleet.py::test_two_class_mixed_fleet_is_no_dearer_than_any_single_type",
    "test_inference.py::test_capacity_cli_json_and_demand_error",
    "test_inference.py::test_capacity_compares_engines",
    "test_inference.py::test_capacity_moe_table_names_layouts",
    "test_inference.py::test_capacity_simulated_check",
    "test_inference.py::test_known_accuracy_gaps_are_printed",
    "test_inference_model.py::test_attention_dp_moe_exchange_is_a_gather_of_each_token_once",
    "test_inference_model.py::test_more_concurrency_never_lowers_throughput_until_memory_runs_out",
    "test_inputs.py::test_any_value_in_any_field_is_answered_or_refused_cleanly",
    "test_moe_efficiency.py::test_per_shape_moe_rows_are_not_borrowed_across_parts",
    "test_newcomer_outputs.py::test_rejected_capacity_rows_have_no_latency",
    "test_prices_refresh.py::test_capacity_prices_with_the_refreshed_rows",
    "test_reliability.py::test_cli_train_json_and_bad_input",
    "test_rows_fallbacks.py::test_blank_architecture_is_taken_from_the_catalog_model",
    "test_search_rank.py::test_more_accelerators_never_increase_time_to_train",
    "test_sharing_pack.py::test_a_service_gets_the_smallest_instance_meeting_its_slo",
    "test_sharing_pack.py::test_example_runs_and_an_empty_portfolio_is_exit_2",
    "test_sharing_schedule.py::test_cli_json_and_plots",
    "test_sharing_schedule.py::test_sample_trace_on_a_small_cluster_queues",
    "test_sim.py::test_bad_input[sets4-words4]",
    "test_sim.py::test_cli_json_plot_and_max_rate",
    "test_sim.py::test_gamma_burstier_than_poisson",
    "test_sim.py::test_max_clients_search_hand_derived",
    "test_sim.py::test_md1_mean_wait",
    "test_sim.py::test_properties",
    "test_sim.py::test_same_seed_same_result_and_no_shared_state",
    "test_sim.py::test_trace_example_and_disaggregation_cli",
    "test_sim_attention_dp.py::test_attention_dp_over_one_rank_changes_nothing",
    "test_sim_attention_dp.py::test_cli_reports_the_ranks",
    "test_sim_attention_dp.py::test_one_rank_group_is_the_plain_replica",
    "test_sim_attention_dp.py::test_saturated_throughput_matches_the_planners_straggler_model",
    "test_sim_kernel.py::test_kernel_properties",
    "test_sim_kernel.py::test_md1_mean_wait",
    "test_sweep_parts.py::test_pareto_front_equals_brute_force_dominance",
    "test_sweep_parts.py::test_rows_become_one_type_per_column",
    "test_training.py::test_every_enumerated_plan_satisfies_every_constraint",
    "test_web_api.py::test_a_job_past_the_wall_time_limit_ends_with_the_reason",
    "test_web_api.py::test_a_job_reports_progress_and_ends_with_the_answer",
    "test_web_api.py::test_a_job_with_bad_input_is_refused_before_it_starts",
    "test_web_api.py::test_an_answer_past_the_wall_time_limit_is_422_with_the_reason",
    "test_web_api.py::test_every_question_answers_as_the_cli[capacity-capacity-llama70b-10k-users.yaml-flags6--sets6]",
    "test_web_api.py::test_every_question_answers_as_the_cli[capacity-capacity-llama70b-10k-users.yaml-flags7-accelerators=nvidia-h100-sxm5-80gb,nvidia-h200-sxm-141gb&engines=vllm,trtllm-sets7]",
    "test_web_api.py::test_every_question_answers_as_the_cli[train-train-llama3.1-70b-h100.yaml-flags1--sets1]",
    "test_web_api.py::test_every_question_answers_as_the_cli[train-train-reliability-llama3-405b.yaml-flags2--sets2]",
    "test_web_api.py::test_find_max_rate_answers_as_the_cli",
    "test_web_api.py::test_pack_answers_as_the_cli",
    "test_web_api.py::test_schedule_answers_as_the_cli[schedule-sample.yaml-sets1]",
    "test_web_api.py::test_validation_as_a_job",
    "test_web_api.py::test_validation_rows_are_the_clis",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        kind = "browser" if name in BROWSER_FILES else "integration" if name in INTEGRATION_FILES else "unit"
        item.add_marker(getattr(pytest.mark, kind))
        function = getattr(item, "originalname", item.name)
        if name in SLOW_FILES or f"{name}::{function}" in SLOW_TESTS or f"{name}::{item.name}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True, scope="session")
def _catalog_cache_dir(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Parsed-catalog cache of this test session (not the user's): CLI subprocesses inherit it."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    yield
    patch.undo()


@pytest.fixture(autouse=True, scope="session")
def _one_day_per_session():  # type: ignore[no-untyped-def]
    """Price ages counted to the day the session began (``AIINFRA_TODAY``, inherited by CLI subprocesses), so two
    answers compared across midnight (the CLI's and the web API's) count the same age; a test that sets its own day
    still does."""
    patch = pytest.MonkeyPatch()
    if not os.environ.get("AIINFRA_TODAY"):
        patch.setenv("AIINFRA_TODAY", datetime.date.today().isoformat())
    yield
    patch.undo()


def bench_script(name: str) -> ModuleType:
    """bench/<name>.py loaded as a module (the bench scripts are not a package), registered in sys.modules first
    because their dataclasses look their module up."""
    path = ROOT / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI's ``main`` in this process (no interpreter start-up per call): its exit code and what it wrote to
    stdout and stderr, as a subprocess would give them."""
    from aiinfra.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help, bad arguments
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return subprocess.CompletedProcess(["aiinfra", *args], code, out.getvalue(), err.getvalue())


def run_cli_process(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a fresh process, for tests about the process itself (what reaches its stdout, its exit)."""
    return subprocess.run([sys.executable, "-m", "aiinfra.cli", *args], capture_output=True, text=True, timeout=300)


def cli_json(*args: str) -> Any:
    res = run_cli(*args, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.fixture
def tmp_yaml(tmp_path: Path):  # type: ignore[no-untyped-def]
    def write(text: str, name: str = "s.yaml") -> str:
        p = tmp_path / name
        p.write_text(text)
        return str(p)

    return write


def deepseek_v3_estimate(engine: str, concurrency: int, engine_version: str | None) -> Any:
    """The planner's estimate for DeepSeek-V3 FP8 at tp 8 on one H200 node, 1,024-token prompts and 256-token answers
    at ``concurrency`` clients, served by release ``engine_version`` of ``engine`` (None: the current release)."""
    from aiinfra import catalog
    from aiinfra.catalog.resolve import cluster_for
    from aiinfra.planning.inference import estimate
    from aiinfra.specs.common import validate
    from aiinfra.specs.workload import ServingWorkload

    wl: dict[str, Any] = {
        "input_tokens": 1024,
        "output_tokens": 256,
        "engine": engine,
        "weight_precision": "fp8",
        "concurrency": concurrency,
        "plan": {"tp": 8},
    }
    if engine_version is not None:
        wl["engine_version"] = engine_version
    return estimate(
        catalog.model("deepseek-v3"), cluster_for("nvidia-h200-sxm-141gb", 8), validate(ServingWorkload, wl)
    )


def node_model(
    model_id: str,
    accelerator: str,
    *,
    weight_precision: str,
    engine: str | None,
    kv_precision: str = "bf16",
    tp: int = 8,
    **kw: Any,
) -> Any:
    """InferenceModel of catalog model ``model_id`` at tensor parallelism ``tp`` over one node of ``tp``
    ``accelerator`` (``kw``: the model's other settings, e.g. ``engine_version``, ``ep``, ``attention_dp``)."""
    from aiinfra import catalog
    from aiinfra.analytic.inference import InferenceModel
    from aiinfra.catalog.resolve import resolve_cluster
    from aiinfra.specs.scenario import HardwareInput

    cluster = resolve_cluster(HardwareInput(accelerator=accelerator, count=tp, per_node=tp))
    return InferenceModel(
        model=catalog.model(model_id),
        cluster=cluster,
        tp=tp,
        weight_precision=weight_precision,
        kv_precision=kv_precision,
        engine=engine,
        **kw,
    )


# -- the simulator with the catalog's tables of a scenario (app/tables.py), as the application layer calls it -----


def sim_run(sc: Any, *args: Any, **kw: Any) -> Any:
    """aiinfra.sim.run.simulate of ``sc`` with its engine profile and draft model."""
    from aiinfra.app.tables import serving_tables
    from aiinfra.sim.run import simulate

    return simulate(sc, *args, tables=serving_tables(sc), **kw)


def sim_closed_loop(sc: Any, *args: Any, **kw: Any) -> Any:
    """aiinfra.sim.search.closed_loop_run of ``sc`` with its engine profile."""
    from aiinfra.app.tables import serving_tables
    from aiinfra.sim.search import closed_loop_run

    return closed_loop_run(sc, *args, tables=serving_tables(sc), **kw)


def sim_max_rate(sc: Any, *args: Any, **kw: Any) -> Any:
    """aiinfra.sim.search.max_rate_meeting_slo of ``sc`` with its engine profile."""
    from aiinfra.app.tables import serving_tables
    from aiinfra.sim.search import max_rate_meeting_slo

    return max_rate_meeting_slo(sc, *args, tables=serving_tables(sc), **kw)
