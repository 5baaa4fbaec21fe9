"""Reduce NVIDIA AIConfigurator's measured TensorRT-LLM, vLLM or SGLang GEMM timings to efficiency-curve rows (kinds
gemm, memory).

Source: the ``gemm_perf.parquet`` tables that AIConfigurator 0.12.0 ships in its companion package
``aiconfigurator_core`` (systems/data/<system>/gemm/<engine>/<version>/), Apache-2.0, NVIDIA's own collection:
one latency (ms, CUDA-graph replay of the engine's linear layer: TensorRT-LLM's ``Linear.forward``, vLLM's
``RowParallelLinear.forward``, SGLang's ``F.linear`` / sgl-kernel ``fp8_scaled_mm``) per (gemm_dtype, m, n, k). The
SGLang tables are read from an AIConfigurator checkout at commit 095f58a (``--data``: its
aic-core/src/aiconfigurator_core/systems/data), the Hopper and Ampere parts and the B200.

Reduction (the same as the gemm-bf16-h100-vidur and memory-h100-vidur-gemv rows of efficiency.yaml):
  gemm   x = 2*m*n*k; fraction = x / latency / catalog dense peak of the dtype; only compute-bound shapes
         (2mnk / (b*(mk + kn) + 2mn) above the catalog ridge peak / memory bandwidth, b = input bytes per element);
         each point is the median of the shapes within +-1/4 decade of 10^(j/2), kept where >= 10 shapes fall.
  memory bf16 shapes with m <= 16; x = 2*(mk + kn + mn) bytes; fraction = x / latency / catalog memory bandwidth;
         median within +-1/8 decade of the memory-h100-vidur-gemv x points (10^6.75 ... 10^9), >= 5 shapes.
         Shapes whose weights the collector could keep in L2 are dropped: every shape with weight bytes at or
         below the largest weight of any shape that ran faster than the catalog DRAM bandwidth (only GDDR parts
         have such shapes).

Usage (needs numpy, pyarrow and aiconfigurator_core, e.g. a venv with ``pip install aiconfigurator==0.12.0``):
  PYTHONPATH=src <venv>/bin/python bench/aic_efficiency_gemm.py > src/aiinfra/catalog/data/efficiency_aic_gemm.yaml
  PYTHONPATH=src <venv>/bin/python bench/aic_efficiency_gemm.py --engine vllm \
      > src/aiinfra/catalog/data/efficiency_aic_gemm_vllm.yaml
Per-M curves (``--by-m``, one file per engine): the same tables reduced one GEMM row count M at a time, for the
planner's lookups that give M (every linear layer's tokens; analytic/efficiency.py):
  PYTHONPATH=src <venv>/bin/python bench/aic_efficiency_gemm.py --by-m [--engine vllm] \
      > src/aiinfra/catalog/data/efficiency_aic_gemm_by_m_<engine>.yaml
  PYTHONPATH=src <venv>/bin/python bench/aic_efficiency_gemm.py [--by-m] --engine sglang --data DATA \
      > src/aiinfra/catalog/data/efficiency_aic_gemm[_by_m]_sglang.yaml
Every vLLM (SGLang) row is ``cross_check: true`` with ``engine: vllm`` (``sglang``): it serves lookups naming that
engine only, so the engine-free and TensorRT-LLM lookups (and training) keep the curves they had.
Prints the YAML rows on stdout and, on stderr, each row's bins, the memory fit t = t0 + bytes/B_inf the planner
makes (analytic/inference.py memory_fit_through_ends), and the planner's value before (efficiency.yaml alone) and after.
Exits 0 with a message when the data are not installed. Not imported by the package.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from aic_common import COMMIT_095F58A, READ_ON, SGLANG_SYSTEMS, SYSTEM_IDS, TREE_URL, data_root

from aiinfra.analytic.kernel_time import memory_fit_through_ends

COLLECTOR = (
    "ai-dynamo/aiconfigurator collector/trtllm/collect_gemm.py and collector/helper.py benchmark_with_power "
    "(method only): TensorRT-LLM Linear(k, n).forward on a bf16 input of m rows (fp8: per-tensor FP8 with the "
    "activation quantised inside the op; nvfp4: NVFP4 block-scaled, activation quantised inside the op), "
    "3 warm-ups, CUDA-graph capture, 6 timed replays, latency_ms = elapsed / runs; weights smaller than L2 are "
    "replicated (up to 5 copies) so the replays span more than L2"
)
COLLECTOR_URL = (
    "https://github.com/ai-dynamo/aiconfigurator/blob/000959092f861ea599e6a94ad85e9bc4be11bc3f/"
    "collector/trtllm/collect_gemm.py"
)

VLLM_COLLECTOR = (
    "ai-dynamo/aiconfigurator collector/vllm/collect_gemm.py and collector/helper.py benchmark_with_power "
    "(method only): vLLM RowParallelLinear(k, n).forward (tp disabled) on a bf16 input of m rows (fp8: "
    "Fp8Config with a static per-tensor activation scale, the activation quantised inside the op), 6 copies of "
    "the layer per replay so the weights span more than L2, 3 warm-ups, CUDA-graph capture, 6 timed replays, "
    "latency = elapsed / runs / 6"
)
VLLM_COLLECTOR_URL = (
    "https://github.com/ai-dynamo/aiconfigurator/blob/3f82c6b20a873005ce782f9fe8bb54694d31e147/"
    "collector/vllm/collect_gemm.py"
)
#: the kernel each vLLM 0.24 table names for the dtypes reduced (fp8_block rows are not reduced here: the
#: planner scales the per-tensor FP8 time by bench/aic_efficiency_gemm_fp8_block.py's ratio for those checkpoints)
VLLM_KERNELS = {"bfloat16": "torch.nn.functional.linear", "fp8": "CutlassFP8ScaledMMLinearKernel"}

SGLANG_COLLECTOR = (
    "ai-dynamo/aiconfigurator collector/sglang/collect_gemm.py and collector/helper.py benchmark_with_power "
    "(method only): SGLang's dense linear paths on a bf16 input of m rows (bf16: torch.nn.functional.linear; fp8: "
    "sgl-kernel sgl_per_token_quant_fp8 then fp8_scaled_mm with per-channel weight scales, the activation "
    "quantised inside the op), up to 6 copies of the op per replay (as many as 45 % of device memory holds) so the "
    "weights span more than L2, 3 warm-ups, CUDA-graph capture, 6 timed replays, latency = elapsed / runs / copies"
)
SGLANG_COLLECTOR_URL = (
    "https://github.com/ai-dynamo/aiconfigurator/blob/e23be5a79438356de7d8ff9cd4bec38ccb1f4670/"
    "collector/sglang/collect_gemm.py"
)
#: the kernel each SGLang 0.5.14 table names for the dtypes reduced (older tables name ``sglang`` only)
SGLANG_KERNELS = {"bfloat16": "sglang_torch_linear", "fp8": "sglang_sgl_kernel_fp8_scaled_mm"}

# AIConfigurator dtype -> (row dtype, input bytes per element)
DTYPES: dict[str, tuple[str, float]] = {"bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0), "nvfp4": ("nvfp4", 0.5)}
PEAK_KEY = {"bf16": "bf16", "fp8": "fp8", "nvfp4": "fp4"}
MEMORY_X = [10 ** (6.75 + 0.25 * i) for i in range(10)]  # 5.623e6 ... 1e9, as memory-h100-vidur-gemv
GEMM_MIN_SHAPES, MEMORY_MIN_SHAPES = 10, 5


@dataclass(frozen=True)
class Part:
    system: str
    acc_id: str
    short: str
    cross_check: dict[str, str]
    """row key ('memory' or a row dtype) -> why the row is a cross_check (kept, not used by the planner)."""


H100_MAIN = "the validated part keeps its main-file measured curve"
#: FP8 weight streaming measured inside one engine's quantised op (its fixed cost included): a lookup naming that
#: engine for FP8 weights takes it; every other lookup keeps the part's bf16 weight-streaming curve
FP8_MEMORY = "FP8 weights streamed by this engine's quantised op; other lookups keep the bf16 streaming curve"
#: the timed op includes TensorRT-LLM's activation quantisation; where a same-generation pure-kernel curve exists,
#: the planner keeps it (lead's decision, efficiency_sources.md)
QUANT_IN_OP = "activation quantisation inside the timed op; the same-generation pure-kernel curve is used"
PARTS = [
    Part(
        "h100_sxm",
        SYSTEM_IDS["h100_sxm"],
        "h100",
        {
            "bf16": "gemm-bf16-h100-vidur is used; " + H100_MAIN,
            "fp8": "gemm-fp8-h100-deepgemm is used; " + H100_MAIN,
            "memory": "memory-h100-vidur-gemv is used; " + H100_MAIN,
        },
    ),
    Part(
        "h200_sxm",
        SYSTEM_IDS["h200_sxm"],
        "h200",
        {
            "bf16": "gemm-bf16-h100-vidur lists H200 (same GH100 die) and is used; " + H100_MAIN,
            "fp8": "gemm-fp8-h100-deepgemm lists H200 (same GH100 die) and is used; " + H100_MAIN,
        },
    ),
    Part(
        "b200_sxm",
        SYSTEM_IDS["b200_sxm"],
        "b200",
        {
            "bf16": "gemm-bf16-b200-xla (main file, measured) wins the tie",
            "fp8": "gemm-fp8-b200-derived-gb200-cublaslt (main file) wins the tie",
            "nvfp4": QUANT_IN_OP,
        },
    ),
    Part(
        "gb200",
        SYSTEM_IDS["gb200"],
        "gb200",
        {
            "fp8": "gemm-fp8-gb200-azure-cublaslt (main file, measured) wins the tie",
            "nvfp4": "gemm-fp4-gb200-azure-cublaslt (main file, measured) wins the tie",
        },
    ),
    Part("b300_sxm", SYSTEM_IDS["b300_sxm"], "b300", {"fp8": QUANT_IN_OP, "nvfp4": QUANT_IN_OP}),
    Part("gb300", SYSTEM_IDS["gb300"], "gb300", {"fp8": QUANT_IN_OP, "nvfp4": QUANT_IN_OP}),
    Part("l40s", SYSTEM_IDS["l40s"], "l40s", {}),
    Part("rtx_pro_6000_server", SYSTEM_IDS["rtx_pro_6000_server"], "rtx-pro-6000", {}),
    Part(
        "a100_sxm",
        SYSTEM_IDS["a100_sxm"],
        "a100",
        {
            "bf16": "gemm-bf16-a100-vidur (main file, measured) wins the tie",
            "memory": "memory-a100-vidur-gemv (main file, measured) wins the tie",
        },
    ),
]

VLLM_ONLY = "vLLM's own op: serves lookups naming engine vllm only; the other lookups keep their curves"
#: the same parts as TensorRT-LLM's; every row serves engine vllm only
VLLM_PARTS = [
    Part(p.system, p.acc_id, p.short, dict.fromkeys(("bf16", "fp8", "nvfp4", "memory"), VLLM_ONLY)) for p in PARTS
]
SGLANG_ONLY = "SGLang's own op: serves lookups naming engine sglang only; the other lookups keep their curves"
#: the SGLANG_SYSTEMS parts; every row serves engine sglang only
SGLANG_PARTS = [
    Part(p.system, p.acc_id, p.short, dict.fromkeys(("bf16", "fp8", "memory"), SGLANG_ONLY))
    for p in PARTS
    if p.system in SGLANG_SYSTEMS
]


@dataclass(frozen=True)
class Engine:
    key: str
    label: str
    collector: str
    collector_url: str
    parts: list[Part]
    kernels: dict[str, str]
    """AIConfigurator dtype -> the kernel_source kept (empty: the table names one kernel per dtype)."""
    legacy_kernel: str = ""
    """the one kernel_source older tables of the engine name for every dtype (kept too)"""
    quant: str = "dynamic per-tensor FP8"
    """how the engine's FP8 op quantises the bf16 activation (notes)"""
    release: str = "0.12.0"
    """the AIConfigurator release (or commit) the tables are read from"""
    tree_url: str = TREE_URL
    read_on: str = READ_ON


