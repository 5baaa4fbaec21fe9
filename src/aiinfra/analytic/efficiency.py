"""Achieved-efficiency curves from public measurements (catalog/data/efficiency.yaml).

A curve maps an operation's size (GEMM FLOPs, bytes moved, message bytes) to the fraction of the
accelerator's dense peak (or of one-way link bandwidth) that published measurements achieved.
Interpolation is linear in log10(size), clamped at the measured ends.

When no curve covers an accelerator, the lookup borrows the curve of the same kind and dtype
measured on the most similar accelerator (same vendor first) and says so; with no curve at all it
returns 1.0 — the ideal roofline, an upper bound — labelled ``roofline (no efficiency data)``.

Attention curves may name the head dimension they were measured at (``head_dim``): a lookup that gives
one prefers, among curves of the same accelerator match, the curve whose head dimension is nearest on a
log2 scale (FlashAttention-2 paper Fig. 4: head dim 64 runs 10-20 % slower than 128 on A100). They may
also name the kernel family (``kernel``: fa2, fa3); a lookup that asks for one keeps only those curves when
any exists (FlashAttention-2 on H100 runs at about half FlashAttention-3's speed).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import yaml

from aiinfra.catalog import data_path
from aiinfra.errors import DataError

NO_DATA = "roofline (no efficiency data)"


@dataclass(frozen=True, slots=True)
class Lookup:
    """An efficiency fraction and where it came from."""

    frac: float
    """Achieved fraction of peak (compute) or of one-way bandwidth (memory, links)."""
    source: str
    """efficiency.yaml row id, 'borrowed:<row id>', or NO_DATA."""


@dataclass(frozen=True, slots=True)
class Curve:
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

    def at(self, x: float) -> float:
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
        lx = np.log10(np.maximum(np.asarray(x, dtype=float), 1e-30))
        out: np.ndarray = np.interp(lx, np.asarray(self.log_x), np.asarray(self.y))
        return out


def _vendor(acc_id: str) -> str:
    return acc_id.split("-", 1)[0]


def _family(acc_id: str) -> str:
    parts = acc_id.split("-")
    return "-".join(parts[:2])


@dataclass
class EfficiencyTable:
    curves: list[Curve] = field(default_factory=list)
    _memo: dict[
        tuple[str, str, str | None, int | None, str | None, int | None, str | None], tuple[Curve, bool] | None
    ] = field(default_factory=dict, repr=False)

    def _match(
        self,
        kind: str,
        acc_id: str,
        dtype: str | None,
        n_ranks: int | None,
        tier: str | None,
        head_dim: int | None = None,
        kernel: str | None = None,
    ) -> tuple[Curve, bool] | None:
        key = (kind, acc_id, dtype, n_ranks, tier, head_dim, kernel)
        if key not in self._memo:
            self._memo[key] = self._select(kind, acc_id, dtype, n_ranks, tier, head_dim, kernel)
        return self._memo[key]

    def _select(
        self,
        kind: str,
        acc_id: str,
        dtype: str | None,
        n_ranks: int | None,
        tier: str | None,
        head_dim: int | None = None,
        kernel: str | None = None,
    ) -> tuple[Curve, bool] | None:
        def ok(c: Curve) -> bool:
            if c.kind != kind:
                return False
            if dtype is not None and c.dtype is not None and c.dtype != _dtype_family(dtype):
                return False
            return not (tier is not None and c.tier is not None and c.tier != tier)

        cands = [c for c in self.curves if ok(c)]
        if not cands:
            return None
        if kernel is not None and any(c.kernel == kernel for c in cands):
            cands = [c for c in cands if c.kernel == kernel]

        def rank_key(c: Curve) -> tuple[int, int, float]:
            if acc_id in c.accelerators:
                acc_score = 0
            elif any(_family(a) == _family(acc_id) for a in c.accelerators):
                acc_score = 1
            elif any(_vendor(a) == _vendor(acc_id) for a in c.accelerators):
                acc_score = 2
            else:
                acc_score = 3
            rank_score = abs((c.n_ranks or 0) - (n_ranks or 0)) if n_ranks is not None else 0
            hd_score = abs(math.log2(c.head_dim / head_dim)) if (head_dim and c.head_dim) else 0.0
            return acc_score, rank_score, hd_score

        best = min(cands, key=rank_key)
        return best, acc_id not in best.accelerators

    def curve(
        self,
        kind: str,
        acc_id: str,
        dtype: str | None = None,
        n_ranks: int | None = None,
        tier: str | None = None,
        head_dim: int | None = None,
        kernel: str | None = None,
    ) -> tuple[Curve | None, str]:
        """The curve a lookup would use and its source label (None, NO_DATA when there is none)."""
        sel = self._match(kind, acc_id, dtype, n_ranks, tier, head_dim, kernel)
        if sel is None:
            return None, NO_DATA
        curve, borrowed = sel
        return curve, ("borrowed:" if borrowed else "") + curve.id

    def lookup(
        self,
        kind: str,
        acc_id: str,
        x: float,
        dtype: str | None = None,
        n_ranks: int | None = None,
        tier: str | None = None,
    ) -> Lookup:
        sel = self._match(kind, acc_id, dtype, n_ranks, tier)
        if sel is None:
            return Lookup(1.0, NO_DATA)
        curve, borrowed = sel
        return Lookup(curve.at(x), ("borrowed:" if borrowed else "") + curve.id)


def _dtype_family(dtype: str) -> str:
    """fp16 and bf16 run on the same tensor-core paths at the same peak; so do the fp8 variants."""
    return {"fp16": "bf16", "mxfp8": "fp8", "nvfp4": "fp4"}.get(dtype, dtype)


def _curve(row: dict[str, Any]) -> Curve:
    pts = sorted((float(x), float(y)) for x, y in row["points"])
    if not pts or any(x <= 0 or not (0 < y <= 1.0) for x, y in pts):
        raise DataError(f"efficiency.yaml row {row.get('id')}: points must have x > 0 and 0 < y <= 1")
    dtype = row.get("dtype")
    return Curve(
        id=str(row["id"]),
        kind=str(row["kind"]),
        accelerators=tuple(row.get("accelerators") or ()),
        dtype=_dtype_family(str(dtype)) if dtype else None,
        n_ranks=int(row["n_ranks"]) if row.get("n_ranks") else None,
        tier=row.get("tier"),
        log_x=tuple(math.log10(x) for x, _ in pts),
        y=tuple(y for _, y in pts),
        provenance=str(row.get("provenance", "measured")),
        head_dim=int(row["head_dim"]) if row.get("head_dim") else None,
        kernel=str(row["kernel"]) if row.get("kernel") else None,
    )


@cache
def table() -> EfficiencyTable:
    path = data_path("efficiency.yaml")
    if not path.exists():
        return EfficiencyTable()
    rows = yaml.safe_load(path.read_text()) or []
    return EfficiencyTable([_curve(r) for r in rows if r.get("points")])
