"""Operational carbon: kWh × grid carbon intensity of the region (location-based, GHG Protocol Scope 2 Guidance
2015 §6). Intensities come from prices/grid_carbon.csv (Google region-carbon-info; cloud-carbon-footprint AWS
factors). Embodied (manufacturing) carbon is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from aiinfra import catalog
from aiinfra.costing.prices import GridCarbon, grid_carbon_rows
from aiinfra.errors import UnknownIdError


@dataclass(frozen=True, kw_only=True, slots=True)
class Carbon:
    energy_kwh: float
    g_co2e_per_kwh: float
    co2e_kg: float
    region: GridCarbon


def co2e_kg(energy_kwh: float, g_co2e_per_kwh: float) -> float:
    """kWh × g/kWh / 1,000."""
    return energy_kwh * g_co2e_per_kwh / 1e3


def intensity(region_id: str, field: str = "cost.carbon_region", today: date | None = None) -> GridCarbon:
    """A grid_carbon.csv row by id (with a "did you mean")."""
    rows = {r.id: r for r in grid_carbon_rows(today)}
    if region_id in rows:
        return rows[region_id]
    raise UnknownIdError(field, region_id, "grid carbon regions", catalog.suggest(region_id, list(rows)))


def intensity_for(provider: str, region: str, today: date | None = None) -> GridCarbon | None:
    """The newest grid_carbon row of a cloud provider's region (None when the table has none)."""
    rows = [r for r in grid_carbon_rows(today) if r.provider == provider and r.region == region]
    return max(rows, key=lambda r: r.read_on) if rows else None


def carbon(energy_kwh: float, region: GridCarbon) -> Carbon:
    return Carbon(
        energy_kwh=energy_kwh,
        g_co2e_per_kwh=region.g_co2e_per_kwh,
        co2e_kg=co2e_kg(energy_kwh, region.g_co2e_per_kwh),
        region=region,
    )
