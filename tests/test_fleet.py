"""Fleet design in `aiinfra capacity`: request classes on mixed accelerator types, and the load over a day.

The integer program is checked against brute force over every assignment (instances counted by hand: the
accelerators each type must hold, rounded up to whole instances), the day fleet against hand-computed bills and an
autoscaler stepped by hand.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from aiinfra import app
from aiinfra.app.tables import price_book
from aiinfra.costing.prices import InstancePrice
from aiinfra.errors import SpecError
from aiinfra.planning.capacity import Deployment, Price
from aiinfra.planning.fleet import ClassPlacement, _autoscale, _solve, plan_day
from aiinfra.specs.fleet import LoadProfile
from tests.conftest import EXAMPLES


def _dep(acc: str, tp: int, replicas: int) -> Deployment:
    return Deployment(
        engine="vllm",
        accelerator=acc,
        tp=tp,
        weight_precision="fp8",
        speculative=False,
        batch_per_replica=8,
        replicas=replicas,
        accelerators=tp * replicas,
        ttft_s=0.1,
        tpot_s=0.02,
        output_tokens_per_s=1.0,
        usd_per_hour=None,
        usd_per_million_output_tokens=None,
        price=None,
        verdict="",
    )


def _offer(acc: str, k: int, usd_h: float) -> InstancePrice:
    return InstancePrice(
        id=f"{acc}-{k}x",
        read_on="2026-11-01",
        age_days=25,
        source_title="test offer",
        source_url=None,
        provider="p",
        instance="i",
        region="r",
        accelerator=acc,
        accelerators_per_instance=k,
        pricing="on-demand",
        usd_per_hour=usd_h,
    )


def test_milp_equals_brute_force_over_assignments() -> None:
    # three classes; type "a" sells 8-GPU instances at $16/h, type "b" 1-GPU instances at $1.5/h and 8-GPU at $11/h
    offers = {"a": [_offer("a", 8, 16.0)], "b": [_offer("b", 1, 1.5), _offer("b", 8, 11.0)]}
    need = {
        ("chat", "a"): (1, 3),
        ("chat", "b"): (1, 5),
        ("docs", "a"): (2, 2),
        ("docs", "b"): (4, 2),
        ("agents", "a"): (1, 6),
        ("agents", "b"): (2, 4),
    }  # (tp, replicas)
    placements = [
        ClassPlacement(request_class=c, accelerator=t, deployment=_dep(t, tp, r)) for (c, t), (tp, r) in need.items()
    ]
    classes = ["chat", "docs", "agents"]
    got = _solve(placements, classes, offers)
    assert got is not None

    def cheapest_instances(acc: str, demands: list[tuple[int, int]]) -> float:
        # by hand: try every count of each offer up to what the accelerators need; the largest replicas first
        best = math.inf
        total = sum(tp * r for tp, r in demands)
        for counts in itertools.product(*[range(total + 1) for _ in offers[acc]]):
            sizes = [(o.accelerators_per_instance, n) for o, n in zip(offers[acc], counts, strict=True)]
            if all(
                sum(k * n for k, n in sizes if k >= tau) >= sum(tp * r for tp, r in demands if tp >= tau)
                for tau in {tp for tp, _ in demands}
            ):
                best = min(best, sum(o.usd_per_hour * n for o, n in zip(offers[acc], counts, strict=True)))
        return best

    brute = math.inf
    for choice in itertools.product("ab", repeat=len(classes)):
        cost = 0.0
        for t in "ab":
            demands = [need[(c, t)] for c, ct in zip(classes, choice, strict=True) if ct == t]
            cost += cheapest_instances(t, demands) if demands else 0.0
        brute = min(brute, cost)
    assert got.usd_per_hour == pytest.approx(brute)
    # every class placed once
    assert sorted(p.request_class for p in got.placements) == sorted(classes)


def _two_class(tmp_path: Path, accelerators: str = "") -> Any:
    text = (EXAMPLES / "capacity-llama70b-10k-users.yaml").read_text()
    p = tmp_path / "two.yaml"
    p.write_text(text)
    return app.load_scenario(
        str(p),
        set=[
            "model=meta-llama-3.1-8b",
            "inference.users=null",
            "inference.request_rate_per_s=60",
            "inference.classes=[{name: chat, input_tokens: 1000, output_tokens: 250, share: 0.8},"
            " {name: documents, input_tokens: 16000, output_tokens: 500, share: 0.2,"
            "  slo: {ttft_p90_s: 5.0, tpot_p99_s: 0.1}}]",
        ],
    )


def test_two_class_mixed_fleet_is_no_dearer_than_any_single_type(tmp_path: Path) -> None:
    sc = _two_class(tmp_path)
    r = app.capacity(sc, ["nvidia-h200-sxm-141gb", "nvidia-b200-sxm-180gb"])
    f = r.fleet
    assert f is not None and f.best_single is not None and f.best_single.choice is not None
    assert f.mixed.usd_per_hour <= f.best_single.choice.usd_per_hour + 1e-9
    assert f.saving_usd_per_hour == pytest.approx(f.best_single.choice.usd_per_hour - f.mixed.usd_per_hour)
    # the pools bill whole instances that hold the replicas placed on them
    for pool in f.mixed.pools:
        assert pool.instances * pool.accelerators_per_instance >= pool.accelerators_used
    assert {p.request_class for p in f.mixed.placements} == {"chat", "documents"}
    d = r.to_dict()["fleet"]
    assert d["verdict"] and d["mixed"]["usd_per_hour"] == pytest.approx(f.mixed.usd_per_hour)


def test_one_type_says_mixing_cannot_help(tmp_path: Path) -> None:
    r = app.capacity(_two_class(tmp_path), ["nvidia-h200-sxm-141gb"])
    assert r.fleet is not None and "mixing does not help" in r.fleet.verdict
    assert r.fleet.saving_usd_per_hour == 0.0


def test_shares_must_sum_to_one(tmp_path: Path) -> None:
    sc = _two_class(tmp_path)
    wl = sc.inference
    assert wl is not None and wl.classes is not None
    bad = replace(sc, inference=replace(wl, classes=(replace(wl.classes[0], share=0.5), wl.classes[1])))
    with pytest.raises(SpecError) as e:
        app.capacity(bad, ["nvidia-h200-sxm-141gb"])
    assert e.value.field == "inference.classes"


@pytest.mark.slow
def test_simulated_check_of_the_mixed_fleet_meets_the_slo(tmp_path: Path) -> None:
    r = app.capacity(_two_class(tmp_path), ["nvidia-h200-sxm-141gb", "nvidia-b200-sxm-180gb"], simulate=True)
    sim = r.simulated
    assert sim is not None
    # each class's SLO percentiles (TTFT p90, TPOT p99) hold at its planned load: ≥ 89 % of requests within both
    assert sim["slo_met"], sim
    assert sim["slo_attainment_frac"] >= 0.89


def test_autoscaler_by_hand() -> None:
    # one instance for 60 minutes, then three for 60; a 10-minute start
    need = np.array([1] * 60 + [3] * 60)
    serving, billed = _autoscale(need, 10, predictive=False)
    # reactive: the two extra instances are asked for at minute 60 and serve from minute 70
    assert serving[60:70].tolist() == [1] * 10 and serving[70:].tolist() == [3] * 50
    assert billed[60:].tolist() == [3] * 60  # billed from the request
    # the period repeats: at minute 0 the surplus two are released at once
    assert serving[:60].tolist() == [1] * 60
    serving_p, billed_p = _autoscale(need, 10, predictive=True)
    assert serving_p[60:].tolist() == [3] * 60  # asked for at minute 50
    assert billed_p[50:60].tolist() == [3] * 10


def _day_dep() -> Deployment:
    price = Price(
        usd_per_accelerator_hour=2.0,
        source_id="x-8x",
        read_on="2026-11-01",
        age_days=25,
        accelerators_per_instance=8,
        instance_usd_per_hour=16.0,
    )
    return replace(_dep("nvidia-h100-sxm5-80gb", 2, 1), price=price, requests_per_s_per_replica=1.0)


def test_day_fleet_bills_by_hand() -> None:
    sc = app.load_scenario(
        str(EXAMPLES / "capacity-llama70b-10k-users.yaml"),
        set=["inference.users=null", "inference.request_rate_per_s=8"],
    )
    wl = sc.inference
    assert wl is not None
    # a diurnal profile: 6 hours at 4× the trough, 18 hours at the trough (peak 4× trough)
    ratio = (1.0,) * 18 + (4.0,) * 6
    prof = LoadProfile(hourly_ratio=ratio, scale_up_delay_s=600.0)
    day = plan_day(_day_dep(), wl, prof, today=date(2026, 11, 26), prices=price_book())
    # 8 req/s at the trough needs 8 replicas of 1 req/s = 16 accelerators = 2 instances; the peak 32 req/s: 8
    assert day.replicas_by_hour[0] == 8 and day.instances_by_hour[0] == 2
    assert max(day.instances_by_hour) == 8
    always = next(s for s in day.strategies if s.name.startswith("always-on on-demand"))
    assert always.usd_per_day == pytest.approx(8 * 16.0 * 24)
    assert always.slo_attainment_frac == pytest.approx(1.0)
    auto = next(s for s in day.strategies if s.name.startswith("autoscaled"))
    assert auto.usd_per_day is not None and auto.usd_per_day < always.usd_per_day
    assert auto.slo_attainment_frac < 1.0  # the ramps wait 10 minutes for their instances
    prof_p = replace(prof, autoscaler="predictive")
    day_p = plan_day(_day_dep(), wl, prof_p, prices=price_book())
    auto_p = next(s for s in day_p.strategies if s.name.startswith("autoscaled"))
    assert auto_p.slo_attainment_frac == pytest.approx(1.0)


def test_arrivals_csv_gives_hourly_rates(tmp_path: Path) -> None:
    # two days; 7,200 requests in hour 3 of each day (2/s), none elsewhere
    times = [86400 * d + 3 * 3600 + i * 0.5 for d in range(2) for i in range(7200)]
    (tmp_path / "arrivals.csv").write_text("timestamp_s\n" + "\n".join(f"{t}" for t in times))
    (tmp_path / "s.yaml").write_text((EXAMPLES / "capacity-llama70b-10k-users.yaml").read_text())
    sc = app.load_scenario(
        str(tmp_path / "s.yaml"),
        set=[
            "inference.users=null",
            "inference.request_rate_per_s=1",
            "inference.load_profile={arrivals_csv: arrivals.csv, scale_up_delay_s: 300}",
        ],
    )
    from aiinfra.app.fleet import day_fleet

    day = day_fleet(sc, _day_dep())
    assert day.demand_by_hour[3] == pytest.approx(2.0, rel=1e-3)
    assert sum(day.demand_by_hour) == pytest.approx(2.0, rel=1e-3)
    assert day.replicas_by_hour[3] == 2 and day.replicas_by_hour[0] == 0


def test_prefill_queue_p90_by_hand() -> None:
    from aiinfra.planning.disagg import max_prefill_load, wait_p90_s

    # M/D/1 at ρ = 0.5, S = 1 s: E[W] = ρS / (2(1 − ρ)) = 0.5 s; conditional mean E[W]/ρ = 1 s;
    # P(W > t) = ρ·exp(−t) = 0.1 at t = ln 5
    assert wait_p90_s(0.5, 1.0) == pytest.approx(math.log(5.0))
    assert wait_p90_s(0.05, 1.0) == 0.0  # fewer than one request in ten waits at all
    # a 1 s prompt with a 1 s target: only the load at which 90 % never wait, ρ = 0.1
    assert max_prefill_load(1.0, 0.0, 1.0) == pytest.approx(0.1, abs=1e-6)
    assert max_prefill_load(1.0, 0.5, 1.2) == 0.0  # service + transfer alone exceed the target


LONG_PROMPT = [
    "inference.users=null",
    "inference.request_rate_per_s=10",
    "inference.input_tokens=8192",
    "inference.output_tokens=512",
    "inference.weight_precision=fp8",
    "inference.slo.ttft_p90_s=3",
    "inference.slo.tpot_p99_s=0.02",
]


def test_disaggregation_chosen_for_long_prompts_under_a_tight_tpot() -> None:
    sc = app.load_scenario(str(EXAMPLES / "capacity-llama70b-10k-users.yaml"), set=LONG_PROMPT)
    r = app.capacity(sc, disaggregate=True)
    assert r.disaggregated
    d = r.disaggregated[0]
    assert r.recommended == "disaggregated"
    assert d.usd_per_hour is not None and r.chosen.usd_per_hour is not None
    assert d.usd_per_hour < r.chosen.usd_per_hour
    # the pools follow the rates by hand: P = ⌈λ / prefill rate⌉, D = ⌈λ / decode rate⌉, λ = 10 requests/s
    assert d.prefill_replicas == math.ceil(10.0 / d.prefill_requests_per_s_per_replica)
    assert d.decode_replicas == math.ceil(10.0 / d.decode_requests_per_s_per_replica)
    assert d.decode_requests_per_s_per_replica == pytest.approx(d.decode_batch / (512 * d.tpot_s))
    assert d.tpot_s <= 0.02 and d.ttft_p90_s <= 3.0
    out = r.to_dict()["disaggregated"]
    assert out["recommended"] == "disaggregated" and out["candidates"][0]["ratio"] == d.ratio


@pytest.mark.slow
def test_simulator_confirms_the_disaggregated_choice() -> None:
    sc = app.load_scenario(str(EXAMPLES / "capacity-llama70b-10k-users.yaml"), set=LONG_PROMPT)
    r = app.capacity(sc, disaggregate=True, simulate=True)
    assert r.simulated is not None and "disaggregated" in r.simulated
    assert r.simulated["slo_met"], r.simulated
