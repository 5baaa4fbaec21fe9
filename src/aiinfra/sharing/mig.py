"""MIG (Multi-Instance GPU) geometry: instance profiles, placement rules, layouts and a MIG instance as an accelerator.

A GPU instance of a profile occupies ``memory_slices`` consecutive memory slices starting at one of the profile's
start slots (``nvidia-smi mig -lgipp``, NVIDIA MIG User Guide); instances of one GPU may not overlap, may not use
more compute slices than the GPU has, and a profile may not exceed its ``max_instances`` (e.g. one ``+me`` profile).
Data: catalog/data/mig.yaml.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from aiinfra import catalog
from aiinfra.errors import DataError, SpecError
from aiinfra.specs.common import STRICT, Source, validate
from aiinfra.specs.hardware import AcceleratorSpec

_ORDINAL = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


@dataclass(frozen=True, kw_only=True, slots=True)
class MigProfile:
    """One GPU-instance profile as the MIG User Guide lists it."""

    __pydantic_config__ = STRICT

    name: str
    compute_slices: int
    """Numerator of the guide's 'fraction of SMs' (x / the GPU's compute slices)."""
    memory_slices: int
    """Numerator of the guide's 'fraction of memory'; also the placement size."""
    max_instances: int
    """Most instances of this profile on one GPU."""
    starts: tuple[int, ...]
    """Memory slices an instance of this profile may start at."""
    copy_engines: int | None = None
    nvdec: int | None = None
    nvjpg: int | None = None
    ofa: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class MigGeometry:
    """The MIG partitioning rules of one or more accelerators (one mig.yaml row)."""

    __pydantic_config__ = STRICT

    id: str
    accelerators: tuple[str, ...]
    compute_slices: int
    memory_slices: int
    profiles: tuple[MigProfile, ...]
    sources: tuple[Source, ...]
    notes: str = ""

    def profile(self, name: str, field: str = "profile") -> MigProfile:
        for p in self.profiles:
            if p.name == name:
                return p
        known = [p.name for p in self.profiles]
        raise SpecError(field, name, f"unknown MIG profile for {self.accelerators[0]}",
                        f"one of {', '.join(known)}")  # fmt: skip


@dataclass(frozen=True, kw_only=True, slots=True)
class Placement:
    """One GPU instance placed on a GPU: profile and first memory slice."""

    profile: str
    start: int
    memory_slices: int
    compute_slices: int


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
        raise SpecError(field, accelerator_id, "no MIG profiles in the catalog for this accelerator",
                        f"pick one of {with_mig}")  # fmt: skip
    return geo


def split_instance_id(value: str) -> tuple[str, str] | None:
    """``nvidia-a100-sxm4-80gb/3g.40gb`` -> (accelerator id, profile); None for a plain id."""
    if "/" not in value:
        return None
    base, _, prof = value.partition("/")
    return base, prof


def accelerator(value: str, field: str = "hardware.accelerator") -> AcceleratorSpec:
    """A catalog accelerator, or a MIG instance of one written ``ACCELERATOR/PROFILE``."""
    parts = split_instance_id(value)
    if parts is None:
        return catalog.accelerator(value, field)
    base, prof = parts
    return instance_accelerator(catalog.accelerator(base, field), prof, field)


def instance_accelerator(base: AcceleratorSpec, profile: str, field: str = "hardware.accelerator") -> AcceleratorSpec:
    """The share of ``base`` one MIG instance of ``profile`` gets.

    Compute peaks scale by the profile's fraction of compute slices (the guide's nominal 'fraction of SMs');
    memory capacity and bandwidth by its fraction of memory slices (each memory slice brings its own memory
    controllers and L2 share, per the guide). Both fractions are ASSUMPTIONS of proportional performance: the
    real SM count of an instance differs slightly from the nominal fraction, and the driver reserves some of the
    slice's memory (nvidia-smi reports less than the fraction). Li et al., "Characterizing Multi-Instance GPU
    for Machine Learning Workloads" (IPDPSW 2022, arXiv:2209.11484) measure A100 MIG instances running ML
    workloads; this model has not been checked against their figures. MIG instances have no peer-to-peer
    NVLink, so the scale-up link is None; TDP, price and MIG fields do not carry over.
    """
    geo = geometry(base.id, field)
    p = geo.profile(profile, field)
    compute = Fraction(p.compute_slices, geo.compute_slices)
    memory = Fraction(p.memory_slices, geo.memory_slices)
    per_node = base.default_per_node * p.max_instances if base.default_per_node else None
    return dataclasses.replace(
        base,
        id=f"{base.id}/{p.name}",
        name=f"{base.name} MIG {p.name}",
        memory_bytes=base.memory_bytes * float(memory),
        memory_as_published=f"{memory} of {base.memory_as_published} (MIG {p.name})",
        memory_bw_bytes_per_s=base.memory_bw_bytes_per_s * float(memory),
        dense_flop_per_s={k: v * float(compute) for k, v in base.dense_flop_per_s.items()},
        sparse_flop_per_s={k: v * float(compute) for k, v in base.sparse_flop_per_s.items()},
        tdp_w=None,
        scale_up=None,
        mig=None,
        list_price_usd=None,
        default_per_node=per_node,
        sources=base.sources + geo.sources,
        notes=(f"MIG instance {p.name}: {compute} of the compute slices, {memory} of the memory slices of {base.id} "
               "(proportional share assumed; see aiinfra.sharing.mig.instance_accelerator)."),
    )  # fmt: skip


