"""Meta's FBGEMM FP8 checkpoint of Llama 3.1 405B (issue 29, docs/serving.md "Offline fixed sets"): FP8 on the MLPs
only, attention and the first and last layers' MLPs in bf16 (Llama 3 report arXiv 2407.21783 §6.2), a scale per
output channel and per token; the validation rows that state ``quantizer`` fbgemm_fp8 carry it to the model; vLLM
before 0.7.3 runs those scales unfused on ROCm (engines.yaml unfused_channel_fp8_by_version). Expected byte counts
and times are hand calculations below."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.kernel_time import memory_fit
from aiinfra.analytic.model_figures import params_total
from aiinfra.analytic.step_time import StepBatch
from aiinfra.catalog.hf_config import arch_from_hf_config
from aiinfra.catalog.resolve import cluster_for
from aiinfra.validation.rows import model_from_row
from tests.conftest import LLAMA31_405B_ROW_COLUMNS

H100 = "nvidia-h100-sxm5-80gb"
MI300X = "amd-mi300x"


def _l405(modules: str = "none") -> InferenceModel:
    m = replace(catalog.model("meta-llama-3.1-405b"), fp8_bf16_modules=modules)  # type: ignore[arg-type]
    return InferenceModel(model=m, cluster=cluster_for(H100, 8), tp=8, weight_precision="fp8")


def test_weight_bytes_keep_attention_and_edge_mlps_in_bf16() -> None:
    # Llama 3.1 405B: 126 layers, hidden 16,384, 128 q / 8 kv heads of 128, MLP 53,248, vocab 128,256.
    # attention per layer 2·16384² + 2·16384·1024 = 570,425,344; MLP per layer 3·16384·53248 = 2,617,245,696;
    # norms 2·16384 per layer + 16,384; embedding and head 2·128256·16384 = 4,202,692,608 -> 405,853,388,800.
    base = _l405()
    assert params_total(base.model) == 405_853_388_800
    # all linear layers FP8, embedding and head bf16: 401,650,696,192 + 2 · 4,202,692,608 = 410,056,081,408 B
    assert base.weight_bytes_per_replica == 410_056_081_408
    # left in bf16: 126 · 570,425,344 + 2 · 2,617,245,696 = 77,108,084,736 parameters, one byte more each
    meta = _l405("attention_and_edge_mlps")
    assert meta.weight_bytes_per_replica == 410_056_081_408 + 77_108_084_736
    assert meta.weight_bytes_per_accelerator == (410_056_081_408 + 77_108_084_736) / 8
    # a bf16 run of the same checkpoint field is all bf16: nothing to add
    bf16 = InferenceModel(model=meta.model, cluster=cluster_for(H100, 8), tp=8, weight_precision="bf16")
    assert bf16.weight_bytes_per_replica == 2 * 405_853_388_800


def test_decode_step_streams_the_bf16_layers() -> None:
    # a batch-1 decode step is weight streaming: the bf16 layers add 77.1 GB / 8 ranks, so the step lies between
    # the all-FP8 and the all-bf16 step
    one = StepBatch.decode(1, 2048)
    fp8, meta = _l405(), _l405("attention_and_edge_mlps")
    bf16 = InferenceModel(model=fp8.model, cluster=cluster_for(H100, 8), tp=8, weight_precision="bf16")
    t8, tm, t16 = (x.iteration_time_s(one) for x in (fp8, meta, bf16))
    assert t8 < tm < t16
    # the extra time is at least the extra bytes at the part's peak bandwidth (3.35 TB/s H100 SXM)
    assert tm - t8 >= 77_108_084_736 / 8 / 3.35e12


def test_rows_stating_fbgemm_fp8_carry_it() -> None:
    models = {"meta-llama-3.1-405b": catalog.model("meta-llama-3.1-405b")}
    row = {
        "id": "r",
        "model_name": "Llama-3.1-405B-FP8",
        **LLAMA31_405B_ROW_COLUMNS,
        "weight_precision": "fp8",
        "quantizer": "fbgemm_fp8",
    }
    assert model_from_row(row, models)[0].fp8_bf16_modules == "attention_and_edge_mlps"
    assert model_from_row(row, models)[0].fp8_scaling == "channel"
    assert model_from_row({**row, "quantizer": ""}, models)[0].fp8_bf16_modules == "none"
    assert model_from_row({**row, "quantizer": "modelopt"}, models)[0].fp8_bf16_modules == "none"


def test_hf_config_of_an_fbgemm_checkpoint() -> None:
    # meta-llama/Llama-3.1-405B-FP8 config.json: quant_method fbgemm_fp8, modules_to_not_convert lists every
    # self_attn projection and layers 0 and 125's MLPs
    cfg = {"num_hidden_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "vocab_size": 1000}
    kept = ["model.layers.0.self_attn.q_proj", "model.layers.0.mlp.down_proj", "model.layers.1.mlp.up_proj"]
    quant = {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0, "modules_to_not_convert": kept}
    assert arch_from_hf_config({**cfg, "quantization_config": quant}).fp8_bf16_modules == "attention_and_edge_mlps"
    assert arch_from_hf_config({**cfg, "quantization_config": quant}).fp8_scaling == "channel"
    no_attn = {**quant, "modules_to_not_convert": ["lm_head"]}
    assert arch_from_hf_config({**cfg, "quantization_config": no_attn}).fp8_bf16_modules == "none"


def _meta405_on(acc: str, release: str | None) -> InferenceModel:
    m = replace(catalog.model("meta-llama-3.1-405b"), fp8_bf16_modules="attention_and_edge_mlps", fp8_scaling="channel")
    return InferenceModel(
        model=m, cluster=cluster_for(acc, 8), tp=8, weight_precision="fp8", engine="vllm", engine_version=release
    )


def test_rocm_runs_channel_scales_unfused_before_0_7_3() -> None:
    # vllm PR #12501: the fused row-wise GEMM "speeds up current naive implementation by at least 2 times"; the
    # 0.6.2 wheel's fallback runs three more kernels per GEMM (the two scales and the cast)
    vllm = catalog.engine("vllm")
    for release in ((0, 6, 2), (0, 7, 2)):
        rule = vllm.unfused_channel_fp8_rule(release, "amd")
        assert rule is not None and (rule.time_x, rule.extra_kernels) == (2.0, 3)
    assert vllm.unfused_channel_fp8_rule((0, 7, 3), "amd") is None
    assert vllm.unfused_channel_fp8_rule(None, "amd") is None
    assert vllm.unfused_channel_fp8_rule((0, 6, 2), "nvidia") is None  # CUTLASS fuses the scales on CUDA
    assert catalog.engine("sglang").unfused_channel_fp8_rule((0, 4, 0), "amd") is None


def test_an_unfused_fp8_gemm_doubles_its_compute_and_adds_three_kernels() -> None:
    old, new = _meta405_on(MI300X, "0.6.2"), _meta405_on(MI300X, "0.7.3")
    t0, _ = memory_fit(old.cluster.tables, old.cluster.accelerator, "vllm", "fp8")
    # one layer's gate+up and down GEMMs of the MLP, split 8 ways: 2 kernels over 3 · 16384 · 53248 weights
    args = (8192.0, 3.0 * 16384 * 53248, 2.0, "fp8", 8)
    fused, unfused = new._linear(*args, channel_scaled=True), old._linear(*args, channel_scaled=True)
    assert unfused.compute_s == 2.0 * fused.compute_s
    assert unfused.memory_s - fused.memory_s == pytest.approx(2.0 * 3 * t0, rel=1e-9)
    # the same GEMMs of a per-tensor checkpoint, or in bf16, are fused in every release
    assert old._linear(*args) == new._linear(*args)
    bf16 = (8192.0, 3.0 * 16384 * 53248, 2.0, "bf16", 8, "bf16")
    assert old._linear(*bf16, channel_scaled=True) == new._linear(*bf16, channel_scaled=True)


def test_a_prompt_step_on_mi300x_pays_for_the_unfused_mlps_only() -> None:
    # an 8,192-token prompt is compute-bound: the step grows by the FP8 MLPs' fused compute time once more (124 of
    # 126 layers' MLPs; attention and the edge MLPs are bf16), and on an H100 (CUTLASS, fused) not at all
    prompt = StepBatch.prefill(8192)
    old, new = _meta405_on(MI300X, "0.6.2"), _meta405_on(MI300X, "0.7.3")
    mlp = new._linear(8192.0, 124 * 3.0 * 16384 * 53248, 2.0 * 124, "fp8", 8, channel_scaled=True)
    assert mlp.compute_s > 2.0 * mlp.memory_s  # compute-bound, fused or not
    grown = old.iteration_time_s(prompt) - new.iteration_time_s(prompt)
    assert grown == pytest.approx(mlp.compute_s, rel=1e-6)
    h_old, h_new = _meta405_on(H100, "0.6.2"), _meta405_on(H100, "0.7.3")
    assert h_old.breakdown(prompt).linear_s == h_new.breakdown(prompt).linear_s
