"""SGLang's admission rule (PrefillAdder): a new prompt waits until the free KV, less the running requests' expected
outputs, holds its prompt and its own outputs. Expected values are hand calculations from the rule as read in the
sglang wheels (managers/schedule_policy.py, managers/scheduler.py)."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.step_time import StepBatch
from aiinfra.sim.replica import OutputReserve, Replica, SchedulerLimits, Seq
from aiinfra.sim.run import _output_reserve

RESERVE = OutputReserve(
    init_ratio=0.7, floor_ratio=0.098, decay_per_step=0.0010033, clip_tokens=4096, retract_decode_steps=20
)


class _Flat:
    """Every iteration takes 10 ms (admission does not depend on time)."""

    def iteration_time_s(self, batch: StepBatch) -> float:
        return 0.01


def _limits(reserve: OutputReserve | None) -> SchedulerLimits:
    # a 1000-token cache of 1-token blocks (SGLang's page size 1), whole prompts run alone
    return SchedulerLimits(
        static=False,
        max_num_seqs=16,
        max_num_batched_tokens=4096,
        chunked_prefill=False,
        preemption="recompute",
        kv_capacity_tokens=1000,
        block_tokens=1,
        tokens_per_step=1.0,
        output_reserve=reserve,
    )


def _two_decoding(reserve: OutputReserve | None) -> Replica:
    """A replica whose two requests (100-token prompts, 300 outputs) have prefilled and sampled their first token."""
    rep = Replica(0, _Flat(), _limits(reserve))  # type: ignore[arg-type]
    for rid in (0, 1):
        rep.enqueue(Seq(rid=rid, prompt_tokens=100, output_tokens=300, arrival_s=0.0))
    # the empty cache: each takes 100 + 300 = 400 off rem_total 1000, so both are admitted together
    batch = rep.plan()
    assert batch is not None and batch.prefill_tokens == 200 and batch.decode_seqs == 0
    rep.start(batch)
    rep.finish_step(0.01, [], [])
    assert len(rep.decode) == 2
    return rep


@pytest.mark.parametrize(("output_tokens", "admitted"), [(170, True), (180, False)])
def test_a_prompt_waits_for_room_for_the_running_outputs(output_tokens: int, admitted: bool) -> None:
    # KV in use: 2 x (100 + 1) = 202 tokens; this step's decode growth 2 -> free 1000 - 202 - 2 = 796.
    # Held back for the running outputs: 2 x min(300 - 1, 4096) x 0.7 = 418.6 -> rem_total 796 - 418.6 = 377.4.
    # A 200-token prompt with 170 outputs needs 370 < 377.4 (admitted); with 180, 380 >= 377.4 (it waits, and the
    # step decodes the two running requests instead).
    rep = _two_decoding(RESERVE)
    assert rep.token_ratio == pytest.approx(0.7)  # a prefill-only step does not decay the ratio
    rep.enqueue(Seq(rid=2, prompt_tokens=200, output_tokens=output_tokens, arrival_s=0.01))
    batch = rep.plan()
    assert batch is not None
    if admitted:
        assert (batch.prefill_tokens, batch.decode_seqs) == (200, 0)
    else:
        assert (batch.prefill_tokens, batch.decode_seqs) == (0, 2)
        assert rep.queued() == 1


def test_without_the_rule_the_prompt_needs_only_its_own_blocks() -> None:
    # vLLM-style admission: 200 + 1 block <= 796 free -> admitted even with 180 outputs
    rep = _two_decoding(None)
    rep.enqueue(Seq(rid=2, prompt_tokens=200, output_tokens=180, arrival_s=0.01))
    batch = rep.plan()
    assert batch is not None and batch.prefill_tokens == 200


def test_the_ratio_decays_per_decode_step_and_resets_when_idle() -> None:
    rep = _two_decoding(RESERVE)
    batch = rep.plan()  # decode only
    assert batch is not None and batch.decode_seqs == 2
    assert rep.token_ratio == pytest.approx(0.7 - 0.0010033)
    # after a retraction: (outputs decoded + 20 per running request) / (outputs requested + 1);
    # two requests with 1 output each, 300 requested each: (2 + 40) / 601
    assert rep._retract_ratio(RESERVE) == pytest.approx(42 / 601)
    rep.decode.clear()  # nothing left to run: the scheduler idles and the ratio starts again
    rep.finish_heap.clear()
    rep.sum_ctx_tokens = 0.0
    assert rep.plan() is None
    assert rep.token_ratio == pytest.approx(0.7)


def test_sglang_releases_carry_the_rule_with_their_constants() -> None:
    sg = catalog.engine("sglang")
    old = sg.admission_reserve((0, 3, 0))
    assert old is not None and (old.init_ratio, old.floor_ratio, old.decay_per_step) == (0.7, 0.1, 0.001)
    new = sg.admission_reserve((0, 5, 7))
    # floor = 0.7 x 0.14 = 0.098; decay = (0.7 - 0.098) / 600 = 0.0010033
    assert new is not None and new.floor_ratio == pytest.approx(0.7 * 0.14)
    assert new.decay_per_step == pytest.approx((0.7 - 0.098) / 600, rel=1e-4)
    assert new.clip_tokens == 4096 and new.retract_decode_steps == 20
    assert sg.admission_reserve(None) is new
    assert sg.admission_reserve((0, 2, 14)) is None  # not read
    assert catalog.engine("vllm").admission_reserve(None) is None
    # attention DP: schedule_conservativeness x 0.3 -> start 0.21, floor 0.21 x 0.14 = 0.0294, decay 0.1806 / 600
    dp = _output_reserve(sg, "0.5.7", "mixed", attention_dp=True)
    assert dp is not None
    assert (dp.init_ratio, dp.floor_ratio) == (pytest.approx(0.21), pytest.approx(0.0294))
    assert dp.decay_per_step == pytest.approx((0.21 - 0.0294) / 600, rel=1e-4)
    assert _output_reserve(sg, "0.5.7", "prefill", attention_dp=False) is None


def test_the_planner_holds_the_floor_share_of_the_outputs_per_sglang_sequence() -> None:
    # the analytic replica's per-sequence KV: 1024 prompt + 256 / 2 outputs on average, and under SGLang also
    # ceil(0.098 x 256 / 2) = ceil(12.544) = 13 tokens held back for the remaining outputs at the ratio's floor
    from pathlib import Path

    from aiinfra import app

    example = Path(__file__).resolve().parents[1] / "examples" / "simulate-llama70b-h100.yaml"
    base = app.load_scenario(example)
    for engine, per_seq in (("sglang", 1024 + 128 + 13), ("vllm", 1024 + 128)):
        e = app.infer(app.load_scenario(base, set={"inference.engine": engine})).estimate
        assert e.max_concurrent_seqs == e.kv_capacity_tokens // per_seq, engine
