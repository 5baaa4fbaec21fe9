"""No function over 80 lines without a reason in its docstring (issue 27: small functions, or a stated reason)."""

from __future__ import annotations

import ast
from pathlib import Path

import aiinfra

SRC = Path(aiinfra.__file__).parent
MAX_LINES = 80


def _long_functions() -> dict[str, str]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                if node.end_lineno - node.lineno + 1 > MAX_LINES:
                    out[f"{path.relative_to(SRC).as_posix()}::{node.name}"] = ast.get_docstring(node) or ""
    return out


def test_a_long_function_says_why_in_its_docstring() -> None:
    unexplained = sorted(k for k, doc in _long_functions().items() if "Long" not in doc)
    assert unexplained == [], f"split these, or say why they are long ('Long because ...'): {unexplained}"
