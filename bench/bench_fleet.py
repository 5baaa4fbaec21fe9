"""Speed of the mixed-fleet optimiser: 20 request classes × 10 accelerator types.

Usage: python bench/bench_fleet.py [--classes N] [--types T] [--repeats R] [--seed S]
Prints one JSON line: seconds of the integer program (HiGHS through SciPy's milp; minimum over the repeats after one
warm-up), its variables, and the bill against the best single type. The placements are synthetic (seeded): each class
on each type needs 1–40 replicas of tp 1, 2, 4 or 8, and each type sells 1-, 4- and 8-accelerator instances at
$1–4 per accelerator-hour with an 8-accelerator discount; this measures the optimiser, not the capacity searches
that feed it (those take a capacity run per class and type).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from aiinfra.costing.prices import InstancePrice
from aiinfra.planning.capacity import Deployment
from aiinfra.planning.fleet import ClassPlacement, _solve


def _dep(acc: str, tp: int, replicas: int) -> Deployment:
    return Deployment(
        engine="vllm",
        accelerator=acc,
        tp=tp,
        weight_precision="fp8",
        speculative=False,
        batch_per_replica=8,
        replicas=replicas,
        accelerators=tp * replicas,
        ttft_s=0.1,
        tpot_s=0.02,
        output_tokens_per_s=1.0,
        usd_per_hour=None,
        usd_per_million_output_tokens=None,
        price=None,
        verdict="",
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--classes", type=int, default=20)
    ap.add_argument("--types", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    types = [f"type{t}" for t in range(args.types)]
    classes = [f"class{c}" for c in range(args.classes)]
    offers = {}
    for t in types:
        per_acc = float(rng.uniform(1.0, 4.0))
        offers[t] = [
            InstancePrice(
                id=f"{t}-{k}x",
                source_title="synthetic",
                source_url=None,
                read_on="",
                age_days=None,
                provider="p",
                instance=f"{k}x",
                region="r",
                accelerator=t,
                accelerators_per_instance=k,
                pricing="on-demand",
                usd_per_hour=k * per_acc * (0.9 if k == 8 else 1.0),
            )
            for k in (1, 4, 8)
        ]
    placements = [
        ClassPlacement(
            request_class=c, accelerator=t, deployment=_dep(t, int(rng.choice([1, 2, 4, 8])), int(rng.integers(1, 41)))
        )
        for c in classes
        for t in types
    ]
    _solve(placements, classes, offers)  # warm-up (imports SciPy)
    best = float("inf")
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        mixed = _solve(placements, classes, offers)
        best = min(best, time.perf_counter() - t0)
    assert mixed is not None
    singles = [s for t in types if (s := _solve([p for p in placements if p.accelerator == t], classes, offers))]
    single = min(s.usd_per_hour for s in singles)
    print(
        json.dumps(
            {
                "classes": args.classes,
                "types": args.types,
                "milp_s": round(best, 4),
                "binary_vars": len(placements),
                "integer_vars": sum(len(o) for o in offers.values()),
                "mixed_usd_per_hour": round(mixed.usd_per_hour, 2),
                "best_single_usd_per_hour": round(single, 2),
                "types_used": len(mixed.pools),
            }
        )
    )


if __name__ == "__main__":
    main()
