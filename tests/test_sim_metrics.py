"""The simulator's percentiles (sim/metrics.quantiles): numpy.percentile's linear definition, float for float."""

from __future__ import annotations

import numpy as np
import pytest

from aiinfra.sim.metrics import pct, quantiles


def test_quantiles_by_hand() -> None:
    # Hyndman & Fan definition 7: position (n − 1)·q between order statistics; n = 5 sorted 1..5 → p50 at 2.0 = 3,
    # p90 at 3.6 → 4 + 0.6·(5 − 4) = 4.6, p99 at 3.96 → 4.96
    assert quantiles(np.array([5.0, 1.0, 4.0, 2.0, 3.0])) == pytest.approx([3.0, 4.6, 4.96], abs=1e-12)
    assert quantiles(np.array([7.0])) == [7.0, 7.0, 7.0]
    s = pct(np.array([1.0, np.nan, 3.0, np.inf]))  # non-finite values left out
    assert (s.mean, s.p50) == (2.0, 2.0)


@pytest.mark.parametrize("seed", range(4))
def test_quantiles_equal_numpy_percentile(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 10, 101, 1000, 99_999):
        for v in (rng.exponential(0.05, n), rng.integers(0, 4, n).astype(float), rng.normal(0.0, 1e6, n)):
            expect = [float(x) for x in np.percentile(v, [50, 90, 99])]
            assert quantiles(v.copy()) == expect, n
