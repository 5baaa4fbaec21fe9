"""Side-by-side with Calculon (Isaev et al., SC'23; github calculon-ai/calculon), run from its own checkout and
virtual environment through a subprocess — never a dependency of aiinfra, and none of its code is copied here.

Usage: git clone https://github.com/calculon-ai/calculon /tmp/calculon
       python -m venv /tmp/calculon-venv && /tmp/calculon-venv/bin/pip install numpy pandas psutil
       python bench/bench_calculon.py --calculon /tmp/calculon --calculon-python /tmp/calculon-venv/bin/python
       (or set CALCULON_DIR and CALCULON_PYTHON); --json out.json writes everything measured.

Speed, on the case of bench_search.py (GPT-3 175B, 1,024 × A100 80GB, global batch 1,536 sequences of 2,048):
  * Calculon's full llm-optimal-execution space is counted exactly (its search run with debug=True, which
    enumerates without evaluating), then a random sample of its search groups is evaluated for --budget-s
    seconds on one process; full-space time = candidates / measured rate, an EXTRAPOLATION.
  * a restricted case both tools search exhaustively: tp = 8, pp = 16 (dp = 8) fixed; Calculon run as with its
    --no-tp-overlap --no-dp-overlap flags (every other option it enumerates stays in), aiinfra over everything
    else it enumerates (vp, micro-batch, sharding, recompute).
Accuracy: Calculon's `llm` command and aiinfra's validation predictor on the Megatron-LM rows of
src/aiinfra/validation/data/training.csv (korthikanti2022-t5 from Calculon's own validation/seqsel/tab5 files;
narayanan2021-* rows translated to Calculon execution files from the row's columns), both with Calculon's
systems/a100_80g.json for Calculon and the catalog A100 for aiinfra.
Prints one JSON line per measurement, then two tables; skips cleanly when Calculon is absent.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from aiinfra import catalog
from aiinfra.app.tables import row_tables
from aiinfra.catalog.resolve import resolve
from aiinfra.planning.training import plan_training, setup_from_job
from aiinfra.search.plans import Enumeration, divisors, enumerate_plans
from aiinfra.search.rank import rank_plans
from aiinfra.specs.parallelism import Recompute, Sharding
from aiinfra.specs.scenario import parse_scenario
from aiinfra.validation.rows import model_from_row
from aiinfra.validation.training_rows import predict_row

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data" / "training.csv"
CASE: dict[str, Any] = {
    "model": "gpt3-175b",
    "hardware": {"accelerator": "nvidia-a100-sxm4-80gb", "count": 1024},
    "training": {"tokens": 300e9, "seq_len": 2048, "global_batch_seqs": 1536, "precision": "fp16"},
}
RESTRICT_TP, RESTRICT_PP = 8, 16
#: korthikanti2022-t5 row size tag -> Calculon models/*.json name; row suffix -> validation/seqsel/tab5 mode
KORTHIKANTI_MODELS = {"22b": "megatron-22B", "175b": "gpt3-175B", "530b": "turing-530B", "1t": "megatron-1T"}
KORTHIKANTI_MODES = {"full": "full", "seqpar-selective": "seqsel"}
GROUPS = ("korthikanti2022-t5", "narayanan2021-t1", "narayanan2021-t2-ptdp")
RECOMPUTE = {"full": "full", "selective": "attn_only", "none": "none"}

# Runs inside Calculon's interpreter. Reads a JSON job on stdin, prints one JSON object. It calls Calculon's own
# OptimalExecution.search once per search group (tp, pp, interleaving, recompute, optimizer sharding, TP
# communication), the unit its llm-optimal-execution command hands to its process pool.
DRIVER = r"""
import json, random, sys, time
job = json.loads(sys.stdin.read())
sys.path.insert(0, job["checkout"])
import calculon
from calculon.llm import Llm
from calculon.llm.optimal_execution import OptimalExecution
from calculon.system import System

