"""The catalog's tables the domain reads, bound once per catalog at the boundary and carried down by every resolved
cluster (:attr:`aiinfra.specs.hardware.ClusterSpec.tables`).

Below the application layer no module reads the catalog: a step-time model, a collective, a planner asks the
cluster it was given for the rows it needs (efficiency curves, collective-latency rows, kernel overheads, engine
profiles, the runtime reserve, models, accuracy notes, calibration factors). ``catalog/tables.py`` builds one
:class:`DomainTables` per catalog instance, each field a lookup into that one catalog (never the active one), so an
overlay's rows reach exactly the clusters resolved against it. What the domain derives from the rows (the
efficiency table and its memos, the memory fits, the kernel-overhead figures per part) is built once per tables
object and kept on it (:meth:`DomainTables.derived`), keyed by the type that holds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from dataclasses import field as field_
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from aiinfra.specs.accuracy import AccuracyNote
    from aiinfra.specs.calibration import Factors
    from aiinfra.specs.engine import EngineProfile, RuntimeReserve
    from aiinfra.specs.hardware import AcceleratorSpec, ClusterSpec
    from aiinfra.specs.model import ModelArch

T = TypeVar("T")

Applies = Literal["inference", "training"]
"""Which planner a calibration row scales."""

Rows = tuple[dict[str, Any], ...]


@dataclass(frozen=True, kw_only=True, eq=False)
class DomainTables:
    """One catalog's tables as typed lookups (each reads that catalog only, lazily, memoised by it)."""

    accelerators: Callable[[], Mapping[str, AcceleratorSpec]]
    """Every accelerator row by id (family, generation, vendor: the donor taxonomy of efficiency curves)."""
    file_rows: Callable[[str], Rows]
    """The rows of one data file by name (``efficiency_*.yaml``, ``kernel_overheads_<part>.yaml``), overlays applied."""
    efficiency_files: Callable[[], tuple[str, ...]]
    """efficiency.yaml, then every ``efficiency_*.yaml`` in name order (analytic/efficiency.py)."""
    kernel_overhead_files: Callable[[], tuple[str, ...]]
    """Every ``kernel_overheads_<part>.yaml`` in name order (analytic/step_overheads.py)."""
    collective_latency: Callable[[], Mapping[str, Mapping[str, Any]]]
    """collective_latency.yaml's rows by id (NCCL's cost model, fabrics, NVLS, SHARP)."""
    find_engine: Callable[[str, str], EngineProfile]
    """(engine name, the field that named it) -> its profile, or UnknownIdError naming the field (:meth:`engine`)."""
    find_model: Callable[[str, str], ModelArch]
    """(model id, the field that named it) -> its architecture, or UnknownIdError naming the field (:meth:`model`)."""
    runtime_reserve: Callable[[], RuntimeReserve | None]
    """The framework memory reserve per accelerator (runtime.yaml), None when the catalog has none."""
    accuracy_notes: Callable[[], tuple[AccuracyNote, ...]]
    """The inference planner's known accuracy gaps (accuracy_notes.yaml)."""
    calibration: Callable[[], Mapping[tuple[str, str, str | None], Factors]]
    """(applies_to, accelerator, engine or None) -> the factors of a calibration.yaml row."""
    cluster_for: Callable[[str, int], ClusterSpec]
    """(accelerator id, count) -> that many accelerators resolved against the same catalog (planning/capacity.py
    and disagg.py price parts other than the scenario's)."""
    trial: Factors | None = None
    """Factors every calibration lookup returns instead of the rows' (the calibrator's candidates while it fits:
    :meth:`with_trial`)."""
    cache: dict[type, object] = field_(default_factory=dict, repr=False)
    """What the domain derived from these tables, by the type holding it (:meth:`derived`); shared by
    :meth:`with_trial`'s copies (nothing derived depends on the calibration)."""

    def derived(self, kind: type[T], build: Callable[[], T]) -> T:
        """``build()`` once per tables object: the domain's structures over these rows (an efficiency table ...)."""
        got = self.cache.get(kind)
        if got is None:
            got = self.cache[kind] = build()
        assert isinstance(got, kind)
        return got

    def engine(self, name: str, field: str = "inference.engine") -> EngineProfile:
        """The serving engine's profile (engines.yaml row and its behaviours)."""
        return self.find_engine(name, field)

    def model(self, model_id: str, field: str = "model") -> ModelArch:
        """A catalog model's architecture."""
        return self.find_model(model_id, field)

    def factors_for(self, applies: Applies, accelerator: str, engine: str | None = None) -> Factors:
        """The calibration factors of ``accelerator`` (and serving ``engine``): a row naming that engine first, then
        one naming none; neutral when there is none (the trial factors while a calibration fits)."""
        if self.trial is not None:
            return self.trial
        from aiinfra.specs.calibration import NEUTRAL

        table = self.calibration()
        if not table:
            return NEUTRAL
        return table.get((applies, accelerator, engine)) or table.get((applies, accelerator, None)) or NEUTRAL

    def accuracy_notes_for(self, model_id: str, engine: str, accelerator_id: str) -> list[str]:
        """The notes of the known gaps a scenario falls in (model, engine, accelerator)."""
        return [n.note for n in self.accuracy_notes() if n.covers(model_id, engine, accelerator_id)]

    def with_trial(self, factors: Factors) -> DomainTables:
        """These tables with every calibration lookup answering ``factors`` (derived structures shared)."""
        return replace(self, trial=factors)
