"""Rank enumerated plans: prune by memory first, time only the plans that fit, keep the fastest.

Pure function of (setup, cluster, enumeration): no printing, no mutation of its inputs. Plans are
processed in chunks so that memory stays bounded for spaces of tens of millions of candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aiinfra.analytic.training_memory import TrainSetup, memory_per_rank
from aiinfra.analytic.training_step import step_time
from aiinfra.search.plans import Enumeration
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.units import GB

SEARCH_CHUNK = 400_000


@dataclass
class Ranked:
    """The result of ranking a search's plans: the fastest that fit, and the rejections."""

    order: np.ndarray
    """Indices into ``Enumeration.plans``, fastest first (ties: least memory first)."""
    fitting: int
    """Plans that fit in accelerator memory."""
    rejected: dict[str, int] = field(default_factory=dict)
    """Structural rejections of the enumeration plus the memory rejections, by reason."""


def memory_reason(capacity_bytes: float) -> str:
    """The rejection reason of plans that do not fit ``capacity_bytes`` (a key of the rejected counts)."""
    return f"needs more than the {capacity_bytes / GB:.1f} GB of accelerator memory"


def rank_plans(setup: TrainSetup, cluster: ClusterSpec, enum: Enumeration, top_k: int) -> Ranked:
    """The ``top_k`` fastest plans that fit in memory (step time from analytic/training_step.py)."""
    rejected = dict(enum.rejected)
    plans = enum.plans
    cap = cluster.accelerator.memory_bytes
    best_idx: list[np.ndarray] = []
    best_time: list[np.ndarray] = []
    fitting = 0
    for start in range(0, len(plans), SEARCH_CHUNK):
        chunk = plans.take(np.arange(start, min(start + SEARCH_CHUNK, len(plans))))
        mem = memory_per_rank(setup, chunk)["total"]
        fit = mem <= cap
        n_over = int((~fit).sum())
        if n_over:
            key = memory_reason(cap)
            rejected[key] = rejected.get(key, 0) + n_over
        fitting += int(fit.sum())
        idx = np.nonzero(fit)[0]
        if len(idx) == 0:
            continue
        st = step_time(setup, cluster, chunk.take(idx)).step_time_s
        top = np.lexsort((mem[idx], st))[:top_k]  # fastest, then least memory
        best_idx.append(idx[top] + start)
        best_time.append(st[top])
    if not best_idx:
        return Ranked(order=np.zeros(0, dtype=np.int64), fitting=0, rejected=rejected)
    all_idx = np.concatenate(best_idx)
    all_t = np.concatenate(best_time)
    order = all_idx[np.argsort(all_t, kind="stable")[:top_k]]
    return Ranked(order=order, fitting=fitting, rejected=rejected)
