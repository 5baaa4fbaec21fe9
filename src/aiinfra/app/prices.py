"""Price questions: refresh the cloud prices from the providers, and what changed against the shipped rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from aiinfra import catalog
from aiinfra.app.base import Result
from aiinfra.app.tables import price_book
from aiinfra.catalog.store import PRICES_DIR_ENV, refreshed_prices_dir
from aiinfra.costing.offers import NameTable
from aiinfra.costing.price_diff import OfferChange, offer_changes
from aiinfra.costing.prices import STALE_AFTER_DAYS, InstancePrice, cloud_prices, freshness
from aiinfra.costing.refresh import DEFAULT_PROVIDERS, Fetch, RefreshReport, files_fetcher, gpuhunt_fetcher, refresh
from aiinfra.errors import AiinfraError, SpecError
from aiinfra.report.render import jsonable

#: providers `aiinfra prices refresh` reads when none are named
REFRESH_PROVIDERS = DEFAULT_PROVIDERS

#: the shipped examples (a source checkout; an installed package has none: give examples_dir)
EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "examples"


def offer_name_table() -> NameTable:
    """prices/offer_names.yaml of the active catalog, its accelerators and MIG profiles, and the instances the
    shipped price rows map: what naming a provider's offer needs (costing.offers.map_offer)."""

    def build() -> NameTable:
        rows = catalog.file_rows("prices/offer_names.yaml")
        shipped: dict[tuple[str, str], set[str]] = {}
        for r in catalog.Catalog.default().file_rows("prices/cloud.csv"):
            shipped.setdefault((r["provider"], r["instance"].lower()), set()).add(r["accelerator"])
        return NameTable(
            gpus=tuple(r for r in rows if r.get("kind") == "gpu"),
            tpus=tuple(r for r in rows if r.get("kind") == "tpu"),
            providers={str(r["gpuhunt_provider"]): str(r["provider"]) for r in rows if r.get("kind") == "provider"},
            shipped_instances={k: next(iter(v)) for k, v in shipped.items() if len(v) == 1},
            parts=catalog.rows("accelerators"),
            mig_profiles=tuple(
                (
                    tuple(str(a) for a in raw.get("accelerators", [])),
                    tuple(str(p["name"]) for p in raw["profiles"]),
                )
                for raw in catalog.raw_rows("mig")
            ),
        )

    return catalog.active().memo("offer_names", build)


