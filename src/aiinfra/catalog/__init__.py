"""The catalog: the only code that reads shipped data.

:class:`~aiinfra.catalog.store.Catalog` holds the rows (one reader per data file, lazy, cached per instance);
the functions here read the *active* catalog (:func:`active`: the shipped one unless :func:`use` set another), at
the application boundary only: code below it reads the tables a resolved cluster carries (catalog/tables.py).
Rows are YAML with units in their keys; :func:`si_row` converts them to SI spec fields. ``get_*`` lookups raise
:class:`~aiinfra.errors.UnknownIdError` with "did you mean" hints.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiinfra.catalog.convert import si_row
from aiinfra.catalog.store import KINDS, OVERLAY_FILES, Catalog, RuntimeReserve, active, shipped_dir, suggest, use
from aiinfra.errors import DataError, UnknownIdError

if TYPE_CHECKING:
    from aiinfra.catalog.engines import EngineProfile
    from aiinfra.specs.accuracy import AccuracyNote, NoteQuery
    from aiinfra.specs.benchmark import BenchmarkSpec
    from aiinfra.specs.hardware import AcceleratorSpec, InterconnectSpec, SystemSpec
    from aiinfra.specs.model import ModelArch

__all__ = ["KINDS", "OVERLAY_FILES", "Catalog", "RuntimeReserve", "active", "si_row", "suggest", "use"]


def data_path(name: str) -> Path:
    """Path of a shipped data file (``prices/cloud.csv``)."""
    return shipped_dir() / name


def raw_rows(kind: str) -> tuple[dict[str, Any], ...]:
    """Rows of ``<kind>.yaml`` in the active catalog, as parsed."""
    return active().raw_rows(kind)


def file_rows(name: str) -> tuple[dict[str, Any], ...]:
    """Rows of one data file (``prices/cloud.csv``) in the active catalog."""
    return active().file_rows(name)


def rows(kind: str) -> dict[str, Any]:
    """All rows of one kind as spec objects, keyed by id."""
    return active().rows(kind)


def engine(name: str, field: str = "inference.engine") -> EngineProfile:
    """The serving engine's profile in the active catalog."""
    return active().engine(name, field)


def generations() -> dict[str, str | None]:
    """Accelerator id -> its generation (accelerators.yaml) in the active catalog: the regime key of the error
    bands (aiinfra.accuracy)."""
    return active().memo("generations", lambda: {a.id: a.generation for a in rows("accelerators").values()})


def runtime_reserve() -> RuntimeReserve | None:
    """The framework memory reserve of the active catalog (runtime.yaml)."""
    return active().runtime_reserve()


def accuracy_notes() -> tuple[AccuracyNote, ...]:
    """The inference planner's known accuracy gaps (accuracy_notes.yaml), each checked against the validation
    cases it names by tests/test_validation_inference.py."""
    return active().memo("accuracy_notes", _accuracy_notes)


def _accuracy_notes() -> tuple[AccuracyNote, ...]:
    """The shipped rows through the on-disk cache of validated specs (as Catalog.rows: keyed by the file and the
    validating code), so a warm start builds no validator. An overlay holds no accuracy notes (OVERLAY_FILES), so
    every catalog reads the same rows: the test is on the file, not on the overlays (whose refreshed prices are
    looked for only when a price is read)."""
    from aiinfra.catalog.parse import cached, code_identity, file_identity

    cat = active()
    path = cat.path("accuracy_notes.yaml")
    if "accuracy_notes.yaml" in OVERLAY_FILES or not path.exists():
        return _validate_accuracy_notes()
    return cached(f"specs|{path.resolve()}", f"{file_identity(path)}|{code_identity()}", _validate_accuracy_notes)


def _validate_accuracy_notes() -> tuple[AccuracyNote, ...]:
    from aiinfra.specs.accuracy import AccuracyNote
    from aiinfra.specs.common import validate

    out = []
    for raw in raw_rows("accuracy_notes"):
        try:
            note = validate(AccuracyNote, raw, where=f"accuracy_notes.yaml[{raw.get('id', '?')}]")
            note.releases()  # a release bound that is no release is refused here, not matched as no bound
            out.append(note)
        except Exception as exc:  # shipped data is broken: a bug, say where
            raise DataError(f"catalog data accuracy_notes.yaml row {raw.get('id', '?')}: {exc}") from exc
    return tuple(out)


def accuracy_notes_for(q: NoteQuery) -> list[str]:
    """The notes of the known gaps the scenario ``q`` falls in."""
    return [n.note for n in accuracy_notes() if n.covers(q)]


def get(kind: str, id_: str, field: str | None = None) -> Any:
    """The ``kind`` row ``id_`` of the active catalog; an UnknownIdError on ``field`` (default ``<kind>.id``) with "did
    you mean" when there is none."""
    return active().get(kind, id_, field)


def accelerator(id_: str, field: str = "hardware.accelerator") -> AcceleratorSpec:
    """The accelerator ``id_`` of the active catalog (an UnknownIdError on ``field`` when unknown)."""
    return active().accelerator(id_, field)


def system(id_: str, field: str = "hardware.system") -> SystemSpec:
    """The system ``id_`` of the active catalog (an UnknownIdError on ``field`` when unknown)."""
    return active().system(id_, field)


def interconnect(id_: str, field: str = "interconnect") -> InterconnectSpec:
    """The interconnect ``id_`` of the active catalog (an UnknownIdError on ``field`` when unknown)."""
    return active().interconnect(id_, field)


def model(id_: str, field: str = "model") -> ModelArch:
    """The model ``id_`` of the active catalog (an UnknownIdError on ``field`` when unknown)."""
    return active().model(id_, field)


def benchmark(id_: str, field: str = "benchmark") -> BenchmarkSpec:
    """The benchmark ``id_`` of the active catalog (an UnknownIdError on ``field`` when unknown)."""
    return active().benchmark(id_, field)


def benchmark_for(*texts: str) -> BenchmarkSpec | None:
    """The benchmark a result names: the longest ``match`` name found in any of ``texts`` (a result path,
    notes, a model name), compared lower-case and also with punctuation removed ("Llama-2-70B" matches
    llama2-70b). None when no benchmark matches."""
    from aiinfra.specs.benchmark import benchmark_named

    return benchmark_named(rows("benchmarks").values(), *texts)


def find_any(id_: str) -> tuple[str, Any]:
    """Look an id up in every kind (for `catalog show`)."""
    for kind in KINDS:
        table = rows(kind)
        if id_ in table:
            return kind, table[id_]
    every = [k for kind in KINDS for k in rows(kind)]
    raise UnknownIdError("id", id_, "catalog ids", suggest(id_, every))


def systems_for(accelerator_id: str) -> list[SystemSpec]:
    """Every system of the active catalog built on ``accelerator_id``, in file order."""
    return [s for s in rows("systems").values() if s.accelerator == accelerator_id]
