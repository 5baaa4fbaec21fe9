"""A scenario: model + hardware + workload (+ plan). Loaded strictly from YAML, resolved via the catalog."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from aiinfra.errors import SpecError
from aiinfra.specs.bounds import MAX_COUNT, Accelerators, InRange, Oversubscription, PerNode
from aiinfra.specs.common import STRICT, validate
from aiinfra.specs.engine import RuntimeReserve
from aiinfra.specs.files import read_text
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.model import ModelArch
from aiinfra.specs.workload import ServingWorkload, TrainingJob


@dataclass(frozen=True, kw_only=True, slots=True)
class HardwareInput:
    """The ``hardware:`` section of a scenario: catalog ids and counts, resolved to a ClusterSpec by
    catalog/resolve.py."""

    __pydantic_config__ = STRICT

    accelerator: str
    """Catalog id (aiinfra catalog list accelerators)."""
    count: Accelerators = 1
    """Accelerators in the job or fleet."""
    per_node: PerNode | None = None
    """Accelerators per node; None = from the system or the accelerator's usual node."""
    system: str | None = None
    """Catalog system id (dgx-h100 ...); None = the catalog's system for this accelerator, if one."""
    scale_out: str | None = None
    """Scale-out interconnect id (infiniband-ndr ...); None = the system's NICs."""
    nics_per_node: Annotated[int, InRange(1, MAX_COUNT)] | None = None
    """Scale-out ports per node (with scale_out)."""
    fabric_oversubscription: Oversubscription | None = None
    """Down:up port ratio of the scale-out fabric's leaf switches (1 = non-blocking); None = non-blocking, as NVIDIA's
    reference architectures build the compute fabric (catalog/data/collective_latency.yaml, scale-out-fabric)."""
    nodes_per_leaf: Annotated[int, InRange(1, MAX_COUNT)] | None = None
    """Nodes whose NICs meet at one leaf switch (per rail, rail-optimised): collectives among them never cross the
    oversubscribed tier; None = every inter-node collective crosses it."""
    nvls: bool | None = None
    """NVLink SHARP (in-switch reduction) for all-reduces: None = NCCL's default, on where the scale-up switch supports
    it (catalog/data/collective_latency.yaml nccl-nvls); false = NCCL_NVLS_ENABLE=0."""
    ib_sharp: bool = False
    """InfiniBand SHARP (in-network reduction, NCCL CollNet) for scale-out all-reduces: off by default, as in NCCL
    (NCCL_COLLNET_ENABLE=0); true where the fabric's switches and the NCCL SHARP plugin run it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScenarioInput:
    """The file format users write (validated strictly: unknown keys are errors)."""

    __pydantic_config__ = STRICT

    model: str | dict[str, Any]
    """Catalog id | {config: path/to/config.json} | inline architecture mapping."""
    hardware: HardwareInput
    training: TrainingJob | None = None
    inference: ServingWorkload | None = None
    name: str = ""
    description: str = ""
    extras: dict[str, Any] = field(default_factory=dict)
    """Sections owned by other commands (cost, datacenter, tco), validated by them."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Scenario:
    """What one run consumes: every id resolved to a spec."""

    model: ModelArch
    cluster: ClusterSpec
    training: TrainingJob | None
    inference: ServingWorkload | None
    source: ScenarioInput
    path: str = ""
    mapping: dict[str, Any] | None = None
    """The file-format mapping it was resolved from, overrides applied (so further overrides can be layered)."""
    runtime_reserve: RuntimeReserve | None
    """The framework memory reserve per accelerator of the catalog's runtime.yaml (None when it has none), bound at
    resolution (catalog/resolve.py) so the planners read no catalog."""


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
#: spec (module, class) of each top-level section other commands read; imported only for a scenario that has the
#: section (a scenario without one, e.g. `infer`'s, loads no cost or reliability specs: start-up time)
_SECTION_SPECS: dict[str, tuple[str, str]] = {
    "cost": ("aiinfra.specs.cost", "CostInput"),
    "datacenter": ("aiinfra.specs.cost", "DatacenterInput"),
    "tco": ("aiinfra.specs.cost", "TcoInput"),
    "reliability": ("aiinfra.specs.reliability", "ReliabilityInput"),
}
#: top-level sections other commands validate themselves
EXTRA_SECTIONS = ("cost", "datacenter", "tco", "reliability")


