"""How well the planner prices one linear layer's GEMM, checked against an engine's own measured kernel table.

For each serving engine (vLLM 0.24, TensorRT-LLM 1.3.0rc20) and weight format (bf16, fp8 per-tensor) on one part,
the planner's time for a single GEMM of m tokens through an n x k weight — the code path of every linear layer,
``InferenceModel._linear``: max(FLOP / (sustained peak x curve(FLOP)), t0 + weight bytes / B_inf) — is compared with
the latency NVIDIA AIConfigurator measured for that shape inside the engine (its gemm_perf.parquet), on the shapes of
real model layers (n and k from 1,024 to 16,384). Two pricings: the engine's lookup (what ``inference.engine`` uses;
the engine's own rows where the catalog has them) and the engine-free lookup (Vidur/DeepGEMM curves). The tables
are the ones the curves were reduced from, so this measures the reduction (FLOP-binned medians) and the roofline
form, not an independent accuracy.

Usage (needs the AIConfigurator venv: numpy, pyarrow, aiconfigurator_core):
  PYTHONPATH=src <venv>/bin/python bench/aic_gemm_fidelity.py [--accelerator nvidia-h100-sxm5-80gb]
Prints one JSON line per (engine, dtype, m): median, 10th and 90th percentile of predicted / measured - 1.
Exits 0 with a message when the data are not installed. Not imported by the package.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from aic_common import SYSTEM_IDS, data_root
from aic_efficiency_gemm import VLLM_KERNELS

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.catalog.resolve import cluster_for

VERSIONS = {"vllm": "0.24.0", "trtllm": "1.3.0rc20"}
LAYER_DIMS = (1024, 1536, 2048, 3072, 4096, 5120, 7168, 8192, 10240, 12288, 16384)
TOKENS = (1, 16, 64, 128, 256, 512, 768, 1024, 1536, 3072, 4096, 8192)  # 768, 1536, 3072: between per-M rows
PRECISION = {"bfloat16": "bf16", "fp8": "fp8"}


def measured(system: str, engine: str) -> dict[str, np.ndarray] | None:
    import pyarrow.parquet as pq

    root = data_root()
    path = root / system / "gemm" / engine / VERSIONS[engine] / "gemm_perf.parquet" if root else None
    if path is None or not path.exists():
        return None
    t = pq.read_table(path, columns=["gemm_dtype", "kernel_source", "m", "n", "k", "latency"])
    d = {c: np.asarray(t.column(c).to_pylist()) for c in t.column_names}
    if engine == "vllm":
        keep = np.array(
            [
                ks in (VLLM_KERNELS.get(g), "vllm_default")  # as the reduction keeps them
                for g, ks in zip(d["gemm_dtype"], d["kernel_source"], strict=True)
            ]
        )
        d = {c: v[keep] for c, v in d.items()}
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--accelerator", default=SYSTEM_IDS["h100_sxm"], help="catalog id of a part with AIC tables")
    args = ap.parse_args()
    if data_root() is None:
        print(
            "aiconfigurator_core is not installed (pip install aiconfigurator==0.12.0 in a separate venv)",
            file=sys.stderr,
        )
        return 0
    system = next(s for s, a in SYSTEM_IDS.items() if a == args.accelerator)
    cluster = cluster_for(args.accelerator, 1)
    model = catalog.model("meta-llama-3.1-8b")  # any model: one GEMM's price does not depend on it
    for engine in VERSIONS:
        d = measured(system, engine)
        if d is None:
            print(f"# {system}: no {engine} gemm table", file=sys.stderr)
            continue
        for aic_dtype, prec in PRECISION.items():
            pricers = {
                look: InferenceModel(model=model, cluster=cluster, weight_precision=prec, engine=look)
                for look in (engine, None)
            }
            cd = "fp8" if prec == "fp8" else "bf16"
            for m in TOKENS:
                sel = (
                    (d["gemm_dtype"] == aic_dtype)
                    & (d["m"] == m)
                    & np.isin(d["n"], LAYER_DIMS)
                    & np.isin(d["k"], LAYER_DIMS)
                )
                if not sel.any():
                    continue
                lat_s = d["latency"][sel].astype(float) * 1e-3
                out: dict[str, object] = {
                    "accelerator": args.accelerator,
                    "engine": engine,
                    "dtype": prec,
                    "m_tokens": m,
                    "shapes": int(sel.sum()),
                }
                for look, im in pricers.items():
                    pred = np.array(
                        [
                            im._linear(float(m), float(n * k), 1.0, cd, 1).time_s
                            for n, k in zip(d["n"][sel], d["k"][sel], strict=True)
                        ]
                    )
                    err = pred / lat_s - 1.0
                    p10, p50, p90 = (round(float(q), 3) for q in np.quantile(err, [0.1, 0.5, 0.9]))
                    out["engine_lookup" if look else "engine_free_lookup"] = {"median": p50, "p10": p10, "p90": p90}
                print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
