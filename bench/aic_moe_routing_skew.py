"""What a skewed expert routing costs a fused-MoE op over a balanced one, from AIConfigurator's paired timings
(issue 29; a diagnostic, docs/serving.md "Skewed expert routing: checked, not changed").

NVIDIA AIConfigurator times every engine's fused-MoE op under three routings of the same tokens: ``balanced`` (each
expert gets the same number of tokens), ``power_law_1.01`` and ``power_law_1.2`` (tokens per expert drawn from a
power law of that exponent; collector/helper.py ``power_law_logits_v3``). Its maintainers estimated, by matching
observed latency against these tables, alpha ~1.01 for DeepSeek-V3/R1 and ~1.2 for Qwen3-235B on CNN-DailyMail and
OpenOrca prompts (docs/POWER_LAW_DISTRIBUTION.md); its predictor prices DeepSeek-family models at 1.01 and its
generic MoE model at 1.2 (aic-core sdk/models/deepseek.py, moe.py). The catalog's per-shape MoE rows were reduced
from the balanced timings. For each pair of timings that differ only in routing (same system, engine, release,
kernel, weight format, shape, tokens, moe_tp, moe_ep) this prints latency(power law) / latency(balanced): per alpha,
moe_ep and token count, the median over every pair (parts, engines, releases, formats and shapes), at the token
counts most tables time. Splits that shard experts both ways (moe_tp > 1 and moe_ep > 1) are left out: the planner
splits experts one way.

Usage: PYTHONPATH=src python bench/aic_moe_routing_skew.py [--data SYSTEMS_DATA_DIR]
SYSTEMS_DATA_DIR is aiconfigurator_core's systems/data (default: the installed package's; a checkout's
aic-core/src/aiconfigurator_core/systems/data works too; the check in docs/serving.md read commit 095f58a51 of
2026-08-21). Exits 0 with a message when the data are absent. Needs pandas and pyarrow. Not imported by the package.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from aic_common import MOE_CALL_COLUMNS, data_root

ALPHAS = ("1.01", "1.2")
KEY = ["system", "engine", "release", "kernel_source", *MOE_CALL_COLUMNS]
SHOWN_TOKENS = (1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
MIN_PAIRS_FRAC = 0.5
"""A token count is shown when it has at least this share of the pairs of the group's best-timed count (the few
tables that time counts others do not would otherwise set those medians alone)."""


def load(pd: Any, data: Path) -> Any:
    """Every ``<system>/moe/<engine>/<release>/moe_perf.parquet`` under ``data`` that times a balanced routing."""
    frames = []
    for path in sorted(data.glob("*/moe/*/*/moe_perf.parquet")):
        df = pd.read_parquet(path)
        if "distribution" not in df or "balanced" not in set(df.distribution):
            continue
        rel = path.relative_to(data).parts
        frames.append(df.assign(system=rel[0], engine=rel[2], release=rel[3]))
    return pd.concat(frames) if frames else None


def ratios(pd: Any, df: Any) -> Any:
    """One row per pair: the key, alpha and latency(power law) / latency(balanced)."""
    df = df[(df.moe_tp_size == 1) | (df.moe_ep_size == 1)]
    wide = df.pivot_table(index=KEY, columns="distribution", values="latency", aggfunc="median").reset_index()
    out = []
    for alpha in ALPHAS:
        col = f"power_law_{alpha}"
        if col not in wide:
            continue
        r = wide[KEY].assign(alpha=alpha, ratio=wide[col] / wide["balanced"])
        out.append(r[(r.ratio > 0) & r.ratio.notna()])
    return pd.concat(out)


def table(pairs: Any) -> list[str]:
    """One line per (alpha, moe_ep): the median ratio at each shown token count."""
    out = [f"{'alpha':>5} {'ep':>3} {'pairs':>7}  median ratio at tokens entering the layer"]
    for (alpha, ep), g in sorted(pairs.groupby(["alpha", "moe_ep_size"]), key=lambda kv: (kv[0][0], kv[0][1])):
        stats = g.groupby("num_tokens").ratio.agg(["median", "size"])
        stats = stats[stats["size"] >= MIN_PAIRS_FRAC * stats["size"].max()].sort_index()
        shown = stats[stats.index.isin(SHOWN_TOKENS)]
        cells = " ".join(f"{int(t)}:{m:.2f}" for t, m in shown["median"].items())
        out.append(f"{alpha:>5} {int(ep):>3} {len(g):>7}  {cells}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="aiconfigurator_core systems/data directory")
    args = ap.parse_args()
    data = args.data or data_root()
    if data is None or not data.is_dir():
        print("AIConfigurator's systems/data not found (pip install aiconfigurator, or --data DIR)", file=sys.stderr)
        return 0
    try:
        import pandas as pd
    except ImportError:
        print("needs pandas and pyarrow", file=sys.stderr)
        return 0
    df = load(pd, data)
    if df is None:
        print(f"no moe_perf.parquet with a balanced routing under {data}", file=sys.stderr)
        return 0
    print("\n".join(table(ratios(pd, df))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
