"""The scenario's JSON Schema for the web forms, built from the specs (never a hand-written field list).

Pydantic gives each section's schema; the field descriptions are the specs' attribute docstrings (the text the
scenario reference shows), read from the source with :mod:`ast` because the specs do not turn on pydantic's
``use_attribute_docstrings`` (it would cost every CLI start the source parse this does once, here).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import textwrap
from functools import cache
from typing import Any

from pydantic import TypeAdapter

#: the modules whose dataclasses a scenario's sections are made of
_SPEC_MODULES = (
    "scenario",
    "workload",
    "cost",
    "reliability",
    "parallelism",
    "serving_sim",
    "common",
    "hardware",
    "model",
    "benchmark",
    "accuracy",
)


def _section_classes() -> dict[str, Any]:
    from aiinfra.app.pack import PackInput
    from aiinfra.app.schedule import ScheduleInput
    from aiinfra.specs.cost import CostInput, DatacenterInput, TcoInput
    from aiinfra.specs.reliability import ReliabilityInput
    from aiinfra.specs.scenario import HardwareInput
    from aiinfra.specs.workload import ServingWorkload, TrainingJob

    return {
        "hardware": HardwareInput,
        "training": TrainingJob,
        "inference": ServingWorkload,
        "cost": CostInput,
        "datacenter": DatacenterInput,
        "tco": TcoInput,
        "reliability": ReliabilityInput,
        "schedule": ScheduleInput,
        "pack": PackInput,
    }


def attribute_docs(cls: type) -> dict[str, str]:
    """``{field: docstring}`` of a class whose fields carry a string literal right after them."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for a, b in itertools.pairwise(body):
        if (
            isinstance(a, ast.AnnAssign)
            and isinstance(a.target, ast.Name)
            and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant)
            and isinstance(b.value.value, str)
        ):
            docs[a.target.id] = " ".join(b.value.value.split())
    return docs


def _class_named(name: str, home: str) -> type | None:
    """The dataclass ``name`` of a section's schema: in the section's own module (``home``) or the specs."""
    for mod in (home, *(f"aiinfra.specs.{m}" for m in _SPEC_MODULES)):
        try:
            cls = getattr(importlib.import_module(mod), name, None)
        except ImportError:
            continue
        if isinstance(cls, type):
            return cls
    return None


def _describe(schema: dict[str, Any], cls: type) -> None:
    docs = attribute_docs(cls)
    for name, prop in schema.get("properties", {}).items():
        if name in docs and "description" not in prop:
            prop["description"] = docs[name]


@cache
def scenario_form_schema() -> dict[str, Any]:
    """``{"sections": {name: JSON Schema}, "model": ...}``: every section's fields with types, defaults, bounds
    and the specs' descriptions; nested objects are under each section's ``$defs``."""
    sections: dict[str, Any] = {}
    for name, cls in _section_classes().items():
        schema = TypeAdapter(cls).json_schema()
        _describe(schema, cls)
        for def_name, sub in schema.get("$defs", {}).items():
            sub_cls = _class_named(def_name, cls.__module__)
            if sub_cls is not None:
                _describe(sub, sub_cls)
        sections[name] = schema
    return {
        "model": {
            "description": "catalog model id (`aiinfra catalog list models`), or an architecture uploaded "
            "as a Hugging Face config.json",
            "type": "string",
        },
        "sections": sections,
    }
