"""The application layer: one function per question, shared by every shell.

The CLI and the Python API must give the same answer for the same scenario: every shipped example is answered by
every scenario command both ways and compared. The command modules may import only the app layer, report,
specs and errors (so no shell holds domain logic)."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import aiinfra
from aiinfra import app
from aiinfra.cli import main
from aiinfra.errors import AiinfraError, SpecError

from .conftest import EXAMPLES, ROOT

COMMANDS = ROOT / "src" / "aiinfra" / "commands"
ALLOWED = ("aiinfra.app", "aiinfra.report", "aiinfra.specs", "aiinfra.errors", "aiinfra.commands", "aiinfra.web")
QUESTIONS = ("check", "train", "memory", "infer", "capacity", "simulate", "cost", "datacenter", "tco")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "aiinfra":
                names += [f"aiinfra.{a.name}" for a in node.names]
            else:
                names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return [n for n in names if n == "aiinfra" or n.startswith("aiinfra.")]


@pytest.mark.parametrize("path", sorted(COMMANDS.glob("*.py")), ids=lambda p: p.name)
def test_commands_import_only_the_app_layer_report_specs_and_errors(path: Path) -> None:
    bad = [n for n in _imports(path) if not n.startswith(ALLOWED)]
    assert not bad, f"{path.name} imports {bad}"


def test_the_import_walk_would_catch_a_domain_import(tmp_path: Path) -> None:
    shell = tmp_path / "x_cmd.py"
    shell.write_text("from aiinfra.planning.training import plan_training\nfrom aiinfra import catalog, app\n")
    assert [n for n in _imports(shell) if not n.startswith(ALLOWED)] == ["aiinfra.planning.training", "aiinfra.catalog"]


def _cli(*args: str) -> tuple[int, Any, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return rc, json.loads(out.getvalue()) if rc == 0 else None, err.getvalue().strip()


def _no_wall_time(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _no_wall_time(v) for k, v in obj.items() if not k.endswith("wall_s")}
    if isinstance(obj, list):
        return [_no_wall_time(v) for v in obj]
    return obj


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_gives_the_same_answer_from_the_api_and_the_cli(example: Path) -> None:
    section = next(iter(yaml.safe_load(example.read_text()) or {}), "")
    if section in ("schedule", "pack"):  # a schedule or portfolio file: one question of its own, not a scenario
        rc, cli_obj, err = _cli(section, str(example), "--json")
        assert rc == 0, err
        api_obj = json.loads(json.dumps(getattr(app, section)(str(example)).to_dict(), allow_nan=False))
        assert _no_wall_time(api_obj) == _no_wall_time(cli_obj)
        return
    answered = 0
    for question in QUESTIONS:
        rc, cli_obj, err = _cli(question, str(example), "--json")
        try:
            result = getattr(aiinfra, question)(str(example))
        except AiinfraError as exc:
            assert rc == 2, f"{question}: the API refused ({exc}) but the CLI answered"
            assert str(exc) in err, f"{question}: CLI said {err!r}, API {exc}"
            continue
        assert rc == 0, f"{question}: the API answered but the CLI said {err}"
        # the CLI prints the result through JSON: compare after the same round trip
        api_obj = json.loads(json.dumps(result.to_dict(), allow_nan=False))
        assert _no_wall_time(api_obj) == _no_wall_time(cli_obj), question
        answered += 1
    assert answered >= 2  # every example answers at least `check` and its own command


def test_a_notebook_user_plans_estimates_and_sweeps_into_a_dataframe() -> None:
    pandas = pytest.importorskip("pandas")
    plan = aiinfra.train(EXAMPLES / "train-llama3.1-70b-h100.yaml")
    est = aiinfra.infer(EXAMPLES / "infer-llama3.1-70b-h100.yaml")
    rows = []
    for count in range(8, 168, 8):  # 20 points
        r = aiinfra.infer(EXAMPLES / "infer-llama3.1-70b-h100.yaml", set={"hardware.count": count})
        rows.append(
            {
                "count": count,
                "replicas": r.estimate.replicas,
                "batch": r.estimate.batch_seqs,
                "tokens_per_s": r.estimate.output_tokens_per_s,
            }
        )
    frame = pandas.DataFrame(rows)
    assert len(frame) == 20
    # the plan is tp8: one replica per 8 accelerators, the example's 64 concurrent users spread over them
    assert list(frame.replicas) == [c // 8 for c in range(8, 168, 8)]
    assert list(frame.batch) == [math.ceil(64 / (c // 8)) for c in range(8, 168, 8)]
    assert plan.best.fits and 0 < plan.best.mfu_frac < 1
    assert est.estimate.ttft_s > 0
    table = plan.to_frame()
    assert list(table["rank"]) == list(range(1, len(plan.report.estimates) + 1))
    assert table["step_time_s"].is_monotonic_increasing  # ranked fastest first


def test_load_scenario_takes_a_mapping_and_overrides_like_the_cli() -> None:
    import yaml

    path = EXAMPLES / "infer-llama3.1-70b-h100.yaml"
    mapping = yaml.safe_load(path.read_text())
    from_map = aiinfra.load_scenario(mapping, set={"hardware.count": 16})
    from_file = aiinfra.load_scenario(path, set=["hardware.count=16"])
    assert from_map.cluster.count == from_file.cluster.count == 16
    assert app.infer(from_map).to_dict() == app.infer(from_file).to_dict()
    assert mapping["hardware"]["count"] == 8  # the caller's mapping is left as it was
    nested = {"model": "meta-llama-3.1-8b", "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 8}}
    aiinfra.load_scenario(nested, set={"hardware.count": 16})
    assert nested["hardware"]["count"] == 8
    # an override applied to an already resolved scenario re-reads its file
    assert aiinfra.load_scenario(from_file, set={"hardware.count": 24}).cluster.count == 24


def test_bad_input_from_the_api_is_a_spec_error_naming_the_field() -> None:
    with pytest.raises(SpecError) as exc:
        aiinfra.infer(EXAMPLES / "infer-llama3.1-70b-h100.yaml", set={"hardware.accelerator": "nvidia-h1000"})
    assert exc.value.field == "hardware.accelerator"
    with pytest.raises(SpecError) as unknown:
        app.answer("nonsense", EXAMPLES / "infer-llama3.1-70b-h100.yaml")
    assert unknown.value.field == "question"


def test_to_frame_without_pandas_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    result = aiinfra.memory(EXAMPLES / "memory-llama2-7b-adam-fp16.yaml")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(app.MissingExtraError, match=r"aiinfra\[frames\]"):
        result.to_frame()


def test_flatten_keeps_units_in_dotted_keys() -> None:
    assert app.flatten({"a_s": 1.0, "b": {"c_bytes": 2, "d": {"e_w": 3}}, "f": [1, 2]}) == {
        "a_s": 1.0,
        "b.c_bytes": 2,
        "b.d.e_w": 3,
        "f": [1, 2],
    }


def test_import_aiinfra_is_lazy() -> None:
    code = "import sys, aiinfra; print(int('aiinfra.planning.training' in sys.modules or 'numpy' in sys.modules))"
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


def test_the_api_page_snippet_runs() -> None:
    """docs/api.md's first code block: a plan, an estimate and a 20-point loop into a DataFrame."""
    pytest.importorskip("pandas")
    text = (ROOT / "docs" / "api.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 10
    scope: dict[str, Any] = {}
    cwd = Path.cwd()
    try:
        import os

        os.chdir(ROOT)
        exec(compile(code, "docs/api.md", "exec"), scope)  # the documentation's own example, run as a user would
    finally:
        os.chdir(cwd)
    assert len(scope["frame"]) == 20


@pytest.mark.parametrize("cwd", ["docs", "."])
def test_the_api_notebook_executes(cwd: str) -> None:
    """As plain Jupyter runs it (``jupyter nbconvert --execute docs/api_tour.ipynb`` starts the kernel in docs/)
    and as a user who opened it from the repository root does."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "docs" / "api_tour.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str((ROOT / cwd).resolve())}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("hardware.accelerator" in o.get("text", "") for o in outputs)  # the SpecError cell printed its field


def test_a_command_imports_only_what_it_runs() -> None:
    import subprocess

    code = (
        "import sys, contextlib, io\nfrom aiinfra.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['infer', 'examples/infer-llama3.1-70b-h100.yaml'])\n"
        "print(sorted(m for m in ('aiinfra.sim.run', 'aiinfra.validation.runner', 'aiinfra.costing.tco',"
        " 'aiinfra.commands.train_cmd') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_a_question_named_like_its_module_stays_the_function() -> None:
    import importlib

    importlib.import_module("aiinfra.app.cost")  # the import system binds submodules on their package
    assert callable(app.cost) and app.QUESTIONS["cost"] is app.cost
