"""Dated price, electricity, carbon, purchase and facility rows from the catalog data (each with its source).

Every row carries ``read_on`` (the date the figure was published or observed) and, when loaded, its age in days,
so every output that uses a price can say how old it is. Files (see catalog/data/SCHEMA.md):
``prices/cloud.csv``, ``prices/purchase.csv``, ``prices/electricity.csv``, ``prices/grid_carbon.csv`` and
``facility.yaml`` (``prices/facility.yaml`` is read first when present). The rows come from the caller as a
:class:`PriceBook` (built once per catalog at the application boundary, app/tables.py).
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from aiinfra.errors import DataError, SpecError, UnknownIdError, suggest

#: facility.yaml ids used as defaults when the scenario gives no figure (ids, not values: the values are data)
DEFAULT_FACILITY = {
    "pue": "pue-uptime-global-2023",
    "rack_air_limit": "rack-air-cooling-limit",
    "switch_radix": "switch-quantum2-qm9700-radix",
    "colocation": "colocation-na-2024h2",
    "depreciation_years": "depreciation-servers-default",
    "transceiver_switch_side": "transceiver-800g-osfp-twin",
    "transceiver_nic_side": "transceiver-400g-osfp",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Dated:
    """Where a figure came from and how old it is."""

    id: str
    source_title: str
    source_url: str | None
    read_on: str
    """ISO date the figure was published or observed ('' = undated)."""
    age_days: int | None
    """Days between read_on and today (None = undated)."""


#: a cloud price older than this many days is marked stale. GPU rental prices move month to month (AWS cut P5
#: on-demand prices by up to 45 % in June 2025, prices/README.md), so a quarter-old price is flagged, not trusted.
STALE_AFTER_DAYS = 90

#: the command that replaces stale cloud prices with current offers (aiinfra.costing.refresh)
REFRESH_COMMAND = "aiinfra prices refresh"

_TODAY: contextvars.ContextVar[date | None] = contextvars.ContextVar("aiinfra_today", default=None)


def current_date() -> date:
    """The date ages are counted to: the one :func:`dated_today` set, else ``AIINFRA_TODAY`` (ISO date, for
    reproducible answers and tests), else the system date."""
    fixed = _TODAY.get()
    if fixed is not None:
        return fixed
    env = os.environ.get("AIINFRA_TODAY", "").strip()
    if env:
        try:
            return date.fromisoformat(env)
        except ValueError:
            raise SpecError("AIINFRA_TODAY", env, "not an ISO date", "set it as YYYY-MM-DD or unset it") from None
    return date.today()


@contextmanager
def dated_today(day: date) -> Iterator[date]:
    """Count every price's age to ``day`` inside the block."""
    token = _TODAY.set(day)
    try:
        yield day
    finally:
        _TODAY.reset(token)


def age_days(read_on: str, today: date | None = None) -> int | None:
    """Whole days from ``read_on`` (ISO date) to ``today`` (default :func:`current_date`); None when ``read_on`` is not
    a date (an undated row)."""
    try:
        return ((today or current_date()) - date.fromisoformat(read_on.strip())).days
    except ValueError:
        return None


def is_stale(age: int | None) -> bool:
    """A price of unknown date, or read more than :data:`STALE_AFTER_DAYS` days ago."""
    return age is None or age > STALE_AFTER_DAYS


def freshness(read_on: str, age: int | None) -> dict[str, Any]:
    """The age fields every JSON answer that uses a cloud price carries."""
    stale = is_stale(age)
    return {
        "price_read_on": read_on,
        "price_age_days": age,
        "stale": stale,
        "stale_after_days": STALE_AFTER_DAYS,
        "refresh_command": REFRESH_COMMAND if stale else None,
    }


def stale_text(age: int | None) -> str:
    """'' for a fresh price, else the stale mark with the command that refreshes it."""
    if not is_stale(age):
        return ""
    why = "date unknown" if age is None else f"older than {STALE_AFTER_DAYS} days"
    return f"STALE ({why}; run `{REFRESH_COMMAND}`)"


def _dated(r: dict[str, Any], today: date | None) -> dict[str, Any]:
    read_on = str(r.get("read_on") or "")
    return {
        "id": str(r["id"]),
        "source_title": str(r.get("source_title") or ""),
        "source_url": r.get("source_url") or None,
        "read_on": read_on,
        "age_days": age_days(read_on, today),
    }


