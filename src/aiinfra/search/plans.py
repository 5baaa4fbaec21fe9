"""Enumerate every training plan for N accelerators, vectorised, with a reason for each rejection.

Constraints (Megatron-Core's own checks): tp divides the attention heads and the KV heads; pp divides
the layers; dp·tp·pp·cp = N; cp divides seq_len/2 (load-balanced causal split); ep divides the
experts and dp·tp; the micro-batch divides the per-replica batch; interleaving (vp > 1) needs pp > 1,
vp dividing layers/pp and the micro-batch count divisible by pp. Plans are pruned by memory first,
then timed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aiinfra.analytic.training_memory import RECOMPUTE_CODES, SHARDING_CODES, PlanArrays, TrainSetup
from aiinfra.specs.model import ModelArch
from aiinfra.specs.parallelism import Recompute, Sharding

VP_OPTIONS = (1, 2, 3, 4, 6, 8)
MAX_MICROBATCH_SEQS = 64


def divisors(n: int) -> list[int]:
    """Every positive divisor of ``n``, ascending."""
    return [d for d in range(1, n + 1) if n % d == 0]


@dataclass
class Enumeration:
    """Every training layout of a search that passes the structural rules, with the count of those rejected and why."""

    plans: PlanArrays
    """Plans satisfying every structural constraint."""
    candidates: int
    """Every combination considered."""
    rejected: dict[str, int] = field(default_factory=dict)
    """Candidates rejected, by reason."""


def _plans_from_columns(cols: dict[str, np.ndarray]) -> PlanArrays:
    return PlanArrays(
        tp=cols["tp"],
        pp=cols["pp"],
        dp=cols["dp"],
        cp=cols["cp"],
        ep=cols["ep"],
        vp=cols["vp"],
        mb=cols["mb"],
        sharding=cols["sharding"],
        recompute=cols["recompute"],
        sp=cols["tp"] > 1,
    )


def uneven_stages_impossible(num_layers: int, pp: Any) -> Any:
    """True where ``pp`` stages cannot hold ``num_layers`` layers as ⌈L/pp⌉ per middle stage and at least one in
    each of the first and last (:func:`layout_rules`); plain ints or numpy arrays."""
    per_stage = -(-num_layers // pp)
    return (pp > num_layers) | ((num_layers % pp != 0) & (pp > 2) & (num_layers - (pp - 2) * per_stage < 2))


def layout_rules(model: ModelArch, seq_len: int, tp: Any, pp: Any, cp: Any) -> list[tuple[Any, str]]:
    """The structural rules every training layout obeys, searched or given: (violated?, reason) per rule, on
    plain ints or numpy arrays of candidates. Megatron-LM splits attention heads and KV groups across tp ranks
    and layers across pp stages; context parallelism splits the sequence into 2·cp load-balanced chunks
    (Megatron-Core's causal CP). When pp does not divide the layers, the middle stages hold ⌈L/pp⌉ layers and the
    first and last stage the rest, at least one each (Megatron-Core's ``--decoder-first-pipeline-num-layers`` /
    ``--decoder-last-pipeline-num-layers``; Llama 3 405B ran 126 layers on 16 stages with one layer fewer on the
    first and last, Dubey et al. 2024, arXiv 2407.21783 §3.3.2); the step and memory models charge every stage the
    largest stage's ⌈L/pp⌉ layers."""
    return [
        (
            (model.num_heads % tp != 0) | (model.kv_heads % tp != 0),
            f"tp does not divide num_heads={model.num_heads} and num_kv_heads={model.kv_heads}",
        ),
        (
            uneven_stages_impossible(model.num_layers, pp),
            f"pp leaves no layer for the first or last stage of num_layers={model.num_layers}",
        ),
        ((cp > 1) & (seq_len % (2 * cp) != 0), f"2·cp does not divide seq_len={seq_len}"),
    ]


def enumerate_plans(
    model: ModelArch,
    count: int,
    global_batch_seqs: int,
    seq_len: int,
    shardings: tuple[str, ...] = SHARDING_CODES,
    recomputes: tuple[str, ...] = RECOMPUTE_CODES,
) -> Enumeration:
    """Every combination of tp, pp, cp, dp, ep, vp, micro-batch, sharding and recompute for ``count`` accelerators, as
    arrays, less those breaking a rule of the module docstring (counted by reason)."""
    rejected: dict[str, int] = {}
    divs = divisors(count)
    ep_opts = divisors(model.num_experts) if model.is_moe else [1]
    mb_opts = [d for d in divisors(global_batch_seqs) if d <= MAX_MICROBATCH_SEQS]
    per_base = len(ep_opts) * len(VP_OPTIONS) * len(mb_opts) * len(shardings) * len(recomputes)
    tp, pp, cp = (np.array(x, dtype=np.int64) for x in zip(*itertools.product(divs, divs, divs), strict=True))
    candidates = len(tp) * per_base

    def reject(mask: np.ndarray, reason: str, weight: int | np.ndarray) -> np.ndarray:
        n = int(np.sum(np.where(mask, weight, 0)))
        if n:
            rejected[reason] = rejected.get(reason, 0) + n
        return ~mask

    keep = reject(count % (tp * pp * cp) != 0, "tp·pp·cp does not divide the accelerator count", per_base)
    for broken, reason in layout_rules(model, seq_len, tp, pp, cp):
        keep &= reject(keep & broken, reason, per_base)
    tp, pp, cp = tp[keep], pp[keep], cp[keep]
    dp = count // (tp * pp * cp)
    keep = reject(global_batch_seqs % dp != 0, f"dp does not divide global_batch_seqs={global_batch_seqs}", per_base)
    tp, pp, cp, dp = tp[keep], pp[keep], cp[keep], dp[keep]
    # expand the remaining dimensions
    n_base = len(tp)
    grid = list(itertools.product(ep_opts, VP_OPTIONS, mb_opts, range(len(shardings)), range(len(recomputes))))
    n_rest = len(grid)
    rest = np.array(grid, dtype=np.int64).reshape(n_rest, 5)
    idx = np.repeat(np.arange(n_base), n_rest)
    r = np.tile(np.arange(n_rest), n_base)
    cols = {
        "tp": tp[idx],
        "pp": pp[idx],
        "cp": cp[idx],
        "dp": dp[idx],
        "ep": rest[r, 0],
        "vp": rest[r, 1],
        "mb": rest[r, 2],
        "sharding": np.array([Sharding.of(s) for s in shardings], dtype=np.int64)[rest[r, 3]],
        "recompute": np.array([Recompute.of(s) for s in recomputes], dtype=np.int64)[rest[r, 4]],
    }
    ok = reject((cols["dp"] * cols["tp"]) % cols["ep"] != 0, "ep does not divide dp·tp", 1)
    per_replica = global_batch_seqs // cols["dp"]
    ok &= reject(ok & (per_replica % cols["mb"] != 0), "micro-batch does not divide the per-replica batch", 1)
    uneven = model.num_layers % cols["pp"] != 0
    layers_stage = model.num_layers // cols["pp"]
    n_micro = per_replica // cols["mb"]
    bad_vp = (cols["vp"] > 1) & (
        (cols["pp"] == 1) | uneven | (layers_stage % cols["vp"] != 0) | (n_micro % cols["pp"] != 0)
    )
    reason_vp = "interleaving needs pp > 1, equal stages, vp | layers/pp and micro-batches divisible by pp"
    ok &= reject(ok & bad_vp, reason_vp, 1)
    ok &= reject(ok & (cols["sharding"] == 3) & (cols["pp"] > 1), "DeepSpeed ZeRO-3 does not support pp > 1", 1)
    plans = _plans_from_columns({k: v[ok] for k, v in cols.items()})
    return Enumeration(plans=plans, candidates=candidates, rejected=rejected)


def single_plan(model: ModelArch, setup: TrainSetup, **plan: int | str | bool) -> PlanArrays:
    """One plan as arrays of length 1."""
    del model, setup
    cols = {k: np.array([plan[k]], dtype=np.int64) for k in ("tp", "pp", "dp", "cp", "ep", "vp", "mb")}
    cols["sharding"] = np.array([Sharding.of(str(plan["sharding"]))], dtype=np.int64)
    cols["recompute"] = np.array([Recompute.of(str(plan["recompute"]))], dtype=np.int64)
    out = _plans_from_columns(cols)
    sp = np.array([bool(plan.get("sp", True)) and int(plan["tp"]) > 1])
    return PlanArrays(out.tp, out.pp, out.dp, out.cp, out.ep, out.vp, out.mb, out.sharding, out.recompute, sp)
