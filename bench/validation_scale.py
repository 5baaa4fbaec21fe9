"""Training at scale, open vs sealed (issue 28): scores a batch's open and sealed files (``--batch 1-2``:
``training_scale_open.csv`` / ``training_scale_sealed.csv``; ``--batch 3``: ``training_scale3_*.csv``; ``--batch 4``
and ``--batch 5`` likewise; ``--batch all``) with the current model and prints the Markdown tables of
docs/validation.md's at-scale sections (overall, at >= 1,000 accelerators, by regime, and every row).

``--dump FILE`` writes the per-row errors as JSON; ``--before FILE`` (a dump made by running this script on an older
checkout's ``src`` through PYTHONPATH) adds the before -> after columns. Which rows are sealed was fixed by
sha256(id) % 3 == 0 and committed (validation/data/training_scale_seal.csv, training_scale3_seal.csv,
training_scale4_seal.csv, training_scale5_seal.csv) before any value was read."""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from pathlib import Path

from aiinfra.app.tables import row_tables
from aiinfra.validation import runner

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data"
#: each batch's open and sealed files (batches 3 to 5 are sealed by their own committed lists training_scale3_seal.csv,
#: training_scale4_seal.csv and training_scale5_seal.csv)
BATCHES = {
    "1-2": {"open": DATA / "training_scale_open.csv", "sealed": DATA / "training_scale_sealed.csv"},
    "3": {"open": DATA / "training_scale3_open.csv", "sealed": DATA / "training_scale3_sealed.csv"},
    "4": {"open": DATA / "training_scale4_open.csv", "sealed": DATA / "training_scale4_sealed.csv"},
    "5": {"open": DATA / "training_scale5_open.csv", "sealed": DATA / "training_scale5_sealed.csv"},
}
BLACKWELL = ("nvidia-gb200", "nvidia-gb300", "nvidia-b200-sxm-180gb", "nvidia-b300-sxm-288gb")


def regime(row: dict[str, str]) -> str:
    model, precision = row["model_name"], row["precision"]
    blackwell = row["accelerator"] in BLACKWELL
    if "DeepSeek-V3" in model and blackwell:
        return "DeepSeek-V3 MoE (EP 32, PP 4 x VP 4, TP <= 2), GB200/GB300 MXFP8"
    if "DeepSeek-V3" in model:
        return "DeepSeek-V3 MoE (EP 64, PP 16 DualPipe, ZeRO-1, no TP), H800 FP8"
    if "gpt-oss" in model:
        return "gpt-oss-20b MoE (EP 8, TP 2, CP 4), GB300 MXFP8"
    if "Pax GPT" in model:
        return "GPT 512B-1T, Pax on one TPU v4 slice (FSDP 64-256 x TP 8-16, full remat)"
    if "PaLM" in model:
        return "PaLM 540B, TPU v4 (TP 12 x sharded DP, two pods over DCN)"
    if "Nemotron-4 340B" in model:
        return "Nemotron-4 340B, Megatron 3D (TP 8, PP 12 interleaved, distributed optimizer), H100 BF16"
    if "DeepSpeed on Azure" in model and "530B" in model:
        return "GPT 530B, DeepSpeed ZeRO-3 over all ranks (no TP/PP, no offload), A100 FP16"
    if "DeepSpeed on Azure" in model:
        return "GPT 1T-2T, DeepSpeed ZeRO-3 over all ranks (no TP/PP, CPU optimizer offload), A100 FP16"
    if "Megatron-LM README" in model and row["accelerator"].startswith("nvidia-a100"):
        return "GPT-3 175B, Megatron-LM 2021 3D (TP 8, PP 16, full recompute, no FlashAttention), A100 FP16"
    if "Megatron-LM README" in model:
        return "GPT 177B, Megatron-Core r0.8 3D (TP 8, PP 6, distributed optimizer, overlaps), H100 BF16"
    if "GPT-3" in model and row["accelerator"].startswith("nvidia-a100"):
        return "GPT-3 175B, NeMo Megatron 3D (TP 8, PP 8, sequence parallel, selective recompute), A100 BF16"
    if "GPT-3" in model and row["accelerator"] == "intel-gaudi2":
        return "GPT-3 175B, Megatron-DeepSpeed 3D (TP 8, PP 8, ZeRO-0), Gaudi 2 FP8"
    if "GPT-3" in model:
        return "GPT-3 175B, Megatron 3D (TP4 PP6-8 interleaved, distributed optimizer), H100/B200 FP8"
    if "405B" in model:
        if precision == "nvfp4":
            return "Llama 3.1 405B 4D (TP PP CP), Blackwell NVFP4"
        return "Llama 3.1 405B 4D (TP PP CP), GB200 FP8" if blackwell else "Llama 3.1 405B 4D (TP PP CP), H100/H200 FP8"
    if int(row["tp"] or 1) > 2:
        return "Llama 3.1 8B TP 4 x CP 4, GB200 FP8"
    return "Llama 3.1 8B DP x CP (TP <= 2), Blackwell FP8/NVFP4"


