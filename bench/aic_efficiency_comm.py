"""Intra-node collective efficiency curves (kinds allreduce, allgather, alltoall; tier scale-up) from the
communication tables NVIDIA AIConfigurator 0.12.0 ships in aiconfigurator-core (Apache-2.0, NVIDIA's own
collection). Prints the rows of src/aiinfra/catalog/data/efficiency_aic_comm.yaml (TensorRT-LLM, nccl-tests and
vLLM tables) or, with ``--engine sglang``, of efficiency_aic_comm_sglang.yaml (SGLang's own all-reduce on the
Hopper and Ampere parts and the B200, SGLANG_SYSTEMS).

Usage (a separate virtual environment with aiconfigurator==0.12.0, pandas and pyarrow; never a dependency
of aiinfra):
    python -m venv <venv> && <venv>/bin/pip install aiconfigurator==0.12.0
    <venv>/bin/python bench/aic_efficiency_comm.py > src/aiinfra/catalog/data/efficiency_aic_comm.yaml
    <venv>/bin/python bench/aic_efficiency_comm.py --compare   # the table reported in efficiency_sources.md
    <venv>/bin/python bench/aic_efficiency_comm.py --engine sglang \
        > src/aiinfra/catalog/data/efficiency_aic_comm_sglang.yaml
Exits 0 with a message when aiconfigurator_core or pandas is not installed.

Reduction (the model of analytic/comms.py, nccl-tests doc/PERFORMANCE.md bus bandwidth):
  bytes = message_size x 2 (the tables count bf16/half ELEMENTS: the collectors divide nccl-tests' byte size by
          the element size, and size the TensorRT-LLM / vLLM input tensors in elements); the full buffer per rank,
          as comms.collective_time receives it (all-gather: the gathered output; all-to-all: the send buffer).
  time  = latency (ms) x 1e-3, made non-increasing towards smaller messages (each size takes the least time
          measured at it or any larger size) so the curve's times rise with size, as comms.py interpolates them.
  busbw = bytes / time x 2(n-1)/n (all-reduce) or (n-1)/n (all-gather, reduce-scatter, all-to-all)
  efficiency = busbw / the catalog one-way bandwidth of the tier comms.tier_bandwidth uses: the scale-up link
          (NVLink) where the accelerator has one, otherwise its PCIe link (L40S, RTX PRO 6000).
Points whose efficiency exceeds 1 (NVLS in-switch reduction at >= 512 MiB on 8 Hopper GPUs) are left out, as in
efficiency.yaml; the planner then extends the largest kept point.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aic_common import READ_ON, SGLANG_SYSTEMS, SYSTEM_IDS, TREE_URL, data_root

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "src" / "aiinfra" / "catalog" / "data"

#: AIConfigurator system -> (catalog accelerator id, short name used in row ids)
SYSTEMS: dict[str, tuple[str, str]] = {
    "h200_sxm": (SYSTEM_IDS["h200_sxm"], "h200"),
    "b200_sxm": (SYSTEM_IDS["b200_sxm"], "b200"),
    "gb200": (SYSTEM_IDS["gb200"], "gb200"),
    "b300_sxm": (SYSTEM_IDS["b300_sxm"], "b300"),
    "gb300": (SYSTEM_IDS["gb300"], "gb300"),
    "l40s": (SYSTEM_IDS["l40s"], "l40s"),
    "rtx_pro_6000_server": (SYSTEM_IDS["rtx_pro_6000_server"], "rtxpro6000"),
    "h100_sxm": (SYSTEM_IDS["h100_sxm"], "h100"),
    "a100_sxm": (SYSTEM_IDS["a100_sxm"], "a100"),
}
#: parts whose main-file all-reduce curves are measured and validated: every row for them is a cross-check
CROSS_CHECK_ONLY = ("h100_sxm", "a100_sxm")
NCCL_OPS = {"all_reduce": 2.0, "all_gather": 1.0, "reduce_scatter": 1.0, "alltoall": 1.0}
COMPARE_BYTES = (65536, 1 << 20, 16 << 20, 256 << 20)
EXAMPLE_BYTES = 16 << 20


@dataclass(frozen=True)
class Series:
    """One measured sweep: bytes ascending, times (s) made monotone, raw latencies (ms) as stored."""

    bytes_: tuple[int, ...]
    time_s: tuple[float, ...]
    raw_ms: tuple[float, ...]
    elements: tuple[int, ...]


@dataclass(frozen=True)
class Table:
    path: str
    version: str
    frame: Any


def _version_key(v: str) -> tuple[Any, ...]:
    from packaging.version import Version

    return (Version(v),)


def newest(data: Path, system: str, framework: str, filename: str) -> Table | None:
    import pandas as pd

    base = data / system / "comm" / framework
    versions = [p.name for p in base.glob("*") if (p / filename).exists()] if base.exists() else []
    if not versions:
        return None
    v = max(versions, key=_version_key)
    return Table(f"{system}/comm/{framework}/{v}/{filename}", v, pd.read_parquet(base / v / filename))


def series(frame: Any) -> Series:
    sub = frame.sort_values("message_size")
    elements = [int(e) for e in sub["message_size"]]
    raw = [float(x) for x in sub["latency"]]
    times = [ms * 1e-3 for ms in raw]
    for i in range(len(times) - 2, -1, -1):  # least time at this or any larger size
        times[i] = min(times[i], times[i + 1])
    return Series(tuple(2 * e for e in elements), tuple(times), tuple(raw), tuple(elements))


def efficiencies(s: Series, factor: float, n: int, bw: float) -> list[float]:
    return [factor * (n - 1) / n * b / t / bw for b, t in zip(s.bytes_, s.time_s, strict=True)]


def link_bw(acc: dict[str, Any]) -> tuple[float, str]:
    su = acc.get("scale_up")
    if su:
        return float(su["bw_one_way_gb_per_s"]) * 1e9, f"{su['interconnect']} {su['bw_one_way_gb_per_s']} GB/s one-way"
    pcie = acc["pcie"]
    return float(pcie["bw_one_way_gb_per_s"]) * 1e9, f"PCIe Gen{pcie['gen']} {pcie['bw_one_way_gb_per_s']} GB/s one-way"


def main_file_allreduce_ranks(acc_id: str) -> set[int]:
    """n_ranks of the measured scale-up all-reduce curves efficiency.yaml lists for ``acc_id`` (they win ties)."""
    rows = yaml.safe_load((CATALOG / "efficiency.yaml").read_text())
    return {
        int(r["n_ranks"])
        for r in rows
        if r["kind"] == "allreduce"
        and r.get("tier") == "scale-up"
        and not r.get("cross_check")
        and r.get("provenance", "measured") == "measured"
        and acc_id in (r.get("accelerators") or [])
        and r.get("n_ranks")
    }


def _human(b: int) -> str:
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def fmt(x: float) -> str:
    return f"{x:.4g}"


def points(s: Series, eff: list[float]) -> tuple[list[list[float]], list[int]]:  # [[bytes, fraction]]
    kept = [[int(b), float(fmt(y))] for b, y in zip(s.bytes_, eff, strict=True) if y <= 1.0]
    dropped = [b for b, y in zip(s.bytes_, eff, strict=True) if y > 1.0]
    return kept, dropped


def at(s: Series, eff: list[float], size: int) -> float | None:
    return eff[s.bytes_.index(size)] if size in s.bytes_ else None


def example(s: Series, factor: float, n: int, bw: float, bw_text: str) -> str:
    i = s.bytes_.index(EXAMPLE_BYTES)
    b, t = s.bytes_[i], s.time_s[i]
    algbw = b / t
    busbw = algbw * factor * (n - 1) / n
    mono = ""
    if abs(t - s.raw_ms[i] * 1e-3) > 1e-12:
        mono = f" (least time at this or a larger size; stored {s.raw_ms[i]} ms)"
    return (
        f"Worked example: message_size {s.elements[i]} elements x 2 B = {b} B in {t * 1e3:.6g} ms{mono} -> "
        f"algbw {algbw / 1e9:.2f} GB/s -> busbw {busbw / 1e9:.2f} GB/s -> / {bw_text} = {busbw / bw:.4f}."
    )


def latency_us(s: Series) -> float:
    return round(statistics.median(t for b, t in zip(s.bytes_, s.time_s, strict=True) if b <= 65536) * 1e6, 1)


def source(table: Table, system: str, fields: list[str], what: str) -> dict[str, Any]:
    return {
        "title": f"ai-dynamo/aiconfigurator 0.12.0 aic-core systems/data/{table.path} ({what}, NVIDIA collection)",
        "url": f"{TREE_URL}/{system}/comm",
        "read_on": READ_ON,
        "fields": fields,
    }


TRT_NOTE = (
    "TensorRT-LLM's AllReduce op with strategy AUTO (its default for tensor parallelism): its one-shot/two-shot "
    "kernels over NVLink up to its workspace size, NCCL above it and wherever the GPUs lack NVLink "
    "(allreduceOp.cpp ifFallbackToNCCL), so on PCIe parts this IS NCCL, timed the same way. The collector times "
    "100 all-reduces interleaved with a small GEMM in one CUDA graph minus a GEMM-only graph, best of 3 (launch "
    "overhead excluded, like the Vidur NCCL kernel times in efficiency.yaml). Chosen a priori as THE all-reduce "
    "curve of the part: the planner has one all-reduce kind, its main consumer on these parts is inference "
    "tensor parallelism, and this is what the serving engine runs; at training-size messages (>= 64 MiB) it is "
    "NCCL's ring/NVLS. "
)
VLLM_NOTE = (
    "ENGINE vllm ONLY (cross_check: true, engine: vllm): vLLM's tensor-parallel all-reduce as the engine "
    "dispatches it (its custom one-shot/two-shot kernel over NVLink, or over P2P on two PCIe GPUs, where enabled, "
    "else NCCL), 5 all-reduces per CUDA graph replayed 20 times (backend vllm_graph). A lookup naming engine vllm "
    "prefers it; every other lookup uses the part's main all-reduce curve. "
)
SGLANG_NOTE = (
    "ENGINE sglang ONLY (cross_check: true, engine: sglang): SGLang's tensor-parallel all-reduce as the engine "
    "dispatches it (GroupCoordinator.all_reduce, the collector enabling its custom all-reduce and disabling MSCCL++ "
    "and torch symmetric memory, both opt-in in SGLang): its custom one-shot/two-shot kernel (sgl-kernel, adapted "
    "from vLLM's) for messages under its 8 MiB IPC buffer (CustomAllreduce max_size = 8192 * 1024), pynccl (NCCL) "
    "at and above it; 5 all-reduces per CUDA graph replayed 20 times (backend sglang_graph; the eager sweep adds "
    "the host dispatch and the collector's input copy). A lookup naming engine sglang prefers it; every other "
    "lookup uses the part's main all-reduce curve. "
)
NCCL_AR_CC = (
    "CROSS-CHECK ONLY (cross_check: true): the planner's all-reduce curve for this part is the TensorRT-LLM one "
    "(or efficiency.yaml's measured curve where it has one); this is plain NCCL. "
)
X_TEXT = "message bytes (full buffer per rank)"


@dataclass(frozen=True)
class Part:
    system: str
    acc_id: str
    short: str
    bw: float
    bw_text: str


def _row(part: Part, row_id: str, kind: str, n: int, s: Series, eff: list[float], cc: bool) -> dict[str, Any]:
    pts, _ = points(s, eff)
    row: dict[str, Any] = {
        "id": row_id,
        "kind": kind,
        "tier": "scale-up",
        "accelerators": [part.acc_id],
        "n_ranks": n,
        "x": X_TEXT,
        "points": pts,
        "latency_us": latency_us(s),
        "provenance": "measured",
    }
    if cc:
        row["cross_check"] = True
    return row


def _method(part: Part, factor: float, n: int, s: Series, eff: list[float], what: str) -> str:
    _, dropped = points(s, eff)
    return (
        f"efficiency = busbw / {part.bw_text}, busbw = bytes/time x {'2(n-1)/n' if factor == 2.0 else '(n-1)/n'}, "
        f"bytes = 2 x message_size ({what}); times made non-increasing towards smaller sizes. "
        + example(s, factor, n, part.bw, part.bw_text)
        + (f" Left out (efficiency > 1, NVLS): {dropped} B." if dropped else "")
    )


def _floor(s: Series) -> str:
    return (
        " Scale-up: comms.py adds no ring latency; the curve's smallest-message time is the floor "
        f"(latency_us = median time <= 64 KiB = {latency_us(s)} us)."
    )


def _compare(a: Series, a_eff: list[float], b: Series, b_eff: list[float]) -> str:
    return "; ".join(f"{_human(x)} {fmt(at(a, a_eff, x) or 0)} vs {fmt(at(b, b_eff, x) or 0)}" for x in COMPARE_BYTES)


def trtllm_rows(part: Part, trt: Table, nccl_ar: dict[int, tuple[Series, list[float]]]) -> list[dict[str, Any]]:
    main_ar = main_file_allreduce_ranks(part.acc_id)
    rows = []
    for n in sorted(set(trt.frame["num_gpus"])):
        s = series(trt.frame[trt.frame["num_gpus"] == n])
        eff = efficiencies(s, 2.0, n, part.bw)
        covered = n in main_ar
        cc = part.system in CROSS_CHECK_ONLY or covered
        why = ""
        if cc:
            at_n = f" at {n} ranks" if covered and part.system not in CROSS_CHECK_ONLY else ""
            why = (
                "CROSS-CHECK ONLY (cross_check: true): efficiency.yaml's measured all-reduce curves are used for "
                f"{part.acc_id}{at_n}; this row documents how TensorRT-LLM's all-reduce compares. "
            )
        vs = ""
        if n in nccl_ar:
            vs = f" TensorRT-LLM vs nccl-tests all_reduce (same GPUs): {_compare(s, eff, *nccl_ar[n])}."
        row = _row(part, f"allreduce-{part.short}-{n}gpu-trtllm-aic", "allreduce", n, s, eff, cc)
        row["engine"] = "trtllm"  # TensorRT-LLM's own all-reduce op: preferred by trtllm lookups, cross_check or not
        what = f"TensorRT-LLM {trt.version} AllReduce, strategy AUTO, bf16, CUDA graph"
        row["sources"] = [source(trt, part.system, ["message_size", "num_gpus", "latency", "allreduce_dtype"], what)]
        row["notes"] = why + TRT_NOTE + _method(part, 2.0, n, s, eff, "bf16 elements") + vs + _floor(s)
        rows.append(row)
    return rows


def nccl_rows(part: Part, nccl: Table, n: int, frame: Any) -> list[dict[str, Any]]:
    sers = {op: series(frame[(frame["op_name"] == op) & (frame["num_gpus"] == n)]) for op in NCCL_OPS}
    effs = {op: efficiencies(s, NCCL_OPS[op], n, part.bw) for op, s in sers.items()}
    rows = []
    for op, kind in (("all_reduce", "allreduce"), ("all_gather", "allgather"), ("alltoall", "alltoall")):
        s, eff, factor = sers[op], effs[op], NCCL_OPS[op]
        cc = kind == "allreduce" or part.system in CROSS_CHECK_ONLY
        why = NCCL_AR_CC if kind == "allreduce" else ""
        if cc and kind != "allreduce":
            why = (
                "CROSS-CHECK ONLY (cross_check: true): the part's measured efficiency.yaml all-reduce curves also "
                f"time its {kind}s (comms.py falls back to them) and stay in use. "
            )
        extra = ""
        if kind == "allgather":
            rs = sers["reduce_scatter"]
            ratio = [a / b for a, b in zip(rs.time_s, s.time_s, strict=True)]
            extra = (
                " comms.py times reduce-scatter with this all-gather curve; nccl-tests reduce_scatter on the same GPUs "
                f"takes {min(ratio):.2f}-{max(ratio):.2f}x the all_gather time over the sweep "
                f"({fmt(at(rs, effs['reduce_scatter'], EXAMPLE_BYTES) or 0)} at 16 MiB)."
            )
        if kind == "alltoall":
            extra = " x is the full send buffer per rank ((n-1)/n of it leaves the GPU)."
        row = _row(part, f"{kind}-{part.short}-{n}gpu-nccl-aic", kind, n, s, eff, cc)
        fields = ["op_name", "nccl_dtype", "num_gpus", "message_size", "latency"]
        row["sources"] = [source(nccl, part.system, fields, f"nccl-tests {op}_perf, NCCL {nccl.version}, half")]
        row["notes"] = (
            why + f"nccl-tests {op}_perf (out-of-place time, {n} GPUs of one node, half, 40 warm-ups, 1000/500/100 "
            "iterations by size), as AIConfigurator's collector runs it. "
            + _method(part, factor, n, s, eff, "half elements: the collector stores nccl-tests' byte size / 2")
            + extra
            + _floor(s)
        )
        rows.append(row)
    return rows


def engine_rows(
    part: Part, table: Table, engine: str, nccl_ar: dict[int, tuple[Series, list[float]]] | None = None
) -> list[dict[str, Any]]:
    """``engine``'s own bf16 tensor_model_parallel_all_reduce under CUDA graphs (vllm or sglang), one row per GPU
    count, served only to lookups naming that engine; ``nccl_ar``: nccl-tests' all-reduce on the same GPUs, to
    compare SGLang's against (its rows also state their floor)."""
    name, note = {"vllm": ("vLLM", VLLM_NOTE), "sglang": ("SGLang", SGLANG_NOTE)}[engine]
    rows = []
    for n in sorted(set(table.frame["num_gpus"])):
        s = series(table.frame[(table.frame["num_gpus"] == n) & (table.frame["backend"] == f"{engine}_graph")])
        eff = efficiencies(s, 2.0, n, part.bw)
        row = _row(part, f"allreduce-{part.short}-{n}gpu-{engine}-aic", "allreduce", n, s, eff, True)
        row["engine"] = engine  # the engine's own all-reduce: serves lookups naming that engine only
        what = f"{name} {table.version} tensor_model_parallel_all_reduce, bf16, CUDA graph"
        row["sources"] = [source(table, part.system, ["message_size", "num_gpus", "latency", "backend"], what)]
        row["notes"] = note + _method(part, 2.0, n, s, eff, "bf16 elements")
        if nccl_ar is not None:
            if n in nccl_ar:
                row["notes"] += f" SGLang vs nccl-tests all_reduce (same GPUs): {_compare(s, eff, *nccl_ar[n])}."
            row["notes"] += _floor(s)
        rows.append(row)
    return rows