ENGINES = {
    "trtllm": Engine("trtllm", "TensorRT-LLM", COLLECTOR, COLLECTOR_URL, PARTS, {}),
    "vllm": Engine(
        "vllm",
        "vLLM",
        VLLM_COLLECTOR,
        VLLM_COLLECTOR_URL,
        VLLM_PARTS,
        VLLM_KERNELS,
        legacy_kernel="vllm_default",
        quant="static per-tensor FP8",
    ),
    "sglang": Engine(
        "sglang",
        "SGLang",
        SGLANG_COLLECTOR,
        SGLANG_COLLECTOR_URL,
        SGLANG_PARTS,
        SGLANG_KERNELS,
        legacy_kernel="sglang",
        quant="dynamic per-token FP8, per-channel weight scales",
        release=f"commit {COMMIT_095F58A[:7]}",
        tree_url=TREE_URL.replace("/main/", f"/{COMMIT_095F58A}/"),
        read_on="2026-11-26",
    ),
}
ENGINE = ENGINES["trtllm"]
"""The engine being reduced (set by main from --engine)."""


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(t) for t in "".join(c if c.isdigit() else " " for c in name).split())


def table_path(root: Path, system: str) -> Path | None:
    """Newest version directory of the engine that holds its own gemm_perf.parquet (newer ones may only declare
    reuse)."""
    base = root / system / "gemm" / ENGINE.key
    if not base.is_dir():
        return None
    found = [p / "gemm_perf.parquet" for p in base.iterdir() if (p / "gemm_perf.parquet").exists()]
    return max(found, key=lambda p: _version_key(p.parent.name)) if found else None