def _fits(taken: int, start: int, size: int) -> bool:
    mask = ((1 << size) - 1) << start
    return not taken & mask


def place(geo: MigGeometry, names: list[str], field: str = "layout") -> tuple[Placement, ...]:
    """Place instances of ``names`` on one GPU, or raise SpecError saying why they do not fit."""
    profiles = [geo.profile(n, field) for n in names]
    for p in {p.name: p for p in profiles}.values():
        n = sum(1 for q in profiles if q.name == p.name)
        if n > p.max_instances:
            raise SpecError(field, ",".join(names),
                            f"no room for a {_ORDINAL[p.max_instances]} {p.name}: at most {p.max_instances} per GPU",
                            "use fewer of this profile or another profile")  # fmt: skip
    compute = sum(p.compute_slices for p in profiles)
    if compute > geo.compute_slices:
        raise SpecError(field, ",".join(names),
                        f"needs {compute} compute slices; the GPU has {geo.compute_slices}",
                        "drop an instance")  # fmt: skip
    # the largest first, then the fewest start slots: the order a hand placement would try
    order = sorted(profiles, key=lambda p: (-p.memory_slices, len(p.starts), p.name))
    best: list[Placement] = []

    def search(i: int, taken: int, acc: list[Placement]) -> bool:
        nonlocal best
        if len(acc) > len(best):
            best = list(acc)
        if i == len(order):
            return True
        p = order[i]
        for s in p.starts:
            if _fits(taken, s, p.memory_slices):
                acc.append(Placement(profile=p.name, start=s, memory_slices=p.memory_slices,
                                     compute_slices=p.compute_slices))  # fmt: skip
                if search(i + 1, taken | (((1 << p.memory_slices) - 1) << s), acc):
                    return True
                acc.pop()
        return False

    if search(0, 0, []):
        return tuple(sorted(best, key=lambda pl: pl.start))
    culprit = order[len(best)]
    nth = sum(1 for pl in best if pl.profile == culprit.name)
    beside = ", ".join(f"{pl.profile}@{pl.start}" for pl in sorted(best, key=lambda pl: pl.start)) or "nothing"
    raise SpecError(
        field,
        ",".join(names),
        f"no room for a {_ORDINAL[nth] + ' ' if nth else ''}{culprit.name} "
        f"(starts {{{','.join(map(str, culprit.starts))}}}, "
        f"{culprit.memory_slices} memory slices) beside {beside}",
        "drop or shrink an instance (`aiinfra mig ACCELERATOR` lists the valid layouts)",
    )


def full_layouts(geo: MigGeometry) -> list[tuple[Placement, ...]]:
    """Every maximal layout (no further instance fits), one per multiset of profiles, largest profiles first."""
    found: dict[tuple[str, ...], tuple[Placement, ...]] = {}

    def can_add(taken: int, compute: int, counts: dict[str, int]) -> bool:
        return any(
            counts.get(p.name, 0) < p.max_instances
            and compute + p.compute_slices <= geo.compute_slices
            and any(_fits(taken, s, p.memory_slices) for s in p.starts)
            for p in geo.profiles
        )

    def walk(slot: int, taken: int, compute: int, counts: dict[str, int], acc: list[Placement]) -> None:
        if slot >= geo.memory_slices:
            if acc and not can_add(taken, compute, counts):
                canon = tuple(sorted(acc, key=lambda pl: (-pl.memory_slices, -pl.compute_slices, pl.profile, pl.start)))
                found.setdefault(tuple(pl.profile for pl in canon), canon)
            return
        walk(slot + 1, taken, compute, counts, acc)
        for p in geo.profiles:
            if (slot in p.starts and _fits(taken, slot, p.memory_slices) and counts.get(p.name, 0) < p.max_instances
                    and compute + p.compute_slices <= geo.compute_slices):  # fmt: skip
                acc.append(Placement(profile=p.name, start=slot, memory_slices=p.memory_slices,
                                     compute_slices=p.compute_slices))  # fmt: skip
                counts[p.name] = counts.get(p.name, 0) + 1
                walk(slot + p.memory_slices, taken | (((1 << p.memory_slices) - 1) << slot),
                     compute + p.compute_slices, counts, acc)  # fmt: skip
                counts[p.name] -= 1
                acc.pop()

    walk(0, 0, 0, {}, [])
    return [found[k] for k in sorted(found, key=lambda k: (len(k), k))]