app = Llm.Application(calculon.read_json_file(job["model"]))
syst = System(calculon.read_json_file(job["system"]))
n, max_batch = job["num_procs"], job["max_batch"]
groups = []
for tp in Llm.get_all_tensor_parallelisms(n, app.hidden, app.attn_heads):
    if job.get("tp") not in (None, tp):
        continue
    for pp in Llm.get_all_pipeline_parallelisms(n, tp, app.num_blocks):
        if job.get("pp") not in (None, pp):
            continue
        dp = Llm.get_data_parallelism(n, tp, pp)
        batch = OptimalExecution.get_batch_size(dp, max_batch)
        if batch is None:
            continue
        for vp in Llm.get_valid_pipeline_interleavings(app.num_blocks, pp):
            for recompute in ("full", "attn_only", "none"):
                for sharding in ((True, False) if dp > 1 else (False,)):
                    for comm in ("ar", "p2p_rs_ag", "rs_ag"):
                        groups.append((tp, pp, dp, vp, batch, recompute, sharding, comm))


def search(group, debug):
    tp, pp, dp, vp, batch, recompute, sharding, comm = group
    return OptimalExecution.search(
        debug, 1, False, n, max_batch, "float16", app, syst, tp, pp, dp, vp, batch, recompute, sharding, comm,
        [True], False, not job["no_tp_overlap"], not job["no_dp_overlap"])


class OutOfTime(BaseException):
    pass


counts = {"evaluated": 0, "estimated": 0}
deadline = [float("inf")]
compile_, stats_ = Llm.compile, Llm.get_stats_json


def compile_counted(self, *a, **k):
    if time.perf_counter() > deadline[0]:
        raise OutOfTime
    counts["evaluated"] += 1
    return compile_(self, *a, **k)


def stats_counted(self, *a, **k):
    counts["estimated"] += 1
    return stats_(self, *a, **k)


Llm.compile, Llm.get_stats_json = compile_counted, stats_counted
out = {"groups": len(groups), "candidates": sum(search(g, True)[1] for g in groups)}
if job["mode"] != "count":
    if job["mode"] == "sample":
        random.Random(job["seed"]).shuffle(groups)
    t0, c0 = time.perf_counter(), time.process_time()
    deadline[0] = t0 + job["budget_s"]
    best, done = None, 0
    try:
        for g in groups:
            found = search(g, False)[0]
            done += 1
            if found and (best is None or found[0][0] > best[0]):
                best = found[0]
    except OutOfTime:
        pass
    out.update(wall_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0, groups_done=done,
               candidates_evaluated=counts["evaluated"], candidates_estimated=counts["estimated"])
    if best:
        out.update(best_execution=best[1], best_step_time_s=best[2]["total_time"])
print(json.dumps(out))
"""


def run_driver(python: str, job: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run([python, "-c", DRIVER], input=json.dumps(job), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"Calculon driver failed: {proc.stderr.strip()[-400:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def aiinfra_search(restricted: bool) -> dict[str, Any]:
    """aiinfra's search of CASE; restricted = only plans with tp, pp = RESTRICT_TP, RESTRICT_PP and cp = 1."""
    sc = resolve(parse_scenario(CASE))
    if not restricted:
        t0 = time.perf_counter()
        rep = plan_training(sc)
        wall = time.perf_counter() - t0
        best = rep.estimates[0]
        return {
            "candidates": rep.candidates,
            "valid": rep.valid_plans,
            "estimated": rep.fitting_plans,
            "wall_s": wall,
            "best_plan": best.plan,
            "best_step_time_s": best.step_time_s,
        }
    job = sc.training
    assert job is not None
    t0 = time.perf_counter()
    enum = enumerate_plans(sc.model, sc.cluster.count, job.global_batch_seqs, job.seq_len)
    p = enum.plans
    keep = np.nonzero((p.tp == RESTRICT_TP) & (p.pp == RESTRICT_PP) & (p.cp == 1))[0]
    # one (tp, pp, cp) triple of the len(divisors)^3 the enumeration crosses with everything else
    per_triple = enum.candidates // len(divisors(sc.cluster.count)) ** 3
    sub = Enumeration(plans=p.take(keep), candidates=per_triple)
    ranked = rank_plans(setup_from_job(sc.model, job, reserve=sc.runtime_reserve), sc.cluster, sub, 1)
    wall = time.perf_counter() - t0
    out: dict[str, Any] = {"candidates": per_triple, "valid": len(keep), "estimated": ranked.fitting, "wall_s": wall}
    if len(ranked.order):
        i = int(ranked.order[0])
        full = plan_training(
            resolve(parse_scenario({**CASE, "training": {**CASE["training"], "plan": _plan_dict(sub, i)}}))
        )
        out.update(best_plan=full.estimates[0].plan, best_step_time_s=full.estimates[0].step_time_s)
    return out


