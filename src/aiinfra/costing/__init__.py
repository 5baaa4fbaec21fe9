"""Prices (dated rows), energy and carbon, cloud bills with spot preemption, datacenter sizing (racks, cooling,
fabric, storage bandwidth) and on-prem vs cloud TCO.

Every function here takes plain values or a :class:`Usage`; none reads a scenario. Prices come from
``catalog/data/prices`` and ``facility.yaml`` through :mod:`aiinfra.costing.prices` with their read date.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """What is being paid for: accelerators held for a time at an average utilisation."""

    accelerator_id: str
    accelerator_count: int
    duration_s: float
    """Wall-clock seconds the accelerators are held."""
    utilisation_frac: float = 1.0
    """Average power draw as a fraction of maximum."""
    tokens: float | None = None
    """Tokens processed in ``duration_s`` (for USD per million tokens)."""
    checkpoint_bytes: float | None = None
    """One checkpoint (weights + optimizer state)."""
    duration_source: str = ""
    """Where ``duration_s`` came from (scenario key or training plan)."""
