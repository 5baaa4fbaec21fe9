"""The planner's whole prefill step at tensor parallelism 4 and 8 against a published microbenchmark.

TokenWeave's artifact (microsoft/tokenweave, artifacts_results/output/figure_2_11_summary.csv @e29a8d6; Gond et al.,
arXiv 2505.11329) times vLLM's V1 engine (a fork of 0.8.5) generating one output token for one prompt of
Llama-3.3-70B-Instruct bf16 on an 8x H100 DGX (``--enforce-eager``, one chunk, prefix caching off, 30 runs after 10
warm-ups). Its ``no_ar`` runs remove the all-reduces, which checks the planner's compute terms alone; its
``baseline_multimem`` runs keep them on a multimem (NVLS) kernel. The measured figures are transcribed, with that
citation, in bench/prefill_check.py (TOKENWEAVE_PREFILL_MS); no catalog curve was read from them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import bench_script

ROWS: list[dict[str, Any]] = bench_script("prefill_check").tokenweave_rows()


def _label(row: dict[str, Any]) -> str:
    return f"tp{row['tp']}-{row['tokens']}"


def test_the_check_covers_tp_4_and_8_from_1k_to_32k_tokens() -> None:
    assert {(r["tp"], r["tokens"]) for r in ROWS} == {
        (tp, n) for tp in (4, 8) for n in (1024, 2048, 4096, 8192, 16384, 32768)
    }


@pytest.mark.parametrize("row", ROWS, ids=_label)
def test_prefill_compute_matches_the_measured_step_without_all_reduce(row: dict[str, Any]) -> None:
    # the measured call also carries the offline engine's few ms per request (scheduling, one sampled token)
    assert row["model_no_comm_ms"] == pytest.approx(row["measured_no_ar_ms"], rel=0.15)


@pytest.mark.parametrize("row", ROWS, ids=_label)
def test_prefill_step_with_all_reduce_matches_the_measured_step(row: dict[str, Any]) -> None:
    # the measured all-reduce is a multimem (NVLS) kernel, faster than the NCCL path priced: a looser bound
    assert row["model_ms"] == pytest.approx(row["measured_ms"], rel=0.20)


def test_the_all_reduce_share_of_a_tp_8_step_is_within_a_factor_of_two_of_the_measured_one() -> None:
    # measured: (179.085 - 144.541) / 179.085 = 19.3 % of the 4,096-token step is all-reduce (multimem kernel)
    row = next(r for r in ROWS if (r["tp"], r["tokens"]) == (8, 4096))
    assert (row["measured_ms"], row["measured_no_ar_ms"]) == (179.085, 144.541)
    share = (row["model_ms"] - row["model_no_comm_ms"]) / row["model_ms"]
    assert 0.193 / 2 < share < 0.193 * 2