def age_text(row: Dated) -> str:
    """'read 2026-04-01, 235 days old' (or 'undated'); a cloud price also says when it is stale."""
    if row.age_days is None:
        text = f"{row.id}, date unknown"
    else:
        text = f"{row.id}, read {row.read_on}, {row.age_days} days old"
    if isinstance(row, InstancePrice) and row.stale:
        text += ", " + stale_text(row.age_days)
    return text


@dataclass(frozen=True, kw_only=True, slots=True)
class InstancePrice(Dated):
    """One row of prices/cloud.csv: what one instance of a provider costs per hour in a region under one pricing
    kind."""

    provider: str
    instance: str
    region: str
    accelerator: str
    accelerators_per_instance: int
    """Accelerators in one instance (the unit billed)."""
    pricing: str
    """on-demand | spot | reserved-1y | reserved-3y"""
    usd_per_hour: float
    """Whole instance."""
    notes: str = ""

    @property
    def offer_key(self) -> tuple[str, str, str, str]:
        """What makes two rows the same offer: provider, instance, region, pricing kind."""
        return offer_key(self.provider, self.instance, self.region, self.pricing)

    @property
    def stale(self) -> bool:
        """Read more than :data:`STALE_AFTER_DAYS` days ago, or undated (:func:`is_stale`)."""
        return is_stale(self.age_days)

    @property
    def conflicting(self) -> bool:
        """The catalog flags this row CONFLICT: its sources disagree (prices/README.md)."""
        return "CONFLICT" in self.notes

    @property
    def usd_per_accelerator_hour(self) -> float:
        """The instance's hourly price shared evenly over its accelerators (USD per accelerator-hour)."""
        return self.usd_per_hour / self.accelerators_per_instance


@dataclass(frozen=True, kw_only=True, slots=True)
class PurchasePrice(Dated):
    """One row of prices/purchase.csv: the list price of one item bought outright (a system, an accelerator, a switch, a
    transceiver)."""

    item: str
    kind: str
    """system | accelerator | switch | transceiver | nic | cable | storage ..."""
    accelerator: str
    """Catalog accelerator id the item holds or is ('' when none, e.g. a switch)."""
    unit_price_usd: float
    """Price of one unit of the item."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ElectricityPrice(Dated):
    """One row of prices/electricity.csv: the average electricity price of a region for one customer sector."""

    region: str
    sector: str
    """Customer sector the average covers (e.g. industrial, commercial)."""
    usd_per_kwh: float


@dataclass(frozen=True, kw_only=True, slots=True)
class GridCarbon(Dated):
    """One row of prices/grid_carbon.csv: the location-based carbon intensity of the grid feeding a cloud region."""

    provider: str
    region: str
    location: str
    """Where the region's data centres are (e.g. Iowa); may be ''."""
    g_co2e_per_kwh: float


@dataclass(frozen=True, kw_only=True, slots=True)
class FacilityFigure(Dated):
    """One facility.yaml row (PUE, colocation price, rack power limit, switch radix, depreciation ...) in its own
    unit."""

    value_by_unit: dict[str, float]
    """{unit: value} with the row's own unit (kw, ratio, usd_per_kw_month, years, w, ports_400g ...)."""

    @property
    def unit(self) -> str:
        """The row's unit (the one key of ``value_by_unit``)."""
        return next(iter(self.value_by_unit))

    @property
    def value(self) -> float:
        """The row's value in :attr:`unit`; callers that need a given unit use :meth:`in_unit`, which checks it."""
        return next(iter(self.value_by_unit.values()))

    def in_unit(self, unit: str) -> float:
        """The value, after checking the row is in ``unit`` (a data-unit mismatch is a data bug)."""
        if unit not in self.value_by_unit:
            raise DataError(f"facility row {self.id} is in {self.unit}, expected {unit}")
        return self.value_by_unit[unit]


def offer_key(provider: str, instance: str, region: str, pricing: str) -> tuple[str, str, str, str]:
    """Provider, instance, region and pricing kind compared without case (Azure writes ``Standard_`` sizes in
    either case)."""
    return (provider.strip().lower(), instance.strip().lower(), region.strip().lower(), pricing.strip().lower())


