"""Arrival kinds and length distributions as objects (sim/arrivals.py): one per name the specs allow."""

from __future__ import annotations

from typing import get_args, get_type_hints

import numpy as np
import pytest

from aiinfra.errors import SpecError
from aiinfra.sim.arrivals import ARRIVALS, LENGTHS, interarrival_s, lengths, stratified_uniforms
from aiinfra.specs.serving_sim import LengthDist
from aiinfra.specs.workload import Arrival


def test_every_name_the_specs_allow_has_an_object() -> None:
    assert set(ARRIVALS) == set(get_args(get_type_hints(Arrival)["kind"]))
    assert set(LENGTHS) == set(get_args(get_type_hints(LengthDist)["kind"]))


def test_each_arrival_kind_says_how_its_requests_are_sent() -> None:
    assert [k for k, a in ARRIVALS.items() if a.open_loop] == ["poisson", "gamma"]
    assert [k for k, a in ARRIVALS.items() if a.closed_loop] == ["concurrency"]
    assert [k for k, a in ARRIVALS.items() if a.from_trace] == ["trace"]
    with pytest.raises(NotImplementedError):
        ARRIVALS["trace"].gaps(np.random.default_rng(0), 1.0, 3, None)


def test_open_loop_gaps_have_mean_one_over_the_rate() -> None:
    # 200,000 gaps at λ = 4/s: mean 0.25 s (standard error 0.25/√200000 ≈ 0.00056 s for Poisson; gamma with cv 2
    # has std 0.5 s, standard error 0.0011 s); the gamma gaps' CV is the one asked for
    rng = np.random.default_rng(1)
    poisson = interarrival_s(rng, "poisson", 4.0, 200_000, None)
    gamma = interarrival_s(rng, "gamma", 4.0, 200_000, 2.0)
    assert poisson.mean() == pytest.approx(0.25, abs=0.003)
    assert gamma.mean() == pytest.approx(0.25, abs=0.006)
    assert gamma.std() / gamma.mean() == pytest.approx(2.0, rel=0.03)
    with pytest.raises(SpecError, match="coefficient of variation"):
        interarrival_s(rng, "gamma", 4.0, 10, None)


def test_length_kinds() -> None:
    rng = np.random.default_rng(2)
    assert lengths(rng, None, 7, 3, "f").tolist() == [7, 7, 7]
    drawn = lengths(rng, LengthDist(kind="uniform"), 100, 100_000, "f")
    # default range [1, 199]: mean 100
    assert drawn.min() >= 1 and drawn.max() <= 199 and drawn.mean() == pytest.approx(100, abs=1)
    with pytest.raises(SpecError, match="sigma"):
        lengths(rng, LengthDist(kind="lognormal"), 100, 3, "f")


def test_empirical_lengths_follow_the_quantile_table_scaled_to_the_mean() -> None:
    # table [10, 20, 60] at probabilities 0, 0.5, 1: its piecewise-linear mean is ((10 + 20)/2 + (20 + 60)/2)/2 =
    # 27.5, so a mean of 55 scales it by 2: draws on [20, 120], half of them at or below 40, mean 55
    rng = np.random.default_rng(3)
    dist = LengthDist(kind="empirical", quantiles=(10.0, 20.0, 60.0))
    drawn = lengths(rng, dist, 55, 200_000, "f")
    assert drawn.min() >= 20 and drawn.max() <= 120
    assert (drawn <= 40).mean() == pytest.approx(0.5, abs=0.005)
    # the upper half is uniform on [40, 120]: a quarter of all draws lie above 80
    assert (drawn > 80).mean() == pytest.approx(0.25, abs=0.005)
    assert drawn.mean() == pytest.approx(55, abs=0.3)
    capped = lengths(rng, LengthDist(kind="empirical", quantiles=(10.0, 20.0, 60.0), high=50), 55, 1000, "f")
    assert capped.max() == 50
    with pytest.raises(SpecError, match="quantile table"):
        lengths(rng, LengthDist(kind="empirical"), 55, 3, "f")
    with pytest.raises(SpecError, match="decreases"):
        lengths(rng, LengthDist(kind="empirical", quantiles=(10.0, 5.0)), 55, 3, "f")


def test_stratified_uniforms_put_one_draw_in_each_slice() -> None:
    u = stratified_uniforms(np.random.default_rng(5), 50)
    assert sorted(np.floor(u * 50).astype(int).tolist()) == list(range(50))
    assert not np.all(np.diff(u) > 0)  # handed out in random order, not sorted by slice


def test_a_short_run_has_the_distributions_mean() -> None:
    """A run's few requests are one draw per slice of probability, so their mean is the distribution's to within the
    slices' spans: the table [10, 20, 60] scaled to mean 55 spans [20, 120]; each of 10 draws lies within its own
    tenth of probability, whose means average to 55, and the ten tenths' spans add up to 100, so the mean of 10 misses
    55 by at most 100 / 10 plus rounding. Independent draws (the distribution's standard deviation is 30.1:
    E[x^2] = (400 + 800 + 1,600) / 6 + (1,600 + 4,800 + 14,400) / 6 = 3,933) miss by 0.8 * 30.1 / sqrt(10) = 7.6 on
    average and by more than 10 in 29 % of runs (|z| > 10 / 9.5). A uniform on [1, 1219] (the random dataset at range
    ratio 0, 610 tokens): 10 draws, each within half a slice (1219 / 10 / 2) of its slice's middle, plus the rounding
    down."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        table = lengths(rng, LengthDist(kind="empirical", quantiles=(10.0, 20.0, 60.0)), 55, 10, "f")
        assert abs(table.mean() - 55) <= 100 / 10 + 0.5
        uniform = lengths(rng, LengthDist(kind="uniform"), 610, 10, "f")
        assert abs(uniform.mean() - 610) <= 1219 / 10 / 2 + 1


def test_a_short_poisson_run_keeps_its_rate() -> None:
    """50 requests at 10/s (the spot check's fixed-length runs) as stratified exponential gaps, one in each 1/50 of
    probability, whose slice means average to the mean gap 0.1 s: the 49 gaps below the 98th percentile lie within
    their slices, which together span 0.1 * ln(50) = 0.39 s, so they miss their slices' means by at most 0.39 s in
    all; the top slice's gap is 0.39 s plus an exponential of mean 0.1 s (memoryless), which exceeds its slice mean
    by more than 0.5 s with probability e^-6 = 0.25 %. So the run lasts 5 s to within 0.89 s, where 50 independent
    gaps have a standard deviation of 0.1 * sqrt(50) = 0.71 s."""
    for seed in range(20):
        total = interarrival_s(np.random.default_rng(seed), "poisson", 10.0, 50, None).sum()
        assert abs(total - 5.0) <= 0.39 + 0.5
