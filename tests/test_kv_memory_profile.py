"""vLLM's start-up memory profile (planning/inference.py kv_capacity): the sampler it runs over its largest batch of
requests (engines.yaml profile_sampler). Expected byte counts are hand calculations below."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.catalog.resolve import cluster_for
from aiinfra.planning.inference import kv_capacity

H100 = "nvidia-h100-sxm5-80gb"


def _on(accelerator: str, tp: int = 1, **kw: object) -> InferenceModel:
    return InferenceModel(
        model=catalog.model("gpt-oss-120b"),
        cluster=cluster_for(accelerator, tp),
        tp=tp,
        weight_precision="fp4",
        engine="vllm",
        **kw,  # type: ignore[arg-type]
    )


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
