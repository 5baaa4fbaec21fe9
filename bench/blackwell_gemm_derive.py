"""Derive the Blackwell FP8 / FP4 GEMM curves of efficiency.yaml (rows ``gemm-*-derived-gb200-cublaslt``) from the one
pure-kernel size sweep measured on a Blackwell part (Azure ND GB200 v6, cuBLASLt: ``gemm-fp8-gb200-azure-cublaslt``,
``gemm-fp4-gb200-azure-cublaslt``) and NVIDIA AIConfigurator's same-harness TensorRT-LLM tables of each part
(``gemm-<dtype>-<part>-aic-trtllm``, efficiency_aic_gemm.yaml).

Each derived point is the GB200 fraction at that FLOP count times the ratio of the two parts' AIC fractions at the same
FLOP count (log-linear interpolation between AIC bins), so the level moves by what NVIDIA measured between the parts
(clock sustained under each part's power limit, FP4 tensor-core rate of Blackwell Ultra) while the shape of the curve
stays the pure-kernel one. Fractions are of each part's own catalog dense peak. The AIC op quantises its bf16
activation inside the timed call, a fixed few-µs cost that distorts the ratio of small GEMMs, so below 1e12 FLOP the
ratio at 1e12 is used (at 1e12 FLOP the quantisation is < 3 % of the op).

``python bench/blackwell_gemm_derive.py`` prints the points; the rows' notes give the worked examples."""

from __future__ import annotations

import json

import numpy as np

from aiinfra.analytic.efficiency import efficiency_rows
from aiinfra.app.tables import domain_tables

#: below this GEMM size the AIC ratio is taken at this size (activation quantisation inside the timed op)
RATIO_FLOOR_FLOP = 1e12
#: derived row -> (reference pure-kernel row on GB200, the part's AIC row, GB200's AIC row of the same dtype)
DERIVED = {
    "gemm-fp8-b200-derived-gb200-cublaslt": (
        "gemm-fp8-gb200-azure-cublaslt",
        "gemm-fp8-b200-aic-trtllm",
        "gemm-fp8-gb200-aic-trtllm",
    ),
    "gemm-fp4-b200-derived-gb200-cublaslt": (
        "gemm-fp4-gb200-azure-cublaslt",
        "gemm-nvfp4-b200-aic-trtllm",
        "gemm-nvfp4-gb200-aic-trtllm",
    ),
    "gemm-fp8-gb300-derived-gb200-cublaslt": (
        "gemm-fp8-gb200-azure-cublaslt",
        "gemm-fp8-gb300-aic-trtllm",
        "gemm-fp8-gb200-aic-trtllm",
    ),
    "gemm-fp4-gb300-derived-gb200-cublaslt": (
        "gemm-fp4-gb200-azure-cublaslt",
        "gemm-nvfp4-gb300-aic-trtllm",
        "gemm-nvfp4-gb200-aic-trtllm",
    ),
    "gemm-fp8-b300-derived-gb200-cublaslt": (
        "gemm-fp8-gb200-azure-cublaslt",
        "gemm-fp8-b300-aic-trtllm",
        "gemm-fp8-gb200-aic-trtllm",
    ),
    "gemm-fp4-b300-derived-gb200-cublaslt": (
        "gemm-fp4-gb200-azure-cublaslt",
        "gemm-nvfp4-b300-aic-trtllm",
        "gemm-nvfp4-gb200-aic-trtllm",
    ),
}


def _interp(points: list[list[float]], x: float) -> float:
    lx = np.log10([p[0] for p in points])
    return float(np.interp(np.log10(x), lx, [p[1] for p in points]))


def same_harness_ratio(part_points: list[list[float]], gb200_points: list[list[float]], flop: float) -> float:
    """The part's AIC fraction over GB200's at ``flop`` (taken at RATIO_FLOOR_FLOP below it)."""
    x = max(flop, RATIO_FLOOR_FLOP)
    return _interp(part_points, x) / _interp(gb200_points, x)


def derive(ref: list[list[float]], part: list[list[float]], gb200: list[list[float]]) -> list[list[float]]:
    return [[x, round(e * same_harness_ratio(part, gb200, x), 4)] for x, e in ref]


def main() -> None:
    rows = {str(r["id"]): r for r in efficiency_rows(domain_tables())}
    out = {}
    for new_id, (ref, part, gb) in DERIVED.items():
        pts = derive(rows[ref]["points"], rows[part]["points"], rows[gb]["points"])
        ratios = [round(same_harness_ratio(rows[part]["points"], rows[gb]["points"], x), 4) for x, _ in pts]
        out[new_id] = {"points": pts, "ratios": ratios}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
