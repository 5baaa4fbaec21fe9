"""Power, energy and electricity cost of a :class:`~aiinfra.costing.Usage`.

Power model (linear in utilisation u, an upper-bound style estimate):
  accelerator power  = count × TDP × u                                   (TDP from accelerators.yaml)
  host overhead      = count × (system max power − per-node accelerators × TDP) / per-node accelerators × u
                       (CPUs, memory, NICs, fans, PSU losses; from systems.yaml, e.g. DGX H100 10.2 kW max)
  IT power           = accelerator power + host overhead
  facility power     = IT power × PUE  (The Green Grid, "PUE: a comprehensive examination of the metric", 2012)
  energy             = facility power × duration; electricity cost = kWh × USD/kWh.
Idle power is not in the catalog, so power scales from zero: at low utilisation this underestimates.
Network switches and storage outside the node are not counted here (see ``aiinfra datacenter``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiinfra.costing import Usage
from aiinfra.costing.carbon import co2e_kg
from aiinfra.costing.prices import GridCarbon
from aiinfra.specs.hardware import AcceleratorSpec, SystemSpec
from aiinfra.units import HOUR_S, KWH_J, YEAR_S

HOURS_PER_YEAR = YEAR_S / HOUR_S
"""8,760 h: a 365-day year."""
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0
"""730 h: an average month of a 365-day year."""

__all__ = [
    "HOURS_PER_MONTH",
    "HOURS_PER_YEAR",
    "Energy",
    "PowerDraw",
    "annual_power_cost_usd",
    "energy",
    "power_draw",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class PowerDraw:
    """A job's electrical draw at its utilisation: its accelerators, the rest of its nodes, and the sum."""

    nodes: int
    """Nodes the job's accelerators occupy."""
    accelerator_power_w: float | None
    """None when the accelerator's TDP is not in the catalog."""
    host_overhead_power_w: float | None
    """None when the system's maximum power is not in the catalog."""
    it_power_w: float | None
    """None when neither TDP nor system power is known."""
    node_max_power_w: float | None
    """One node at full load (system max power, else accelerators' TDP only)."""
    notes: tuple[str, ...]
    """How each figure was derived and what is unknown, for the report."""


def power_draw(
    usage: Usage, accelerator: AcceleratorSpec, system: SystemSpec | None, node_power_w: float | None = None
) -> PowerDraw:
    """``node_power_w`` replaces the node's maximum power (e.g. a measured or typical draw); the accelerator/host
    split then keeps the proportions of the maximum."""
    p = _power_draw(usage, accelerator, system)
    if node_power_w is None or p.node_max_power_w is None:
        return p
    f = node_power_w / p.node_max_power_w
    return PowerDraw(
        nodes=p.nodes,
        accelerator_power_w=p.accelerator_power_w * f if p.accelerator_power_w is not None else None,
        host_overhead_power_w=p.host_overhead_power_w * f if p.host_overhead_power_w is not None else None,
        it_power_w=p.it_power_w * f if p.it_power_w is not None else None,
        node_max_power_w=node_power_w,
        notes=(
            *p.notes,
            f"node draw {node_power_w / 1e3:.2f} kW instead of the maximum {p.node_max_power_w / 1e3:.2f} kW",
        ),
    )


