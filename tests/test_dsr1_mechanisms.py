"""DeepSeek-R1 FP8 serving mechanisms (issue 29, docs/serving.md "Step mechanisms"): the engines' block-FP8 fused-MoE
ops at DeepSeek-V3's expert shape, SGLang 0.4.5's MLA prefill on the absorbed latent, MLA's replicated
down-projections and the serving rows' expert / attention layout reaching the simulator. Expected values come from
AIConfigurator's published latencies (aiconfigurator commit 095f58a, systems/data/h200_sxm/moe/<engine>/<version>/
moe_perf.parquet, moe_dtype fp8_block, balanced routing, median) and from dimensions counted by hand."""

from __future__ import annotations

import json

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.mla_terms import mla_replicated_params_per_layer
from aiinfra.analytic.step_time import StepBatch
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.specs.scenario import HardwareInput
from aiinfra.validation.inference_rows import _Served

from .conftest import node_model

H200 = "nvidia-h200-sxm-141gb"


def _model(engine: str | None, version: str | None = None, ep: int = 1, attention_dp: bool = False) -> InferenceModel:
    im: InferenceModel = node_model(
        "deepseek-v3",
        H200,
        weight_precision="fp8",
        engine=engine,
        engine_version=version,
        ep=ep,
        attention_dp=attention_dp,
    )
    return im


@pytest.mark.parametrize(
    ("engine", "ep", "tokens", "measured_ms"),
    [
        # vLLM 0.14.0 fused_experts (Triton, block scales), experts tensor-parallel over 8 ranks
        ("vllm", 1, 1024, 0.599909),
        ("vllm", 1, 8192, 2.328016),
        # the same op with the experts split 8 ways (--enable-expert-parallel): slower at 8,192 tokens
        ("vllm", 8, 8192, 2.961328),
        # SGLang 0.5.9's Triton fused MoE, tensor-parallel experts
        ("sglang", 1, 8192, 1.892724),
        # TensorRT-LLM 1.2.0rc5, experts split 8 ways
        ("trtllm", 8, 8192, 1.40408),
    ],
)
def test_block_fp8_moe_layer_takes_the_engines_measured_time(
    engine: str, ep: int, tokens: int, measured_ms: float
) -> None:
    # FLOP per rank by hand: 2 * T * top-8 * 3 * 7168 * 2048 / 8, e.g. T = 8192: 7.2155e11 FLOP in 2.328 ms
    # = 310 TFLOP/s = 0.157 of the H200's 1978.9 TFLOP/s fp8; the row stores that fraction (4 significant digits)
    # and the planner recovers the time, the longer of it and the weights' streaming (shorter at these tokens)
    assert _model(engine, ep=ep).experts(tokens, 1.0).time_s == pytest.approx(measured_ms * 1e-3, rel=0.01)


def test_the_same_experts_take_longer_split_by_expert_than_by_width_in_vllm() -> None:
    # vLLM 0.14.0 at 8,192 tokens: 2.961 ms with ep 8 against 2.328 ms with tp 8 (27 % longer)
    tp8 = _model("vllm").experts(8192, 1.0).time_s
    ep8 = _model("vllm", ep=8).experts(8192, 1.0).time_s
    assert ep8 / tp8 == pytest.approx(2.961328 / 2.328016, rel=0.02)


# (query-key, value) dimensions summed over DeepSeek-V3's 128 heads: decompressed 128 x (128 + 64) / 128 x 128,
# absorbed latent 128 x (512 + 64) / 128 x 512
MHA_DIMS = (128 * 192, 128 * 128)
ABSORBED_DIMS = (128 * 576, 128 * 512)


@pytest.mark.parametrize(
    ("engine", "version", "chunk", "cached", "dims"),
    [
        # SGLang 0.4.5.post1 (FA3): a fresh prompt runs absorbed
        ("sglang", "0.4.5", 1024, 0, ABSORBED_DIMS),
        # a continuing chunk whose cached prefix is below the 8,192-token threshold: absorbed
        ("sglang", "0.4.5", 1024, 7168, ABSORBED_DIMS),
        # at the threshold: the decompressed form with the prefix in chunks (MHA_CHUNKED_KV)
        ("sglang", "0.4.5", 1024, 8192, MHA_DIMS),
        # releases without a pinned rule, and vLLM, keep the decompressed form
        ("sglang", "0.4.6", 1024, 0, MHA_DIMS),
        ("sglang", None, 1024, 0, MHA_DIMS),
        # vLLM 0.8.4 pads the 128-wide values to the 192-wide query-key heads (engines.yaml mla_prefill_pads_v); 0.8.5
        # runs FA3's 192 / 128 kernel on Hopper
        ("vllm", "0.8.4", 1024, 0, (128 * 192, 128 * 192)),
        ("vllm", "0.8.5", 1024, 0, MHA_DIMS),
    ],
)
def test_mla_prefill_dims_by_release(
    engine: str, version: str | None, chunk: int, cached: int, dims: tuple[int, int]
) -> None:
    im = _model(engine, version)
    assert im.prefill_attention_dims(StepBatch.prefill(chunk, cached)) == dims