def load(path: Path) -> dict[str, np.ndarray]:
    import pyarrow.parquet as pq

    cols = ["gemm_dtype", "m", "n", "k", "latency"] + (["kernel_source"] if ENGINE.kernels else [])
    t = pq.read_table(path, columns=cols)
    d = {c: np.asarray(t.column(c).to_pylist()) for c in t.column_names}
    if ENGINE.kernels:  # keep each dtype's named kernel only
        keep = np.array(
            [
                ks in (ENGINE.kernels.get(g), ENGINE.legacy_kernel)  # older tables name no kernel
                for g, ks in zip(d["gemm_dtype"], d["kernel_source"], strict=True)
            ]
        )
        d = {c: v[keep] for c, v in d.items() if c != "kernel_source"}
    return d


def fmt_x(x: float) -> float:
    return float(f"{x:.4e}")


@dataclass(frozen=True)
class Bin:
    x: float
    median: float
    n: int
    q25: float
    q75: float
    members: np.ndarray
    """indices (into the arrays binned) of the shapes in the bin"""

    def text(self) -> str:
        return f"{self.x:.4e}: n={self.n}, IQR {self.q25:.3f}-{self.q75:.3f}"


def _bins(values: np.ndarray, frac: np.ndarray, centres: list[float], half_decade: float, min_n: int) -> list[Bin]:
    out = []
    lv = np.log10(values)
    for c in centres:
        sel = (lv >= math.log10(c) - half_decade) & (lv < math.log10(c) + half_decade)
        if int(sel.sum()) >= min_n:
            f = frac[sel]
            q25, q75 = (float(q) for q in np.quantile(f, [0.25, 0.75]))
            out.append(Bin(c, float(np.median(f)), int(sel.sum()), q25, q75, np.flatnonzero(sel)))
    return out


