"""Side-by-side with NVIDIA AIConfigurator 0.12.0 (AIC; run from a separate virtual environment through its CLI,
offline on its bundled H100/A100 performance database; never a dependency of aiinfra).

Usage: python -m venv <venv> && <venv>/bin/pip install aiconfigurator==0.12.0
       python bench/bench_aiconfigurator.py --aic <venv>/bin/aiconfigurator [--skip-latency] [--skip-throughput]
Prints one JSON line per row and one summary line per part (the throughput part also one per model family);
exits 0 and prints {"skipped": ...} when the executable is missing (CI has no such environment).

Part 1, latency: the six batch-1 latency rows both tools model (``cli estimate --estimate-mode static``, batch 1;
AIC's TPOT at a 256-token prompt for the vLLM ITL intercepts, its TTFT for the TensorRT-LLM v0.5 TTFT rows).

Part 2, saturated throughput: every row of the group trtllm-v1p0 of inference.csv (TensorRT-LLM v1.0
perf-overview, ``trtllm-bench throughput``, offline max load, uniform ISL/OSL, FP8 ModelOpt checkpoints) run on
H100 SXM — only H100 rows: that group's tables for other GPUs are reserved for independent evaluation and a
row on another accelerator is refused. ``--group trtllm-v0p21-`` runs the same protocol on the H100 cells of the
page as of v0.21 (its Llama 4 Maverick table kept from v0.20). The protocol was fixed before AIC's numbers on the
v1.0 rows were seen:

* model: an HF config.json written from the row's architecture columns (``hf_config``): dense rows as
  ``LlamaForCausalLM``; Llama 4 rows as ``Llama4ForConditionalGeneration`` with a ``text_config`` (experts,
  top-k, expert width = moe_ffn_hidden_size, dense width = ffn_hidden_size, moe_layer_step (column) and the
  attention chunk from the row notes); Qwen3 MoE rows as ``Qwen3MoeForCausalLM``. Both are architectures AIC
  0.12.0 lists as supported. (AIC models no shared expert for the Llama 4 family — its hybrid-MoE model
  sets num_shared_experts = 0 — whereas aiinfra counts the row's one shared expert.)
* layout: the row's tp; for MoE rows, whose attention_dp column says so, attention data-parallel over
  the tp ranks with the experts split ep = tp ways (AIC: tp 1, attention-dp = tp, moe-ep = tp, moe-tp 1),
  which is what aiinfra's row prediction models too; an MoE row that states neither attention DP nor ep (the
  v0.20 Maverick cells) runs TensorRT-LLM's mapping default, experts tensor-parallel (AIC: tp = moe-tp = tp,
  moe-ep 1), as aiinfra reads it.
* precision: GEMM (and MoE) FP8; KV cache as aiinfra reads the row (blank kv_precision + ModelOpt
  checkpoint -> FP8); AIC's own choice for the attention kernels; free GPU-memory fraction as the row
  states (0.95), passed to both.
* (a) same batch: ``cli estimate --estimate-mode agg`` with aiinfra's steady-state batch (its prediction's
  details['batch_seqs']; AIC's --batch-size is per attention-DP rank, so ceil(batch / dp)) and the same
  per-iteration token budget: the max_num_tokens that trtllm-bench derives for the row (aiinfra's
  prediction states it), filled with whole prompts as TensorRT-LLM schedules them without chunked prefill:
  ctx-tokens = isl * max(1, min(floor((max_num_tokens - batch) / isl), batch - 1)). AIC's reported
  ``tokens/s`` (output tokens of the replica) is the prediction.
* (b) AIC's own best: ``cli exp`` with one aggregated experiment restricted to the row's layout and GPU count,
  TTFT and TPOT limits of 1e9 ms (no latency limit), no Pareto TPOT sweep; AIC sweeps batch (its schedule,
  at most 512 per rank) and context tokens under its KV-capacity check and ranks by tokens/s/gpu; its best
  tokens/s/gpu × GPUs is the prediction.
* AIC runs in its default SILICON database mode; a row whose perf data it lacks is retried once in HYBRID
  mode (what its own error message advises) and the mode is recorded.
* errors are signed (predicted / measured − 1); per model family: median |error| and the share within ±25 %.
* wall time per estimate: the whole AIC process (interpreter start and database load included, as a user
  pays it) and aiinfra's predict_row call in this process.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from aiinfra.app.tables import row_tables
from aiinfra.validation.inference_rows import predict_row
from aiinfra.validation.rows import expert_layout

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data" / "inference.csv"
SYSTEMS = {"nvidia-h100-sxm5-80gb": "h100_sxm", "nvidia-a100-sxm4-80gb": "a100_sxm"}
LATENCY_CASES = {
    # row id: (metric read from AIC, input tokens for ITL rows — the smallest of the vLLM sweep)
    "vllm-fp8kv-h100-llama31-8b-kvbf16-itl-intercept": ("TPOT", 256),
    "vllm-fp8kv-h100-llama31-8b-kvfp8-itl-intercept": ("TPOT", 256),
    "trtllm-v0p5-a100-llama-7b-tp1-ttft-bs1-isl128": ("TTFT", None),
    "trtllm-v0p5-a100-llama-7b-tp1-ttft-bs1-isl2048": ("TTFT", None),
    "trtllm-v0p5-a100-llama-70b-tp4-ttft-bs1-isl128": ("TTFT", None),
    "trtllm-v0p5-a100-llama-70b-tp4-ttft-bs1-isl2048": ("TTFT", None),
}
THROUGHPUT_GROUPS = ("trtllm-v1p0-", "trtllm-v0p21-")
THROUGHPUT_ACCELERATOR = "nvidia-h100-sxm5-80gb"  # the group's other-GPU tables are reserved
WITHIN = 0.25
NO_LIMIT_MS = 1.0e9
AIC_TIMEOUT_S = 900


def _note_int(notes: str, pattern: str) -> int | None:
    m = re.search(pattern, notes)
    return int(m.group(1)) if m else None


def hf_config(row: dict[str, str]) -> dict[str, object]:
    """An HF config.json for AIC from the row's architecture columns (and the MoE layout its notes state)."""
    h = int(row["hidden_size"])
    base: dict[str, object] = {
        "hidden_size": h,
        "num_attention_heads": int(row["num_heads"]),
        "num_hidden_layers": int(row["num_layers"]),
        "num_key_value_heads": int(row["num_kv_heads"]),
        "vocab_size": int(row["vocab_size"]),
        "max_position_embeddings": 131072,
        "hidden_act": "silu",
        "torch_dtype": "bfloat16",
        "tie_word_embeddings": False,
    }
    if row.get("head_dim"):
        base["head_dim"] = int(row["head_dim"])
    experts = int(row.get("num_experts") or 1)
    if experts <= 1:
        return {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            **base,
            "intermediate_size": int(row["ffn_hidden_size"]),
        }
    name = row["model_name"].lower()
    notes = row.get("notes") or ""
    moe: dict[str, object] = {"num_experts_per_tok": int(row["experts_per_token"])}
    if name.startswith("llama-4"):
        text = {
            **base,
            **moe,
            "model_type": "llama4_text",
            "num_local_experts": experts,
            "intermediate_size": int(row["moe_ffn_hidden_size"]),
            "intermediate_size_mlp": int(row["ffn_hidden_size"]),
            "interleave_moe_layer_step": int(row.get("moe_layer_step") or 1),
            "attention_chunk_size": _note_int(notes, r"chunk\w*\D{0,25}(\d{3,})") or 0,
        }
        return {
            "architectures": ["Llama4ForConditionalGeneration"],
            "model_type": "llama4",
            "text_config": text,
            "torch_dtype": "bfloat16",
        }
    if name.startswith("qwen3"):
        return {
            "architectures": ["Qwen3MoeForCausalLM"],
            "model_type": "qwen3_moe",
            **base,
            **moe,
            "num_experts": experts,
            "moe_intermediate_size": int(row["moe_ffn_hidden_size"]),
            "intermediate_size": int(row["ffn_hidden_size"]),
        }
    raise ValueError(f"row {row['id']}: no AIC architecture mapped for MoE model {row['model_name']!r}")


