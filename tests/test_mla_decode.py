"""Absorbed-MLA decode attention, and SGLang 0.4.5's absorbed MLA prefill, at the serving engine's own measured op
(catalog efficiency_aic_mla.yaml, bench/aic_efficiency_mla.py, analytic/kernel_time.py ``mla_decode_fraction`` and
``mla_prefill_absorbed_fraction``), and the fallback elsewhere."""

from __future__ import annotations

import math
import statistics
from typing import Any

import pytest

from .conftest import node_model

H200 = "nvidia-h200-sxm-141gb"
H200_BW = 4.8e12
BF16_PEAK = 989.4e12

#: catalog row mla-decode-bf16-h200-aic-sglang-h16, its point at 1.2080e9 latent bytes (9 x 2^27: the median of the
#: SGLang 0.5.6.post2 H200 shapes of 16 local heads whose bytes round to 2^30)
SGLANG_H200_H16_AT_1_208E9 = 0.8496


def _deepseek(engine: str | None, kv_precision: str = "bf16", **kw: Any) -> Any:
    """DeepSeek-V3 FP8 at tp 8 on one H200 node (``kw``: e.g. ``engine_version``)."""
    return node_model("deepseek-v3", H200, weight_precision="fp8", engine=engine, kv_precision=kv_precision, **kw)


def _row_points(row_id: str) -> list[list[float]]:
    from pathlib import Path

    import yaml

    import aiinfra

    path = Path(aiinfra.__file__).parent / "catalog" / "data" / "efficiency_aic_mla.yaml"
    rows = {r["id"]: r for r in yaml.safe_load(path.read_text())}
    points: list[list[float]] = rows[row_id]["points"]
    return points


#: AIConfigurator h200_sxm/mla/sglang/0.5.6.post2/generation_mla_perf.parquet (commit 095f58a), bf16 cache, 128 local
#: heads, the seven shapes whose latent bytes round to 2^31: (sequences, step, latency ms). Each reads
#: 9 x 2^28 = 2.4159e9 B in 0.5903 ms at the bf16 peak (compute-bound), so 0.5903 / 0.930160 = 0.6347, the median
SGLANG_H200_H128_AT_2_31 = [
    (16, 131071, 0.916192),
    (32, 65535, 0.925787),
    (64, 32767, 0.919250),
    (128, 16383, 0.930160),
    (256, 8191, 0.974925),
    (512, 4095, 1.026352),
    (1024, 2047, 1.089666),
]
#: AIConfigurator b200_sxm/mla/sglang/0.5.9/generation_mla_perf.parquet (commit 095f58a; kernel_source trtllm_mla, the
#: backend SGLang 0.5.6 picks for DeepSeek-V3 on SM100), bf16 cache, 16 local heads, the sixteen shapes whose latent
#: bytes round to 2^30 (eight sequence counts, each timed at two tp sizes). Each reads 9 x 2^27 = 1.2080e9 B in
#: 0.15099 ms at 8 TB/s (memory-bound); the median latencies 0.227474 / 0.227976 ms give 0.6638 / 0.6623: 0.6631
SGLANG_B200_H16_AT_2_30 = [
    (8, 131071, 0.224114),
    (16, 65535, 0.227474),
    (32, 32767, 0.228965),
    (64, 16383, 0.231349),
    (128, 8191, 0.227106),
    (256, 4095, 0.227312),
    (512, 2047, 0.232075),
    (1024, 1023, 0.225763),
    (8, 131071, 0.222954),
    (16, 65535, 0.228323),
    (32, 32767, 0.227976),
    (64, 16383, 0.230221),
    (128, 8191, 0.228720),
    (256, 4095, 0.226811),
    (512, 2047, 0.230864),
    (1024, 1023, 0.227043),
]


