"""Engine-specific efficiency rows: a lookup that names the engine prefers them; others keep the engine-free rows."""

from __future__ import annotations

import pytest

from aiinfra.analytic.efficiency import NO_DATA, EfficiencyTable, _curve, efficiency_rows
from aiinfra.analytic.inference import InferenceModel
from aiinfra.app.tables import domain_tables, efficiency_table
from aiinfra.errors import DataError

H100 = "nvidia-h100-sxm5-80gb"


def test_trtllm_lookup_takes_tensorrt_llm_timings_and_others_keep_the_main_file() -> None:
    # H100: the main file's Vidur GEMV memory curve and FlashAttention-3 attention serve vLLM and training;
    # TensorRT-LLM's own timings (AIConfigurator rows, cross_check for everyone else) serve engine trtllm
    t = efficiency_table()
    assert t.curve("memory", H100)[1] == "memory-h100-vidur-gemv"
    assert t.curve("memory", H100, engine="trtllm")[1] == "memory-h100-aic-trtllm-gemv"
    # vLLM's own timings (AIConfigurator vLLM 0.24 tables, cross_check + engine vllm) serve engine vllm only
    assert t.curve("memory", H100, engine="vllm")[1] == "memory-h100-aic-vllm-gemv"
    assert t.curve("gemm", H100, dtype="fp8", engine="vllm")[1] == "gemm-fp8-h100-aic-vllm"
    assert t.curve("gemm", H100, dtype="fp8")[1] == "gemm-fp8-h100-deepgemm"
    assert t.curve("allreduce", H100, n_ranks=8, tier="scale-up", engine="vllm")[1] == "allreduce-h100-8gpu-vllm-aic"
    assert t.curve("attention", H100, dtype="bf16", engine="trtllm")[1] == "attention-trtllm-bf16-h100-aic"
    assert t.curve("moe", H100, dtype="fp8", engine="trtllm")[1] == "moe-fp8-h100-trtllm-cutlass-aic"
    ar = t.curve("allreduce", H100, n_ranks=2, tier="scale-up", engine="trtllm")[1]
    assert ar == "allreduce-h100-2gpu-trtllm-aic"
    assert t.curve("allreduce", H100, n_ranks=2, tier="scale-up")[1] == "allreduce-h100-2gpu-nvlink4-vidur"


def test_engine_rows_lose_to_engine_free_rows_only_at_equal_similarity() -> None:
    # two size curves measured on the same part, one engine-free and one timed inside an engine: the engine's
    # lookup takes its own, any other lookup the engine-free one; a lone engine row still serves everyone
    base = {"kind": "memory", "accelerators": ["x-part"], "provenance": "measured", "points": [[1e8, 0.5], [1e9, 0.8]]}
    free = _curve({**base, "id": "free"})
    eng = _curve({**base, "id": "eng", "engine": "e1", "points": [[1e8, 0.4], [1e9, 0.7]]})
    both = EfficiencyTable([eng, free])
    assert both.curve("memory", "x-part", engine="e1")[1] == "eng"
    assert both.curve("memory", "x-part", engine="e2")[1] == "free"
    assert both.curve("memory", "x-part")[1] == "free"
    assert EfficiencyTable([eng]).curve("memory", "x-part")[1] == "eng"
    # a cross_check engine row serves its engine only
    cc = _curve({**base, "id": "cc", "engine": "e1", "cross_check": True})
    only = EfficiencyTable([cc])
    assert only.curve("memory", "x-part", engine="e1")[1] == "cc"
    assert only.curve("memory", "x-part")[0] is None


