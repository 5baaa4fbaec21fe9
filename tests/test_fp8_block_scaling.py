"""Block-scaled FP8 checkpoints (issue 29, docs/serving.md "Step mechanisms"): the model field, its import from an HF
config.json, the validation rows inheriting it, and the engines' block-FP8 linear-layer time against per-tensor FP8.
Expected ratios are AIConfigurator's own latencies (aiconfigurator commit 095f58a,
systems/data/h200_sxm/gemm/<engine>/<version>/gemm_perf.parquet, gemm_dtype fp8_block and fp8, same m, n, k)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.kernel_time import fp8_block_time_factor
from aiinfra.analytic.step_time import StepBatch
from aiinfra.catalog.hf_config import arch_from_hf_config
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.errors import SpecError
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput
from aiinfra.validation.rows import model_from_row

H200 = "nvidia-h200-sxm-141gb"
_CFG = {"num_hidden_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "vocab_size": 1000}


def test_hf_quantization_config_sets_the_scaling() -> None:
    # deepseek-ai/DeepSeek-V3 config.json: quant_method fp8, fmt e4m3, weight_block_size [128, 128]
    block = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    m = arch_from_hf_config({**_CFG, "quantization_config": block})
    assert (m.fp8_scaling, m.fp8_block_size) == ("block", (128, 128))
    # no quantization_config, fp8 without blocks, a ModelOpt export (quant_algo FP8): per tensor
    for quant in (None, {"quant_method": "fp8", "activation_scheme": "static"}, {"quant_algo": "FP8"}):
        m = arch_from_hf_config({**_CFG, "quantization_config": quant} if quant else _CFG)
        assert (m.fp8_scaling, m.fp8_block_size) == ("tensor", None)
    with pytest.raises(SpecError, match="weight_block_size"):
        arch_from_hf_config({**_CFG, "quantization_config": {**block, "weight_block_size": [128]}})


def test_catalog_checkpoints_and_rows_inherit_the_block_scaling() -> None:
    assert catalog.model("deepseek-v3").fp8_block_size == (128, 128)
    assert catalog.model("qwen3-235b-a22b").fp8_scaling == "block"
    assert catalog.model("meta-llama-3.1-70b").fp8_scaling == "tensor"
    models = {k: catalog.model(k) for k in ("deepseek-v3", "qwen3-235b-a22b", "meta-llama-3.1-70b")}
    row = {
        "id": "r",
        "model_name": "DeepSeek-R1-0528",  # not a catalog name: the architecture names deepseek-v3
        "num_layers": "61",
        "hidden_size": "7168",
        "num_heads": "128",
        "head_dim": "128",
        "ffn_hidden_size": "18432",
        "mlp": "swiglu",
        "vocab_size": "129280",
        "num_experts": "256",
        "experts_per_token": "8",
        "moe_ffn_hidden_size": "2048",
        "attention": "mla",
        "kv_lora_rank": "512",
        "qk_rope_head_dim": "64",
        "weight_precision": "fp8",
    }
    assert model_from_row(row, models)[0].fp8_scaling == "block"
    assert model_from_row({**row, "quantizer": "modelopt"}, models)[0].fp8_scaling == "tensor"  # per-tensor export
    assert model_from_row({**row, "weight_precision": "bf16"}, models)[0].fp8_scaling == "tensor"
    assert model_from_row({**row, "weight_precision": ""}, models)[0].fp8_scaling == "tensor"  # training rows


def _cluster() -> ClusterSpec:
    return resolve_cluster(HardwareInput(accelerator=H200, count=8, per_node=8))


@pytest.mark.parametrize(
    ("engine", "m", "table_ratios"),
    [
        # latency(fp8_block) / latency(fp8) at DeepSeek-V3's tp-8 shapes (n, k) = (7168, 2048), (3072, 1536),
        # (7168, 4096), (4096, 7168): vLLM 0.14.0 at m 1: 31.9/15.5, 27.3/12.6, 37.1/19.3, 44.8/20.2 us
        ("vllm", 1, (2.052, 2.174, 1.918, 2.214)),
        ("vllm", 8192, (1.525, 1.407, 1.339, 1.346)),  # 456/299, 237/168, 822/614, 1070/795 us
        # TensorRT-LLM 1.2.0rc5: its block op is faster at few rows (8.9 vs 18.4 us at m 1, n 7168, k 2048)
        ("trtllm", 1, (0.482, 0.420, 0.568, 0.667)),
        ("trtllm", 8192, (0.955, 0.954, 0.901, 0.896)),
    ],
)
def test_block_time_factor_stands_for_deepseek_shapes(engine: str, m: int, table_ratios: tuple[float, ...]) -> None:
    cl = _cluster()
    got = fp8_block_time_factor(cl.tables, cl.accelerator, engine, m)
    # the per-M median over every shape falls within the spread of DeepSeek's own shapes
    assert min(table_ratios) <= got <= max(table_ratios)


def test_block_time_factor_interpolates_in_log_m_and_needs_engine_and_part() -> None:
    cl = _cluster()
    tables, acc = cl.tables, cl.accelerator
    f2, f4 = (fp8_block_time_factor(tables, acc, "vllm", m) for m in (2, 4))
    # linear in log10(M) between the M = 2 and M = 4 points: at M = 3, log(3/2)/log(2) = 0.585 of the way
    assert fp8_block_time_factor(tables, acc, "vllm", 3) == pytest.approx(
        f2 + (f4 - f2) * math.log(1.5) / math.log(2.0), rel=1e-9
    )
    assert fp8_block_time_factor(tables, acc, None, 64) == 1.0  # engine-free lookups keep per-tensor
    b200 = resolve_cluster(HardwareInput(accelerator="nvidia-b200-sxm-180gb", count=8, per_node=8))
    assert fp8_block_time_factor(b200.tables, b200.accelerator, "vllm", 64) == 1.0  # not measured there


def test_block_scaled_dense_layers_take_the_engines_block_time() -> None:
    cl = _cluster()
    ds = catalog.model("deepseek-v3")
    per_tensor = replace(ds, fp8_scaling="tensor", fp8_block_size=None)

    def model(arch: ModelArch, engine: str | None, wp: str = "fp8") -> InferenceModel:
        return InferenceModel(model=arch, cluster=cl, tp=8, weight_precision=wp, engine=engine)

    # one linear layer at one token: the vLLM block op takes about twice the per-tensor time (table ratios above)
    one = [
        model(a, "vllm")._linear(1, 7168 * 2048 * 61.0, 61, "fp8", 8, block_scaled=b).compute_s
        for a, b in ((per_tensor, False), (ds, True))
    ]
    assert 1.9 < one[1] / one[0] < 2.25
    # a whole 8,192-token prefill step: the block-scaled checkpoint's linear layers slower on vLLM, faster on
    # TensorRT-LLM; engine-free and bf16 runs unchanged
    step = StepBatch(prefill_tokens=8192, prefill_attention_pairs=8192 * 8192 / 2)

    def linear_s(arch: ModelArch, engine: str | None, wp: str = "fp8") -> float:
        return model(arch, engine, wp).breakdown(step).linear_s

    assert linear_s(ds, "vllm") > linear_s(per_tensor, "vllm")
    assert linear_s(ds, "trtllm") < linear_s(per_tensor, "trtllm")
    assert linear_s(ds, None) == linear_s(per_tensor, None)
    assert linear_s(ds, "vllm", "bf16") == linear_s(per_tensor, "vllm", "bf16")


@pytest.mark.parametrize(
    ("m", "table_ratios"),
    [
        # SGLang 0.5.14 on B200 (DeepGEMM's block op against sgl-kernel's per-tensor op), DeepSeek-V3's tp-8 shapes
        # (n, k) = (7168, 2048), (3072, 1536), (7168, 4096), (4096, 7168): 17.8/12.9, 24.3/6.2, 21.6/14.1,
        # 22.3/13.0 us at m 1; 157.0/117.8, 44.6/66.7, 172.9/213.8, 186.0/228.4 us at m 8192
        (1, (1.384, 3.9, 1.531, 1.708)),
        (8192, (1.333, 0.669, 0.809, 0.814)),
    ],
)
def test_sglang_block_time_factor_on_b200_stands_for_deepseek_shapes(m: int, table_ratios: tuple[float, ...]) -> None:
    b200 = resolve_cluster(HardwareInput(accelerator="nvidia-b200-sxm-180gb", count=8, per_node=8))
    got = fp8_block_time_factor(b200.tables, b200.accelerator, "sglang", m)
    assert min(table_ratios) <= got <= max(table_ratios)
