from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


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
