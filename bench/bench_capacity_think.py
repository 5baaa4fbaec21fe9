"""Speed of `aiinfra capacity` when the demand is users who think between requests: the seed question
(examples/capacity-llama70b-10k-users.yaml, Llama-3.1-70B on H100, vLLM) with 100,000 users thinking 30 s, every
candidate sized on the loaded-replica model (planning/loaded.py). Prints one JSON line: CPU and wall seconds, the
chosen fleet."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from aiinfra import app

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "capacity-llama70b-10k-users.yaml"


def main() -> None:
    users = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    t0, c0 = time.perf_counter(), time.process_time()
    sc = app.load_scenario(EXAMPLE, set={"inference.users": users, "inference.think_time_s": 30.0})
    best = app.capacity(sc).chosen
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    print(
        json.dumps(
            {
                "users": users,
                "think_time_s": 30.0,
                "cpu_s": round(cpu, 2),
                "wall_s": round(wall, 2),
                "accelerators": best.accelerators,
                "layout": f"tp{best.tp} {best.weight_precision}",
                "users_per_replica": getattr(best, "users_per_replica", None),
            }
        )
    )


if __name__ == "__main__":
    main()
