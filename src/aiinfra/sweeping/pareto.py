"""The Pareto front of two objectives (its plot: aiinfra.report.plots.pareto_plot).

A point is on the front when no other point is at least as good on both objectives and better on one (each
objective minimised, or maximised when asked). Sorting by the first objective and keeping each point that beats
the best second objective so far finds the front in O(n log n) (Kung, Luccio & Preparata, J. ACM 22(4), 1975).
"""

from __future__ import annotations

from collections.abc import Sequence


def front(x: Sequence[float], y: Sequence[float], x_max: bool = False, y_max: bool = False) -> list[int]:
    """Indices of the non-dominated points, ordered by ``x`` from best to worst."""
    sx = -1.0 if x_max else 1.0
    sy = -1.0 if y_max else 1.0
    order = sorted(range(len(x)), key=lambda i: (sx * x[i], sy * y[i]))
    kept: list[int] = []
    best_y = float("inf")
    for i in order:
        if sy * y[i] < best_y:
            kept.append(i)
            best_y = sy * y[i]
    return kept
