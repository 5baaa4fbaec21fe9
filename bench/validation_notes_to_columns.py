"""Move the run settings a validation CSV states in ``notes`` into their columns (aiinfra.validation.switches).

For every training or inference file named (default: every CSV of src/aiinfra/validation/data), adds the missing
switch columns before ``notes``, fills each blank switch cell from the row's notes (a non-blank cell is kept), and
takes the values of ``name value`` settings out of the notes. Files of other kinds (reliability rows, the seal list)
are left alone; leading ``#`` comment lines and the file's line ending are kept. Idempotent: a converted file is
left byte-identical. ``--check`` changes nothing and exits 1 when a file would change.

    python bench/validation_notes_to_columns.py [--check] [FILE.csv ...]
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from aiinfra.app.tables import row_tables
from aiinfra.validation.switches import convert

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data"


def converted_text(text: str) -> str | None:
    """The converted file text, or None when the file is not a training or inference CSV."""
    lines = text.splitlines(keepends=True)
    comments = [ln for ln in lines if ln.startswith("#")]
    body = "".join(ln for ln in lines if not ln.startswith("#"))
    reader = csv.DictReader(io.StringIO(body, newline=""))
    header = list(reader.fieldnames or [])
    rows = list(reader)
    done = convert(header, rows, row_tables().engines)
    if done is None:
        return None
    new_header, new_rows = done
    ending = "\r\n" if lines and lines[len(comments)].endswith("\r\n") else "\n"
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=new_header, lineterminator=ending)
    writer.writeheader()
    writer.writerows(new_rows)
    return "".join(comments) + out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="validation CSVs (default: every one shipped)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    args = parser.parse_args(argv)
    files = args.files or sorted(DATA.glob("*.csv"))
    changed = []
    for path in files:
        text = path.read_bytes().decode("utf-8")
        new = converted_text(text)
        if new is None:
            print(f"{path}: not a training or inference file, left alone")
            continue
        if new == text:
            continue
        changed.append(path)
        if not args.check:
            path.write_text(new, encoding="utf-8", newline="")
        print(f"{path}: {'would change' if args.check else 'converted'}")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