def test_every_aiconfigurator_row_names_its_engine() -> None:
    ends = ("-aic", "-aic-trtllm", "-aic-trtllm-gemv", "-aic-vllm", "-aic-vllm-gemv", "-aic-sglang", "-aic-sglang-gemv")
    aic = [r for r in efficiency_rows(domain_tables()) if str(r["id"]).endswith(ends)]
    assert len(aic) > 50
    # TensorRT-LLM's, vLLM's and SGLang's ops name their engine; nccl-tests sweeps name none
    vllm = [r for r in aic if "vllm" in str(r["id"])]
    sglang = [r for r in aic if "sglang" in str(r["id"])]
    trt = [r for r in aic if "nccl" not in str(r["id"]) and r not in vllm and r not in sglang]
    assert all(r.get("engine") == "trtllm" for r in trt)
    assert len(vllm) > 40 and all(r.get("engine") == "vllm" and r.get("cross_check") for r in vllm)
    assert len(sglang) >= 10 and all(r.get("engine") == "sglang" and r.get("cross_check") for r in sglang)
    assert all(not r.get("engine") for r in aic if r not in trt and r not in vllm and r not in sglang)


def test_vllm_fp8_gemm_lookup_reads_the_vllm_row() -> None:
    # gemm-fp8-h100-aic-vllm has the points (1e11, 0.3847) and (3.1623e11, 0.4608): a vLLM lookup at 2e11 FLOP
    # interpolates between them in log x, by hand 0.3847 + (0.4608 − 0.3847)·log10(2)/0.5 = 0.4305; the
    # engine-free lookup keeps DeepGEMM's curve, which is not the vLLM figure
    import math

    import pytest

    t = efficiency_table()
    by_hand = 0.3847 + (0.4608 - 0.3847) * math.log10(2e11 / 1e11) / math.log10(3.1623e11 / 1e11)
    assert t.lookup("gemm", H100, 2e11, dtype="fp8", engine="vllm").frac == pytest.approx(by_hand, rel=1e-3)
    assert t.lookup("gemm", H100, 2e11, dtype="fp8").frac != pytest.approx(by_hand, rel=1e-2)


def test_scenario_engine_key_selects_the_engine_and_rejects_others() -> None:
    import pytest

    from aiinfra.catalog.resolve import resolve
    from aiinfra.errors import SpecError
    from aiinfra.planning.inference import estimate_inference
    from aiinfra.specs.scenario import parse_scenario

    base = {
        "model": "meta-llama-3.1-70b",
        "hardware": {"accelerator": H100, "count": 8},
        "inference": {
            "weight_precision": "fp8",
            "kv_precision": "fp8",
            "input_tokens": 1024,
            "output_tokens": 256,
            "concurrency": 64,
            "plan": {"tp": 8},
        },
    }
    vllm = estimate_inference(resolve(parse_scenario(base)))
    trt = estimate_inference(resolve(parse_scenario({**base, "inference": {**base["inference"], "engine": "trtllm"}})))
    assert (vllm.engine, trt.engine) == ("vllm", "trtllm")
    with pytest.raises(SpecError, match=r"inference\.engine"):
        resolve(parse_scenario({**base, "inference": {**base["inference"], "engine": "tgi"}}))


