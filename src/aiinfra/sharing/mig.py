"""MIG (Multi-Instance GPU) geometry: instance profiles, placement rules, layouts and a MIG instance as an accelerator.

A GPU instance of a profile occupies ``memory_slices`` consecutive memory slices starting at one of the profile's
start slots (``nvidia-smi mig -lgipp``, NVIDIA MIG User Guide); instances of one GPU may not overlap, may not use
more compute slices than the GPU has, and a profile may not exceed its ``max_instances`` (e.g. one ``+me`` profile).
The geometry comes from the caller (catalog/mig.py reads catalog/data/mig.yaml at the application boundary).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiinfra.errors import SpecError
from aiinfra.specs.mig import MigGeometry, MigProfile, instance_accelerator, split_instance_id

__all__ = [
    "MigGeometry",
    "MigProfile",
    "Placement",
    "full_layouts",
    "instance_accelerator",
    "place",
    "split_instance_id",
]

_ORDINAL = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


@dataclass(frozen=True, kw_only=True, slots=True)
class Placement:
    """One GPU instance placed on a GPU: profile and first memory slice."""

    profile: str
    start: int
    memory_slices: int
    compute_slices: int


def _fits(taken: int, start: int, size: int) -> bool:
    mask = ((1 << size) - 1) << start
    return not taken & mask


def place(geo: MigGeometry, names: list[str], field: str = "layout") -> tuple[Placement, ...]:
    """Place instances of ``names`` on one GPU, or raise SpecError saying why they do not fit."""
    profiles = [geo.profile(n, field) for n in names]
    for p in {p.name: p for p in profiles}.values():
        n = sum(1 for q in profiles if q.name == p.name)
        if n > p.max_instances:
            raise SpecError(
                field,
                ",".join(names),
                f"no room for a {_ORDINAL[p.max_instances]} {p.name}: at most {p.max_instances} per GPU",
                "use fewer of this profile or another profile",
            )
    compute = sum(p.compute_slices for p in profiles)
    if compute > geo.compute_slices:
        raise SpecError(
            field,
            ",".join(names),
            f"needs {compute} compute slices; the GPU has {geo.compute_slices}",
            "drop an instance",
        )
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
                acc.append(
                    Placement(profile=p.name, start=s, memory_slices=p.memory_slices, compute_slices=p.compute_slices)
                )
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
            if (
                slot in p.starts
                and _fits(taken, slot, p.memory_slices)
                and counts.get(p.name, 0) < p.max_instances
                and compute + p.compute_slices <= geo.compute_slices
            ):
                acc.append(
                    Placement(
                        profile=p.name, start=slot, memory_slices=p.memory_slices, compute_slices=p.compute_slices
                    )
                )
                counts[p.name] = counts.get(p.name, 0) + 1
                walk(
                    slot + p.memory_slices,
                    taken | (((1 << p.memory_slices) - 1) << slot),
                    compute + p.compute_slices,
                    counts,
                    acc,
                )
                counts[p.name] -= 1
                acc.pop()

    walk(0, 0, 0, {}, [])
    return [found[k] for k in sorted(found, key=lambda k: (len(k), k))]
