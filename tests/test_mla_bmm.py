"""The absorbed-MLA path around the attention op: the matmul pair (W_UK before it, W_UV after it) at the engines' own
measured ops (catalog rows from bench/aic_efficiency_mla_bmm.py, AIConfigurator's mla_bmm tables), the format each
engine runs, the step term (analytic/inference.py ``_mla_bmm_s``) with kv_b_proj taken out of the linear layers where
it prices them, and the releases' extra element-wise kernels (``_mla_copies_s``, engines.yaml
``mla_absorbed_copies``)."""

from __future__ import annotations

import pytest

from aiinfra.analytic.kernel_time import mla_bmm_fraction
from aiinfra.analytic.step_time import StepBatch

from .conftest import node_model

H200 = "nvidia-h200-sxm-141gb"
FP8_PEAK = 1978.9e12  # H200 dense FP8 (accelerators.yaml)
BF16_PEAK = 989.4e12
PAIR_FLOP_PER_TOKEN_HEAD = 2 * 128 * 512 * 2  # W_UK (128 -> 512) and W_UV (512 -> 128), 2 FLOP a weight
# AIConfigurator h200_sxm/mla_bmm/sglang/0.5.6.post2/mla_bmm_perf.parquet, 16 heads, one token, latency in ms:
# mla_gen_pre fp8 0.007600, mla_gen_post fp8 0.007942 (per-tensor quantisation + bmm_fp8 each)
SGLANG_FP8_PAIR_1_TOKEN_S = (0.007600 + 0.007942) * 1e-3
# the same table's vLLM 0.24.0 sibling (torch.bmm, bf16): pre 0.004269, post 0.004330
VLLM_BF16_PAIR_1_TOKEN_S = (0.004269 + 0.004330) * 1e-3


def _r1(engine: str | None, version: str | None = None) -> object:
    kw = {"engine_version": version} if version else {}
    return node_model("deepseek-v3", H200, weight_precision="fp8", engine=engine, **kw)


def test_the_rows_give_back_the_timed_pair() -> None:
    im = _r1("sglang")
    flop = 1 * 16 * PAIR_FLOP_PER_TOKEN_HEAD  # 4,194,304 FLOP: one token, 16 local heads (128 / tp 8)
    frac = mla_bmm_fraction(im.cluster.tables, im.cluster.accelerator, "sglang", flop, 16, "fp8")
    assert frac is not None
    assert flop / (frac * FP8_PEAK) == pytest.approx(SGLANG_FP8_PAIR_1_TOKEN_S, rel=1e-3)
    vllm = mla_bmm_fraction(im.cluster.tables, im.cluster.accelerator, "vllm", flop, 16, "bf16")
    assert vllm is not None
    assert flop / (vllm * BF16_PEAK) == pytest.approx(VLLM_BF16_PAIR_1_TOKEN_S, rel=1e-3)


def test_each_engine_runs_its_own_format_and_none_without_an_engine() -> None:
    # SGLang 0.4.5.post1 re-quantises kv_b_proj per tensor and runs bmm_fp8; from 0.4.7 it dequantises it to bf16
    # (engines.yaml mla_bmm_bf16_from_version), and a run that states no release is the current one
    assert _r1("sglang", "0.4.5.post1")._mla_bmm_dtype == "fp8"
    assert _r1("sglang", "0.4.7")._mla_bmm_dtype == "bf16"
    assert _r1("sglang")._mla_bmm_dtype == "bf16"
    assert _r1("vllm")._mla_bmm_dtype == "bf16"  # bf16 copies of W_UK and W_UV
    assert _r1(None)._mla_bmm_dtype is None
    gqa = node_model("meta-llama-3.1-8b", H200, weight_precision="bf16", engine="sglang", tp=1)
    assert gqa._mla_bmm_dtype is None


