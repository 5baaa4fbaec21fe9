"""How the TensorRT-LLM v1.0 H100 throughput rows move under two modelling choices the planner does NOT make.

Run from a clean checkout (no peer tool needed): ``python bench/inference_sensitivity.py [--rows]``.
Prints one JSON line per variant with the median |error| and the share of rows within ±25 %, for all 52 rows,
the 30 dense rows and the 22 MoE rows; ``--rows`` adds every row's signed error.

* ``engine_free_curves``: the rows priced with the engine-free H100 curves of efficiency.yaml (Vidur, DeepGEMM,
  FlashAttention-3, NCCL sweeps) instead of TensorRT-LLM's own kernel timings (NVIDIA AIConfigurator,
  TensorRT-LLM 1.3.0rc, catalog/data/efficiency_aic_*.yaml rows with ``engine: trtllm``), which the planner
  prefers for a TensorRT-LLM scenario (analytic/efficiency.py). The rows were measured with TensorRT-LLM 1.0.
* ``attention_tp``: the MoE rows run without attention data parallelism (attention heads split tp ways,
  experts ep ways). The perf-overview page's MoE options file nests ``enable_attention_dp`` under
  ``cuda_graph_config``, which TensorRT-LLM's strict config model would reject, so the page does not settle
  which layout ran; the planner follows the page's evident intent (attention DP).

Neither variant is chosen by its score here: this script reports what each would do, nothing more.

``--capacity``: instead, the engine comparison of docs/examples/inference.md (10,000 users of Llama-3.1-70B on H100
or H200, vLLM vs TensorRT-LLM), first as the planner prices it, then with vLLM's FP8 GEMMs priced by the
engine-free pure-kernel curve (DeepGEMM) instead of vLLM's own per-M tables (vLLM's FP8 weight-streaming fit
unchanged): how much the engine ranking rests on which FP8 GEMM timing is believed.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from collections.abc import Callable
from pathlib import Path

from aiinfra import catalog
from aiinfra.analytic.efficiency import Curve, EfficiencyTable, _Key
from aiinfra.app.tables import domain_tables, price_book, row_tables
from aiinfra.validation import inference_rows

CSV = Path(inference_rows.__file__).parent / "data" / "inference.csv"
MOE = ("scout", "maverick", "qwen3")
WITHIN = 0.25


def _rows() -> list[dict[str, str]]:
    with CSV.open(newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["id"].startswith("trtllm-v1p0")]


def _errors(rows: list[dict[str, str]], edit: Callable[[dict[str, str]], dict[str, str]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for row in rows:
        pred = inference_rows.predict_row(edit(row), row_tables()).predicted
        if pred is not None:
            out[row["id"]] = pred / float(row["value"]) - 1.0
    return out


def _summary(name: str, errs: dict[str, float]) -> dict[str, object]:
    def part(ids: list[str]) -> dict[str, float | int]:
        a = [abs(errs[i]) for i in ids]
        return {
            "rows": len(a),
            "median_abs_error": round(statistics.median(a), 4),
            "share_within_25pct": round(sum(x <= WITHIN for x in a) / len(a), 3),
        }

    moe = [i for i in errs if any(k in i for k in MOE)]
    dense = [i for i in errs if i not in moe]
    return {"variant": name, "all": part(list(errs)), "dense": part(dense), "moe": part(moe)}


def _forget_memory_fits() -> None:
    """Drop the memory-curve fits memoised for the active catalog (they depend on the lookups patched here)."""
    from aiinfra.analytic.kernel_time import _MemoryFits

    (domain_tables().cached(_MemoryFits) or domain_tables().keep(_MemoryFits())).fits.clear()


def _price_engine_free() -> None:
    """Every efficiency lookup from here on names no engine (the engine-free curves), nothing else changes."""
    match = EfficiencyTable._match

    def no_engine(self: EfficiencyTable, key: _Key) -> tuple[Curve, int] | None:
        return match(self, (*key[:-1], None))  # the engine is the key's last field

    EfficiencyTable._match = no_engine  # type: ignore[method-assign]
    _forget_memory_fits()


def _price_vllm_fp8_gemm_engine_free() -> None:
    """vLLM's fp8 GEMM lookups name no engine (the engine-free curve); every other lookup is unchanged."""
    match = EfficiencyTable._match

    def swap(self: EfficiencyTable, key: _Key) -> tuple[Curve, int] | None:
        if key[0] == "gemm" and key[2] == "fp8" and key[-1] == "vllm":  # (kind, acc, dtype, ..., engine)
            key = (*key[:-1], None)
        return match(self, key)

    EfficiencyTable._match = swap  # type: ignore[method-assign]
    _forget_memory_fits()


def _capacity() -> None:
    from aiinfra.catalog.resolve import load_scenario
    from aiinfra.planning.capacity import plan_capacity

    example = Path(__file__).resolve().parents[1] / "examples" / "capacity-llama70b-10k-users.yaml"
    accs = ["nvidia-h100-sxm5-80gb", "nvidia-h200-sxm-141gb"]

    def best_per_engine(variant: str) -> None:
        parts = catalog.rows("accelerators")
        opts = plan_capacity(load_scenario(example), accs, ["vllm", "trtllm"], prices=price_book(), parts=parts)
        for eng in ("vllm", "trtllm"):
            o = next(x for x in opts if x.engine == eng and x.accelerators)
            print(
                json.dumps(
                    {
                        "variant": variant,
                        "engine": eng,
                        "accelerator": o.accelerator,
                        "tp": o.tp,
                        "weights": o.weight_precision,
                        "accelerators": o.accelerators,
                        "usd_per_hour": round(o.usd_per_hour or 0.0),
                    }
                )
            )

    best_per_engine("planner")
    _price_vllm_fp8_gemm_engine_free()
    best_per_engine("vllm_fp8_gemm_engine_free")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", action="store_true", help="print every row's signed error")
    ap.add_argument("--capacity", action="store_true", help="the docs' engine comparison under the FP8 swap")
    args = ap.parse_args()
    if args.capacity:
        _capacity()
        return
    rows = _rows()
    same: Callable[[dict[str, str]], dict[str, str]] = lambda r: r  # noqa: E731
    no_adp: Callable[[dict[str, str]], dict[str, str]] = lambda r: {  # noqa: E731
        **r,
        "attention_dp": "",
    }
    results = {"planner": _errors(rows, same), "attention_tp": _errors(rows, no_adp)}
    _price_engine_free()
    results["engine_free_curves"] = _errors(rows, same)
    for name, errs in results.items():
        print(json.dumps(_summary(name, errs)))
    if args.rows:
        for rid in results["planner"]:
            print(json.dumps({"id": rid, **{k: round(v[rid], 4) for k, v in results.items()}}))


if __name__ == "__main__":
    main()
