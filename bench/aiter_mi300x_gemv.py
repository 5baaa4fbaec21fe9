"""Reduce AMD's own MI300X timings of FP8 weight-streaming GEMMs (ROCm/aiter, the tuning of Llama 3 70B / 405B
decode shapes) to the ``memory-mi300x-aiter-gemv`` row of src/aiinfra/catalog/data/efficiency.yaml: the fraction of
the part's HBM bandwidth a GEMM at one to sixteen tokens reaches, against the bytes it moves.

Reads ``aiter/configs/a8w8_tuned_gemm.csv`` as of ROCm/aiter commit fbb52ddfad72ce1fb0c65b842cbc5edc4fbfecde
("[MI300X] tune Gemm performance for llama 70b/405b", 2025-09-26, PR #1092), given with ``--csv`` (e.g. ``git show
fbb52ddfad:aiter/configs/a8w8_tuned_gemm.csv > a8w8.csv`` in a clone); prints the YAML row. Not imported by the
package; prints a message and exits 0 when the file is absent.

Usage: <venv>/bin/python bench/aiter_mi300x_gemv.py --csv a8w8.csv

The file's rows with ``cu_num`` 304 (the MI300X's compute units; the commit names the part) and M <= 16 are the
tuner's best kernel for each decode shape (N output features, K input features) of the two models at tensor
parallelism 1, 4 and 8, timed with FP8 weights and activations (a8w8, scale per token and per channel) and a bf16
output. For each:

    bytes      = N * K (weights) + M * K (activations in) + 2 * M * N (bf16 out)     (aiter's own ``bw`` column)
    efficiency = bytes / (us * 1e-6) / HBM peak                (the catalog's MI300X row: 5.3 TB/s)

and each point of the curve is the median over the shapes within +-1/8 decade of its byte count, as the H100 row
built from Vidur's GEMV timings (memory-h100-vidur-gemv); grid points with no shape are left out.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from pathlib import Path

from aic_common import catalog_accelerators

COMMIT = "fbb52ddfad72ce1fb0c65b842cbc5edc4fbfecde"
READ_ON = "2026-11-27"
MI300X_CUS = 304
MAX_TOKENS = 16
GRID_B = [10 ** (6.75 + k / 4) for k in range(10)]
"""5.62e6 to 1e9 bytes, a quarter decade apart (the H100 row's grid)."""
HALF_BIN_DECADES = 1 / 8


def points_of(path: Path, hbm_b_per_s: float) -> list[tuple[float, float]]:
    """(bytes, fraction of ``hbm_b_per_s``) of every MI300X row at MAX_TOKENS tokens or fewer."""
    out = []
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            if int(r["cu_num"]) != MI300X_CUS or int(r["M"]) > MAX_TOKENS:
                continue
            m, n, k = int(r["M"]), int(r["N"]), int(r["K"])
            nbytes = n * k + m * k + 2 * m * n
            out.append((float(nbytes), nbytes / (float(r["us"]) * 1e-6) / hbm_b_per_s))
    return out


def curve(points: list[tuple[float, float]]) -> list[tuple[float, float, int]]:
    """(grid bytes, median efficiency, shapes) of the grid points with shapes within HALF_BIN_DECADES."""
    out = []
    for x in GRID_B:
        near = [e for b, e in points if abs(math.log10(b / x)) <= HALF_BIN_DECADES]
        if near:
            out.append((x, statistics.median(near), len(near)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", type=Path, help="aiter/configs/a8w8_tuned_gemm.csv at commit " + COMMIT[:10])
    args = ap.parse_args()
    if args.csv is None or not args.csv.exists():
        print(f"no aiter table given (--csv): nothing to reduce (commit {COMMIT[:10]})", file=sys.stderr)
        return 0
    hbm_b_per_s = float(catalog_accelerators()["amd-mi300x"]["memory_bw_tb_per_s"]) * 1e12
    pts = points_of(args.csv, hbm_b_per_s)
    rows = curve(pts)
    points = ", ".join(f"[{x:.4e}, {e:.3f}]" for x, e, _ in rows)
    bins = "; ".join(f"{x:.3g}: n={n}" for x, _, n in rows)
    print(f"# {len(pts)} MI300X shapes at M <= {MAX_TOKENS}; bins {bins}")
    print("- id: memory-mi300x-aiter-gemv")
    print("  kind: memory")
    print("  accelerators: [amd-mi300x]")
    print("  x: bytes moved per kernel (weights + activations in + out)")
    print(f"  points: [{points}]")
    print("  provenance: measured")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
