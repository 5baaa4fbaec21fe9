"""Reduce NVIDIA AIConfigurator's measured MLA absorption matmuls (SGLang, TensorRT-LLM, vLLM) to the rows of
src/aiinfra/catalog/data/efficiency_aic_mla_bmm.yaml: the fraction of the format's dense peak an engine's pair of
per-head batched matmuls around absorbed-MLA attention reaches, against the pair's FLOP, one curve per engine, part,
format and local query-head count.

Reads ``<system>/mla_bmm/<engine>/<version>/mla_bmm_perf.parquet`` from an installed ``aiconfigurator_core`` or from
``--data`` (a folder of that layout, e.g. extracted from the repository at commit COMMIT_095F58A); prints the YAML.
Not imported by the package; prints a message and exits 0 when the data are absent.

Usage: <venv>/bin/python bench/aic_efficiency_mla_bmm.py [--data DIR] \\
    > src/aiinfra/catalog/data/efficiency_aic_mla_bmm.yaml

In the absorbed form (DeepSeek-V2 §2.1.3) each layer runs, per local query head, the query's 128 no-RoPE dimensions
through W_UK into the 512-wide latent before attention (``mla_gen_pre``) and the attention's 512-wide latent output
through W_UV back to 128 value dimensions after it (``mla_gen_post``): two batched matmuls over the heads. The
collector (collector/sglang/collect_mla_bmm.py and its vLLM and TensorRT-LLM siblings) times each op as the engine
runs it: SGLang's FP8 path is ``per_tensor_quant_mla_fp8`` then ``sgl_kernel.bmm_fp8`` (the path SGLang takes for a
block-FP8 checkpoint, whose kv_b_proj it re-quantises per tensor at load: DeepseekV2ForCausalLM.post_load_weights,
sglang 0.4.5.post1 wheel), its bf16 path ``torch.bmm``; vLLM's ``torch.bmm`` on bf16 copies of the weights (vLLM
dequantises kv_b_proj to bf16 at load: vllm/v1/attention/backends/mla/common.py
MLACommonImpl.process_weights_after_loading, 0.8.4 wheel); TensorRT-LLM's own FP8 and bf16 ops. For ``T`` tokens and
``H`` local heads one call of the pair does

    FLOP      = 2 * T * H * 128 * 512 (pre) + 2 * T * H * 512 * 128 (post) = T * H * 262,144
    latency   = latency(pre) + latency(post)                          (both timed at T, H; CUDA-graph replay)
    fraction  = FLOP / latency / dense peak of the format             (catalog accelerators.yaml)

Each point is one token count at which both ops were timed. AIConfigurator's own estimator composes a DeepSeek
decode layer the same way: the pre matmul, the attention op (kind mla_decode, which excludes these matmuls), the
post matmul, then o_proj (aic-core sdk/models/deepseek.py).

Tables: each engine's oldest on H100 and H200 (SGLang 0.5.6.post2, TensorRT-LLM 1.2.0rc5, vLLM 0.24.0, its only) and
on the B200 (SGLang 0.5.9, TensorRT-LLM 1.2.0rc5, vLLM 0.24.0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aic_common import (
    ENGINE_NAMES,
    engine_curve_row,
    engine_table_source,
    present_tables,
    reduction_setup,
)

READ_ON = "2026-11-27"
NOPE = 128
LATENT = 512
FLOP_PER_TOKEN_HEAD = 2 * NOPE * LATENT * 2
"""FLOP of the pre and post matmuls for one token and one head (module docstring)."""
DTYPES = {"fp8": "fp8", "bfloat16": "bf16"}
"""the table's bmm_dtype -> the catalog format"""


@dataclass(frozen=True)
class Table:
    system: str
    short: str
    engine: str
    version: str


TABLES = (
    Table("h200_sxm", "h200", "sglang", "0.5.6.post2"),
    Table("h100_sxm", "h100", "sglang", "0.5.6.post2"),
    Table("b200_sxm", "b200", "sglang", "0.5.9"),
    Table("h200_sxm", "h200", "trtllm", "1.2.0rc5"),
    Table("h100_sxm", "h100", "trtllm", "1.2.0rc5"),
    Table("b200_sxm", "b200", "trtllm", "1.2.0rc5"),
    Table("h200_sxm", "h200", "vllm", "0.24.0"),
    Table("h100_sxm", "h100", "vllm", "0.24.0"),
    Table("b200_sxm", "b200", "vllm", "0.24.0"),
)


