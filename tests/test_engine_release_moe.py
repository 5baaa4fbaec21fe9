"""The catalog's fused-MoE rows timed from an older engine release's own code (bench/gpu/engine_moe.py): they price
that release only, and their fractions are the raw timings under the stated formula (the release-range rule itself:
tests/test_efficiency_engine.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiinfra.app.tables import efficiency_table

from .conftest import node_model

H200 = "nvidia-h200-sxm-141gb"
R1_TP8 = (7168, 2048, 256, 8, 8, 1)
RESULTS = Path(__file__).resolve().parents[1] / "bench" / "gpu" / "results"


def test_vllm_084_deepseek_experts_take_the_measured_op_and_later_releases_the_engine_tables() -> None:
    t = efficiency_table()

    def source(release: tuple[int, ...] | None) -> str:
        return t.lookup("moe_shape", H200, 8192, dtype="fp8", engine="vllm", moe_shape=R1_TP8, release=release).source

    assert source((0, 8, 4)) == "moe-fp8block-h200-h7168-i2048-e256-k8-tp8-ep1-vllm-0.8.3-0.8.4-measured"
    assert source((0, 11, 0)) == "moe-fp8block-h200-h7168-i2048-e256-k8-tp8-ep1-aic-vllm"
    assert source(None) == "moe-fp8block-h200-h7168-i2048-e256-k8-tp8-ep1-aic-vllm"
    sglang = t.lookup("moe_shape", H200, 8192, dtype="fp8", engine="sglang", moe_shape=R1_TP8, release=(0, 4, 5))
    assert sglang.source == "moe-fp8block-h200-h7168-i2048-e256-k8-tp8-ep1-sglang-0.4.5-measured"


def test_measured_fraction_is_the_raw_timing_under_the_stated_formula() -> None:
    # vLLM 0.8.4 at tp 8 (each rank: 256 experts sliced to width 2048 / 8 = 256), 8,192 tokens, top-8, hidden 7,168
    raw = json.loads((RESULTS / "h200-2026-11-27-moe-vllm-0.8.4.json").read_text())
    point = next(p for p in raw["results"] if p["shape"] == "tp8" and p["tokens"] == 8192)
    flop_per_rank = 2 * 8192 * 8 * 3 * 7168 * 256
    # the stand-in activation out, the fused kernel in at the H200's 4.8 TB/s: 8192*8 rows, 2*256 read + 256 written
    fused_act_s = 8192 * 8 * (2 * 256 + 256) * 2 / 4.8e12
    seconds = (point["graph_ms"] - point["standin_silu_mul_graph_ms"]) / 1e3 + fused_act_s
    expected = flop_per_rank / seconds / 1978.9e12  # H200 dense FP8 peak (accelerators.yaml)
    look = efficiency_table().lookup(
        "moe_shape", H200, 8192, dtype="fp8", engine="vllm", moe_shape=R1_TP8, release=(0, 8, 4)
    )
    assert look.frac == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize(
    ("version", "row"),
    [
        ("0.8.4", "moe-fp8block-h200-h7168-i2048-e256-k8-tp8-ep1-vllm-0.8.3-0.8.4-measured"),
        ("0.11.0", "moe-fp8block-h200-h7168-i2048-e256-k8-tp8-ep1-aic-vllm"),
    ],
)
def test_planner_prices_the_stated_release_experts_with_its_row(version: str, row: str) -> None:
    im = node_model("deepseek-v3", H200, weight_precision="fp8", engine="vllm", engine_version=version)
    # one MoE layer, 8,192 tokens: 2·8192·8·3·7168·2048 / 8 FLOP per rank at the row's fraction of the FP8 peak
    compute_s = im.experts(8192.0, 1.0).compute_s  # loads the engine's per-shape rows
    frac = next(c for c in efficiency_table().curves if c.id == row).at(8192)
    flop = 2 * 8192 * 8 * 3 * 7168 * 2048 / 8
    assert compute_s == pytest.approx(flop / (1978.9e12 * frac), rel=1e-4)
