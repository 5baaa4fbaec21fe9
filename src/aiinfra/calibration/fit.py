"""Bounded least squares of a few calibration factors (SciPy ``least_squares``, trust-region reflective).

The residual of a prediction is log(predicted / measured): symmetric in over- and under-prediction and unit-free,
so a TTFT in seconds and a TPOT in milliseconds weigh alike. A factor enters the fit only where it moves some
prediction (``active``) and only as many factors as there are residuals (the first ones of the caller's order),
so an under-determined fit never picks an arbitrary point of a valley.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    lo: float
    hi: float
    neutral: float
    """The value that leaves the model unchanged (1 for a scale, 0 s for an overhead)."""
    probe: float
    """A value inside the bounds that tells whether the factor moves any prediction."""
    log: bool = True
    """Fitted as log(value): a time divided by a scale is linear in log(scale), which keeps the problem well
    conditioned (an overhead, added to a time, is fitted as is)."""

    def to_x(self, value: float) -> float:
        return math.log(value) if self.log else value

    def from_x(self, x: float) -> float:
        return math.exp(x) if self.log else x


@dataclass(frozen=True, slots=True)
class Fit:
    values: dict[str, float]
    """Every parameter: fitted ones at their optimum, the others neutral."""
    fitted: tuple[str, ...]
    at_bound: tuple[str, ...]
    """Fitted parameters that ended on a bound (the data pulled past a physical limit)."""
    cost: float


GOOD_FIT_RMS = 0.01
"""Root-mean-square log residual below which the second start is skipped (1 %: within any benchmark's noise)."""

Residuals = Callable[[dict[str, float]], np.ndarray]


def active(params: Sequence[Param], residuals: Residuals, n_residuals: int) -> list[Param]:
    """The parameters that move the residuals, in the given order, at most ``n_residuals`` of them."""
    neutral = {p.name: p.neutral for p in params}
    base = residuals(neutral)
    out: list[Param] = []
    for p in params:
        moved = residuals({**neutral, p.name: p.probe})
        if float(np.max(np.abs(moved - base))) > 1e-9:
            out.append(p)
    return out[:n_residuals]


def fit(params: Sequence[Param], chosen: Sequence[Param], residuals: Residuals) -> Fit:
    """Least squares over ``chosen`` (the rest held neutral), started from the neutral values clipped into bounds."""
    from scipy.optimize import least_squares  # type: ignore[import-untyped,unused-ignore]

    neutral = {p.name: p.neutral for p in params}
    if not chosen:
        r = residuals(neutral)
        return Fit(neutral, (), (), float(0.5 * np.sum(r * r)))

    def full(x: np.ndarray) -> dict[str, float]:
        return {**neutral, **{p.name: p.from_x(float(v)) for p, v in zip(chosen, x, strict=True)}}

    lo = np.array([p.to_x(p.lo) for p in chosen])
    hi = np.array([p.to_x(p.hi) for p in chosen])
    best = None
    # the predictions are piecewise smooth (a kernel switches between compute- and memory-bound), so the fit
    # starts from the neutral point and from the middle of the box, and keeps the lower cost
    for start in (np.array([p.to_x(p.neutral) for p in chosen]), 0.5 * (lo + hi)):
        x0 = np.clip(start, lo, hi)
        sol = least_squares(lambda x: residuals(full(x)), x0, bounds=(lo, hi), method="trf", diff_step=1e-4,
                            xtol=1e-8, ftol=1e-10, gtol=1e-10, max_nfev=100)  # fmt: skip
        if best is None or sol.cost < best.cost:
            best = sol
        if math.sqrt(2.0 * best.cost / max(len(sol.fun), 1)) < GOOD_FIT_RMS:
            break
    assert best is not None
    span = hi - lo
    # a factor resting on a bound other than its neutral value (an overhead of 0 s is no alarm)
    at_bound = tuple(p.name for p, v, lo_x, hi_x, s in zip(chosen, best.x, lo, hi, span, strict=True)
                     if (v - lo_x <= 1e-4 * s and p.lo != p.neutral) or (hi_x - v <= 1e-4 * s and p.hi != p.neutral))

    return Fit(full(best.x), tuple(p.name for p in chosen), at_bound, float(best.cost))
