"""Predict every validation row and write the error table the answers' bands come from
(src/aiinfra/accuracy/data/error_table.json, with the date, the code version and the input files' hashes), then the
"Error bands" section of docs/validation.md (coverage and width of the leave-one-source-out 80 % intervals by regime,
open and sealed): `python bench/accuracy_table.py [--no-build] [--open-only]` (--no-build: only the section, from
the shipped table; --open-only: print the open rows' figures only and leave docs/validation.md as it is, for work on
the error model that must not read the sealed rows' scores). Takes a few minutes: the inference rows run the
simulator."""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

from aiinfra import __version__, catalog
from aiinfra.accuracy.coverage import MARK, markdown
from aiinfra.accuracy.table import MADE_BY, TABLE_PATH, build, files_meta, write
from aiinfra.app.tables import reliability_table, row_tables
from aiinfra.reliability.validation import MARK as RELIABILITY_MARK

ROOT = Path(__file__).resolve().parent.parent


def code_version() -> str:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"aiinfra {__version__}"
    return f"aiinfra {__version__}, git {commit}{' + uncommitted changes under src/' if dirty else ''}"


def write_section(text: str) -> None:
    """Replace the section between MARK and the reliability section (or the end) of docs/validation.md."""
    doc = ROOT / "docs" / "validation.md"
    old = doc.read_text()
    tail = old[old.index(RELIABILITY_MARK) :] if RELIABILITY_MARK in old else ""
    head = old[: old.index(MARK)] if MARK in old else (old[: old.index(RELIABILITY_MARK)] if tail else old)
    doc.write_text(head.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n\n" + tail)


def main() -> None:
    if "--no-build" not in sys.argv:

        def progress(name: str, done: int, total: int | None) -> None:
            if done % 20 == 0 or done == total:
                print(f"{name}: {done}/{total}", file=sys.stderr, flush=True)

        rows = build(catalog.generations(), reliability_table(), row_tables(), progress)
        meta = {
            "made_on": datetime.date.today().isoformat(),
            "code_version": code_version(),
            "made_by": MADE_BY,
            "method": "docs/accuracy.md",
            "files": files_meta(),
        }
        write(rows, meta, TABLE_PATH)
    from aiinfra.accuracy import table

    table._read.cache_clear()
    if "--open-only" in sys.argv:
        print(markdown(table.shipped(), open_only=True))
        return
    section = markdown(table.shipped())
    write_section(section)
    print(section)


if __name__ == "__main__":
    main()
