"""Serving-simulator kernel with hand-derived timelines (no catalog, no analytic model: test step models).

Each expected value below is worked out by hand in the comment above it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra.analytic.step_time import FixedStepTime, StepBatch
from aiinfra.sim.arrivals import Requests
from aiinfra.sim.engine import Records, Simulation
from aiinfra.sim.metrics import summarise
from aiinfra.sim.replica import Replica, SchedulerLimits, Seq
from aiinfra.sim.router import LeastOutstandingTokens, RoundRobin


class LinearStep:
    """t = a + b · tokens (a toy step-time model)."""

    def __init__(self, a_s: float, b_s: float) -> None:
        self.a_s, self.b_s = a_s, b_s

    def iteration_time_s(self, batch: StepBatch) -> float:
        return self.a_s + self.b_s * batch.tokens


def lim(**kw: object) -> SchedulerLimits:
    base: dict[str, object] = dict(
        static=False,
        max_num_seqs=256,
        max_num_batched_tokens=2048,
        chunked_prefill=True,
        preemption="recompute",
        kv_capacity_tokens=1_000_000,
        block_tokens=1,
        tokens_per_step=1.0,
    )
    base.update(kw)
    return SchedulerLimits(**base)  # type: ignore[arg-type]


def reqs(rows: list[tuple[float, int, int]], priority: list[int] | None = None) -> Requests:
    a = np.array(rows, dtype=float)
    return Requests(
        arrival_s=a[:, 0],
        input_tokens=a[:, 1].astype(np.int64),
        output_tokens=a[:, 2].astype(np.int64),
        priority=np.array(priority or [0] * len(rows), dtype=np.int64),
    )


def run(model: object, limits: SchedulerLimits, rows: list[tuple[float, int, int]], **kw: object) -> Records:
    prio = kw.pop("priority", None)
    sim = Simulation(model, limits, int(kw.pop("replicas", 1)), **kw)  # type: ignore[arg-type]
    return sim.run(reqs(rows, prio))  # type: ignore[arg-type]


def test_one_request_ttft_tpot_inclusive_exclusive() -> None:
    # step = 0.01 + 1e-4·tokens. Prefill of 100 tokens: 0.02 s → first token at 0.02. Four decode steps of
    # one token: 0.0101 s each → finish 0.0604. TTFT 0.02; e2e 0.0604; exclusive TPOT (0.0604 − 0.02)/4 =
    # 0.0101; inclusive TPOT 0.0604/5 = 0.01208.
    rec = run(LinearStep(0.01, 1e-4), lim(), [(0.0, 100, 5)])
    s = summarise(rec, None)
    assert s.ttft_s.mean == pytest.approx(0.02)
    assert s.e2e_s.mean == pytest.approx(0.0604)
    assert s.tpot_exclusive_s.mean == pytest.approx(0.0101)
    assert s.tpot_inclusive_s.mean == pytest.approx(0.01208)
    assert s.itl_s.p50 == pytest.approx(0.0101)
    assert s.iterations == 5


@pytest.mark.parametrize(("rho", "n"), [(0.5, 40_000), (0.7, 60_000)])
def test_md1_mean_wait(rho: float, n: int) -> None:
    # M/D/1 (Poisson arrivals λ, one server, deterministic service D = 1 s: a static batch of one request whose
    # only output token comes from its prefill iteration). Pollaczek–Khinchine: mean wait W = ρ·D / (2(1 − ρ))
    # = 0.5 s at ρ = 0.5 and 1.1667 s at ρ = 0.7. Wait = TTFT − D.
    rng = np.random.default_rng(11)
    gaps = rng.exponential(1.0 / rho, size=n)
    arrivals = np.cumsum(gaps)
    rows = [(float(t), 8, 1) for t in arrivals]
    rec = run(FixedStepTime(1.0), lim(static=True, max_num_seqs=1), rows)
    wait = rec.first_token_s - rec.arrival_s - 1.0
    assert float(wait.mean()) == pytest.approx(rho / (2 * (1 - rho)), rel=0.05)


def test_chunked_prefill_splits_prompt() -> None:
    # budget 64 tokens, prompt 200: chunks 64 + 64 + 64 + 8 → first token after 4 fixed 1-s steps;
    # without chunked prefill the whole prompt runs in one step.
    assert run(FixedStepTime(1.0), lim(max_num_batched_tokens=64), [(0.0, 200, 1)]).first_token_s[0] == 4.0
    assert (
        run(FixedStepTime(1.0), lim(max_num_batched_tokens=64, chunked_prefill=False), [(0.0, 200, 1)]).first_token_s[0]
        == 1.0
    )


def test_prefill_stalls_decodes_without_chunking() -> None:
    # 1-s steps. A (0 s, 10 in, 10 out): prefill [0,1], decodes end at 2, 3 ... B (2.5 s, 10 in, 2 out) is
    # admitted at 3. Chunked: step [3,4] = B's prefill + A's 3rd decode → A's 9th decode ends at 10.
    # Unchunked: [3,4] is prefill-only, A stalls one step → A finishes at 11. B: first token 4, done 5.
    rows = [(0.0, 10, 10), (2.5, 10, 2)]
    on = run(FixedStepTime(1.0), lim(), rows)
    off = run(FixedStepTime(1.0), lim(chunked_prefill=False), rows)
    assert list(on.finish_s) == [10.0, 5.0]
    assert list(off.finish_s) == [11.0, 5.0]


def test_chunked_prefill_steps_run_alone() -> None:
    # SGLang without --enable-mixed-chunk: chunks of 8 tokens, but an iteration with prompt chunks runs without the
    # decodes. 1-s steps. A (0 s, 8 in, 10 out): prefill [0,1], decodes end at 2, 3 ... B (2.5 s, 20 in, 2 out) is
    # admitted at 3 and prefills 8 + 8 + 4 tokens in [3,4], [4,5], [5,6] with the whole budget (not 8 − 1 for A's
    # decode), A waiting 3 steps → A's 9 decodes end at 10 + 3 = 13; B: first token 6, second token 7.
    # Mixed (the default): B's chunks are 7, 7, 6 beside A's decodes → B's first token at 6, A done at 10.
    rows = [(0.0, 8, 10), (2.5, 20, 2)]
    alone = run(FixedStepTime(1.0), lim(max_num_batched_tokens=8, prefill_alone=True), rows)
    mixed = run(FixedStepTime(1.0), lim(max_num_batched_tokens=8), rows)
    assert list(alone.finish_s) == [13.0, 7.0]
    assert list(alone.first_token_s) == [1.0, 6.0]
    assert list(mixed.finish_s) == [10.0, 7.0]


def test_whole_prompts_ride_with_the_decodes_in_flight_batching() -> None:
    # TensorRT-LLM without chunked context: B's whole 20-token prompt is prefilled in one iteration, but beside A's
    # decode (in-flight batching), so A is not delayed. 1-s steps, budget 32. A (0 s, 8 in, 10 out): prefill [0,1],
    # decodes end at 2 ... 10. B (2.5 s, 20 in, 2 out) is admitted at 3 (20 ≤ 32 − 1 decode slot): first token 4,
    # done 5; A done at 10. Run alone (vLLM V0, the default without chunking) A waits one step: done at 11.
    rows = [(0.0, 8, 10), (2.5, 20, 2)]
    mixed = run(
        FixedStepTime(1.0), lim(max_num_batched_tokens=32, chunked_prefill=False, whole_prompts_with_decodes=True), rows
    )
    alone = run(FixedStepTime(1.0), lim(max_num_batched_tokens=32, chunked_prefill=False), rows)
    assert list(mixed.finish_s) == [10.0, 5.0]
    assert list(mixed.first_token_s) == [1.0, 4.0]
    assert list(alone.finish_s) == [11.0, 5.0]


def test_static_versus_continuous_batching() -> None:
    # 1-s steps, batch ≤ 2. R0 (0 s, out 3) runs alone: first token 1, done 3. R1 (0.5 s) and R2 (0.6 s), one
    # output token each. Static: they wait for the batch to empty at 3, prefill together [3,4] → TTFT 3.5 and
    # 3.4. Continuous: both join at 1 → prefilled in [1,2] → TTFT 1.5 and 1.4, R0 still done at 3.
    rows = [(0.0, 10, 3), (0.5, 10, 1), (0.6, 10, 1)]
    st_ = run(FixedStepTime(1.0), lim(static=True, max_num_seqs=2), rows)
    co = run(FixedStepTime(1.0), lim(max_num_seqs=3), rows)
    assert list(st_.first_token_s - st_.arrival_s) == pytest.approx([1.0, 3.5, 3.4])
    assert list(co.first_token_s - co.arrival_s) == pytest.approx([1.0, 1.5, 1.4])
    assert list(co.finish_s) == [3.0, 2.0, 2.0]


def test_preemption_by_recompute() -> None:
    # KV 30 tokens, 1-token blocks (no fragmentation), 1-s steps. R0 (0 s, 10 in, 12 out), R1 (0.5 s, same).
    # KV after steps ending at 1..5: 11, 23, 25, 27, 29. Planning at 5: 29 + 2 > 30 → preempt the later
    # arrival R1 (4 tokens made, context 14). R0 runs alone to its 11th decode step, ending at 12. R1 then
    # re-prefills 14 tokens [12,13] (token 5) and decodes 7 more → done at 20: e2e 19.5; its TTFT (1.5) stays.
    rows = [(0.0, 10, 12), (0.5, 10, 12)]
    sim = Simulation(FixedStepTime(1.0), lim(kv_capacity_tokens=30), 1)
    rec = sim.run(reqs(rows))
    assert list(rec.finish_s) == [12.0, 20.0]
    assert list(rec.first_token_s - rec.arrival_s) == [1.0, 1.5]
    assert rec.preemptions == 1
    assert max(rec.kv_util_frac) == pytest.approx(29 / 30)


def test_no_evict_reservation_queues_instead_of_preempting() -> None:
    # The recompute case above under TensorRT-LLM's GUARANTEED_NO_EVICT: admission reserves prompt + output,
    # 10 + 12 = 22 of the 30 token slots, for the whole request. R1 (0.5 s) needs 22 with 8 free, so it waits
    # while R0 prefills [0, 1] and decodes 11 steps to 12 s; R1 is admitted at 12, prefills [12, 13] (TTFT 12.5)
    # and decodes to 24. No preemption; the cache never holds more than 22 of 30.
    rows = [(0.0, 10, 12), (0.5, 10, 12)]
    rec = run(FixedStepTime(1.0), lim(kv_capacity_tokens=30, reserve_full_context=True), rows)
    assert list(rec.finish_s) == [12.0, 24.0]
    assert list(rec.first_token_s - rec.arrival_s) == [1.0, 12.5]
    assert rec.preemptions == 0
    assert max(rec.kv_util_frac) == pytest.approx(22 / 30)
    # blocks of 8 tokens: each reservation rounds up to ceil(22 / 8) · 8 = 24 slots; with 48 both fit at once
    both = run(FixedStepTime(1.0), lim(kv_capacity_tokens=48, block_tokens=8, reserve_full_context=True), rows)
    assert list(both.finish_s) == [12.0, 13.0] and both.preemptions == 0


def test_preemption_by_swap_charges_pcie_copies() -> None:
    # As above with swap at 0.01 s per token: swap-out of 14 tokens lengthens step [5, 6.14]; R0 ends at 12.14;
    # swap-in lengthens R1's first decode step to 1.14 s [12.14, 13.28], then 7 more → 20.28.
    rows = [(0.0, 10, 12), (0.5, 10, 12)]
    rec = run(FixedStepTime(1.0), lim(kv_capacity_tokens=30, preemption="swap", swap_s_per_token=0.01), rows)
    assert list(rec.finish_s) == pytest.approx([12.14, 20.28])
    assert rec.preemptions == 1


def test_speculative_tokens_per_step() -> None:
    # 2.5 tokens per step, 11 output tokens: the prefill makes 1, ceil(10 / 2.5) = 4 decode steps → done at 5 s.
    rec = run(FixedStepTime(1.0), lim(tokens_per_step=2.5, budget_tokens_per_decode=4), [(0.0, 10, 11)])
    assert rec.finish_s[0] == 5.0


def test_priority_classes() -> None:
    # One sequence at a time, 1-s steps. R0 (0 s, out 5) done at 5. R1 (0.1 s, priority 1) and R2 (0.2 s,
    # priority 0): R2 goes first, [5,6]; R1 [6,7]. TTFT R1 = 6.9, R2 = 5.8.
    rows = [(0.0, 10, 5), (0.1, 10, 1), (0.2, 10, 1)]
    rec = run(FixedStepTime(1.0), lim(max_num_seqs=1), rows, priority=[0, 1, 0])
    assert list(rec.first_token_s - rec.arrival_s) == pytest.approx([1.0, 6.9, 5.8])
    classes = summarise(rec, None).priority_classes
    assert [(c.priority, c.requests) for c in classes] == [(0, 2), (1, 1)]
    assert classes[1].ttft_s.mean == pytest.approx(6.9)


def test_routers() -> None:
    # 2 replicas, 1-s steps. R0 (0 s, 1000 in, 100 out) → replica 0; R1 (0.1 s, 10 in, 1 out) → replica 1.
    # R2 (0.2 s, 10 in, 1 out): round-robin → replica 0, joins its step [1,2] → TTFT 1.8; least outstanding
    # tokens → replica 1 (11 tokens vs 1,100), busy until 1.1 → prefill [1.1, 2.1] → TTFT 1.9.
    rows = [(0.0, 1000, 100), (0.1, 10, 1), (0.2, 10, 1)]
    rr = run(FixedStepTime(1.0), lim(), rows, replicas=2, router="round-robin")
    lot = run(FixedStepTime(1.0), lim(), rows, replicas=2, router="least-outstanding-tokens")
    assert rr.first_token_s[2] - 0.2 == pytest.approx(1.8)
    assert lot.first_token_s[2] - 0.2 == pytest.approx(1.9)


def test_router_units() -> None:
    pool = [Replica(i, FixedStepTime(1.0), lim()) for i in range(3)]
    rr = RoundRobin()
    assert [rr.pick(pool).idx for _ in range(5)] == [0, 1, 2, 0, 1]
    pool[0].enqueue(Seq(rid=0, prompt_tokens=100, output_tokens=10, arrival_s=0.0))
    pool[1].enqueue(Seq(rid=1, prompt_tokens=5, output_tokens=5, arrival_s=0.0))
    assert pool[0].outstanding_tokens == 110
    assert LeastOutstandingTokens().pick(pool).idx == 2
    pool[2].enqueue(Seq(rid=2, prompt_tokens=50, output_tokens=5, arrival_s=0.0))
    assert LeastOutstandingTokens().pick(pool).idx == 1


def test_disaggregated_prefill_decode() -> None:
    # 1 prefill + 1 decode replica, 1-s steps, KV moves at 1 ms per token. 100-token prompt, 3 output tokens:
    # prefill [0,1] emits token 1; 101 context tokens → 0.101 s transfer; decode steps [1.101, 2.101] and
    # [2.101, 3.101] → done at 3.101.
    limits = lim(role="prefill")
    sim = Simulation(FixedStepTime(1.0), limits, 1, "round-robin", lim(role="decode"), 1, 0.001)
    rec = sim.run(reqs([(0.0, 100, 3)]))
    assert rec.first_token_s[0] == 1.0
    assert rec.finish_s[0] == pytest.approx(3.101)


def test_no_evict_prefill_replica_reserves_the_prompt_and_first_token_only() -> None:
    # A prefill replica of a disaggregated pair hands the KV off after the first token, so under whole-context
    # reservation it holds 10 + 1 = 11 slots per request (not 10 + 40): with 30 slots both 10-token prompts of
    # (0 s, 10 in, 40 out) prefill together in [0, 1] and both first tokens come at 1 s.
    pre, dec = lim(role="prefill", kv_capacity_tokens=30, reserve_full_context=True), lim(role="decode")
    sim = Simulation(FixedStepTime(1.0), pre, 1, "round-robin", dec, 1, 0.0)
    rec = sim.run(reqs([(0.0, 10, 40), (0.0, 10, 40)]))
    assert list(rec.first_token_s) == [1.0, 1.0]


def test_closed_loop_keeps_concurrency() -> None:
    # 2 clients, 4 requests of (10 in, 2 out), 1-s steps: the first two run together (done at 2), the next two
    # are sent at 2 and done at 4.
    sim = Simulation(FixedStepTime(1.0), lim(), 1)
    rec = sim.run(reqs([(0.0, 10, 2)] * 4), closed_loop_clients=2)
    assert list(rec.arrival_s) == [0.0, 0.0, 2.0, 2.0]
    assert list(rec.finish_s) == [2.0, 2.0, 4.0, 4.0]


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 40),
    static=st.booleans(),
    chunked=st.booleans(),
    preemption=st.sampled_from(["recompute", "swap"]),
    block=st.sampled_from([1, 16]),
    seqs=st.integers(1, 8),
    budget=st.integers(16, 512),
    replicas=st.integers(1, 3),
    router=st.sampled_from(["round-robin", "least-outstanding-tokens"]),
    disagg=st.booleans(),
    tps=st.sampled_from([1.0, 1.875]),
)
def test_kernel_properties(
    data: st.DataObject,
    n: int,
    static: bool,
    chunked: bool,
    preemption: str,
    block: int,
    seqs: int,
    budget: int,
    replicas: int,
    router: str,
    disagg: bool,
    tps: float,
) -> None:
    rows = [
        (data.draw(st.floats(0, 20)), data.draw(st.integers(1, 300)), data.draw(st.integers(1, 60))) for _ in range(n)
    ]
    prio = [data.draw(st.integers(0, 2)) for _ in range(n)]
    rows.sort()
    longest = max(i + o for _, i, o in rows)
    cap = data.draw(st.integers(longest + block + 2, longest + block + 2000))  # + 2: γ + 1 verify slots
    limits = lim(
        static=static,
        chunked_prefill=chunked,
        preemption=preemption,
        block_tokens=block,
        max_num_seqs=seqs,
        max_num_batched_tokens=budget,
        kv_capacity_tokens=cap,
        tokens_per_step=tps,
        swap_s_per_token=1e-4,
    )
    model = LinearStep(0.005, 1e-5)
    if disagg:
        sim = Simulation(
            model,
            limits.__class__(**{**_asdict(limits), "role": "prefill"}),
            replicas,
            router,
            limits.__class__(**{**_asdict(limits), "role": "decode"}),
            replicas,
            1e-6,
        )
    else:
        sim = Simulation(model, limits, replicas, router)
    rec = sim.run(reqs(rows, prio))
    assert np.all(np.isfinite(rec.finish_s))  # every request finishes: requests are conserved
    assert np.all(rec.first_token_s >= rec.arrival_s - 1e-12)
    assert np.all(rec.finish_s >= rec.first_token_s)  # TTFT ≤ end-to-end latency
    assert np.all(np.diff(rec.sample_t_s) >= 0)  # time never runs backwards
    assert max(rec.kv_util_frac) <= 1.0 + 1e-9  # KV blocks within capacity
    for r in sim.replicas:  # nothing left behind
        assert not r.has_work() and r.reserved_prompt_tokens == 0
        assert r.sum_ctx_tokens == pytest.approx(0.0, abs=1e-6)
        assert r.outstanding_tokens == pytest.approx(0.0, abs=1e-6)


def _asdict(x: SchedulerLimits) -> dict[str, object]:
    return {f: getattr(x, f) for f in x.__slots__}  # type: ignore[attr-defined]
