"""FP4 checkpoint formats in serving memory and weight streams (ModelArch.fp4_scale_block_elements,
fp4_bf16_modules): gpt-oss's MXFP4 release quantises only the routed experts, at half a byte plus one 8-bit scale per
32 weights (OCP MX v1.0); its attention, router, embeddings and head stay bf16 (the config.json's
``modules_to_not_convert``). Expected byte counts are hand calculations below."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch
from aiinfra.catalog.hf_config import arch_from_hf_config
from aiinfra.catalog.resolve import cluster_for
from aiinfra.planning.inference import kv_capacity
from aiinfra.validation.rows import model_from_row

from .conftest import node_model

H100 = "nvidia-h100-sxm5-80gb"

# gpt-oss-120b: 36 layers, hidden 2,880, 64 q / 8 kv heads of 64, 128 experts of width 2,880 with biases,
# vocab 201,088, untied head
EXPERTS = 36 * 128 * (3 * 2880 * 2880 + 2 * 2880 + 2880)  # 114,701,598,720 routed parameters (with their biases)
VOCAB = 2 * 201088 * 2880  # embedding and head: 1,158,266,880
ATTENTION = 36 * (2880 * (64 * 64 + 2 * 8 * 64) + 64 * 64 * 2880 + (64 * 64 + 2 * 8 * 64) + 2880)  # with biases
ROUTER = 36 * 2880 * 128
NORMS = 36 * 2 * 2880 + 2880


def _oss(**fields: object) -> InferenceModel:
    m = replace(catalog.model("gpt-oss-120b"), **fields)  # type: ignore[arg-type]
    return InferenceModel(model=m, cluster=cluster_for(H100, 1), tp=1, weight_precision="fp4")


def test_catalog_gpt_oss_states_its_checkpoint() -> None:
    for name in ("gpt-oss-120b", "gpt-oss-20b"):
        m = catalog.model(name)
        assert (m.fp4_scale_block_elements, m.fp4_bf16_modules) == (32, "all_but_experts")


def test_weight_bytes_of_the_mxfp4_release() -> None:
    oss = _oss()
    # experts at 0.5 + 1/32 bytes; attention and router bf16; embedding and head bf16; norms stored with the
    # quantised format (a rounding error): 60,935,224,320 + 2·(955,802,880 + 13,271,040) + 2,316,533,760 + 111,690
    expected = EXPERTS * (0.5 + 1 / 32) + 2 * (ATTENTION + ROUTER) + 2 * VOCAB + NORMS * (0.5 + 1 / 32)
    assert oss.weight_bytes_per_replica == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(65.19e9, rel=1e-3)
    # the same model with no format stated: every layer at half a byte, no scales (the embedding and head bf16)
    plain = _oss(fp4_scale_block_elements=None, fp4_bf16_modules="none")
    assert plain.weight_bytes_per_replica == pytest.approx(
        0.5 * (EXPERTS + ATTENTION + ROUTER + NORMS) + 2 * VOCAB, rel=1e-12
    )
    # the scales alone: one byte per 32 weights of every quantised layer
    scaled = _oss(fp4_bf16_modules="none")
    assert scaled.weight_bytes_per_replica - plain.weight_bytes_per_replica == pytest.approx(
        (EXPERTS + ATTENTION + ROUTER + NORMS) / 32, rel=1e-9
    )


def test_the_kv_cache_gets_what_the_weights_leave() -> None:
    # 4.99 GB more weights on one H100 leave 4.99 GB less for the cache (the other reservations unchanged)
    oss, plain = _oss(), _oss(fp4_scale_block_elements=None, fp4_bf16_modules="none")
    extra_bytes = oss.weight_bytes_per_accelerator - plain.weight_bytes_per_accelerator
    assert extra_bytes == pytest.approx(4.99e9, rel=0.01)
    # vLLM at 0.9 of the memory, 16-token blocks, 8,192 batched tokens: the cache bytes drop by exactly the weights'
    a, b = (kv_capacity(x, 0.9, 16, 8192) for x in (oss, plain))
    assert b.kv_cache_bytes - a.kv_cache_bytes == pytest.approx(extra_bytes, rel=1e-9)
    assert b.kv_capacity_tokens - a.kv_capacity_tokens == pytest.approx(
        extra_bytes / oss.kv_bytes_per_token_per_accelerator, abs=32
    )


def test_decode_streams_bf16_attention_and_the_scales() -> None:
    # a batch-1 decode step streams the weights: the checkpoint's bf16 attention and expert scales make it longer
    one = StepBatch.decode(1, 1024)
    assert _oss().iteration_time_s(one) > _oss(fp4_scale_block_elements=None, fp4_bf16_modules="none").iteration_time_s(
        one
    )


def test_hf_configs_of_fp4_checkpoints() -> None:
    cfg = {"num_hidden_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "vocab_size": 1000}
    # openai/gpt-oss-120b config.json
    kept = ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]
    mx = arch_from_hf_config({**cfg, "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": kept}})
    assert (mx.fp4_scale_block_elements, mx.fp4_bf16_modules) == (32, "all_but_experts")
    # an MXFP4 checkpoint quantising every linear layer, and a ModelOpt NVFP4 one
    every = arch_from_hf_config({**cfg, "quantization_config": {"quant_method": "mxfp4"}})
    assert (every.fp4_scale_block_elements, every.fp4_bf16_modules) == (32, "none")
    nv = arch_from_hf_config({**cfg, "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}})
    assert (nv.fp4_scale_block_elements, nv.fp4_bf16_modules) == (16, "none")
    assert arch_from_hf_config(cfg).fp4_scale_block_elements is None


def test_fp4_rows_take_the_catalog_checkpoint() -> None:
    models = {"gpt-oss-120b": catalog.model("gpt-oss-120b")}
    m = catalog.model("gpt-oss-120b")
    row = {
        "id": "r",
        "model_name": "gpt-oss-120b",
        "num_layers": str(m.num_layers),
        "hidden_size": str(m.hidden_size),
        "num_heads": str(m.num_heads),
        "num_kv_heads": str(m.num_kv_heads),
        "head_dim": str(m.head_dim),
        "ffn_hidden_size": "2880",
        "mlp": "swiglu",
        "vocab_size": str(m.vocab_size),
        "num_experts": "128",
        "experts_per_token": "4",
        "moe_ffn_hidden_size": "2880",
        "attention": "gqa",
        "weight_precision": "fp4",
    }
    arch, flags = model_from_row(row, models)
    assert (arch.fp4_scale_block_elements, arch.fp4_bf16_modules) == (32, "all_but_experts")
    assert any("scale per 32" in f for f in flags)
    bf16_arch, _ = model_from_row({**row, "weight_precision": "bf16"}, models)
    assert bf16_arch.fp4_scale_block_elements is None


def _on(accelerator: str, tp: int = 1, **kw: object) -> InferenceModel:
    """gpt-oss-120b in its FP4 release under vLLM on ``tp`` ``accelerator``."""
    return node_model("gpt-oss-120b", accelerator, weight_precision="fp4", engine="vllm", tp=tp, **kw)  # type: ignore[no-any-return]


def test_vllm_marlin_pads_the_mxfp4_experts() -> None:
    # vLLM's Marlin MXFP4 path (the only one below SM90, and SM90's before the wheel carried triton_kernels in 0.12):
    # per-rank expert width to a multiple of 128 and hidden to 256: 2,880 x 2,880 -> 3,072 x 2,944 per matrix
    marlin = 3072 * 2944 / (2880 * 2880)
    h100_old = _on(H100, engine_version="0.10.2")
    assert h100_old.expert_padding_factor == pytest.approx(marlin, rel=1e-12)
    expected = EXPERTS * (0.5 + 1 / 32) * marlin + 2 * (ATTENTION + ROUTER) + 2 * VOCAB + NORMS * (0.5 + 1 / 32)
    assert h100_old.weight_bytes_per_replica == pytest.approx(expected, rel=1e-12)
    # vLLM 0.10.1 on an H100 logs "Model loading took 65.9651 GiB" under Marlin (vllm issue #23278): within 0.5 %
    assert expected / 2**30 == pytest.approx(65.9651, rel=0.005)
    # from 0.12 (triton_kernels in the wheel) SM90 runs the Triton path, stored as the checkpoint
    assert _on(H100, engine_version="0.14.0").expert_padding_factor == 1.0
    assert _on(H100).expert_padding_factor == 1.0  # the current release
    # an A100 at tp 2: 1,440 per rank -> 1,536, hidden 3,072
    a100 = _on("nvidia-a100-sxm4-80gb", tp=2, engine_version="0.14.0")
    assert a100.expert_padding_factor == pytest.approx(3072 * 1536 / (2880 * 1440), rel=1e-12)
    # FlashInfer's TensorRT-LLM MXFP4 kernel on a B200: both to multiples of 256
    assert _on("nvidia-b200-sxm-180gb", engine_version="0.14.0").expert_padding_factor == pytest.approx(
        3072 * 3072 / (2880 * 2880), rel=1e-12
    )
    # a bf16 run of the same model, and a model with no engine named, store nothing padded
    bf16 = node_model("gpt-oss-120b", H100, weight_precision="bf16", engine="vllm", tp=1)
    assert bf16.expert_padding_factor == 1.0
    assert _oss().expert_padding_factor == 1.0  # no engine named
