"""Price, electricity, carbon and facility rows from catalog data (each with its source and date)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Any

from aiinfra import catalog
from aiinfra.catalog import data_path
from aiinfra.errors import SpecError, UnknownIdError


@dataclass(frozen=True, kw_only=True, slots=True)
class InstancePrice:
    id: str
    provider: str
    instance: str
    region: str
    accelerator: str
    accelerators_per_instance: int
    pricing: str
    usd_per_hour: float
    read_on: str
    age_days: int
    source_title: str


@cache
def _csv(name: str) -> tuple[dict[str, str], ...]:
    path = data_path(f"prices/{name}")
    if not path.exists():
        return ()
    with path.open(newline="") as fh:
        return tuple(csv.DictReader(fh))


def cloud_prices(accelerator: str, today: date | None = None) -> list[InstancePrice]:
    today = today or date.today()
    out = [
        InstancePrice(
            id=r["id"],
            provider=r["provider"],
            instance=r["instance"],
            region=r["region"],
            accelerator=r["accelerator"],
            accelerators_per_instance=int(r["accelerators_per_instance"]),
            pricing=r["pricing"],
            usd_per_hour=float(r["usd_per_hour"]),
            read_on=r["read_on"],
            age_days=(today - date.fromisoformat(r["read_on"])).days,
            source_title=r["source_title"],
        )
        for r in _csv("cloud.csv")
        if r["accelerator"] == accelerator
    ]
    return sorted(out, key=lambda p: p.usd_per_hour / p.accelerators_per_instance)


def carbon_g_per_kwh(region_id: str) -> tuple[float, str]:
    for r in _csv("grid_carbon.csv"):
        if r["id"] == region_id:
            return float(r["g_co2e_per_kwh"]), f"{r['source_title']} ({r['location']})"
    ids = [r["id"] for r in _csv("grid_carbon.csv")]
    raise UnknownIdError("cost.carbon_region", region_id, "grid_carbon regions", catalog.suggest(region_id, ids))


def facility(id_: str) -> tuple[float, str]:
    """(value, source title) of a facility.yaml row."""
    for row in catalog.raw_rows("facility"):
        if row["id"] == id_:
            src: Any = row["sources"][0]
            return float(row["value"]), str(src["title"])
    raise SpecError("facility", id_, "row missing from catalog/data/facility.yaml", "report this as a data bug")
