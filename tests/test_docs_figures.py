"""The figures the example pages quote from the tool, regenerated through the application layer: a page whose
number drifts from what the tool now prints fails here (docs/examples/make_inference.sh and refresh.py rewrite
the pages; this checks that they were rerun, and that prose quoting a table agrees with the table)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aiinfra import app, catalog

from .conftest import EXAMPLES

DOCS = Path(__file__).resolve().parents[1] / "docs" / "examples"
INFER = str(EXAMPLES / "infer-llama3.1-70b-h100.yaml")


def _page(name: str) -> str:
    return (DOCS / name).read_text()


def _row(text: str, label: str) -> list[str]:
    """The cells of the markdown table row whose first cell is ``label``."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == label:
            return cells
    raise AssertionError(f"no table row {label!r}")


def _infer(*sets: str) -> tuple[float, float]:
    est = app.infer(app.load_scenario(INFER, set=list(sets))).estimate
    return est.ttft_s, est.tpot_s


def test_batch_one_prose_quotes_the_table() -> None:
    page = _page("inference.md")
    bf16 = _row(page, "BF16, TP8, batch 1")[2]
    fp8 = _row(page, "FP8, TP8, batch 1")[2]
    assert f"TPOT {fp8} ms against {bf16} ms in BF16" in page
    _, tpot = _infer("inference.concurrency=1")
    assert f"{tpot * 1e3:.2f}" == fp8


@pytest.mark.parametrize(
    ("label", "sets"),
    [
        ("batch 1", ["hardware.accelerator=nvidia-l40s", "inference.concurrency=1"]),
        ("64 concurrent (chunked prefill in the decode steps)", ["hardware.accelerator=nvidia-l40s"]),
        (
            "1",
            [
                "hardware.count=1",
                "inference.plan.tp=1",
                "inference.weight_precision=int4",
                "inference.kv_precision=bf16",
                "inference.concurrency=1",
            ],
        ),
        ("nvidia-b200-sxm-180gb, 64 concurrent", ["model=deepseek-v3", "hardware.accelerator=nvidia-b200-sxm-180gb"]),
        ("nvidia-h200-sxm-141gb, 64 concurrent", ["model=deepseek-v3", "hardware.accelerator=nvidia-h200-sxm-141gb"]),
    ],
)
def test_issue_tables_are_the_tools_output(label: str, sets: list[str]) -> None:
    cells = _row(_page("inference.md"), label)
    ttft, tpot = _infer(*sets)
    assert cells[1] == f"{ttft * 1e3:.0f} ms" and cells[2] == f"{tpot * 1e3:.1f} ms"


def test_seed_claims_arithmetic_from_the_catalog() -> None:
    page = _page("seed-claims.md")
    price = next(p for p in app.price_list().prices if p.id == "coreweave-hgx-h100-8x-on-demand")
    assert f"= {32 * price.usd_per_accelerator_hour * 730:,.0f} USD/month" in page  # 32 x 6.155 x 730 = 143,781
    h100 = catalog.accelerator("nvidia-h100-sxm5-80gb")
    # DGX H100: 8 x 494.7 TF32 dense = 3.96 PF; 8 x 1,978.9 BF16 sparse = 15.83 PF (the seed's "16 PF TF32")
    assert f"tf32 {8 * h100.dense_flop_per_s['tf32'] / 1e15:.2f} PF dense" in page
    bf16_dense, bf16_sparse = 8 * h100.dense_flop_per_s["bf16"] / 1e15, 8 * h100.sparse_flop_per_s["bf16"] / 1e15
    assert f"bf16 {bf16_dense:.2f} PF dense / {bf16_sparse:.2f} PF sparse" in page


def test_thirty_two_gpu_pod_power() -> None:
    # practice question 10: 4 DGX H100 x 10.2 kW x 8,760 h x $0.10 = $35,741 at PUE 1.0
    r = app.cost(
        app.load_scenario(str(EXAMPLES / "cost-dgx-h100-power.yaml"), set=["hardware.count=32", "cost.pue=1.0"])
    )
    assert r.energy.electricity_cost_usd == pytest.approx(4 * 10.2 * 8760 * 0.10)
    assert f"${r.energy.electricity_cost_usd:,.0f} at $0.1/kWh" in _page("cost.md")
    assert "docs/examples/seed-claims.md" in _page("cost.md")  # §4 points at the seed figures quoted there


def test_seventy_b_weights_quoted_from_the_model() -> None:
    page = _page("seed-claims.md")
    weights = app.model_show("meta-llama-3.1-70b").to_dict()["derived"]["weight_bytes"]
    figures = re.findall(r"weight_bytes\[(\w+)\]\s+([\d,]+)", page)
    assert figures
    for fmt, value in figures:
        assert int(value.replace(",", "")) == int(weights[fmt])