def test_trtllm_weight_streaming_fit_runs_through_the_tensorrt_llm_gemv_curve() -> None:
    # kernel time t = t0 + bytes / B through the two ends of the part's memory curve, by hand from the rows'
    # end points at H100's 3.35 TB/s: t_a = x_a / (bw · f_a), B = (x_b − x_a) / (t_b − t_a), t0 = t_a − x_a / B
    import pytest

    from aiinfra import catalog
    from aiinfra.analytic.kernel_time import memory_fit

    bw = 3.35e12

    def fit(x_a: float, f_a: float, x_b: float, f_b: float) -> tuple[float, float]:
        t_a, t_b = x_a / (bw * f_a), x_b / (bw * f_b)
        b_inf = (x_b - x_a) / (t_b - t_a)
        return t_a - x_a / b_inf, b_inf

    acc = catalog.accelerator(H100)
    # memory-h100-aic-trtllm-gemv: (5.6234e6 B, 0.3181) ... (1e9 B, 0.8425): t0 ≈ 3.30 µs, B ≈ 2.85 TB/s
    assert memory_fit(domain_tables(), acc, "trtllm") == pytest.approx(fit(5.6234e6, 0.3181, 1e9, 0.8425), rel=1e-9)
    # memory-h100-vidur-gemv: (5.623e6 B, 0.328) ... (1e9 B, 0.889): t0 ≈ 3.25 µs, B ≈ 3.01 TB/s
    assert memory_fit(domain_tables(), acc) == pytest.approx(fit(5.623e6, 0.328, 1e9, 0.889), rel=1e-9)
    # memory-h100-aic-vllm-gemv: (5.6234e6 B, 0.3033) ... (1e9 B, 0.8857)
    assert memory_fit(domain_tables(), acc, "vllm") == pytest.approx(fit(5.6234e6, 0.3033, 1e9, 0.8857), rel=1e-9)
    # FP8 weights: TensorRT-LLM's quantised op streams them through memory-fp8-h100-aic-trtllm-gemv,
    # (5.6234e6 B, 0.1154) ... (1e9 B, 0.8183): by hand t0 ≈ 12.6 µs, B ≈ 2.84 TB/s — a larger fixed time than
    # its bf16 GEMV's; a bf16 lookup and the engine-free fp8 lookup keep the bf16 streaming curves
    t0_fp8, b_fp8 = memory_fit(domain_tables(), acc, "trtllm", "fp8")
    assert (t0_fp8, b_fp8) == pytest.approx(fit(5.6234e6, 0.1154, 1e9, 0.8183), rel=1e-9)
    assert t0_fp8 == pytest.approx(12.57e-6, rel=0.01)
    assert memory_fit(domain_tables(), acc, "trtllm", "bf16") == memory_fit(domain_tables(), acc, "trtllm")
    assert memory_fit(domain_tables(), acc, None, "fp8") == memory_fit(domain_tables(), acc)


def test_per_m_curves_serve_engine_lookups_that_give_m() -> None:
    # toy table: an engine-free FLOP curve and one engine's per-M curves at M = 16 and 256 (engine-only rows)
    import pytest

    base = {"kind": "gemm", "accelerators": ["x-part"], "dtype": "bf16", "provenance": "measured"}
    free = _curve({**base, "id": "free", "points": [[1e9, 0.5], [1e12, 0.8]]})
    m16 = _curve(
        {**base, "id": "m16", "engine": "e1", "cross_check": True, "m_tokens": 16, "points": [[1e9, 0.1], [1e12, 0.2]]}
    )
    m256 = _curve(
        {
            **base,
            "id": "m256",
            "engine": "e1",
            "cross_check": True,
            "m_tokens": 256,
            "points": [[1e9, 0.3], [1e12, 0.6]],
        }
    )
    t = EfficiencyTable([free, m16, m256])
    # nearest M on a log2 scale: 20 -> 16; 100 -> 256 (log2 distances 2.64 vs 1.36)
    assert t.curve("gemm", "x-part", dtype="bf16", engine="e1", m_tokens=20)[1] == "m16"
    assert t.curve("gemm", "x-part", dtype="bf16", engine="e1", m_tokens=100)[1] == "m256"
    # no M, or another engine: the per-M rows are never used
    assert t.curve("gemm", "x-part", dtype="bf16", engine="e1")[1] == "free"
    assert t.curve("gemm", "x-part", dtype="bf16", engine="e2", m_tokens=20)[1] == "free"
    # linear in log10 x inside a curve: at 1e10.5 halfway, 0.3 + (0.6 - 0.3) / 2
    look = t.lookup("gemm", "x-part", 10**10.5, dtype="bf16", engine="e1", m_tokens=256)
    assert (look.source, look.frac) == ("m256", pytest.approx(0.45))
    # linear in log2 M between the bracketing curves: M = 64 is half-way from 16 to 256 -> (0.15 + 0.45) / 2;
    # beyond the family's ends, the end curve
    assert t.lookup("gemm", "x-part", 10**10.5, dtype="bf16", engine="e1", m_tokens=64).frac == pytest.approx(0.3)
    assert t.lookup("gemm", "x-part", 10**10.5, dtype="bf16", engine="e1", m_tokens=4096).frac == pytest.approx(0.45)


