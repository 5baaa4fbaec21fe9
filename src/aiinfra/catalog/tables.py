"""The boundary's binding of one catalog to the domain: :func:`domain_tables` builds the
:class:`~aiinfra.specs.tables.DomainTables` every cluster resolved against the catalog carries (catalog/resolve.py),
once per catalog instance; each of its lookups reads that catalog, not whichever is active when it runs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from aiinfra.catalog import store
from aiinfra.specs.tables import DomainTables

if TYPE_CHECKING:
    from aiinfra.specs.accuracy import AccuracyNote
    from aiinfra.specs.calibration import Factors
    from aiinfra.specs.hardware import AcceleratorSpec, ClusterSpec


@contextmanager
def _active(cat: store.Catalog) -> Iterator[None]:
    """``cat`` active for the block, unless it already is (the module-level lookups then read it)."""
    if store.active() is cat:
        yield
        return
    with store.use(cat):
        yield


def domain_tables(cat: store.Catalog | None = None) -> DomainTables:
    """The tables of ``cat`` (default: the active catalog), built once per catalog instance."""
    c = cat if cat is not None else store.active()
    return c.memo("domain_tables", lambda: _build(c))


def _build(cat: store.Catalog) -> DomainTables:
    def accelerators() -> Mapping[str, AcceleratorSpec]:
        out: Mapping[str, AcceleratorSpec] = cat.rows("accelerators")
        return out

    def kernel_overhead_files() -> tuple[str, ...]:
        return cat.memo(
            "kernel_overhead_files", lambda: tuple(sorted(p.name for p in cat.root.glob("kernel_overheads_*.yaml")))
        )

    def collective_latency() -> Mapping[str, Mapping[str, Any]]:
        return cat.memo(
            "collective_latency_by_id", lambda: {str(r.get("id")): r for r in cat.raw_rows("collective_latency")}
        )

    def accuracy_notes() -> tuple[AccuracyNote, ...]:
        from aiinfra import catalog

        with _active(cat):
            return catalog.accuracy_notes()

    def calibration() -> Mapping[tuple[str, str, str | None], Factors]:
        from aiinfra.catalog.calibration import rows_table

        return cat.memo("calibration.factors", lambda: rows_table(cat))

    def cluster_for(accelerator: str, count: int) -> ClusterSpec:
        from aiinfra.catalog.resolve import cluster_for as resolve

        with _active(cat):
            return resolve(accelerator, count)

    return DomainTables(
        accelerators=accelerators,
        file_rows=cat.file_rows,
        efficiency_files=lambda: tuple(cat.efficiency_files()),
        kernel_overhead_files=kernel_overhead_files,
        collective_latency=collective_latency,
        find_engine=cat.engine,
        find_model=cat.model,
        runtime_reserve=cat.runtime_reserve,
        accuracy_notes=accuracy_notes,
        calibration=calibration,
        cluster_for=cluster_for,
    )
