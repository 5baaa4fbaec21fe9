"""Side-by-side with NVIDIA AIConfigurator 0.12.0 (run from a separate virtual environment through its CLI,
offline on its bundled data; never a dependency of aiinfra) on the batch-1 latency rows both tools model.

Usage: python -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator==0.12.0
       python bench/bench_aiconfigurator.py --aic /tmp/aic/bin/aiconfigurator
Prints one JSON line per row and a summary; skips cleanly when the executable is missing.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from aiinfra.validation.inference_rows import predict_row

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data" / "inference.csv"
SYSTEMS = {"nvidia-h100-sxm5-80gb": "h100_sxm", "nvidia-a100-sxm4-80gb": "a100_sxm"}
CASES = {
    # row id: (metric read from AIC, input tokens for ITL rows — the smallest of the vLLM sweep)
    "vllm-fp8kv-h100-llama31-8b-kvbf16-itl-intercept": ("TPOT", 256),
    "vllm-fp8kv-h100-llama31-8b-kvfp8-itl-intercept": ("TPOT", 256),
    "trtllm-v0p5-a100-llama-7b-tp1-ttft-bs1-isl128": ("TTFT", None),
    "trtllm-v0p5-a100-llama-7b-tp1-ttft-bs1-isl2048": ("TTFT", None),
    "trtllm-v0p5-a100-llama-70b-tp4-ttft-bs1-isl128": ("TTFT", None),
    "trtllm-v0p5-a100-llama-70b-tp4-ttft-bs1-isl2048": ("TTFT", None),
}


def hf_config(row: dict[str, str]) -> dict[str, object]:
    h = int(row["hidden_size"])
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": h,
        "intermediate_size": int(row["ffn_hidden_size"]),
        "num_attention_heads": int(row["num_heads"]),
        "num_hidden_layers": int(row["num_layers"]),
        "num_key_value_heads": int(row["num_kv_heads"]),
        "vocab_size": int(row["vocab_size"]),
        "max_position_embeddings": 131072,
        "hidden_act": "silu",
        "torch_dtype": "bfloat16",
        "tie_word_embeddings": False,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--aic", default="aiconfigurator")
    args = ap.parse_args()
    rows = {r["id"]: r for r in csv.DictReader(DATA.open())}
    errs_aic: list[float] = []
    errs_ours: list[float] = []
    wall_aic = wall_ours = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for rid, (what, isl_override) in CASES.items():
            r = rows[rid]
            model_dir = Path(tmp) / rid
            model_dir.mkdir()
            (model_dir / "config.json").write_text(json.dumps(hf_config(r)))
            isl = isl_override or int(r["input_tokens"])
            backend = "vllm" if r["engine"] == "vllm" else "trtllm"
            cmd = [
                args.aic,
                "cli",
                "estimate",
                "--model-path",
                str(model_dir),
                "--system",
                SYSTEMS[r["accelerator"]],
                "--backend",
                backend,
                "--isl",
                str(isl),
                "--osl",
                "128",
                "--batch-size",
                "1",
                "--tp-size",
                r["tp"] or "1",
                "--estimate-mode",
                "static",
            ]
            if r["kv_precision"] == "fp8":
                cmd += ["--kvcache-quant-mode", "fp8"]
            t0 = time.perf_counter()
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
            except FileNotFoundError:
                print(json.dumps({"skipped": f"{args.aic} not found"}))
                return
            wall_aic += time.perf_counter() - t0
            m = re.search(rf"{what}:\s+([\d.]+) ms", out)
            t0 = time.perf_counter()
            ours = predict_row({k: v for k, v in r.items() if k != "value"}).predicted
            wall_ours += time.perf_counter() - t0
            measured = float(r["value"])
            aic = float(m.group(1)) / 1e3 if m else None
            line = {"row": rid, "measured_s": measured, "aiconfigurator_s": aic, "aiinfra_s": ours}
            if aic is not None and ours is not None:
                errs_aic.append(abs(aic - measured) / measured)
                errs_ours.append(abs(ours - measured) / measured)
            print(json.dumps(line))
    if errs_aic:
        print(
            json.dumps(
                {
                    "rows": len(errs_aic),
                    "median_abs_err_aiconfigurator": round(statistics.median(errs_aic), 3),
                    "median_abs_err_aiinfra": round(statistics.median(errs_ours), 3),
                    "wall_s_per_estimate_aiconfigurator": round(wall_aic / len(CASES), 2),
                    "wall_s_per_estimate_aiinfra": round(wall_ours / len(CASES), 4),
                }
            )
        )


if __name__ == "__main__":
    main()