def test_vllm_fp8_gemm_at_300_tokens_interpolates_between_the_m256_and_m512_rows() -> None:
    # at x = 10^10.125 FLOP (halfway in log10 between the points 1e10 and 1.7783e10 of both rows):
    # gemm-fp8-h100-aic-vllm-m256: (0.2362 + 0.3139) / 2 = 0.27505; -m512: (0.2381 + 0.338) / 2 = 0.28805;
    # 300 tokens sit log2(300 / 256) = 0.2288 of the octave from 256 to 512: 0.27505 + 0.2288 · (0.28805 − 0.27505)
    import math

    import pytest

    x = 10 ** (10 + 0.125)
    at256, at512 = (0.2362 + 0.3139) / 2, (0.2381 + 0.338) / 2
    by_hand = at256 + math.log2(300 / 256) * (at512 - at256)
    look = efficiency_table().lookup("gemm", H100, x, dtype="fp8", engine="vllm", m_tokens=300)
    assert look.source == "gemm-fp8-h100-aic-vllm-m256"  # the nearest M names the family
    assert look.frac == pytest.approx(by_hand, rel=1e-3)
    # at a row's own M, the row itself
    assert efficiency_table().lookup("gemm", H100, x, dtype="fp8", engine="vllm", m_tokens=256).frac == pytest.approx(
        at256, rel=1e-4
    )
    # training and engine-free lookups give no M and keep their curves
    assert efficiency_table().lookup("gemm", H100, x, dtype="fp8").source == "gemm-fp8-h100-deepgemm"


#: a per-shape fused-MoE row of engine e1 on a made-up part, points at 64 and 1,024 tokens
MOE_SHAPE_ROW = {
    "kind": "moe_shape",
    "accelerators": ["x-part"],
    "dtype": "fp8",
    "provenance": "measured",
    "engine": "e1",
    "cross_check": True,
    "points": [[64, 0.01], [1024, 0.1]],
}
SHAPE_EP8 = (4096, 1536, 128, 8, 1, 8)


def test_moe_shape_rows_serve_only_their_exact_shape() -> None:
    a = _curve({**MOE_SHAPE_ROW, "id": "a", "moe_shape": list(SHAPE_EP8)})
    b = _curve({**MOE_SHAPE_ROW, "id": "b", "moe_shape": [4096, 1536, 128, 8, 1, 4]})
    t = EfficiencyTable([a, b])
    look = t.lookup("moe_shape", "x-part", 256, dtype="fp8", engine="e1", moe_shape=(4096, 1536, 128, 8, 1, 4))
    # linear in log10(tokens): 256 is half-way from 64 to 1,024 in log10 -> (0.01 + 0.1) / 2
    assert (look.source, look.frac) == ("b", pytest.approx(0.055))
    # another split, no shape, or no engine: no row
    from aiinfra.analytic.efficiency import NO_DATA

    other = (4096, 1536, 128, 8, 2, 1)
    assert t.lookup("moe_shape", "x-part", 256, dtype="fp8", engine="e1", moe_shape=other).source == NO_DATA
    assert t.lookup("moe_shape", "x-part", 256, dtype="fp8", engine="e1").source == NO_DATA
    assert t.lookup("moe_shape", "x-part", 256, dtype="fp8", moe_shape=SHAPE_EP8).source == NO_DATA


def _release_rows(**extra: object) -> EfficiencyTable:
    """Two rows at one shape: ``later`` names no release, ``older`` (second in file order) ``extra``."""
    row = {**MOE_SHAPE_ROW, "moe_shape": list(SHAPE_EP8)}
    later = _curve({**row, "id": "later", "points": [[64, 0.02], [1024, 0.2]]})
    return EfficiencyTable([later, _curve({**row, "id": "older", **extra})])


