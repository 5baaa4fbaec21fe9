"""Simulator speed: 100,000 requests of Llama-3.1-70B (FP8, TP8) on 8 × H100, Poisson arrivals at 80 % of
the analytic saturation rate.

Prints one JSON line: requests per wall second and peak memory. Vidur manages ~180 requests/s on this
machine class after a 25-minute predictor training (figure from the project's issue).
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import replace
from pathlib import Path

from aiinfra.app.tables import serving_tables
from aiinfra.catalog.resolve import load_scenario
from aiinfra.planning.inference import estimate
from aiinfra.sim.run import simulate

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "simulate-llama70b-h100.yaml"


def main() -> None:
    n = 100_000
    sc = load_scenario(EXAMPLE, [f"inference.num_requests={n}"])
    assert sc.inference is not None
    # 80 % of the analytic saturation rate (aiinfra infer with the largest batch): busy but stable
    sat = estimate(sc.model, sc.cluster, replace(sc.inference, batch="max")).requests_per_s
    rate = 0.8 * sat
    sc = load_scenario(EXAMPLE, [f"inference.num_requests={n}", f"inference.request_rate_per_s={rate}"])
    t0, c0 = time.perf_counter(), time.process_time()
    res = simulate(sc, seed=1, tables=serving_tables(sc))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB → MiB (whole process)
    s = res.summary
    print(
        json.dumps(
            {
                "requests": n,
                "request_rate_per_s": round(rate, 2),
                "completed": s.completed,
                "wall_s": round(wall, 2),
                "requests_per_wall_s": round(n / wall),
                "cpu_s": round(cpu, 2),
                "requests_per_cpu_s": round(n / cpu),
                "iterations": s.iterations,
                "peak_rss_mb": round(peak_mb),
                "simulated_s": round(s.duration_s, 1),
                "ttft_p90_s": round(s.ttft_s.p90, 3),
                "tpot_p99_s": round(s.tpot_exclusive_s.p99, 4),
                "kv_utilisation_max_frac": round(s.kv_utilisation_max_frac, 3),
                "preemptions": s.preemptions,
            }
        )
    )


if __name__ == "__main__":
    main()
