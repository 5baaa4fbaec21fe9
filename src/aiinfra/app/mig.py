"""The MIG question: an accelerator's instance profiles and valid layouts, or whether one layout fits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiinfra.app.base import Result
from aiinfra.catalog import mig as catalog_mig
from aiinfra.report.render import jsonable
from aiinfra.sharing import mig as m


@dataclass(frozen=True, kw_only=True, slots=True)
class MigProfileShare:
    """One profile and the share of the GPU it gets."""

    profile: m.MigProfile
    instance: Any
    """The MIG instance as an AcceleratorSpec (scaled compute, memory, bandwidth)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class MigResult(Result):
    """The answer of :func:`mig`."""

    accelerator: str
    geometry: m.MigGeometry
    shares: tuple[MigProfileShare, ...]
    layouts: tuple[tuple[m.Placement, ...], ...]
    """Every maximal layout (when no layout was asked), else the one asked, placed."""
    checked_layout: bool
    """True when a layout was asked (``layouts`` holds it alone), False when every full layout is listed."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra mig --json`` object: the slices, each profile with its share of the GPU as an instance, and the
        full layouts or the checked layout."""
        g = self.geometry
        profiles = []
        for s in self.shares:
            p, inst = s.profile, s.instance
            profiles.append(
                {
                    **jsonable(p),
                    "instance_id": inst.id,
                    "compute_frac": p.compute_slices / g.compute_slices,
                    "memory_frac": p.memory_slices / g.memory_slices,
                    "memory_bytes": inst.memory_bytes,
                    "memory_bw_bytes_per_s": inst.memory_bw_bytes_per_s,
                    "dense_flop_per_s": inst.dense_flop_per_s,
                }
            )
        layouts = [
            [
                {
                    "profile": pl.profile,
                    "start_slice": pl.start,
                    "memory_slices": pl.memory_slices,
                    "compute_slices": pl.compute_slices,
                }
                for pl in lay
            ]
            for lay in self.layouts
        ]
        out: dict[str, Any] = {
            "accelerator": self.accelerator,
            "compute_slices": g.compute_slices,
            "memory_slices": g.memory_slices,
            "profiles": profiles,
            "sources": [jsonable(s) for s in g.sources],
            "notes": g.notes,
        }
        if self.checked_layout:
            out["layout_valid"] = True
            out["layout"] = layouts[0]
        else:
            out["full_layouts"] = layouts
        return out

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per MIG profile (its dense peaks left out)."""
        return [{k: v for k, v in p.items() if k != "dense_flop_per_s"} for p in self.to_dict()["profiles"]]


def mig(accelerator: str, layout: str | None = None) -> MigResult:
    """MIG profiles of ``accelerator`` with every valid full layout, or the placement of ``layout``
    (comma-separated profile names); an invalid layout raises SpecError with the reason."""
    geo = catalog_mig.geometry(accelerator, "accelerator")
    base = catalog_mig.accelerator(accelerator, "accelerator")
    shares = tuple(MigProfileShare(profile=p, instance=m.instance_accelerator(base, geo, p.name)) for p in geo.profiles)
    if layout is not None:
        names = [n.strip() for n in layout.split(",") if n.strip()]
        if not names:
            from aiinfra.errors import SpecError

            raise SpecError("--layout", layout, "no profile named", "write e.g. --layout 3g.40gb,2g.20gb,1g.10gb")
        return MigResult(
            accelerator=base.id,
            geometry=geo,
            shares=shares,
            layouts=(m.place(geo, names, "--layout"),),
            checked_layout=True,
        )
    return MigResult(
        accelerator=base.id, geometry=geo, shares=shares, layouts=tuple(m.full_layouts(geo)), checked_layout=False
    )
