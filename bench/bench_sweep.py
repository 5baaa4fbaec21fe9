"""Sweep throughput and memory: points per second for one process, a local pool of two and Ray (two CPUs), for
training layout searches and for 10,000-request serving simulations; the sweep process's peak memory at 10,000
and 100,000 points.

Each measurement runs in a fresh subprocess (so peak RSS and start-up costs are its own) and prints one JSON line:
wall time from the call to the end (checking every point, starting workers, compaction included), points/s over
that wall time, CPU seconds of the process and its pool (what the points cost when other jobs share the CPUs), the
sweep process's peak RSS and its children's, and the load average (other jobs on the machine).

    python bench/bench_sweep.py throughput      # train and simulate, serial / process×2 / ray×2
    python bench/bench_sweep.py memory          # 10k and 100k points of `check`, process×2
    python bench/bench_sweep.py one --case train --backend ray   # one measurement
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

CASES: dict[str, dict[str, Any]] = {
    # 36 layout searches: GPT-3 175B on 512-3,072 A100s (each ≈ 1 M candidates) at three global batches and two
    # sequence lengths
    "train": {
        "scenario": EXAMPLES / "train-gpt3-175b-a100.yaml",
        "question": "train",
        "grid": {
            "hardware.count": [512, 768, 1024, 1536, 2048, 3072],
            "training.global_batch_seqs": [768, 1536, 3072],
            "training.seq_len": [2048, 4096],
        },
    },
    # 8 serving simulations of 10,000 requests each: four Poisson rates on one and two TP8 replicas
    "simulate": {
        "scenario": EXAMPLES / "simulate-llama70b-h100.yaml",
        "question": "simulate",
        "set": {"inference.num_requests": 10000},
        "grid": {"inference.request_rate_per_s": [4, 8, 12, 16], "hardware.count": [8, 16]},
    },
}


def _check_grid(points: int) -> dict[str, list[int]]:
    """``points`` cheap points (`check`: load and resolve the scenario): concurrency × output length."""
    return {"inference.concurrency": list(range(1, points // 100 + 1)), "inference.output_tokens": list(range(1, 101))}


def one(case: str, backend: str, points: int | None) -> dict[str, Any]:
    from aiinfra.app.sweep import sweep

    out = Path(tempfile.mkdtemp(prefix="bench-sweep-")) / "r"
    ray_started = 0.0
    if backend == "ray":
        import ray

        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        ray_started = time.perf_counter() - t0
    if case == "check":
        spec: dict[str, Any] = {
            "scenario": EXAMPLES / "infer-llama3.1-70b-h100.yaml",
            "question": "check",
            "grid": _check_grid(points or 10_000),
        }
    else:
        spec = CASES[case]
    start = time.perf_counter()
    res = sweep(
        spec["scenario"],
        grid=spec["grid"],
        question=spec["question"],
        set=spec.get("set"),
        out=out,
        backend=backend,
        workers=None if backend == "serial" else 2,
        progress=False,
    )
    wall_s = time.perf_counter() - start
    if backend == "ray":
        import ray

        ray.shutdown()
    shutil.rmtree(out.parent, ignore_errors=True)
    kib = 1024 if sys.platform != "darwin" else 1
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    return {
        "case": case,
        "backend": backend,
        "workers": res.workers,
        "points": res.points,
        "failures": res.failures,
        "wall_s": round(wall_s, 2),
        "points_per_s": round(res.run / wall_s, 3),
        "ray_init_s": round(ray_started, 2) if backend == "ray" else None,
        "cpu_s": round(cpu_s, 1) if backend != "ray" else None,  # Ray's workers are not our children
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * kib / 1e6, 1),
        "children_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * kib / 1e6, 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


def _child(*args: str) -> None:
    res = subprocess.run([sys.executable, __file__, "one", *args], capture_output=True, text=True, check=False)
    line = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else json.dumps({"failed": res.stderr[-500:]})
    print(line, flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["throughput", "memory", "one"])
    p.add_argument("--case", choices=[*CASES, "check"], default="train")
    p.add_argument("--backend", choices=["serial", "process", "ray"], default="serial")
    p.add_argument("--points", type=int, help="check: number of points")
    a = p.parse_args()
    if a.what == "one":
        print(json.dumps(one(a.case, a.backend, a.points)))
    elif a.what == "throughput":
        for case in CASES:
            for backend in ("serial", "process", "ray"):
                _child("--case", case, "--backend", backend)
    else:
        for points in (10_000, 100_000):
            _child("--case", "check", "--backend", "process", "--points", str(points))


if __name__ == "__main__":
    main()
