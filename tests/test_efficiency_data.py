"""Efficiency curves for Blackwell, AMD and NVL72 parts: values at measured points equal the fractions
hand-computed from the cited sources' raw numbers, and lookups pick a same-generation donor and say so."""

from __future__ import annotations

import pytest

from aiinfra.analytic.efficiency import NO_DATA, Curve, EfficiencyTable, _curve, efficiency_rows, parts_of
from aiinfra.app.tables import domain_tables, efficiency_table

B200 = "nvidia-b200-sxm-180gb"


def _row_curve(row_id: str) -> Curve:
    """A row's curve whether or not a lookup would choose it (derived rows outranked by measured ones)."""
    return _curve(next(r for r in efficiency_rows(domain_tables()) if r["id"] == row_id))


def test_b200_bf16_gemm_median_at_3e11() -> None:
    # XLA matmul table, sm_100_B200, compute-bound shapes within +-1/4 decade of 10^11.5 FLOP
    # (b, m, n, k: TFLOP/s): (4,4096,2048,4096) 1465.7, (4,2048,4096,4096) 1466.2, (2,4096,4096,4096) 1466.6,
    # (4,4096,4096,2048) 1539.9, (4,4096,4096,4096) 1670.5 -> median 1466.6 / 2250 = 0.6518
    look = efficiency_table().lookup("gemm", B200, 10**11.5, dtype="bf16")
    assert look.source == "gemm-bf16-b200-xla"
    assert look.frac == pytest.approx(1466.6 / 2250, abs=5e-4)
    # beyond the largest measured GEMM the last point holds (conservative clamp)
    assert efficiency_table().lookup("gemm", B200, 4e12, dtype="bf16").frac == pytest.approx(0.6518, abs=5e-4)


def test_b200_curve_beats_its_mamf_ceiling() -> None:
    # both rows list B200; the size curve wins over the one-point best-shape ceiling (1745.0/2250 = 0.7756)
    curve, label = efficiency_table().curve("gemm", B200, dtype="bf16")
    assert curve is not None and label == "gemm-bf16-b200-xla"
    assert len(curve.log_x) > 1
    assert efficiency_table().lookup("gemm", B200, 1e10, dtype="bf16").frac < 1745.0 / 2250


def test_mi300x_bf16_gemm_and_derived_mi325x() -> None:
    # gfx942 bin at 10^11.5 FLOP (TFLOP/s): 545.5, 548.1, 568.3, 570.7, 577.3 -> median 568.3 / 1307.4 = 0.4347
    look = efficiency_table().lookup("gemm", "amd-mi300x", 10**11.5, dtype="bf16")
    assert look.source == "gemm-bf16-mi300x-xla"
    assert look.frac == pytest.approx(568.3 / 1307.4, abs=5e-4)
    # MI325X: the same curve x MAMF ratio (784.9/1307.4) / (668.4/1307.4) = 1.1743 -> 0.4347 * 1.1743 = 0.5105
    look325 = efficiency_table().lookup("gemm", "amd-mi325x", 10**11.5, dtype="bf16")
    assert look325.source == "gemm-bf16-mi325x-derived-mi300x-xla"
    assert look325.frac == pytest.approx(0.4347 * (784.9 / 668.4), abs=1e-3)


def test_gb200_gemm_is_b200_curve_scaled_by_mamf_ratio() -> None:
    # (1822.0/2500) / (1745.0/2250) = 0.9397; B200 point at 1e11 is 0.5958 -> 0.5599
    ratio = (1822.0 / 2500) / (1745.0 / 2250)
    assert _row_curve("gemm-bf16-gb200-derived-b200-xla").at(1e11) == pytest.approx(0.5958 * ratio, abs=1e-3)
    # the derivation is outranked by a curve measured on GB200 itself (AIConfigurator TensorRT-LLM timings)
    assert efficiency_table().lookup("gemm", "nvidia-gb200", 1e11, dtype="bf16").source == "gemm-bf16-gb200-aic-trtllm"