def errors(paths: list[Path]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for path in paths:
        for case in runner.run(path, row_tables())["cases"]:
            out[case.id] = case.rel_error
    return out


def stats(ids: list[str], errs: dict[str, float | None]) -> dict[str, float] | None:
    vals = [errs[i] for i in ids if errs.get(i) is not None]
    if not vals:
        return None
    absolute = sorted(abs(v) for v in vals if v is not None)
    return {
        "n": len(absolute),
        "median": statistics.median(absolute),
        "p90": runner.quantile(absolute, 0.9),
        "within25": sum(a <= 0.25 for a in absolute) / len(absolute),
        "signed": statistics.mean(v for v in vals if v is not None),
    }


def cell(s: dict[str, float] | None) -> str:
    if s is None:
        return "—"
    return f"{s['n']:.0f} rows: {100 * s['median']:.1f} % / {100 * s['p90']:.1f} % / {100 * s['within25']:.0f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--before", type=Path)
    ap.add_argument("--batch", choices=[*BATCHES, "all"], default="1-2", help="which batch's files to score")
    args = ap.parse_args()
    chosen = list(BATCHES.values()) if args.batch == "all" else [BATCHES[args.batch]]
    # a batch may ship no open (or sealed) file: the runner refuses an empty one
    sets = {name: [b[name] for b in chosen if b[name].exists()] for name in ("open", "sealed")}
    rows: dict[str, dict[str, str]] = {}
    for name, paths in sets.items():
        for path in paths:
            with path.open(newline="") as f:
                for r in csv.DictReader(f):
                    rows[r["id"]] = {**r, "_set": name}
    after = errors([p for paths in sets.values() for p in paths])
    if args.dump:
        args.dump.write_text(json.dumps(after))
    before: dict[str, float | None] = json.loads(args.before.read_text()) if args.before else {}
    cols = ("before", "after") if before else ("after",)
    print("| rows | scope | " + " | ".join(f"{c}: median / p90 / within ±25 %" for c in cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for name in sets:
        ids = [i for i, r in rows.items() if r["_set"] == name]
        big = [i for i in ids if int(rows[i]["num_accelerators"]) >= 1000]
        for scope, sel in (("all", ids), ("≥ 1,000 accelerators", big)):
            res = [cell(stats(sel, before))] if before else []
            print(f"| {name} | {scope} | " + " | ".join([*res, cell(stats(sel, after))]) + " |")
    print()
    print("| regime | open | sealed | sealed mean signed error |")
    print("|---|---|---|---|")
    for g in sorted({regime(r) for r in rows.values()}):
        cells = []
        for name in sets:
            sel = [i for i, r in rows.items() if r["_set"] == name and regime(r) == g]
            cells.append(" → ".join(cell(stats(sel, e)) for e in ((before, after) if before else (after,))))
        sealed = stats([i for i, r in rows.items() if r["_set"] == "sealed" and regime(r) == g], after)
        signed = "—" if sealed is None else f"{100 * sealed['signed']:+.1f} %"
        print(f"| {g} | {cells[0]} | {cells[1]} | {signed} |")
    print()
    print("| id | set | accelerators | accelerator | precision | measured (s, tok/s) | " + " | ".join(cols) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(cols))
    for i in sorted(rows, key=lambda k: (rows[k]["_set"], k)):
        r = rows[i]
        errs = [before.get(i), after.get(i)] if before else [after.get(i)]
        shown = " | ".join("—" if e is None else f"{100 * e:+.1f} %" for e in errs)
        print(
            f"| {i} | {r['_set']} | {r['num_accelerators']} | {r['accelerator']} | {r['precision']} | "
            f"{float(r['value']):.4g} | {shown} |"
        )


if __name__ == "__main__":
    main()
