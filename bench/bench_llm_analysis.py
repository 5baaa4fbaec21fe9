"""Side-by-side with llm-analysis (PyPI `llm-analysis`, run from a separate virtual environment, never a
dependency of aiinfra) on the A100/H100 80 GB training rows of the reference data.

Usage: python -m venv /tmp/la && /tmp/la/bin/pip install llm-analysis -e .
       /tmp/la/bin/python bench/bench_llm_analysis.py
Prints one JSON line per row group and a summary; skips cleanly when llm-analysis is not importable.
llm-analysis is run with flops_efficiency=0.5, the value its README uses for its LLaMA examples.
"""

from __future__ import annotations

import csv
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aiinfra.app.tables import row_tables
from aiinfra.validation.runner import group_of
from aiinfra.validation.training_rows import predict_row

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data" / "training.csv"
GPUS = {"nvidia-a100-sxm4-80gb": "a100-sxm-80gb", "nvidia-h100-sxm5-80gb": "h100-sxm-80gb"}
RECOMPUTE = {"none": 0, "selective": 1, "full": 2, "unknown": 0, "": 0}
ZERO = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3, "": 0}


def main() -> None:
    try:
        from llm_analysis.analysis import train  # type: ignore[import-not-found]
    except ImportError:
        print(json.dumps({"skipped": "llm-analysis is not installed in this environment"}))
        return
    logging.disable(logging.CRITICAL)
    metrics = ("step_time_s", "tokens_per_s_per_accelerator")
    rows = [r for r in csv.DictReader(DATA.open()) if r["accelerator"] in GPUS and r["metric"] in metrics]
    out: dict[str, dict[str, list[float]]] = {}
    t_la = t_ai = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for r in rows:
            n = int(r["num_accelerators"])
            h = int(r["hidden_size"])
            heads = int(r["num_heads"] or h // 128)
            cfg = {
                "name": r["id"],
                "num_layers": int(r["num_layers"]),
                "n_head": heads,
                "hidden_dim": h,
                "vocab_size": int(r["vocab_size"]),
                "max_seq_len": int(r["seq_len"]),
                "ffn_embed_dim": int(r["ffn_hidden_size"] or 4 * h),
                "num_key_value_heads": int(r["num_kv_heads"] or heads),
            }
            path = Path(tmp) / f"{r['id']}.json"
            path.write_text(json.dumps(cfg))
            tp, pp = int(r["tp"] or 1), int(r["pp"] or 1)
            dp = int(r["dp"] or n // (tp * pp))
            mb = int(r["microbatch_seqs"] or 1)
            gbs = int(r["global_batch_seqs"])
            seq = int(r["seq_len"])
            t0 = time.perf_counter()
            try:
                res = train(
                    model_name=str(path),
                    gpu_name=GPUS[r["accelerator"]],
                    dtype_name="w16a16e16",
                    batch_size_per_gpu=mb,
                    global_batch_size=gbs,
                    seq_len=seq,
                    total_num_tokens=gbs * seq,
                    tp_size=tp,
                    pp_size=pp,
                    dp_size=dp,
                    total_num_gpus=n,
                    activation_recomputation=RECOMPUTE.get(r["recompute"], 0),
                    ds_zero=ZERO.get(r["sharding"], 0),
                    mlp_gated_linear_units=r["mlp"] == "swiglu",
                    flops_efficiency=0.5,
                    output_dir=None,
                )
                la_step = float(res["latency_per_iter"])
            except Exception as exc:  # a peer tool failing on a row is data, not a crash
                print(json.dumps({"row": r["id"], "llm_analysis_error": str(exc)[:120]}), file=sys.stderr)
                continue
            t_la += time.perf_counter() - t0
            t0 = time.perf_counter()
            ours = predict_row({k: v for k, v in r.items() if k != "value"}, row_tables())
            t_ai += time.perf_counter() - t0
            if ours.predicted is None:
                continue
            measured = float(r["value"])
            la = gbs * seq / la_step / n if r["metric"] == "tokens_per_s_per_accelerator" else la_step
            g = out.setdefault(group_of(r["id"]), {"llm_analysis": [], "aiinfra": []})
            g["llm_analysis"].append(abs(la - measured) / measured)
            g["aiinfra"].append(abs(ours.predicted - measured) / measured)
    for group, errs in out.items():
        print(
            json.dumps(
                {
                    "group": group,
                    "rows": len(errs["aiinfra"]),
                    "median_abs_err_llm_analysis": round(statistics.median(errs["llm_analysis"]), 3),
                    "median_abs_err_aiinfra": round(statistics.median(errs["aiinfra"]), 3),
                }
            )
        )
    allla = [e for g in out.values() for e in g["llm_analysis"]]
    allai = [e for g in out.values() for e in g["aiinfra"]]
    print(
        json.dumps(
            {
                "rows": len(allai),
                "median_abs_err_llm_analysis": round(statistics.median(allla), 3),
                "median_abs_err_aiinfra": round(statistics.median(allai), 3),
                "wall_s_llm_analysis": round(t_la, 2),
                "wall_s_aiinfra": round(t_ai, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
