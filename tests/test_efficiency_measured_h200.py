"""H200 curves measured by the project (bench/gpu/microbench.py, reduced by bench/gpu/reduce.py): points
recomputed by hand from raw timings copied out of bench/gpu/results/h200-2026-11-26.json."""

from __future__ import annotations

import statistics

import pytest

from aiinfra.analytic.efficiency import _curve, efficiency_rows
from aiinfra.app.tables import domain_tables, efficiency_table

H200 = "nvidia-h200-sxm-141gb"
BF16_PEAK = 989.4e12  # catalog dense bf16, H200 row
HBM_B_PER_S = 4.8e12  # catalog H200 HBM3e bandwidth


def _row(row_id: str) -> dict:  # type: ignore[type-arg]
    return next(r for r in efficiency_rows(domain_tables()) if r["id"] == row_id)


def test_h200_bf16_gemm_point_at_1e12_flop_is_the_median_of_compute_bound_shapes() -> None:
    # bf16 shapes (M, N, K) -> seconds, compute-bound (intensity above 989.4 / 4.8 = 206 FLOP/byte), within
    # +-1/4 decade of 1e12 FLOP
    timed = {
        (16384, 6144, 4096): 1.22616e-03,
        (4096, 28672, 4096): 1.48097e-03,
        (8192, 4096, 14336): 1.37215e-03,
        (4096, 10240, 8192): 1.02248e-03,
        (8192, 10240, 8192): 1.98962e-03,
        (8192, 8192, 8192): 1.60736e-03,
        (1024, 57344, 8192): 1.42291e-03,
        (2048, 8192, 28672): 1.39529e-03,
        (2048, 16384, 16384): 1.56701e-03,
        (1024, 36864, 12288): 1.36887e-03,
        (8192, 7168, 8192): 1.38564e-03,
        (16384, 8192, 3584): 1.48095e-03,
        (8192, 2304, 16384): 8.83339e-04,
        (16384, 2304, 16384): 1.82863e-03,
        (16384, 16384, 2048): 1.72856e-03,
        (2048, 13312, 16384): 1.35629e-03,
        (4096, 16384, 6656): 1.39661e-03,
    }
    expected = statistics.median(2 * m * n * k / t / BF16_PEAK for (m, n, k), t in timed.items())  # about 0.684
    look = efficiency_table().lookup("gemm", H200, 1e12, dtype="bf16")
    assert look.source == "gemm-bf16-h200-measured"
    assert look.frac == pytest.approx(expected, rel=2e-3)


def test_h200_weight_streaming_cross_check_agrees_with_the_curve_in_use() -> None:
    # bf16 GEMMs with M <= 16 whose bytes 2*(MK + KN + MN) fall within +-1/8 decade of 1e9
    timed = {
        (1, 57344, 8192): 2.17571e-04,
        (2, 57344, 8192): 2.10352e-04,
        (4, 57344, 8192): 2.11680e-04,
        (8, 57344, 8192): 2.11949e-04,
        (16, 57344, 8192): 2.12834e-04,
        (1, 36864, 12288): 2.12253e-04,
        (2, 36864, 12288): 2.10576e-04,
        (4, 36864, 12288): 2.13354e-04,
        (8, 36864, 12288): 2.14728e-04,
        (16, 36864, 12288): 2.17789e-04,
    }
    expected = statistics.median(2 * (m * k + k * n + m * n) / t / HBM_B_PER_S for (m, n, k), t in timed.items())
    ours = _curve(_row("memory-h200-measured-gemv"))
    assert ours.at(1e9) == pytest.approx(expected, rel=2e-3)  # about 0.898: 4.31 TB/s of 4.8
    # the planner keeps NVIDIA AIConfigurator's far larger H200 sweep; the two agree within 6 % at 1e9 bytes
    used = efficiency_table().lookup("memory", H200, 1e9)
    assert used.source == "memory-h200-aic-trtllm-gemv"
    assert used.frac == pytest.approx(ours.at(1e9), rel=0.06)


def test_h100_keeps_its_own_curves() -> None:
    # the H200 rows name only the H200, and the project's H100 rows are cross-checks: an H100 lookup still uses the
    # published H100 measurement
    assert (
        efficiency_table().lookup("gemm", "nvidia-h100-sxm5-80gb", 1e12, dtype="bf16").source == "gemm-bf16-h100-vidur"
    )
    assert efficiency_table().lookup("memory", "nvidia-h100-sxm5-80gb", 1e9).source == "memory-h100-vidur-gemv"


def test_h100_cross_check_agrees_with_the_curve_in_use_on_large_gemms() -> None:
    # our H100 bf16 GEMMs (CUDA graphs) against Vidur's eager timings at 1e12 and 3.16e12 FLOP: within 3 %
    ours = _curve(_row("gemm-bf16-h100-measured"))
    used = _curve(_row("gemm-bf16-h100-vidur"))
    for flop in (1e12, 3.162e12):
        assert ours.at(flop) == pytest.approx(used.at(flop), rel=0.03)


def test_the_whole_step_table_in_serving_md_is_the_raw_file_and_the_model() -> None:
    # docs/serving.md "A whole step on the project's own H200": measured column = the committed raw timings,
    # model column = the step model now (rerun the comparison when the model changes)
    import json
    import re
    from pathlib import Path

    from aiinfra import catalog
    from aiinfra.analytic.inference import InferenceModel
    from aiinfra.analytic.step_time import StepBatch
    from aiinfra.catalog.resolve import cluster_for

    root = Path(__file__).resolve().parents[1]
    raw = json.loads((root / "bench/gpu/results/h200-2026-11-26-decode-step.json").read_text())
    page = (root / "docs/serving.md").read_text()
    rows = re.findall(r"^\| (decode|prefill), ([^|]+?) \| ([\d.]+) \| ([\d.]+) \|", page, re.M)
    im = InferenceModel(model=catalog.model("meta-llama-3.1-8b"), cluster=cluster_for(H200, 1))
    # the --large run's steps above 256 sequences follow the first run's decode rows
    large = json.loads((root / "bench/gpu/results/h200-2026-11-27-decode-step-large.json").read_text())
    decodes = raw["decode"] + [r for r in large["decode"] if r["batch"] > 256]
    steps = [("decode", StepBatch.decode(r["batch"], r["context_tokens"]), r["step_ms"]) for r in decodes]
    steps += [("prefill", StepBatch.prefill(r["prompt_tokens"]), r["step_ms"]) for r in raw["prefill"]]
    assert len(rows) == len(steps) == 13
    for (kind, _, measured, model), (want_kind, batch, raw_ms) in zip(rows, steps, strict=True):
        assert kind == want_kind
        assert float(measured) == pytest.approx(raw_ms, abs=0.006)
        assert float(model) == pytest.approx(im.iteration_time_s(batch) * 1e3, abs=0.006)
