"""Layout-search speed: candidates, valid plans and plans per second for large cases.

Cases: GPT-3 175B on 1,024 A100s (Calculon's exhaustive search of this space: 11.7 M candidates at
~230-295/s, ~11-14 h on one process, extrapolated in bench_calculon.py) and a 1T-parameter GPT
(Narayanan et al. 2021 Table 1: 128 layers, hidden 25,600) on 3,072 A100s. Prints one JSON line per case.
"""

from __future__ import annotations

import json
import time
import tracemalloc

from aiinfra.catalog.resolve import resolve
from aiinfra.planning.training import plan_training
from aiinfra.specs.scenario import parse_scenario

CASES = {
    "gpt3-175b-1024xa100": {
        "model": "gpt3-175b",
        "hardware": {"accelerator": "nvidia-a100-sxm4-80gb", "count": 1024},
        "training": {"tokens": 300e9, "seq_len": 2048, "global_batch_seqs": 1536},
    },
    "gpt-1t-3072xa100": {
        "model": {
            "num_layers": 128,
            "hidden_size": 25600,
            "num_heads": 160,
            "ffn_hidden_size": 102400,
            "vocab_size": 51200,
            "mlp": "gelu",
            "attention": "mha",
            "tied_embeddings": True,
            "norm": "layernorm",
        },
        "hardware": {"accelerator": "nvidia-a100-sxm4-80gb", "count": 3072},
        "training": {"tokens": 450e9, "seq_len": 2048, "global_batch_seqs": 3072},
    },
}


def main() -> None:
    for name, data in CASES.items():
        sc = resolve(parse_scenario(data))
        tracemalloc.start()
        t0 = time.perf_counter()
        rep = plan_training(sc)
        wall = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        best = rep.estimates[0]
        print(
            json.dumps(
                {
                    "case": name,
                    "candidates": rep.candidates,
                    "valid_plans": rep.valid_plans,
                    "fitting_plans": rep.fitting_plans,
                    "wall_s": round(wall, 3),
                    "candidates_per_s": round(rep.candidates / wall),
                    "peak_python_mem_mb": round(peak / 1e6, 1),
                    "best_plan": best.plan,
                    "best_step_time_s": round(best.step_time_s, 3),
                    "best_mfu": round(best.mfu_frac, 3),
                }
            )
        )


if __name__ == "__main__":
    main()