def newest_per_offer(rows: list[InstancePrice]) -> list[InstancePrice]:
    """One row per offer (:func:`offer_key`): the one read last; on the same date the later row in file order
    wins (a refreshed or user overlay comes after the shipped rows). Undated rows lose to dated ones."""
    best: dict[tuple[str, str, str, str], tuple[str, int]] = {}
    for i, p in enumerate(rows):
        rank = (p.read_on if p.age_days is not None else "", i)
        if p.offer_key not in best or rank >= best[p.offer_key]:
            best[p.offer_key] = rank
    keep = {i for _, i in best.values()}
    return [p for i, p in enumerate(rows) if i in keep]


@dataclass(frozen=True, slots=True, eq=False)
class PriceBook:
    """The price rows of one catalog: ``read(name)`` gives the rows of ``prices/<name>`` (rows without an id
    dropped), ``facility_rows()`` prices/facility.yaml's rows then facility.yaml's rows whose id the first does not
    have. Built once per catalog at the application boundary (app/tables.py); the typed rows of each day are
    memoised here."""

    read: Callable[[str], tuple[dict[str, Any], ...]]
    facility_rows: Callable[[], tuple[dict[str, Any], ...]]
    memo: dict[str, Any] = field(default_factory=dict)

    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        """``memo[key]``, built by ``build()`` on first use (the typed rows are built once per book and day)."""
        if key not in self.memo:
            self.memo[key] = build()
        return self.memo[key]


def _float(r: dict[str, str], key: str, file: str) -> float:
    try:
        return float(r[key])
    except (KeyError, TypeError, ValueError):
        raise DataError(f"prices/{file} row {r.get('id')}: {key} = {r.get(key)!r} is not a number") from None


def every_cloud_price(book: PriceBook, today: date | None = None) -> list[InstancePrice]:
    """Every row of prices/cloud.csv in ``book``, in file order, superseded ones included (a shipped
    row a newer refreshed row of the same offer replaces is still shown by `catalog show`)."""

    def build() -> list[InstancePrice]:
        return [
            InstancePrice(
                **_dated(r, day),
                provider=r["provider"],
                instance=r["instance"],
                region=r["region"],
                accelerator=r["accelerator"],
                accelerators_per_instance=int(_float(r, "accelerators_per_instance", "cloud.csv")),
                pricing=r["pricing"],
                usd_per_hour=_float(r, "usd_per_hour", "cloud.csv"),
                notes=str(r.get("notes") or ""),
            )
            for r in book.read("cloud.csv")
        ]

    day = today or current_date()
    out: list[InstancePrice] = book.cached(f"every_cloud_price|{day.isoformat()}", build)
    return out


def _all_cloud_prices(book: PriceBook, today: date | None) -> list[InstancePrice]:
    """Every offer of prices/cloud.csv in ``book``, its newest row only (:func:`newest_per_offer`)."""
    day = today or current_date()
    out: list[InstancePrice] = book.cached(
        f"cloud_prices|{day.isoformat()}", lambda: newest_per_offer(every_cloud_price(book, day))
    )
    return out


def cloud_prices(
    book: PriceBook,
    accelerator: str | None,
    today: date | None = None,
    providers: tuple[str, ...] = (),
    pricing: tuple[str, ...] = (),
    field: str = "cost.providers",
) -> list[InstancePrice]:
    """Instance prices for one accelerator (None: every accelerator), cheapest per accelerator-hour first, the
    newest row of each offer only. A provider the catalog does not price at all is an error on ``field`` (not an
    empty answer)."""
    every = _all_cloud_prices(book, today)
    known = sorted({p.provider for p in every})
    unknown = [p for p in providers if p not in known]
    if unknown:
        raise SpecError(field, unknown[0], "no such provider in prices/cloud.csv", f"use some of {', '.join(known)}")
    out = [
        p
        for p in every
        if (accelerator is None or p.accelerator == accelerator)
        and (not providers or p.provider in providers)
        and (not pricing or p.pricing in pricing)
    ]
    return sorted(out, key=lambda p: (p.usd_per_accelerator_hour, p.id))


