"""Power, energy, electricity cost and carbon of running accelerators.

IT power = accelerators × TDP × utilisation + per-node overhead (the system's maximum input power minus
its accelerators' TDP: CPUs, memory, NICs, fans, PSU losses) × utilisation; facility power = IT × PUE
(The Green Grid, "PUE: a comprehensive examination of the metric", 2012). Energy = power × time;
CO2 = kWh × grid intensity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiinfra.specs.hardware import ClusterSpec, SystemSpec
from aiinfra.units import HOUR_S, KWH_J


@dataclass(frozen=True, kw_only=True, slots=True)
class Energy:
    accelerator_power_w: float
    host_overhead_power_w: float | None
    """None when the system's maximum power is not in the catalog."""
    it_power_w: float
    pue_ratio: float
    facility_power_w: float
    duration_s: float
    energy_j: float
    energy_kwh: float
    electricity_cost_usd: float | None
    co2e_kg: float | None
    notes: tuple[str, ...]


def energy(
    cluster: ClusterSpec,
    system: SystemSpec | None,
    duration_s: float,
    utilisation_frac: float,
    pue_ratio: float,
    usd_per_kwh: float | None = None,
    g_co2e_per_kwh: float | None = None,
) -> Energy:
    acc = cluster.accelerator
    notes: list[str] = []
    if acc.tdp_w is None:
        raise ValueError(f"{acc.id} has no TDP in the catalog")
    acc_w = cluster.count * acc.tdp_w * utilisation_frac
    host_w: float | None = None
    if system is not None and system.power_max_w is not None:
        per_node = system.power_max_w - system.accelerators_per_node * acc.tdp_w
        host_w = max(per_node, 0.0) * math.ceil(cluster.count / system.accelerators_per_node) * utilisation_frac
        notes.append(f"host overhead from {system.id} maximum power {system.power_max_w / 1e3:.1f} kW (an upper bound)")
    else:
        notes.append("host/network overhead unknown (no system power in the catalog): accelerators only")
    it_w = acc_w + (host_w or 0.0)
    fac_w = it_w * pue_ratio
    e_j = fac_w * duration_s
    kwh = e_j / KWH_J
    return Energy(
        accelerator_power_w=acc_w, host_overhead_power_w=host_w, it_power_w=it_w, pue_ratio=pue_ratio,
        facility_power_w=fac_w, duration_s=duration_s, energy_j=e_j, energy_kwh=kwh,
        electricity_cost_usd=kwh * usd_per_kwh if usd_per_kwh is not None else None,
        co2e_kg=kwh * g_co2e_per_kwh / 1e3 if g_co2e_per_kwh is not None else None, notes=tuple(notes),
    )  # fmt: skip


def annual_power_cost_usd(power_w: float, usd_per_kwh: float, pue_ratio: float = 1.0) -> float:
    """A constant draw for a 365-day year: W × 8,760 h × PUE × $/kWh."""
    return power_w / 1e3 * 8760.0 * pue_ratio * usd_per_kwh


def young_daly_interval_s(checkpoint_write_s: float, mtbf_s: float) -> float:
    """Optimal checkpoint interval √(2·δ·M) (Young 1974; Daly 2006 first-order form)."""
    return math.sqrt(2.0 * checkpoint_write_s * mtbf_s)


def preemption_waste_frac(checkpoint_write_s: float, mtbf_s: float, restart_s: float) -> float:
    """Expected lost fraction of time: checkpoint writes δ/τ, half an interval of recomputation per failure
    τ/(2M), and the restart R/M (Daly 2006, first order)."""
    tau = young_daly_interval_s(checkpoint_write_s, mtbf_s)
    return min(checkpoint_write_s / tau + tau / (2.0 * mtbf_s) + restart_s / mtbf_s, 0.99)


HOURS_PER_MONTH = 730.0
SECONDS_PER_HOUR = HOUR_S
