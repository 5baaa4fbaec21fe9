"""The catalog's side of the boundary: :class:`CatalogTables` implements the domain's
:class:`~aiinfra.specs.tables.DomainTables` over one catalog instance, and :func:`domain_tables` builds it once per
catalog; every cluster resolved against the catalog carries it (catalog/resolve.py). Each lookup reads that catalog,
not whichever is active when it runs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar, cast

from aiinfra.catalog import store
from aiinfra.specs.tables import Applies, DomainTables, Rows

if TYPE_CHECKING:
    from aiinfra.specs.accuracy import AccuracyNote
    from aiinfra.specs.calibration import Factors
    from aiinfra.specs.engine import EngineProfile, RuntimeReserve
    from aiinfra.specs.hardware import AcceleratorSpec, ClusterSpec
    from aiinfra.specs.model import ModelArch

T = TypeVar("T")


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
    tables: DomainTables = c.memo("domain_tables", lambda: CatalogTables(c))
    return tables


class CatalogTables:
    """:class:`~aiinfra.specs.tables.DomainTables` over one catalog (its memo holds the parsed tables)."""

    __slots__ = ("_cat", "_kept", "_trial")

    def __init__(self, cat: store.Catalog, trial: Factors | None = None, kept: dict[type, object] | None = None):
        self._cat = cat
        self._trial = trial
        self._kept: dict[type, object] = {} if kept is None else kept

    def __repr__(self) -> str:
        return f"CatalogTables({self._cat!r})"

    def accelerators(self) -> Mapping[str, AcceleratorSpec]:
        out: Mapping[str, AcceleratorSpec] = self._cat.rows("accelerators")
        return out

    def file_rows(self, name: str) -> Rows:
        return self._cat.file_rows(name)

    def efficiency_files(self) -> tuple[str, ...]:
        return self._cat.memo("efficiency_files", lambda: tuple(self._cat.efficiency_files()))

    def kernel_overhead_files(self) -> tuple[str, ...]:
        root = self._cat.root
        return self._cat.memo(
            "kernel_overhead_files", lambda: tuple(sorted(p.name for p in root.glob("kernel_overheads_*.yaml")))
        )

    def collective_latency(self) -> Mapping[str, Mapping[str, Any]]:
        cat = self._cat
        return cat.memo(
            "collective_latency_by_id", lambda: {str(r.get("id")): r for r in cat.raw_rows("collective_latency")}
        )

    def engine(self, name: str, field: str = "inference.engine") -> EngineProfile:
        return self._cat.engine(name, field)

    def model(self, model_id: str, field: str = "model") -> ModelArch:
        return self._cat.model(model_id, field)

    def runtime_reserve(self) -> RuntimeReserve | None:
        return self._cat.runtime_reserve()

    def _accuracy_notes(self) -> tuple[AccuracyNote, ...]:
        from aiinfra import catalog

        with _active(self._cat):
            return catalog.accuracy_notes()

    def accuracy_notes_for(self, model_id: str, engine: str, accelerator_id: str) -> list[str]:
        return [n.note for n in self._accuracy_notes() if n.covers(model_id, engine, accelerator_id)]

    def factors_for(self, applies: Applies, accelerator: str, engine: str | None = None) -> Factors:
        if self._trial is not None:
            return self._trial
        from aiinfra.catalog.calibration import NEUTRAL, rows_table

        cat = self._cat
        table: dict[tuple[str, str, str | None], Factors] = cat.memo("calibration.factors", lambda: rows_table(cat))
        if not table:
            return NEUTRAL
        return table.get((applies, accelerator, engine)) or table.get((applies, accelerator, None)) or NEUTRAL

    def with_trial(self, factors: Factors) -> DomainTables:
        return CatalogTables(self._cat, factors, self._kept)

    def cluster_for(self, accelerator: str, count: int) -> ClusterSpec:
        from aiinfra.catalog.resolve import cluster_for

        with _active(self._cat):
            return cluster_for(accelerator, count)

    def cached(self, kind: type[T]) -> T | None:
        return cast("T | None", self._kept.get(kind))

    def keep(self, value: T) -> T:
        self._kept[type(value)] = value
        return value
