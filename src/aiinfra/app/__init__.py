"""The application layer: one typed function per question, each taking a resolved scenario (and options) and
returning a frozen result with ``to_dict()`` (the CLI's ``--json`` object) and ``to_frame()``.

Every shell — the CLI's commands, the Python API (``aiinfra.train`` …), sweeps — calls these functions and
nothing below them, so the answers cannot drift apart. The scenario questions are one table (app/questions.py:
name, request, function, result); ``QUESTIONS`` maps the name of each one a sweep can vary to its function.

The names load on first use (:data:`_LAZY`), so a command imports only the planners it runs: importing every
question's domain packages (simulator, validation, costing) cost a CLI process about half a second. Several
functions share their module's name (``cost`` in ``aiinfra.app.cost``); the package's module class keeps the
function when Python's import system would bind the submodule over it.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiinfra.app.base import (
        MissingExtraError,
        Result,
        catalog_overlay_dirs,
        catalog_with_overlays,
        flatten,
    )
    from aiinfra.app.calibrate import CalibrateResult, calibrate
    from aiinfra.app.catalog_queries import (
        CatalogRow,
        CatalogRows,
        CheckResult,
        ModelFigures,
        PriceRows,
        PurchaseRows,
        catalog_list,
        catalog_show,
        check,
        model_from_hf_config,
        model_show,
        price_list,
        purchase_list,
    )
    from aiinfra.app.cost import CostResult, cost
    from aiinfra.app.datacenter import DatacenterResult, datacenter
    from aiinfra.app.export import ExportResult, export
    from aiinfra.app.inference import CapacityResult, InferResult, capacity, infer
    from aiinfra.app.mig import MigResult, mig
    from aiinfra.app.pack import PackResult, pack
    from aiinfra.app.prices import PriceDiffResult, PricesRefreshResult, price_diff, prices_refresh
    from aiinfra.app.probe import ProbeResult, probe
    from aiinfra.app.questions import CapacityRequest, Question, Request, SimulateRequest
    from aiinfra.app.scenario import ScenarioLike, load_scenario
    from aiinfra.app.schedule import ScheduleResult, schedule
    from aiinfra.app.simulation import MaxRateResult, SimulateResult, find_max_rate, simulate
    from aiinfra.app.tco import TcoResult, tco
    from aiinfra.app.training import MemoryResult, TrainResult, memory, plan_label, train
    from aiinfra.app.validation import ValidateResult, validate

#: public name -> the module that defines it
_LAZY: dict[str, str] = {
    "MissingExtraError": "aiinfra.app.base",
    "catalog_overlay_dirs": "aiinfra.app.base",
    "catalog_with_overlays": "aiinfra.app.base",
    "Result": "aiinfra.app.base",
    "flatten": "aiinfra.app.base",
    "CalibrateResult": "aiinfra.app.calibrate",
    "calibrate": "aiinfra.app.calibrate",
    "ProbeResult": "aiinfra.app.probe",
    "probe": "aiinfra.app.probe",
    "CatalogRow": "aiinfra.app.catalog_queries",
    "CatalogRows": "aiinfra.app.catalog_queries",
    "CheckResult": "aiinfra.app.catalog_queries",
    "ModelFigures": "aiinfra.app.catalog_queries",
    "PriceRows": "aiinfra.app.catalog_queries",
    "PurchaseRows": "aiinfra.app.catalog_queries",
    "catalog_list": "aiinfra.app.catalog_queries",
    "catalog_show": "aiinfra.app.catalog_queries",
    "check": "aiinfra.app.catalog_queries",
    "model_show": "aiinfra.app.catalog_queries",
    "model_from_hf_config": "aiinfra.app.catalog_queries",
    "price_list": "aiinfra.app.catalog_queries",
    "purchase_list": "aiinfra.app.catalog_queries",
    "CostResult": "aiinfra.app.cost",
    "ExportResult": "aiinfra.app.export",
    "export": "aiinfra.app.export",
    "cost": "aiinfra.app.cost",
    "DatacenterResult": "aiinfra.app.datacenter",
    "datacenter": "aiinfra.app.datacenter",
    "CapacityResult": "aiinfra.app.inference",
    "InferResult": "aiinfra.app.inference",
    "capacity": "aiinfra.app.inference",
    "infer": "aiinfra.app.inference",
    "ScenarioLike": "aiinfra.app.scenario",
    "load_scenario": "aiinfra.app.scenario",
    "MaxRateResult": "aiinfra.app.simulation",
    "SimulateResult": "aiinfra.app.simulation",
    "find_max_rate": "aiinfra.app.simulation",
    "simulate": "aiinfra.app.simulation",
    "TcoResult": "aiinfra.app.tco",
    "tco": "aiinfra.app.tco",
    "MemoryResult": "aiinfra.app.training",
    "TrainResult": "aiinfra.app.training",
    "memory": "aiinfra.app.training",
    "plan_label": "aiinfra.app.training",
    "train": "aiinfra.app.training",
    "ValidateResult": "aiinfra.app.validation",
    "validate": "aiinfra.app.validation",
    "MigResult": "aiinfra.app.mig",
    "mig": "aiinfra.app.mig",
    "PackResult": "aiinfra.app.pack",
    "pack": "aiinfra.app.pack",
    "PriceDiffResult": "aiinfra.app.prices",
    "PricesRefreshResult": "aiinfra.app.prices",
    "price_diff": "aiinfra.app.prices",
    "prices_refresh": "aiinfra.app.prices",
    "ScheduleResult": "aiinfra.app.schedule",
    "schedule": "aiinfra.app.schedule",
    "Request": "aiinfra.app.questions",
    "CapacityRequest": "aiinfra.app.questions",
    "SimulateRequest": "aiinfra.app.questions",
    "Question": "aiinfra.app.questions",
}


class _AppModule(types.ModuleType):
    """This package's module type: a submodule never replaces the function of the same name."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return  # the import system binding aiinfra.app.cost (the module) over cost (the function)
        super().__setattr__(name, value)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        types.ModuleType.__setattr__(sys.modules[__name__], name, value)
        return value
    if name == "QUESTIONS":
        from aiinfra.app.questions import TABLE

        questions: dict[str, Callable[..., Result]] = {q.name: __getattr__(q.name) for q in TABLE if q.sweepable}
        types.ModuleType.__setattr__(sys.modules[__name__], name, questions)
        return questions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _AppModule

