"""Plots with matplotlib (PNG and SVG side by side): a run's timelines and latency distributions, latency vs
load, cumulative TCO. Formats results, computes nothing. ``--plot DIR`` means a directory for every command."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiinfra.errors import SpecError

if TYPE_CHECKING:
    from aiinfra.costing.tco import Tco

FORMATS = ("png", "svg")


def plot_dir(path: str) -> Path:
    """The ``--plot`` directory, created if missing; an existing file or an unwritable place is bad input."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise SpecError("--plot", path, "is a file, not a directory", "give a directory for the plots")
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / ".aiinfra-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise SpecError("--plot", path, f"cannot be written ({exc.strerror})", "give a writable directory") from None
    return p


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out_dir: Path, stem: str) -> list[str]:
    """Write the figure as stem.png and stem.svg; the legend sits outside the axes so it never hides data."""
    paths = []
    for fmt in FORMATS:
        path = out_dir / f"{stem}.{fmt}"
        fig.savefig(path, dpi=120, bbox_inches="tight")
        paths.append(str(path))
    _pyplot().close(fig)
    return paths


def _legend(ax: Any) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)


def line_plot(
    out_dir: Path,
    stem: str,
    title: str,
    x_label: str,
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    y_label: str,
) -> list[str]:
    """One line per series, shared axes."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, (xs, ys) in series.items():
        ax.plot(xs, ys, label=name, linewidth=1.2)
    ax.set(title=title, xlabel=x_label, ylabel=y_label)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend(ax)
    return _save(fig, out_dir, stem)


def distribution_plot(
    out_dir: Path, stem: str, title: str, samples: Mapping[str, Sequence[float]], x_label: str
) -> list[str]:
    """Cumulative distribution (share of requests at or below each value) of each sample set."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, values in samples.items():
        xs = sorted(v for v in values if math.isfinite(v))
        if xs:
            ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=name)
    ax.set(title=title, xlabel=x_label, ylabel="share of requests ≤ x")
    ax.set_ylim(0, 1.0)
    ax.grid(alpha=0.3)
    _legend(ax)
    return _save(fig, out_dir, stem)


def tco_plot(out_dir: Path, t: Tco, title: str) -> list[str]:
    """Cumulative cost of on-prem and each cloud line by month, each breakeven month marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 5))
    months = list(range(len(t.onprem_cumulative_usd)))
    ax.plot(months, t.onprem_cumulative_usd, color="black", linewidth=2, label="on-prem (capex + opex)")
    for key, series in t.cloud_cumulative_usd.items():
        (line,) = ax.plot(months, series, label=f"cloud {key}")
        be = t.breakeven_month.get(key)
        if be is not None and be < len(months):
            ax.axvline(be, color=line.get_color(), linestyle=":", linewidth=1)
            ax.annotate(
                f"month {be}",
                (be, t.onprem_cumulative_usd[be]),
                textcoords="offset points",
                xytext=(4, 6),
                color=line.get_color(),
                fontsize=8,
            )
    ax.set(title=title, xlabel="month", ylabel="cumulative cost (USD)")
    ax.yaxis.set_major_formatter(_usd_formatter())
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend(ax)
    return _save(fig, out_dir, "tco")


def _usd_formatter() -> Any:
    from matplotlib.ticker import FuncFormatter

    def fmt(v: float, _pos: int) -> str:
        if abs(v) >= 1e6:
            return f"${v / 1e6:,.3g}M"
        return f"${v / 1e3:,.3g}k" if abs(v) >= 1e3 else f"${v:,.0f}"

    return FuncFormatter(fmt)


WIDE_RATIO = 100.0
"""An axis whose positive values span this factor or more is drawn on a log scale."""


def pareto_plot(
    out_dir: Path,
    stem: str,
    title: str,
    x_label: str,
    y_label: str,
    xs: Sequence[float],
    ys: Sequence[float],
    front: Sequence[int],
    labels: Sequence[str],
) -> list[str]:
    """A sweep's points in grey and their Pareto front (indices ``front``, best x first) as a labelled staircase;
    an axis spanning two decades or more on a log scale."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 6))
    ax.scatter(xs, ys, s=14, color="0.7", label=f"all points ({len(xs)})")
    ax.plot(
        [xs[i] for i in front],
        [ys[i] for i in front],
        "o-",
        color="tab:red",
        markersize=5,
        drawstyle="steps-post",
        label=f"Pareto front ({len(front)})",
    )
    for n, i in enumerate(front):  # labels of neighbours alternate above and below the line
        ax.annotate(
            labels[i], (xs[i], ys[i]), textcoords="offset points", xytext=(5, 4 if n % 2 == 0 else -11), fontsize=7
        )
    for values, set_scale, axis_label, setter in (
        (xs, ax.set_xscale, x_label, ax.set_xlabel),
        (ys, ax.set_yscale, y_label, ax.set_ylabel),
    ):
        wide = bool(values) and min(values) > 0 and max(values) / min(values) >= WIDE_RATIO
        if wide:
            set_scale("log")
        setter(f"{axis_label}{', log scale' if wide else ''}")
    ax.set_title("\n".join(textwrap.wrap(title, 90)), fontsize=10)
    ax.grid(alpha=0.3)
    _legend(ax)
    return _save(fig, out_dir, stem)