@dataclass(frozen=True, kw_only=True, slots=True)
class PricesRefreshResult(Result):
    """The answer of :func:`prices_refresh`."""

    report: RefreshReport
    default_overlay: bool
    """Whether the folder written is the one every command reads by default (else use --catalog-overlay)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra prices refresh --json`` object: the folder written and whether commands read it by default, the
        source and providers (failed ones with why), the rows written and the offers left unmapped."""
        r = self.report
        return {
            "out_dir": str(r.out_dir),
            "read_on": r.read_on,
            "source": r.source,
            "providers": list(r.providers),
            "failed": dict(r.failed),
            "offers_read": r.offers_read,
            "rows_written": len(r.rows),
            "used_by_default": self.default_overlay,
            "rows": [jsonable(x) for x in r.rows],
            "unmapped": [jsonable(u) for u in r.unmapped],
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """The price rows written."""
        return [jsonable(x) for x in self.report.rows]


def prices_refresh(
    providers: list[str] | None = None,
    out: str | Path | None = None,
    offers_dir: str | Path | None = None,
    today: date | None = None,
    fetch: Fetch | None = None,
) -> PricesRefreshResult:
    """Read current offers (through gpuhunt, or recorded gpuhunt catalog files in ``offers_dir``, or any
    ``fetch(provider) -> offers``), map them to catalog accelerators and write them as a price overlay into
    ``out`` (default: the refreshed-prices folder every command reads). One provider failing is named and the others
    written; none readable raises :class:`aiinfra.costing.refresh.RefreshError` and writes nothing."""
    default = refreshed_prices_dir()
    folder = Path(out) if out is not None else default
    if folder is None:
        raise SpecError("--out", None, f"{PRICES_DIR_ENV}=off and no --out given", "give --out DIR")
    if folder.exists() and not folder.is_dir():
        raise SpecError("--out", str(folder), "is a file, not a folder", "give a folder (it is created if absent)")
    if fetch is None:
        fetch = files_fetcher(Path(offers_dir)) if offers_dir is not None else gpuhunt_fetcher()
    names = [p.strip() for p in (providers or list(DEFAULT_PROVIDERS)) if p.strip()]
    source = "recorded gpuhunt catalog files" if offers_dir else "gpuhunt"
    report = refresh(names, folder, fetch, today, source, name_table=offer_name_table())
    catalog.Catalog.forget_user_default()  # this process's next answer reads the rows just written
    used = default is not None and folder.resolve() == default.resolve()
    return PricesRefreshResult(report=report, default_overlay=used)


@dataclass(frozen=True, kw_only=True, slots=True)
class ExampleEffect:
    """The cheapest answer of one shipped example with the shipped prices and with the prices in use."""

    example: str
    """The shipped example file."""
    question: str
    """cost (cheapest offer's compute bill), tco (cheapest cloud line per month) or capacity (cheapest on-demand
    price per accelerator-hour of the example's accelerator: its deployment search is not re-run)."""
    unit: str
    """Unit of the before and after figures."""
    before: dict[str, Any] | None
    """The cheapest answer with the shipped prices (None when there is none)."""
    after: dict[str, Any] | None
    """The cheapest answer with the prices in use (None when there is none)."""
    error: str = ""
    """Why the example could not be answered ('' when it was)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PriceDiffResult(Result):
    """The answer of :func:`price_diff`."""

    changes: tuple[OfferChange, ...]
    shipped_rows: int
    """Rows of the shipped prices/cloud.csv."""
    current_rows: int
    """Rows of prices/cloud.csv in use (overlays included)."""
    overlays: tuple[str, ...]
    """The overlay folders in use (refreshed prices, --catalog-overlay)."""
    examples: tuple[ExampleEffect, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra catalog list prices --diff --json`` object: the overlays in use, row counts, each changed offer
        before and after, and the effect on each shipped example's cheapest answer."""

        def side(p: InstancePrice | None) -> dict[str, Any] | None:
            if p is None:
                return None
            return {
                "id": p.id,
                "usd_per_hour": p.usd_per_hour,
                "usd_per_accelerator_hour": p.usd_per_accelerator_hour,
                "accelerators_per_instance": p.accelerators_per_instance,
                "source": p.source_title,
                **freshness(p.read_on, p.age_days),
            }

        return {
            "kind": "prices-diff",
            "overlays": list(self.overlays),
            "shipped_rows": self.shipped_rows,
            "rows_in_use": self.current_rows,
            "stale_after_days": STALE_AFTER_DAYS,
            "changes": [
                {
                    "provider": c.provider,
                    "instance": c.instance,
                    "region": c.region,
                    "pricing": c.pricing,
                    "accelerator": c.accelerator,
                    "old": side(c.old),
                    "new": side(c.new),
                    "change_frac": c.change_frac,
                }
                for c in self.changes
            ],
            "examples": [jsonable(e) for e in self.examples],
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per changed or new offer."""
        return [
            {k: v for k, v in c.items() if k not in ("old", "new")}
            | {"old_id": (c["old"] or {}).get("id"), "new_id": c["new"]["id"]}
            for c in self.to_dict()["changes"]
        ]


def _question(path: Path) -> str | None:
    import yaml

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(doc, dict):
        return None
    if path.name.startswith("capacity-"):
        return "capacity"
    if "cost" in doc and not path.name.startswith("tco-"):
        return "cost"
    if "tco" in doc:
        return "tco"
    return None


def _answer(question: str, path: Path) -> tuple[str, dict[str, Any] | None]:
    """The cheapest answer of ``question`` for the example in the active catalog."""
    from aiinfra.app.scenario import load_scenario

    sc = load_scenario(str(path))
    if question == "cost":
        from aiinfra.app.cost import cost

        best = cost(sc).cheapest
        if best is None:
            return "usd", None
        p = best.price
        return "usd", {"price_id": p.id, "value": best.compute_usd, **freshness(p.read_on, p.age_days)}
    if question == "tco":
        from aiinfra.app.tco import tco

        lines = tco(sc).cloud_lines
        if not lines:
            return "usd_per_month", None
        ln = lines[0]
        return "usd_per_month", {
            "price_id": ln.source_id,
            "pricing": ln.pricing,
            "value": ln.monthly_usd,
            **freshness(ln.read_on, ln.age_days),
        }
    acc = sc.cluster.accelerator.id
    prices = cloud_prices(price_book(), acc, pricing=("on-demand",))
    if not prices:
        return "usd_per_accelerator_hour", None
    p = prices[0]
    return "usd_per_accelerator_hour", {
        "price_id": p.id,
        "value": p.usd_per_accelerator_hour,
        **freshness(p.read_on, p.age_days),
    }


def _effects(examples_dir: Path, shipped: catalog.Catalog, current: catalog.Catalog) -> list[ExampleEffect]:
    out: list[ExampleEffect] = []
    for path in sorted(examples_dir.glob("*.yaml")):
        question = _question(path)
        if question is None:
            continue
        try:
            with catalog.use(shipped):
                unit, before = _answer(question, path)
            with catalog.use(current):
                _, after = _answer(question, path)
        except AiinfraError as exc:
            out.append(
                ExampleEffect(example=path.name, question=question, unit="", before=None, after=None, error=str(exc))
            )
            continue
        out.append(ExampleEffect(example=path.name, question=question, unit=unit, before=before, after=after))
    return out


def price_diff(examples_dir: str | Path | None = None, examples: bool = True) -> PriceDiffResult:
    """Per offer, the shipped row against the row in use (refreshed prices and any overlay: old -> new), and the
    cheapest answer of each shipped example (cost, tco, capacity) with either set of rows."""
    current = catalog.active()
    shipped = current.shipped_base
    with catalog.use(shipped):
        old = cloud_prices(price_book(), None)
    new = cloud_prices(price_book(), None)
    effects: list[ExampleEffect] = []
    if examples:
        folder = Path(examples_dir) if examples_dir is not None else EXAMPLES_DIR
        if not folder.is_dir():
            raise SpecError(
                "--examples",
                str(folder),
                "not a folder of example scenarios",
                "give the examples/ folder of a source checkout, or --no-examples",
            )
        effects = _effects(folder, shipped, current)
    return PriceDiffResult(
        changes=tuple(offer_changes(old, new)),
        shipped_rows=len(old),
        current_rows=len(new),
        overlays=tuple(str(d) for d in current.overlay_dirs),
        examples=tuple(effects),
    )
