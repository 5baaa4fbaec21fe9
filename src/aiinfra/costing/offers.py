"""Provider offers (gpuhunt's format) -> price rows of the catalog: accelerator ids, instance sizes, MIG slices,
pricing kinds, de-duplicated.

An offer names its GPU as gpuhunt does: vendor, ``gpu_name`` (``H100``, ``A100``, ``RTX4090``, TPU slice names such as
``v5p-8``) and memory per GPU in GB. ``prices/offer_names.yaml`` says which catalog parts each (vendor, name,
memory) stands for. Where a name covers several forms (A100 80 GB: SXM4 or PCIe) the offer must say which: a form
(``sxm``, ``pcie``, ``nvl``) or memory type (``hbm3``) named in its instance name, or a shipped price row of the
same provider and instance. An offer with less memory per GPU than its name's full part is a fraction of the GPU:
it maps to the MIG profile named with that memory (``1g.10gb``) when exactly one profile is. Everything else is
returned as unmapped with the reason; nothing is guessed.

Offers of the same provider, instance, region and pricing kind are one offer (GCP zones fold into their region;
Vast.ai listings, named by a listing number, into ``<count>x <gpu> listing``); when their prices differ the lowest
is kept and the range noted.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from aiinfra.errors import SpecError
from aiinfra.specs.hardware import AcceleratorSpec

#: the columns of gpuhunt's published catalog files (v2 format; the provider is the file's name)
GPUHUNT_CSV_FIELDS = (
    "instance_name",
    "location",
    "price",
    "cpu",
    "memory",
    "gpu_count",
    "gpu_name",
    "gpu_memory",
    "spot",
    "disk_size",
    "gpu_vendor",
    "flags",
    "cpu_arch",
    "provider_data",
)

#: prices/cloud.csv columns, in order
CLOUD_CSV_FIELDS = (
    "id",
    "provider",
    "instance",
    "region",
    "accelerator",
    "accelerators_per_instance",
    "pricing",
    "usd_per_hour",
    "source_title",
    "source_url",
    "read_on",
    "notes",
)

#: where gpuhunt's offers come from (cited on every refreshed row)
GPUHUNT_URL = "https://github.com/dstackai/gpuhunt"


@dataclass(frozen=True, kw_only=True, slots=True)
class Offer:
    """One offer as gpuhunt's ``CatalogItem`` gives it (the fields the catalog uses)."""

    provider: str
    instance_name: str
    location: str
    usd_per_hour: float
    """Whole instance (gpuhunt's ``price``)."""
    gpu_count: int
    gpu_name: str | None
    gpu_memory_gb: float | None
    """GB per GPU as gpuhunt reports it (its ``gpu_memory``)."""
    spot: bool
    gpu_vendor: str | None = None
    provider_data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class Mapped:
    """An offer as a price row's fields (before de-duplication)."""

    provider: str
    instance: str
    region: str
    accelerator: str
    accelerators_per_instance: int
    pricing: str
    usd_per_hour: float
    evidence: str
    """How the accelerator was decided (name table row, form token, shipped row, MIG profile)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Unmapped:
    """An offer left out, with why."""

    provider: str
    instance: str
    location: str
    gpu: str
    """gpuhunt's vendor, name, count and memory, as text."""
    reason: str
    count: int = 1
    """How many offers of the provider share this instance and reason."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PriceRow:
    """A de-duplicated offer as a prices/cloud.csv row."""

    id: str
    provider: str
    instance: str
    region: str
    accelerator: str
    accelerators_per_instance: int
    pricing: str
    usd_per_hour: float
    source_title: str
    source_url: str
    read_on: str
    notes: str

    def csv_row(self) -> dict[str, str]:
        """The row as prices/cloud.csv writes it: every column as text, floats to 6 significant digits."""
        row = {k: getattr(self, k) for k in CLOUD_CSV_FIELDS}
        return {k: (f"{v:.6g}" if isinstance(v, float) else str(v)) for k, v in row.items()}


# -- reading recorded offers -------------------------------------------------------------------------------------


def read_gpuhunt_csv(path: Path, provider: str) -> list[Offer]:
    """Offers from a catalog file in gpuhunt's published CSV format (one file per provider, the columns of
    :data:`GPUHUNT_CSV_FIELDS`). A malformed row is a SpecError naming the file, the line and the column."""
    out: list[Offer] = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [
            c for c in ("instance_name", "location", "price", "gpu_count", "spot") if c not in (reader.fieldnames or [])
        ]
        if missing:
            raise SpecError(
                str(path),
                "(header)",
                f"no {missing[0]} column: not a gpuhunt catalog file",
                "give files in gpuhunt's catalog CSV format (" + ", ".join(GPUHUNT_CSV_FIELDS) + ")",
            )
        for row in reader:
            where = f"{path}:{reader.line_num}"
            try:
                spot = row["spot"].strip().lower()
                if spot not in ("true", "false"):
                    raise ValueError(f"spot = {row['spot']!r} is not True/False")
                out.append(
                    Offer(
                        provider=provider,
                        instance_name=row["instance_name"],
                        location=row["location"],
                        usd_per_hour=float(row["price"]),
                        gpu_count=int(row["gpu_count"] or 0),
                        gpu_name=row.get("gpu_name") or None,
                        gpu_memory_gb=float(row["gpu_memory"]) if row.get("gpu_memory") else None,
                        spot=spot == "true",
                        gpu_vendor=(row.get("gpu_vendor") or None),
                        provider_data=json.loads(row.get("provider_data") or "{}"),
                    )
                )
            except (ValueError, TypeError) as exc:
                raise SpecError(
                    where, row.get("instance_name"), f"malformed offer: {exc}", "fix or remove the row"
                ) from None
    return out


def offer_from_item(item: Any) -> Offer:
    """gpuhunt's ``CatalogItem`` as an :class:`Offer` (attributes read by name; no gpuhunt import)."""
    vendor = getattr(item, "gpu_vendor", None)
    return Offer(
        provider=str(item.provider),
        instance_name=str(item.instance_name),
        location=str(item.location),
        usd_per_hour=float(item.price),
        gpu_count=int(item.gpu_count or 0),
        gpu_name=item.gpu_name,
        gpu_memory_gb=float(item.gpu_memory) if item.gpu_memory is not None else None,
        spot=bool(item.spot),
        gpu_vendor=str(getattr(vendor, "value", vendor)) if vendor is not None else None,
        provider_data=dict(getattr(item, "provider_data", None) or {}),
    )


