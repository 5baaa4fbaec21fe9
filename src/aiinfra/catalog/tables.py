"""The catalog's side of the boundary: :class:`CatalogTables` implements the domain's
:class:`~aiinfra.specs.tables.DomainTables` over one catalog instance, and :func:`domain_tables` builds it once per
catalog; every cluster resolved against the catalog carries it (catalog/resolve.py). Each lookup reads that catalog,
not whichever is active when it runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar, cast

from aiinfra.catalog import store
from aiinfra.specs.tables import Applies, DomainTables, Rows

if TYPE_CHECKING:
    from aiinfra.specs.accuracy import AccuracyNote, NoteQuery
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
        """The catalog's accelerator specs by id."""
        out: Mapping[str, AcceleratorSpec] = self._cat.rows("accelerators")
        return out

    def file_rows(self, name: str) -> Rows:
        """The parsed rows of one data file of the catalog (by file name)."""
        return self._cat.file_rows(name)

    def efficiency_files(self) -> tuple[str, ...]:
        """The efficiency data files (efficiency*.yaml, overlays' included), in reading order."""
        return self._cat.memo("efficiency_files", lambda: tuple(self._cat.efficiency_files()))

    def file_derived(self, name: str, slot: str, build: Callable[[Rows], T], code: str) -> T:
        """``build`` of one data file's rows, through the on-disk cache for a shipped file (Catalog.derived)."""
        return self._cat.derived(name, slot, build, code)

    def kernel_overhead_files(self) -> tuple[str, ...]:
        """The kernel_overheads_<part>.yaml file names, sorted."""
        root = self._cat.root
        return self._cat.memo(
            "kernel_overhead_files", lambda: tuple(sorted(p.name for p in root.glob("kernel_overheads_*.yaml")))
        )

    def collective_latency(self) -> Mapping[str, Mapping[str, Any]]:
        """collective_latency.yaml rows by id, indexed once per catalog."""
        cat = self._cat
        return cat.memo(
            "collective_latency_by_id", lambda: {str(r.get("id")): r for r in cat.raw_rows("collective_latency")}
        )

    def engine(self, name: str, field: str = "inference.engine") -> EngineProfile:
        """The engine profile ``name``; an unknown name is an error naming ``field``."""
        return self._cat.engine(name, field)

    def model(self, model_id: str, field: str = "model") -> ModelArch:
        """The model architecture ``model_id``; an unknown id is an error naming ``field``."""
        return self._cat.model(model_id, field)

    def runtime_reserve(self) -> RuntimeReserve | None:
        """The serving framework's memory reserve row (None when the catalog has none)."""
        return self._cat.runtime_reserve()

    def _accuracy_notes(self) -> tuple[AccuracyNote, ...]:
        from aiinfra import catalog

        with _active(self._cat):
            return catalog.accuracy_notes()

    def accuracy_notes_for(self, q: NoteQuery) -> list[str]:
        """The shipped accuracy notes that cover the scenario ``q``."""
        return [n.note for n in self._accuracy_notes() if n.covers(q)]

    def factors_for(self, applies: Applies, accelerator: str, engine: str | None = None) -> Factors:
        """The user's calibration factors for this accelerator (and engine); a fit's trial factors while it tries them;
        neutral without either."""
        if self._trial is not None:
            return self._trial
        from aiinfra.catalog.calibration import NEUTRAL, rows_table

        cat = self._cat
        table: dict[tuple[str, str, str | None], Factors] = cat.memo("calibration.factors", lambda: rows_table(cat))
        if not table:
            return NEUTRAL
        return table.get((applies, accelerator, engine)) or table.get((applies, accelerator, None)) or NEUTRAL

    def with_trial(self, factors: Factors) -> DomainTables:
        """These tables with ``factors`` answering every calibration lookup (a fit's trial), sharing the kept
        tables."""
        return CatalogTables(self._cat, factors, self._kept)

    def cluster_for(self, accelerator: str, count: int, system: str | None = None) -> ClusterSpec:
        """``count`` accelerators of ``accelerator`` resolved against this catalog, in ``system`` when given."""
        from aiinfra.catalog.resolve import cluster_for

        with _active(self._cat):
            return cluster_for(accelerator, count, system)

    def cached(self, kind: type[T]) -> T | None:
        """The derived table of type ``kind`` kept on these tables (None before it is built)."""
        return cast("T | None", self._kept.get(kind))

    def keep(self, value: T) -> T:
        """Keep a derived table (one per type) for later lookups; returns it."""
        self._kept[type(value)] = value
        return value
