"""Every command's --json on every shipped example, written to a folder; or two such folders compared.

A refactoring guard: run it before and after a change that must not move any answer, then compare. Keys that
hold wall-clock time (``*wall_s``) are ignored by the comparison.

    python bench/examples_json.py dump OUT_DIR
    python bench/examples_json.py compare BEFORE_DIR AFTER_DIR
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from aiinfra.cli import main

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("check", "train", "memory", "infer", "capacity", "simulate", "cost", "datacenter", "tco")


def dump(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for example in sorted((ROOT / "examples").glob("*.yaml")):
        for cmd in COMMANDS:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = main([cmd, str(example), "--json"])
            record = {
                "rc": rc,
                "stdout": json.loads(out.getvalue()) if rc == 0 else None,
                "stderr": err.getvalue().strip(),
            }
            (out_dir / f"{example.stem}__{cmd}.json").write_text(json.dumps(record, indent=1, sort_keys=True))
            print(f"{example.stem:40s} {cmd:10s} rc={rc}", flush=True)


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if not k.endswith("wall_s")}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def compare(before: Path, after: Path) -> int:
    differ = 0
    for b in sorted(before.glob("*.json")):
        a = after / b.name
        if not a.exists():
            print(f"missing after: {b.name}")
            differ += 1
            continue
        if _strip(json.loads(b.read_text())) != _strip(json.loads(a.read_text())):
            print(f"differs: {b.name}")
            differ += 1
    print(f"{differ} of {len(list(before.glob('*.json')))} outputs differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        dump(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        raise SystemExit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        raise SystemExit(__doc__)