def purchase_prices(book: PriceBook, kind: str | None = None, today: date | None = None) -> list[PurchasePrice]:
    """Every row of prices/purchase.csv in ``book``, in file order, or only those of ``kind`` (system, accelerator,
    switch ...)."""
    return [
        PurchasePrice(
            **_dated(r, today),
            item=r.get("item", ""),
            kind=r.get("kind", ""),
            accelerator=r.get("accelerator", "") or "",
            unit_price_usd=_float(r, "unit_price_usd", "purchase.csv"),
        )
        for r in book.read("purchase.csv")
        if kind is None or r.get("kind") == kind
    ]


def purchase_for(
    book: PriceBook, item_or_accelerator: str, kind: str, today: date | None = None
) -> PurchasePrice | None:
    """The purchase row of ``kind`` whose item or accelerator is the given id (the most recent if several)."""
    rows = [p for p in purchase_prices(book, kind, today) if item_or_accelerator in (p.item, p.accelerator, p.id)]
    return max(rows, key=lambda p: p.read_on) if rows else None


def purchase(book: PriceBook, id_: str, field: str, today: date | None = None) -> PurchasePrice:
    """The purchase row with id ``id_``; an :class:`UnknownIdError` on ``field`` (with the nearest ids) when there is
    none."""
    rows = {p.id: p for p in purchase_prices(book, None, today)}
    if id_ in rows:
        return rows[id_]
    raise UnknownIdError(field, id_, "purchase prices", suggest(id_, list(rows)))


def electricity_prices(book: PriceBook, today: date | None = None) -> list[ElectricityPrice]:
    """Every row of prices/electricity.csv in ``book``, in file order."""
    return [
        ElectricityPrice(
            **_dated(r, today),
            region=r["region"],
            sector=r["sector"],
            usd_per_kwh=_float(r, "usd_per_kwh", "electricity.csv"),
        )
        for r in book.read("electricity.csv")
    ]


def electricity(
    book: PriceBook, id_: str, field: str = "electricity_price", today: date | None = None
) -> ElectricityPrice:
    """The electricity price row with id ``id_``; an :class:`UnknownIdError` on ``field`` (with the nearest ids) when
    there is none."""
    rows = {e.id: e for e in electricity_prices(book, today)}
    if id_ in rows:
        return rows[id_]
    raise UnknownIdError(field, id_, "electricity prices", suggest(id_, list(rows)))


def grid_carbon_rows(book: PriceBook, today: date | None = None) -> list[GridCarbon]:
    """Every row of prices/grid_carbon.csv in ``book``, in file order."""
    return [
        GridCarbon(
            **_dated(r, today),
            provider=r["provider"],
            region=r["region"],
            location=r.get("location", ""),
            g_co2e_per_kwh=_float(r, "g_co2e_per_kwh", "grid_carbon.csv"),
        )
        for r in book.read("grid_carbon.csv")
    ]


def facility_ids(book: PriceBook) -> list[str]:
    """The ids of the facility rows in ``book`` (prices/facility.yaml's first), for "did you mean" suggestions."""
    return [str(r["id"]) for r in book.facility_rows()]


def facility(book: PriceBook, id_: str, field: str = "facility", today: date | None = None) -> FacilityFigure:
    """One facility row (PUE, colocation, rack limit, radix, depreciation, transceiver power ...)."""
    for r in book.facility_rows():
        if r.get("id") != id_:
            continue
        srcs: list[Any] = list(r.get("sources") or [])
        src: dict[str, Any] = srcs[0] if srcs and isinstance(srcs[0], dict) else {}
        read_on = str(src.get("read_on") or "")
        try:
            value = float(r["value"])
        except (KeyError, TypeError, ValueError):
            raise DataError(f"facility row {id_}: value {r.get('value')!r} is not a number") from None
        return FacilityFigure(
            id=id_,
            source_title=str(src.get("title") or ""),
            source_url=src.get("url") or None,
            read_on=read_on,
            age_days=age_days(read_on, today),
            value_by_unit={str(r.get("unit") or ""): value},
        )
    raise UnknownIdError(field, id_, "facility rows", suggest(id_, facility_ids(book)))


def facility_or_none(book: PriceBook, id_: str, today: date | None = None) -> FacilityFigure | None:
    """:func:`facility`, or None when ``book`` has no row ``id_`` (for optional figures)."""
    try:
        return facility(book, id_, today=today)
    except UnknownIdError:
        return None
