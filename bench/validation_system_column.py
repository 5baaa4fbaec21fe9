"""Fill the ``system`` column of validation rows whose run used a board the hardware model tells apart from the
accelerator's usual system.

The rule reads only a row's ``source_url`` (an input column), never a measured value, so it fills open and sealed
files alike. MLPerf Inference submissions name their system in the result path (``closed/<submitter>/results/
<system>/...``), and each system's description (``closed/<submitter>/systems/<system>.json``) states its board:

* ``XE8640_H100_SXM_80GBx4_TRT``, ``XE9640_H100_SXM_80GBx4_TRT`` (Dell PowerEdge XE8640 / XE9640) and
  ``GX2560M7_H100_SXM_80GBx4_TRT`` (Fujitsu PRIMERGY GX2560 M7): ``accelerators_per_node`` 4,
  ``accelerator_interconnect`` "6x 4th Gen NVLink, 900GB/s" (mlcommons/inference_results_v4.1 at a2f5d66): the
  HGX H100 4-GPU board, catalog system ``hgx-h100-4gpu``.

The column goes before ``notes`` where a file lacks it; the files keep their CRLF line ends and quoting.

    python bench/validation_system_column.py [--check] [FILE.csv ...]
    (default: every inference CSV shipped but the seal lists)
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data"
SYSTEMS = {
    "/results/XE8640_H100_SXM_80GBx4_TRT/": "hgx-h100-4gpu",
    "/results/XE9640_H100_SXM_80GBx4_TRT/": "hgx-h100-4gpu",
    "/results/GX2560M7_H100_SXM_80GBx4_TRT/": "hgx-h100-4gpu",
}
"""Result-path fragment of a submission -> the catalog system its description states."""


def system_of(source_url: str) -> str:
    """The catalog system a row's source names (SYSTEMS), else ""."""
    return next((sid for frag, sid in SYSTEMS.items() if frag in source_url), "")


def filled(text: str) -> str:
    """The CSV ``text`` with its ``system`` column filled by :func:`system_of` (added before ``notes`` if absent)."""
    rows = list(csv.reader(io.StringIO(text)))
    head = rows[0]
    url = head.index("source_url")
    if "system" in head:
        col = head.index("system")
        body = [[*r[:col], r[col] or system_of(r[url]), *r[col + 1 :]] for r in rows[1:]]
        out = [head, *body]
    else:
        at = head.index("notes")
        out = [[*head[:at], "system", *head[at:]]] + [[*r[:at], system_of(r[url]), *r[at:]] for r in rows[1:]]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n" if "\r\n" in text else "\n").writerows(out)
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--check", action="store_true", help="exit 1 if a file would change")
    args = ap.parse_args()
    paths = args.files or sorted(p for p in DATA.glob("inference*.csv") if not p.stem.endswith("_seal"))
    stale = []
    for path in paths:
        with path.open(newline="") as f:
            text = f.read()
        if not any(frag in text for frag in SYSTEMS) and "system" not in text.splitlines()[0]:
            continue  # no row of a listed system: the file keeps its columns
        new = filled(text)
        if new != text:
            stale.append(path.name)
            if not args.check:
                with path.open("w", newline="") as f:
                    f.write(new)
    print(("would change: " if args.check else "changed: ") + (", ".join(stale) or "none"))
    if args.check and stale:
        sys.exit(1)


if __name__ == "__main__":
    main()
