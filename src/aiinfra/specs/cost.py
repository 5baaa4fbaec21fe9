"""Scenario sections for cost, datacenter and TCO (validated strictly by the commands that use them)."""

from __future__ import annotations

from dataclasses import dataclass

import pydantic

from aiinfra.specs.common import STRICT

PosFloat = pydantic.PositiveFloat
PosInt = pydantic.PositiveInt
Frac = pydantic.confloat(gt=0.0, le=1.0)


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    __pydantic_config__ = STRICT

    duration_s: PosFloat | None = None
    """How long the accelerators run; None = the training plan's time-to-train."""
    utilisation_frac: Frac = 1.0  # type: ignore[valid-type]
    """Average accelerator power draw as a fraction of TDP."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CostInput:
    __pydantic_config__ = STRICT

    usage: Usage | None = None
    pue: PosFloat | None = None
    """Facility power usage effectiveness; None = catalog row pue-uptime-global-2023."""
    electricity_usd_per_kwh: PosFloat | None = None
    """None = no on-prem energy price (shown as unknown)."""
    carbon_region: str | None = None
    """grid_carbon.csv id, e.g. gcp-us-central1-2024."""
    storage_usd_per_gb_month: PosFloat | None = None
    dataset_bytes: PosFloat | None = None
    checkpoint_bytes: PosFloat | None = None
    egress_usd_per_gb: PosFloat | None = None
    egress_bytes: PosFloat | None = None
    checkpoint_write_s: PosFloat | None = None
    """Time to write one checkpoint (for spot preemption losses)."""
    restart_s: PosFloat | None = None
    spot_interruptions_per_hour: PosFloat | None = None
    """Expected spot preemptions per instance-hour (provider-specific; user-given)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DatacenterInput:
    __pydantic_config__ = STRICT

    rack_power_limit_kw: PosFloat | None = None
    """kW per rack; None = catalog row rack-air-cooling-limit."""
    switch_radix: PosInt | None = None
    """Ports per switch at the NIC speed; None = catalog row switch-quantum2-qm9700-radix."""
    oversubscription: PosFloat = 1.0
    """Leaf down:up bandwidth ratio (1 = non-blocking)."""
    pue: PosFloat | None = None
    checkpoint_write_s: PosFloat | None = None
    """Target time to write one full checkpoint (sets the storage write bandwidth)."""
    bytes_per_token: PosFloat = 4.0
    """Training-data bytes read per token (4 = uint32 token ids; 2 for vocabularies under 65,536)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TcoInput:
    __pydantic_config__ = STRICT

    years: PosInt = 5
    utilisation_frac: Frac = 1.0  # type: ignore[valid-type]
    system_price_usd: PosFloat | None = None
    """Per node; None = the catalog system's published price (unknown for most systems)."""
    network_capex_frac: pydantic.NonNegativeFloat = 0.0
    """Network + storage capex as a fraction of the systems' capex (user estimate; 0 = not counted)."""
    electricity_usd_per_kwh: PosFloat | None = None
    colocation_usd_per_kw_month: PosFloat | None = None
    staff_usd_per_year: pydantic.NonNegativeFloat = 0.0
    maintenance_frac_per_year: pydantic.NonNegativeFloat = 0.0
    pue: PosFloat | None = None
