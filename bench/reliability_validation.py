"""Score the failure model against published operational figures and write the "Reliability" section at the end of
docs/validation.md (aiinfra.reliability.validation): `python bench/reliability_validation.py [--json]`."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

from aiinfra.app.tables import reliability_table
from aiinfra.reliability.validation import MARK, markdown, score, summary


def main() -> None:
    rows = score(reliability_table())
    if "--json" in sys.argv:
        print(json.dumps({"summary": summary(rows), "rows": [asdict(r) for r in rows]}, indent=2))
        return
    doc = Path(__file__).resolve().parent.parent / "docs" / "validation.md"
    text = doc.read_text()
    head = text[: text.index(MARK)] if MARK in text else text.rstrip("\n") + "\n\n"
    doc.write_text(head + markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