def _example(idx: np.ndarray, frac: np.ndarray, target: float) -> int:
    """The shape of the bin whose fraction is nearest the bin median (the worked example)."""
    return int(idx[np.argmin(np.abs(frac[idx] - target))])


def _floor_us(d: dict[str, np.ndarray], aic_dtype: str) -> float | None:
    """Latency (us) of the smallest shape measured for every dtype, m=1, n=k=128: the op's fixed time."""
    s = (d["gemm_dtype"] == aic_dtype) & (d["m"] == 1) & (d["n"] == 128) & (d["k"] == 128)
    return float(d["latency"][s][0]) * 1e3 if s.any() else None


def gemm_row(part: Part, path: Path, d: dict[str, np.ndarray], aic_dtype: str, peak: float, bw: float) -> Any:
    dtype, nbytes = DTYPES[aic_dtype]
    s = d["gemm_dtype"] == aic_dtype
    m, n, k, lat_ms = (d[c][s].astype(float) for c in ("m", "n", "k", "latency"))
    flop = 2.0 * m * n * k
    moved = nbytes * (m * k + k * n) + 2.0 * m * n
    frac = flop / (lat_ms * 1e-3) / peak
    ridge = peak / bw
    cb = flop / moved > ridge
    centres = [10 ** (j / 2) for j in range(16, 31)]
    bins = _bins(flop[cb], frac[cb], centres, 0.25, GEMM_MIN_SHAPES)
    if not bins:
        return None
    cm, cn, ck, cl, cf = m[cb], n[cb], k[cb], lat_ms[cb], frac[cb]
    ex_bin = min(bins, key=lambda b: abs(math.log10(b.x) - 12))
    i = _example(ex_bin.members, cf, ex_bin.median)
    ex_flop = 2 * cm[i] * cn[i] * ck[i]
    bin_text = "; ".join(b.text() for b in bins)
    peak_t = peak / 1e12
    floor, floor_bf16 = _floor_us(d, aic_dtype), _floor_us(d, "bfloat16")
    quant = ""
    if aic_dtype != "bfloat16" and floor is not None and floor_bf16 is not None:
        quant = (
            f" CAVEAT: the timed op includes {ENGINE.label}'s quantisation of the bf16 activation "
            f"({_quant_text(aic_dtype)}), "
            f"so it has a fixed time the GEMM kernel alone does not: m=1, n=k=128 takes {floor:.1f} us "
            f"(bf16 {floor_bf16:.1f} us). Below ~1e11 FLOP that floor, not the tensor cores, sets the fraction, "
            "so this curve sits well under pure-kernel measurements there (cuBLASLt/DeepGEMM/XLA rows)."
        )
    notes = (
        f"gemm_dtype {aic_dtype}{_kernel_text(aic_dtype)} of the {ENGINE.label} {path.parent.name} table "
        f"({int(s.sum())} shapes, "
        f"m 1-{int(m.max())}). Method (as gemm-bf16-h100-vidur): x = 2*m*n*k; fraction = x / latency / "
        f"{peak_t:g} TFLOP/s (catalog dense {PEAK_KEY[dtype]} peak); only compute-bound shapes, 2mnk / "
        f"({nbytes:g}*(mk + kn) + 2mn) above the ridge {peak_t:g}/{bw / 1e12:g} = {ridge:.0f} FLOP/byte "
        f"({int(cb.sum())} shapes); each point = median of the shapes within +-1/4 decade of x (>= "
        f"{GEMM_MIN_SHAPES} shapes). Bins: {bin_text}. Worked example: m={int(cm[i])}, n={int(cn[i])}, "
        f"k={int(ck[i])} -> {ex_flop:.4e} FLOP in {cl[i]:.4f} ms = {ex_flop / cl[i] / 1e9:.1f} TFLOP/s = "
        f"{cf[i]:.4f} of {peak_t:g} (bin median {ex_bin.median:.4f}). Largest measured {flop[cb].max():.3e} FLOP."
        + quant
    )
    return dtype, bins, notes