def test_mi300x_allreduce_8gpu_matches_rccl_tests_busbw() -> None:
    # rccl-tests all_reduce_perf, 8x MI300X: 1 GiB -> busbw 313.66 GB/s; 448 GB/s one-way per GPU
    look = efficiency_table().lookup("allreduce", "amd-mi300x", 1073741824, n_ranks=8, tier="scale-up")
    assert look.source == "allreduce-mi300x-8gpu-rccl-tests"
    assert look.frac == pytest.approx(313.66 / 448.0, abs=1e-4)


def test_gb200_nvl72_allreduce_from_xla_algbw() -> None:
    # XLA collective table sm_100_GB200, one group of 72: 1207959552 B at algbw 375.0 GB/s
    # -> busbw 375.0 * 2 * 71 / 72 = 739.6 GB/s -> / 900 = 0.8218
    look = efficiency_table().lookup("allreduce", "nvidia-gb200", 1207959552, n_ranks=72, tier="scale-up")
    assert look.source == "allreduce-gb200-72gpu-nvlink5-xla"
    assert look.frac == pytest.approx(375.0 * 2 * 71 / 72 / 900.0, abs=2e-3)


def test_b200_attention_point_from_stas00_instep_tflops() -> None:
    # 834 TFLOPS counted as 3x causal forward FLOP; planner counts 3.5x -> 3.5 * 834 / (3 * 2250) = 0.4324.
    # The one-point row stays in the file; lookups on B200 now take the multi-point TensorRT-LLM size curve
    # (efficiency_aic_attention_moe.yaml: a size curve beats a single point), so the row is read directly.
    (row,) = [c for c in efficiency_table().curves if c.id == "attention-fa4-bf16-b200-stas00-instep"]
    assert row.at(5.5e11) == pytest.approx(3.5 * 834 / (3 * 2250), abs=1e-4)


@pytest.mark.parametrize(
    ("acc_id", "kind", "kwargs", "expected"),
    [
        ("nvidia-rtx-5090", "gemm", {"dtype": "bf16"}, "borrowed:gemm-bf16-rtx-pro-6000-aic-trtllm"),
        ("nvidia-rtx-5090", "attention", {"dtype": "bf16"}, "borrowed:attention-trtllm-bf16-rtxpro6000-aic"),
        ("nvidia-l4", "allreduce", {"n_ranks": 8, "tier": "scale-up"}, "borrowed:allreduce-l40s-8gpu-trtllm-aic"),
        ("amd-mi355x", "allreduce", {"n_ranks": 8, "tier": "scale-up"}, "borrowed:allreduce-mi300x-8gpu-rccl-tests"),
        ("google-tpu-v5p", "gemm", {"dtype": "bf16"}, "borrowed:gemm-bf16-h100-vidur (other vendor)"),
    ],
)
def test_borrow_picks_same_generation_and_labels_it(
    acc_id: str, kind: str, kwargs: dict[str, object], expected: str
) -> None:
    _, label = efficiency_table().curve(kind, acc_id, **kwargs)  # type: ignore[arg-type]
    assert label == expected


def test_generation_outranks_vendor_and_ceiling_outranked_by_curve() -> None:
    rows = [
        {
            "id": "h",
            "kind": "gemm",
            "accelerators": ["nvidia-h100-sxm5-80gb"],
            "dtype": "bf16",
            "points": [[1e9, 0.3], [1e12, 0.7]],
        },
        {
            "id": "b-ceiling",
            "kind": "gemm",
            "accelerators": ["nvidia-b200-sxm-180gb"],
            "dtype": "bf16",
            "points": [[1e11, 0.77]],
        },
        {
            "id": "gb",
            "kind": "gemm",
            "accelerators": ["nvidia-gb200"],
            "dtype": "bf16",
            "points": [[1e9, 0.2], [1e12, 0.6]],
        },
    ]
    t = EfficiencyTable([_curve(r) for r in rows], parts=parts_of(domain_tables().accelerators()))
    # B300: no own row; GB200 and B200 share its generation (vendor-only H100 loses); curve beats ceiling
    assert t.curve("gemm", "nvidia-b300-sxm-288gb", dtype="bf16")[1] == "borrowed:gb"
    # B200 keeps its own (single-point) row over a same-generation curve
    assert t.curve("gemm", "nvidia-b200-sxm-180gb", dtype="bf16")[1] == "b-ceiling"
    # an empty table still says there is no data
    assert EfficiencyTable().lookup("gemm", "amd-mi300x", 1e9).source == NO_DATA


