"""Fill validation rows' input columns with what their sources state about the runs, where a column was left at an
assumption. Each rule reads only a row's input columns (``source_url``, ``input_tokens``, ``output_tokens`` and the
column it fills), never a measured value, so it fills open and sealed files alike.

* ``system`` (the board the run used, where the hardware model tells it apart). MLPerf Inference submissions name
  their system in the result path (``closed/<submitter>/results/<system>/...``) and describe it in
  ``closed/<submitter>/systems/<system>.json``: ``XE8640_H100_SXM_80GBx4_TRT``, ``XE9640_H100_SXM_80GBx4_TRT``
  (Dell PowerEdge XE8640 / XE9640) and ``GX2560M7_H100_SXM_80GBx4_TRT`` (Fujitsu PRIMERGY GX2560 M7) give
  ``accelerators_per_node`` 4 and ``accelerator_interconnect`` "6x 4th Gen NVLink, 900GB/s"
  (mlcommons/inference_results_v4.1 at a2f5d66): the HGX H100 4-GPU board, catalog system ``hgx-h100-4gpu``. The
  column goes before ``notes`` where a file lacks it.
* ``length_distribution``, ``input_tokens``, ``output_tokens`` (the client's length range). InferenceX
  (github.com/SemiAnalysisAI/InferenceX, issue #870, 2026-03-05): the fixed-seq-len workflow
  (``.github/workflows/benchmark-tmpl.yml``) sets ``RANDOM_RANGE_RATIO: 0.8`` in every version from 2026-01-21 to
  2026-03-27 (its input default was '0.8' before), the launch script passes it as ``--random-range-ratio`` to the
  repository's client (``benchmarks/benchmark_lib.sh`` run_benchmark_serving -> ``utils/bench_serving/
  benchmark_serving.py``, with ``--ignore-eos``), and the client's ``sample_uniform`` draws each input and output
  length as ``np.random.randint(int(L * 0.8), L + 1)`` (at f65d6b4b1, the last commit before the issue). A row's
  nominal ISL/OSL L becomes the draw's mean (int(0.8·L) + L) / 2, ``length_distribution`` becomes ``uniform:0.8``,
  and the notes' sentence that took the nominal lengths is replaced by this provenance.

The files keep their line ends and quoting.

    python bench/validation_stated_runs.py [--check] [FILE.csv ...]
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
RATIOS = {"github.com/SemiAnalysisAI/InferenceX/issues/870": 0.8}
"""Source URL fragment -> the range ratio its client drew the lengths with."""
OLD_NOTE = "(the run's random range ratio is not given in the issue, so input/output are the nominal lengths)"
NEW_NOTE = (
    "(lengths: InferenceX's workflow sets RANDOM_RANGE_RATIO 0.8 and its client, utils/bench_serving/"
    "benchmark_serving.py with --ignore-eos, draws each input and output length uniformly on [int(0.8 L), L], so "
    "input_tokens/output_tokens hold those means and length_distribution is uniform:0.8)"
)


def system_of(source_url: str) -> str:
    """The catalog system a row's source names (SYSTEMS), else ""."""
    return next((sid for frag, sid in SYSTEMS.items() if frag in source_url), "")


def ratio_mean(nominal: int, ratio: float) -> float:
    """Mean of integers uniform on [int(nominal · ratio), nominal]."""
    return (int(nominal * ratio) + nominal) / 2.0


def _with_system(row: dict[str, str]) -> dict[str, str]:
    return {**row, "system": row.get("system") or system_of(row["source_url"])}


def _with_lengths(row: dict[str, str]) -> dict[str, str]:
    ratio = next((r for frag, r in RATIOS.items() if frag in row["source_url"]), None)
    if ratio is None or row.get("length_distribution"):
        return row
    out = dict(row)
    for col in ("input_tokens", "output_tokens"):
        nominal = float(row[col])
        if not nominal.is_integer():
            raise SystemExit(f"{row['id']}: {col}={row[col]} is not a nominal length")
        out[col] = f"{ratio_mean(int(nominal), ratio):g}"
    out["length_distribution"] = f"uniform:{ratio:g}"
    out["notes"] = row["notes"].replace(OLD_NOTE, NEW_NOTE)
    return out


def filled(text: str) -> str:
    """The CSV ``text`` with every rule applied: ``system`` added before ``notes`` when a row of SYSTEMS is in the
    file and the column is not, then filled; RATIOS' rows given their length range."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = list(reader.fieldnames or [])
    rows = list(reader)
    if "system" not in header and any(system_of(r["source_url"]) for r in rows):
        at = header.index("notes")
        header = [*header[:at], "system", *header[at:]]
    if "system" in header:
        rows = [_with_system(r) for r in rows]
    rows = [_with_lengths(r) for r in rows]
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=header, lineterminator="\r\n" if "\r\n" in text else "\n")
    writer.writeheader()
    writer.writerows(rows)
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
