"""The Pareto front of two objectives and its plot.

A point is on the front when no other point is at least as good on both objectives and better on one (each
objective minimised, or maximised when asked). Sorting by the first objective and keeping each point that beats
the best second objective so far finds the front in O(n log n) (Kung, Luccio & Preparata, J. ACM 22(4), 1975).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

WIDE_RATIO = 100.0
"""An axis whose positive values span this factor or more is drawn on a log scale."""


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


def plot(x: Sequence[float], y: Sequence[float], on_front: Sequence[int], labels: Sequence[str], *,
         x_label: str, y_label: str, title: str, path: str | Path) -> list[Path]:  # fmt: skip
    """Every point in grey, the front in colour with its labels (an axis spanning two decades on a log scale);
    written as PNG and SVG next to each other."""
    import matplotlib  # the caller turns an ImportError into "install aiinfra[plot]"

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 6), dpi=100)
    ax.scatter(x, y, s=14, color="0.7", label=f"all points ({len(x)})")
    fx = [x[i] for i in on_front]
    fy = [y[i] for i in on_front]
    ax.plot(fx, fy, "o-", color="tab:red", markersize=5, drawstyle="steps-post", label=f"Pareto front ({len(fx)})")
    for n, i in enumerate(on_front):  # labels of neighbours alternate above and below the line
        ax.annotate(labels[i], (x[i], y[i]), textcoords="offset points", xytext=(5, 4 if n % 2 == 0 else -11),
                    fontsize=7)  # fmt: skip
    for values, set_scale, axis_label, setter in ((x, ax.set_xscale, x_label, ax.set_xlabel),
                                                  (y, ax.set_yscale, y_label, ax.set_ylabel)):  # fmt: skip
        wide = bool(values) and min(values) > 0 and max(values) / min(values) >= WIDE_RATIO
        if wide:
            set_scale("log")
        setter(f"{axis_label}{', log scale' if wide else ''}")
    ax.set_title("\n".join(textwrap.wrap(title, 90)), fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    base = Path(path)
    written = []
    for suffix in (".png", ".svg"):
        out = base.with_suffix(suffix)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, metadata={"Date": None} if suffix == ".svg" else None)
        written.append(out)
    plt.close(fig)
    return written
