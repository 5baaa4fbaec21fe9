"""Validation on the published training rows: predictions from specs only, accuracy as a regression guard.

The tolerances below are what the model achieved when this test was written (docs/validation.md); they
guard against regressions. They are not the issue's targets where the model misses them (MPT rows):
docs/validation.md says where and why.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest

from aiinfra.app.tables import row_tables
from aiinfra.validation import training_rows
from aiinfra.validation.runner import Case, by_group, by_scale_band, run, summarise, time_error

DATA = Path(training_rows.__file__).parent / "data" / "training.csv"


@pytest.fixture(scope="module")
def result() -> dict:  # type: ignore[type-arg]
    return run(DATA, row_tables())


def test_value_column_is_never_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, str]] = []
    real = training_rows.predict_row

    def spy(row: dict[str, str], tables):  # type: ignore[no-untyped-def]
        seen.append(row)
        return real(row, tables)

    monkeypatch.setattr(training_rows, "predict_row", spy)
    run(DATA, row_tables())
    assert seen and all("value" not in r for r in seen)


def test_blank_value_is_still_predicted(tmp_path: Path) -> None:
    rows = list(csv.DictReader(DATA.open()))[:3]
    for r in rows:
        r["value"] = ""
    out = tmp_path / "blind.csv"
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    res = run(out, row_tables())
    assert all(c.predicted is not None and c.measured is None and c.rel_error is None for c in res["cases"])


def test_unmodelled_rows_are_listed_with_a_reason(result) -> None:  # type: ignore[no-untyped-def]
    missing = [c for c in result["cases"] if c.predicted is None]
    assert all(c.notes for c in missing)
    assert result["summary"]["n"] == 227


# group -> (max median |error|, max p90 |error|) achieved by the model (regression guard)
GROUP_BOUNDS = {
    # issue 19 (network model: straggler wait, overlap slowdown, per-NIC shards) moved the dense groups: the
    # rows already predicted slow got slower (Narayanan 7.5B +10.4 -> +13.1 %, Korthikanti 3.1 -> 5.6 % median,
    # MPT 80 GB 8.3 -> 10.1 %, MPT 40 GB 4.1 -> 5.8 %), the at-scale rows closer (docs/validation.md, by scale)
    "narayanan2021-t1": (0.05, 0.14),
    "narayanan2021-t2-ptdp": (0.05, 0.06),
    "korthikanti2022-t5": (0.06, 0.10),
    "megatron-core-r08-h100": (0.09, 0.22),  # with the README's --tp-comm-overlap modelled
    # MPT rows (llm-foundry attn_impl triton): sequences past 16k, beyond the Triton attention measurements,
    # and the 80 GB table's full-recompute 7B/13B rows are under-predicted by 10-20 %
    "mpt-a10080gb": (0.11, 0.20),
    "mpt-a10040gb": (0.06, 0.14),
    # torchtitan on the 500 W H100 96 GB (Grand Teton): documented misses, guarded at the achieved errors
    # (median 28.3 % / p90 46.1 %, async-TP table 47.5 % / 108 %) once PyTorch SDPA runs FlashAttention-2 and
    # the part's tensor-core rate is 0.82 of the 700 W curves (FBGEMM's 'H100 500W' GEMMs); before: 89.6 / 174 %
    # and 82.3 / 158 %. Still over-predicted; torchao float8 rowwise (slower than tensorwise in the table) is
    # not modelled. Nothing tuned on them.
    "torchtitan-h100": (0.30, 0.50),
    "torchtitan-asynctp-h100": (0.50, 1.10),
}

# groups added after the reference copy (MoE/MLA training, H200, GB200/GB300): regression guards only — the
# bounds are the achieved errors plus a margin, and most are documented misses, not accuracy claims:
# * mcore-moe-zoo-h100 (Qwen3-235B on 256 H100, EP 8-32 across InfiniBand): median 22 %, p90 46 % once the
#   all-to-all carries tokens/tp per rank (sequence parallel) at DeepEP's measured efficiency; rows that
#   state the all-to-all overlap ("+1f1b overlap") are timed with it (ep_comm_overlap: −1 %); the CUDA-graph row
#   stays +87 % (launch savings not modelled).
# * mcore-moe-zoo-gb200 / -gb300 / mcore-dsv3-gb200: 4k-sequence rows under-predicted by 20-40 % (the
#   DeepSeek-V3 baseline row by 59 %: one prediction serves both rows, which differ only in software);
#   the 128k-context GB200 row is over-predicted 61 % since the attention core is timed in BF16 (FP8 recipes
#   quantise the Linear GEMMs only) at the one measured B200 FlashAttention-4 point.
# * torchtitan-trainy-h200 (Llama 3.1 8B FSDP Float8 on 32/64 H200): predicted 1.4x the measured tokens/s
#   (1.7x before PyTorch SDPA was charged at FlashAttention-2 speed; achieved median 41.1 %, p90 42.1 %).
NEW_GROUP_BOUNDS = {
    "mcore-moe-zoo-h100": (0.25, 0.50),
    # DeepSeek-V3 report: 180K H800 GPU-hours per trillion tokens (an average over the whole run, batch ramp and
    # MTP module not modelled); DualPipe's all-to-all overlap is modelled from the report's layout (§3.2.1)
    "deepseek-v3-report-h800": (0.10, 0.10),
    "mcore-moe-zoo-gb200": (0.20, 0.65),
    "mcore-moe-zoo-gb300": (0.45, 0.45),
    "mcore-dsv3-gb200": (0.45, 0.60),
    "torchtitan-trainy-h200": (0.45, 0.45),
    # Nemotron-4 340B on 1,536-6,144 H100 (TP8 PP12): predicted 8-13 % slow; the report's interleaving depth is not
    # stated, so the rows run without it (vp = 1, bubble (p-1)/m)
    "nemotron4-340b-h100": (0.10, 0.13),
}


@pytest.mark.parametrize("group", sorted(GROUP_BOUNDS) + sorted(NEW_GROUP_BOUNDS))
def test_group_accuracy(result, group: str) -> None:  # type: ignore[no-untyped-def]
    s = by_group(result["cases"])[group]
    med, p90 = {**GROUP_BOUNDS, **NEW_GROUP_BOUNDS}[group]
    assert s["n_compared"] == s["n"]
    assert s["median_abs_rel_error"] <= med
    assert s["p90_abs_rel_error"] <= p90


def test_megatron_rows_meet_the_issue_target(result) -> None:  # type: ignore[no-untyped-def]
    # dense Megatron-LM rows (Narayanan 2021, Korthikanti 2022, Megatron-Core r0.8): median ≤ 10 %, p90 ≤ 25 %
    megatron = [c for c in result["cases"] if c.group.startswith(("narayanan", "korthikanti", "megatron"))]
    errs = sorted(abs(c.rel_error) for c in megatron if c.rel_error is not None)
    assert len(errs) == 33
    assert errs[len(errs) // 2] <= 0.10
    assert errs[int(0.9 * (len(errs) - 1))] <= 0.25


@pytest.mark.parametrize(
    ("case_id", "tol"),
    [
        ("korthikanti2022-t5-175b", 0.10),
        ("korthikanti2022-t5-530b", 0.10),
        ("korthikanti2022-t5-1t", 0.10),
        ("narayanan2021-t2-ptdp-174p6b", 0.10),
        ("narayanan2021-t2-ptdp-529p6b", 0.10),
        ("mpt-a10080gb-bf16-70b-s2048-g64", 0.10),
        # under-predicted by ~12 % (full recompute; the Triton forward is charged at its fwd+bwd speed)
        ("mpt-a10080gb-bf16-7b-s4096", 0.15),
        ("mpt-a10040gb-bf16-7b-s4096", 0.10),
        ("mpt-a10040gb-bf16-13b-s2048-g128", 0.10),
    ],
)
def test_flagship_cases(result, case_id: str, tol: float) -> None:  # type: ignore[no-untyped-def]
    cases = {c.id: c for c in result["cases"]}
    matches = [c for cid, c in cases.items() if cid.startswith(case_id)]
    assert matches, case_id
    for c in matches:
        assert abs(c.rel_error) <= tol, (c.id, c.rel_error)


MEDIAN_GUARD, P90_GUARD = 0.071, 0.25  # achieved 0.070 / 0.246 once FSDP under pipeline parallelism gathers once per
# step (issue 28; torchtitan's reshard_after_forward = not pp_enabled): the two torchtitan 405B PP rows move from
# -22 % / -39 % to +62 % / +26 % in tokens/s, so their remaining gap is not FSDP traffic; 0.070 / 0.219 with issue 19's
# network model (0.063 / 0.252
# before it; 0.064 / 0.592 before the torchtitan rows ran SDPA at FlashAttention-2 speed on the power-limited part)


def test_dense_training_summary_regression_guard(result) -> None:  # type: ignore[no-untyped-def]
    # the issue's targets are median ≤ 10 %, p90 ≤ 25 % on all dense rows; these are the achieved numbers,
    # asserted so that they cannot silently get worse. Summarised over the groups of the reference copy (the
    # groups added later are guarded per group above); 202 compared: the 30 torchtitan rows
    # (nvidia-h100-sxm5-96gb, 500 W) over-predict throughput ~1.3x. Nothing was tuned on them.
    s = summarise([c for c in result["cases"] if c.group not in NEW_GROUP_BOUNDS])
    assert s["n_compared"] == 202
    assert s["median_abs_rel_error"] <= MEDIAN_GUARD
    assert s["p90_abs_rel_error"] <= P90_GUARD
    assert all(c.kind == "predictive" for c in result["cases"])


def test_error_by_scale_band(result) -> None:  # type: ignore[no-untyped-def]
    # the bands partition the rows by num_accelerators; issue 19's target on runs of 1,000+ accelerators:
    # median |error| ≤ 10 %, p90 ≤ 25 % (achieved 1.5 % / 8.3 % on 16 rows: Narayanan 2021, Megatron-Core r0.8,
    # DeepSeek-V3, Nemotron-4 340B)
    bands = by_scale_band(result["cases"])
    assert list(bands) == ["1–63", "64–511", "512–999", "≥ 1,000"]
    assert sum(b["n"] for b in bands.values()) == result["summary"]["n"]
    big = bands["≥ 1,000"]
    assert big["n_compared"] == 16
    assert big["median_abs_rel_error"] <= 0.10
    assert big["p90_abs_rel_error"] <= 0.25
    # small runs guarded at the achieved figures (6.6 % / 19.6 % before the network model, 7.8 % / 19.5 % after)
    assert bands["1–63"]["median_abs_rel_error"] <= 0.08
    assert bands["1–63"]["p90_abs_rel_error"] <= 0.20


def test_time_error_flips_rates() -> None:
    # a tokens/s prediction 25 % high is a step time 20 % short: 1/1.25 − 1
    case = Case(
        id="x",
        group="x",
        metric="tokens_per_s_per_accelerator",
        measured=100.0,
        predicted=125.0,
        rel_error=0.25,
        notes="",
        kind="predictive",
    )
    assert time_error(case) == pytest.approx(-0.2)
    assert time_error(dataclasses.replace(case, metric="step_time_s")) == pytest.approx(0.25)