def test_measured_fp8_and_fp4_square_gemms() -> None:
    # Azure ND GB200 v6, cuBLASLt FP8 16384^3: 2906.9 TFLOPS of 5000; FP4 8192^3: 7535.6 of 10000
    gb_f8 = efficiency_table().lookup("gemm", "nvidia-gb200", 2 * 16384**3, dtype="fp8")
    assert gb_f8.source == "gemm-fp8-gb200-azure-cublaslt"
    assert gb_f8.frac == pytest.approx(2906.9 / 5000, abs=1e-4)
    gb_f4 = efficiency_table().lookup("gemm", "nvidia-gb200", 2 * 8192**3, dtype="nvfp4")
    assert gb_f4.source == "gemm-fp4-gb200-azure-cublaslt"
    assert gb_f4.frac == pytest.approx(7535.6 / 10000, abs=1e-4)
    # Azure ND MI300X v5, hipBLASLt FP8 8192^3: 1159.23 TFLOPS of 2614.9
    mi = efficiency_table().lookup("gemm", "amd-mi300x", 2 * 8192**3, dtype="fp8")
    assert mi.source == "gemm-fp8-mi300x-azure-hipblaslt"
    assert mi.frac == pytest.approx(1159.23 / 2614.9, abs=1e-4)
    # MI325X has no FP8 sweep: it borrows its generation's (MI300X) row, labelled
    assert (
        efficiency_table().lookup("gemm", "amd-mi325x", 1e12, dtype="fp8").source
        == "borrowed:gemm-fp8-mi300x-azure-hipblaslt"
    )


def test_h200_memory_curve_from_stream_rate_and_h100_fixed_cost() -> None:
    # H100 Vidur curve ends: 5.623e6 B at 0.328 and 1e9 B at 0.889 of 3.35 TB/s
    t_small, t_large = 5.623e6 / (3.35e12 * 0.328), 1e9 / (3.35e12 * 0.889)
    b_inf_h100 = (1e9 - 5.623e6) / (t_large - t_small)  # 3.007e12 B/s
    t0 = t_small - 5.623e6 / b_inf_h100  # 3.25 us fixed cost per kernel
    # H200: BabelStream Triad 4.15 TB/s (Azure ND H200 v5) -> efficiency at 1e8 B of the 4.8 TB/s catalog figure
    expected = 1e8 / (t0 + 1e8 / 4.15e12) / 4.8e12
    assert _row_curve("memory-h200-derived-azure-stream").at(1e8) == pytest.approx(expected, abs=2e-3)
    # the planner now uses the curve measured on H200 (AIConfigurator GEMV timings), not this derivation
    assert efficiency_table().lookup("memory", "nvidia-h200-sxm-141gb", 1e8).source == "memory-h200-aic-trtllm-gemv"
    assert b_inf_h100 == pytest.approx(2.97e12, rel=0.02)  # Azure ND H100 v5 Triad 2.97 TB/s


def test_mi300x_memory_curve_is_amds_own_gemv_timings() -> None:
    # ROCm/aiter fbb52dd, MI300X (cu_num 304), Llama-3.1-405B tp 8 at one token: down_proj N=16384 K=6656 in
    # 31.3479 us; qkv N=2304 K=16384 in 28.6795 us; bytes = N*K + M*K + 2*M*N against the 5.3 TB/s HBM peak
    down = (16384 * 6656 + 6656 + 2 * 16384) / 31.3479e-6 / 5.3e12
    qkv = (2304 * 16384 + 16384 + 2 * 2304) / 28.6795e-6 / 5.3e12
    assert (down, qkv) == (pytest.approx(0.6566, abs=1e-3), pytest.approx(0.2486, abs=1e-3))
    # the 1e8-byte point: the median of the eight M <= 16 shapes within 1/8 decade of it (M, N, K, us)
    timed = [
        (1, 4608, 16384, 34.5767),
        (16, 4608, 16384, 30.8324),
        (1, 16384, 6656, 31.3479),
        (16, 16384, 6656, 32.8949),
        (1, 10240, 8192, 32.9811),
        (16, 10240, 8192, 31.2289),
        (1, 14336, 8192, 41.6157),
        (16, 14336, 8192, 39.5399),
    ]
    fracs = sorted((n * k + m * k + 2 * m * n) / (us * 1e-6) / 5.3e12 for m, n, k, us in timed)
    row = _row_curve("memory-mi300x-aiter-gemv")
    assert row.at(1e8) == pytest.approx((fracs[3] + fracs[4]) / 2, abs=1e-3)
    # the lookup takes it; the STREAM derivation with the H100's fixed cost is kept as a cross-check only
    assert efficiency_table().lookup("memory", "amd-mi300x", 1e8).source == "memory-mi300x-aiter-gemv"
    assert all(c.id != "memory-mi300x-derived-azure-stream" for c in efficiency_table().curves)