if TYPE_CHECKING:
    QUESTIONS: dict[str, Callable[..., Result]]


def answer(question: str, scenario: ScenarioLike, **options: Any) -> Result:
    """Answer one scenario question by name (``"train"``, ``"infer"`` …) with its options (the fields of its
    request, app/questions.py); an unknown question or option is a SpecError."""
    from aiinfra.app.questions import question as entry
    from aiinfra.app.scenario import load_scenario

    q = entry(question)
    return q.answer(q.request_of(load_scenario(scenario), options))


__all__ = [
    "QUESTIONS",
    "CalibrateResult",
    "CapacityRequest",
    "CapacityResult",
    "CatalogRow",
    "CatalogRows",
    "CheckResult",
    "CostResult",
    "DatacenterResult",
    "ExportResult",
    "InferResult",
    "MaxRateResult",
    "MemoryResult",
    "MigResult",
    "MissingExtraError",
    "ModelFigures",
    "PackResult",
    "PriceDiffResult",
    "PriceRows",
    "PricesRefreshResult",
    "ProbeResult",
    "PurchaseRows",
    "Question",
    "Request",
    "Result",
    "ScenarioLike",
    "ScheduleResult",
    "SimulateRequest",
    "SimulateResult",
    "TcoResult",
    "TrainResult",
    "ValidateResult",
    "answer",
    "calibrate",
    "capacity",
    "catalog_list",
    "catalog_overlay_dirs",
    "catalog_show",
    "catalog_with_overlays",
    "check",
    "cost",
    "datacenter",
    "export",
    "find_max_rate",
    "flatten",
    "infer",
    "load_scenario",
    "memory",
    "mig",
    "model_from_hf_config",
    "model_show",
    "pack",
    "plan_label",
    "price_diff",
    "price_list",
    "prices_refresh",
    "probe",
    "purchase_list",
    "schedule",
    "simulate",
    "tco",
    "train",
    "validate",
]
