"""Whole-process start-up time of `aiinfra infer` and `aiinfra train` on the shipped examples, of `aiinfra --version`
and `aiinfra --help`, beside ``python -c "import numpy, pydantic"`` (the floor every scenario command pays).

Each case runs the command as a fresh process ``--repeat`` times and reports min and median wall time and CPU time
(user + system of the child). ``cold``: an empty catalog cache folder for every run (parse and validate the data
files); ``warm``: one folder, filled by an untimed first run; ``off``: AIINFRA_NO_CACHE=1. ``--src DIR`` runs another
source tree's package (e.g. an exported older commit) with this interpreter, for a before/after comparison.
``--lazy-cli`` imports only the command that runs (a prototype of a CLI that registers its commands without
importing them), to show what the command modules' own imports cost. ``--against DIR`` runs warm ``infer`` and
``train`` of this tree and of DIR's in alternation (each with its own cache folder) beside numpy+pydantic, so a
before/after comparison on a shared machine sees the same load in both columns. The package's bytecode is compiled first
(``compileall``), as an installed package's is, so no case pays for compiling sources. Prints one JSON line.

    python bench/bench_startup.py [--repeat 10] [--src DIR] [--lazy-cli] [--against DIR]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES = {
    "infer": ROOT / "examples" / "infer-llama3.1-70b-h100.yaml",
    "train": ROOT / "examples" / "train-llama3.1-70b-h100.yaml",
}
LAZY_CLI = """
import argparse, importlib, sys
mod = importlib.import_module(f"aiinfra.commands.{sys.argv[1]}_cmd")
parser = argparse.ArgumentParser(prog="aiinfra")
mod.register(parser.add_subparsers(dest="command"))
args = parser.parse_args(sys.argv[1:])
obj, text = args.handler(args)
sys.stdout.write(text + "\\n")
"""


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, child CPU s) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _summary(samples: list[tuple[float, float]]) -> dict[str, float]:
    walls = [w for w, _ in samples]
    cpus = [c for _, c in samples]
    return {
        "wall_min_s": round(min(walls), 3),
        "wall_median_s": round(statistics.median(walls), 3),
        "cpu_min_s": round(min(cpus), 3),
        "cpu_median_s": round(statistics.median(cpus), 3),
    }


def bench(repeat: int, src: Path | None, lazy_cli: bool) -> dict[str, Any]:
    base_env = dict(os.environ)
    base_env.pop("AIINFRA_NO_CACHE", None)
    if src is not None:
        base_env["PYTHONPATH"] = str(src)
    prefix = [sys.executable, "-c", LAZY_CLI] if lazy_cli else [sys.executable, "-m", "aiinfra.cli"]
    out: dict[str, Any] = {
        "repeat": repeat,
        "src": str(src) if src else "installed",
        "lazy_cli": lazy_cli,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    compileall.compile_dir(str((src or ROOT / "src") / "aiinfra"), quiet=1)
    quick = {
        "import numpy, pydantic": [sys.executable, "-c", "import numpy, pydantic"],
        "--version": [*prefix, "--version"],
        "--help": [*prefix, "--help"],
    }
    if lazy_cli:  # the prototype runs commands only
        del quick["--version"], quick["--help"]
    for label, argv in quick.items():
        out[label] = _summary([_run(argv, base_env) for _ in range(repeat)])
    with tempfile.TemporaryDirectory() as tmp:
        for name, example in CASES.items():
            argv = [*prefix, name, str(example)]
            cold = []
            for i in range(repeat):
                env = {**base_env, "XDG_CACHE_HOME": str(Path(tmp) / f"cold-{name}-{i}")}
                cold.append(_run(argv, env))
            warm_env = {**base_env, "XDG_CACHE_HOME": str(Path(tmp) / "warm")}
            _run(argv, warm_env)  # fills the cache
            warm = [_run(argv, warm_env) for _ in range(repeat)]
            off = [_run(argv, {**base_env, "AIINFRA_NO_CACHE": "1"}) for _ in range(repeat)]
            out[name] = {"cold": _summary(cold), "warm": _summary(warm), "off": _summary(off)}
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def against(repeat: int, other: Path) -> dict[str, Any]:
    """Warm ``infer`` and ``train`` of this tree and of ``other`` (a src/ folder) in alternation, each tree with its
    own filled cache folder, beside ``import numpy, pydantic``: on a shared machine both trees see the same load."""
    trees = {"this": ROOT / "src", "other": other}
    cases = {"import numpy, pydantic": ["-c", "import numpy, pydantic"]}
    cases |= {name: ["-m", "aiinfra.cli", name, str(example)] for name, example in CASES.items()}
    out: dict[str, Any] = {
        "repeat": repeat,
        "other": str(other),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    samples: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        envs = {}
        for tree, src in trees.items():
            compileall.compile_dir(str(src / "aiinfra"), quiet=1)
            env = {**os.environ, "PYTHONPATH": str(src), "XDG_CACHE_HOME": str(Path(tmp) / tree)}
            env.pop("AIINFRA_NO_CACHE", None)
            envs[tree] = env
            for argv in cases.values():
                _run([sys.executable, *argv], env)  # fills the tree's cache
        for _ in range(repeat):
            for label, argv in cases.items():
                for tree in trees if label != "import numpy, pydantic" else ["this"]:
                    samples.setdefault(f"{label}, {tree}", []).append(_run([sys.executable, *argv], envs[tree]))
    out |= {key: _summary(runs) for key, runs in samples.items()}
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--src", type=Path, default=None, help="a source tree's src/ folder to run instead")
    ap.add_argument("--lazy-cli", action="store_true", help="import only the command that runs")
    ap.add_argument("--against", type=Path, default=None, help="another src/ folder, run warm in alternation")
    args = ap.parse_args()
    if args.against is not None:
        print(json.dumps(against(args.repeat, args.against)))
        return
    print(json.dumps(bench(args.repeat, args.src, args.lazy_cli)))


if __name__ == "__main__":
    main()
