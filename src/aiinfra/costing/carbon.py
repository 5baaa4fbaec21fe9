"""Operational carbon: kWh × grid carbon intensity of the region (location-based, GHG Protocol Scope 2 Guidance
2015 §6). Intensities come from prices/grid_carbon.csv (Google region-carbon-info; cloud-carbon-footprint AWS
factors). Embodied (manufacturing) carbon is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aiinfra.costing.prices import GridCarbon
from aiinfra.errors import UnknownIdError, suggest


@dataclass(frozen=True, kw_only=True, slots=True)
class Carbon:
    """Operational CO2e of an amount of energy in one grid region (location-based; embodied carbon not counted)."""

    energy_kwh: float
    g_co2e_per_kwh: float
    """The region's grid carbon intensity."""
    co2e_kg: float
    region: GridCarbon
    """The grid_carbon row the intensity comes from (its source and date)."""


def co2e_kg(energy_kwh: float, g_co2e_per_kwh: float) -> float:
    """kWh × g/kWh / 1,000."""
    return energy_kwh * g_co2e_per_kwh / 1e3


def intensity(region_id: str, rows: Sequence[GridCarbon], field: str = "cost.carbon_region") -> GridCarbon:
    """The grid_carbon row of ``rows`` (costing.prices.grid_carbon_rows, read by the caller) with id
    ``region_id`` (with a "did you mean")."""
    by_id = {r.id: r for r in rows}
    if region_id in by_id:
        return by_id[region_id]
    raise UnknownIdError(field, region_id, "grid carbon regions", suggest(region_id, list(by_id)))


def intensity_for(provider: str, region: str, rows: Sequence[GridCarbon]) -> GridCarbon | None:
    """The newest grid_carbon row of a cloud provider's region among ``rows`` (None when there is none)."""
    mine = [r for r in rows if r.provider == provider and r.region == region]
    return max(mine, key=lambda r: r.read_on) if mine else None


def carbon(energy_kwh: float, region: GridCarbon) -> Carbon:
    """The CO2e of ``energy_kwh`` at ``region``'s grid intensity."""
    return Carbon(
        energy_kwh=energy_kwh,
        g_co2e_per_kwh=region.g_co2e_per_kwh,
        co2e_kg=co2e_kg(energy_kwh, region.g_co2e_per_kwh),
        region=region,
    )