def _plan_dict(enum: Enumeration, i: int) -> dict[str, Any]:
    p = enum.plans
    return {
        "tp": int(p.tp[i]),
        "pp": int(p.pp[i]),
        "dp": int(p.dp[i]),
        "cp": int(p.cp[i]),
        "vp": int(p.vp[i]),
        "microbatch_seqs": int(p.mb[i]),
        "sharding": Sharding(int(p.sharding[i])).label,
        "recompute": Recompute(int(p.recompute[i])).label,
    }


def speed(checkout: Path, python: str, budget_s: float, skip_restricted: bool) -> list[dict[str, Any]]:
    base = {
        "checkout": str(checkout),
        "model": str(checkout / "models" / "gpt3-175B.json"),
        "system": str(checkout / "systems" / "a100_80g.json"),
        "num_procs": 1024,
        "max_batch": 1536,
        "no_tp_overlap": False,
        "no_dp_overlap": False,
        "seed": 0,
        "budget_s": budget_s,
    }
    lines: list[dict[str, Any]] = []
    full = run_driver(python, {**base, "mode": "sample"})
    rate = full["candidates_evaluated"] / full["wall_s"]
    lines.append(
        {
            "tool": "calculon",
            "case": "full space, random sample of search groups, time-boxed",
            "candidates_full_space": full["candidates"],
            "search_groups": full["groups"],
            "sampled_groups_completed": full["groups_done"],
            "candidates_evaluated": full["candidates_evaluated"],
            "candidates_estimated": full["candidates_estimated"],
            "wall_s": round(full["wall_s"], 1),
            "cpu_s": round(full["cpu_s"], 1),
            "candidates_per_s": round(rate, 1),
            "candidates_per_cpu_s": round(full["candidates_evaluated"] / full["cpu_s"], 1),
            "extrapolated_full_space_s_one_process": round(full["candidates"] / rate),
            "extrapolated_full_space_cpu_s": round(full["candidates"] * full["cpu_s"] / full["candidates_evaluated"]),
            "best_step_time_s_in_sample": full.get("best_step_time_s"),
        }
    )
    ours = aiinfra_search(restricted=False)
    lines.append({"tool": "aiinfra", "case": "full space", **_rounded(ours)})
    if not skip_restricted:
        res = run_driver(
            python,
            {
                **base,
                "mode": "all",
                "tp": RESTRICT_TP,
                "pp": RESTRICT_PP,
                "no_tp_overlap": True,
                "no_dp_overlap": True,
                "budget_s": 1e9,
            },
        )
        lines.append(
            {
                "tool": "calculon",
                "case": f"tp={RESTRICT_TP} pp={RESTRICT_PP}, --no-tp-overlap --no-dp-overlap",
                "candidates": res["candidates"],
                "candidates_evaluated": res["candidates_evaluated"],
                "candidates_estimated": res["candidates_estimated"],
                "wall_s": round(res["wall_s"], 1),
                "cpu_s": round(res["cpu_s"], 1),
                "candidates_per_s": round(res["candidates_evaluated"] / res["wall_s"], 1),
                "candidates_per_cpu_s": round(res["candidates_evaluated"] / res["cpu_s"], 1),
                "best_execution": res.get("best_execution"),
                "best_step_time_s": res.get("best_step_time_s"),
            }
        )
        ours = aiinfra_search(restricted=True)
        lines.append({"tool": "aiinfra", "case": f"tp={RESTRICT_TP} pp={RESTRICT_PP}", **_rounded(ours)})
    return lines


