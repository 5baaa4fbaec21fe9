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
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class Param:
    """One calibration factor as the fit sees it: its bounds, neutral value and whether it is fitted in log space."""

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
        """The solver's coordinate of ``value`` (its log when ``log``)."""
        return math.log(value) if self.log else value

    def from_x(self, x: float) -> float:
        """The factor's value at solver coordinate ``x`` (inverse of :meth:`to_x`)."""
        return math.exp(x) if self.log else x


@dataclass(frozen=True, slots=True)
class Fit:
    """The outcome of a bounded least-squares fit of the factors to the measured runs."""

    values: dict[str, float]
    """Every parameter: fitted ones at their optimum, the others neutral."""
    fitted: tuple[str, ...]
    """Names of the parameters the fit moved (the active ones)."""
    at_bound: tuple[str, ...]
    """Fitted parameters that ended on a bound (the data pulled past a physical limit)."""
    cost: float
    """Half the sum of squared residuals at the optimum (the solver's cost)."""


MAX_EVALUATIONS = 60
"""Residual evaluations per solve (each prices every run once); the fits converge in 10-40."""

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


def fit(
    params: Sequence[Param], chosen: Sequence[Param], residuals: Residuals, start: dict[str, float] | None = None
) -> Fit:
    """Least squares over ``chosen`` (the rest held neutral). ``start``: one solve from these values (a fit to
    nearly the same data, as in leave-one-out); else the staged and mid-box starts below."""
    from scipy.optimize import least_squares  # type: ignore[import-untyped,unused-ignore]

    neutral = {p.name: p.neutral for p in params}
    if not chosen:
        r = residuals(neutral)
        return Fit(neutral, (), (), float(0.5 * np.sum(r * r)))

    def full(x: np.ndarray) -> dict[str, float]:
        return {**neutral, **{p.name: p.from_x(float(v)) for p, v in zip(chosen, x, strict=True)}}

    lo = np.array([p.to_x(p.lo) for p in chosen])
    hi = np.array([p.to_x(p.hi) for p in chosen])

    def solve(x0: np.ndarray, free: list[int]) -> Any:
        def fun(sub: np.ndarray) -> np.ndarray:
            x = x0.copy()
            x[free] = sub
            return residuals(full(x))

        sol = least_squares(
            fun,
            np.clip(x0[free], lo[free], hi[free]),
            bounds=(lo[free], hi[free]),
            method="trf",
            diff_step=1e-3,
            xtol=1e-8,
            ftol=1e-10,
            gtol=1e-10,
            max_nfev=MAX_EVALUATIONS,
        )
        x = x0.copy()
        x[free] = sol.x
        return x, float(sol.cost)

    # the efficiency scales first with the overhead held at 0 s (an overhead fitted from the start trades against
    # the memory scale into a worse valley), then every factor from there; then once more from the middle of the
    # box, keeping the lower cost (the predictions are piecewise smooth: kernels switch between compute- and
    # memory-bound)
    everything = list(range(len(chosen)))
    if start is not None:
        warm_x, warm_cost = solve(np.array([p.to_x(start.get(p.name, p.neutral)) for p in chosen]), everything)
        return _result(chosen, full(warm_x), warm_x, lo, hi, warm_cost)
    neutral_x = np.array([p.to_x(p.neutral) for p in chosen])
    scales = [i for i, p in enumerate(chosen) if p.log]
    staged_x = solve(neutral_x, scales)[0] if scales and len(scales) < len(chosen) else neutral_x
    best_x, best_cost = solve(staged_x, everything)
    mid_x, mid_cost = solve(0.5 * (lo + hi), everything)
    if mid_cost < best_cost:
        best_x, best_cost = mid_x, mid_cost
    # an additive factor within a millionth of its range from a bound is that bound (1e-17 s is 0 s)
    best_x = np.array(
        [
            lo_x if not p.log and v - lo_x <= 1e-6 * (hi_x - lo_x) else v
            for p, v, lo_x, hi_x in zip(chosen, best_x, lo, hi, strict=True)
        ]
    )
    return _result(chosen, full(best_x), best_x, lo, hi, best_cost)


def _result(
    chosen: Sequence[Param], values: dict[str, float], x: np.ndarray, lo: np.ndarray, hi: np.ndarray, cost: float
) -> Fit:
    span = hi - lo
    # a factor resting on a bound other than its neutral value (an overhead of 0 s is no alarm)
    at_bound = tuple(
        p.name
        for p, v, lo_x, hi_x, s in zip(chosen, x, lo, hi, span, strict=True)
        if (v - lo_x <= 1e-4 * s and p.lo != p.neutral) or (hi_x - v <= 1e-4 * s and p.hi != p.neutral)
    )
    return Fit(values, tuple(p.name for p in chosen), at_bound, cost)
