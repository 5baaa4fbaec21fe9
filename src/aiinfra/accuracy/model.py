"""The error model: the central 80 % interval of the error a prediction makes for a publisher the model has not
seen, per regime (docs/accuracy.md, "From errors to a band").

Errors are signed log errors e = ln(predicted / measured) of the regime's quantity (aiinfra.accuracy.table). They
are modelled as a regime's centre, plus an offset shared by all rows of one publisher (its software versions and
settings: a random effect), plus the row's own scatter around its publisher's offset:

- the **pool** is the most specific pooling of the regime (:data:`aiinfra.accuracy.regimes.HIERARCHY`) with at
  least :data:`MIN_ROWS` rows; its **centre** is the median of its publishers' median errors (one vote per
  publisher), shrunk towards the centre of the **spread pool** (the most specific pooling with at least
  :data:`MIN_SOURCES` publishers) as publishers are few;
- the **within-publisher scatter** is the 10th and 90th percentile of the pool's errors about their publisher's
  median (publishers with two rows or more);
- the **between-publisher spread** is the standard deviation of the publishers' median errors in the spread pool,
  shrunk towards the pool's own publishers' spread where the pool is narrower (:func:`_between_sd`), with the
  centre's own uncertainty (that spread over the pool's publisher count) added;
- the two are added in quadrature on each side (independent errors, as :func:`combine`), and the sum is multiplied
  by the **calibration factor**: the conformal quantile (Vovk, Gammerman & Shafer, *Algorithmic Learning in a
  Random World*, 2005), each publisher weighing one (Dunn, Wasserman & Ramdas, JASA 2022), of the open rows'
  leave-one-source-out scores, i.e. the factor by which each open row's band, drawn without its own publisher,
  must grow to hold its measurement. A quantity with open rows from fewer than :data:`MIN_CALIBRATION_SOURCES`
  publishers shares its kind's factor; a kind with fewer is not calibrated (factor 1, the note says so). Inference
  calibrates each load level on its own where it has the publishers (:data:`CALIBRATION_GROUPS`).

Sealed rows never set the calibration factor; an answer's pool counts them as measured errors, and the
validation scores them against the bands of the open rows alone (aiinfra.accuracy.coverage).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from statistics import NormalDist

from aiinfra.accuracy.regimes import ANY, SATURATED_LEVELS, Regime, levels
from aiinfra.accuracy.table import ErrorRow

INTERVAL = 0.8
"""The central share of the errors a band holds."""
MIN_ROWS = 10
"""Fewest rows the centre and the within-publisher scatter of a band are drawn from."""
MIN_SOURCES = 5
"""Fewest publishers the between-publisher spread is drawn from. Each publisher's rows share a systematic offset
(its software, its settings), so a band drawn from one or two publishers misses the next one's; the standard
deviation of four offsets was too noisy on the open rows (docs/accuracy.md, "Regimes and pooling")."""
CENTRE_PRIOR_SOURCES = 3.0
"""Weight, in publishers, of the spread pool's centre in a band's centre: a pool with K publishers has its own
centre weighted K / (K + 3) (empirical-Bayes shrinkage: a regime's offset measured by a few publishers is hard to
tell apart from those publishers' own offsets; three gave calibrated training and throughput bands on the open rows
of both the first and the enlarged validation, one did not — docs/accuracy.md)."""
SPREAD_PRIOR_DF = CENTRE_PRIOR_SOURCES
"""Degrees of freedom, in publishers, of the spread pool's between-publisher variance as the prior of a narrower
pool's (:func:`_between_sd`): the same weight as the centre's prior, so a pool's own publishers outweigh the broad
spread once they number more than four (compared on the open rows with 1: docs/accuracy.md)."""
MIN_CALIBRATION_SOURCES = 5
"""Fewest publishers of open rows of a quantity for the quantity to have its own calibration factor (with fewer it
shares its kind's), and of a kind for it to be calibrated at all: an 80 % quantile over fewer publishers is the
worst of them."""
CALIBRATION_GROUPS: dict[str, str] = {"inference": "load"}
"""Per kind, the regime dimension whose levels are calibrated each on their own (Mondrian conformal prediction:
Vovk, Lindsay, Nouretdinov & Gammerman, "Mondrian confidence machine", 2003; Vovk, Gammerman & Shafer 2005:
coverage holds within each level, not only on average over them) when a level's
open rows come from at least MIN_CALIBRATION_SOURCES publishers. Inference's load level: near saturation a latency
carries its step time's error amplified 1 / (1 − ρ) times, and past it ρ / (ρ − 1) times
(aiinfra.accuracy.regimes.UTILISATION_LEVELS), so one factor for every load would leave the bands too narrow there
and too wide at light load."""

CALIBRATION_SIBLINGS: dict[str, tuple[str, ...]] = {level: SATURATED_LEVELS for level in SATURATED_LEVELS}
"""A calibration level whose open rows come from too few publishers borrows the factor of these levels together
before the quantity's: the loads near and past saturation share the amplified errors that set them apart from the
lighter loads (aiinfra.accuracy.regimes.SATURATED_LEVELS)."""

Z_INTERVAL = NormalDist().inv_cdf((1.0 + INTERVAL) / 2.0)
"""The normal quantile of the interval's upper end (1.2816 for 80 %): the between-publisher spread as a normal
random effect."""
_EPS = 1e-6


@dataclass(frozen=True, kw_only=True, slots=True)
class Band:
    """The errors of one regime: a band in log-error space."""

    asked: Regime
    regime: Regime
    """The pool the centre and the within-publisher scatter come from (``asked`` with dimensions given up)."""
    spread_regime: Regime
    """The pool the between-publisher spread comes from."""
    rows: int
    sources: int
    sealed_rows: int
    centre_log: float
    """The band's centre in log-error space."""
    low_log: float
    """The lower end in log-error space: the measurement lies in the band when low_log ≤ e ≤ high_log."""
    high_log: float
    between_sd_log: float
    """The between-publisher spread τ: the SD of the publishers' median errors (the spread pool's, shrunk towards the
    pool's own where it is narrower)."""
    calibration_x: float
    """The conformal calibration factor the half-widths were multiplied by."""
    calibrated: bool
    """False: too few publishers to calibrate on (calibration_x is 1)."""
    median_abs_error_frac: float
    """Median |predicted / measured − 1| of the pool."""
    thin: bool
    """The pool has fewer than MIN_ROWS rows, or even the whole kind fewer than MIN_SOURCES publishers."""
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
        """Whether ``log_error`` (log of predicted / measured, of the band's quantity) lies inside its 80 % range."""
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


def _spread(values: Sequence[float]) -> float:
    """The standard deviation of the publishers' median errors (a lone publisher: none measured)."""
    return statistics.stdev(values) if len(values) >= 2 else 0.0


def _between_sd(pool_medians: Sequence[float], spread_medians: Sequence[float], same_pool: bool) -> float:
    """The between-publisher spread τ of a band: the SD of the spread pool's publishers' medians, or, when the pool
    is narrower than the spread pool, the pool's own variance of its K publishers' medians shrunk towards it as the
    posterior mean of a normal variance under a scaled-inverse-χ² prior of SPREAD_PRIOR_DF degrees of freedom
    centred on the spread pool's (Gelman et al., *Bayesian Data Analysis*, 3rd ed., 2013, §3.2):
    τ² = ((K − 1)·s² + ν₀·τ₀²) / (K − 1 + ν₀). A pool whose few publishers agree gets a narrower spread than the
    broad pool's; one publisher alone says nothing of the spread and keeps τ₀."""
    prior = _spread(spread_medians)
    k = len(pool_medians)
    if same_pool or k < 2:
        return prior
    dof = k - 1.0
    return math.sqrt((dof * statistics.variance(pool_medians) + SPREAD_PRIOR_DF * prior**2) / (dof + SPREAD_PRIOR_DF))


def _source_medians(rows: Sequence[ErrorRow]) -> dict[str, float]:
    by: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        by[r.source].append(r.log_error)
    return {s: statistics.median(v) for s, v in by.items()}


@dataclass(frozen=True, kw_only=True, slots=True)
class _Raw:
    """A band before calibration: its centre and its half-widths below and above it."""

    level: Regime
    spread_level: Regime
    chosen: tuple[ErrorRow, ...]
    centre_log: float
    below_log: float
    above_log: float
    between_sd_log: float
    thin: bool


def _raw(asked: Regime, rows: Sequence[ErrorRow]) -> _Raw | None:
    """The uncalibrated band of ``asked`` from ``rows`` (already of its kind and quantity); None when empty."""
    if not rows:
        return None
    groups: dict[Regime, list[ErrorRow]] = defaultdict(list)
    for r in rows:
        groups[r.regime].append(r)
    ladder = [(lv, [r for g, rs in groups.items() if matches(g, lv) for r in rs]) for lv in levels(asked)]
    level, chosen = next(((lv, c) for lv, c in ladder if len(c) >= MIN_ROWS), ladder[-1])
    start = [lv for lv, _ in ladder].index(level)
    spread_level, spread_rows = next(
        ((lv, c) for lv, c in ladder[start:] if len({r.source for r in c}) >= MIN_SOURCES), ladder[-1]
    )
    thin = len(chosen) < MIN_ROWS or len({r.source for r in spread_rows}) < MIN_SOURCES
    medians = _source_medians(chosen)
    spread_medians = list(_source_medians(spread_rows).values())
    k = len(medians)
    own = statistics.median(medians.values())
    prior = statistics.median(spread_medians)
    centre = (k * own + CENTRE_PRIOR_SOURCES * prior) / (k + CENTRE_PRIOR_SOURCES)
    tau = _between_sd(list(medians.values()), spread_medians, spread_level == level)
    counts = Counter(r.source for r in chosen)
    within = sorted(r.log_error - medians[r.source] for r in chosen if counts[r.source] >= 2)
    w_lo = min(quantile(within, (1.0 - INTERVAL) / 2.0), 0.0) if within else 0.0
    w_hi = max(quantile(within, (1.0 + INTERVAL) / 2.0), 0.0) if within else 0.0
    # the spread a new publisher's offset adds, and the centre's own uncertainty (tau² / K), shrunk as above
    between = Z_INTERVAL * tau * math.sqrt(1.0 + 1.0 / (k + CENTRE_PRIOR_SOURCES))
    return _Raw(
        level=level,
        spread_level=spread_level,
        chosen=tuple(chosen),
        centre_log=centre,
        below_log=math.hypot(w_lo, between),
        above_log=math.hypot(w_hi, between),
        between_sd_log=tau,
        thin=thin,
    )


def score(raw: _Raw, log_error: float) -> float:
    """How many times its half-width a raw band must grow to hold ``log_error`` (the conformity score)."""
    d = log_error - raw.centre_log
    return d / max(raw.above_log, _EPS) if d >= 0 else -d / max(raw.below_log, _EPS)


def conformal_quantile(scores: Sequence[tuple[float, str]]) -> float:
    """The INTERVAL-quantile of the (score, publisher) pairs with each publisher weighing 1 in all, its rows
    1 / n each: the rows of one publisher are not exchangeable with each other, its publishers are (the pooled-CDF
    conformal set for grouped data, Dunn, Wasserman & Ramdas, JASA 2022). No score: 1."""
    if not scores:
        return 1.0
    n = Counter(src for _, src in scores)
    pts = sorted((s, 1.0 / n[src]) for s, src in scores)
    need = INTERVAL * len(n) - 1e-12
    acc = 0.0
    for s, w in pts:
        acc += w
        if acc >= need:
            return s
    return pts[-1][0]


_Factors = dict[tuple[str, str, frozenset[str], str], tuple[float, bool]]
_CACHE: dict[int, tuple[Sequence[ErrorRow], _Factors]] = {}
"""Calibration factors per table, by identity (the shipped table is one cached tuple; a validation run's pool is
one list): a few tables at most, each entry holding its table so that its id is not reused."""


_KEEP: dict[int, Callable[[_Factors], None]] = {}
"""Per table (by identity, as _CACHE): where newly computed factors are kept beyond this process (the shipped
table's on-disk cache, accuracy/table.py)."""


def _factors(table: Sequence[ErrorRow]) -> _Factors:
    entry = _CACHE.get(id(table))
    if entry is None or entry[0] is not table:
        if len(_CACHE) >= 4:
            _CACHE.clear()
            _KEEP.clear()
        entry = _CACHE[id(table)] = (table, {})
        _KEEP.pop(id(table), None)
    return entry[1]


def preload_factors(table: Sequence[ErrorRow], factors: _Factors, keep: Callable[[_Factors], None]) -> None:
    """Start ``table``'s calibration memo from ``factors`` (computed by an earlier process for the same table and
    code); ``keep`` receives the memo whenever a new factor is added to it."""
    _factors(table).update(factors)
    _KEEP[id(table)] = keep


def _of(table: Sequence[ErrorRow], kind: str, quantity: str | None, exclude: frozenset[str]) -> list[ErrorRow]:
    return [
        r
        for r in table
        if r.kind == kind and (quantity is None or r.regime.quantity == quantity) and r.source not in exclude
    ]


def calibration(
    table: Sequence[ErrorRow], kind: str, quantity: str, exclude: frozenset[str] = frozenset(), group: str = ANY
) -> float:
    """The calibration factor of ``kind``/``quantity`` (:func:`calibrate`)."""
    return calibrate(table, kind, quantity, exclude, group)[0]


def calibrate(
    table: Sequence[ErrorRow],
    kind: str,
    quantity: str,
    exclude: frozenset[str] = frozenset(),
    group: str = ANY,
) -> tuple[float, bool]:
    """The calibration factor of ``kind``/``quantity``: the conformal quantile of the leave-one-source-out scores
    of the open rows (those of the publishers in ``exclude`` left out altogether), and whether there were enough
    publishers to calibrate (if not: 1, False). A quantity whose open rows come from fewer than
    MIN_CALIBRATION_SOURCES publishers takes the factor of its kind's open rows together; ``group``: a level of the
    kind's CALIBRATION_GROUPS dimension, calibrated on its own rows where they come from enough publishers, else on
    those of its CALIBRATION_SIBLINGS together where they do."""
    cache = _factors(table)
    key = (kind, quantity, exclude, group)
    if key in cache:
        return cache[key]
    opened = [r for r in table if r.split == "open" and r.kind == kind and r.source not in exclude]
    own = [r for r in opened if r.regime.quantity == quantity]
    use = own if len({r.source for r in own}) >= MIN_CALIBRATION_SOURCES else opened
    dim = CALIBRATION_GROUPS.get(kind)
    if dim is not None and group != ANY:
        for together in ((group,), CALIBRATION_SIBLINGS.get(group, ())):
            level = [r for r in use if getattr(r.regime, dim) in together]
            if len({r.source for r in level}) >= MIN_CALIBRATION_SOURCES:
                use = level
                break
    if len({r.source for r in use}) < MIN_CALIBRATION_SOURCES:  # too few publishers to calibrate on
        cache[key] = (1.0, False)
        return cache[key]
    scores = []
    raws: dict[tuple[Regime, str], _Raw | None] = {}
    for r in use:
        if (r.regime, r.source) not in raws:
            pool = [p for p in opened if p.regime.quantity == r.regime.quantity and p.source != r.source]
            raws[r.regime, r.source] = _raw(r.regime, pool)
        raw = raws[r.regime, r.source]
        if raw is not None:
            scores.append((score(raw, r.log_error), r.source))
    cache[key] = (conformal_quantile(scores), True)
    keep = _KEEP.get(id(table))
    if keep is not None:
        keep(cache)
    return cache[key]


def band(
    asked: Regime,
    table: Sequence[ErrorRow],
    exclude_source: str | None = None,
    open_only: bool = False,
) -> Band | None:
    """The band of a regime from the table (``exclude_source``: leave that publisher's rows out, from the band and
    from its calibration; ``open_only``: the pool of open rows only, as the sealed rows are scored); None when the
    table has no row of the kind and quantity."""
    exclude = frozenset({exclude_source}) if exclude_source else frozenset()
    rows = [r for r in _of(table, asked.kind, asked.quantity, exclude) if not open_only or r.split == "open"]
    raw = _raw(asked, rows)
    if raw is None:
        return None
    dim = CALIBRATION_GROUPS.get(asked.kind)
    k, calibrated = calibrate(table, asked.kind, asked.quantity, exclude, getattr(asked, dim) if dim else ANY)
    counts = Counter(r.source for r in raw.chosen)
    top = max(counts, key=lambda s: counts[s])
    return Band(
        asked=asked,
        regime=raw.level,
        spread_regime=raw.spread_level,
        rows=len(raw.chosen),
        sources=len(counts),
        sealed_rows=sum(r.split == "sealed" for r in raw.chosen),
        centre_log=raw.centre_log,
        low_log=raw.centre_log - k * raw.below_log,
        high_log=raw.centre_log + k * raw.above_log,
        between_sd_log=raw.between_sd_log,
        calibration_x=k,
        calibrated=calibrated,
        median_abs_error_frac=statistics.median(abs(math.expm1(r.log_error)) for r in raw.chosen),
        thin=raw.thin,
        top_source=top,
        top_source_rows=counts[top],
    )


def combine(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """Two independent log-error bands of factors of one product: centres add, half-widths add in quadrature."""
    ca, cb = (a[0] + a[1]) / 2.0, (b[0] + b[1]) / 2.0
    ha, hb = (a[1] - a[0]) / 2.0, (b[1] - b[0]) / 2.0
    h = math.hypot(ha, hb)
    return (ca + cb - h, ca + cb + h)
