"""Packing: the greedy's gap to the MILP optimum (HiGHS) on random portfolios of notebooks and small fine-tunes.

    python bench/bench_pack.py [--sizes 20,50,100,200,500,1000,2000] [--seed 1]

Memory needs are drawn uniformly from the list below (GiB), compute shares from {0, 0.25, 0.4}; A100 80GB and
H100 80GB allowed, objective: fewest GPUs. Prints one JSON line per size: GPUs by the MILP and by the greedy, the
LP bound, and each solver's wall time.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from aiinfra import app

MEMORY_GB = (4, 8, 9, 15, 18, 30, 35)


def portfolio(n: int, seed: int, solver: str) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    works = []
    for i in range(n):
        kind = "notebook" if rng.random() < 0.7 else "finetune"
        works.append(
            {
                "name": f"w{i}",
                "kind": kind,
                "memory_gb": float(rng.choice(MEMORY_GB)),
                "count": int(rng.integers(1, 8)),
                "compute_frac": float(rng.choice([0.0, 0.25, 0.4])),
            }
        )
    return {
        "pack": {
            "accelerators": ["nvidia-a100-sxm4-80gb", "nvidia-h100-sxm5-80gb"],
            "solver": solver,
            "time_limit_s": 120,
            "workloads": works,
        }
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20,50,100,200,500,1000,2000")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for n in (int(s) for s in args.sizes.split(",")):
        t0 = time.perf_counter()
        opt = app.pack(portfolio(n, args.seed, "milp")).to_dict()
        t1 = time.perf_counter()
        gr = app.pack(portfolio(n, args.seed, "greedy")).to_dict()
        t2 = time.perf_counter()
        row = {
            "workloads": n,
            "milp_gpus": opt["gpus"],
            "milp_method": opt["method"],
            "greedy_gpus": gr["gpus"],
            "lp_bound": round(opt["lower_bound"], 2),
            "greedy_gap_to_milp_frac": round((gr["gpus"] - opt["gpus"]) / opt["gpus"], 3),
            "milp_wall_s": round(t1 - t0, 2),
            "greedy_wall_s": round(t2 - t1, 2),
        }
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