def plain_numbers(obj: Any) -> Any:
    """YAML 1.1 reads ``15e12`` as a string; turn plain numeric strings into numbers."""
    if isinstance(obj, dict):
        return {k: plain_numbers(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plain_numbers(v) for v in obj]
    if isinstance(obj, str) and _NUMBER.match(obj.strip()):
        value = float(obj)
        return int(value) if value.is_integer() and "." not in obj and "e" not in obj.lower() else value
    return obj


def apply_set(data: dict[str, Any], assignment: str) -> None:
    """Apply one ``--set a.b.c=value`` override (value parsed as YAML)."""
    if "=" not in assignment:
        raise SpecError("--set", assignment, "expected KEY=VALUE", "write e.g. --set training.plan.tp=8")
    key, raw = assignment.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise SpecError("--set", assignment, "empty key", "write e.g. --set training.plan.tp=8")
    node = data
    for p in parts[:-1]:
        nxt = node.get(p)
        if nxt is None:
            nxt = node[p] = {}
        if not isinstance(nxt, dict):
            raise SpecError(f"--set {key}", raw, f"'{p}' is not a mapping", "set a leaf key")
        node = nxt
    from aiinfra.specs.yaml_safe import load_yaml  # PyYAML only when a value is parsed (start-up time)

    node[parts[-1]] = load_yaml(raw, f"--set {key}", raw) if raw.strip() else None


def read_yaml(path: str | Path) -> dict[str, Any]:
    """A scenario file's top-level mapping (user YAML rules of specs/yaml_safe.py); a SpecError when the file cannot be
    read or its top level is not a mapping."""
    from aiinfra.specs.yaml_safe import load_yaml  # PyYAML only when a file is read (start-up time)

    data = load_yaml(read_text(path, "scenario", "a scenario YAML file"), "scenario", str(path))
    if not isinstance(data, dict):
        raise SpecError("scenario", str(path), "top level must be a mapping", "see examples/*.yaml")
    return data


def _check_conflicts(inp: ScenarioInput) -> None:
    """Keys that contradict each other (checked on the file as written; planners derive such workloads freely)."""
    hw = inp.hardware
    if hw.per_node is not None and hw.count > hw.per_node and hw.count % hw.per_node:
        raise SpecError(
            "hardware.per_node",
            hw.per_node,
            f"does not divide count {hw.count}",
            "give a count that fills whole nodes, or the right accelerators per node",
        )
    wl = inp.inference
    if wl is not None and wl.batch is not None and wl.concurrency is not None:
        raise SpecError(
            "inference.concurrency",
            wl.concurrency,
            f"given together with batch {wl.batch!r}",
            "give batch (a fixed batch) or concurrency (a closed loop of clients)",
        )


def parse_scenario(data: dict[str, Any], sets: list[str] | None = None) -> ScenarioInput:
    """A scenario mapping validated into a ScenarioInput: ``--set`` overrides applied, numeric strings made numbers, the
    other commands' sections set aside as extras and checked by their own specs, conflicting keys refused."""
    data = dict(data)
    for s in sets or []:
        apply_set(data, s)
    data = plain_numbers(data)
    extras = {k: data.pop(k) for k in EXTRA_SECTIONS if k in data}
    data["extras"] = extras
    inp = validate(ScenarioInput, data)
    _check_conflicts(inp)
    for name, (module, cls) in _SECTION_SPECS.items():  # checked here too, so every command refuses the same input
        # an absent or empty section takes every default (none is required): nothing to check; reliability is on
        # when present, and its required fields make an empty section invalid, so it is checked whenever present
        if extras.get(name) or (name == "reliability" and name in extras):
            spec = getattr(importlib.import_module(module), cls)
            validate(spec, extras[name] or {}, where=name)
    return inp