def test_absorbed_prefill_does_3_4_times_the_attention_flop(monkeypatch: pytest.MonkeyPatch) -> None:
    # (73,728 + 65,536) / (24,576 + 16,384) = 139,264 / 40,960 = 3.4 per query-key pair; on a 16,384-token fresh
    # prompt (compute-bound, the attention curve's flat end) the attention time follows within the curve's change,
    # with both forms priced on the attention curve (not SGLang's measured absorbed op, test_mla_decode.py) and the
    # absorbed form's matmul pair and copies left out (test_mla_bmm.py)
    monkeypatch.setattr("aiinfra.analytic.inference.mla_prefill_absorbed_fraction", lambda *a: None)
    monkeypatch.setattr("aiinfra.analytic.inference.mla_bmm_fraction", lambda *a: None)
    monkeypatch.setattr("aiinfra.analytic.inference.InferenceModel._mla_copies_s", lambda *a: 0.0)
    step = StepBatch.prefill(16384, 0)
    absorbed = _model("sglang", "0.4.5").breakdown(step).attention_s
    mha = _model("sglang", "0.4.6").breakdown(step).attention_s
    assert absorbed / mha == pytest.approx(3.4, rel=0.05)


def test_mla_down_projections_are_replicated_on_every_tp_rank() -> None:
    # q_a 7168 x 1536 plus kv_a 7168 x (512 + 64) = 7168 x 2112 = 15,138,816 weights per layer
    assert mla_replicated_params_per_layer(catalog.model("deepseek-v3")) == 7168 * 2112
    assert mla_replicated_params_per_layer(catalog.model("meta-llama-3.1-8b")) == 0.0


def test_replicated_down_projections_lengthen_a_tp8_prefill(monkeypatch: pytest.MonkeyPatch) -> None:
    # at tp 8 each rank runs the 15.1 M replicated weights on all 8,192 tokens instead of 1/8 of them: 7/8 x 2 x
    # 8192 x 15,138,816 x 61 layers = 1.326e13 more FLOP per rank, at least 6.7 ms at the 1978.9 TFLOP/s fp8 peak,
    # and at most that at the least efficient fp8 GEMM rate the catalog gives these shapes (above 0.3 of the peak in
    # vLLM's burst-timed table) sustained at the 700 W limit (x 0.87, burst_matmul_sustained_frac: 8,192 rows are
    # far above the H200's 206-row ridge)
    step = StepBatch.prefill(8192, 0)
    with_term = _model("vllm", "0.8.4").breakdown(step).linear_s
    monkeypatch.setattr("aiinfra.analytic.inference.mla_replicated_params_per_layer", lambda m: 0.0)
    split = _model("vllm", "0.8.4").breakdown(step).linear_s
    extra_flop = 7 / 8 * 2 * 8192 * 7168 * 2112 * 61
    assert extra_flop / 1978.9e12 <= with_term - split <= extra_flop / (0.3 * 0.87 * 1978.9e12)


def test_simulated_rows_carry_the_runs_expert_and_attention_layout() -> None:
    served = _Served(
        catalog.model("deepseek-v3"),
        H200,
        8,
        8,
        1,
        "fp8",
        "bf16",
        "sglang",
        1000,
        100,
        "0.4.5",
        1,
        ep=8,
        attention_dp=True,
    )
    plan = json.loads(served.scenario(replicas=1))["inference"]["plan"]
    assert plan == {"tp": 8, "pp": 1, "ep": 8, "attention_dp": True, "replicas": 1}
    plain = _Served(catalog.model("deepseek-v3"), H200, 8, 8, 1, "fp8", "bf16", "vllm", 1000, 100)
    assert json.loads(plain.scenario())["inference"]["plan"] == {"tp": 8, "pp": 1}


def test_replicated_down_projections_are_held_whole_on_every_rank() -> None:
    # DeepSeek-V3 FP8 at tp 8: the split gives each rank 1/8 of the 15,138,816 q_a/kv_a weights of each of 61
    # layers; held whole, each rank keeps the other 7/8 too: 61 x 15,138,816 x 7/8 x 1 byte = 808,023,304 bytes more
    im = _model(None)
    split_only = im.weight_bytes_per_replica / 8
    assert im.weight_bytes_per_accelerator - split_only == pytest.approx(61 * 15_138_816 * 7 / 8)
    one = InferenceModel(
        model=catalog.model("deepseek-v3"),
        cluster=resolve_cluster(HardwareInput(accelerator=H200, count=8, per_node=8)),
        tp=1,
        weight_precision="fp8",
        kv_precision="bf16",
    )
    assert one.weight_bytes_per_accelerator == pytest.approx(one.weight_bytes_per_replica)