def pair_points(d: Any, peak: float) -> list[tuple[float, float, float]]:
    """(FLOP, fraction, latency in s) of the pre + post pair at each token count both ops were timed at, for one
    format and head count (columns op_name, num_tokens, num_heads, latency in ms); stops on a point above the peak."""
    p = d.pivot_table(index="num_tokens", columns="op_name", values="latency").dropna()
    heads = int(d.num_heads.iloc[0])
    out: list[tuple[float, float, float]] = []
    for tokens, r in p.iterrows():
        seconds = (float(r["mla_gen_pre"]) + float(r["mla_gen_post"])) * 1e-3
        flop = float(tokens) * heads * FLOP_PER_TOKEN_HEAD
        frac = flop / seconds / peak
        if frac > 1.0:
            raise SystemExit(f"{heads} heads, {tokens} tokens: above the peak; table not usable")
        out.append((flop, frac, seconds))
    return out


def row(t: Table, acc_id: str, dtype: str, peak: float, heads: int, pts: list[tuple[float, float, float]]) -> str:
    name = ENGINE_NAMES[t.engine]
    rel = f"{t.system}/mla_bmm/{t.engine}/{t.version}/mla_bmm_perf.parquet"
    title, url = engine_table_source(rel, t.engine, t.version, "MLA absorption matmul timings")
    first = pts[0]
    note = (
        f"ENGINE {t.engine} ONLY (cross_check: serves lookups naming this engine). {name} {t.version} pair of "
        f"absorbed-MLA per-head matmuls ({dtype}; W_UK before attention, W_UV after, ops mla_gen_pre + mla_gen_post) "
        f"at {heads} local query heads as the collector timed them (CUDA-graph replay). m_tokens = local query heads "
        f"per call; x = FLOP of the pair, tokens x heads x 262,144; fraction = x / (latency pre + post) / "
        f"{peak / 1e12:g} TFLOP/s ({dtype} dense); one point per token count timed for both ops "
        f"({len(pts)} points; at one token {first[2] * 1e6:.2f} us); bench/aic_efficiency_mla_bmm.py."
    )
    pts_yaml = "[" + ", ".join(f"[{x:.4e}, {y:.4g}]" for x, y, _ in pts) + "]"
    return engine_curve_row(
        row_id=f"mla-bmm-{dtype}-{t.short}-aic-{t.engine}-h{heads}",
        kind="mla_bmm",
        acc_id=acc_id,
        m_tokens=heads,
        x="FLOP of the pair of absorbed-MLA matmuls of one layer on one rank",
        pts_yaml=pts_yaml,
        engine=t.engine,
        source=(title, url, READ_ON, "op_name, bmm_dtype, num_tokens, num_heads, latency"),
        note=note,
        dtype=dtype,
    )


def main() -> int:
    setup = reduction_setup(
        __doc__ or "",
        "# Absorbed-MLA matmul pairs (W_UK before, W_UV after the attention op) of serving engines' own ops: fraction\n"
        "# of the format's dense peak, reduced by bench/aic_efficiency_mla_bmm.py from NVIDIA AIConfigurator's\n"
        "# mla_bmm tables. Do not edit by hand.\n"
        "# Every row is engine-only (cross_check: true with an engine): it serves lookups naming that engine.",
    )
    if setup is None:
        return 0
    data, pd, cat = setup
    for t, acc_id, path in present_tables(data, TABLES, "mla_bmm", "mla_bmm"):
        df = pd.read_parquet(path)
        for (raw_dtype, heads), g in df.groupby(["bmm_dtype", "num_heads"]):
            dtype = DTYPES[str(raw_dtype)]
            peak = float(cat[acc_id]["dense_tflop_per_s"][dtype]) * 1e12
            pts = pair_points(g, peak)
            if len(pts) >= 2:
                print()
                print(row(t, acc_id, dtype, peak, int(heads), pts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
