"""Achieved-efficiency curves from public measurements (catalog/data/efficiency.yaml).

A curve maps an operation's size (GEMM FLOPs, bytes moved, message bytes) to the fraction of the
accelerator's dense peak (or of one-way link bandwidth) that published measurements achieved.
Interpolation is linear in log10(size), clamped at the measured ends.

When no curve covers an accelerator, the lookup borrows the curve of the same kind and dtype
measured on the most similar accelerator and says so (``borrowed:<row id>``): the same product family
first, then the same architecture generation, then the same vendor (the accelerator rows' ``family``,
``generation`` and ``vendor`` fields in accelerators.yaml), and only then
another vendor's curve, labelled ``borrowed:<row id> (other vendor)``. Among equally similar rows a
size curve beats a single-point ceiling (the ``*-mamf-ceiling`` rows: one best shape, an upper bound);
then, among the part's own curves, one measured on it beats one derived from another part (``provenance``);
then the closest rank count, then file order (efficiency.yaml before the ``efficiency_*.yaml`` files).
Rows timed inside one serving engine's own operators (``engine``: trtllm, vllm or sglang for NVIDIA AIConfigurator's
TensorRT-LLM, vLLM or SGLang kernel timings) are preferred, among equally similar size curves (after the
single-point and provenance rules), by a lookup that names that engine:
an engine's kernels (its attention, fused-MoE, GEMM and all-reduce implementations) are the best evidence of
its speed, whichever version measured them. A lookup that names no engine, or another, prefers the engine-free
rows and uses an engine's rows only where no engine-free row is as similar; an engine's ``cross_check`` rows
(a part the main file measures already) serve lookups for that engine only.
With no curve at all the lookup returns 1.0 — the
ideal roofline, an upper bound — labelled ``roofline (no efficiency data)``.
Attention curves may name the head dimension they were measured at (``head_dim``): a lookup that gives
one prefers, among curves of the same accelerator match, the curve whose head dimension is nearest on a
log2 scale (FlashAttention-2 paper Fig. 4: head dim 64 runs 10-20 % slower than 128 on A100). They may
also name the kernel family (``kernel``: fa2, fa3); a lookup that asks for one keeps only those curves when
any exists (FlashAttention-2 on H100 runs at about half FlashAttention-3's speed).
GEMM curves may name the row count M their shapes were measured at (``m_tokens``: an engine's table reduced one M
at a time, bench/aic_efficiency_gemm.py --by-m). Only a lookup that gives M considers them, and it prefers, after
the engine rule, the family of per-M curves (over any curve that names none); the value is interpolated linearly
in log2(M) between the family's two curves that bracket the lookup's M (the nearest M, quantised to quarter
octaves, picks the family): at equal FLOP a kernel of few rows and a large weight behaves unlike one of many rows
and a small weight, which a FLOP-only curve averages away (bench/aic_gemm_fidelity.py measures the difference).
The interpolated time is not monotone in M (M = 2 comes out faster than M = 1); analytic/inference.py
``gemm_compute_s`` takes the lower monotone envelope (a GEMM of M rows is never slower than one of M' > M rows).
Rows of kind ``moe_shape`` time one routed-expert shape (``moe_shape``: hidden, expert width, experts, top-k, moe_tp,
moe_ep) against the tokens entering the layer; only a lookup giving exactly that shape uses one
(bench/aic_moe_fidelity.py measures what the shape-blind ``moe`` curve misses). A row may name the engine
``releases`` whose code it timed (``from_version`` to ``below_version``, as engines.yaml's release ranges): only a
lookup stating a release in that range uses it, and there it ranks before the engine's rows that name none (an older
release's op timed by the project, where the engine's tables time a later one: bench/gpu/engine_moe.py).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiinfra.dataclass_code import loads_fast
from aiinfra.diskcache import file_identity
from aiinfra.errors import DataError
from aiinfra.specs.engine import ReleaseRange, parse_version

if TYPE_CHECKING:
    import numpy as np

    from aiinfra.specs.hardware import AcceleratorSpec
    from aiinfra.specs.tables import DomainTables

NO_DATA = "roofline (no efficiency data)"
#: kinds whose y is a ratio of two measured times rather than a fraction of peak (may exceed 1): fp8_block_gemm, a
#: block-scaled FP8 linear op's time over the per-tensor FP8 op's at the GEMM's row count (x)
TIME_RATIO_KINDS = frozenset({"fp8_block_gemm"})


@dataclass(frozen=True, slots=True)
class Lookup:
    """An efficiency fraction and where it came from."""

    frac: float
    """Achieved fraction of peak (compute) or of one-way bandwidth (memory, links)."""
    source: str
    """efficiency.yaml row id, 'borrowed:<row id>' (+ ' (other vendor)'), or NO_DATA."""
    engine: str | None = None
    """Serving engine whose own operator timings the row holds (None: an engine-free measurement, or NO_DATA)."""


@loads_fast
@dataclass(frozen=True, slots=True)
class Curve:
    """One efficiency.yaml row: achieved fraction of peak ``y`` against log10 of the operation's size ``log_x``
    (its unit set by ``kind``), for the accelerators, dtype, ranks and tier it was measured on."""

    id: str
    kind: str
    accelerators: tuple[str, ...]
    dtype: str | None
    n_ranks: int | None
    tier: str | None
    log_x: tuple[float, ...]
    y: tuple[float, ...]
    provenance: str = "measured"
    head_dim: int | None = None
    """Attention head dimension the curve was measured at (attention kinds only)."""
    kernel: str | None = None
    """Attention kernel family measured (fa2, fa3), where a row names it."""
    engine: str | None = None
    """Serving engine whose own operators were timed (trtllm, vllm, sglang), or None for engine-free measurements."""
    engine_only: bool = False
    """A cross_check row of an engine: used only by lookups naming that engine."""
    m_tokens: int | None = None
    """GEMM row count M the curve's shapes share (per-M rows only); lookups without M never use such a curve."""
    moe_shape: tuple[int, ...] | None = None
    """(hidden, expert width, experts, top-k, moe_tp, moe_ep) of a moe_shape row; only that shape's lookups use it."""
    releases: ReleaseRange | None = None
    """The engine releases whose op the row timed; only lookups stating such a release use it."""

    def at(self, x: float) -> float:
        """The fraction at size ``x``, linear in log10(x) between measured points and clamped at both ends."""
        if x <= 0:
            return self.y[0]
        lx = math.log10(x)
        if lx <= self.log_x[0]:
            return self.y[0]
        if lx >= self.log_x[-1]:
            return self.y[-1]
        i = bisect_left(self.log_x, lx)
        x0, x1 = self.log_x[i - 1], self.log_x[i]
        y0, y1 = self.y[i - 1], self.y[i]
        return y0 + (y1 - y0) * (lx - x0) / (x1 - x0)

    def at_array(self, x: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`at`."""
        import numpy as np

        lx = np.log10(np.maximum(np.asarray(x, dtype=float), 1e-30))
        out: np.ndarray = np.interp(lx, np.asarray(self.log_x), np.asarray(self.y))
        return out


#: (family, generation, vendor) of an accelerator id, from its catalog row
_Part = tuple[str | None, str | None, str | None]
_UNKNOWN: _Part = (None, None, None)


def parts_of(accelerators: Mapping[str, AcceleratorSpec]) -> dict[str, _Part]:
    """Each accelerator's product family, architecture generation and vendor (accelerators.yaml): the taxonomy donor
    curves are chosen by, data so that a new accelerator row needs no code."""
    return {a.id: (a.family, a.generation, a.vendor) for a in accelerators.values()}


def _similarity(parts: Mapping[str, _Part], acc_id: str, donors: tuple[str, ...]) -> int:
    """0 measured on this accelerator, 1 same family, 2 same generation, 3 same vendor, 4 other vendor."""
    if acc_id in donors:
        return 0
    family, generation, vendor = parts.get(acc_id, _UNKNOWN)
    theirs = [parts.get(a, _UNKNOWN) for a in donors]
    if family is not None and any(p[0] == family for p in theirs):
        return 1
    if generation is not None and any(p[1] == generation for p in theirs):
        return 2
    if vendor is not None and any(p[2] == vendor for p in theirs):
        return 3
    return 4


#: a lookup's identity: kind, accelerator id, dtype, n_ranks, tier, head_dim, kernel, m_tokens, moe_shape, engine,
#: engine release
_Key = tuple[
    str,
    str,
    str | None,
    int | None,
    str | None,
    int | None,
    str | None,
    float | None,
    tuple[int, ...] | None,
    str | None,
    tuple[int, ...] | None,
]

#: per-M curves are ranked by |log2(curve M / lookup M)|; a curve naming no M ranks after all of them
_NO_M_SCORE = 64.0


def _quantised_m(m_tokens: float | None) -> float | None:
    """The lookup's M to the nearest quarter octave (keeps the memo small; at most 9 % off)."""
    if m_tokens is None:
        return None
    return float(2.0 ** (round(4.0 * math.log2(max(m_tokens, 1.0))) / 4.0))


@dataclass
class EfficiencyTable:
    """The catalog's efficiency curves, with the rules for picking (or borrowing) the one that fits a lookup."""

    curves: list[Curve] = field(default_factory=list)
    parts: Mapping[str, _Part] = field(default_factory=dict, repr=False)
    """Accelerator id -> (family, generation, vendor) (:func:`parts_of`): who may lend a curve to whom."""
    _memo: dict[_Key, tuple[Curve, int] | None] = field(default_factory=dict, repr=False)
    _families: dict[str, tuple[list[Curve], list[float]]] = field(default_factory=dict, repr=False)
    """per-M curve id -> its family (same kind, parts, dtype, engine) sorted by M; filled on first use."""
    envelopes: dict[tuple[Any, ...], tuple[list[float], list[float]]] = field(default_factory=dict, repr=False)
    """Memo of analytic/inference.py's monotone GEMM-time envelopes (one per accelerator, dtype, engine, shape)."""
    lazy_loader: Callable[[str, str], list[Curve]] | None = field(default=None, repr=False)
    """(trigger "by_m" | "by_shape", engine) -> that engine's per-M or per-shape curves, loaded on the first lookup
    that gives M (or a MoE shape) and names the engine; other lookups never consider them, so training, engine-free
    and other engines' lookups do not pay for parsing them."""
    _loaded: set[tuple[str, str]] = field(default_factory=set, repr=False)
    _by_kind: dict[str, list[Curve]] = field(default_factory=dict, repr=False)
    _by_kind_of: list[Curve] | None = field(default=None, repr=False)
    """the ``curves`` list ``_by_kind`` was built from (the lazy loader replaces the list)"""
    _eligible_memo: dict[tuple[Any, ...], list[Curve]] = field(default_factory=dict, repr=False)
    _sims: dict[tuple[str, tuple[str, ...]], int] = field(default_factory=dict, repr=False)
    """(accelerator id, donor ids) -> :meth:`similarity` (the parts never change)"""

    def similarity(self, acc_id: str, curve: Curve) -> int:
        """How closely ``curve`` stands for ``acc_id`` (lower is closer): 0 measured on it, 1 same family,
        2 same architecture generation, 3 same vendor, 4 another vendor."""
        return _similarity(self.parts, acc_id, curve.accelerators)

    def _match(self, key: _Key) -> tuple[Curve, int] | None:
        """Memoised :meth:`_select`; ``key`` = (kind, accelerator, dtype, n_ranks, tier, head_dim, kernel, m_tokens,
        moe_shape, engine, release)."""
        engine = key[9]
        for trigger, given in (("by_m", key[7]), ("by_shape", key[8])):
            todo = given is not None and engine is not None and (trigger, engine) not in self._loaded
            if todo and engine is not None and self.lazy_loader is not None:
                self._loaded.add((trigger, engine))
                self.curves = [*self.curves, *self.lazy_loader(trigger, engine)]
        if key not in self._memo:
            self._memo[key] = self._select(*key)
        return self._memo[key]

    def _select(
        self,
        kind: str,
        acc_id: str,
        dtype: str | None,
        n_ranks: int | None,
        tier: str | None,
        head_dim: int | None,
        kernel: str | None,
        m_tokens: float | None,
        moe_shape: tuple[int, ...] | None,
        engine: str | None,
        release: tuple[int, ...] | None,
    ) -> tuple[Curve, int] | None:
        family = _dtype_family(dtype) if dtype is not None else None
        cands = self._eligible(kind, family, tier, engine, m_tokens is not None, moe_shape, release)
        if not cands:
            return None
        if kernel is not None and any(c.kernel == kernel for c in cands):
            cands = [c for c in cands if c.kernel == kernel]
        # donors -> similarity: candidates share few donor lists. The similarity ranks first, so only the closest
        # candidates (in file order) need the rest of the ranking; min() keeps the first of equal keys either way
        sims: dict[tuple[str, ...], int] = {}
        for c in cands:
            if c.accelerators not in sims:
                got = self._sims.get((acc_id, c.accelerators))
                if got is None:
                    got = self._sims[acc_id, c.accelerators] = self.similarity(acc_id, c)
                sims[c.accelerators] = got
        sim = min(sims.values())
        cands = [c for c in cands if sims[c.accelerators] == sim]

        def rank_key(c: Curve) -> tuple[int, int, int, int, float, int, float, int]:
            single_point = 1 if len(c.log_x) == 1 else 0
            # a row timing the stated release's own op (eligible only then) before rows naming no release
            release_score = 0 if c.releases is not None else 1
            # the named engine's own timings, then engine-free measurements, then another engine's
            engine_score = 0 if (engine is not None and c.engine == engine) else (1 if c.engine is None else 2)
            # on the part itself, a measurement beats a derivation from another part's measurement
            derived = 1 if sim == 0 and c.provenance == "derived" else 0
            m_score = 0.0
            if m_tokens is not None:
                m_score = abs(math.log2(c.m_tokens / m_tokens)) if c.m_tokens else _NO_M_SCORE
            rank_score = abs((c.n_ranks or 0) - (n_ranks or 0)) if n_ranks is not None else 0
            hd_score = abs(math.log2(c.head_dim / head_dim)) if (head_dim and c.head_dim) else 0.0
            # last, before file order: a row measured in the asked dtype beats one that names none
            dtype_score = 0 if (family is not None and c.dtype == family) else 1
            return single_point, derived, release_score, engine_score, m_score, rank_score, hd_score, dtype_score

        return min(cands, key=rank_key), sim

    def _of_kind(self, kind: str) -> list[Curve]:
        """The curves of one kind in file order (rebuilt, with the eligibility memo, when the lazy loader has
        added curves)."""
        if self._by_kind_of is not self.curves:
            self._by_kind = {}
            self._eligible_memo = {}
            for c in self.curves:
                self._by_kind.setdefault(c.kind, []).append(c)
            self._by_kind_of = self.curves
        return self._by_kind.get(kind, [])

    def _eligible(
        self,
        kind: str,
        family: str | None,
        tier: str | None,
        engine: str | None,
        by_m: bool,
        moe_shape: tuple[int, ...] | None,
        release: tuple[int, ...] | None,
    ) -> list[Curve]:
        """The curves a lookup may use, in file order: its kind; not an engine_only row of another engine; a per-M
        row only when the lookup gives M (``by_m``); a per-shape row only for its shape; a row naming releases only
        for a stated release in its range; the lookup's dtype family and tier where both name one. Memoised on these
        terms (lookups differing in accelerator, rank count, head dimension or M share the list) and rebuilt when
        the lazy loader has added curves."""
        of_kind = self._of_kind(kind)
        key = (kind, family, tier, engine, by_m, moe_shape, release)
        got = self._eligible_memo.get(key)
        if got is None:
            got = self._eligible_memo[key] = [
                c
                for c in of_kind
                if not (c.engine_only and c.engine != engine)
                and (by_m or c.m_tokens is None)
                and (c.moe_shape is None or c.moe_shape == moe_shape)
                and (c.releases is None or (release is not None and c.releases.applies(release)))
                and (family is None or c.dtype is None or c.dtype == family)
                and (tier is None or c.tier is None or c.tier == tier)
            ]
        return got

    def curve(
        self,
        kind: str,
        acc_id: str,
        dtype: str | None = None,
        n_ranks: int | None = None,
        tier: str | None = None,
        head_dim: int | None = None,
        kernel: str | None = None,
        engine: str | None = None,
        m_tokens: float | None = None,
    ) -> tuple[Curve | None, str]:
        """The curve a lookup would use and its source label (None, NO_DATA when there is none)."""
        key = (kind, acc_id, dtype, n_ranks, tier, head_dim, kernel, _quantised_m(m_tokens), None, engine, None)
        sel = self._match(key)
        if sel is None:
            return None, NO_DATA
        curve, similarity = sel
        return curve, _label(curve, similarity)

    def lookup(
        self,
        kind: str,
        acc_id: str,
        x: float,
        dtype: str | None = None,
        n_ranks: int | None = None,
        tier: str | None = None,
        engine: str | None = None,
        m_tokens: float | None = None,
        moe_shape: tuple[int, ...] | None = None,
        release: tuple[int, ...] | None = None,
    ) -> Lookup:
        """Achieved fraction of peak at size ``x`` for an operation ``kind`` on ``acc_id``, from the closest matching
        curve (interpolated in M when ``m_tokens`` is given); fraction 1.0 with source NO_DATA when no curve fits.
        ``release``: the engine release the lookup prices (rows naming releases need it)."""
        key = (kind, acc_id, dtype, n_ranks, tier, None, None, _quantised_m(m_tokens), moe_shape, engine, release)
        sel = self._match(key)
        if sel is None:
            return Lookup(1.0, NO_DATA)
        curve, similarity = sel
        if m_tokens is not None and curve.m_tokens is not None:
            return Lookup(self._between_m(curve, x, m_tokens), _label(curve, similarity), curve.engine)
        return Lookup(curve.at(x), _label(curve, similarity), curve.engine)

    def _between_m(self, chosen: Curve, x: float, m_tokens: float) -> float:
        """The fraction at ``x`` interpolated linearly in log2(M) between the per-M curves of ``chosen``'s family
        (same kind, parts, dtype and engine) that bracket ``m_tokens`` — continuous in M, unlike the nearest
        curve alone; clamped at the family's smallest and largest M."""
        got = self._families.get(chosen.id)
        if got is None:
            family = sorted(
                (
                    c
                    for c in self._of_kind(chosen.kind)
                    if c.m_tokens is not None
                    and (c.kind, c.accelerators, c.dtype, c.engine)
                    == (chosen.kind, chosen.accelerators, chosen.dtype, chosen.engine)
                ),
                key=lambda c: c.m_tokens or 0,
            )
            got = self._families[chosen.id] = (family, [c.m_tokens or 0 for c in family])
        family, ms = got
        m = max(m_tokens, 1.0)
        # the family is sorted by M: lo = the first curve of the largest M ≤ m (else the first), hi = the first of
        # the smallest M ≥ m (else the last)
        i = bisect_right(ms, m) - 1
        lo = family[bisect_left(ms, ms[i])] if i >= 0 else family[0]
        j = bisect_left(ms, m)
        hi = family[j] if j < len(family) else family[-1]
        if lo is hi or lo.m_tokens is None or hi.m_tokens is None:
            return lo.at(x)
        w = math.log2(m / lo.m_tokens) / math.log2(hi.m_tokens / lo.m_tokens)
        return (1.0 - w) * lo.at(x) + w * hi.at(x)


def _label(curve: Curve, similarity: int) -> str:
    if similarity == 0:
        return curve.id
    return f"borrowed:{curve.id}" + (" (other vendor)" if similarity == 4 else "")


def _dtype_family(dtype: str) -> str:
    """fp16 and bf16 run on the same tensor-core paths at the same peak; so do the fp8 variants."""
    return {"fp16": "bf16", "mxfp8": "fp8", "nvfp4": "fp4"}.get(dtype, dtype)


def _curve(row: dict[str, Any]) -> Curve:
    """A row as a curve; a cross_check row timed inside an engine becomes an engine_only curve."""
    # list comprehensions and map rather than generators: thousands of points are read at every start
    pts = sorted([(float(x), float(y)) for x, y in row["points"]])
    y_max = math.inf if row.get("kind") in TIME_RATIO_KINDS else 1.0
    if not pts or [x for x, y in pts if x <= 0 or not (0 < y <= y_max)]:
        raise DataError(f"efficiency.yaml row {row.get('id')}: points must have x > 0 and 0 < y <= {y_max:g}")
    dtype = row.get("dtype")
    return Curve(
        id=str(row["id"]),
        kind=str(row["kind"]),
        accelerators=tuple(row.get("accelerators") or ()),
        dtype=_dtype_family(str(dtype)) if dtype else None,
        n_ranks=int(row["n_ranks"]) if row.get("n_ranks") else None,
        tier=row.get("tier"),
        log_x=tuple([math.log10(x) for x, _ in pts]),
        y=tuple([y for _, y in pts]),
        provenance=str(row.get("provenance", "measured")),
        head_dim=int(row["head_dim"]) if row.get("head_dim") else None,
        kernel=str(row["kernel"]) if row.get("kernel") else None,
        engine=str(row["engine"]) if row.get("engine") else None,
        engine_only=bool(row.get("cross_check")) and bool(row.get("engine")),
        m_tokens=int(row["m_tokens"]) if row.get("m_tokens") else None,
        moe_shape=tuple(int(v) for v in row["moe_shape"]) if row.get("moe_shape") else None,
        releases=_releases(row),
    )


def _releases(row: dict[str, Any]) -> ReleaseRange | None:
    """A row's ``releases: {from_version, below_version}`` (None: the row names none); both bounds are required, a
    timed op belonging to releases that end."""
    given = row.get("releases")
    if not given:
        return None
    bounds = (
        [parse_version(str(given.get(k) or "")) for k in ("from_version", "below_version")]
        if isinstance(given, dict)
        else []
    )
    if len(bounds) != 2 or bounds[0] is None or bounds[1] is None or bounds[0] >= bounds[1]:
        raise DataError(
            f"efficiency row {row.get('id')}: releases {given!r} must give from_version and a later below_version "
            "(e.g. {from_version: '0.8.3', below_version: '0.8.5'})"
        )
    return ReleaseRange(from_version=bounds[0], below_version=bounds[1], when_unstated=False)


def efficiency_files(tables: DomainTables) -> list[str]:
    """efficiency.yaml, then every ``efficiency_*.yaml`` beside it in name order (rows derived in bulk from one
    source each, e.g. a peer's published kernel timings). Earlier rows win ties between equally similar curves,
    so a later file only fills kinds, dtypes and accelerators the main file does not measure. Files whose name
    holds ``_by_m_`` carry only per-M curves (``m_tokens``), ``_by_shape_`` only per-shape MoE curves. Names are
    relative to the catalog's data folder; an overlay's efficiency.yaml rows join the first."""
    return list(tables.efficiency_files())


def _lazy(name: str) -> bool:
    return "_by_m_" in name or "_by_shape_" in name


def efficiency_rows(tables: DomainTables, lazy: bool | None = None) -> list[dict[str, Any]]:
    """The rows of :func:`efficiency_files`, in order: all (None), only the per-M and per-shape files' (True) or
    the others'."""
    rows: list[dict[str, Any]] = []
    for name in efficiency_files(tables):
        if lazy is None or lazy == _lazy(name):
            rows.extend(tables.file_rows(name))
    return rows


def _used(rows: Sequence[dict[str, Any]]) -> list[Curve]:
    # cross_check rows document a second measurement of something a used row already covers; those timed inside
    # an engine serve lookups for that engine only
    return [_curve(r) for r in rows if r.get("points") and (r.get("engine") or not r.get("cross_check"))]


def _file_curves(
    tables: DomainTables, name: str, build: Callable[[Sequence[dict[str, Any]]], list[Curve]]
) -> list[Curve]:
    """``build`` of one efficiency file's rows (its curves), kept in the on-disk cache for a shipped file
    (DomainTables.file_derived, keyed by this module: the curves are its code's), so a warm start unpickles curves
    instead of reading rows and building them."""
    return tables.file_derived(name, "efficiency-curves", build, file_identity(Path(__file__)))


def _lazy_curves(tables: DomainTables) -> Callable[[str, str], list[Curve]]:
    """A loader of the rows of the ``efficiency_*_<trigger>_<engine>.yaml`` files; each must name its M (by_m)
    or MoE shape (by_shape) and that engine (a row without them would change lookups memoised before it loaded)."""

    def load(trigger: str, engine: str) -> list[Curve]:
        field_name = "m_tokens" if trigger == "by_m" else "moe_shape"

        def checked(rows: Sequence[dict[str, Any]]) -> list[Curve]:
            for r in rows:
                if not r.get(field_name) or r.get("engine") != engine:
                    raise DataError(
                        f"efficiency row {r.get('id')}: a row of an efficiency_*_{trigger}_{engine}.yaml "
                        f"file needs {field_name} and engine {engine}"
                    )
            return _used(rows)

        names = [n for n in tables.efficiency_files() if n.removesuffix(".yaml").endswith(f"_{trigger}_{engine}")]
        return [c for n in names for c in _file_curves(tables, n, checked)]

    return load


def table(tables: DomainTables) -> EfficiencyTable:
    """The efficiency table of a catalog's tables (a cluster's ``tables``), built once per tables object."""
    return tables.cached(EfficiencyTable) or tables.keep(
        EfficiencyTable(
            [c for n in efficiency_files(tables) if not _lazy(n) for c in _file_curves(tables, n, _used)],
            parts=parts_of(tables.accelerators()),
            lazy_loader=_lazy_curves(tables),
        )
    )
