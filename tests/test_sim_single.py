"""The fused single-replica loop (sim/single.py) against the general event loop (sim/engine.py, ``fused=False``):
the same scheduler, so every record must be identical, event for event, on every feature the fused loop covers
(chunked prefill or not, whole-context reservation, recompute preemption, priorities, closed loops with and without
think time, speculative decoding's tokens per step, an overlap scheduler's admission), with its inner loop over runs
of decode-only iterations on and off."""

from __future__ import annotations

import numpy as np
import pytest

from aiinfra.analytic.step_time import StepBatch
from aiinfra.sim import single
from aiinfra.sim.arrivals import Requests
from aiinfra.sim.engine import Records, Simulation
from aiinfra.sim.replica import SchedulerLimits


class ShapedStep:
    """A step time that depends on every field the scheduler sets (prompt tokens, attention pairs, decodes,
    context), so a different batch anywhere shows up as a different time."""

    def iteration_time_s(self, batch: StepBatch) -> float:
        return (
            0.004
            + 2e-5 * batch.prefill_tokens
            + 1e-10 * batch.prefill_attention_pairs
            + 5e-5 * batch.decode_seqs
            + 3e-8 * batch.decode_context_tokens
        )


def limits(**kw: object) -> SchedulerLimits:
    base: dict[str, object] = dict(
        static=False,
        max_num_seqs=64,
        max_num_batched_tokens=1024,
        chunked_prefill=True,
        preemption="recompute",
        kv_capacity_tokens=60_000,
        block_tokens=16,
        tokens_per_step=1.0,
    )
    base.update(kw)
    return SchedulerLimits(**base)  # type: ignore[arg-type]


def stream(n: int, rate_per_s: float, seed: int, priorities: bool = False, think_s: float | None = None) -> Requests:
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1.0 / rate_per_s, n)
    arrivals = np.cumsum(gaps) - gaps[0]
    arrivals[5:9] = arrivals[5]  # simultaneous arrivals
    return Requests(
        arrival_s=arrivals if think_s is None else np.zeros(n),
        input_tokens=rng.integers(20, 3000, n),
        output_tokens=rng.integers(1, 400, n),
        priority=rng.integers(0, 3, n) if priorities else np.zeros(n, dtype=np.int64),
        think_s=None if think_s is None else rng.exponential(think_s, n) * (rng.random(n) < 0.8),
    )


def both(lim: SchedulerLimits, reqs: Requests, clients: int | None = None) -> tuple[Records, Records]:
    out = []
    for fused in (True, False):
        r = Requests(
            arrival_s=reqs.arrival_s.copy(),
            input_tokens=reqs.input_tokens,
            output_tokens=reqs.output_tokens,
            priority=reqs.priority,
            think_s=reqs.think_s,
        )
        out.append(Simulation(ShapedStep(), lim, 1, fused=fused).run(r, clients))
    return out[0], out[1]


CASES = {
    "chunked": (limits(), dict(rate_per_s=60.0)),
    "no-chunking": (limits(chunked_prefill=False), dict(rate_per_s=40.0)),
    "preempting": (limits(kv_capacity_tokens=12_000), dict(rate_per_s=80.0, priorities=True)),
    "full-context": (limits(reserve_full_context=True, kv_capacity_tokens=20_000), dict(rate_per_s=80.0)),
    "speculative": (limits(tokens_per_step=2.3, budget_tokens_per_decode=4), dict(rate_per_s=60.0)),
    "few-seqs": (limits(max_num_seqs=5, max_num_batched_tokens=256), dict(rate_per_s=20.0)),
    "overlap": (limits(overlap_admission=True, kv_capacity_tokens=20_000), dict(rate_per_s=60.0, priorities=True)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_loop_matches_general_loop(case: str) -> None:
    lim, kw = CASES[case]
    fast, ref = both(lim, stream(1500, seed=7, **kw))  # type: ignore[arg-type]
    assert ref.iterations > 1500  # the case is not trivial
    for name in ("arrival_s", "first_token_s", "finish_s"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name), err_msg=name)
    for name in ("itl_s", "itl_weight", "sample_t_s", "queue_len", "running_seqs", "kv_util_frac"):
        assert getattr(fast, name) == getattr(ref, name), name
    assert (fast.iterations, fast.preemptions, fast.end_s) == (ref.iterations, ref.preemptions, ref.end_s)
    if case == "preempting":
        assert ref.preemptions > 0


@pytest.mark.parametrize("think_s", [None, 2.0])
def test_fused_closed_loop_matches_general_loop(think_s: float | None) -> None:
    reqs = stream(1200, 1.0, seed=3, think_s=think_s)
    fast, ref = both(limits(kv_capacity_tokens=30_000), reqs, clients=40)
    np.testing.assert_array_equal(fast.arrival_s, ref.arrival_s)
    np.testing.assert_array_equal(fast.finish_s, ref.finish_s)
    np.testing.assert_array_equal(fast.first_token_s, ref.first_token_s)
    assert fast.sample_t_s == ref.sample_t_s and fast.queue_len == ref.queue_len
    assert fast.kv_util_frac == ref.kv_util_frac and fast.itl_s == ref.itl_s
    assert np.isfinite(ref.finish_s).all()


def long_stream(
    n: int, rate_per_s: float, seed: int, prompt: tuple[int, int], think_s: float | None = None
) -> Requests:
    """Like :func:`stream` with the prompt lengths drawn from ``prompt`` and long answers (long decode runs)."""
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1.0 / rate_per_s, n)
    arrivals = np.cumsum(gaps) - gaps[0]
    return Requests(
        arrival_s=arrivals if think_s is None else np.zeros(n),
        input_tokens=rng.integers(*prompt, n),
        output_tokens=rng.integers(1, 900, n),
        priority=np.zeros(n, dtype=np.int64),
        think_s=None if think_s is None else rng.exponential(think_s, n) * (rng.random(n) < 0.9),
    )


