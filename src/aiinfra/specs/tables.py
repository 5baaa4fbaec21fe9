"""What the domain reads of the catalog, as an interface: the tables every resolved cluster carries
(:attr:`aiinfra.specs.hardware.ClusterSpec.tables`).

Below the application layer no module reads the catalog: a step-time model, a collective, a planner asks the
cluster it was given for the rows it needs (efficiency curves, collective-latency rows, kernel overheads, engine
profiles, the runtime reserve, models, accuracy notes, calibration factors). The domain declares the lookups here;
the catalog implements them over one catalog instance (catalog/tables.py ``CatalogTables``, built once per catalog
at resolution), so an overlay's rows reach exactly the clusters resolved against it, and the calls go down the
layers. What the domain derives from the rows (the efficiency table and its memos, the memory fits, the
kernel-overhead figures per part) is kept on the tables object, one value per type (:meth:`DomainTables.cached`,
:meth:`DomainTables.keep`), and so built once per catalog.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from aiinfra.specs.accuracy import NoteQuery
    from aiinfra.specs.calibration import Factors
    from aiinfra.specs.engine import EngineProfile, RuntimeReserve
    from aiinfra.specs.hardware import AcceleratorSpec, ClusterSpec
    from aiinfra.specs.model import ModelArch

T = TypeVar("T")

Applies = Literal["inference", "training"]
"""Which planner a calibration row scales."""

Rows = tuple[dict[str, Any], ...]


class DomainTables(Protocol):
    """One catalog's tables as the domain reads them (each lookup reads that catalog only, lazily, memoised)."""

    def accelerators(self) -> Mapping[str, AcceleratorSpec]:
        """Every accelerator row by id (family, generation, vendor: the donor taxonomy of efficiency curves)."""
        ...

    def file_rows(self, name: str) -> Rows:
        """The rows of one data file by name (``efficiency_*.yaml``, ``kernel_overheads_<part>.yaml``), overlays
        applied."""
        ...

    def efficiency_files(self) -> tuple[str, ...]:
        """efficiency.yaml, then every ``efficiency_*.yaml`` in name order (analytic/efficiency.py)."""
        ...

    def file_derived(self, name: str, slot: str, build: Callable[[Rows], T], code: str) -> T:
        """``build(file_rows(name))``; for a shipped file no overlay adds rows to, kept in the on-disk cache under
        ``slot``, keyed by the file and by ``code`` (the identity of the code ``build`` runs and of the classes its
        value holds), so a warm start unpickles the value instead of building it (the efficiency curves)."""
        ...

    def kernel_overhead_files(self) -> tuple[str, ...]:
        """Every ``kernel_overheads_<part>.yaml`` in name order (analytic/step_overheads.py)."""
        ...

    def collective_latency(self) -> Mapping[str, Mapping[str, Any]]:
        """collective_latency.yaml's rows by id (NCCL's cost model, fabrics, NVLS, SHARP)."""
        ...

    def engine(self, name: str, field: str = "inference.engine") -> EngineProfile:
        """The serving engine's profile (engines.yaml row and its behaviours); UnknownIdError naming ``field``."""
        ...

    def model(self, model_id: str, field: str = "model") -> ModelArch:
        """A catalog model's architecture; UnknownIdError naming ``field``."""
        ...

    def runtime_reserve(self) -> RuntimeReserve | None:
        """The framework memory reserve per accelerator (runtime.yaml), None when the catalog has none."""
        ...

    def accuracy_notes_for(self, q: NoteQuery) -> list[str]:
        """The notes of the planner's known accuracy gaps (accuracy_notes.yaml) the scenario ``q`` falls in."""
        ...

    def factors_for(self, applies: Applies, accelerator: str, engine: str | None = None) -> Factors:
        """The calibration factors of ``accelerator`` (and serving ``engine``): a calibration.yaml row naming that
        engine first, then one naming none; neutral without one (the trial factors of :meth:`with_trial`)."""
        ...

    def with_trial(self, factors: Factors) -> DomainTables:
        """These tables with every calibration lookup answering ``factors`` (the calibrator's candidates while it
        fits); what is kept by :meth:`keep` is shared (nothing derived depends on the calibration)."""
        ...

    def cluster_for(self, accelerator: str, count: int, system: str | None = None) -> ClusterSpec:
        """``count`` accelerators of one kind resolved against the same catalog, in ``system`` when one is named
        (planning/capacity.py and disagg.py price parts other than the scenario's, and the scenario's own part in its
        system)."""
        ...

    def cached(self, kind: type[T]) -> T | None:
        """The value of type ``kind`` the domain derived from these tables and kept (:meth:`keep`), else None."""
        ...

    def keep(self, value: T) -> T:
        """Keep ``value`` (one per type) for :meth:`cached`; returns it."""
        ...
