"""Fill the length columns of validation rows whose client drew each request's lengths from a stated range.

The rule reads only a row's input columns (``source_url``, ``input_tokens``, ``output_tokens``,
``length_distribution``), never a measured value, so it fills open and sealed files alike.

* InferenceX (github.com/SemiAnalysisAI/InferenceX, issue #870, 2026-03-05): the fixed-seq-len workflow
  (``.github/workflows/benchmark-tmpl.yml``) sets ``RANDOM_RANGE_RATIO: 0.8`` in every version from 2026-01-21 to
  2026-03-27 (its input default was '0.8' before), the launch script passes it as ``--random-range-ratio`` to the
  repository's client (``benchmarks/benchmark_lib.sh`` run_benchmark_serving -> ``utils/bench_serving/
  benchmark_serving.py``, with ``--ignore-eos``), and the client's ``sample_uniform`` draws each input and output
  length as ``np.random.randint(int(L * 0.8), L + 1)`` (at f65d6b4b1, the last commit before the
  issue). A row's nominal ISL/OSL L becomes the draw's mean (int(0.8·L) + L) / 2 in ``input_tokens`` /
  ``output_tokens``, ``length_distribution`` becomes ``uniform:0.8``, and the notes' sentence that took the nominal
  lengths is replaced by this provenance.

    python bench/validation_length_ratio.py [--check] [FILE.csv ...]
    (default: every inference CSV shipped but the seal lists)
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data"
RATIOS = {"github.com/SemiAnalysisAI/InferenceX/issues/870": 0.8}
"""Source URL fragment -> the range ratio its client drew the lengths with."""
OLD_NOTE = "(the run's random range ratio is not given in the issue, so input/output are the nominal lengths)"
NEW_NOTE = (
    "(lengths: InferenceX's workflow sets RANDOM_RANGE_RATIO 0.8 and its client, utils/bench_serving/"
    "benchmark_serving.py with --ignore-eos, draws each input and output length uniformly on [int(0.8 L), L], so "
    "input_tokens/output_tokens hold those means and length_distribution is uniform:0.8)"
)


def ratio_mean(nominal: int, ratio: float) -> float:
    """Mean of integers uniform on [int(nominal · ratio), nominal]."""
    return (int(nominal * ratio) + nominal) / 2.0


def _filled_row(row: dict[str, str]) -> dict[str, str]:
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
    """The CSV ``text`` with the rows of RATIOS' sources filled (others unchanged)."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = list(reader.fieldnames or [])
    rows = [_filled_row(r) for r in reader]
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
        if not any(frag in text for frag in RATIOS):
            continue
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
