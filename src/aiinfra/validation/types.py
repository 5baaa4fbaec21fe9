"""The interface between the validation runner and the per-kind row predictors."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from aiinfra.errors import UnknownIdError, suggest

if TYPE_CHECKING:
    from aiinfra.specs.benchmark import BenchmarkSpec
    from aiinfra.specs.engine import EngineProfile, RuntimeReserve
    from aiinfra.specs.hardware import ClusterSpec
    from aiinfra.specs.model import ModelArch
    from aiinfra.specs.scenario import HardwareInput, Scenario
    from aiinfra.specs.serving_sim import ServingTables


class ClusterFor(Protocol):
    """catalog/resolve.py cluster_for: ``count`` accelerators of one kind, in ``system`` when one is named."""

    def __call__(self, accelerator: str, count: int, system: str | None = None) -> ClusterSpec: ...


@dataclass(frozen=True, slots=True)
class RowPrediction:
    """The prediction for one reference row, made from the row's specs only (never its ``value``)."""

    predicted: float | None
    """Predicted value of the row's ``metric`` in SI units; None = not modelled (see ``reason``)."""
    reason: str = ""
    """Why no prediction was made, or caveats (assumptions filled for blank cells)."""
    details: dict[str, Any] = field(default_factory=dict)
    """Plan, breakdown and efficiency sources used (for the report)."""


@dataclass(frozen=True, slots=True, eq=False)
class RowTables:
    """What predicting a validation row reads from the catalog, built once per catalog at the application boundary
    (app/tables.py row_tables): the models, engine profiles, benchmarks and runtime reserve, and the resolution of
    hardware and of a scenario mapping (catalog/resolve.py). Hashed by identity (the simulations' caches key on it)."""

    models: Mapping[str, ModelArch]
    engines: Mapping[str, EngineProfile]
    benchmarks: Mapping[str, BenchmarkSpec]
    runtime_reserve: RuntimeReserve | None
    resolve_cluster: Callable[[HardwareInput], ClusterSpec]
    cluster_for: ClusterFor
    """(accelerator id, count, system id or None) -> that many accelerators, in that system when one is named."""
    scenario_of: Callable[[Mapping[str, Any]], Scenario]
    serving_tables: Callable[[Scenario], ServingTables]

    def engine(self, name: str, field: str = "inference.engine") -> EngineProfile:
        """The serving engine profile ``name``; UnknownIdError naming ``field`` (with close names) otherwise."""
        if name in self.engines:
            return self.engines[name]
        raise UnknownIdError(field, name, "serving engines", suggest(name, list(self.engines)))

    def benchmark(self, id_: str, field: str = "benchmark") -> BenchmarkSpec:
        """The benchmark ``id_``; UnknownIdError naming ``field`` (with close ids) otherwise."""
        if id_ in self.benchmarks:
            return self.benchmarks[id_]
        raise UnknownIdError(field, id_, "benchmarks", suggest(id_, list(self.benchmarks)))


#: a predictor takes one CSV row (column -> text) and the catalog's tables, and predicts its metric
RowPredictor = Callable[[dict[str, str], RowTables], RowPrediction]