def test_a_decode_step_pays_the_pair_once_a_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    # batch 1 under SGLang: 61 layers x (7.600 + 7.942) us = 0.948 ms on top of the attention op alone
    step = StepBatch.decode(1, 1024)
    with_pair = _r1("sglang", "0.4.5.post1").breakdown(step)
    with monkeypatch.context() as mp:
        mp.setattr("aiinfra.analytic.inference.mla_bmm_fraction", lambda *a: None)
        op_only = _r1("sglang", "0.4.5.post1").breakdown(step)
    assert with_pair.attention_s - op_only.attention_s == pytest.approx(61 * SGLANG_FP8_PAIR_1_TOKEN_S, rel=1e-3)
    # kv_b_proj (512 x 128 x 256 per layer, 1/8 per rank) is no longer streamed as a linear layer at decode
    assert with_pair.linear_s < op_only.linear_s


def test_a_prompt_in_the_multi_head_form_keeps_kv_b_proj_as_a_gemm(monkeypatch: pytest.MonkeyPatch) -> None:
    # SGLang 0.4.6 runs a fresh prompt in the multi-head form (engines.yaml mla_absorbed_prefill): no matmul pair,
    # kv_b_proj a GEMM over the prompt's latent as before, now its own kernel a layer (instead of a share of q_b and
    # o_proj's two) at the efficiency of its own, smaller size: its 61 x 2 x 8192 x 512 x 4096 FLOP (2.1 TFLOP) at
    # 0.45-0.7 of the FP8 peak are 1.5-2.4 ms of the stage's ~185 ms, so the linear layers move by under 2 %
    step = StepBatch.prefill(8192)
    im = _r1("sglang", "0.4.6")
    with monkeypatch.context() as mp:
        mp.setattr("aiinfra.analytic.inference.mla_bmm_fraction", lambda *a: None)
        before = _r1("sglang", "0.4.6").breakdown(step)
    after = im.breakdown(step)
    assert after.attention_s == pytest.approx(before.attention_s, rel=1e-9)
    assert after.linear_s == pytest.approx(before.linear_s, rel=0.02)


def test_the_releases_read_pay_their_copies_once_a_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    from aiinfra.analytic.kernel_time import memory_fit

    # SGLang 0.4.5's forward_absorb: 8 kernels a layer moving 6,272 + 1,408 x 16 heads = 28,800 bf16 values a token
    # (engines.yaml); at one decoding sequence, per layer 8 x t0 + 57,600 B at the fitted bandwidth
    im = _r1("sglang", "0.4.5.post1")
    t0, b_inf = memory_fit(im.cluster.tables, im.cluster.accelerator, "sglang")
    expected = 61 * (8 * t0 + (6272 + 1408 * 16) * 2 / b_inf)
    assert 1.5e-3 < expected < 2.5e-3  # t0 about 4 us: the kernels' fixed times, not their bytes, at one token
    step = StepBatch.decode(1, 1024)
    with monkeypatch.context() as mp:
        mp.setattr("aiinfra.analytic.inference.mla_bmm_fraction", lambda *a: None)  # the copies alone
        with_copies = _r1("sglang", "0.4.5.post1").breakdown(step).attention_s
        mp.setattr(type(im), "_mla_copies_s", lambda *a: 0.0)
        without = _r1("sglang", "0.4.5.post1").breakdown(step).attention_s
    assert with_copies - without == pytest.approx(expected, rel=1e-6)
    assert _r1("sglang", "0.4.7")._mla_copies_s(1.0, 61.0) == 0.0  # no release read there: none priced
    # SGLang 0.5.3-0.5.7: q_a_layernorm alone (kv_a_layernorm runs on a second stream in a captured step)
    assert _r1("sglang", "0.5.7")._mla_copies_s(1.0, 61.0) == pytest.approx(61 * (t0 + 3072 * 2 / b_inf))
    # vLLM 0.8.4 (9 kernels a layer); a run that states no release is not priced with a read release's copies
    v0, v_inf = memory_fit(im.cluster.tables, im.cluster.accelerator, "vllm")
    vllm_expected = 61 * (9 * v0 + (19584 + 1664 * 16) * 2 / v_inf)
    assert _r1("vllm", "0.8.4")._mla_copies_s(1.0, 61.0) == pytest.approx(vllm_expected)
    assert _r1("vllm")._mla_copies_s(1.0, 61.0) == 0.0
