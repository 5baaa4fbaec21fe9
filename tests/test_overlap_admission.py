"""When an arrival can join the batch (issue 29): SGLang, TensorRT-LLM's PyTorch executor and vLLM from 0.14 plan
iteration n + 1 while iteration n runs, so a request arriving during an iteration joins the one after the next; vLLM
V0's multi-step scheduling admits only between its calls of n decode iterations — hand-stepped timelines in the
simulator, the same delays in the loaded-replica model, and the releases the catalog gives the overlap to."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.step_time import FixedStepTime
from aiinfra.catalog.resolve import cluster_for
from aiinfra.planning.inference import estimate
from aiinfra.specs.common import validate
from aiinfra.specs.engine import parse_version
from aiinfra.specs.workload import ServingWorkload

from .test_sim_kernel import lim, run


def test_sglang_trtllm_pytorch_and_vllm_from_0_14_overlap() -> None:
    # sglang#2067 turned the overlap scheduler on by default (v0.4); TensorRT-LLM#4174 in the PyTorch executor
    # (the default backend from 1.0); vLLM's async scheduling is opt-in before 0.14 and the default from it
    # (vllm#27614), the current release included
    sglang, trtllm, vllm = (catalog.engine(e) for e in ("sglang", "trtllm", "vllm"))
    assert sglang.overlaps_scheduling(None) and sglang.overlaps_scheduling(parse_version("0.5.5.post1"))
    assert not sglang.overlaps_scheduling(parse_version("0.3.0"))
    assert trtllm.overlaps_scheduling(parse_version("1.2.0rc1"))
    # an unstated TensorRT-LLM release may be a TensorRT engine (NIM, MLPerf): the C++ executor's overlap is opt-in
    assert not trtllm.overlaps_scheduling(None)
    assert not vllm.overlaps_scheduling(parse_version("0.11.0")) and not vllm.overlaps_scheduling((0, 13, 9))
    assert vllm.overlaps_scheduling(parse_version("0.14.0")) and vllm.overlaps_scheduling(None)


def test_an_arrival_during_an_iteration_joins_the_one_after_the_next() -> None:
    # 1-s iterations. A arrives at 0 (10 output tokens), B at 0.5 (one token, made by its prefill).
    # Plain: iteration 1 [0, 1] prefills A; B joins iteration 2 [1, 2]: first token at 2, TTFT 1.5.
    # Overlap: iteration 2 was planned at 0, before B arrived; B joins iteration 3 [2, 3]: TTFT 2.5.
    rows = [(0.0, 4, 10), (0.5, 4, 1)]
    plain = run(FixedStepTime(1.0), lim(), rows)
    overlap = run(FixedStepTime(1.0), lim(overlap_admission=True), rows)
    assert plain.first_token_s[1] - plain.arrival_s[1] == pytest.approx(1.5)
    assert overlap.first_token_s[1] - overlap.arrival_s[1] == pytest.approx(2.5)
    # A, admitted to an idle replica, starts at once either way
    assert plain.first_token_s[0] == overlap.first_token_s[0] == pytest.approx(1.0)


def test_an_idle_overlap_replica_admits_at_once() -> None:
    # nothing runs when B arrives at 5 (A finished at 2): B's prefill starts at 5, its first token at 6
    rows = [(0.0, 4, 2), (5.0, 4, 1)]
    overlap = run(FixedStepTime(1.0), lim(overlap_admission=True), rows)
    assert overlap.first_token_s[1] == pytest.approx(6.0)


def test_the_loaded_replica_adds_one_iteration_to_ttft_under_load() -> None:
    # the same deployment priced as SGLang 0.5.5 with its overlap scheduler stated off and on
    # (--disable-overlap-schedule or not; the release, and so its step, unchanged): TTFT under a load grows by one mean
    # iteration (the steady state's cycle, here the TPOT of one token per step), TPOT is equal
    m, cl = catalog.model("meta-llama-3.1-8b"), cluster_for("nvidia-h100-sxm5-80gb", 1)
    base = {"input_tokens": 256, "output_tokens": 256, "engine": "sglang", "engine_version": "0.5.5"}
    base["request_rate_per_s"] = 4.0
    stated_off = {"simulation": {"scheduler": {"overlap_scheduling": False}}}
    old = estimate(m, cl, validate(ServingWorkload, {**base, **stated_off}))
    new = estimate(m, cl, validate(ServingWorkload, base))
    assert new.tpot_s == pytest.approx(old.tpot_s)
    assert new.ttft_s - old.ttft_s == pytest.approx(new.tpot_s, rel=0.05)
    assert new.ttft_percentiles_s is not None and old.ttft_percentiles_s is not None
    assert new.ttft_percentiles_s.p50_s > old.ttft_percentiles_s.p50_s
    assert any("overlap scheduler" in n for n in new.notes) and not any("overlap scheduler" in n for n in old.notes)


def test_multi_step_scheduling_admits_only_between_calls() -> None:
    # vLLM V0 --num-scheduler-steps 4, 1-s iterations. A (arrives 0) is prefilled in [0, 1], then decodes in a call
    # of 4 iterations [1, 5]; B arrives at 1.5 and waits for that call to end: prefilled in [5, 6], TTFT 4.5.
    # Single-step: B is prefilled in [2, 3], TTFT 1.5.
    rows = [(0.0, 4, 20), (1.5, 4, 1)]
    single = run(FixedStepTime(1.0), lim(), rows)
    multi = run(FixedStepTime(1.0), lim(scheduler_steps=4), rows)
    assert single.first_token_s[1] - single.arrival_s[1] == pytest.approx(1.5)
    assert multi.first_token_s[1] - multi.arrival_s[1] == pytest.approx(4.5)


def test_the_loaded_replica_waits_out_half_a_multi_step_call() -> None:
    # 10 decode iterations per call: an arrival waits (10 - 1)/2 = 4.5 mean iterations more under load
    m, cl = catalog.model("meta-llama-3.1-8b"), cluster_for("nvidia-h100-sxm5-80gb", 1)
    base = {"input_tokens": 256, "output_tokens": 256, "engine": "vllm", "request_rate_per_s": 4.0}
    multi = {**base, "simulation": {"scheduler": {"num_scheduler_steps": 10}}}
    one = estimate(m, cl, validate(ServingWorkload, base))
    ten = estimate(m, cl, validate(ServingWorkload, multi))
    assert ten.ttft_s - one.ttft_s == pytest.approx(4.5 * ten.tpot_s, rel=0.05)
