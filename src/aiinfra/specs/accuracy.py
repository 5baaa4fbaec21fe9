"""Known accuracy gaps of the inference planner (catalog/data/accuracy_notes.yaml): which scenarios a row covers,
the validation cases it summarises and the range of their signed errors (predicted / measured − 1)."""

from __future__ import annotations

from dataclasses import dataclass

from aiinfra.dataclass_code import loads_fast
from aiinfra.specs.common import STRICT
from aiinfra.specs.engine import ReleaseRange, parse_version, version_or_none


@dataclass(frozen=True, kw_only=True, slots=True)
class NoteQuery:
    """What a scenario is matched on against the known gaps: its model, engine, accelerator, weight format and the
    engine release it states."""

    model_id: str
    engine: str
    accelerator_id: str
    weight_precision: str | None = None
    """None: the scenario names no format (it then matches only a row that names none)."""
    release: str | None = None
    """The engine release, MAJOR.MINOR[.PATCH]; None: the current release."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class AccuracyNote:
    """One row of accuracy_notes.yaml: a known accuracy gap of the inference planner, the scenarios it covers and the
    validation cases behind it."""

    __pydantic_config__ = STRICT

    id: str
    models: tuple[str, ...] = ()
    """Catalog model ids the row covers (empty: any model)."""
    engines: tuple[str, ...] = ()
    """Serving engines the row covers (empty: any engine)."""
    accelerators: tuple[str, ...] = ()
    """Catalog accelerator ids the row covers (empty: any accelerator)."""
    weight_precisions: tuple[str, ...] = ()
    """Weight formats the row covers (empty: any format)."""
    from_version: str | None = None
    """First engine release the row covers, MAJOR.MINOR[.PATCH] (None: every earlier one)."""
    below_version: str | None = None
    """First engine release the row no longer covers (None: through the current release, which a scenario that
    states no ``inference.engine_version`` runs)."""
    cases: str
    """Regular expression over validation case ids: the published runs the row summarises."""
    signed_error_range: tuple[float, float]
    """Lowest and highest signed error of those cases (a fraction, predicted / measured − 1)."""
    note: str
    """What `infer` and `capacity` print when a scenario matches."""

    def releases(self) -> ReleaseRange:
        """The engine releases the row covers (a ValueError for a bound that is no release)."""
        return ReleaseRange(
            from_version=version_or_none(self.from_version), below_version=version_or_none(self.below_version)
        )

    def covers(self, q: NoteQuery) -> bool:
        """Whether the scenario ``q`` falls under the row (an empty list matches any)."""
        return (
            (not self.models or q.model_id in self.models)
            and (not self.engines or q.engine in self.engines)
            and (not self.accelerators or q.accelerator_id in self.accelerators)
            and (not self.weight_precisions or q.weight_precision in self.weight_precisions)
            and self.releases().applies(parse_version(q.release) if q.release else None)
        )
