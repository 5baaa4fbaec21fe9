"""aiinfra: plan, simulate and price AI infrastructure.

Every number traces to a formula (paper cited at the function) or to a catalog row with a source. The Python API
(docs/api.md)::

    import aiinfra
    plan = aiinfra.train("examples/train-llama3.1-70b-h100.yaml", set={"hardware.count": 512})
    plan.best.mfu_frac, plan.to_dict(), plan.to_frame()

Names are imported on first use, so ``import aiinfra`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = (
    "train",
    "memory",
    "infer",
    "capacity",
    "simulate",
    "find_max_rate",
    "cost",
    "datacenter",
    "tco",
    "check",
    "validate",
    "model",
    "pack",
    "schedule",
    "sweep",
    "prices_refresh",
    "price_diff",
    "calibrate",
    "probe",
)
__all__ = [*_API, "__version__", "catalog", "load_scenario"]


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module("aiinfra.api"), name)
    if name == "load_scenario":
        return importlib.import_module("aiinfra.app.scenario").load_scenario
    if name == "catalog":
        return importlib.import_module("aiinfra.catalog")
    raise AttributeError(f"module 'aiinfra' has no attribute {name!r}")
