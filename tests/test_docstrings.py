"""Every public function, class and method has a docstring (issue 27: docstrings on public definitions).

Public: a module-level function or class whose name does not start with "_", and a method not starting with "_" of
any module-level class (a private class's methods are the interface its module uses). Dunder methods are exempt:
their meaning is Python's. ``to_dict`` is not: its docstring says which JSON contract the dict is."""

from __future__ import annotations

import ast
from pathlib import Path

import aiinfra

SRC = Path(aiinfra.__file__).parent
_DEFS = ast.FunctionDef | ast.AsyncFunctionDef


def _public_definitions() -> dict[str, bool]:
    """``path::name`` (``path::Class.method`` for a method) -> whether it has a docstring."""
    out: dict[str, bool] = {}

    def add(key: str, node: ast.AST) -> None:
        assert isinstance(node, _DEFS | ast.ClassDef)
        out[key] = out.get(key, True) and ast.get_docstring(node) is not None  # a redefinition must have one too

    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, _DEFS | ast.ClassDef) and not node.name.startswith("_"):
                add(f"{rel}::{node.name}", node)
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, _DEFS) and not sub.name.startswith("_"):
                        add(f"{rel}::{node.name}.{sub.name}", sub)
    return out


def test_every_public_definition_has_a_docstring() -> None:
    missing = sorted(k for k, documented in _public_definitions().items() if not documented)
    assert missing == [], f"say what these do (and return, with units) in a docstring: {missing}"
