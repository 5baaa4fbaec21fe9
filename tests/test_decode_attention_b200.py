"""MLA decode attention is one batched kernel over every sequence's latent cache: its compute is priced at the
attention curve's best measured point (InferenceModel._decode_attention_eff; FlashMLA decode 580 TFLOP/s on H800 =
0.59 of 989), not at the short-prefill end of a context-attention curve — the cause of DeepSeek-V3's small
B200-over-H200 gain."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.specs.scenario import HardwareInput

B200, H200 = "nvidia-b200-sxm-180gb", "nvidia-h200-sxm-141gb"


def _model(acc: str) -> InferenceModel:
    cl = resolve_cluster(HardwareInput(accelerator=acc, count=8, per_node=8))
    return InferenceModel(
        model=catalog.model("deepseek-v3"), cluster=cl, tp=8, weight_precision="fp8", kv_precision="fp8", engine="vllm"
    )


def test_b200_decode_attention_compute_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    # the attention op alone: the absorbed matmul pair around it is priced apart (test_mla_bmm.py)
    monkeypatch.setattr("aiinfra.analytic.inference.mla_bmm_fraction", lambda *a: None)
    # absorbed MLA decode: d_qk = 128 x (512 + 64) = 73,728, d_v = 128 x 512 = 65,536 per pair; 64 sequences x 1,150
    # cached tokens, 61 layers, heads split 8 ways: 2 x 61 x 73,600 x 139,264 / 8 = 1.563e11 FLOP; AIConfigurator's
    # B200 context-attention curve peaks at 0.4867 of the 2,250 TFLOP/s bf16 peak -> 0.143 ms
    bd = _model(B200).breakdown(StepBatch(decode_seqs=64, decode_context_tokens=64 * 1150))
    flop = 2 * 61 * 64 * 1150 * (128 * 576 + 128 * 512) / 8
    assert _model(B200)._decode_attention_eff() == pytest.approx(0.4867)
    # the attention term is the larger of that compute and the latent-cache read, never the 2.9 ms the short-prefill
    # end of the curve (0.0243) gave
    assert bd.attention_s >= flop / (2250e12 * 0.4867)
    assert bd.attention_s < 1.0e-3


def test_b200_decode_step_gains_over_h200() -> None:
    # 64 decoding sequences: the routed experts are the step's largest term. The H200 streams them at its measured
    # ragged grouped-GEMM rate (efficiency_moe_decode.yaml, 0.59-0.65 of 4.8 TB/s); the B200 has no grouped
    # measurement and keeps its dense streaming fit, so the experts' ratio is above the 8 / 4.8 bandwidth ratio.
    # Fixed per-kernel and all-reduce times (measured slower on the B200 at this size) keep the step gain below
    # the experts' own ratio
    batch = StepBatch(decode_seqs=64, decode_context_tokens=64 * 1150)
    b = _model(B200).breakdown(batch).time_s
    h = _model(H200).breakdown(batch).time_s
    experts = _model(H200).experts(64, 58).time_s / _model(B200).experts(64, 58).time_s
    assert experts > 8.0 / 4.8
    assert 1.25 < h / b < experts