def _run(cmd: list[str]) -> tuple[str, float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=AIC_TIMEOUT_S)
    return proc.stdout + proc.stderr, time.perf_counter() - t0, proc.returncode


def _err(pred: float | None, measured: float) -> float | None:
    return None if pred is None else pred / measured - 1.0


def _median_abs(xs: list[float | None]) -> float | None:
    vals = [abs(x) for x in xs if x is not None]
    return round(statistics.median(vals), 3) if vals else None


def _within(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return round(sum(abs(x) <= WITHIN for x in vals) / len(vals), 2) if vals else None


def latency_part(aic: str, tmp: Path) -> None:
    rows = {r["id"]: r for r in csv.DictReader(DATA.open())}
    errs_aic: list[float] = []
    errs_ours: list[float] = []
    wall_aic = wall_ours = 0.0
    for rid, (what, isl_override) in LATENCY_CASES.items():
        r = rows[rid]
        model_dir = tmp / rid
        model_dir.mkdir()
        (model_dir / "config.json").write_text(json.dumps(hf_config(r)))
        isl = isl_override or int(r["input_tokens"])
        backend = "vllm" if r["engine"] == "vllm" else "trtllm"
        cmd = [
            aic,
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
        out, wall, _ = _run(cmd)
        wall_aic += wall
        m = re.search(rf"{what}:\s+([\d.]+) ms", out)
        t0 = time.perf_counter()
        ours = predict_row({k: v for k, v in r.items() if k != "value"}, row_tables()).predicted
        wall_ours += time.perf_counter() - t0
        measured = float(r["value"])
        aic_s = float(m.group(1)) / 1e3 if m else None
        print(
            json.dumps(
                {"part": "latency", "row": rid, "measured_s": measured, "aiconfigurator_s": aic_s, "aiinfra_s": ours}
            )
        )
        if aic_s is not None and ours is not None:
            errs_aic.append(abs(aic_s - measured) / measured)
            errs_ours.append(abs(ours - measured) / measured)
    if errs_aic:
        print(
            json.dumps(
                {
                    "part": "latency",
                    "rows": len(errs_aic),
                    "median_abs_err_aiconfigurator": round(statistics.median(errs_aic), 3),
                    "median_abs_err_aiinfra": round(statistics.median(errs_ours), 3),
                    "wall_s_per_estimate_aiconfigurator": round(wall_aic / len(LATENCY_CASES), 2),
                    "wall_s_per_estimate_aiinfra": round(wall_ours / len(LATENCY_CASES), 4),
                }
            )
        )


def _kv_precision(row: dict[str, str]) -> str:
    """The KV dtype aiinfra's row prediction assumes (inference_rows.predict_row), passed to AIC too."""
    kvp = (row.get("kv_precision") or "").strip()
    if kvp:
        return kvp
    wp = (row.get("weight_precision") or "").strip()
    return "fp8" if (row.get("quantizer") or "").lower() == "modelopt" and wp in ("fp8", "fp4") else "bfloat16"


def _layout(row: dict[str, str]) -> dict[str, int]:
    """AIC's layout flags for the row's run, read as aiinfra reads it (validation.rows.expert_layout)."""
    tp = int(row["tp"])
    moe = int(row.get("num_experts") or 1) > 1
    ep, attention_dp = expert_layout(row, tp, moe)
    if attention_dp:
        return {"tp": 1, "dp": tp, "moe_tp": tp // ep, "moe_ep": ep}
    return {"tp": tp, "dp": 1, "moe_tp": tp // ep if moe else 1, "moe_ep": ep}


def _aic_common(row: dict[str, str]) -> tuple[list[str], dict[str, Any]]:
    """Quantisation and memory flags (CLI form, YAML form) shared by the two AIC protocols."""
    wp = row["weight_precision"].strip()
    gemm = {"fp8": "fp8", "bf16": "bfloat16"}[wp]
    kv = {"fp8": "fp8", "bf16": "bfloat16", "bfloat16": "bfloat16"}[_kv_precision(row)]
    cli = ["--gemm-quant-mode", gemm, "--kvcache-quant-mode", kv]
    yml: dict[str, Any] = {"gemm_quant_mode": gemm, "kvcache_quant_mode": kv}
    if int(row.get("num_experts") or 1) > 1:
        cli += ["--moe-quant-mode", gemm]
        yml["moe_quant_mode"] = gemm
    free_frac = (row.get("kv_cache_free_gpu_mem_fraction") or "").strip()
    if free_frac:
        cli += ["--free-gpu-memory-fraction", free_frac]
        yml["free_gpu_memory_fraction"] = float(free_frac)
    return cli, yml


def _with_fallback(cmd: list[str], parse: Any) -> tuple[Any, float, str, str | None]:
    """Run AIC in its default SILICON mode; on no result, once more in HYBRID mode."""
    out, wall, rc = _run(cmd)
    val = parse(out) if rc == 0 else None
    if val is not None:
        return val, wall, "SILICON", None
    if "OOM" in out:  # AIC's memory model refuses the point: a verdict, not missing perf data
        tail = [ln for ln in out.splitlines() if "OOM" in ln][-1:]
        return None, wall, "SILICON", tail[0][-300:]
    out2, wall2, rc2 = _run([*cmd, "--database-mode", "HYBRID"])
    val = parse(out2) if rc2 == 0 else None
    if val is not None:
        return val, wall + wall2, "HYBRID", None
    tail = [ln for ln in (out2 or out).splitlines() if "Error" in ln or "error" in ln][-1:]
    return None, wall + wall2, "failed", (tail[0][-300:] if tail else f"exit {rc2}")


def aic_same_batch(aic: str, row: dict[str, str], model_dir: Path, batch: int, budget: int | None) -> dict[str, Any]:
    lay = _layout(row)
    isl, osl = int(row["input_tokens"]), int(row["output_tokens"])
    b = max(1, math.ceil(batch / lay["dp"]))
    prompts = 1 if budget is None else max(1, min((budget - b) // isl, b - 1))
    ctx = isl * prompts
    quant, _ = _aic_common(row)
    cmd = [
        aic,
        "cli",
        "estimate",
        "--model-path",
        str(model_dir),
        "--system",
        SYSTEMS[row["accelerator"]],
        "--backend",
        "trtllm",
        "--estimate-mode",
        "agg",
        "--isl",
        str(isl),
        "--osl",
        str(osl),
        "--batch-size",
        str(b),
        "--ctx-tokens",
        str(ctx),
        "--tp-size",
        str(lay["tp"]),
        "--attention-dp-size",
        str(lay["dp"]),
        *quant,
    ]
    if lay["dp"] > 1 or lay["moe_ep"] > 1 or lay["moe_tp"] > 1:
        cmd += ["--moe-tp-size", str(lay["moe_tp"]), "--moe-ep-size", str(lay["moe_ep"])]
    kv_warn: list[bool] = []

    def parse(out: str) -> float | None:
        m = re.search(r"^\s*tokens/s:\s+([\d,.]+)", out, re.M)
        kv_warn.append("exceeds estimated KV cache capacity" in out)
        return float(m.group(1).replace(",", "")) if m else None

    val, wall, mode, err = _with_fallback(cmd, parse)
    return {
        "tokens_per_s": val,
        "batch_per_rank": b,
        "ctx_tokens": ctx,
        "wall_s": wall,
        "database_mode": mode,
        "kv_over_capacity": bool(kv_warn and kv_warn[-1]),
        "error": err,
    }


def aic_best(aic: str, row: dict[str, str], model_dir: Path, tmp: Path) -> dict[str, Any]:
    lay = _layout(row)
    gpus = int(row["num_accelerators"])
    _, quant = _aic_common(row)
    exp = {
        "serving_mode": "agg",
        "model_path": str(model_dir),
        "system_name": SYSTEMS[row["accelerator"]],
        "backend_name": "trtllm",
        "isl": int(row["input_tokens"]),
        "osl": int(row["output_tokens"]),
        "ttft": NO_LIMIT_MS,
        "tpot": NO_LIMIT_MS,
        "pareto_sweep": False,
        "total_gpus": gpus,
        **quant,
        "agg_num_gpu_candidates": [gpus],
        "agg_tp_candidates": [lay["tp"]],
        "agg_pp_candidates": [1],
        "agg_dp_candidates": [lay["dp"]],
        "agg_moe_tp_candidates": [lay["moe_tp"]],
        "agg_moe_ep_candidates": [lay["moe_ep"]],
    }
    yaml_path = tmp / f"{row['id']}.yaml"
    # JSON is valid YAML 1.2 and PyYAML reads this subset (floats written with a decimal point)
    yaml_path.write_text(json.dumps({"exps": ["row"], "row": exp}))
    save = tmp / f"{row['id']}-exp"
    cmd = [aic, "cli", "exp", "--yaml-path", str(yaml_path), "--top-n", "1", "--save-dir", str(save)]
    picked: list[dict[str, str]] = []

    def parse(out: str) -> float | None:
        found = sorted(save.glob("*/row/best_config_topn.csv"), key=lambda p: p.stat().st_mtime)
        if not found:
            return None
        best = next(csv.DictReader(found[-1].open()), None)
        if best is None:
            return None
        picked.append(best)
        return float(best["tokens/s/gpu"]) * gpus

    val, wall, mode, err = _with_fallback(cmd, parse)
    best = picked[-1] if picked else {}
    return {
        "tokens_per_s": val,
        "batch_per_rank": int(float(best["bs"])) if best else None,
        "ctx_tokens": int(float(best["ctx_tokens"])) if best else None,
        "parallel": best.get("parallel"),
        "wall_s": wall,
        "database_mode": mode,
        "error": err,
    }


def throughput_part(aic: str, tmp: Path, only: str | None, group: str) -> None:
    rows = [r for r in csv.DictReader(DATA.open()) if r["id"].startswith(group)]
    rows = [r for r in rows if r["accelerator"] == THROUGHPUT_ACCELERATOR and (not only or only in r["id"])]
    per_family: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        spec = {k: v for k, v in r.items() if k != "value"}
        t0 = time.perf_counter()
        pred = predict_row(spec, row_tables())
        wall_ours = time.perf_counter() - t0
        batch = int(pred.details["batch_seqs"])
        m = re.search(r"max_num_tokens (\d+)", pred.reason)
        budget = int(m.group(1)) if m else None  # per attention-DP rank, as trtllm-bench sets it
        model_dir = tmp / r["id"]
        model_dir.mkdir()
        (model_dir / "config.json").write_text(json.dumps(hf_config(r)))
        same = aic_same_batch(aic, r, model_dir, batch, budget)
        best = aic_best(aic, r, model_dir, tmp)
        measured = float(r["value"])
        line = {
            "part": "throughput",
            "id": r["id"],
            "family": r["model_name"],
            "isl": int(r["input_tokens"]),
            "osl": int(r["output_tokens"]),
            "gpus": int(r["num_accelerators"]),
            "layout": _layout(r),
            "measured_tok_s": measured,
            "aiinfra_tok_s": round(pred.predicted or 0.0, 1),
            "aiinfra_batch": batch,
            "max_num_tokens_per_rank": budget,
            "aic_same_batch_tok_s": same["tokens_per_s"],
            "aic_same_batch": same,
            "aic_best_tok_s": best["tokens_per_s"],
            "aic_best": best,
            "err_aiinfra": _round(_err(pred.predicted, measured)),
            "err_aic_same_batch": _round(_err(same["tokens_per_s"], measured)),
            "err_aic_best": _round(_err(best["tokens_per_s"], measured)),
            "wall_s_aiinfra": round(wall_ours, 4),
        }
        print(json.dumps(line), flush=True)
        per_family.setdefault(r["model_name"], []).append(line)
    everything = [x for xs in per_family.values() for x in xs]
    for fam, xs in [*per_family.items(), ("all", everything)]:
        if xs:
            print(json.dumps(_summary(fam, xs)), flush=True)


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _summary(family: str, xs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median |error|, median signed error and share within ±25 % per tool over the rows it estimated, the
    same over the rows all three estimated ("common"), and mean / median wall time per estimate."""
    keys = ("aiinfra", "aic_same_batch", "aic_best")
    common = [x for x in xs if all(x[f"err_{k}"] is not None for k in keys)]
    out: dict[str, Any] = {"part": "throughput", "family": family, "rows": len(xs), "rows_common": len(common)}
    for key in keys:
        errs = [x[f"err_{key}"] for x in xs if x[f"err_{key}"] is not None]
        out[f"{key}_rows"] = len(errs)
        out[f"median_abs_err_{key}"] = _median_abs(errs)
        out[f"median_signed_err_{key}"] = _round(statistics.median(errs)) if errs else None
        out[f"within_25pct_{key}"] = _within(errs)
        out[f"common_median_abs_err_{key}"] = _median_abs([x[f"err_{key}"] for x in common])
    walls = {
        "aiinfra": [x["wall_s_aiinfra"] for x in xs],
        "aic_same_batch": [x["aic_same_batch"]["wall_s"] for x in xs],
        "aic_best": [x["aic_best"]["wall_s"] for x in xs],
    }
    for key, ws in walls.items():
        out[f"wall_s_mean_{key}"] = round(statistics.mean(ws), 4)
        out[f"wall_s_median_{key}"] = round(statistics.median(ws), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--aic", default="aiconfigurator", help="the aiconfigurator executable of its own venv")
    ap.add_argument("--skip-latency", action="store_true", help="skip the six batch-1 latency rows")
    ap.add_argument("--skip-throughput", action="store_true", help="skip the H100 throughput rows")
    ap.add_argument("--only", help="throughput rows whose id contains this text")
    ap.add_argument(
        "--group",
        default=THROUGHPUT_GROUPS[0],
        choices=THROUGHPUT_GROUPS,
        help="the TensorRT-LLM perf-overview page version whose H100 rows to run",
    )
    args = ap.parse_args()
    if shutil.which(args.aic) is None:
        print(json.dumps({"skipped": f"{args.aic} not found (AIConfigurator 0.12.0 lives in its own venv)"}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_latency:
            (Path(tmp) / "latency").mkdir()
            latency_part(args.aic, Path(tmp) / "latency")
        if not args.skip_throughput:
            (Path(tmp) / "throughput").mkdir()
            throughput_part(args.aic, Path(tmp) / "throughput", args.only, args.group)


if __name__ == "__main__":
    main()