def memory_row(part: Part, path: Path, d: dict[str, np.ndarray], bw: float, aic_dtype: str = "bfloat16") -> Any:
    """Weight streaming (m <= 16) of ``aic_dtype`` weights: bf16 (every engine) or fp8 (the quantised op)."""
    wb = DTYPES[aic_dtype][1]  # weight bytes per element; activations in and out stay bf16
    s = (d["gemm_dtype"] == aic_dtype) & (d["m"] <= 16)
    if not s.any():
        return None
    m, n, k, lat_ms = (d[c][s].astype(float) for c in ("m", "n", "k", "latency"))
    moved = 2.0 * (m * k + m * n) + wb * k * n
    weight = wb * k * n
    frac = moved / (lat_ms * 1e-3) / bw
    over = frac > 1.0
    w_cut = float(weight[over].max()) if over.any() else 0.0
    keep = weight > w_cut
    bins = _bins(moved[keep], frac[keep], MEMORY_X, 0.125, MEMORY_MIN_SHAPES)
    if not bins:
        return None
    km, kn, kk, kl, kf = m[keep], n[keep], k[keep], lat_ms[keep], frac[keep]
    ex_bin = bins[-1]
    ones = ex_bin.members[km[ex_bin.members] == 1]
    i = _example(ones if ones.size else ex_bin.members, kf, ex_bin.median)
    ex_bytes = 2.0 * (km[i] * kk[i] + km[i] * kn[i]) + wb * kk[i] * kn[i]
    bin_text = "; ".join(b.text() for b in bins)
    l2_text = (
        f"{int(over.sum())} shapes ran faster than the {bw / 1e12:g} TB/s DRAM bandwidth (weights held in L2 across "
        f"the collector's repeated replays), the largest with {w_cut:.3e} weight bytes, so every shape with at most "
        f"that many weight bytes is dropped ({int((~keep).sum())} of {int(s.sum())}); below the first point the "
        "planner clamps (no small-kernel fixed cost: optimistic for kernels under ~2e8 bytes)."
        if over.any()
        else f"No shape exceeded the {bw / 1e12:g} TB/s catalog bandwidth, so none is dropped as L2-resident."
    )
    if aic_dtype == "bfloat16":
        what, formula = "bf16 shapes", "bytes = 2*(m*k + k*n + m*n)"
    else:
        what = f"{DTYPES[aic_dtype][0]} shapes ({_quant_text(aic_dtype)}, activation quantised inside the op)"
        formula = f"bytes = 2*(m*k + m*n) + {wb:g}*k*n (weights {wb:g} B, bf16 activations in and out)"
    notes = (
        f"{what} with m <= 16 (GEMV-like weight streaming){_kernel_text(aic_dtype)} of the {ENGINE.label} "
        f"{path.parent.name} table. "
        f"Method (as memory-h100-vidur-gemv): {formula}, fraction = bytes / latency / "
        f"{bw / 1e12:g} TB/s (catalog); median within +-1/8 decade of x (>= {MEMORY_MIN_SHAPES} shapes). {l2_text} "
        f"Bins: {bin_text}. Worked example: m={int(km[i])}, n={int(kn[i])}, k={int(kk[i])} -> {ex_bytes:.4e} bytes "
        f"in {kl[i]:.4f} ms = {ex_bytes / kl[i] / 1e9:.1f} TB/s = {kf[i]:.4f} (bin median {ex_bin.median:.4f}). "
        "CUDA-graph replay: no launch gaps between kernels, so the small-size fall-off is the kernel's own fixed "
        "time (a bit lower than eager launches)."
    )
    return bins, notes


def _quant_text(aic_dtype: str) -> str:
    if aic_dtype == "nvfp4":
        return "NVFP4 with 16-element block scales"
    return ENGINE.quant


def _kernel_text(aic_dtype: str) -> str:
    return f" (kernel {ENGINE.kernels[aic_dtype]})" if aic_dtype in ENGINE.kernels else ""


def memory_fit(points: list[list[float]], bw: float) -> tuple[float, float]:
    """The planner's t = t0 + bytes / B_inf through the curve's ends."""
    (x0, y0), (x1, y1) = points[0], points[-1]
    return memory_fit_through_ends(x0, y0, x1, y1, bw, max(y for _, y in points))