def nccl_allreduce(part: Part, nccl: Table | None) -> dict[int, tuple[Series, list[float]]]:
    """The part's nccl-tests all-reduce (half) sweeps and efficiencies by rank count (none without the table)."""
    out: dict[int, tuple[Series, list[float]]] = {}
    if nccl is None:
        return out
    half = nccl.frame[nccl.frame["nccl_dtype"] == "half"]
    for n in sorted(set(half["num_gpus"])):
        s = series(half[(half["op_name"] == "all_reduce") & (half["num_gpus"] == n)])
        out[n] = (s, efficiencies(s, 2.0, n, part.bw))
    return out


def build_sglang_rows(data: Path) -> list[dict[str, Any]]:
    """engine: sglang all-reduce rows of SGLANG_SYSTEMS, each from the newest SGLang release with its own table."""
    accs = {r["id"]: r for r in yaml.safe_load((CATALOG / "accelerators.yaml").read_text())}
    rows: list[dict[str, Any]] = []
    for system in SGLANG_SYSTEMS:
        acc_id, short = SYSTEMS[system]
        part = Part(system, acc_id, short, *link_bw(accs[acc_id]))
        sgl = newest(data, system, "sglang", "custom_allreduce_perf.parquet")
        if sgl is None:
            print(f"# no {system}/comm/sglang/*/custom_allreduce_perf.parquet", file=sys.stderr)
            continue
        nccl_ar = nccl_allreduce(part, newest(data, system, "nccl", "nccl_perf.parquet"))
        rows.extend(engine_rows(part, sgl, "sglang", nccl_ar))
    return rows