# (limits, stream, closed-loop clients): each sends the fused loop through long runs of decode-only iterations
RUN_CASES = {
    "poisson": (limits(), dict(rate_per_s=3.0, prompt=(20, 3000)), None),
    "think-time": (limits(kv_capacity_tokens=40_000), dict(rate_per_s=1.0, prompt=(20, 3000), think_s=5.0), 30),
    "no-think": (limits(kv_capacity_tokens=40_000), dict(rate_per_s=1.0, prompt=(20, 600)), 12),
    "long-prompts": (limits(max_num_batched_tokens=512), dict(rate_per_s=2.0, prompt=(400, 6000)), None),
    # some prompts exceed the budget: admitted alone when nothing runs
    "long-prompts-unchunked": (
        limits(chunked_prefill=False, max_num_batched_tokens=4096),
        dict(rate_per_s=3.0, prompt=(200, 4500)),
        None,
    ),
    "preempting": (limits(kv_capacity_tokens=9_000), dict(rate_per_s=8.0, prompt=(20, 1500)), None),
    "full-context": (
        limits(reserve_full_context=True, kv_capacity_tokens=25_000),
        dict(rate_per_s=6.0, prompt=(20, 2000)),
        None,
    ),
    "speculative": (
        limits(tokens_per_step=2.3, budget_tokens_per_decode=4),
        dict(rate_per_s=4.0, prompt=(20, 2000)),
        None,
    ),
    # an overlap scheduler: arrivals wait for the iteration after the next, open and closed loops
    "overlap": (limits(overlap_admission=True), dict(rate_per_s=3.0, prompt=(20, 3000)), None),
    "overlap-closed": (
        limits(overlap_admission=True, kv_capacity_tokens=40_000),
        dict(rate_per_s=1.0, prompt=(20, 600)),
        12,
    ),
}


@pytest.mark.parametrize("case", sorted(RUN_CASES))
def test_decode_runs_match_one_step_and_general_loop(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fused loop's inner loop over consecutive decode-only iterations (single.DECODE_RUNS) against the same loop
    one iteration at a time and against the general loop: identical records, float for float."""
    lim, kw, clients = RUN_CASES[case]
    reqs = long_stream(600, seed=11, **kw)  # type: ignore[arg-type]
    runs, ref = both(lim, reqs, clients)
    monkeypatch.setattr(single, "DECODE_RUNS", False)
    one_step, _ = both(lim, reqs, clients)
    # most iterations decode only (no arrival, no admission): the runs are long
    assert ref.iterations > 4 * len(reqs)
    for fast in (runs, one_step):
        for name in ("arrival_s", "first_token_s", "finish_s"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name), err_msg=name)
        for name in ("itl_s", "itl_weight", "sample_t_s", "queue_len", "running_seqs", "kv_util_frac"):
            assert getattr(fast, name) == getattr(ref, name), name
        assert (fast.iterations, fast.preemptions, fast.end_s) == (ref.iterations, ref.preemptions, ref.end_s)
    assert np.isfinite(ref.finish_s).all()
    if case == "preempting":
        assert ref.preemptions > 0
