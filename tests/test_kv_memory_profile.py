"""vLLM's start-up memory profile (planning/inference.py kv_capacity): the sampler it runs over its largest batch of
requests (engines.yaml profile_sampler). Expected byte counts are hand calculations below."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aiinfra import app, catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.planning.inference import activation_peak_bytes, kv_capacity

from .conftest import EXAMPLES, node_model

H100 = "nvidia-h100-sxm5-80gb"


def _on(accelerator: str, tp: int = 1, **kw: object) -> InferenceModel:
    """gpt-oss-120b in its FP4 release under vLLM on ``tp`` ``accelerator``."""
    return node_model("gpt-oss-120b", accelerator, weight_precision="fp4", engine="vllm", tp=tp, **kw)  # type: ignore[no-any-return]


def test_vllm_profiles_its_sampler_over_the_largest_batch() -> None:
    # vLLM's V1 start-up profile runs the sampler over min(8,192, max_num_seqs) requests after the forward pass; at
    # the sampler's peak the bf16 logits, their float32 copy and the float32 probabilities are live: 10 B per
    # (request, vocabulary entry). gpt-oss's vocabulary is 201,088 entries.
    im = _on(H100, engine_version="0.14.0")
    forward = 8192 * (3 * 2880 + 3 * 2880 * 4) * 2  # 707,788,800 B: the forward pass's activations (tp 1)
    alone = kv_capacity(im, 0.9, 16, 8192)
    assert alone.activation_peak_bytes == forward
    full = kv_capacity(im, 0.9, 16, 8192, max_num_seqs=1024)
    assert full.activation_peak_bytes == 1024 * 201088 * 10  # 2,059,141,120 B, above the forward pass
    assert alone.kv_cache_bytes - full.kv_cache_bytes == pytest.approx(1024 * 201088 * 10 - forward, rel=1e-12)
    # six requests' sampler is below the forward pass, and before V1 (0.8.0) the profile is the forward alone
    assert kv_capacity(im, 0.9, 16, 8192, max_num_seqs=6).activation_peak_bytes == forward
    v0 = replace(im, engine_version="0.7.3")
    assert kv_capacity(v0, 0.9, 16, 8192, max_num_seqs=1024).activation_peak_bytes == forward


def test_vllm_one_gpu_reserve_by_release() -> None:
    # Llama-3.1-8B bf16 on one H100: before 0.20 vLLM captures its CUDA graphs after sizing the cache (from the
    # headroom), so besides weights and activations it keeps only the non-torch growth of its profile, 0.12 GiB
    # (engines.yaml single_gpu_reserve); from 0.20 the graphs' estimate comes off the budget and the catalog's
    # runtime reserve (3.5 GB) applies. The budget is 0.9 x the 79.19 GiB the CUDA runtime reports.
    old = node_model("meta-llama-3.1-8b", H100, weight_precision="bf16", engine="vllm", tp=1, engine_version="0.11.0")
    new = replace(old, engine_version="0.20.0")
    a, b = kv_capacity(old, 0.9, 16, 8192, max_num_seqs=1024), kv_capacity(new, 0.9, 16, 8192, max_num_seqs=1024)
    assert a.reserve_bytes == pytest.approx(0.12 * 2**30)
    assert b.reserve_bytes == pytest.approx(3.5e9)
    # activations: the sampler's 1,024 x 128,256 x 10 B = 1,313,341,440 B, above the forward's
    # 8,192 x (3 x 4,096 + 3 x 14,336) x 2 = 906 MB
    assert a.activation_peak_bytes == 1024 * 128256 * 10
    weights = a.weights_bytes
    assert a.kv_cache_bytes == pytest.approx(0.9 * 79.19 * 2**30 - weights - 1024 * 128256 * 10 - 0.12 * 2**30)
    # two GPUs keep the catalog reserve with NCCL's buffers in either release
    tp2 = node_model("meta-llama-3.1-8b", H100, weight_precision="bf16", engine="vllm", tp=2, engine_version="0.11.0")
    assert kv_capacity(tp2, 0.9, 16, 8192).reserve_bytes == pytest.approx((3.5 + 0.392) * 1e9)


def test_infer_says_where_the_memory_went() -> None:
    # gpt-oss-120b on one H100 with vLLM 0.10.2: Marlin's padded experts (3,072 x 2,944 over 2,880 x 2,880: +9.0 %)
    # and a sampler profile of 1,024 requests (2.06 GB) above the forward pass's 0.71 GB are both named
    sc = app.load_scenario(
        EXAMPLES / "infer-llama3.1-70b-h100.yaml",
        set={
            "model": "gpt-oss-120b",
            "inference.weight_precision": "fp4",
            "inference.kv_precision": "bf16",
            "hardware.count": 1,
            "inference.plan.tp": 1,
            "inference.engine_version": "0.10.2",
        },
    )
    notes = app.infer(sc).estimate.notes
    assert any("padded" in n and "9.0%" in n for n in notes)
    assert any("profiling its sampler over 1,024 requests: 2.06 GB" in n for n in notes)


def test_fused_moe_buffers_in_the_forward_peak() -> None:
    # vLLM's fused MoE holds, per token and routed expert, max(2·w, h) elements (gate-and-up output, then the
    # expert's output) and w more (activated), w the expert width on one rank. DeepSeek-V3 at tp 8 (h 7,168,
    # w 2,048 / 8 = 256, top-8) over 32,000 tokens: 32,000 x (3 x 7,168 + 8 x (7,168 + 256)) x 2 B = 5,177,344,000 B
    # (three residual tensors and 3·w per expert alone gave 1.77 GB)
    dsv3 = catalog.model("deepseek-v3")
    assert activation_peak_bytes(dsv3, 8, 32000) == 32000 * (3 * 7168 + 8 * (7168 + 256)) * 2
    # under expert parallelism an expert is whole on its rank: w = 2,048, max(4,096, 7,168) + 2,048
    assert activation_peak_bytes(dsv3, 8, 8192, expert_split=1) == 8192 * (3 * 7168 + 8 * (7168 + 2048)) * 2
    # gpt-oss (h = w = 2,880): max(5,760, 2,880) + 2,880 = 3 w, as the dense count
    oss = catalog.model("gpt-oss-120b")
    assert activation_peak_bytes(oss, 1, 8192) == 8192 * (3 * 2880 + 4 * 3 * 2880) * 2
    # vLLM's buffers cover one chunk of 32,768 tokens at most (VLLM_FUSED_MOE_CHUNK_SIZE); unchunked, the whole batch
    assert _on(H100).cluster.tables.engine("vllm").fused_moe_chunk_tokens == 32768
    chunked = activation_peak_bytes(dsv3, 8, 65536, moe_chunk_tokens=32768)
    assert chunked == (65536 * 3 * 7168 + 32768 * 8 * (7168 + 256)) * 2
    assert activation_peak_bytes(dsv3, 8, 65536) == 65536 * (3 * 7168 + 8 * (7168 + 256)) * 2
