"""Answers a user acts on agree with each other: each test runs both sides of a former contradiction."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from aiinfra import app
from aiinfra.errors import InfeasibleError
from aiinfra.specs.parallelism import InferencePlan

from .conftest import sim_max_rate

# 70B FP8 on H200 with 1,024-token prompts (the example: 58 users)
SEED_58_USERS = {
    "model": "meta-llama-3.1-70b",
    "hardware": {"accelerator": "nvidia-h200-sxm-141gb", "count": 8},
    "inference": {
        "weight_precision": "fp8",
        "kv_precision": "fp8",
        "input_tokens": 1024,
        "output_tokens": 256,
        "users": 58,
        "slo": {"ttft_p90_s": 0.1, "tpot_p99_s": 0.05},
    },
}


def test_capacity_moves_past_a_candidate_its_simulation_finds_infeasible() -> None:
    # one user and a 147 ms TTFT limit, just above one H200's analytic unloaded TTFT (146.6 ms: the prefill with
    # vLLM's own GEMM and prefill-attention timings at the sustained rate plus vLLM's 13 ms serving-path cost): tp1
    # is the cheapest candidate analytically, while the simulator's p90 spread puts its unloaded TTFT above the limit
    sc = app.load_scenario(SEED_58_USERS, set={"inference.users": 1, "inference.slo.ttft_p90_s": 0.147})
    analytic = app.capacity(sc)
    simulated = app.capacity(sc, simulate=True)
    cheapest = analytic.chosen
    # the other side: simulating the analytic choice alone cannot meet the SLO at any rate
    wl = sc.inference
    assert wl is not None
    one = replace(
        sc,
        cluster=replace(sc.cluster, count=cheapest.tp),
        inference=replace(wl, plan=InferencePlan(tp=cheapest.tp), users=None, num_requests=400),
    )
    with pytest.raises(InfeasibleError):
        app.find_max_rate(one)
    # capacity --simulate neither exits nor keeps it: the next candidate is chosen and the first says why it lost
    assert simulated.chosen != cheapest
    assert simulated.chosen.usd_per_hour is not None and cheapest.usd_per_hour is not None
    assert simulated.chosen.usd_per_hour >= cheapest.usd_per_hour
    passed_over = [o for o in simulated.options if o.verdict.startswith("misses the SLO in simulation")]
    assert [(o.tp, o.weight_precision) for o in passed_over] == [(cheapest.tp, cheapest.weight_precision)]
    assert simulated.simulated is not None and len(simulated.simulated["rejected"]) == 1


SIMULATE_EXAMPLE = "examples/simulate-llama70b-h100.yaml"


@pytest.mark.parametrize("share_of_max", [0.3, 0.55, 0.8])
def test_infer_at_a_request_rate_agrees_with_the_simulation_of_the_same_file(share_of_max: float) -> None:
    from .conftest import ROOT

    path = ROOT / SIMULATE_EXAMPLE
    saturated = app.infer(app.load_scenario(path, set={"inference.batch": "max"})).estimate
    rate = share_of_max * saturated.requests_per_s
    sc = app.load_scenario(path, set={"inference.request_rate_per_s": rate, "inference.num_requests": 3000})
    at_rate = app.infer(sc).estimate
    sim = app.simulate(sc).run.summary
    assert at_rate.load.startswith(f"at {rate:.4g} requests/s")
    assert at_rate.requests_per_s == pytest.approx(rate)
    assert at_rate.ttft_s == pytest.approx(sim.ttft_s.mean, rel=0.25)
    assert at_rate.tpot_s == pytest.approx(sim.tpot_exclusive_s.mean, rel=0.25)
    # the former answer: the saturated batch's latency whatever the rate
    assert saturated.load.startswith("saturated") and saturated.tpot_s > 2 * at_rate.tpot_s


def test_ttft_under_load_is_never_below_the_unloaded_ttft() -> None:
    base = {**SEED_58_USERS, "hardware": {"accelerator": "nvidia-h200-sxm-141gb", "count": 1}}
    one = app.infer(app.load_scenario(base, set={"inference.users": None, "inference.concurrency": 1})).estimate
    for users in (2, 8, 58):
        loaded = app.infer(app.load_scenario(base, set={"inference.users": users})).estimate
        assert loaded.ttft_s >= one.ttft_s, users


def test_a_demand_beyond_the_deployment_says_it_is_saturated() -> None:
    from .conftest import ROOT

    sc = app.load_scenario(ROOT / SIMULATE_EXAMPLE, set={"inference.request_rate_per_s": 1000})
    e = app.infer(sc).estimate
    assert e.load.startswith("saturated: the demand 1000 requests/s exceeds")
    assert e.requests_per_s < 1000


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    import aiinfra
    from aiinfra.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"aiinfra {aiinfra.__version__}"


LLAMA_8B_TRAINING = {
    "model": "meta-llama-3.1-8b",
    "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 8},
    "training": {"tokens": 1.5e13, "seq_len": 8192, "global_batch_seqs": 512, "precision": "bf16"},
}


def test_a_count_no_layout_fills_trains_on_the_largest_count_that_works() -> None:
    # dp must divide 512, tp the 8 KV heads and 2·cp the 8,192 tokens (powers of two); pp stages hold ⌈32/pp⌉
    # layers with the rest on the first and last stage, at least one each: pp ∈ {1–9, 11, 12, 16, 17, 32} (pp = 10:
    # 8 stages × 4 = 32 leaves the first and last none). 24 = 8 × pp 3 (stages 11, 11, 10) is filled;
    # 200 = 2³ × 25 is not (pp 25, 50, 100, 200 are all refused) and its largest usable count is 192 = 64 × pp 3.
    r24 = app.train(app.load_scenario(LLAMA_8B_TRAINING, set={"hardware.count": 24}))
    assert r24.idle == 0 and r24.best.plan["pp"] % 3 == 0
    r200 = app.train(app.load_scenario(LLAMA_8B_TRAINING, set={"hardware.count": 200}))
    r192 = app.train(app.load_scenario(LLAMA_8B_TRAINING, set={"hardware.count": 192}))
    assert (r200.idle, r192.idle) == (8, 0)
    assert r200.best.plan == r192.best.plan
    assert r200.best.time_to_train_s == pytest.approx(r192.best.time_to_train_s)
    d = r200.to_dict()
    assert (d["accelerators_used"], d["accelerators_idle"]) == (192, 8)
    assert d["idle_accelerator_hours"] == pytest.approx(8 * r192.best.time_to_train_s / 3600)


@pytest.mark.parametrize(("count", "used"), [(8, 8), (40, 40), (96, 96), (200, 192), (256, 256)])
def test_every_count_gets_a_plan(count: int, used: int) -> None:
    # usable counts are 2^k × pp with pp from the list above: 40 = 8 × 5, 96 = 32 × 3, 192 = 64 × 3; no pp in the
    # list gives 200 (200 = 2³ × 25)
    r = app.train(app.load_scenario(LLAMA_8B_TRAINING, set={"hardware.count": count}))
    assert count - r.idle == used


def test_a_given_training_plan_obeys_the_search_rules() -> None:
    from aiinfra.errors import SpecError

    with pytest.raises(SpecError, match="tp does not divide num_heads=32"):
        app.train(app.load_scenario(LLAMA_8B_TRAINING, set={"hardware.count": 3, "training.plan": {"tp": 3}}))


def test_a_given_inference_plan_obeys_the_head_split() -> None:
    from aiinfra.errors import SpecError

    base = {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 3},
        "inference": {"input_tokens": 512, "output_tokens": 128, "concurrency": 4, "plan": {"tp": 3}},
    }
    with pytest.raises(SpecError) as exc:
        app.infer(app.load_scenario(base))
    assert exc.value.field == "inference.plan.tp"


@pytest.mark.parametrize("example", ["finetune-lora-7b", "finetune-qlora-70b", "cost-finetune-7b-1xh100"])
def test_train_and_cost_plan_the_fine_tune_that_memory_sizes(example: str) -> None:
    from .conftest import EXAMPLES

    sc = app.load_scenario(EXAMPLES / f"{example}.yaml")
    mem = app.memory(sc).report
    adapter_row = next(r for r in mem.rows if r.label.startswith(("lora", "qlora")))
    plan = app.train(sc)
    assert plan.best.fits and adapter_row.fits
    assert plan.best.memory_per_accelerator_bytes == pytest.approx(adapter_row.total_bytes, rel=1e-3)
    assert plan.best.memory_breakdown["optimizer_states_bytes"] == pytest.approx(adapter_row.optimizer_states_bytes)
    # cost prices the same run: its duration is this plan's time-to-train
    if sc.source.extras.get("cost"):
        bill = app.cost(sc)
        assert bill.usage.duration_s == pytest.approx(plan.best.time_to_train_s)


def test_a_frozen_base_counts_forward_and_input_gradient_flops_only() -> None:
    from .conftest import EXAMPLES

    lora = app.train(app.load_scenario(EXAMPLES / "finetune-lora-7b.yaml")).best
    full = app.train(
        app.load_scenario(
            EXAMPLES / "finetune-lora-7b.yaml", set={"training.finetune.method": "full", "hardware.count": 8}
        )
    ).best
    # forward 2N + input-gradient 2N of full training's 6N per token (same model, tokens per step and seq_len)
    assert lora.model_flop_per_step == pytest.approx(full.model_flop_per_step * 2 / 3)


def test_a_multi_node_training_bill_uses_only_instances_that_hold_the_plans_nodes() -> None:
    # 64 A100 80GB planned on 8-GPU nodes: the catalog also lists single-A100 VMs, which cannot hold those nodes
    sc = app.load_scenario(
        LLAMA_8B_TRAINING,
        set={"hardware.accelerator": "nvidia-a100-sxm4-80gb", "hardware.count": 64, "training.tokens": 1e11},
    )
    assert sc.cluster.per_node == 8
    bill = app.cost(sc)
    assert bill.options and all(o.price.accelerators_per_instance >= 8 for o in bill.options)
    assert all(o.instances == 8 for o in bill.options)  # whole instances: 64 / 8
    assert any("left out" in n and "1-accelerator instances" in n for n in bill.notes)
    # one accelerator: the single-GPU VMs are the natural offers and stay
    one = app.cost(
        app.load_scenario(
            LLAMA_8B_TRAINING,
            set={"hardware.accelerator": "nvidia-a100-sxm4-80gb", "hardware.count": 1, "cost.usage.duration_s": 3600},
        )
    )
    assert any(o.price.accelerators_per_instance == 1 for o in one.options)


def test_users_with_think_time_follow_the_interactive_response_time_law() -> None:
    from .conftest import ROOT

    users, think_s = 200, 20.0
    sc = app.load_scenario(
        ROOT / SIMULATE_EXAMPLE,
        set={"inference.request_rate_per_s": None, "inference.concurrency": users, "inference.think_time_s": think_s},
    )
    e = app.infer(sc).estimate
    resp_s = e.ttft_s + (sc.inference.output_tokens - 1) * e.tpot_s  # type: ignore[union-attr]
    # N users thinking Z between answers: X = N/(R + Z) requests/s, N·R/(R + Z) of them in flight
    assert e.requests_per_s == pytest.approx(users / (resp_s + think_s), rel=1e-9)
    assert abs(e.batch_seqs - users * resp_s / (resp_s + think_s)) <= 1.0
    assert e.batch_seqs < users / 4  # most users are reading, not waiting
    # the simulator's closed loop with exponential think times gives the same throughput while every client is
    # still active: requests finished per second over the second quarter of the run (the first quarter holds the
    # clients' common start, the end the stragglers' last requests)
    closed = app.load_scenario(sc, set={"inference.arrival": {"kind": "concurrency"}, "inference.num_requests": 6000})
    finish = app.simulate(closed).run.records.finish_s
    end_s = float(finish.max())
    window = (finish >= 0.25 * end_s) & (finish < 0.5 * end_s)
    assert int(window.sum()) / (0.25 * end_s) == pytest.approx(e.requests_per_s, rel=0.1)


def test_capacity_for_users_who_think_needs_fewer_accelerators() -> None:
    from .conftest import EXAMPLES

    path = EXAMPLES / "capacity-llama70b-10k-users.yaml"
    always = app.capacity(app.load_scenario(path)).chosen
    chat = app.capacity(app.load_scenario(path, set={"inference.think_time_s": 30.0})).chosen
    assert chat.accelerators < always.accelerators


def test_the_ranked_plans_are_distinct_and_the_answer_says_why_it_wins() -> None:
    from .conftest import EXAMPLES

    r = app.train(app.load_scenario(EXAMPLES / "train-llama3.1-70b-h100.yaml"))
    layouts = [tuple(sorted((k, v) for k, v in e.plan.items() if k != "recompute")) for e in r.report.estimates]
    assert len(set(layouts)) == len(layouts)  # no layout twice under another recompute setting
    second = r.report.estimates[1]
    gain = second.step_time_s / r.best.step_time_s - 1.0
    assert r.why.endswith(f"{gain:.1%} shorter steps than the next distinct layout ({app.plan_label(second.plan)})")


def _own_price_overlay(folder: Any) -> Any:
    """An overlay with one user-quoted single-H100 offer (a price the catalog does not list)."""
    prices = folder / "prices"
    prices.mkdir(parents=True)
    (prices / "cloud.csv").write_text(
        "id,provider,instance,region,accelerator,accelerators_per_instance,pricing,usd_per_hour,source_title,"
        "source_url,read_on,notes\n"
        "acme-h100-1x-on-demand,acme,h100-1x,us,nvidia-h100-sxm5-80gb,1,on-demand,2.5,our quote from Acme,,"
        "2026-11-01,user-given\n"
    )
    return folder


def test_prices_the_user_controls_through_a_catalog_overlay(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import aiinfra
    from aiinfra.catalog import Catalog
    from aiinfra.cli import main

    from .conftest import EXAMPLES

    overlay = _own_price_overlay(tmp_path)
    example = EXAMPLES / "cost-finetune-7b-1xh100.yaml"
    rc = main(["cost", str(example), "--json", "--catalog-overlay", str(overlay)])
    cheapest = json.loads(capsys.readouterr().out)["cheapest"]
    assert rc == 0 and cheapest["price_id"] == "acme-h100-1x-on-demand"
    # one GPU for the plan's time-to-train at the quoted $2.50 an hour, no idle GPUs billed
    plan = aiinfra.train(example)
    assert cheapest["compute_usd"] == pytest.approx(2.5 * plan.best.time_to_train_s / 3600, rel=1e-6)
    api = aiinfra.cost(example, catalog=Catalog.default().with_overlay(overlay))
    assert api.cheapest is not None and api.cheapest.price.id == "acme-h100-1x-on-demand"
    # the shipped catalog is untouched afterwards
    assert all(o.price.id != "acme-h100-1x-on-demand" for o in aiinfra.cost(example).options)


def test_catalog_lists_prices_with_dates_and_conflict_flags() -> None:
    import csv

    from .conftest import ROOT

    with (ROOT / "src/aiinfra/catalog/data/prices/cloud.csv").open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["accelerator"] == "nvidia-a100-sxm4-80gb"]
    listed = app.price_list("nvidia-a100-sxm4-80gb")
    assert sorted(p.id for p in listed.prices) == sorted(r["id"] for r in rows)
    assert {p.id for p in listed.prices if p.conflicting} == {r["id"] for r in rows if "CONFLICT" in r["notes"]}
    assert app.catalog_show(rows[0]["id"]).to_dict()["kind"] == "prices"
    # a row without a date says so instead of an age
    from dataclasses import replace as with_fields

    from aiinfra.report.text import age_text

    undated = with_fields(listed.prices[0], read_on="", age_days=None)
    # an undated price cannot be shown fresh: it is marked stale with the command that refreshes prices
    assert age_text(undated) == f"{undated.id}, date unknown, STALE (date unknown; run `aiinfra prices refresh`)"


def _offer(id_: str, per_instance: int, usd_per_hour: float) -> Any:
    from aiinfra.costing.prices import InstancePrice

    return InstancePrice(
        id=id_,
        source_title="t",
        source_url=None,
        read_on="2026-01-01",
        age_days=0,
        provider="p",
        instance=id_,
        region="r",
        accelerator="a",
        accelerators_per_instance=per_instance,
        pricing="on-demand",
        usd_per_hour=usd_per_hour,
    )


def test_capacity_bills_whole_instances_by_hand() -> None:
    from aiinfra.planning.capacity import whole_instance_bill

    eight, one = _offer("eight", 8, 20.0), _offer("one", 1, 3.0)
    # 113 tp2 replicas: a 1-GPU VM cannot hold a replica; 8 GPUs hold 4 → ceil(113 / 4) = 29 instances = 232 GPUs
    bill = whole_instance_bill([one, eight], 113, 2)
    assert bill is not None and (bill.instances, bill.accelerators_billed, bill.usd_per_hour) == (29, 232, 580.0)
    # one tp1 replica: one 1-GPU VM ($3/h) beats an 8-GPU instance ($20/h)
    bill = whole_instance_bill([eight, one], 1, 1)
    assert bill is not None and (bill.price.source_id, bill.accelerators_billed, bill.usd_per_hour) == ("one", 1, 3.0)
    # seven: 7 × $3 = $21 > one 8-GPU instance at $20 (one GPU idle)
    bill = whole_instance_bill([one, eight], 7, 1)
    assert bill is not None
    assert (bill.price.source_id, bill.accelerators_billed, bill.usd_per_hour) == ("eight", 8, 20.0)
    assert whole_instance_bill([one], 3, 2) is None  # no offer holds a tp2 replica


def test_capacity_bills_the_whole_instances_its_replicas_occupy() -> None:
    r = app.capacity(app.load_scenario("examples/capacity-llama70b-10k-users.yaml"))
    for o in r.options:
        if o.accelerators == 0 or o.price is None:
            continue
        per = o.price.accelerators_per_instance
        assert o.instances == -(-o.replicas // (per // o.tp))  # ceil(replicas / replicas per instance)
        assert o.accelerators_billed == o.instances * per >= o.accelerators == o.replicas * o.tp
        assert o.usd_per_hour == pytest.approx(o.instances * o.price.instance_usd_per_hour)


def test_tco_bills_whole_cloud_instances() -> None:
    from aiinfra.costing.tco import HOURS_PER_MONTH

    # 12 H100 on 8-GPU instances: 2 instances (16 GPUs, 4 idle) are billed
    r = app.tco(app.load_scenario("examples/tco-dgx-h100-vs-cloud.yaml", set={"hardware.count": 12}))
    assert r.cloud_lines
    for ln in r.cloud_lines:
        per = ln.accelerators_billed // ln.instances
        assert per >= 8  # a multi-node cluster only on instances that hold a whole 8-GPU node (1-GPU pods left out)
        assert ln.instances == -(-12 // per)
        hours = HOURS_PER_MONTH * (1.0 if ln.pricing.startswith("reserved") else 0.9)
        assert ln.monthly_usd == pytest.approx(ln.usd_per_accelerator_hour * per * ln.instances * hours)


@pytest.mark.parametrize(
    ("model", "accelerator", "tp", "precision"),
    [
        ("meta-llama-3.1-8b", "nvidia-b200-sxm-180gb", 1, "fp8"),
        ("meta-llama-3.1-8b", "nvidia-a100-sxm4-80gb", 1, "bf16"),
        ("meta-llama-3.1-8b", "nvidia-l4", 1, "fp8"),
        ("meta-llama-3.1-405b", "nvidia-h100-sxm5-80gb", 8, "fp8"),
    ],
)
def test_tpot_never_falls_when_the_batch_grows(model: str, accelerator: str, tp: int, precision: str) -> None:
    # a decode step of B sequences reads the same weights as one of B - 1 and does more work (roofline: the time
    # max(FLOP / peak, bytes / bandwidth) is non-decreasing in B); the issue saw 8B fp8 on B200 go 5.05 -> 3.55 ms
    base = app.load_scenario(
        {
            "model": model,
            "hardware": {"accelerator": accelerator, "count": tp},
            "inference": {
                "weight_precision": precision,
                "input_tokens": 1024,
                "output_tokens": 256,
                "batch": 1,
                "plan": {"tp": tp},
            },
        }
    )
    tpot = [app.infer(replace(base, inference=replace(base.inference, batch=b))).estimate.tpot_s for b in range(1, 65)]
    falls = [(b, tpot[b - 2], tpot[b - 1]) for b in range(2, 65) if tpot[b - 1] < tpot[b - 2] * (1 - 1e-9)]
    assert not falls, f"TPOT falls at batch (b, TPOT(b-1), TPOT(b)): {falls[:5]}"


def test_the_rate_search_reports_each_simulation_to_a_progress_callback() -> None:
    from aiinfra.analytic.step_time import FixedStepTime

    sc = app.load_scenario(
        "examples/simulate-llama70b-h100.yaml",
        set=[
            "inference.num_requests=50",
            "inference.output_tokens=1",
            "inference.simulation.output_lengths=null",
            "inference.arrival={kind: gamma, cv: 0.001}",
            "inference.simulation.scheduler={kind: static, max_num_seqs: 1}",
            "inference.slo={ttft_p90_s: 1.5}",
        ],
    )
    seen: list[tuple[int, int | None]] = []
    _, points = sim_max_rate(
        sc, start_rate_per_s=1.5, step_model=FixedStepTime(1.0), progress=lambda done, total: seen.append((done, total))
    )
    assert seen == [(i, None) for i in range(1, len(points) + 1)]


def _tiny_training_csv(tmp_path: Any, rows: int = 3) -> Any:
    from aiinfra.app.validation import shipped_cases

    lines = shipped_cases()[0].read_text().splitlines()
    path = tmp_path / "three.csv"
    path.write_text("\n".join(lines[: rows + 1]) + "\n")
    return path


def test_validate_reports_each_row_to_a_progress_callback(tmp_path: Any) -> None:
    path = _tiny_training_csv(tmp_path)
    seen: list[tuple[int, int | None]] = []
    app.validate([path, path], progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 6) for i in range(1, 7)]  # two files of three rows: one count over both


class _Terminal:
    """A stderr that says it is a terminal (tqdm draws on it)."""

    def __init__(self) -> None:
        import io

        self.buf = io.StringIO()

    def isatty(self) -> bool:
        return True

    def write(self, s: str) -> int:
        return self.buf.write(s)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("quiet", [False, True])
def test_progress_goes_to_a_terminal_stderr_unless_quiet(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], quiet: bool
) -> None:
    import json
    import sys

    from aiinfra.cli import main
    from aiinfra.commands import progress

    path = _tiny_training_csv(tmp_path)
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.0)
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert main(["validate", str(path), "--json", *(["--quiet"] if quiet else [])]) == 0
    json.loads(capsys.readouterr().out)  # stdout stays one JSON object
    assert ("validate" in term.buf.getvalue()) is not quiet


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from aiinfra.cli import main

    assert main(["validate", str(_tiny_training_csv(tmp_path))]) == 0
    assert capsys.readouterr().err == ""