def source(part: Part, path: Path) -> list[dict[str, Any]]:
    rel = f"{part.system}/gemm/{ENGINE.key}/{path.parent.name}"
    fields = ["gemm_dtype", "m", "n", "k", "latency"] + (["kernel_source"] if ENGINE.kernels else [])
    return [
        {
            "title": f"ai-dynamo/aiconfigurator {ENGINE.release} systems/data/{rel}/gemm_perf.parquet "
            f"({ENGINE.label} {path.parent.name} kernel timings, NVIDIA collection)",
            "url": f"{ENGINE.tree_url}/{rel}",
            "read_on": ENGINE.read_on,
            "fields": fields,
        },
        {
            "title": ENGINE.collector,
            "url": ENGINE.collector_url,
            "read_on": ENGINE.read_on,
            "fields": ["run_gemm", "benchmark_with_power"],
        },
    ]


def row(
    rid: str, kind: str, part: Part, dtype: str | None, x_text: str, bins: list[Bin], notes: str, path: Path, key: str
) -> dict[str, Any]:
    r: dict[str, Any] = {"id": rid, "kind": kind, "accelerators": [part.acc_id]}
    if dtype:
        r["dtype"] = dtype
    r["x"] = x_text
    r["points"] = [[fmt_x(b.x), round(b.median, 4)] for b in bins]
    r["provenance"] = "measured"
    r["engine"] = ENGINE.key  # the engine's own GEMM op: preferred by its lookups, cross_check or not
    if key in part.cross_check:
        r["cross_check"] = True
        if ENGINE.key == "trtllm" and key not in ("memory_fp8", "gemm_m"):
            notes = f"CROSS-CHECK ONLY (not used by the planner: {part.cross_check[key]}). " + notes
        else:
            notes = f"ENGINE {ENGINE.key} ONLY ({part.cross_check[key]}). " + notes
    r["sources"] = source(part, path)
    r["notes"] = notes
    return r


def _tables(root: Path) -> Iterator[tuple[Part, Path, Any, dict[str, np.ndarray], list[tuple[str, float]]]]:
    """(part, table path, catalog accelerator, table, [(AIC dtype, catalog peak)]) of every part of the engine
    with a table; dtypes the table has and the catalog gives a peak for."""
    from aiinfra.catalog import accelerator

    for part in ENGINE.parts:
        path = table_path(root, part.system)
        if path is None:
            print(f"# {part.system}: no {ENGINE.key} gemm_perf.parquet", file=sys.stderr)
            continue
        acc = accelerator(part.acc_id)
        d = load(path)
        peaks = []
        for aic_dtype, (dtype, _) in DTYPES.items():
            peak = acc.dense_flop_per_s.get(PEAK_KEY[dtype])
            if peak is None and (d["gemm_dtype"] == aic_dtype).any():
                print(f"# {part.acc_id}: no catalog {PEAK_KEY[dtype]} peak, {aic_dtype} skipped", file=sys.stderr)
            elif peak is not None and (d["gemm_dtype"] == aic_dtype).any():
                peaks.append((aic_dtype, float(peak)))
        yield part, path, acc, d, peaks