def test_l40s_memory_from_l40_small_kernel_and_plateau() -> None:
    # gpu-benches L40: smallest kernel 64 kB at 40 GB/s -> t0 = 65536 / 40e9; DRAM plateau 760 GB/s; catalog 864 GB/s
    t0 = 65536 / 40e9
    row = _row_curve("memory-l40s-derived-l40-gpubenches")
    assert row.at(1e8) == pytest.approx(1e8 / (t0 + 1e8 / 760e9) / 864e9, abs=1e-3)
    # a curve measured on L40S itself (AIConfigurator GEMV timings) outranks the L40 derivation there; a part that
    # borrows (L4) is not ranked by provenance, so it keeps the main file's row (file order)
    assert efficiency_table().lookup("memory", "nvidia-l40s", 1e8).source == "memory-l40s-aic-trtllm-gemv"
    assert efficiency_table().lookup("memory", "nvidia-l4", 1e8).source == "borrowed:memory-l40s-derived-l40-gpubenches"


def test_h200_uses_the_nvlink4_kernel_time_curves_and_skips_the_cross_check_row() -> None:
    from aiinfra.app.tables import efficiency_table

    # H200 shares the H100's NVLink 4 / NVSwitch fabric: the CUDA-graph kernel-time curves (Vidur) apply; the
    # eager torch.distributed sweep on H200 is kept as cross_check and never chosen
    for n, row in (
        (2, "allreduce-h100-2gpu-nvlink4-vidur"),
        (4, "allreduce-h100-4gpu-nvlink4-vidur"),
        (8, "allreduce-h100-8gpu-nvlink4"),
    ):
        _, label = efficiency_table().curve("allreduce", "nvidia-h200-sxm-141gb", n_ranks=n, tier="scale-up")
        assert label == row
    assert all(c.id != "allreduce-h200-8gpu-nvlink4-stas00" for c in efficiency_table().curves)


def test_every_efficiency_row_in_every_file_is_sourced_and_unique() -> None:
    # efficiency.yaml and the bulk-derived efficiency_*.yaml files: each row names its sources with a read date,
    # every point is a fraction in (0, 1] (a positive time ratio for the TIME_RATIO_KINDS), and ids are unique across
    # the files
    import re

    from aiinfra.analytic.efficiency import TIME_RATIO_KINDS, efficiency_files, efficiency_rows

    assert efficiency_files(domain_tables())[0] == "efficiency.yaml"
    rows = efficiency_rows(domain_tables())
    ids = [str(r["id"]) for r in rows]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    for r in rows:
        assert r.get("sources"), r["id"]
        for s in r["sources"]:
            assert s.get("title") and s.get("url"), r["id"]
            assert re.match(r"^\d{4}-\d{2}(-\d{2})?$", str(s.get("read_on"))), r["id"]
        # fractions of a peak lie in (0, 1]; a time ratio (fp8_block_gemm: block-scaled over per-tensor time) only
        # above 0, with 10 as a bound that catches a unit slip (AIConfigurator's tables give 0.57-2.2)
        for _, y in r.get("points") or []:
            assert 0 < float(y) <= (10.0 if r["kind"] in TIME_RATIO_KINDS else 1.0), r["id"]