@pytest.mark.parametrize(
    ("row_id", "heads", "shapes", "nbytes", "bw_bytes_per_s", "peak_flop_per_s", "expected"),
    [
        ("mla-decode-bf16-h200-aic-sglang-h128", 128, SGLANG_H200_H128_AT_2_31, 9 * 2**28, H200_BW, BF16_PEAK, 0.6347),
        ("mla-decode-bf16-b200-aic-sglang-h16", 16, SGLANG_B200_H16_AT_2_30, 9 * 2**27, 8e12, 2250e12, 0.6631),
    ],
)
def test_sglang_point_is_the_median_roofline_fraction_of_its_shapes(
    row_id: str,
    heads: int,
    shapes: list[tuple[int, int, float]],
    nbytes: int,
    bw_bytes_per_s: float,
    peak_flop_per_s: float,
    expected: float,
) -> None:
    # SGLang's collector attends step + 1 tokens; a call reads sequences x tokens x 576 x 2 B and does
    # 2 x sequences x heads x tokens x (576 + 512) FLOP; fraction = max(read time, FLOP time) / latency
    fracs = []
    for seqs, step, latency_ms in shapes:
        ctx = step + 1
        assert seqs * ctx * 576 * 2 == nbytes
        flop = 2 * seqs * heads * ctx * (576 + 512)
        fracs.append(max(nbytes / bw_bytes_per_s, flop / peak_flop_per_s) / (latency_ms * 1e-3))
    assert statistics.median(fracs) == pytest.approx(expected, abs=1e-4)
    at = [y for x, y in _row_points(row_id) if x == pytest.approx(nbytes, rel=1e-4)]
    assert at == [pytest.approx(expected, abs=1e-4)]


def test_every_row_stays_under_its_roofline() -> None:
    from pathlib import Path

    import yaml

    import aiinfra

    path = Path(aiinfra.__file__).parent / "catalog" / "data" / "efficiency_aic_mla.yaml"
    rows = yaml.safe_load(path.read_text())
    assert {r["engine"] for r in rows} == {"sglang", "trtllm"}
    assert all(0.0 < y <= 1.0 for r in rows for _, y in r["points"])


def test_deepseek_decode_under_sglang_reads_the_latent_at_the_measured_fraction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the attention op alone: the absorbed matmul pair and the release's copies around it are priced apart
    # (test_mla_bmm.py)
    monkeypatch.setattr("aiinfra.analytic.inference.mla_bmm_fraction", lambda *a: None)
    monkeypatch.setattr("aiinfra.analytic.inference.InferenceModel._mla_copies_s", lambda *a: 0.0)
    from aiinfra.analytic.kernel_time import memory_fit
    from aiinfra.analytic.step_time import StepBatch

    # DeepSeek-V3 (61 layers, 128 heads, latent 512 + rope 64) at tp 8 on H200, SGLang, 128 sequences of 8,192
    # tokens: each rank holds the whole latent and 16 heads; one layer's call reads 128 * 8192 * 576 * 2 B
    # = 1.2080e9 B (a point of the curve), at 30 FLOP/B (memory-bound: the ridge is 989.4 / 4.8 = 206)
    per_call = 128 * 8192 * 576 * 2
    assert per_call == pytest.approx(1.2080e9, rel=1e-4)
    flop_per_byte = 2 * 16 * (576 + 512) / (576 * 2)
    assert flop_per_byte < BF16_PEAK / H200_BW
    frac = SGLANG_H200_H16_AT_1_208E9
    read_s = 61 * per_call / H200_BW  # 15.35 ms
    assert read_s == pytest.approx(15.352e-3, rel=1e-3)
    im = _deepseek("sglang")
    t0, _ = memory_fit(im.cluster.tables, im.cluster.accelerator, "sglang")
    assert 0.0 < t0 < 10e-6
    # the op includes the new token's latent write, priced among the element-wise kernels: t0 per layer off
    expected_s = read_s / frac - 61 * t0
    assert im.breakdown(StepBatch.decode(128, 8192)).attention_s == pytest.approx(expected_s, rel=1e-3)


def test_vllm_and_an_fp8_cache_keep_the_streaming_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # the attention op alone: the absorbed matmul pair and the release's copies around it are priced apart
    # (test_mla_bmm.py)
    monkeypatch.setattr("aiinfra.analytic.inference.mla_bmm_fraction", lambda *a: None)
    monkeypatch.setattr("aiinfra.analytic.inference.InferenceModel._mla_copies_s", lambda *a: 0.0)
    from aiinfra.analytic.kernel_time import memory_fit, mla_decode_fraction
    from aiinfra.analytic.step_time import StepBatch

    im = _deepseek("vllm")
    acc = im.cluster.accelerator
    # no vLLM table is used (bench/aic_efficiency_mla.py: eager host floor, another backend) nor any without an engine
    assert mla_decode_fraction(im.cluster.tables, acc, "vllm", 1.2e9, 16) is None
    assert mla_decode_fraction(im.cluster.tables, acc, None, 1.2e9, 16) is None
    assert mla_decode_fraction(im.cluster.tables, acc, "sglang", 1.2e9, 16) is not None
    # an fp8 latent cache under SGLang (the tables time a bf16 cache): 61 layers of 128 * 8192 * 576 * 1 B read at
    # the streaming fit t0 + bytes / B∞, memory-bound as before
    fp8 = _deepseek("sglang", kv_precision="fp8")
    t0, b_inf = memory_fit(fp8.cluster.tables, acc, "sglang")
    expected_s = 61 * t0 + 61 * 128 * 8192 * 576 / b_inf
    assert fp8.breakdown(StepBatch.decode(128, 8192)).attention_s == pytest.approx(expected_s, rel=1e-6)


