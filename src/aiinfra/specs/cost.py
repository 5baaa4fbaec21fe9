"""Scenario sections ``cost:``, ``datacenter:`` and ``tco:`` (validated strictly by the commands that use them).

Every price the catalog does not hold (storage, egress, networking, monitoring, staff ...) is a user input here;
absent means unknown, and the output says so instead of inventing a default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from aiinfra.specs.bounds import (
    MAX_BYTES_PER_TOKEN,
    MAX_INTERRUPTIONS_PER_HOUR,
    MAX_MONTHS,
    MAX_POWER_W,
    MAX_YEARS,
    Accelerators,
    Bytes,
    BytesPositive,
    Count,
    Fraction,
    FractionOrZero,
    InRange,
    Pue,
    Ratio,
    Seconds,
    SecondsOrZero,
    Tokens,
    Usd,
    UsdPositive,
    Watts,
)
from aiinfra.specs.common import STRICT

Pricing = Literal["on-demand", "spot", "reserved-1y", "reserved-3y"]


@dataclass(frozen=True, kw_only=True, slots=True)
class UsageInput:
    """``cost.usage``: how long and how hard the accelerators run (overrides the training plan)."""

    __pydantic_config__ = STRICT

    duration_s: Seconds | None = None
    """Wall-clock seconds the accelerators are held; None = the training plan's time-to-train."""
    utilisation_frac: Fraction = 1.0
    """Average power draw as a fraction of maximum (1 = every accelerator at TDP, every node at its max power)."""
    accelerators: Accelerators | None = None
    """Accelerators held; None = hardware.count."""
    tokens: Tokens | None = None
    """Tokens processed (trained or generated) in the period, for USD per million tokens."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SpotInput:
    """``cost.spot``: preemption model for spot capacity (no provider publishes these rates; give your own)."""

    __pydantic_config__ = STRICT

    interruptions_per_instance_per_hour: Annotated[float, InRange(0, MAX_INTERRUPTIONS_PER_HOUR, lo_open=True)]
    """Expected preemptions per instance-hour (from your own logs or the provider's advisor)."""
    checkpoint_write_s: Seconds
    """Seconds to write one checkpoint (δ in Young 1974 / Daly 2006)."""
    restart_s: SecondsOrZero = 0.0
    """Seconds from a preemption to training resumed (new capacity, load checkpoint, warm-up)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CostInput:
    """The ``cost:`` section of a scenario (``aiinfra cost``): which offers to compare, the usage to price and the
    figures that replace catalog defaults."""

    __pydantic_config__ = STRICT

    usage: UsageInput | None = None
    providers: tuple[str, ...] = ()
    """Only these providers (aws, gcp, azure, coreweave, lambda, runpod, vastai ...); empty = all."""
    pricing: tuple[Pricing, ...] = ()
    """Only these pricing kinds; empty = all."""
    pue: Pue | None = None
    """Facility power usage effectiveness; None = catalog facility row pue-uptime-global-2023."""
    node_power: str | None = None
    """Facility row id (unit kw) for one node's draw, e.g. dgx-h100-power-typical-low; None = system maximum."""
    node_power_kw: Annotated[float, InRange(0, MAX_POWER_W / 1e3, lo_open=True)] | None = None
    """One node's draw (user figure) instead of the system's maximum power."""
    electricity_usd_per_kwh: UsdPositive | None = None
    """On-prem-equivalent electricity price; None = electricity_price row, else unknown."""
    electricity_price: str | None = None
    """prices/electricity.csv id (e.g. eia-iowa-industrial-2025-04) instead of a number."""
    carbon_region: str | None = None
    """prices/grid_carbon.csv id (e.g. gcp-us-central1-2024); None = each cloud option's own region where known."""
    storage_usd_per_gb_month: UsdPositive | None = None
    dataset_bytes: Bytes | None = None
    checkpoint_bytes: Bytes | None = None
    """One checkpoint; None = weights + optimizer state of the training scenario."""
    checkpoints_kept: Count = 1
    egress_usd_per_gb: UsdPositive | None = None
    egress_bytes: Bytes | None = None
    networking_usd_per_hour: Usd | None = None
    """Load balancers, NAT, inter-zone traffic ... as one hourly figure."""
    monitoring_usd_per_month: Usd | None = None
    spot: SpotInput | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class DatacenterInput:
    """The ``datacenter:`` section of a scenario (``aiinfra datacenter``): rack power, the compute fabric, checkpoint
    storage and network prices, each defaulting to a named catalog row or left unknown."""

    __pydantic_config__ = STRICT

    rack_power_limit_kw: Annotated[float, InRange(0, MAX_POWER_W / 1e3, lo_open=True)] | None = None
    """kW per rack; None = catalog facility row rack-air-cooling-limit (an air-cooled design)."""
    switch_radix: Count | None = None
    """Ports per switch at the NIC speed; None = catalog row switch-quantum2-qm9700-radix."""
    topology: Literal["fat-tree", "rail-optimised"] = "rail-optimised"
    """rail-optimised: NIC i of every node on leaf group i (NVIDIA SuperPOD style); fat-tree: any port, any leaf."""
    oversubscription: Ratio = 1.0
    """Leaf down:up bandwidth ratio (1 = non-blocking)."""
    nics_per_node: Count | None = None
    """Compute-fabric ports per node; None = the system's NICs, else accelerators per node."""
    pue: Pue | None = None
    checkpoint_bytes: BytesPositive | None = None
    """One checkpoint; None = weights + optimizer state (mixed-precision Adam) of the model."""
    checkpoint_write_s: Seconds | None = None
    """Target time to write one full checkpoint (sets the storage write bandwidth)."""
    bytes_per_token: Annotated[float, InRange(0, MAX_BYTES_PER_TOKEN, lo_open=True)] = 4.0
    """Training-data bytes read per token (4 = uint32 token ids; 2 for vocabularies under 65,536)."""
    switch_price_usd: Usd | None = None
    """Per switch (user price); None = switch_purchase_id row, else unknown."""
    switch_purchase_id: str | None = None
    """prices/purchase.csv id of the switch."""
    transceiver_price_usd: Usd | None = None
    """Per transceiver module (user price); None = transceiver_purchase_id row, else unknown."""
    transceiver_purchase_id: str | None = None
    switch_power_w: Watts | None = None
    """Per switch (user figure; switch power is not in the catalog)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TcoInput:
    """The ``tco:`` section of a scenario (``aiinfra tco``): the on-prem capital and running costs compared with
    renting, and the horizon."""

    __pydantic_config__ = STRICT

    years: Annotated[int, InRange(1, MAX_YEARS)] | None = None
    """Straight-line depreciation period; None = catalog row depreciation-servers-default."""
    horizon_months: Annotated[int, InRange(1, MAX_MONTHS)] | None = None
    """Months plotted and searched for a breakeven; None = the depreciation period."""
    utilisation_frac: Fraction = 1.0
    """Fraction of hours the accelerators do useful work (cloud on-demand/spot pay only for those)."""
    system_price_usd: UsdPositive | None = None
    """Per node; None = the catalog system's published price (unknown for most systems)."""
    network_capex_usd: Usd | None = None
    """Fabric + cabling capex; None = network_capex_frac × systems, else 0 and flagged."""
    network_capex_frac: FractionOrZero = 0.0
    """Network capex as a fraction of the systems' capex (user estimate)."""
    storage_capex_usd: Usd = 0.0
    facility_capex_usd_per_kw: Usd | None = None
    """Own build: capex per kW of IT load. None = colocation."""
    colocation_usd_per_kw_month: Usd | None = None
    """None (and no facility_capex_usd_per_kw) = catalog row colocation-na-2024h2."""
    electricity_usd_per_kwh: UsdPositive | None = None
    electricity_price: str | None = None
    """prices/electricity.csv id instead of a number."""
    staff_usd_per_year: Usd = 0.0
    maintenance_frac_per_year: FractionOrZero = 0.0
    """Support contracts and spares as a fraction of capex per year."""
    pue: Pue | None = None
    providers: tuple[str, ...] = ()
    """Only these cloud providers; empty = all in the catalog."""
