"""The error model: the central 80 % interval of out-of-sample errors for a regime (docs/accuracy.md).

Errors are signed log errors e = ln(predicted / measured) of the regime's quantity (aiinfra.accuracy.table). The
pool of a regime: its sealed rows as measured, and its open rows with their errors multiplied by the kind's
open→sealed ratio (median |e| of the sealed rows over that of the open rows, at least 1: the open rows were seen
while the model was built, so their errors understate the error on rows it never saw). A regime with fewer than
:data:`MIN_ROWS` rows or :data:`MIN_SOURCES` sources is pooled up :data:`aiinfra.accuracy.regimes.HIERARCHY`.
The band is the pool's 10th and 90th percentile of e: for a predicted value v of the quantity the measured value
lies in [v·exp(−e90), v·exp(−e10)] in 80 % of the pooled cases.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields

from aiinfra.accuracy.regimes import ANY, Regime, levels
from aiinfra.accuracy.table import ErrorRow

INTERVAL = 0.8
"""The central share of the errors a band holds."""
MIN_ROWS = 10
"""Fewest pooled rows a band is drawn from: the 10th and 90th percentiles of fewer rows rest on one row each."""
MIN_SOURCES = 4
"""Fewest publishers a band is drawn from. Each publisher's rows share a systematic offset (its software, its
settings), so a band drawn from one or two publishers misses the next one's: on the open rows, leave-one-source-out
coverage of the training bands was 36 % with two sources per band and 78 % with four (docs/accuracy.md)."""
MIN_SEALED = 5
"""Fewest sealed rows of a kind whose median error sets the kind's open→sealed ratio."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Band:
    """The errors of one pooled regime."""

    asked: Regime
    regime: Regime
    """The pooled regime the band comes from (``asked`` with dimensions given up to reach enough rows)."""
    rows: int
    sources: int
    sealed_rows: int
    low_log: float
    """10th percentile of the pooled signed log errors."""
    high_log: float
    """90th percentile."""
    median_abs_error_frac: float
    """Median |predicted / measured − 1| of the pool (open rows inflated)."""
    inflation: float
    """The open→sealed ratio the open rows' errors were multiplied by."""
    thin: bool
    """Even the coarsest pooling has fewer than MIN_ROWS rows or MIN_SOURCES sources."""
    top_source: str
    """The publisher with the most rows in the pool."""
    top_source_rows: int

    def interval(self, value: float, power: float = 1.0) -> tuple[float, float]:
        """The 80 % interval of a headline value proportional to the quantity to ``power`` (1: the quantity itself,
        e.g. a time; −1: its inverse, e.g. a rate made of that time)."""
        a = value * math.exp(-power * self.high_log)
        b = value * math.exp(-power * self.low_log)
        return (min(a, b), max(a, b))

    def covers(self, log_error: float) -> bool:
        return self.low_log <= log_error <= self.high_log


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default method)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def matches(row: Regime, level: Regime) -> bool:
    """A row belongs to a (pooled) regime: same kind and quantity, and every dimension the regime names."""
    for f in fields(level):
        want = getattr(level, f.name)
        if want != ANY and getattr(row, f.name) != want:
            return False
    return True


def inflation(table: Sequence[ErrorRow], kind: str) -> float:
    """The kind's open→sealed ratio: median |e| of its sealed rows over its open rows' (at least 1). A kind with
    fewer than MIN_SEALED sealed rows takes the median ratio of the kinds that have them; none: 1."""
    ratios = {}
    for k in sorted({r.kind for r in table}):
        sealed = [abs(r.log_error) for r in table if r.kind == k and r.split == "sealed"]
        opened = [abs(r.log_error) for r in table if r.kind == k and r.split == "open"]
        if len(sealed) >= MIN_SEALED and opened and statistics.median(opened) > 0:
            ratios[k] = max(1.0, statistics.median(sealed) / statistics.median(opened))
    if kind in ratios:
        return ratios[kind]
    return statistics.median(ratios.values()) if ratios else 1.0


def band(asked: Regime, table: Sequence[ErrorRow], exclude_source: str | None = None) -> Band | None:
    """The band of a regime from the table (``exclude_source``: leave that publisher's rows out); None when the
    table has no row of the kind and quantity."""
    rows = [
        r for r in table if r.kind == asked.kind and r.regime.quantity == asked.quantity and r.source != exclude_source
    ]
    if not rows:
        return None
    k = inflation([r for r in table if r.source != exclude_source], asked.kind)
    chosen: list[ErrorRow] = []
    level = asked
    thin = True
    for level in levels(asked):
        chosen = [r for r in rows if matches(r.regime, level)]
        if len(chosen) >= MIN_ROWS and len({r.source for r in chosen}) >= MIN_SOURCES:
            thin = False
            break
    errs = sorted(r.log_error * (k if r.split == "open" else 1.0) for r in chosen)
    counts = Counter(r.source for r in chosen)
    top = max(counts, key=lambda s: counts[s])
    lo = quantile(errs, (1.0 - INTERVAL) / 2.0)
    hi = quantile(errs, (1.0 + INTERVAL) / 2.0)
    return Band(
        asked=asked,
        regime=level,
        rows=len(chosen),
        sources=len({r.source for r in chosen}),
        sealed_rows=sum(r.split == "sealed" for r in chosen),
        low_log=lo,
        high_log=hi,
        median_abs_error_frac=statistics.median(abs(math.expm1(e)) for e in errs),
        inflation=k,
        thin=thin,
        top_source=top,
        top_source_rows=counts[top],
    )


def combine(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """Two independent log-error bands of factors of one product: centres add, half-widths add in quadrature."""
    ca, cb = (a[0] + a[1]) / 2.0, (b[0] + b[1]) / 2.0
    ha, hb = (a[1] - a[0]) / 2.0, (b[1] - b[0]) / 2.0
    h = math.hypot(ha, hb)
    return (ca + cb - h, ca + cb + h)