def test_release_rows_serve_only_lookups_stating_a_release_in_their_range() -> None:
    t = _release_rows(releases={"from_version": "0.8.3", "below_version": "0.8.5"})

    def source(release: tuple[int, ...] | None) -> str:
        return t.lookup(
            "moe_shape", "x-part", 256, dtype="fp8", engine="e1", moe_shape=SHAPE_EP8, release=release
        ).source

    # in range: the release's own row, though the other row comes first in file order
    assert source((0, 8, 3)) == "older"
    assert source((0, 8, 4)) == "older"
    # outside the range, or no release stated (the engine's current one): the row naming none
    assert source((0, 8, 5)) == "later"
    assert source((0, 8, 2)) == "later"
    assert source(None) == "later"


@pytest.mark.parametrize(
    "bad",
    [
        {"from_version": "0.8.5", "below_version": "0.8.3"},
        {"from_version": "0.8.3"},
        {"from_version": "latest", "below_version": "0.8.5"},
        ["0.8.3", "0.8.4"],
    ],
)
def test_bad_release_range_names_the_row_and_the_fix(bad: object) -> None:
    with pytest.raises(DataError, match=r"efficiency row older: releases .* must give from_version and a later"):
        _release_rows(releases=bad)


SCOUT_EP4_256_TOKENS = [
    # (engine, weights, catalog dense peak of that dtype, the row's fraction at 256 tokens):
    # moe-fp8-h100-h5120-i8192-e16-k1-tp1-ep4-aic-trtllm and moe-bf16-h100-h5120-i8192-e16-k1-tp1-ep4-aic-vllm
    ("trtllm", "fp8", 1978.9e12, 0.03943),
    ("vllm", "bf16", 989.4e12, 0.03791),
]


@pytest.mark.parametrize(("engine", "weights", "peak_flop_per_s", "frac"), SCOUT_EP4_256_TOKENS)
def test_scout_experts_take_the_engines_measured_op_at_their_shape(
    engine: str, weights: str, peak_flop_per_s: float, frac: float
) -> None:
    # one layer of Llama 4 Scout's 16 experts split 4 ways over 256 tokens is 2·256·1·3·5120·8192/4 FLOP per rank,
    # priced by hand at the fraction the engine's own fused-MoE row gives at that shape and split
    flop = 2 * 256 * 1 * 3 * 5120 * 8192 / 4
    assert _scout_ep4(engine, weights).experts(256.0, 1.0).compute_s == pytest.approx(
        flop / (peak_flop_per_s * frac), rel=1e-4
    )


def test_shape_rows_serve_only_their_engine_and_adopted_dtype() -> None:
    # TensorRT-LLM's FP8 row does not price a vLLM scenario, and vLLM's FP8 fused-MoE table was not adopted
    # (bench/aic_efficiency_moe_shapes.py), so vLLM FP8 keeps the shape-blind grouped-GEMM curve
    flop = 2 * 256 * 1 * 3 * 5120 * 8192 / 4
    vllm_fp8 = _scout_ep4("vllm", "fp8").experts(256.0, 1.0).compute_s
    assert vllm_fp8 != pytest.approx(flop / (1978.9e12 * 0.03943), rel=1e-2)
    assert (
        efficiency_table()
        .lookup("moe_shape", H100, 256, dtype="fp8", engine="vllm", moe_shape=(5120, 8192, 16, 1, 1, 4))
        .source
        == NO_DATA
    )


def _scout_ep4(engine: str, weights: str) -> InferenceModel:
    """Llama 4 Scout on 4 H100: attention DP, experts split 4 ways."""
    from aiinfra import catalog
    from aiinfra.catalog.resolve import cluster_for

    return InferenceModel(
        model=catalog.model("meta-llama-4-scout"),
        cluster=cluster_for(H100, 4),
        tp=4,
        ep=4,
        weight_precision=weights,
        attention_dp=True,
        engine=engine,
    )
