"""Serving under load, open vs sealed (issue 29): scores the serving rows with the current model and prints the
Markdown tables of docs/validation.md's section "Serving rows under load: open vs sealed (issue 29)": overall, by
regime (engine, load level, dense/MoE, hardware, metric, publisher) and every row.

Each batch is an open and a sealed file beside its seal list: ``inference_serving{N}_open.csv`` /
``inference_serving{N}_sealed.csv`` / ``inference_serving{N}_seal.csv`` (N blank for the first batch, 2, 3, … for
the later ones; a new batch is found by its seal list). ``--batch 1|2|…|all`` picks the batch, ``--split
open|sealed|both`` the split. ``--dump FILE`` writes the per-row errors as JSON; ``--before FILE`` (a dump made by
running this script on an older checkout's ``src`` through PYTHONPATH) adds before -> after columns. Which rows are
sealed was fixed by sha256(id) % 3 == 0 and committed in each batch's seal list before any value was read."""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from collections.abc import Callable
from pathlib import Path

from aiinfra.app.tables import row_tables
from aiinfra.validation import runner

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data"


def _batch_number(seal_list: Path) -> int:
    """1 for ``inference_serving_seal.csv``, N for ``inference_servingN_seal.csv``."""
    digits = seal_list.name.removeprefix("inference_serving").removesuffix("_seal.csv")
    return int(digits or 1)


FILES = {
    f"{split}{'' if n == 1 else f'-{n}'}": DATA / f"inference_serving{'' if n == 1 else n}_{split}.csv"
    for n in sorted(_batch_number(p) for p in DATA.glob("inference_serving*_seal.csv"))
    for split in ("open", "sealed")
}
"""Set name -> file: the split, then ``-2``, ``-3``, … for the later batches."""
BATCHES = tuple(dict.fromkeys(name.partition("-")[2] or "1" for name in FILES))
"""The batches, as ``--batch`` names them ("1" for the first, whose set names carry no number)."""
HARDWARE = {
    "nvidia-h100-sxm5-80gb": "H100 SXM",
    "nvidia-h200-sxm-141gb": "H200",
    "amd-mi300x": "MI300X",
    "nvidia-l40s": "L40S",
    "nvidia-a100-sxm4-80gb": "A100 SXM 80 GB",
    "nvidia-h100-pcie-80gb": "H100 PCIe",
    "nvidia-b200-sxm-180gb": "B200",
}
METRIC = {
    "ttft_s": "TTFT",
    "tpot_s": "TPOT / ITL",
    "output_tokens_per_s": "output tokens/s",
    "requests_per_s": "requests/s",
}


def load_level(row: dict[str, str]) -> str:
    """The load a row was measured under, from its mode and its stated load only (never from its value)."""
    mode = row["mode"]
    if mode == "concurrency":
        return f"closed loop, {row['batch_or_concurrency']} clients"
    if mode == "poisson" and "mlperf" in row["id"]:
        return "Poisson at an MLPerf server target rate"
    if mode == "poisson":
        rate = float(row["request_rate_per_s"])
        return "Poisson, 1-8 req/s" if rate < 10 else "Poisson, 10-1000 req/s (heavy load, overload or burst)"
    if mode == "batch":
        return "fixed batch (offline benchmark)"
    if mode == "burst":
        return f"burst of {row['batch_or_concurrency']} requests at t = 0"
    return "offline (engine's own maximum batch)"


def family(row: dict[str, str]) -> str:
    return "MoE" if int(row["num_experts"] or 1) > 1 else "dense"


REGIMES: dict[str, Callable[[dict[str, str]], str]] = {
    "engine": lambda r: r["engine"],
    "load level": load_level,
    "dense / MoE": family,
    "hardware": lambda r: HARDWARE.get(r["accelerator"], r["accelerator"]),
    "metric": lambda r: METRIC.get(r["metric"], r["metric"]),
    "publisher": lambda r: r["id"].split("-", 1)[0],
}


