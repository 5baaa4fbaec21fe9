"""The path a command's scenario takes through the package: which src modules run between the CLI handler's entry
and its return, and how often the path turns back up the layers.

A profile hook (``sys.setprofile``) sees every Python call and return while ``aiinfra <command> <example>`` runs in
this process (a first, untraced run fills the in-process and on-disk caches of imports only: it runs in another
process). Import-time code (module bodies, and everything they call) is left out: it is loading, not the path.
Counted, over the ``aiinfra.*`` frames only:

* ``modules``: distinct modules that ran a function (the "rooms" of issue 27);
* ``calls``: cross-module calls (caller's module != callee's module), and ``edges``: distinct (caller, callee)
  module pairs among them;
* ``up``: cross-module calls from a lower layer into a higher one, by the package order below (a domain module
  calling back into ``app``, or ``catalog`` into ``planning``), and ``up_edges`` the distinct pairs;
* ``back_and_forth``: module pairs that call each other in both directions (``planning/inference.py`` ⇄
  ``analytic/inference.py``).

Layers, top to bottom (tests/test_layering.py's table, flattened): cli, commands, web, api, app, sweeping, accuracy,
validation, calibration, sharing, sim, planning, costing, reliability, search, analytic, report, catalog, specs,
units/errors.

    python bench/module_path.py [--command infer] [--example examples/infer-llama3.1-70b-h100.yaml] [--src DIR]
                                [--list]

Prints one JSON line (``--list``: also the modules in first-visit order). ``--src DIR`` traces another source tree's
package (e.g. an exported older commit) in a fresh interpreter, for a before/after comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LAYERS = (
    "cli",
    "commands",
    "web",
    "api",
    "app",
    "sweeping",
    "accuracy",
    "validation",
    "calibration",
    "sharing",
    "sim",
    "planning",
    "costing",
    "reliability",
    "search",
    "analytic",
    "report",
    "catalog",
    "specs",
    "units",
    "errors",
)


def layer(module: str) -> int:
    """Rank of a module's package (0 = top); the package ``aiinfra`` itself counts as the top."""
    parts = module.split(".")
    pkg = parts[1] if len(parts) > 1 else "cli"
    return LAYERS.index(pkg) if pkg in LAYERS else 0


def trace(command: str, example: str) -> dict[str, Any]:
    """Run ``aiinfra command example`` in this process under the profile hook; the counts above."""
    from aiinfra.cli import main

    visited: list[str] = []
    stack: list[str | None] = []
    calls = up = 0
    edges: set[tuple[str, str]] = set()
    up_edges: set[tuple[str, str]] = set()
    importing = 0  # depth inside module-body execution (imports), which is not counted

    def hook(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls, up, importing
        if event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        is_body = frame.f_code.co_name == "<module>"
        if event == "return":
            if is_body:
                importing -= 1
            if stack:
                stack.pop()
            return
        if is_body:
            importing += 1
        ours = module.startswith("aiinfra") and not importing
        caller = next((m for m in reversed(stack) if m is not None), None)
        stack.append(module if ours else None)
        if not ours:
            return
        if module not in visited:
            visited.append(module)
        if caller is not None and caller != module:
            calls += 1
            edges.add((caller, module))
            if layer(module) < layer(caller):
                up += 1
                up_edges.add((caller, module))

    out, err = io.StringIO(), io.StringIO()
    sys.setprofile(hook)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main([command, example])
    finally:
        sys.setprofile(None)
    if rc != 0:
        raise SystemExit(f"aiinfra {command} {example} failed: {err.getvalue()}")
    pairs = {tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges}
    return {
        "command": command,
        "example": example,
        "modules": len(visited),
        "calls": calls,
        "edges": len(edges),
        "up": up,
        "up_edges": len(up_edges),
        "back_and_forth": len(pairs),
        "back_and_forth_pairs": sorted(f"{a} <-> {b}" for a, b in pairs),
        "up_edge_list": sorted(f"{a} -> {b}" for a, b in up_edges),
        "visited": visited,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--command", default="infer")
    ap.add_argument("--example", default=str(ROOT / "examples" / "infer-llama3.1-70b-h100.yaml"))
    ap.add_argument("--src", type=Path, default=None, help="a source tree's src/ folder to trace instead")
    ap.add_argument("--list", action="store_true", help="also print the modules in first-visit order")
    args = ap.parse_args()
    if args.src is not None and os.environ.get("_MODULE_PATH_CHILD") != "1":
        env = {**os.environ, "PYTHONPATH": str(args.src), "_MODULE_PATH_CHILD": "1"}
        argv = [sys.executable, __file__, "--command", args.command, "--example", args.example]
        subprocess.run([*argv, *(["--list"] if args.list else [])], env=env, check=True)
        return
    # fill the on-disk caches (parsed catalog, validated scenario) as an earlier run of the command would
    warm_up = [sys.executable, "-m", "aiinfra.cli", args.command, args.example]
    subprocess.run(warm_up, capture_output=True, check=True, env=os.environ)
    result = trace(args.command, args.example)
    if not args.list:
        result.pop("visited")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
