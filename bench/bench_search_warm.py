"""Warm layout-search latency at scale (issue 28's budget): GPT-3 175B on 1,024 A100s within 0.2 s and on 16,384
A100s within 0.5 s, every candidate layout priced, after one warm-up search (catalog parsed, efficiency tables and
collective constants memoised). Prints one JSON line per case with the minimum of ``REPEATS`` searches (wall and
this process's CPU time: on a loaded machine the CPU time is the figure a quiet one would show) and whether the wall
time meets its budget; exit status 1 when one does not."""

from __future__ import annotations

import json
import sys
import time

from aiinfra.catalog.resolve import resolve
from aiinfra.planning.training import plan_training
from aiinfra.specs.scenario import parse_scenario

REPEATS = 5
GPT3 = {"model": "gpt3-175b", "training": {"tokens": 300e9, "seq_len": 2048, "global_batch_seqs": 1536}}
CASES = {
    "gpt3-175b-1024xa100": ({**GPT3, "hardware": {"accelerator": "nvidia-a100-sxm4-80gb", "count": 1024}}, 0.2),
    "gpt3-175b-16384xa100": (
        {
            **GPT3,
            "hardware": {"accelerator": "nvidia-a100-sxm4-80gb", "count": 16384},
            "training": {"tokens": 300e9, "seq_len": 2048, "global_batch_seqs": 16384},
        },
        0.5,
    ),
}


def main() -> int:
    ok = True
    for name, (data, budget_s) in CASES.items():
        sc = resolve(parse_scenario(data))
        plan_training(sc)  # warm-up
        walls, cpus = [], []
        for _ in range(REPEATS):
            t0, c0 = time.perf_counter(), time.process_time()
            rep = plan_training(sc)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        best = min(walls)
        ok &= best <= budget_s
        print(
            json.dumps(
                {
                    "case": name,
                    "candidates": rep.candidates,
                    "valid_plans": rep.valid_plans,
                    "warm_min_s": round(best, 4),
                    "warm_median_s": round(sorted(walls)[len(walls) // 2], 4),
                    "warm_min_cpu_s": round(min(cpus), 4),
                    "budget_s": budget_s,
                    "within": best <= budget_s,
                    "best_plan": rep.estimates[0].plan,
                }
            )
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
