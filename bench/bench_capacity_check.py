"""Speed of `aiinfra capacity --simulate`: the analytic search, then the two simulated checks of the chosen
deployment (most closed-loop clients within the SLO; highest Poisson rate within the SLO), timed separately.

Scenarios: the seed question (examples/capacity-llama70b-10k-users.yaml over H100 and H200, vLLM and TensorRT-LLM) and
a MoE one written here (Qwen3-235B-A22B FP8, 2,000 users, 1,000-token prompts and answers, TTFT 2 s / TPOT 100 ms, on
8 H200), whose chosen layout runs attention data parallelism. Prints one JSON line per scenario.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from aiinfra import catalog
from aiinfra.app.inference import simulated_check
from aiinfra.app.tables import price_book
from aiinfra.catalog.resolve import load_scenario
from aiinfra.planning.capacity import plan_capacity
from aiinfra.report.render import layout_label

ROOT = Path(__file__).resolve().parents[1]
MOE = """model: qwen3-235b-a22b
hardware: {accelerator: nvidia-h200-sxm-141gb, count: 8}
inference: {weight_precision: fp8, input_tokens: 1000, output_tokens: 1000, users: 2000,
            slo: {ttft_p90_s: 2.0, tpot_p99_s: 0.1}}
"""


def run(name: str, path: Path, accelerators: list[str] | None) -> None:
    sc = load_scenario(path)
    t0 = time.perf_counter()
    parts = catalog.rows("accelerators")
    options = plan_capacity(sc, accelerators, ["vllm", "trtllm"], prices=price_book(), parts=parts)
    t_search = time.perf_counter() - t0
    best = options[0]
    t1 = time.perf_counter()
    sim = simulated_check(sc, best, seed=0)
    t_sim = time.perf_counter() - t1
    closed = sim.get("closed_loop", {})
    print(
        json.dumps(
            {
                "scenario": name,
                "candidates": len(options),
                "search_s": round(t_search, 2),
                "simulated_checks_s": round(t_sim, 2),
                "chosen": f"{best.accelerators} x {best.accelerator} {best.engine} "
                f"{layout_label(best.tp, best.ep, best.attention_dp)} {best.weight_precision}",
                "analytic_accelerators": best.accelerators,
                "closed_loop_accelerators": closed.get("accelerators_needed"),
                "poisson_accelerators": sim["accelerators_needed"],
            }
        )
    )


def main() -> None:
    run(
        "llama70b-10k-users",
        ROOT / "examples" / "capacity-llama70b-10k-users.yaml",
        ["nvidia-h100-sxm5-80gb", "nvidia-h200-sxm-141gb"],
    )
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "moe.yaml"
        p.write_text(MOE)
        run("qwen3-235b-2k-users", p, None)


if __name__ == "__main__":
    main()