# -- the name table ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NameTable:
    """What naming an offer's accelerator needs from the catalog (built at the application boundary:
    app/prices.py offer_name_table)."""

    gpus: tuple[dict[str, Any], ...]
    tpus: tuple[dict[str, Any], ...]
    providers: dict[str, str]
    shipped_instances: dict[tuple[str, str], str]
    """(provider, instance lower-case) -> accelerator of the shipped price rows."""
    parts: Mapping[str, AcceleratorSpec]
    """The catalog's accelerators by id (form factor and memory type of the candidates)."""
    mig_profiles: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    """mig.yaml rows in order: (accelerator ids, profile names)."""


def region_of(provider: str, location: str) -> str:
    """GCP offers are per zone (``us-central1-a``); the catalog prices regions (``us-central1``)."""
    if provider == "gcp":
        m = re.fullmatch(r"([a-z]+-[a-z]+\d+)-[a-z]", location)
        if m:
            return m.group(1)
    return location


def _tokens(text: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", text.lower()) if t}


def _form_tokens(acc_id: str, table: NameTable) -> set[str]:
    """What an instance name may say to pick this part: its form factor and memory type (sxm5 counts as sxm)."""
    spec = table.parts[acc_id]
    out = {spec.form_factor.lower()}
    out |= {re.sub(r"\d+$", "", t) for t in _tokens(acc_id) if t.startswith(("sxm", "pcie", "nvl"))}
    if spec.memory_type:
        out.add(spec.memory_type.lower())
    return out


def _pick_form(offer: Offer, provider: str, row: dict[str, Any], table: NameTable) -> tuple[str | None, str]:
    """The one part of ``row`` the offer names, with the evidence; (None, why) when it does not say."""
    candidates = [str(a) for a in row.get("accelerators") or []]
    other_forms = [str(f) for f in row.get("forms_not_in_catalog") or []]
    if not candidates:
        return None, (
            f"no catalog accelerator for {row['gpu_name']} {row['memory_gb']} GB (offer_names.yaml {row['id']})"
        )
    if len(candidates) == 1 and not other_forms:
        return candidates[0], f"offer_names.yaml {row['id']}"
    words = _tokens(offer.instance_name) | {re.sub(r"\d+$", "", t) for t in _tokens(offer.instance_name)}
    named = [a for a in candidates if _form_tokens(a, table) & words]
    if len(named) == 1:
        said = sorted(_form_tokens(named[0], table) & words)[0]
        return named[0], f"offer_names.yaml {row['id']}; the instance name says {said}"
    if not named and set(other_forms) & words:
        return None, (
            f"{row['gpu_name']} {row['memory_gb']} GB {sorted(set(other_forms) & words)[0]}: no such part "
            "in the catalog (add it to accelerators.yaml)"
        )
    shipped = table.shipped_instances.get((provider, offer.instance_name.lower()))
    if shipped in candidates:
        return shipped, f"offer_names.yaml {row['id']}; the shipped price rows map this instance to {shipped}"
    forms = "/".join(sorted({table.parts[a].form_factor for a in candidates} | set(other_forms)))
    return None, (
        f"{row['gpu_name']} {row['memory_gb']} GB comes as {forms}; the offer does not say which (no form "
        "in the instance name, no shipped row of this instance)"
    )


def _mig_profile(base: str, memory_gb: float, table: NameTable) -> tuple[str | None, str]:
    """The MIG profile of ``base`` named with ``memory_gb`` (``1g.10gb``), the ``+me`` variants aside."""
    for accelerators, profiles in table.mig_profiles:
        if base not in accelerators:
            continue
        names = [p for p in profiles if "+" not in p]
        hits = [n for n in names if (m := re.search(r"\.(\d+)gb$", n)) and int(m.group(1)) == round(memory_gb)]
        if len(hits) == 1:
            return hits[0], ""
        if hits:
            return None, (
                f"{memory_gb:g} GB is the memory of MIG profiles {' and '.join(hits)}: the offer does not say which"
            )
        return None, f"{memory_gb:g} GB of {base} matches no MIG profile ({', '.join(names)})"
    return None, f"a {memory_gb:g} GB fraction of {base}, which has no MIG profiles in the catalog"


def _tpu(offer: Offer, table: NameTable) -> tuple[str | None, int, str]:
    name = offer.gpu_name or offer.instance_name
    m = re.fullmatch(r"(?:tpu-)?([a-z0-9]+)-(\d+)", name.strip().lower())
    if m is None:
        return None, 0, f"TPU name {name!r} is not <version>-<size>"
    for row in table.tpus:
        if row["prefix"] == m.group(1):
            chips = int(m.group(2)) * float(row["chips_per_suffix_unit"])
            if chips < 1 or chips != int(chips):
                return None, 0, f"{name}: {chips:g} chips is not a whole number"
            return str(row["accelerator"]), int(chips) * max(1, offer.gpu_count), f"offer_names.yaml {row['id']}"
    return None, 0, f"TPU version {m.group(1)} is not in offer_names.yaml"


def pricing_of(offer: Offer) -> str | None:
    """The catalog's pricing kind: spot or on-demand; None for kinds the catalog has no column for (GCP's
    Dynamic Workload Scheduler calendar mode, a reservation of fixed length)."""
    if offer.provider_data.get("is_dws_calendar_mode"):
        return None
    return "spot" if offer.spot else "on-demand"


def map_offer(offer: Offer, table: NameTable) -> Mapped | Unmapped | None:
    """One offer as price-row fields, or why it cannot be (None: no accelerator at all, a CPU instance);
    ``table``: the catalog's names (:class:`NameTable`)."""
    provider = table.providers.get(offer.provider, offer.provider)
    gpu = f"{offer.gpu_vendor or '?'} {offer.gpu_name or '?'} × {offer.gpu_count}" + (
        f", {offer.gpu_memory_gb:g} GB each" if offer.gpu_memory_gb is not None else ""
    )

    def unmapped(reason: str) -> Unmapped:
        return Unmapped(
            provider=provider, instance=offer.instance_name, location=offer.location, gpu=gpu, reason=reason
        )

    if not offer.gpu_count or not offer.gpu_name:
        return None
    if not (math.isfinite(offer.usd_per_hour) and offer.usd_per_hour > 0):
        return unmapped(f"price {offer.usd_per_hour!r} is not a positive number")
    pricing = pricing_of(offer)
    if pricing is None:
        return unmapped("pricing kind not in the catalog (DWS calendar mode)")
    vendor = (offer.gpu_vendor or "").lower()
    count = offer.gpu_count
    if vendor == "google":
        acc, count, evidence = _tpu(offer, table)
        if acc is None:
            return unmapped(evidence)
    else:
        rows = [r for r in table.gpus if r["vendor"] == vendor and str(r["gpu_name"]).lower() == offer.gpu_name.lower()]
        if not rows:
            return unmapped(f"{offer.gpu_name} is not in offer_names.yaml (no catalog accelerator for it)")
        mem = offer.gpu_memory_gb
        exact = [r for r in rows if mem is None or abs(float(r["memory_gb"]) - mem) <= 1.0]
        if len(exact) > 1:
            return unmapped(f"{offer.gpu_name} without its memory matches several rows of offer_names.yaml")
        if exact:
            picked, evidence = _pick_form(offer, provider, exact[0], table)
            if picked is None:
                return unmapped(evidence)
            acc = picked
        else:
            assert mem is not None
            bigger = [r for r in rows if float(r["memory_gb"]) > mem]
            if len(bigger) != 1:
                sizes = ", ".join(f"{float(r['memory_gb']):g}" for r in rows)
                return unmapped(
                    f"{offer.gpu_name} with {mem:g} GB per GPU: a fraction of a GPU the offer does not "
                    f"name ({offer.gpu_name} comes with {sizes} GB)"
                )
            base, evidence = _pick_form(offer, provider, bigger[0], table)
            if base is None:
                return unmapped(f"a {mem:g} GB fraction of the GPU; {evidence}")
            profile, why = _mig_profile(base, mem, table)
            if profile is None:
                return unmapped(why)
            acc = f"{base}/{profile}"
            evidence += f"; {mem:g} GB per GPU = MIG profile {profile}"
    instance = offer.instance_name
    if instance.isdigit():  # a marketplace listing number (Vast.ai), not an instance type
        instance = f"{offer.gpu_count}x {offer.gpu_name} listing"
    return Mapped(
        provider=provider,
        instance=instance,
        region=region_of(offer.provider, offer.location),
        accelerator=acc,
        accelerators_per_instance=count,
        pricing=pricing,
        usd_per_hour=offer.usd_per_hour,
        evidence=evidence,
    )


# -- de-duplication and rows -------------------------------------------------------------------------------------


def slug(text: str) -> str:
    """An id fragment: lower case, Azure's ``Standard_`` prefix dropped, each run of other characters a hyphen."""
    low = text.lower().removeprefix("standard_")
    return re.sub(r"[^a-z0-9]+", "-", low).strip("-")


def price_rows(mapped: Iterable[Mapped], read_on: str, source_title: str) -> list[PriceRow]:
    """One row per offer (provider, instance, region, pricing kind; case aside): the lowest price of the offers
    that share the key, the range noted. An instance name sold in several sizes (a RunPod GPU type) becomes one
    instance per size (``8x <name>``). Row ids are the shipped rows' scheme plus the date read, so a refreshed
    row never replaces a shipped one by id: which is used is decided by date (prices.newest_per_offer)."""
    mapped = list(mapped)
    sizes: dict[tuple[str, str], set[int]] = {}
    for m in mapped:
        sizes.setdefault((m.provider, m.instance.lower()), set()).add(m.accelerators_per_instance)
    groups: dict[tuple[str, str, str, str], list[Mapped]] = {}
    for m in mapped:
        if len(sizes[(m.provider, m.instance.lower())]) > 1:  # a GPU type sold in several sizes (RunPod pods)
            m = replace(m, instance=f"{m.accelerators_per_instance}x {m.instance}")
        groups.setdefault((m.provider, m.instance.lower(), m.region.lower(), m.pricing), []).append(m)
    out: list[PriceRow] = []
    for ms in groups.values():
        ms.sort(key=lambda m: (m.usd_per_hour, m.accelerator))
        best = ms[0]
        accs = {m.accelerator for m in ms}
        notes = [f"read through gpuhunt; {best.evidence}"]
        if len(ms) > 1:
            lo, hi = ms[0].usd_per_hour, ms[-1].usd_per_hour
            notes.append(
                f"{len(ms)} offers of this instance, region and pricing kind"
                + (f" at ${lo:.6g}-{hi:.6g}/h: the lowest kept" if hi > lo else " at the same price")
            )
        if len(accs) > 1:
            notes.append(f"the offers map to {', '.join(sorted(accs))}: the cheapest one's kept")
        out.append(
            PriceRow(
                id=f"{slug(best.provider)}-{slug(best.instance)}-{slug(best.region)}-{best.pricing}-{read_on}",
                provider=best.provider,
                instance=best.instance,
                region=best.region,
                accelerator=best.accelerator,
                accelerators_per_instance=best.accelerators_per_instance,
                pricing=best.pricing,
                usd_per_hour=best.usd_per_hour,
                source_title=source_title,
                source_url=GPUHUNT_URL,
                read_on=read_on,
                notes="; ".join(notes),
            )
        )
    return sorted(out, key=lambda r: r.id)


def fold_unmapped(items: Sequence[Unmapped]) -> list[Unmapped]:
    """Unmapped offers, one line per provider, instance, GPU and reason (with how many)."""
    counts: dict[tuple[str, str, str, str], list[Unmapped]] = {}
    for u in items:
        counts.setdefault((u.provider, u.instance, u.gpu, u.reason), []).append(u)
    return sorted(
        (
            Unmapped(
                provider=v[0].provider,
                instance=v[0].instance,
                location=v[0].location,
                gpu=v[0].gpu,
                reason=v[0].reason,
                count=len(v),
            )
            for v in counts.values()
        ),
        key=lambda u: (u.provider, u.instance, u.gpu),
    )
