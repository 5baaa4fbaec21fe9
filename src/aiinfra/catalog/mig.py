"""MIG (Multi-Instance GPU) catalog data: instance profiles and placement geometry of catalog/data/mig.yaml, and a
MIG instance as an accelerator (``ACCELERATOR/PROFILE``). Placement and layouts: aiinfra.sharing.mig.
"""

from __future__ import annotations

from functools import cache

from aiinfra import catalog
from aiinfra.errors import DataError, SpecError
from aiinfra.specs.common import validate
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.specs.mig import MigGeometry, MigProfile, instance_accelerator, split_instance_id

__all__ = [
    "MigGeometry",
    "MigProfile",
    "accelerator",
    "geometries",
    "geometry",
    "instance_accelerator",
    "split_instance_id",
]


@cache
def geometries() -> dict[str, MigGeometry]:
    """Every MIG geometry keyed by accelerator id."""
    out: dict[str, MigGeometry] = {}
    for raw in catalog.raw_rows("mig"):
        try:
            sources = [{**s, "read_on": str(s["read_on"])} for s in raw["sources"]]
            geo = validate(MigGeometry, {**raw, "sources": sources})
        except Exception as exc:  # shipped data is broken: a bug, say where
            raise DataError(f"catalog data mig.yaml row {raw.get('id', '?')}: {exc}") from exc
        for p in geo.profiles:
            if p.memory_slices > geo.memory_slices or any(s + p.memory_slices > geo.memory_slices for s in p.starts):
                raise DataError(f"catalog data mig.yaml row {geo.id}: profile {p.name} placed past the last slice")
        for acc in geo.accelerators:
            out[acc] = geo
    return out


def geometry(accelerator_id: str, field: str = "accelerator") -> MigGeometry:
    """The MIG rules of an accelerator; SpecError if it is unknown or has no MIG data."""
    acc = catalog.accelerator(accelerator_id, field)
    geo = geometries().get(acc.id)
    if geo is None:
        with_mig = ", ".join(sorted(geometries()))
        raise SpecError(
            field, accelerator_id, "no MIG profiles in the catalog for this accelerator", f"pick one of {with_mig}"
        )
    return geo


def accelerator(value: str, field: str = "hardware.accelerator") -> AcceleratorSpec:
    """A catalog accelerator, or a MIG instance of one written ``ACCELERATOR/PROFILE``."""
    parts = split_instance_id(value)
    if parts is None:
        return catalog.accelerator(value, field)
    base, prof = parts
    return instance_accelerator(catalog.accelerator(base, field), geometry(base, field), prof, field)
