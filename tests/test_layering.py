"""The package layering of src/aiinfra, read from every module's import statements (module level, inside functions
and under TYPE_CHECKING alike): each package imports only the packages :data:`ALLOWED` lists for it, the package
graph has no cycle, and ``specs`` imports nothing above it. A new package needs its row here (what it may import)."""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "aiinfra"

_BASE = {"errors", "units", "diskcache", "dataclass_code"}
#: package (or top-level module) -> the aiinfra packages it may import; lower layers first
ALLOWED: dict[str, set[str]] = {
    "units": set(),
    "errors": set(),
    "diskcache": set(),
    "dataclass_code": {"diskcache"},
    "specs": _BASE,
    "catalog": _BASE | {"specs"},
    "analytic": _BASE | {"specs", "catalog"},
    "search": _BASE | {"specs", "analytic"},
    "reliability": _BASE | {"specs", "catalog", "analytic"},
    "costing": _BASE | {"specs", "catalog", "reliability"},
    "planning": _BASE | {"specs", "catalog", "analytic", "search", "costing"},
    "sim": _BASE | {"specs", "catalog", "analytic", "planning"},
    "sharing": _BASE | {"specs", "catalog", "planning", "reliability"},
    "report": _BASE | {"costing"},  # humanising: the price-age text and hours per month
    "validation": _BASE | {"specs", "catalog", "analytic", "search", "planning", "sim", "report"},
    "calibration": _BASE | {"specs", "catalog", "analytic", "planning"},
    # error bands: the validation rows' errors by regime (scored by the validation and reliability layers)
    "accuracy": _BASE | {"specs", "catalog", "analytic", "reliability", "validation"},
    "sweeping": _BASE,
    "app": _BASE
    | {"specs", "catalog", "analytic", "search", "reliability", "costing", "planning", "sim", "sharing", "report"}
    | {"validation", "sweeping", "calibration", "accuracy"},
    # the shells: only the application layer and what formats or parses its input and output
    "api": _BASE | {"app", "catalog"},
    "web": _BASE | {"app", "report", "specs"},
    "commands": _BASE | {"app", "report", "specs", "web"},
    "cli": _BASE | {"commands", "catalog", "report"},
    "__init__": set(),
}

#: imports that break the layers, each with the move that removes it; the tests allow only these (no new ones)
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {
    ("reliability", "app"): "reliability/validation.py answers its ETTR row with app.train: the row's prediction "
    "belongs in the application or validation layer",
}


def _package(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imported(tree: ast.AST) -> set[str]:
    """The aiinfra packages (first name under aiinfra) a module's import statements name."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if node.module != "aiinfra" else [f"aiinfra.{a.name}" for a in node.names]
        else:
            continue
        out |= {n.split(".")[1] for n in names if n.startswith("aiinfra.") and n != "aiinfra.__version__"}
    return out


@cache
def _graph() -> dict[str, dict[str, list[str]]]:
    """package -> imported package -> the modules that import it."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(SRC.rglob("*.py")):
        pkg = _package(path)
        for target in _imported(ast.parse(path.read_text(encoding="utf-8"))) - {pkg}:
            graph[pkg][target].append(str(path.relative_to(SRC)))
    return graph


def test_every_package_has_its_rule() -> None:
    packages = {_package(p) for p in SRC.rglob("*.py")}
    assert packages <= set(ALLOWED), f"add a row to ALLOWED for {sorted(packages - set(ALLOWED))}"


@pytest.mark.parametrize("pkg", sorted(ALLOWED))
def test_imports_follow_the_layers(pkg: str) -> None:
    graph = _graph()
    allowed = ALLOWED[pkg] | {t for p, t in KNOWN_VIOLATIONS if p == pkg}
    bad = {t: where for t, where in graph.get(pkg, {}).items() if t not in allowed}
    assert not bad, f"{pkg} may import only {sorted(ALLOWED[pkg])}; found {bad}"


def test_specs_imports_nothing_above_it() -> None:
    assert set(_graph().get("specs", {})) <= _BASE


def test_no_package_cycles() -> None:
    graph = {p: {t for t in targets if (p, t) not in KNOWN_VIOLATIONS} for p, targets in _graph().items()}
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(p: str, path: list[str]) -> None:
        state[p] = 1
        for q in sorted(graph.get(p, ())):
            if state.get(q) == 1:
                raise AssertionError("package cycle: " + " -> ".join([*path[path.index(q) :], q]))
            if q not in state:
                visit(q, [*path, q])
        state[p] = 2

    for p in sorted(graph):
        if p not in state:
            visit(p, [p])


def test_the_rule_itself_is_acyclic() -> None:
    # the table is a layering: no package may import one that may import it back
    for pkg, allowed in ALLOWED.items():
        for other in allowed:
            assert pkg not in ALLOWED.get(other, set()), (pkg, other)


#: the packages at or above the catalog boundary: the catalog itself, the application layer and the shells
BOUNDARY = {"catalog", "app", "api", "web", "commands", "cli", "__init__"}

#: modules below app/ that still read the active catalog, each with what frees it; a module leaves this table when
#: its tables come as arguments (docs/architecture.md, "The catalog boundary"), and none may join it
STILL_READ_CATALOG: dict[str, str] = {}


def _below_app() -> list[Path]:
    return [p for p in sorted(SRC.rglob("*.py")) if _package(p) not in BOUNDARY]


def test_below_the_app_layer_only_the_listed_modules_import_the_catalog() -> None:
    found = {
        str(p.relative_to(SRC))
        for p in _below_app()
        if "catalog" in _imported(ast.parse(p.read_text(encoding="utf-8")))
    }
    assert found <= set(STILL_READ_CATALOG), f"take catalog rows as arguments, not from aiinfra.catalog: {found}"
    freed = set(STILL_READ_CATALOG) - found
    assert not freed, f"no longer import the catalog: remove them from STILL_READ_CATALOG: {sorted(freed)}"


def test_below_the_app_layer_no_module_reads_the_active_catalog() -> None:
    # the ambient lookups (catalog.active(), catalog.use()) exist only at the boundary and in the listed modules
    found = [
        str(p.relative_to(SRC))
        for p in _below_app()
        if str(p.relative_to(SRC)) not in STILL_READ_CATALOG
        and ("catalog.active()" in p.read_text(encoding="utf-8") or "catalog.use(" in p.read_text(encoding="utf-8"))
    ]
    assert found == []
