"""MIG (Multi-Instance GPU) geometry as typed values: a GPU-instance profile, the partitioning rules of an
accelerator (one catalog/data/mig.yaml row, read by catalog/mig.py) and a MIG instance as an accelerator."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from aiinfra.errors import SpecError
from aiinfra.specs.common import STRICT, Source
from aiinfra.specs.hardware import AcceleratorSpec


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
        """The profile called ``name``; a SpecError on ``field`` listing the known profiles when there is none."""
        for p in self.profiles:
            if p.name == name:
                return p
        known = [p.name for p in self.profiles]
        raise SpecError(field, name, f"unknown MIG profile for {self.accelerators[0]}", f"one of {', '.join(known)}")


def split_instance_id(value: str) -> tuple[str, str] | None:
    """``nvidia-a100-sxm4-80gb/3g.40gb`` -> (accelerator id, profile); None for a plain id."""
    if "/" not in value:
        return None
    base, _, prof = value.partition("/")
    return base, prof


def instance_accelerator(
    base: AcceleratorSpec, geo: MigGeometry, profile: str, field: str = "hardware.accelerator"
) -> AcceleratorSpec:
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
    from fractions import Fraction  # here: only a MIG scenario pays its import (and decimal's)

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
        notes=(
            f"MIG instance {p.name}: {compute} of the compute slices, {memory} of the memory slices of {base.id} "
            "(proportional share assumed; see aiinfra.sharing.mig.instance_accelerator)."
        ),
    )