def scored() -> dict[str, tuple[float | None, float | None]]:
    """(predicted, relative error) of every row of both files."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for path in FILES.values():
        for case in runner.run(path, row_tables())["cases"]:
            out[case.id] = (case.predicted, case.rel_error)
    return out


def stats(ids: list[str], errs: dict[str, float | None]) -> dict[str, float] | None:
    vals = [v for v in (errs.get(i) for i in ids) if v is not None]
    if not vals:
        return None
    absolute = sorted(abs(v) for v in vals)
    return {
        "n": len(absolute),
        "median": statistics.median(absolute),
        "p90": runner.quantile(absolute, 0.9),
        "within25": sum(a <= 0.25 for a in absolute) / len(absolute),
        "signed": statistics.median(vals),
    }


def cell(s: dict[str, float] | None) -> str:
    if s is None:
        return "—"
    return f"{s['n']:.0f}: {100 * s['median']:.1f} % / {100 * s['within25']:.0f} % / {100 * s['signed']:+.0f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--before", type=Path)
    ap.add_argument(
        "--split", choices=("open", "sealed", "both"), default="both", help="score only these rows (work on open)"
    )
    ap.add_argument("--batch", choices=(*BATCHES, "all"), default="all", help="score only this batch of rows")
    args = ap.parse_args()
    for name in list(FILES):
        split, _, batch = name.partition("-")
        if args.split not in ("both", split) or args.batch not in ("all", batch or "1"):
            del FILES[name]
    rows: dict[str, dict[str, str]] = {}
    for name, path in FILES.items():
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                rows[r["id"]] = {**r, "_set": name}
    predicted_errors = scored()
    after = {k: e for k, (_, e) in predicted_errors.items()}
    if args.dump:
        args.dump.write_text(json.dumps(after))
    before: dict[str, float | None] = json.loads(args.before.read_text()) if args.before else {}
    print("| rows | n | median abs error | p90 abs error | within ±25 % | median signed error |")
    print("|---|---|---|---|---|---|")
    for name in FILES:
        ids = [i for i, r in rows.items() if r["_set"] == name]
        for label, errs in (("before", before), ("after", after)) if before else (("", after),):
            s = stats(ids, errs)
            if s is not None:
                print(
                    f"| {name}{' ' + label if label else ''} | {s['n']:.0f} | {100 * s['median']:.1f} % | "
                    f"{100 * s['p90']:.1f} % | {100 * s['within25']:.0f} % | {100 * s['signed']:+.1f} % |"
                )
    arrow = " (before → after)" if before else ""
    for title, fn in REGIMES.items():
        print()
        heads = " | ".join(f"{s}{arrow}: n: median abs / within ±25 % / median signed" for s in FILES)
        print(f"| {title} | {heads} |")
        print("|---|" + "---|" * len(FILES))
        for g in sorted({fn(r) for r in rows.values()}):
            cells = []
            for s in FILES:
                ids = [i for i, r in rows.items() if r["_set"] == s and fn(r) == g]
                now = cell(stats(ids, after))
                cells.append(f"{cell(stats(ids, before))} → {now}" if before else now)
            print(f"| {g} | " + " | ".join(cells) + " |")
    cols = ("before", "after") if before else ("error",)
    print()
    print("| id | set | engine | load | metric | measured (SI) | predicted | " + " | ".join(cols) + " |")
    print("|---|---|---|---|---|---|---|" + "---|" * len(cols))
    order = sorted(rows, key=lambda k: (rows[k]["_set"], -abs(after.get(k) or 0.0)))
    predicted = {k: p for k, (p, _) in predicted_errors.items()}
    for i in order:
        r = rows[i]
        errs = [before.get(i), after.get(i)] if before else [after.get(i)]
        shown = " | ".join("—" if e is None else f"{100 * e:+.1f} %" for e in errs)
        pred = predicted.get(i)
        print(
            f"| {i} | {r['_set']} | {r['engine']} | {load_level(r)} | {r['metric']} | {float(r['value']):.4g} | "
            f"{'—' if pred is None else f'{pred:.4g}'} | {shown} |"
        )


if __name__ == "__main__":
    main()
