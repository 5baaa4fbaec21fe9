"""The inference load level of the error bands by the prediction's own utilisation (aiinfra.analytic.equilibrium
.utilisation, docs/accuracy.md "Load level"): the level of a load by hand, bands that widen near saturation, and the
answers' loads read against the capacity their own prediction gives."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from aiinfra import app
from aiinfra.accuracy.model import band, calibrate
from aiinfra.accuracy.regimes import ANY, Regime, load_level
from aiinfra.accuracy.table import ErrorRow
from aiinfra.analytic.equilibrium import utilisation

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_load_level_by_hand() -> None:
    # open arrivals: ρ = λ/μ; 9 requests/s against 10 served at saturation -> 0.9, past the 0.8 bound where an error
    # in the step time comes out of the latency amplified 1/(1 − 0.8) = 5 times or more
    rho = utilisation(rate_per_s=9.0, saturated_requests_per_s=10.0)
    assert rho == pytest.approx(0.9) and load_level(None, False, rho, "ttft") == "near-saturation"
    assert load_level(None, False, utilisation(rate_per_s=4.0, saturated_requests_per_s=10.0), "ttft") == "light"
    # a closed loop of 64 clients on 128 batch slots: half of them, amplification 1/(1 − 0.5) = 2: loaded
    rho = utilisation(sequences=64, saturated_seqs=128)
    assert rho == pytest.approx(0.5) and load_level(64, False, rho, "ttft") == "loaded"
    # 140 clients on 128 slots: ρ̂ = 1.09, just past saturation, where a capacity error decides whether anyone queues
    assert load_level(140, False, utilisation(sequences=140, saturated_seqs=128), "ttft") == "near-saturation"
    # 300 clients on 128 slots: ρ̂ = 2.34, 172 wait in the queue whatever a few per cent of capacity; the wait's
    # error is the capacity's amplified ρ/(ρ − 1) = 1.75 times: overloaded, past the bound ρ̂ = 1.25 where that
    # amplification is 1.25/0.25 = 5, the same as 1/(1 − 0.8) below saturation
    assert load_level(300, False, utilisation(sequences=300, saturated_seqs=128), "ttft") == "overloaded"
    # a throughput does not amplify either side of saturation (the offered load below capacity, the capacity above
    # it): every throughput past 0.8 is one level
    assert load_level(300, False, utilisation(sequences=300, saturated_seqs=128), "throughput") == "near-saturation"
    over, under = (utilisation(rate_per_s=r, saturated_requests_per_s=10.0) for r in (12.5, 12.4))
    assert load_level(None, False, over, "ttft") == "overloaded"
    assert load_level(None, False, under, "ttft") == "near-saturation"
    # one sequence: no batching, no queue; no load given: offline; no capacity to measure against: every level
    assert load_level(1, False, 0.9, "ttft") == "batch-1"
    assert load_level(None, True, None, "ttft") == "offline"
    assert utilisation(rate_per_s=5.0) is None and load_level(None, False, None, "ttft") == ANY


def _row(i: int, source: str, load: str, log_error: float) -> ErrorRow:
    return ErrorRow(
        id=f"{load}-{i}",
        kind="inference",
        split="open",
        file="i.csv",
        source=source,
        metric="ttft_s",
        accelerator="nvidia-h100-sxm5-80gb",
        accelerators_count=8,
        measured=1.0,
        predicted=math.exp(log_error),
        log_error=log_error,
        regime=Regime(
            kind="inference", quantity="ttft", arch="dense", generation="nvidia-hopper", engine="vllm", load=load
        ),
    )


def _six_publishers(level_of: Callable[[str], str], loaded_error: Callable[[float, float], float]) -> list[ErrorRow]:
    """Publishers a-f, three rows each at light load, with errors of offset 0.02·(i − 2.5) plus δ = −0.01, 0, +0.01,
    and three each at the level ``level_of`` gives the publisher, with errors ``loaded_error(light error, δ)``."""
    rows = []
    for i, source in enumerate("abcdef"):
        for j, delta in enumerate((-0.01, 0.0, 0.01)):
            e = 0.02 * (i - 2.5) + delta
            rows.append(_row(10 * i + j, source, "light", e))
            rows.append(_row(10 * i + j, source, level_of(source), loaded_error(e, delta)))
    return rows


def test_bands_widen_near_saturation() -> None:
    # six publishers, three rows each per level. At light load (ρ̂ = 0.2, amplification 1/(1 − 0.2) = 1.25) the
    # TTFT errors are publisher offsets 0.02·(i − 2.5) plus −0.01, 0, +0.01; near saturation (ρ̂ = 0.9) the same
    # step-time errors come out amplified 1/(1 − 0.9) = 10 times, so each error is 10·(offset + δ) / 1.25 = 8× the
    # light one. Each level has 18 rows (≥ MIN_ROWS) from 6 publishers (≥ MIN_SOURCES and MIN_CALIBRATION_SOURCES):
    # its own pool, spread and calibration factor. Every part of a band is linear in the errors (publisher medians,
    # their SD, the scatter percentiles) and the conformal scores are ratios, so the near-saturation band is the
    # light band × 8 about a centre × 8, with the same calibration factor.
    rows = _six_publishers(lambda source: "near-saturation", lambda e, delta: 8.0 * e)
    light = band(rows[0].regime, rows)
    near = band(rows[1].regime, rows)
    assert light is not None and near is not None
    assert light.regime.load == "light" and near.regime.load == "near-saturation"
    assert light.calibrated and near.calibrated
    assert near.calibration_x == pytest.approx(light.calibration_x)
    assert near.centre_log == pytest.approx(8.0 * light.centre_log, abs=1e-12)
    assert near.high_log - near.centre_log == pytest.approx(8.0 * (light.high_log - light.centre_log))
    assert near.centre_log - near.low_log == pytest.approx(8.0 * (light.centre_log - light.low_log))
    lo_l, hi_l = light.interval(1.0)
    lo_n, hi_n = near.interval(1.0)
    assert lo_n < lo_l < hi_l < hi_n
    # without the load level (pooled over it) both answers would get one band, as wide for the light load as for the
    # near-saturated one
    pooled = band(Regime(kind="inference", quantity="ttft"), rows)
    assert pooled is not None and pooled.high_log - pooled.low_log > light.high_log - light.low_log


@pytest.mark.parametrize(("share", "level"), [(0.3, "light"), (0.9, "near-saturation")])
def test_an_answer_at_a_rate_is_banded_by_its_own_utilisation(share: float, level: str) -> None:
    # the answer's utilisation is its rate over the saturated rate of its own estimate: 0.3 and 0.9 by construction
    path = EXAMPLES / "simulate-llama70b-h100.yaml"
    saturated = app.infer(app.load_scenario(path, set={"inference.batch": "max"})).estimate
    assert saturated.saturated_requests_per_s is not None and saturated.saturated_batch_seqs >= 1
    rate = share * saturated.saturated_requests_per_s
    obj = app.infer(app.load_scenario(path, set={"inference.request_rate_per_s": rate})).to_dict()
    assert obj["saturated_requests_per_s"] == pytest.approx(saturated.saturated_requests_per_s)
    assert f"{level} load" in obj["accuracy"]["regime"]
    assert f"the load is {share:.0%} of the capacity" in obj["accuracy"]["note"]


def test_thin_saturated_levels_borrow_each_others_calibration() -> None:
    # light load from six publishers (its own factor); near saturation from publishers a-c and overloaded from d-f:
    # each has three publishers, under MIN_CALIBRATION_SOURCES = 5, so both take the factor of the two levels
    # together (six publishers), not the quantity's, which the light rows' small errors would set
    table = tuple(
        _six_publishers(lambda source: "near-saturation" if source in "abc" else "overloaded", lambda e, d: 8.0 * e + d)
    )
    near, near_ok = calibrate(table, "inference", "ttft", group="near-saturation")
    over, over_ok = calibrate(table, "inference", "ttft", group="overloaded")
    whole, _ = calibrate(table, "inference", "ttft")
    light, _ = calibrate(table, "inference", "ttft", group="light")
    assert near_ok and over_ok
    assert near == over
    assert near != pytest.approx(whole) and near != pytest.approx(light)
    # with two saturated publishers left, the two levels together are too few as well: the quantity's factor
    kept = tuple(r for r in table if r.regime.load == "light" or r.source in "ad")
    assert calibrate(kept, "inference", "ttft", group="overloaded")[0] == calibrate(kept, "inference", "ttft")[0]