def build(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for part, path, acc, d, peaks in _tables(root):
        bw = acc.memory_bw_bytes_per_s
        for aic_dtype, peak in peaks:
            dtype = DTYPES[aic_dtype][0]
            got = gemm_row(part, path, d, aic_dtype, peak, bw)
            if got is None:
                continue
            _, bins, notes = got
            rid = f"gemm-{dtype}-{part.short}-aic-{ENGINE.key}"
            rows.append(row(rid, "gemm", part, dtype, "flop per GEMM (2*M*N*K)", bins, notes, path, dtype))
        got_mem = memory_row(part, path, d, bw)
        if got_mem is None:
            print(f"# {part.system}: no memory bin with >= {MEMORY_MIN_SHAPES} shapes", file=sys.stderr)
            continue
        bins, notes = got_mem
        rows.append(_memory(part, path, bins, notes, bw, None))
        got_fp8 = memory_row(part, path, d, bw, "fp8")
        if got_fp8 is not None:  # the FP8 op's own weight streaming: serves FP8 lookups of this engine only
            rows.append(_memory(part, path, *got_fp8, bw, "fp8"))
    return rows


def _memory(part: Part, path: Path, bins: list[Bin], notes: str, bw: float, dtype: str | None) -> dict[str, Any]:
    key = "memory" if dtype is None else "memory_fp8"
    cc_part = part if dtype is None else replace(part, cross_check={**part.cross_check, key: FP8_MEMORY})
    rid = (
        f"memory-{part.short}-aic-{ENGINE.key}-gemv"
        if dtype is None
        else f"memory-{dtype}-{part.short}-aic-{ENGINE.key}-gemv"
    )
    r = row(
        rid, "memory", cc_part, dtype, "bytes moved per kernel (weights + activations in + out)", bins, notes, path, key
    )
    t0, b_inf = memory_fit(r["points"], bw)
    r["notes"] += (
        f" Planner fit through the ends (t = t0 + bytes/B_inf): t0 = {t0 * 1e6:.2f} us, "
        f"B_inf = {b_inf / 1e12:.3f} TB/s = {b_inf / bw:.3f} of {bw / 1e12:g}."
    )
    return r


#: the row counts reduced one at a time (those present in a table; the tables sweep m = 1 ... 32768)
M_BUCKETS = (1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
#: linear layers of the catalog's models sharded up to 8 ways have n, k >= 256 (hidden 2048 / 8)
M_MIN_DIM = 256
M_MIN_SHAPES = 5
PER_M = "a per-M curve: used only by lookups naming this engine and giving the GEMM's row count"


def gemm_rows_by_m(part: Part, path: Path, d: dict[str, np.ndarray], aic_dtype: str, peak: float) -> list[Any]:
    """One row per M of ``M_BUCKETS``: x = 2*M*n*k over the shapes with that M (n, k >= M_MIN_DIM), fraction =
    x / latency / peak, median within +-1/4 decade of centres every 1/4 decade (>= M_MIN_SHAPES shapes). No
    compute-bound filter: at a fixed M the curve carries the kernel's own time, memory-bound shapes included, and
    the planner's weight-streaming fit stays a floor under it."""
    dtype = DTYPES[aic_dtype][0]
    cc_part = replace(part, cross_check={**part.cross_check, "gemm_m": PER_M})
    out = []
    for mb in M_BUCKETS:
        s = (d["gemm_dtype"] == aic_dtype) & (d["m"] == mb) & (d["n"] >= M_MIN_DIM) & (d["k"] >= M_MIN_DIM)
        if not s.any():
            continue
        n, k, lat_ms = (d[c][s].astype(float) for c in ("n", "k", "latency"))
        flop = 2.0 * mb * n * k
        frac = flop / (lat_ms * 1e-3) / peak
        bins = _bins(flop, frac, [10 ** (j / 4) for j in range(20, 61)], 0.25, M_MIN_SHAPES)
        if not bins:
            continue
        ex_bin = max(bins, key=lambda b: b.n)
        i = _example(ex_bin.members, frac, ex_bin.median)
        notes = (
            f"gemm_dtype {aic_dtype}{_kernel_text(aic_dtype)}, m = {mb}, of the {ENGINE.label} {path.parent.name} "
            f"table: {int(s.sum())} shapes with n, k >= {M_MIN_DIM}. x = 2*m*n*k; fraction = x / latency / "
            f"{peak / 1e12:g} TFLOP/s (catalog dense {PEAK_KEY[dtype]} peak); median within +-1/4 decade of "
            f"centres every 1/4 decade (>= {M_MIN_SHAPES} shapes); no compute-bound filter (at fixed m the curve "
            f"carries the kernel's time). Shapes per point: {', '.join(str(b.n) for b in bins)}. "
            f"Worked example: m={mb}, "
            f"n={int(n[i])}, k={int(k[i])} -> {flop[i]:.4e} FLOP in {lat_ms[i]:.4f} ms = "
            f"{flop[i] / lat_ms[i] / 1e9:.1f} TFLOP/s = {frac[i]:.4f} (bin median {ex_bin.median:.4f})."
        )
        r = row(
            f"gemm-{dtype}-{part.short}-aic-{ENGINE.key}-m{mb}",
            "gemm",
            cc_part,
            dtype,
            "flop per GEMM (2*M*N*K) at the row's M",
            bins,
            notes,
            path,
            "gemm_m",
        )
        r["m_tokens"] = mb
        r["points"] = [[fmt_x(b.x), float(f"{b.median:.4g}")] for b in bins]  # small-M fractions are ~1e-4
        out.append(r)
    return out


def build_by_m(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for part, path, _, d, peaks in _tables(root):
        for aic_dtype, peak in peaks:
            rows.extend(gemm_rows_by_m(part, path, d, aic_dtype, peak))
    return rows


def compare(rows: list[dict[str, Any]]) -> None:
    """stderr: each row's values vs the curve the planner used from efficiency.yaml alone."""
    from aiinfra.analytic.efficiency import EfficiencyTable, _curve, parts_of
    from aiinfra.app.tables import domain_tables
    from aiinfra.catalog import data_path

    main = [r for r in yaml.safe_load(data_path("efficiency.yaml").read_text()) if not r.get("cross_check")]
    parts = parts_of(domain_tables().accelerators())
    before = EfficiencyTable([_curve(r) for r in main if r.get("points")], parts=parts)
    for r in rows:
        c = _curve(r)
        xs = [1e10, 1e11, 1e12] if r["kind"] == "gemm" else [1e7, 1e8, 1e9]
        acc = r["accelerators"][0]
        old = [before.lookup(r["kind"], acc, x, dtype=r.get("dtype")) for x in xs]
        vals = ", ".join(f"{x:.0e}: {c.at(x):.3f} (was {o.frac:.3f})" for x, o in zip(xs, old, strict=True))
        tag = " [cross_check]" if r.get("cross_check") else ""
        print(f"# {r['id']}{tag}: {vals}; before: {old[0].source}", file=sys.stderr)


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def emit(r: dict[str, Any]) -> str:
    """One row in efficiency.yaml's layout (flow-style lists, one source per line)."""
    pts = ", ".join(f"[{x:.4e}, {y:g}]" for x, y in r["points"])
    lines = [f"- id: {r['id']}", f"  kind: {r['kind']}", f"  accelerators: [{', '.join(r['accelerators'])}]"]
    if r.get("dtype"):
        lines.append(f"  dtype: {r['dtype']}")
    if r.get("m_tokens"):
        lines.append(f"  m_tokens: {r['m_tokens']}")
    lines += [
        f"  x: {_q(r['x'])}",
        f"  points: [{pts}]",
        f"  provenance: {r['provenance']}",
        f"  engine: {r['engine']}",
    ]
    if r.get("cross_check"):
        lines.append("  cross_check: true")
    lines.append("  sources:")
    for s in r["sources"]:
        lines.append(
            f"    - {{title: {_q(s['title'])}, url: {_q(s['url'])}, read_on: {_q(s['read_on'])}, "
            f"fields: [{', '.join(s['fields'])}]}}"
        )
    lines.append(f"  notes: {_q(r['notes'])}")
    return "\n".join(lines) + "\n"


HEADER = """\
# Efficiency curves reduced from NVIDIA AIConfigurator 0.12.0's measured TensorRT-LLM GEMM timings
# (aiconfigurator_core systems/data/<system>/gemm/trtllm/<version>/gemm_perf.parquet; NVIDIA's own collection).
# Generated by bench/aic_efficiency_gemm.py; format and x semantics as efficiency.yaml (kinds gemm and memory).
# Rows marked cross_check: true document the same reduction where a main-file measured curve is used instead,
# except by a lookup for engine trtllm: every row is TensorRT-LLM's own op, which that lookup prefers.
"""
BY_M_HEADER = """\
# Per-M GEMM efficiency curves reduced from NVIDIA AIConfigurator {release}'s measured {label} GEMM timings
# (aiconfigurator_core systems/data/<system>/gemm/{key}/<version>/gemm_perf.parquet; NVIDIA's own collection).
# Generated by bench/aic_efficiency_gemm.py --by-m --engine {key}; format as efficiency.yaml plus m_tokens (the GEMM
# row count all of a curve's shapes share). Every row is engine: {key} and cross_check: true: only a lookup naming
# that engine and giving M uses it (analytic/efficiency.py); bench/aic_gemm_fidelity.py checks the result.
"""
ENGINE_HEADER = """\
# Efficiency curves reduced from NVIDIA AIConfigurator {release}'s measured {label} GEMM timings
# (aiconfigurator_core systems/data/<system>/gemm/{key}/<version>/gemm_perf.parquet; NVIDIA's own collection).
# Generated by bench/aic_efficiency_gemm.py --engine {key}; format and x semantics as efficiency.yaml.
# Every row is {label}'s own op (engine: {key}) and cross_check: true, so only a lookup for engine {key} uses it.
"""


def main() -> int:
    global ENGINE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=sorted(ENGINES), default="trtllm", help="whose GEMM tables to reduce")
    ap.add_argument("--by-m", action="store_true", help="one curve per GEMM row count M (efficiency_aic_gemm_by_m_*)")
    ap.add_argument("--data", type=Path, default=None, help="AIConfigurator systems/data folder (default: installed)")
    args = ap.parse_args()
    ENGINE = ENGINES[args.engine]
    root = args.data or data_root()
    if root is None:
        print(
            "aiconfigurator_core is not installed (pip install aiconfigurator==0.12.0 in a separate venv); "
            "nothing to reduce",
            file=sys.stderr,
        )
        return 0
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        print("pyarrow is not installed; nothing to reduce", file=sys.stderr)
        return 0
    if args.by_m:
        sys.stdout.write(BY_M_HEADER.format(release=ENGINE.release, label=ENGINE.label, key=ENGINE.key))
        sys.stdout.write("\n".join(emit(r) for r in build_by_m(root)))
        return 0
    rows = build(root)
    compare(rows)
    names = {"release": ENGINE.release, "label": ENGINE.label, "key": ENGINE.key}
    head = HEADER if ENGINE.key == "trtllm" else ENGINE_HEADER.format(**names)
    sys.stdout.write(head + "\n".join(emit(r) for r in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
