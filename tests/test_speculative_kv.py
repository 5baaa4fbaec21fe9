"""Speculative decoding's verify pass reads each context's KV once (Leviathan et al. 2023 §3; Chen et al.
2023): the target model scores γ + 1 query positions per sequence in one forward, so weights and the KV
cache are read once while the linear-layer tokens and attention query·key pairs grow with γ + 1."""

from __future__ import annotations

import dataclasses

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch
from aiinfra.catalog.resolve import cluster_for
from aiinfra.planning.inference import _decode_cycle_s
from aiinfra.sim.run import SpeculativeStep
from aiinfra.specs.common import validate
from aiinfra.specs.workload import ServingWorkload

# Llama-3.1-8B (HF config): 32 layers, 8 KV heads × head_dim 128; bf16 KV → K and V, 2 B each:
# 2 · 32 · 8 · 128 · 2 = 131,072 B per token
KV_BYTES_PER_TOKEN = 2 * 32 * 8 * 128 * 2


def _im() -> InferenceModel:
    return InferenceModel(model=catalog.model("meta-llama-3.1-8b"), cluster=cluster_for("nvidia-h100-sxm5-80gb", 1))


def test_verify_batch_hand_counts() -> None:
    # 4 sequences × 1000 context tokens, γ = 3 → 4 query positions each
    v = StepBatch.decode(4, 1000).verify(3)
    assert (v.decode_seqs, v.decode_queries_per_seq, v.decode_tokens, v.tokens) == (4, 4, 16, 16)
    assert v.decode_context_tokens == 4000
    # query j of a sequence attends 1000 + j keys: 4 · (4·1000 + 0+1+2+3) = 16,024 pairs
    assert v.decode_attention_pairs == 16_024.0


def test_verify_reads_kv_once_hand_calculation() -> None:
    im = _im()
    assert im.kv_bytes_per_token_per_accelerator == KV_BYTES_PER_TOKEN
    plain = StepBatch.decode(4, 1000)
    # bytes read = 4 sequences · 1000 tokens · 131,072 B = 524,288,000 B, for plain decode and for the verify
    # pass alike (the old count multiplied by γ + 1 = 4: 2,097,152,000 B)
    assert im.decode_kv_read_bytes_per_accelerator(plain) == 524_288_000
    assert im.decode_kv_read_bytes_per_accelerator(plain.verify(3)) == 524_288_000


def test_planner_and_simulator_price_the_same_verify_step() -> None:
    # `aiinfra infer` (_decode_cycle_s) and the simulator (SpeculativeStep) must price the same target pass:
    # with no draft model both are exactly iteration_time_s(step.verify(γ))
    im = _im()
    wl = validate(
        ServingWorkload,
        {"input_tokens": 1000, "output_tokens": 200, "speculative": {"num_draft_tokens": 3, "acceptance_rate": 0.7}},
    )
    decode = StepBatch(decode_seqs=8, decode_context_tokens=8000)
    cycle_s, tokens = _decode_cycle_s(im, im.cluster, wl, decode, 8)
    sim_s = SpeculativeStep(im, 3).iteration_time_s(decode)
    assert cycle_s == sim_s == im.iteration_time_s(decode.verify(3))
    # with prompts in the step the planner prices the steady state: the same verify pass, averaged over a Poisson
    # count k of whole 1,000-token prompts with the step's mean 100 / 1,000 = 0.1, as the simulator meets them one
    # by one: Σ_k e^-0.1 0.1^k / k! · t(verify pass + k prompts), k = 0 … 10 (the rest is below 1e-17)
    import math

    step = StepBatch(prefill_tokens=100, prefill_attention_pairs=5050.0, decode_seqs=8, decode_context_tokens=8000)
    cycle_s, _ = _decode_cycle_s(im, im.cluster, wl, step, 8)
    decode_verify = StepBatch(decode_seqs=8, decode_context_tokens=8000).verify(3)
    by_hand = sum(
        math.exp(-0.1)
        * 0.1**k
        / math.factorial(k)
        * im.iteration_time_s(
            dataclasses.replace(decode_verify, prefill_tokens=1000 * k, prefill_attention_pairs=k * 1000 * 1001 / 2)
        )
        for k in range(11)
    )
    assert cycle_s == pytest.approx(by_hand, rel=1e-9)
    # (1 − 0.7^4) / (1 − 0.7) = 2.533 tokens per target step (Leviathan et al. 2023, eq. 1)
    assert tokens == pytest.approx((1 - 0.7**4) / 0.3)


def test_verify_step_costs_less_than_reading_kv_four_times() -> None:
    # batch 1, 8k context on one H100: decode is memory-bound. Reading the 8192 · 131,072 B = 1.07 GB of KV
    # four times would add 3 · 1.07 GB / 3.35 TB/s ≈ 0.96 ms; reading it once adds only the extra compute
    im = _im()
    one = StepBatch.decode(1, 8192)
    extra_s = im.iteration_time_s(one.verify(3)) - im.iteration_time_s(one)
    three_more_reads_s = 3 * 8192 * KV_BYTES_PER_TOKEN / im.cluster.accelerator.memory_bw_bytes_per_s
    assert 0.0 <= extra_s < 0.25 * three_more_reads_s


def test_mixed_query_counts_cannot_be_added() -> None:
    with pytest.raises(ValueError):
        _ = StepBatch.decode(2, 10).verify(3) + StepBatch.decode(1, 10)
    # a prefill-only batch keeps the decode part's query count
    assert (StepBatch.prefill(5) + StepBatch.decode(2, 10).verify(3)).decode_queries_per_seq == 4
