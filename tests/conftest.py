from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture(autouse=True, scope="session")
def _catalog_cache_dir(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Parsed-catalog cache of this test session (not the user's): CLI subprocesses inherit it."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    yield
    patch.undo()


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
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