def build_rows(data: Path) -> list[dict[str, Any]]:
    accs = {r["id"]: r for r in yaml.safe_load((CATALOG / "accelerators.yaml").read_text())}
    rows: list[dict[str, Any]] = []
    for system, (acc_id, short) in SYSTEMS.items():
        part = Part(system, acc_id, short, *link_bw(accs[acc_id]))
        nccl = newest(data, system, "nccl", "nccl_perf.parquet")
        trt = newest(data, system, "trtllm", "custom_allreduce_perf.parquet")
        nccl_ar = nccl_allreduce(part, nccl)
        half = nccl.frame[nccl.frame["nccl_dtype"] == "half"] if nccl else None
        if trt is not None:
            rows.extend(trtllm_rows(part, trt, nccl_ar))
        if nccl is not None and half is not None:
            for n in sorted(set(half["num_gpus"])):
                rows.extend(nccl_rows(part, nccl, n, half))
        vll = newest(data, system, "vllm", "custom_allreduce_perf.parquet")
        if vll is not None:
            rows.extend(engine_rows(part, vll, "vllm"))
    return rows


def compare_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Efficiency at COMPARE_BYTES read from each row's points (the sizes are measured ones)."""
    lines = []
    for r in rows:
        pts = {int(x): y for x, y in r["points"]}
        vals = " | ".join(fmt(pts[b]) if b in pts else "-" for b in COMPARE_BYTES)
        lines.append(f"| {r['id']} | {'cross-check' if r.get('cross_check') else 'used'} | {vals} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="aiconfigurator_core systems/data directory (default: the installed package's)")
    ap.add_argument("--compare", action="store_true", help="print efficiencies at 64 KiB / 1 / 16 / 256 MiB")
    ap.add_argument(
        "--engine",
        choices=("sglang",),
        help="reduce that engine's own all-reduce tables instead (sglang: efficiency_aic_comm_sglang.yaml)",
    )
    args = ap.parse_args()
    try:
        import pandas  # noqa: F401
    except ImportError:
        print("pandas/pyarrow not installed: run this with the AIConfigurator virtual environment", file=sys.stderr)
        return 0
    data = Path(args.data) if args.data else data_root()
    if data is None:
        print("aiconfigurator_core not installed (aiconfigurator==0.12.0); nothing to do", file=sys.stderr)
        return 0
    rows = build_sglang_rows(data) if args.engine == "sglang" else build_rows(data)
    if args.compare:
        print("| row | use | 64 KiB | 1 MiB | 16 MiB | 256 MiB |\n|---|---|---|---|---|---|")
        print("\n".join(compare_lines(rows)))
        return 0
    print(HEADER_SGLANG if args.engine == "sglang" else HEADER)
    for r in rows:
        print(emit(r))
    return 0


HEADER = (
    "# Intra-node collective efficiency curves from NVIDIA AIConfigurator 0.12.0's measured comm tables\n"
    "# (generated by bench/aic_efficiency_comm.py; see efficiency_sources.md). Row format: efficiency.yaml.\n"
    "# x = message bytes (full buffer per rank), fraction = nccl-tests bus bandwidth / the catalog one-way link\n"
    "# bandwidth of the scale-up tier (NVLink; PCIe where the part has no NVLink). cross_check rows are not used,\n"
    "# except rows with an engine (TensorRT-LLM's or vLLM's own all-reduce) by a lookup naming that engine."
)
HEADER_SGLANG = (
    "# SGLang's own tensor-parallel all-reduce on H200, H100 and A100 from NVIDIA AIConfigurator 0.12.0's measured\n"
    "# comm tables (generated by bench/aic_efficiency_comm.py --engine sglang; see efficiency_sources.md).\n"
    "# Row format: efficiency.yaml; x and fraction as in efficiency_aic_comm.yaml. engine: sglang, cross_check: true:\n"
    "# used only by lookups naming engine sglang (below its 8 MiB custom all-reduce buffer on Hopper, engines.yaml)."
)


def emit(row: dict[str, Any]) -> str:
    """One row in efficiency.yaml's layout: scalars as YAML, points and sources in flow style (JSON is YAML)."""
    out = []
    for key, val in row.items():
        if key == "points":
            out.append(f"  points: {json.dumps(val)}")
        elif key == "sources":
            out.append("  sources:")
            out.extend(f"    - {json.dumps(src)}" for src in val)
        else:
            out.append(
                "  " + yaml.safe_dump({key: val}, width=100000, default_flow_style=True)[1:-2]
                if isinstance(val, list)
                else "  " + yaml.safe_dump({key: val}, width=100000).rstrip()
            )
    out[0] = "- " + out[0][2:]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