#: catalog row mla-prefill-absorbed-bf16-h200-aic-sglang-h16, its points around 1.17e12 FLOP a call
SGLANG_H200_PREFILL_H16 = ((5.8526e11, 0.5488), (1.1694e12, 0.5677))


def test_sglang_prefill_point_is_the_median_absorbed_fraction_of_its_shapes() -> None:
    # AIConfigurator h200_sxm/mla/sglang/0.5.6.post2/context_mla_perf.parquet (commit 095f58a), bf16 cache, 16 local
    # heads (collected at tp 4 and tp 8), fresh causal prompts whose absorbed-form FLOP rounds to 2^40:
    # (prompts, tokens, latency ms)
    shapes = [
        (1, 8192, 1.761397),
        (2, 6144, 2.343872),
        (4, 4096, 1.892243),
        (8, 3072, 2.170141),
        (16, 2048, 2.077840),
        (32, 1536, 2.561982),
        (64, 1024, 2.659794),
        (1, 8192, 1.734979),
        (2, 6144, 1.966379),
        (4, 4096, 1.882317),
        (8, 3072, 2.556880),
        (16, 2048, 2.125757),
        (32, 1536, 2.521696),
        (64, 1024, 2.632635),
    ]
    flops = [2 * b * n * (n + 1) / 2 * 16 * (576 + 512) for b, n, _ in shapes]
    fracs = [f / (ms * 1e-3) / BF16_PEAK for f, (_, _, ms) in zip(flops, shapes, strict=True)]
    # e.g. one 8,192-token prompt: 2 * 33,558,528 pairs * 16 * 1088 = 1.1684e12 FLOP in 1.761 ms = 0.670 of the peak;
    # the 192 / 128 form would count 3.4x fewer FLOP (0.20), far below FlashAttention-3: the table times the
    # absorbed form
    assert fracs[0] == pytest.approx(0.6704, abs=1e-4)
    x, y = SGLANG_H200_PREFILL_H16[1]
    assert statistics.median(flops) == pytest.approx(x, rel=1e-4)
    assert statistics.median(fracs) == pytest.approx(y, abs=1e-4)
    assert [x, y] in _row_points("mla-prefill-absorbed-bf16-h200-aic-sglang-h16")


def test_sglang_045_absorbed_prefill_runs_at_the_measured_fraction(monkeypatch: pytest.MonkeyPatch) -> None:
    # the attention op alone: the absorbed matmul pair and the release's copies around it are priced apart
    # (test_mla_bmm.py)
    monkeypatch.setattr("aiinfra.analytic.inference.mla_bmm_fraction", lambda *a: None)
    monkeypatch.setattr("aiinfra.analytic.inference.InferenceModel._mla_copies_s", lambda *a: 0.0)
    from aiinfra.analytic.step_time import StepBatch

    # SGLang 0.4.5.post1 runs a fresh prompt's MLA prefill on the absorbed latent (engines.yaml mla_absorbed_prefill):
    # one 8,192-token prompt at tp 8 on H200, 16 heads a rank, 2 * 8192 * 8193 / 2 * 16 * 1088 = 1.1684e12 FLOP per
    # layer, between the row's points at 5.8526e11 and 1.1694e12 FLOP (linear in log10 FLOP)
    im = _deepseek("sglang", engine_version="0.4.5.post1")
    flop = 2 * 8192 * 8193 / 2 * 16 * 1088
    assert flop == pytest.approx(1.16837e12, rel=1e-5)
    (x0, y0), (x1, y1) = SGLANG_H200_PREFILL_H16
    frac = y0 + (y1 - y0) * math.log10(flop / x0) / math.log10(x1 / x0)
    expected_s = 61 * flop / (BF16_PEAK * frac)  # 61 layers: about 0.127 s
    assert expected_s == pytest.approx(0.1270, rel=1e-2)
    assert im.breakdown(StepBatch.prefill(8192)).attention_s == pytest.approx(expected_s, rel=1e-3)
