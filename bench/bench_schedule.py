"""Scheduler simulation speed: 100,000 synthetic jobs on a 10,000-GPU cluster (1,250 nodes × 8, leaves of 32
nodes), per policy.

    python bench/bench_schedule.py [--jobs 100000] [--policies fifo,backfill,priority,fairshare]
                                   [--failure-rate-scale 10]  (node failures at 10 × Llama 3's rates)

Prints one JSON line per policy: wall time of the simulation alone (trace generation excluded) and the load.
"""

from __future__ import annotations

import argparse
import json
import time

from aiinfra import app


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--policies", default="fifo,backfill,gang,priority,fairshare")
    ap.add_argument("--backfill-depth", type=int, default=1000)
    ap.add_argument(
        "--failure-rate-scale",
        type=float,
        default=None,
        help="add node failures at this multiple of the reliability catalog's rates",
    )
    args = ap.parse_args()
    for policy in args.policies.split(","):
        spec = {
            "schedule": {
                "cluster": {"nodes": 1250, "gpus_per_node": 8, "nodes_per_leaf": 32},
                "policy": policy,
                "backfill_depth": args.backfill_depth,
                # offered load ≈ 0.5 jobs/s × mean 1.65 h (log-normal: median 1 h, sigma 1) × 3.44 GPUs ≈ 10,200 GPUs
                "generator": {
                    "jobs": args.jobs,
                    "seed": 1,
                    "arrival_rate_per_s": 0.5,
                    "gpus": {1: 0.6, 2: 0.1, 4: 0.12, 8: 0.15, 16: 0.02, 64: 0.01},
                    "duration_median_s": 3600,
                    "duration_sigma": 1.0,
                    "users": 200,
                    "priorities": {0: 0.8, 1: 0.2},
                },
            }
        }
        if args.failure_rate_scale is not None:
            spec["schedule"]["failures"] = {
                "repair_s": 28800,
                "restart_s": 600,
                "checkpoint_interval_s": 3600,
                "failure_rate_scale_ratio": args.failure_rate_scale,
            }
        t0 = time.perf_counter()
        r = app.schedule(spec)
        total = time.perf_counter() - t0
        d = r.to_dict()
        print(
            json.dumps(
                {
                    "policy": policy,
                    "jobs": args.jobs,
                    "gpus": 10_000,
                    "sim_wall_s": round(r.wall_s, 2),
                    "total_wall_s": round(total, 2),
                    "utilisation_frac": round(d["utilisation_frac"], 3),
                    "wait_p50_s": d["all_jobs"]["queue_delay_s"]["p50"],
                    "preemptions": d["preemptions"],
                    "node_failures": (d["failures"] or {}).get("node_failures"),
                    "job_interruptions": (d["failures"] or {}).get("job_interruptions"),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
