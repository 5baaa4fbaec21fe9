"""What the per-format fused-MoE reductions (bench/aic_efficiency_moe_fp8_block.py, aic_efficiency_moe_w4a16.py,
aic_efficiency_moe_bf16_sglang.py) share: reading one engine's AIConfigurator ``moe_perf.parquet`` per system (Hopper
unless the format names others), keeping one ``moe_dtype`` at the listed expert shapes and writing ``moe_shape`` rows
whose fraction is per-rank FLOP (2*T*k*3*h*i/moe_tp/moe_ep) / median latency / the catalog dense peak of the format's
compute precision."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aic_common import (
    BLOB_URL,
    COMMIT_095F58A,
    ENGINE_NAMES,
    MOE_SHAPE_FIELDS,
    SYSTEM_IDS,
    ExtraTable,
    data_folder,
    engine_tables,
    moe_rank_flop,
    moe_shape_row_head,
)

ROOT = Path(__file__).resolve().parents[1]
ACCELERATORS = ROOT / "src" / "aiinfra" / "catalog" / "data" / "accelerators.yaml"
READ_ON = "2026-11-26"


@dataclass(frozen=True)
class MoeFormat:
    """One weight format's reduction: which AIConfigurator rows it keeps and how its catalog rows are named."""

    id_prefix: str
    """Row ids start ``moe-<id_prefix>-``."""
    dtype: str
    """The rows' ``dtype`` (the weight format the planner names)."""
    peak_dtype: str
    """Catalog dense peak the fraction is of (the precision the GEMM computes in)."""
    moe_dtype: str
    """AIConfigurator's ``moe_dtype`` kept."""
    label: str
    """What the format is, in the rows' notes."""
    versions: dict[str, str]
    """Engine -> the AIConfigurator table (engine release) reduced."""
    shapes: dict[tuple[int, int, int, int], str]
    """(hidden, expert width, experts, top-k) -> the catalog models with that routed-expert shape."""
    header: str
    """The data file's comment header (``str.format`` with name, version, engine)."""
    systems: dict[str, str] | None = None
    """AIConfigurator systems read -> their short names in the row ids (None: H100 and H200)."""
    extra: tuple[ExtraTable, ...] = ()
    """Further tables, each for one engine (read after the systems')."""


def rows(pd: Any, data: Path, engine: str, fmt: MoeFormat) -> list[str]:
    """The catalog rows of ``engine``'s table for ``fmt``, one per system, shape and one-way expert split."""
    acc = {str(r["id"]): r for r in yaml.safe_load(ACCELERATORS.read_text())}
    out: list[str] = []
    tables = engine_tables(data, "moe", engine, fmt.versions[engine], fmt.systems, fmt.extra)
    for system, short, path, version, kernel_source in tables:
        acc_id = SYSTEM_IDS[system]
        peak = float(acc[acc_id]["dense_tflop_per_s"][fmt.peak_dtype]) * 1e12
        df = pd.read_parquet(data / path)
        df = df[(df.moe_dtype == fmt.moe_dtype) & (df.distribution == "balanced") & (df.latency > 0)]
        if kernel_source is not None:
            df = df[df.kernel_source == kernel_source]
        for (h, i, e, k), model in fmt.shapes.items():
            g = df[(df.hidden_size == h) & (df.inter_size == i) & (df.num_experts == e) & (df.topk == k)]
            for (tp, ep), sub in sorted(g.groupby(["moe_tp_size", "moe_ep_size"])):
                if tp > 1 and ep > 1:  # the planner splits experts one way: tp (ep = 1) or ep
                    continue
                lat_ms = sub.groupby("num_tokens").latency.median().sort_index()
                flop = moe_rank_flop(lat_ms.index.to_numpy(), h, i, k, tp, ep)
                eff = flop / (lat_ms.to_numpy() * 1e-3) / peak
                if len(eff) < 2 or not ((eff > 0) & (eff <= 1)).all():
                    continue
                kernel = str(sub.kernel_source.iloc[0])
                t0, l0 = int(lat_ms.index[0]), float(lat_ms.iloc[0])
                points = ", ".join(f"[{int(t)}, {float(y):.4g}]" for t, y in zip(lat_ms.index, eff, strict=True))
                url = f"{BLOB_URL.replace('/main/', f'/{COMMIT_095F58A}/')}/{path}"
                out.append(
                    "\n".join(
                        [
                            *moe_shape_row_head(
                                f"moe-{fmt.id_prefix}-{short}-h{h}-i{i}-e{e}-k{k}-tp{tp}-ep{ep}-aic-{engine}",
                                acc_id,
                                fmt.dtype,
                                (h, i, e, k, tp, ep),
                                points,
                                engine,
                            ),
                            f"    - {{title: 'ai-dynamo/aiconfigurator systems/data/{path} "
                            f"({ENGINE_NAMES[engine]} {version} fused MoE timings, NVIDIA collection; "
                            f"commit {COMMIT_095F58A[:7]})', url: '{url}', "
                            f"read_on: '{READ_ON}', fields: {MOE_SHAPE_FIELDS}}}",
                            f"  notes: 'Routed experts of {model} ({fmt.label}): {kernel}, "
                            f"{fmt.moe_dtype}, balanced routing, moe_tp {tp}, moe_ep {ep}; median latency per token "
                            f"count. Worked example: {t0} tokens -> {moe_rank_flop(t0, h, i, k, tp, ep):.4e} FLOP per "
                            f"rank in {l0:.4f} ms = {eff[0]:.4g} of the catalog {fmt.peak_dtype} peak.'",
                        ]
                    )
                )
    return out


def main(fmt: MoeFormat | dict[str, MoeFormat], doc: str) -> int:
    """The command line of a format's script: ``--engine`` and ``--data``; the YAML on stdout. ``fmt``: one format,
    or one per engine where the engines' tables keep different ``moe_dtype`` rows."""
    formats = fmt if isinstance(fmt, dict) else {engine: fmt for engine in fmt.versions}
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--engine", choices=tuple(formats), default="vllm" if "vllm" in formats else next(iter(formats)))
    ap.add_argument("--data", type=Path, default=None, help="AIConfigurator systems/data folder")
    args = ap.parse_args()
    data = data_folder(args.data)
    if data is None:
        return 0
    import pandas as pd

    chosen = formats[args.engine]
    version = chosen.versions[args.engine]
    head = chosen.header.format(name=ENGINE_NAMES[args.engine], version=version, engine=args.engine) + "".join(
        f"# Also {x.system}: {ENGINE_NAMES[x.engine]} {x.version}'s table, kernel_source {x.kernel_source} only.\n"
        for x in chosen.extra
        if x.engine == args.engine
    )
    sys.stdout.write(head + "\n".join(r + "\n" for r in rows(pd, data, args.engine, chosen)))
    return 0
