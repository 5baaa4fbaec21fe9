"""Per-operation roofline (Williams, Waterman & Patterson 2009, CACM "Roofline").

time = max(FLOP / (dense peak · achieved compute fraction), bytes / (memory bandwidth · achieved
bandwidth fraction)); the fractions come from measured efficiency curves keyed on the operation's
size (analytic/efficiency.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiinfra.analytic.efficiency import table
from aiinfra.specs.hardware import AcceleratorSpec


@dataclass(frozen=True, slots=True)
class OpTime:
    time_s: float
    compute_s: float
    memory_s: float
    bound: str
    """compute | memory"""
    compute_efficiency_source: str
    memory_efficiency_source: str


def op_time(
    acc: AcceleratorSpec, dtype: str, flop: float, bytes_moved: float, kind: str = "gemm", flop_per_op: float = 0.0
) -> OpTime:
    """Time of ``flop`` FLOPs moving ``bytes_moved`` bytes of memory.

    ``flop_per_op`` is the size of one kernel (the efficiency curve's key); by default ``flop``.
    """
    peak = acc.peak_flop_per_s(dtype)
    eff_c = table().lookup(kind, acc.id, flop_per_op or flop, dtype=dtype)
    eff_m = table().lookup("memory", acc.id, bytes_moved)
    compute_s = flop / (peak * eff_c.frac) if flop > 0 else 0.0
    memory_s = bytes_moved / (acc.memory_bw_bytes_per_s * eff_m.frac) if bytes_moved > 0 else 0.0
    return OpTime(
        time_s=max(compute_s, memory_s),
        compute_s=compute_s,
        memory_s=memory_s,
        bound="compute" if compute_s >= memory_s else "memory",
        compute_efficiency_source=eff_c.source,
        memory_efficiency_source=eff_m.source,
    )
