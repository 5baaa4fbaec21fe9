"""The decode KV-cache read at the serving engine's own paged decode-attention bandwidth
(catalog efficiency_aic_paged_decode.yaml, analytic/kernel_time.py ``paged_decode_fraction``)."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import node_model

H200 = "nvidia-h200-sxm-141gb"

#: catalog row paged-decode-bf16-h200-aic-vllm-b256 / -b512, their points at 2^28 bytes (AIConfigurator's vLLM 0.14.0
#: H200 generation_attention table: the median fraction of 4.8 TB/s over the shapes of 256 / 512 sequences whose KV
#: bytes round to 2^28)
VLLM_H200_B256_AT_2_28 = 0.6181
VLLM_H200_B512_AT_2_28 = 0.5145


def _one_gpu_model(accelerator: str, engine: str | None) -> Any:
    return node_model("meta-llama-3.1-8b", accelerator, weight_precision="bf16", engine=engine, tp=1)


def _fraction(accelerator: str, engine: str | None, nbytes: float, seqs: float) -> float | None:
    from aiinfra.analytic.kernel_time import paged_decode_fraction

    im = _one_gpu_model(accelerator, engine)
    return paged_decode_fraction(im.cluster.tables, im.cluster.accelerator, engine, nbytes, seqs)


def test_llama_8b_decode_step_reads_kv_at_the_vllm_kernel_fraction() -> None:
    from aiinfra.analytic.kernel_time import memory_fit
    from aiinfra.analytic.step_time import StepBatch

    # Llama-3.1-8B (32 layers, 8 KV heads of 128) on one H200 under vLLM, 256 sequences of 256 cached tokens:
    # one layer's call reads 256 * 256 * 8 * 128 * 2 (K, V) * 2 B = 2^28 B, at 0.6181 of 4.8 TB/s
    # -> 2^28 / (0.6181 * 4.8e12) = 90.48 us per layer, 32 layers = 2.8953 ms; the timed op includes the KV-cache
    # write, which the step prices among its element-wise kernels, so one streaming-kernel fixed time t0 per layer
    # comes off (the step's attention is this read: its 2 * 32 * 256 * 256 * 8192 = 3.4e10 FLOP take about 0.1 ms)
    per_layer_bytes = 256 * 256 * 8 * 128 * 2 * 2
    assert per_layer_bytes == 2**28
    read_s = 32 * per_layer_bytes / (VLLM_H200_B256_AT_2_28 * 4.8e12)
    assert read_s == pytest.approx(2.8953e-3, rel=1e-4)
    im = _one_gpu_model(H200, "vllm")
    t0, _ = memory_fit(im.cluster.tables, im.cluster.accelerator, "vllm")
    assert 0.0 < t0 < 10e-6
    expected_s = read_s - 32 * t0
    assert im.breakdown(StepBatch.decode(256, 256)).attention_s == pytest.approx(expected_s, rel=1e-3)


def test_fraction_interpolates_in_log2_of_the_sequence_count() -> None:
    # 362 sequences = 2^8.5: halfway (in log2) between the 256- and 512-sequence rows
    got = _fraction(H200, "vllm", 2.0**28, 362.0)
    assert got == pytest.approx((VLLM_H200_B256_AT_2_28 + VLLM_H200_B512_AT_2_28) / 2.0, rel=2e-3)


def test_the_paged_kernel_reads_slower_than_the_gemv_streaming_fit() -> None:
    from aiinfra.analytic.kernel_time import memory_fit

    # the streaming fit gives a 2^28 B kernel above 0.8 of the bandwidth; vLLM's paged kernel at 256 sequences 0.62
    im = _one_gpu_model(H200, "vllm")
    t0, b_inf = memory_fit(im.cluster.tables, im.cluster.accelerator, "vllm")
    gemv_frac = 2.0**28 / (t0 + 2.0**28 / b_inf) / 4.8e12
    assert gemv_frac > 0.8
    assert _fraction(H200, "vllm", 2.0**28, 256.0) == pytest.approx(VLLM_H200_B256_AT_2_28, rel=1e-4)


@pytest.mark.parametrize(
    ("accelerator", "engine"),
    [
        (H200, None),  # no engine: the streaming fit
        (H200, "trtllm"),  # no TensorRT-LLM table passed the HBM-bandwidth check: the streaming fit
        ("amd-mi300x", "vllm"),  # no curve on the part or its family
        ("nvidia-b200-sxm-180gb", "sglang"),
    ],
)
def test_no_own_curve_keeps_the_streaming_fit(accelerator: str, engine: str | None) -> None:
    assert _fraction(accelerator, engine, 2.0**28, 256.0) is None


def test_h100_family_part_borrows_and_sglang_has_its_own_curve() -> None:
    # the H100 PCIe (family nvidia-h100) takes the H100 SXM rows; SGLang's rows differ from vLLM's
    pcie = _fraction("nvidia-h100-pcie-80gb", "vllm", 2.0**28, 256.0)
    sxm = _fraction("nvidia-h100-sxm5-80gb", "vllm", 2.0**28, 256.0)
    assert pcie is not None and pcie == pytest.approx(sxm)
    # rows paged-decode-bf16-h200-aic-{sglang,vllm}-b256 at 2^27 B: 0.4692 (SGLang 0.5.10) and 0.4627 (vLLM 0.14.0)
    assert _fraction(H200, "sglang", 2.0**27, 256.0) == pytest.approx(0.4692, rel=1e-3)
    assert _fraction(H200, "vllm", 2.0**27, 256.0) == pytest.approx(0.4627, rel=1e-3)


def test_the_measured_op_covers_the_decode_flop_of_a_wide_query_group() -> None:
    from dataclasses import replace

    from aiinfra.analytic.kernel_time import memory_fit
    from aiinfra.analytic.step_time import StepBatch

    # The same step with 256 query heads over its 8 KV heads (32 a group, 8x Llama-3.1-8B's 32 query heads):
    # the paged op reads the same 2^28 B a layer, and its query heads share each KV read, so the op's measured time
    # stands for its FLOP too: 2 * 32 layers * 256 * 256 * (256 * 128 * 2) = 2.7e11 FLOP, which at the 0.0491 of
    # 989 TFLOP/s the context-attention curve gives a call this small would take 5.7 ms, twice the read; priced as
    # the op, the step's attention stays the read of the test above
    im = _one_gpu_model(H200, "vllm")
    wide = replace(im, model=replace(im.model, num_heads=256))
    t0, _ = memory_fit(im.cluster.tables, im.cluster.accelerator, "vllm")
    read_s = 32 * 2**28 / (VLLM_H200_B256_AT_2_28 * 4.8e12)
    assert wide.breakdown(StepBatch.decode(256, 256)).attention_s == pytest.approx(read_s - 32 * t0, rel=1e-3)


def test_vllm_b200_curve_is_flashinfers_median_fraction() -> None:
    # AIConfigurator b200_sxm/attention/vllm/0.19.0/generation_attention_perf.parquet (commit 095f58a; kernel_source
    # vllm_flashinfer, the backend vLLM picks on SM100), 64 sequences, bf16 KV, head dim 128, the fourteen shapes whose
    # KV bytes (64 x step x kv heads x 128 x 2 x 2 B) round to 2^30: (step, kv heads, latency ms)
    shapes = [
        (4095, 8, 0.155259),
        (4095, 8, 0.155157),
        (8191, 4, 0.153824),
        (4095, 8, 0.154411),
        (8191, 4, 0.154133),
        (16383, 2, 0.155301),
        (8191, 4, 0.153952),
        (4095, 8, 0.154779),
        (32767, 1, 0.156965),
        (16383, 2, 0.154528),
        (8191, 4, 0.153424),
        (32767, 1, 0.156395),
        (16383, 2, 0.156427),
        (32767, 1, 0.158048),
    ]
    import statistics

    fracs = [64 * step * kv * 128 * 4 / (lat * 1e-3) / 8e12 for step, kv, lat in shapes]
    nbytes = statistics.median(64 * step * kv * 128 * 4 for step, kv, _ in shapes)
    assert statistics.median(fracs) == pytest.approx(0.8659, abs=1e-4)
    assert _fraction("nvidia-b200-sxm-180gb", "vllm", nbytes, 64.0) == pytest.approx(statistics.median(fracs), rel=1e-3)