def _rounded(r: dict[str, Any]) -> dict[str, Any]:
    return {**r, "wall_s": round(r["wall_s"], 4), "candidates_per_s": round(r["candidates"] / r["wall_s"])}


def calculon_files(row: dict[str, str], checkout: Path, tmp: Path) -> tuple[Path, Path]:
    """Calculon application and execution files for a row: its own tab5 files for Korthikanti rows, otherwise
    written from the row's columns with the conventions of those files (float16, TP on the NVLink tier, PP and DP
    on the scale-out tier, no overlap of DP communication, no offload); blank vp and micro-batch read as 1
    and blank heads as aiinfra's validation reads them (model_from_row)."""
    rid = row["id"]
    if rid.startswith("korthikanti2022-t5-"):
        size, mode = rid.removeprefix("korthikanti2022-t5-").split("-", 1)
        name = KORTHIKANTI_MODELS[size]
        exe = checkout / "validation" / "seqsel" / "tab5" / f"{name}_{KORTHIKANTI_MODES[mode]}.json"
        return checkout / "models" / f"{name}.json", exe
    model, _ = model_from_row(row, catalog.rows("models"))
    app = {
        "hidden": model.hidden_size,
        "feedforward": model.ffn_hidden_size,
        "seq_size": int(row["seq_len"]),
        "attn_heads": model.num_heads,
        "attn_size": model.head_size,
        "num_blocks": model.num_layers,
    }
    n, tp, pp = int(row["num_accelerators"]), int(row["tp"] or 1), int(row["pp"] or 1)
    recompute = RECOMPUTE[row["recompute"] or "none"]
    exe_cfg = {
        "num_procs": n,
        "tensor_par": tp,
        "pipeline_par": pp,
        "data_par": int(row["dp"] or n // (tp * pp)),
        "tensor_par_net": 0,
        "pipeline_par_net": 1,
        "data_par_net": 1,
        "batch_size": int(row["global_batch_seqs"]),
        "microbatch_size": int(row["microbatch_seqs"] or 1),
        "datatype": "float16",
        "fused_activation": False,
        "attention_type": "multihead",
        "activation_recompute": recompute,
        "pipeline_interleaving": int(row["vp"] or 1),
        "optimizer_sharding": row["sharding"] not in ("", "none"),
        "tensor_par_comm_type": "rs_ag" if recompute == "attn_only" else "ar",
        "tensor_par_overlap": "none",
        "seq_par_ag_redo": False,
        "data_par_overlap": False,
        "weight_offload": False,
        "activations_offload": False,
        "optimizer_offload": False,
        "training": True,
    }
    app_path, exe_path = tmp / f"{rid}-app.json", tmp / f"{rid}-exe.json"
    app_path.write_text(json.dumps(app))
    exe_path.write_text(json.dumps(exe_cfg))
    return app_path, exe_path


def accuracy(checkout: Path, python: str) -> tuple[list[dict[str, Any]], dict[str, float]]:
    rows = [r for r in csv.DictReader(DATA.open()) if r["id"].startswith(GROUPS) and r["metric"] == "step_time_s"]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    system = checkout / "systems" / "a100_80g.json"
    lines: list[dict[str, Any]] = []
    wall = {"calculon_s": 0.0, "aiinfra_s": 0.0}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for r in rows:
            app, exe = calculon_files(r, checkout, tmp)
            stats = tmp / f"{r['id']}-stats.json"
            cmd = [python, str(checkout / "bin" / "calculon"), "llm", str(app), str(exe), str(system), str(stats)]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
            wall["calculon_s"] += time.perf_counter() - t0
            calc = json.loads(stats.read_text())["total_time"] if proc.returncode == 0 and stats.exists() else None
            t0 = time.perf_counter()
            ours = predict_row({k: v for k, v in r.items() if k != "value"}, row_tables()).predicted
            wall["aiinfra_s"] += time.perf_counter() - t0
            measured = float(r["value"])
            line: dict[str, Any] = {
                "row": r["id"],
                "group": next(g for g in GROUPS if r["id"].startswith(g)),
                "measured_s": measured,
                "calculon_s": calc,
                "aiinfra_s": ours,
                "calculon_abs_err": None if calc is None else abs(calc - measured) / measured,
                "aiinfra_abs_err": None if ours is None else abs(ours - measured) / measured,
            }
            if calc is None:
                line["calculon_error"] = (proc.stdout + proc.stderr).strip()[-200:]
            lines.append(line)
    return lines, wall


def print_tables(acc: list[dict[str, Any]]) -> None:
    def pct(x: float | None) -> str:
        return "—" if x is None else f"{100 * x:.1f} %"

    def sec(x: float | None) -> str:
        return "—" if x is None else f"{x:.2f}"

    print("\n| row | measured s | Calculon s | abs err | aiinfra s | abs err |")
    print("|---|---|---|---|---|---|")
    for a in acc:
        print(
            f"| {a['row']} | {a['measured_s']:.2f} | {sec(a['calculon_s'])} | {pct(a['calculon_abs_err'])} | "
            f"{sec(a['aiinfra_s'])} | {pct(a['aiinfra_abs_err'])} |"
        )
    print("\n| group | rows | median abs err, Calculon | median abs err, aiinfra |")
    print("|---|---|---|---|")
    for g in (*GROUPS, "all"):
        sel = [a for a in acc if g == "all" or a["group"] == g]
        ec = [a["calculon_abs_err"] for a in sel if a["calculon_abs_err"] is not None]
        ea = [a["aiinfra_abs_err"] for a in sel if a["aiinfra_abs_err"] is not None]
        print(
            f"| {g} | {len(sel)} | {pct(statistics.median(ec)) if ec else '—'} | "
            f"{pct(statistics.median(ea)) if ea else '—'} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--calculon", default=os.environ.get("CALCULON_DIR"), help="Calculon checkout (CALCULON_DIR)")
    ap.add_argument(
        "--calculon-python",
        default=os.environ.get("CALCULON_PYTHON", sys.executable),
        help="interpreter with Calculon's dependencies (numpy, pandas, psutil) (CALCULON_PYTHON)",
    )
    ap.add_argument("--budget-s", type=float, default=90.0, help="time box for sampling Calculon's full space")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-restricted", action="store_true", help="skip the ~5 min exhaustive restricted case")
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--json", type=Path, help="write every measurement to this file")
    args = ap.parse_args()
    checkout = Path(args.calculon) if args.calculon else None
    if checkout is None or not (checkout / "calculon" / "llm" / "optimal_execution.py").exists():
        print(json.dumps({"skipped": f"no Calculon checkout at {checkout} (pass --calculon or set CALCULON_DIR)"}))
        return
    probe = (
        subprocess.run([args.calculon_python, "-c", "import numpy, pandas, psutil"], capture_output=True, check=False)
        if Path(args.calculon_python).exists()
        else None
    )
    if probe is None or probe.returncode != 0:
        print(json.dumps({"skipped": f"{args.calculon_python} lacks numpy/pandas/psutil (pass --calculon-python)"}))
        return
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    report: dict[str, Any] = {"calculon_commit": commit or None, "python": sys.version.split()[0]}
    print(json.dumps(report))
    if not args.skip_speed:
        report["speed"] = speed(checkout, args.calculon_python, args.budget_s, args.skip_restricted)
        for line in report["speed"]:
            print(json.dumps(line, default=str))
    if not args.skip_accuracy:
        acc, wall = accuracy(checkout, args.calculon_python)
        report["accuracy"], report["accuracy_wall_s"] = acc, wall
        for line in acc:
            print(json.dumps(line))
        print(json.dumps({"accuracy_wall_s": {k: round(v, 2) for k, v in wall.items()}, "rows": len(acc)}))
        print_tables(acc)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
