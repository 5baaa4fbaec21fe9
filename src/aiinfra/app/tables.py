"""The boundary between the catalog and the domain: the typed tables a question needs, built once per catalog
from the active one (:func:`aiinfra.catalog.active`) and handed down as arguments. Below app/, no module reads the
catalog; each takes what it needs from here (a price book, accelerator generations, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiinfra import catalog
from aiinfra.catalog.resolve import serving_tables as serving_tables  # re-exported: the simulator's tables

if TYPE_CHECKING:  # the domain modules load only where a question needs them (start-up time)
    from aiinfra.analytic.efficiency import EfficiencyTable
    from aiinfra.costing.prices import PriceBook
    from aiinfra.reliability.rates import ReliabilityTable
    from aiinfra.specs.hardware import AcceleratorSpec
    from aiinfra.specs.tables import DomainTables
    from aiinfra.validation.types import RowTables


def price_book() -> PriceBook:
    """The price rows of the active catalog (prices/*.csv; facility rows: prices/facility.yaml's, then
    facility.yaml's whose id the first does not have), built once per catalog."""
    cat = catalog.active()

    def facility_rows() -> tuple[dict[str, Any], ...]:
        def build() -> tuple[dict[str, Any], ...]:
            rows = list(cat.file_rows("prices/facility.yaml"))
            seen = {r.get("id") for r in rows}
            rows.extend(r for r in cat.raw_rows("facility") if r.get("id") not in seen)
            return tuple(rows)

        out: tuple[dict[str, Any], ...] = cat.memo("facility_rows", build)
        return out

    def build() -> PriceBook:
        from aiinfra.costing.prices import PriceBook

        return PriceBook(read=lambda name: cat.file_rows(f"prices/{name}"), facility_rows=facility_rows)

    return cat.memo("price_book", build)


def generations() -> dict[str, str | None]:
    """Accelerator id -> its generation in the active catalog (the regime key of the error bands)."""
    return catalog.generations()


def reliability_table() -> ReliabilityTable:
    """reliability.yaml's rows and the accelerators of the active catalog, built once per catalog."""
    cat = catalog.active()

    def build() -> ReliabilityTable:
        from aiinfra.reliability.rates import ReliabilityTable

        return ReliabilityTable(rows=cat.raw_rows("reliability"), parts=cat.rows("accelerators"))

    return cat.memo("reliability_table", build)


def accelerators() -> dict[str, AcceleratorSpec]:
    """The active catalog's accelerators by id (the parts a question may name besides its scenario's)."""
    return catalog.rows("accelerators")


def row_tables() -> RowTables:
    """What predicting validation rows reads from the active catalog (models, engine profiles, benchmarks, the
    runtime reserve, hardware and scenario resolution), built once per catalog."""
    cat = catalog.active()

    def build() -> RowTables:
        from aiinfra.catalog.resolve import cluster_for, resolve, resolve_cluster
        from aiinfra.specs.scenario import parse_scenario
        from aiinfra.validation.types import RowTables

        return RowTables(
            models=catalog.rows("models"),
            engines={name: catalog.engine(name) for name in cat.engine_names()},
            benchmarks=catalog.rows("benchmarks"),
            runtime_reserve=catalog.runtime_reserve(),
            resolve_cluster=resolve_cluster,
            cluster_for=cluster_for,
            scenario_of=lambda data: resolve(parse_scenario(dict(data))),
            serving_tables=serving_tables,
        )

    return cat.memo("row_tables", build)


def domain_tables() -> DomainTables:
    """The active catalog's tables as the domain reads them (what every cluster resolved against it carries)."""
    from aiinfra.catalog.tables import domain_tables as build

    return build()


def efficiency_table() -> EfficiencyTable:
    """The active catalog's efficiency table (analytic/efficiency.py), built once per catalog."""
    from aiinfra.analytic.efficiency import table

    return table(domain_tables())
