"""The plan enumeration (search/plans.py) against a brute force over every combination: the same plans in the same
order, and every rejected combination counted under the first rule it breaks, in the order the rules are checked
(the enumeration checks the expanded dimensions' rules on the base layouts' grid, not on every combination)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from aiinfra.search.plans import MAX_MICROBATCH_SEQS, VP_OPTIONS, divisors, enumerate_plans
from aiinfra.specs.model import ModelArch
from aiinfra.specs.parallelism import Recompute, Sharding


def _moe(layers: int, heads: int, kv_heads: int, experts: int) -> ModelArch:
    return ModelArch(
        id="t",
        num_layers=layers,
        hidden_size=heads * 64,
        num_heads=heads,
        num_kv_heads=kv_heads,
        ffn_hidden_size=heads * 256,
        vocab_size=1000,
        num_experts=experts,
        experts_per_token=min(2, experts),
        moe_ffn_hidden_size=heads * 64,
    )


def _first_broken(m: ModelArch, count: int, gbs: int, seq: int, c: tuple[int, ...]) -> str | None:
    """The first rule (module docstring of search/plans.py, in the order the enumeration checks them) that the
    combination (tp, pp, cp, ep, vp, mb, sharding code) breaks."""
    tp, pp, cp, ep, vp, mb, sharding = c
    if count % (tp * pp * cp):
        return "count"
    if m.num_heads % tp or m.kv_heads % tp:
        return "heads"
    per_stage = math.ceil(m.num_layers / pp)
    if pp > m.num_layers or (m.num_layers % pp and pp > 2 and m.num_layers - (pp - 2) * per_stage < 2):
        return "stages"
    if cp > 1 and seq % (2 * cp):
        return "cp"
    dp = count // (tp * pp * cp)
    if gbs % dp:
        return "dp"
    if (dp * tp) % ep:
        return "ep"
    if (gbs // dp) % mb:
        return "mb"
    layers_equal = m.num_layers % pp == 0
    micro = (gbs // dp) // mb
    if vp > 1 and (pp == 1 or not layers_equal or (m.num_layers // pp) % vp or micro % pp):
        return "vp"
    if sharding == Sharding.ZERO3 and pp > 1:
        return "zero3"
    return None


_REASON = {
    "count": "tp·pp·cp does not divide",
    "heads": "tp does not divide num_heads",
    "stages": "pp leaves no layer",
    "cp": "2·cp does not divide",
    "dp": "dp does not divide",
    "ep": "ep does not divide",
    "mb": "micro-batch does not divide",
    "vp": "interleaving needs",
    "zero3": "ZeRO-3",
}


@pytest.mark.parametrize(
    ("model", "count", "gbs", "seq"),
    [(_moe(6, 8, 4, 4), 8, 16, 4096), (_moe(5, 4, 2, 2), 12, 24, 2048), (_moe(8, 8, 8, 8), 16, 32, 1024)],
)
def test_enumeration_equals_the_brute_force(model: ModelArch, count: int, gbs: int, seq: int) -> None:
    divs = divisors(count)
    mbs = [d for d in divisors(gbs) if d <= MAX_MICROBATCH_SEQS]
    shardings = [Sharding.of(s) for s in ("none", "zero1", "zero2", "zero3", "fsdp")]
    recomputes = list(Recompute)
    want_plans = []
    want_rejected: Counter[str] = Counter()
    # nesting order of the enumeration: base (tp, pp, cp) outermost, then ep, vp, micro-batch, sharding, recompute
    for tp, pp, cp in itertools.product(divs, divs, divs):
        rest = itertools.product(divisors(model.num_experts), VP_OPTIONS, mbs, shardings, recomputes)
        for ep, vp, mb, sh, rc in rest:
            broken = _first_broken(model, count, gbs, seq, (tp, pp, cp, ep, vp, mb, sh))
            if broken is None:
                want_plans.append((tp, pp, count // (tp * pp * cp), cp, ep, vp, mb, int(sh), int(rc)))
            else:
                want_rejected[broken] += 1
    en = enumerate_plans(model, count, gbs, seq)
    p = en.plans
    fields = ("tp", "pp", "dp", "cp", "ep", "vp", "mb", "sharding", "recompute")
    got = list(zip(*(getattr(p, f).tolist() for f in fields), strict=True))
    assert got == want_plans and len(got) > 0
    assert p.sp.tolist() == [t > 1 for t in p.tp.tolist()]
    got_rejected = {next(k for k, v in _REASON.items() if v in reason): n for reason, n in en.rejected.items()}
    assert got_rejected == dict(want_rejected)
    assert en.candidates == len(want_plans) + sum(want_rejected.values())