def _power_draw(usage: Usage, accelerator: AcceleratorSpec, system: SystemSpec | None) -> PowerDraw:
    n, u = usage.accelerator_count, usage.utilisation_frac
    per_node = system.accelerators_per_node if system is not None else accelerator.default_per_node or 1
    nodes = math.ceil(n / per_node)
    tdp = accelerator.tdp_w
    notes: list[str] = []
    acc_w = n * tdp * u if tdp is not None else None
    host_w: float | None = None
    node_max: float | None = None
    if system is not None and system.power_max_w is not None:
        node_max = system.power_max_w / system.nodes
        if tdp is not None:
            host_w = max(node_max - per_node * tdp, 0.0) / per_node * n * u
            notes.append(
                f"host overhead = ({system.id} maximum power {node_max / 1e3:.1f} kW per node − {per_node} × "
                f"{tdp:.0f} W TDP) / {per_node} per accelerator (maximum rating: an upper bound on draw)"
            )
        else:
            notes.append(f"{accelerator.id} TDP unknown: node power from {system.id} maximum power only")
    elif tdp is not None:
        node_max = per_node * tdp
        notes.append(
            "host/network/storage overhead unknown (no system maximum power in the catalog): accelerators' TDP only"
        )
    if acc_w is not None:
        it_w: float | None = acc_w + (host_w or 0.0)
    elif node_max is not None:
        it_w = node_max / per_node * n * u
    else:
        it_w = None
        notes.append(f"power unknown: neither {accelerator.id} TDP nor a system maximum power is in the catalog")
    if u < 1.0:
        notes.append(f"power scaled linearly to {u:.0%} of maximum (idle power unknown)")
    return PowerDraw(
        nodes=nodes,
        accelerator_power_w=acc_w,
        host_overhead_power_w=host_w,
        it_power_w=it_w,
        node_max_power_w=node_max,
        notes=tuple(notes),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Energy:
    """A job's facility energy over its duration, what the electricity costs and the CO2e it emits."""

    accelerator_power_w: float | None
    host_overhead_power_w: float | None
    it_power_w: float | None
    pue_ratio: float
    facility_power_w: float | None
    """IT power × PUE; None when the IT power is unknown."""
    duration_s: float
    energy_j: float | None
    """Facility energy over duration_s; None when the power is unknown."""
    energy_kwh: float | None
    usd_per_kwh: float | None
    """Electricity price used; None = not given."""
    electricity_cost_usd: float | None
    """None when the energy or the price per kWh is unknown."""
    g_co2e_per_kwh: float | None
    """Grid intensity of the carbon region; None = no region."""
    co2e_kg: float | None
    """Operational CO2e of the energy (None when the energy or the region is unknown)."""
    notes: tuple[str, ...]


def energy(
    usage: Usage,
    accelerator: AcceleratorSpec,
    system: SystemSpec | None,
    pue_ratio: float,
    usd_per_kwh: float | None = None,
    carbon_region: GridCarbon | None = None,
    node_power_w: float | None = None,
) -> Energy:
    """The facility energy of ``usage`` (IT draw × PUE × duration), its electricity cost at ``usd_per_kwh`` and its CO2e
    in ``carbon_region``; ``node_power_w`` replaces the node's maximum power (:func:`power_draw`)."""
    p = power_draw(usage, accelerator, system, node_power_w)
    fac_w = p.it_power_w * pue_ratio if p.it_power_w is not None else None
    e_j = fac_w * usage.duration_s if fac_w is not None else None
    kwh = e_j / KWH_J if e_j is not None else None
    g = carbon_region.g_co2e_per_kwh if carbon_region is not None else None
    return Energy(
        accelerator_power_w=p.accelerator_power_w,
        host_overhead_power_w=p.host_overhead_power_w,
        it_power_w=p.it_power_w,
        pue_ratio=pue_ratio,
        facility_power_w=fac_w,
        duration_s=usage.duration_s,
        energy_j=e_j,
        energy_kwh=kwh,
        usd_per_kwh=usd_per_kwh,
        electricity_cost_usd=kwh * usd_per_kwh if kwh is not None and usd_per_kwh is not None else None,
        g_co2e_per_kwh=g,
        co2e_kg=co2e_kg(kwh, g) if kwh is not None and g is not None else None,
        notes=p.notes,
    )


def annual_power_cost_usd(power_w: float, usd_per_kwh: float, pue_ratio: float = 1.0) -> float:
    """A constant draw for a 365-day year: kW × 8,760 h × PUE × USD/kWh."""
    return power_w / 1e3 * HOURS_PER_YEAR * pue_ratio * usd_per_kwh
