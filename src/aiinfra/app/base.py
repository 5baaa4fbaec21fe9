"""What every application-layer result offers: the CLI's JSON object and, where it is a table, a DataFrame."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from aiinfra.errors import AiinfraError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas  # type: ignore[import-untyped]

    from aiinfra.specs.scenario import Scenario


class MissingExtraError(AiinfraError):
    """An optional dependency the call needs is not installed."""


def accuracy_for(
    kind: str,
    scenario: Scenario,
    values: Mapping[str, Any],
    saturation: tuple[float | None, float | None] = (None, None),
) -> dict[str, Any]:
    """The ``accuracy`` object of an answer (aiinfra.accuracy.answers.accuracy_for) with the accelerator
    generations of the active catalog; ``saturation``: a simulate answer's saturated requests/s and sequences."""
    from aiinfra import catalog
    from aiinfra.accuracy import answers

    return answers.accuracy_for(kind, scenario, values, generations=catalog.generations(), saturation=saturation)


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings -> one level with dotted keys (``memory_breakdown.weights_bytes``); lists are kept as
    values. Used for table rows and sweep columns, so unit-carrying keys keep their unit."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


class Result:
    """Base of the frozen result dataclasses. ``to_dict()`` is exactly the object ``aiinfra <command> --json``
    prints for the same scenario and options; ``table_rows()`` the rows of the result's main table (ranked plans,
    deployments, offers, cases), one flat mapping each; ``to_frame()`` those rows as a pandas DataFrame."""

    def to_dict(self) -> dict[str, Any]:
        """The object ``aiinfra <command> --json`` prints for this result (each subclass gives its own)."""
        raise NotImplementedError

    def table_rows(self) -> list[dict[str, Any]]:
        """One row: the whole result flattened (results without a table of their own)."""
        return [flatten(self.to_dict())]

    def to_frame(self) -> pandas.DataFrame:
        """The main table as a DataFrame (needs pandas: ``pip install 'aiinfra[frames]'``)."""
        try:
            import pandas
        except ImportError:
            raise MissingExtraError("to_frame() needs pandas: pip install 'aiinfra[frames]'") from None
        return pandas.DataFrame(self.table_rows())


def catalog_overlay_dirs() -> tuple[str, ...]:
    """The folders the active catalog lays over the shipped rows, in order (``--catalog-overlay``, refreshed
    prices): what a worker process applies again to answer against the same catalog."""
    from aiinfra import catalog

    return tuple(str(d) for d in catalog.active().overlay_dirs)


@contextmanager
def catalog_with_overlays(dirs: Sequence[str]) -> Iterator[None]:
    """Answer inside the block against the shipped catalog with ``dirs`` laid over it, in order."""
    from aiinfra.catalog import Catalog, use

    cat = Catalog.default()
    for d in dirs:
        cat = cat.with_overlay(d)
    with use(cat):
        yield
