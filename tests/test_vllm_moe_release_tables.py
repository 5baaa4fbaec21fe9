"""vLLM's bf16 fused-MoE rows by release (bench/aic_efficiency_moe_shapes.py --engine vllm): a release up to 0.14.0
is priced with AIConfigurator's vLLM 0.14.0 timings of the part (rows ending -upto-0.14.0), any later release or an
unstated one with the newest table's (0.24.0)."""

from __future__ import annotations

import re

import pytest

from aiinfra import catalog
from aiinfra.app.tables import efficiency_table

from .conftest import node_model

H100 = "nvidia-h100-sxm5-80gb"
QWEN3_30B_TP1 = (2048, 768, 128, 8, 1, 1)
NEWEST = "moe-bf16-h100-h2048-i768-e128-k8-tp1-ep1-aic-vllm"
OLDEST = NEWEST + "-upto-0.14.0"


@pytest.mark.parametrize(
    ("release", "row"),
    [((0, 5, 4), OLDEST), ((0, 11, 0), OLDEST), ((0, 14, 0), OLDEST), ((0, 14, 1), NEWEST), (None, NEWEST)],
)
def test_release_picks_the_table_of_the_nearest_timed_release(release: tuple[int, ...] | None, row: str) -> None:
    look = efficiency_table().lookup(
        "moe_shape", H100, 4096, dtype="bf16", engine="vllm", moe_shape=QWEN3_30B_TP1, release=release
    )
    assert look.source == row


def test_release_before_vllms_fused_moe_is_not_priced_with_the_old_table() -> None:
    # the Triton fused MoE arrived in vLLM 0.3.0 (vllm-project/vllm PR #2542); the -upto- rows start there
    look = efficiency_table().lookup(
        "moe_shape", H100, 4096, dtype="bf16", engine="vllm", moe_shape=QWEN3_30B_TP1, release=(0, 2, 7)
    )
    assert look.source == NEWEST


def test_old_row_first_point_is_its_worked_example() -> None:
    row = next(
        r for r in catalog.Catalog.default().file_rows("efficiency_aic_moe_by_shape_vllm.yaml") if r["id"] == OLDEST
    )
    m = re.search(r"(\d+) tokens -> [0-9.e+]+ FLOP per rank in ([0-9.]+) ms", row["notes"])
    assert m is not None
    tokens, ms = int(m.group(1)), float(m.group(2))
    # Qwen3-30B-A3B experts: hidden 2,048, width 768, top-8, one rank; three matrices of a gated MLP
    flop = 2 * tokens * 8 * 3 * 2048 * 768
    frac = flop / (ms / 1e3) / 989.4e12  # H100 SXM dense bf16 peak (accelerators.yaml)
    first_tokens, first_frac = row["points"][0]
    assert first_tokens == tokens
    assert first_frac == pytest.approx(frac, rel=5e-3)  # the notes print the latency to 0.1 µs


def test_planner_prices_an_older_release_slower_at_prefill_sizes() -> None:
    def experts_s(version: str) -> float:
        im = node_model("qwen3-30b-a3b", H100, weight_precision="bf16", engine="vllm", tp=1, engine_version=version)
        return float(im.experts(8192.0, 1.0).compute_s)

    old, new = experts_s("0.11.0"), experts_s("0.24.0")
    # AIConfigurator's own timings of this shape at 8,192 tokens: vLLM 0.14.0 about half 0.24.0's rate
    frac = {c.id: c.at(8192) for c in efficiency_table().curves if c.id in (OLDEST, NEWEST)}
    assert old / new == pytest.approx(frac[NEWEST] / frac[OLDEST], rel=1e-4)
    assert old / new > 1.5
