"""Engine behaviour as data (EngineProfile) and plan codes as enums (Sharding, Recompute)."""

from __future__ import annotations

import numpy as np
import pytest

from aiinfra import catalog
from aiinfra.catalog.engines import profile
from aiinfra.errors import UnknownIdError
from aiinfra.search.plans import enumerate_plans
from aiinfra.specs.parallelism import PARAMS_SHARDED, Recompute, Sharding

GB = 1e9


def test_vllm_allocates_a_fraction_of_total_memory() -> None:
    # vLLM Worker.determine_num_available_blocks: util x HBM - weights - activation peak - reserve
    vllm = catalog.engine("vllm")
    kv = vllm.kv_cache_bytes(
        memory_bytes=80 * GB, weights_bytes=10 * GB, activation_bytes=1 * GB, reserve_bytes=4 * GB, util_frac=0.9
    )
    assert kv == pytest.approx(0.9 * 80 * GB - 15 * GB)  # 57 GB


def test_trtllm_allocates_a_fraction_of_free_memory() -> None:
    # TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction 0.9 of the memory left after the model loads
    trt = catalog.engine("trtllm")
    kv = trt.kv_cache_bytes(
        memory_bytes=80 * GB, weights_bytes=10 * GB, activation_bytes=1 * GB, reserve_bytes=4 * GB, util_frac=0.5
    )
    assert kv == pytest.approx(0.9 * 65 * GB)  # 58.5 GB; vLLM's util flag does not apply
    assert trt.kv_cache_bytes(
        memory_bytes=80 * GB,
        weights_bytes=10 * GB,
        activation_bytes=1 * GB,
        reserve_bytes=4 * GB,
        util_frac=0.5,
        free_frac=0.5,
    ) == pytest.approx(32.5 * GB)


def test_block_size_reservation_and_prefill_behaviour() -> None:
    vllm, trt = catalog.engine("vllm"), catalog.engine("trtllm")
    assert vllm.kv_block_tokens(32) == 32  # vLLM --block-size is the scenario's
    assert trt.kv_block_tokens(16) == 32  # TensorRT-LLM tokens_per_block default 32
    assert (vllm.reserves_full_context, trt.reserves_full_context) == (False, True)  # GUARANTEED_NO_EVICT
    assert (vllm.chunked_prefill, trt.chunked_prefill) == (True, False)
    assert (vllm.attention_dp_gather_quantised, trt.attention_dp_gather_quantised) == (False, True)
    assert (vllm.bench_tool, trt.bench_tool) == (None, "trtllm-bench")


def test_fixed_scheduler_limits() -> None:
    # TensorRT-LLM LLM API defaults: max_batch_size 2048, max_num_tokens 8192, whatever the device
    trt = catalog.engine("trtllm")
    assert not trt.device_dependent_defaults
    sd = trt.scheduler_defaults(catalog.accelerator("nvidia-l4"), "offline")
    assert (sd.max_num_seqs, sd.max_num_batched_tokens) == (2048, 8192)


def test_behaviour_follows_the_row_not_the_name() -> None:
    """A third engine behaves as its row says: nothing in code compares engine names."""
    row = {
        "id": "sglang",
        "kv_allocator": "total_memory_fraction",
        "block_size_tokens": 1,
        "chunked_prefill": True,
        "attention_dp_gather_quantised": False,
        "kv_reservation": "full",
        "max_num_seqs": 4096,
        "max_num_batched_tokens": 16384,
    }
    eng = profile(row)
    assert eng.kv_block_tokens(16) == 1 and eng.reserves_full_context
    sd = eng.scheduler_defaults(catalog.accelerator("nvidia-h100-sxm5-80gb"), "server")
    assert (sd.max_num_seqs, sd.max_num_batched_tokens) == (4096, 16384)


def test_unknown_engine_is_a_spec_error_with_a_hint() -> None:
    with pytest.raises(UnknownIdError) as err:
        catalog.engine("vllmm")
    assert "vllm" in str(err.value)


def test_sharding_and_recompute_enums() -> None:
    assert Sharding.of("zero3") is Sharding.ZERO3 and Sharding.ZERO3.label == "zero3"
    assert [s.label for s in Sharding] == ["none", "zero1", "zero2", "zero3", "fsdp"]
    assert [r.label for r in Recompute] == ["none", "selective", "full"]
    codes = np.array([0, 3, 4], dtype=np.int64)
    assert list(codes == Sharding.FSDP) == [False, False, True]
    assert list(np.isin(codes, PARAMS_SHARDED)) == [False, True, True]


def test_plan_arrays_hold_enum_codes() -> None:
    found = enumerate_plans(
        catalog.model("meta-llama-3.1-70b"), 64, 64, 4096, shardings=("fsdp",), recomputes=("full",)
    )
    plans = found.plans
    assert len(plans) > 0
    assert bool(np.all(plans.sharding == Sharding.FSDP)) and bool(np.all(plans.recompute == Recompute.FULL))
