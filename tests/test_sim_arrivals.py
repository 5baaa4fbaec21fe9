"""Arrival kinds and length distributions as objects (sim/arrivals.py): one per name the specs allow."""

from __future__ import annotations

from typing import get_args, get_type_hints

import numpy as np
import pytest

from aiinfra.errors import SpecError
from aiinfra.sim.arrivals import ARRIVALS, LENGTHS, interarrival_s, lengths
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
