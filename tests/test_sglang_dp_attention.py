"""SGLang's attention DP before 0.4.10 keeps the MLPs tensor-parallel (engines.yaml ``attention_dp_tp_mlp``, read in
the 0.4.5-0.4.9 wheels): every layer all-reduces a zero-padded buffer of every rank's tokens to gather them, runs its
dense MLP, shared and routed experts split over the ranks, and all-reduces the output. Hand checks of the weights one
rank holds and of the step's collectives."""

from __future__ import annotations

import pytest

from aiinfra.analytic.comms import collective_time
from aiinfra.analytic.step_time import StepBatch

from .conftest import node_model

H200 = "nvidia-h200-sxm-141gb"


def _r1(version: str) -> object:
    return node_model(
        "deepseek-v3", H200, weight_precision="fp8", engine="sglang", engine_version=version, attention_dp=True
    )


def test_the_mlps_are_split_over_the_ranks_before_0_4_10() -> None:
    # DeepSeek-V3: 3 dense layers of 3 x 7,168 x 18,432 weights and 58 shared experts of 3 x 7,168 x 2,048, one FP8
    # byte each: 1,189,085,184 + 2,554,331,136 = 3,743,416,320 B, of which a rank holds 1/8 instead of all
    mlp_bytes = 3 * 3 * 7168 * 18432 + 58 * 3 * 7168 * 2048
    assert mlp_bytes == 3_743_416_320
    old, new = _r1("0.4.5.post1"), _r1("0.4.10")
    assert old._dp_tp_mlp and not new._dp_tp_mlp
    held = new.weight_bytes_per_accelerator - old.weight_bytes_per_accelerator
    assert held == pytest.approx(mlp_bytes * 7 / 8, rel=1e-9)


def test_every_layer_all_reduces_the_gathered_tokens_twice() -> None:
    # 48 decoding sequences over the 8 ranks: a 48 x 7,168 x 2 B = 688,128 B buffer all-reduced after attention and
    # after the MLP in each of the 61 layers (no all-gather or reduce-scatter)
    im = _r1("0.4.5.post1")
    step = StepBatch.decode(48, 1500)
    message = 48 * 7168 * 2
    one = collective_time(im.cluster, "allreduce", message, 8, engine=im.allreduce_engine(message)).time_s
    assert im.breakdown(step).communication_s == pytest.approx(2 * 61 * one, rel=1e-9)
