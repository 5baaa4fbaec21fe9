"""One-point linear interpolation in plain Python, equal to the bit to ``numpy.interp``.

The serving path (``aiinfra infer``) interpolates one message size at a time on a measured curve; doing that with
numpy would make every such command pay numpy's import (≈ 0.15 s here) for a few scalar divisions. The function
below follows numpy's C implementation (numpy/_core/src/multiarray/compiled_base.c, ``arr_interp`` and
``binary_search_with_guess``) step for step: the same bracketing index (xp[j] ≤ x < xp[j + 1]), the same end
rules, and the same arithmetic in the same order, slope·(x − xp[j]) + fp[j] with slope = (fp[j+1] − fp[j]) /
(xp[j+1] − xp[j]), so both round alike (tests/test_interp.py checks equality on many points).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence


def interp(x: float, xp: Sequence[float], fp: Sequence[float]) -> float:
    """``numpy.interp(x, xp, fp)`` for one value ``x`` over increasing ``xp`` (at least one point): fp[0] below
    xp[0], fp[-1] above xp[-1], fp[j] at a point xp[j], the straight line between the two points around ``x``
    elsewhere."""
    if math.isnan(x):
        return x
    if x > xp[-1]:
        return float(fp[-1])
    if x < xp[0]:
        return float(fp[0])
    j = bisect_right(xp, x) - 1  # numpy's index: xp[j] <= x < xp[j + 1]
    if j == len(xp) - 1 or xp[j] == x:
        return float(fp[j])
    slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
    out = slope * (x - xp[j]) + fp[j]
    if math.isnan(out):  # numpy's fallback: from the other end, then the flat value
        out = slope * (x - xp[j + 1]) + fp[j + 1]
        if math.isnan(out) and fp[j] == fp[j + 1]:
            out = fp[j]
    return float(out)
