"""Attention-DP dispatch by engine: TensorRT-LLM's load-balanced queue vs SGLang's round robin (sglang 0.4.5.post1
DataParallelController.round_robin_scheduler; engines.yaml attention_dp_dispatch). Timelines by hand."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.sim.engine import Simulation

from .test_sim_attention_dp import RankStep
from .test_sim_kernel import lim, reqs

# three prompts at t = 0 in arrival order 300, 100, 100 tokens, 2 output tokens each, on two ranks; toy step
# t = 0.01 + 1e-4 · (busiest rank's tokens) + 0.5e-4 · (all ranks' tokens); each rank's budget 2,048 // 2 = 1,024
ROWS = [(0.0, 300, 2), (0.0, 100, 2), (0.0, 100, 2)]


def _run(dispatch: str) -> tuple[list[float], list[float]]:
    sim = Simulation(RankStep(0.01, 1e-4, 0.5e-4), lim(), 1, attention_dp_ranks=2, attention_dp_dispatch=dispatch)
    rec = sim.run(reqs(ROWS))
    return list(rec.first_token_s), list(rec.finish_s)


def test_round_robin_sends_requests_in_turn_whatever_the_load() -> None:
    # round robin: 300 -> rank 0, 100 -> rank 1, 100 -> rank 0: rank 0 holds 400 tokens, rank 1 100. The prefill:
    # 0.01 + 400e-4 + 500 · 0.5e-4 = 0.075 s. Then one decode step, 2 sequences on rank 0, 3 in all:
    # 0.01 + 2e-4 + 3 · 0.5e-4 = 0.01035 -> every request ends at 0.08535.
    first, finish = _run("round_robin")
    assert first == pytest.approx([0.075] * 3)
    assert finish == pytest.approx([0.08535] * 3)


def test_balanced_dispatch_evens_the_prompt_tokens() -> None:
    # balanced (TensorRT-LLM): longest first, each to the rank with the fewest active prompt tokens: 300 -> rank 0,
    # 100 -> rank 1, 100 -> rank 1 (100 < 300): ranks hold 300 and 200 tokens; prefill 0.01 + 300e-4 + 500 · 0.5e-4
    # = 0.065 s; the decode step (2 sequences on rank 1, 3 in all) 0.01035 -> 0.07535.
    first, finish = _run("balanced")
    assert first == pytest.approx([0.065] * 3)
    assert finish == pytest.approx([0.07535] * 3)


def test_engine_profiles_name_their_dispatch() -> None:
    assert catalog.engine("sglang").attention_dp_dispatch == "round_robin"
    assert catalog.engine("trtllm").attention_dp_dispatch == "balanced"
