"""Enumerate every training plan for N accelerators, vectorised, with a reason for each rejection.

Constraints (Megatron-Core's own checks): tp divides the attention heads and the KV heads; pp divides
the layers; dp·tp·pp·cp = N; cp divides seq_len/2 (load-balanced causal split); ep divides the
experts and dp·tp; the micro-batch divides the per-replica batch; interleaving (vp > 1) needs pp > 1,
vp dividing layers/pp and the micro-batch count divisible by pp. Plans are pruned by memory first,
then timed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
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
    plans = _expanded(model, global_batch_seqs, (tp, pp, cp, dp), ep_opts, mb_opts, shardings, recomputes, reject)
    return Enumeration(plans=plans, candidates=candidates, rejected=rejected)


def _expanded(
    model: ModelArch,
    global_batch_seqs: int,
    base: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    ep_opts: list[int],
    mb_opts: list[int],
    shardings: tuple[str, ...],
    recomputes: tuple[str, ...],
    reject: Callable[[np.ndarray, str, int], np.ndarray],
) -> PlanArrays:
    """The plans of the base layouts ``base`` = (tp, pp, cp, dp) times every (ep, vp, micro-batch, sharding,
    recompute), in that nesting order (recompute innermost), less those breaking the rules that involve the expanded
    dimensions (each rejection counted by ``reject`` with its number of full combinations, in the order checked).

    Each rule depends on the base and at most two expanded dimensions (ep: dp·tp; micro-batch: the per-replica
    batch; interleaving: vp and the micro-batch count; ZeRO-3: the sharding), so the rules are checked on the
    grid of base × ep × vp × micro-batch × sharding (recompute takes any value) and only the surviving plans are
    built: the grid of every combination is ~3.7× larger than the plans kept for the 70B example."""
    tp, pp, cp, dp = base
    ep = np.array(ep_opts, dtype=np.int64)
    vp = np.array(VP_OPTIONS, dtype=np.int64)
    mb = np.array(mb_opts, dtype=np.int64)
    sh = np.array([Sharding.of(s) for s in shardings], dtype=np.int64)
    rc = np.array([Recompute.of(s) for s in recomputes], dtype=np.int64)
    n_ep, n_vp, n_mb, n_sh, n_rc = len(ep), len(vp), len(mb), len(sh), len(rc)
    # axes: base, ep, vp, mb, sharding
    b = (slice(None), None, None, None, None)
    per_replica = global_batch_seqs // dp
    bad_ep = (dp * tp)[b] % ep[None, :, None, None, None] != 0
    ok = reject(bad_ep, "ep does not divide dp·tp", n_vp * n_mb * n_sh * n_rc)
    bad_mb = per_replica[b] % mb[None, None, None, :, None] != 0
    ok = ok & reject(ok & bad_mb, "micro-batch does not divide the per-replica batch", n_vp * n_sh * n_rc)
    vp_g = vp[None, None, :, None, None]
    bad_vp = (vp_g > 1) & (
        (pp[b] == 1)
        | (model.num_layers % pp[b] != 0)
        | ((model.num_layers // pp[b]) % vp_g != 0)
        | ((per_replica[b] // mb[None, None, None, :, None]) % pp[b] != 0)
    )
    reason_vp = "interleaving needs pp > 1, equal stages, vp | layers/pp and micro-batches divisible by pp"
    ok = ok & reject(ok & bad_vp, reason_vp, n_sh * n_rc)
    bad_zero3 = (sh[None, None, None, None, :] == 3) & (pp[b] > 1)
    ok = ok & reject(ok & bad_zero3, "DeepSpeed ZeRO-3 does not support pp > 1", n_rc)
    full = np.broadcast_to(ok, (len(tp), n_ep, n_vp, n_mb, n_sh))
    i_b, i_ep, i_vp, i_mb, i_sh = (np.repeat(i, n_rc) for i in np.nonzero(full))
    i_rc = np.tile(np.arange(n_rc), len(i_b) // n_rc)
    cols = {
        "tp": tp[i_b],
        "pp": pp[i_b],
        "cp": cp[i_b],
        "dp": dp[i_b],
        "ep": ep[i_ep],
        "vp": vp[i_vp],
        "mb": mb[i_mb],
        "sharding": sh[i_sh],
        "recompute": rc[i_rc],
    }
    return _plans_from_columns(cols)


def single_plan(model: ModelArch, setup: TrainSetup, **plan: int | str | bool) -> PlanArrays:
    """One plan as arrays of length 1."""
    del model, setup
    cols = {k: np.array([plan[k]], dtype=np.int64) for k in ("tp", "pp", "dp", "cp", "ep", "vp", "mb")}
    cols["sharding"] = np.array([Sharding.of(str(plan["sharding"]))], dtype=np.int64)
    cols["recompute"] = np.array([Recompute.of(str(plan["recompute"]))], dtype=np.int64)
    out = _plans_from_columns(cols)
    sp = np.array([bool(plan.get("sp", True)) and int(plan["tp"]) > 1])
    return PlanArrays(out.tp, out.pp, out.dp, out.cp, out.ep, out.vp, out.mb, out.sharding, out.recompute, sp)
