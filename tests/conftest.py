from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


#: test kinds, selected with ``pytest -m`` (pyproject.toml registers them); a file's tests are ``unit`` unless listed:
#: ``browser`` drives Chromium; ``integration`` runs whole commands through the CLI, the web API or a sweep
BROWSER_FILES = {"test_web_browser.py"}
INTEGRATION_FILES = {"test_cli_errors.py", "test_cost_cli.py", "test_web_api.py", "test_sweep.py", "test_app_layer.py",
                     "test_answers.py", "test_cli_startup.py"}  # fmt: skip
#: ``slow``: left out of the fast loop (README: ``pytest -m "not slow and not browser"``), run by .ci/run. Whole
#: files (a module fixture that runs every validation row) or single tests (file::function, all its parameters)
SLOW_FILES = {"test_validation_inference.py", "test_validation_training.py", "test_sweep.py"}
SLOW_TESTS: set[str] = set()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        kind = "browser" if name in BROWSER_FILES else "integration" if name in INTEGRATION_FILES else "unit"
        item.add_marker(getattr(pytest.mark, kind))
        function = getattr(item, "originalname", item.name)
        if name in SLOW_FILES or f"{name}::{function}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True, scope="session")
def _catalog_cache_dir(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Parsed-catalog cache of this test session (not the user's): CLI subprocesses inherit it."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    yield
    patch.undo()


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
