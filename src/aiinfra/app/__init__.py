"""The application layer: one typed function per question, each taking a resolved scenario (and options) and
returning a frozen result with ``to_dict()`` (the CLI's ``--json`` object) and ``to_frame()``.

Every shell — the CLI's commands, the Python API (``aiinfra.train`` …), sweeps — calls these functions and
nothing below them, so the answers cannot drift apart. ``QUESTIONS`` maps each scenario question's name to its
function (the ones a sweep can vary).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiinfra.app.base import MissingExtraError, Result, flatten
from aiinfra.app.catalog_queries import (
    CatalogRow,
    CatalogRows,
    CheckResult,
    ModelFigures,
    catalog_list,
    catalog_show,
    check,
    model_show,
)
from aiinfra.app.cost import CostResult, cost
from aiinfra.app.datacenter import DatacenterResult, datacenter
from aiinfra.app.mig import MigResult, mig
from aiinfra.app.inference import CapacityResult, InferResult, capacity, infer
from aiinfra.app.scenario import ScenarioLike, load_scenario
from aiinfra.app.simulation import MaxRateResult, SimulateResult, find_max_rate, simulate
from aiinfra.app.tco import TcoResult, tco
from aiinfra.app.training import MemoryResult, TrainResult, memory, train
from aiinfra.app.validation import ValidateResult, validate

QUESTIONS: dict[str, Callable[..., Result]] = {
    "check": check,
    "train": train,
    "memory": memory,
    "infer": infer,
    "capacity": capacity,
    "simulate": simulate,
    "cost": cost,
    "datacenter": datacenter,
    "tco": tco,
}
"""Scenario questions by name: each takes a resolved scenario first, then its keyword options."""


def answer(question: str, scenario: ScenarioLike, **options: Any) -> Result:
    """Answer one scenario question by name (``"train"``, ``"infer"`` …) — what sweeps call per point."""
    from aiinfra.errors import SpecError

    if question not in QUESTIONS:
        raise SpecError("question", question, f"unknown question (known: {', '.join(QUESTIONS)})",
                        "name one of them")  # fmt: skip
    return QUESTIONS[question](load_scenario(scenario), **options)


__all__ = [
    "QUESTIONS",
    "CapacityResult",
    "CatalogRow",
    "CatalogRows",
    "CheckResult",
    "CostResult",
    "DatacenterResult",
    "InferResult",
    "MaxRateResult",
    "MemoryResult",
    "MigResult",
    "MissingExtraError",
    "ModelFigures",
    "Result",
    "ScenarioLike",
    "SimulateResult",
    "TcoResult",
    "TrainResult",
    "ValidateResult",
    "answer",
    "capacity",
    "catalog_list",
    "mig",
    "catalog_show",
    "check",
    "cost",
    "datacenter",
    "find_max_rate",
    "flatten",
    "infer",
    "load_scenario",
    "memory",
    "model_show",
    "simulate",
    "tco",
    "train",
    "validate",
]
