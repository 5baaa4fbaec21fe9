"""A scenario: model + hardware + workload (+ plan). Loaded strictly from YAML, resolved via the catalog."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from aiinfra.errors import SpecError
from aiinfra.specs.bounds import MAX_COUNT, Accelerators, InRange, Oversubscription, PerNode
from aiinfra.specs.common import STRICT, validate
from aiinfra.specs.cost import CostInput, DatacenterInput, TcoInput
from aiinfra.specs.files import read_text
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.model import ModelArch
from aiinfra.specs.reliability import ReliabilityInput
from aiinfra.specs.workload import ServingWorkload, TrainingJob
from aiinfra.specs.yaml_safe import load_yaml


@dataclass(frozen=True, kw_only=True, slots=True)
class HardwareInput:
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


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
#: spec of each top-level section other commands read
_SECTION_SPECS: dict[str, Any] = {"cost": CostInput, "datacenter": DatacenterInput, "tco": TcoInput}
#: top-level sections other commands validate themselves
EXTRA_SECTIONS = ("cost", "datacenter", "tco", "reliability")


def _numbers(obj: Any) -> Any:
    """YAML 1.1 reads ``15e12`` as a string; turn plain numeric strings into numbers."""
    if isinstance(obj, dict):
        return {k: _numbers(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_numbers(v) for v in obj]
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
    node[parts[-1]] = load_yaml(raw, f"--set {key}", raw) if raw.strip() else None


def read_yaml(path: str | Path) -> dict[str, Any]:
    data = load_yaml(read_text(path, "scenario", "a scenario YAML file"), "scenario", str(path))
    if not isinstance(data, dict):
        raise SpecError("scenario", str(path), "top level must be a mapping", "see examples/*.yaml")
    return data


def _check_conflicts(inp: ScenarioInput) -> None:
    """Keys that contradict each other (checked on the file as written; planners derive such workloads freely)."""
    hw = inp.hardware
    if hw.per_node is not None and hw.count > hw.per_node and hw.count % hw.per_node:
        raise SpecError("hardware.per_node", hw.per_node, f"does not divide count {hw.count}",
                        "give a count that fills whole nodes, or the right accelerators per node")  # fmt: skip
    wl = inp.inference
    if wl is not None and wl.batch is not None and wl.concurrency is not None:
        raise SpecError("inference.concurrency", wl.concurrency, f"given together with batch {wl.batch!r}",
                        "give batch (a fixed batch) or concurrency (a closed loop of clients)")  # fmt: skip


def parse_scenario(data: dict[str, Any], sets: list[str] | None = None) -> ScenarioInput:
    data = dict(data)
    for s in sets or []:
        apply_set(data, s)
    data = _numbers(data)
    extras = {k: data.pop(k) for k in EXTRA_SECTIONS if k in data}
    data["extras"] = extras
    inp = validate(ScenarioInput, data)
    _check_conflicts(inp)
    for name, cls in _SECTION_SPECS.items():  # checked here too, so `check` and every command refuse the same input
        validate(cls, extras.get(name) or {}, where=name)
    if "reliability" in extras:  # present = on; its required fields make an absent section invalid, so only then
        validate(ReliabilityInput, extras["reliability"] or {}, where="reliability")
    return inp


def resolve_model(model: str | dict[str, Any], field: str = "model", scenario_path: str = "") -> ModelArch:
    """A catalog id, a config.json (relative to the scenario file's folder: specs.files.beside_scenario) or an
    inline architecture."""
    from aiinfra import catalog
    from aiinfra.catalog.hf_config import load_hf_config
    from aiinfra.specs.files import beside_scenario

    if isinstance(model, str):
        return catalog.model(model, field)
    if set(model) == {"config"}:
        return load_hf_config(beside_scenario(str(model["config"]), scenario_path), f"{field}.config")
    return validate(ModelArch, _numbers(model), where=field)


def _default_oversubscription() -> float:
    """The catalog's default scale-out fabric (collective_latency.yaml, scale-out-fabric: non-blocking)."""
    from aiinfra import catalog

    row = next((r for r in catalog.raw_rows("collective_latency") if r.get("id") == "scale-out-fabric"), None)
    return float(row["oversubscription_ratio"]) if row else 1.0


def resolve_cluster(hw: HardwareInput) -> ClusterSpec:
    from aiinfra import catalog
    from aiinfra.sharing import mig

    acc = mig.accelerator(hw.accelerator, "hardware.accelerator")  # a catalog id or ACCELERATOR/MIG-PROFILE
    system = catalog.system(hw.system) if hw.system else None
    if system is not None and system.accelerator != acc.id:
        raise SpecError(
            "hardware.system", hw.system, f"holds {system.accelerator}, not {acc.id}", "pick a matching system"
        )
    if system is None:
        # prefer a node that documents its compute fabric, then any single node, then rack-scale systems
        candidates = sorted(catalog.systems_for(acc.id), key=lambda s: (s.nics is None, s.nodes != 1))
        system = candidates[0] if candidates else None
    per_node = hw.per_node or (system.accelerators_per_node if system else None) or acc.default_per_node
    if per_node is None and hw.count == 1:
        per_node = 1  # one accelerator is one node, whatever servers of that part hold
    if per_node is None:
        raise SpecError(
            "hardware.per_node",
            None,
            f"accelerators per node of {acc.id} are not in the catalog",
            "set hardware.per_node",
        )
    su = acc.scale_up
    su_latency = None
    if su is not None:
        su_row = catalog.rows("interconnects").get(su.interconnect)
        su_latency = su_row.latency_s if su_row else None
    so_bw: float | None = None
    so_latency: float | None = None
    so_id: str | None = None
    if hw.scale_out:
        link = catalog.interconnect(hw.scale_out, "hardware.scale_out")
        nics = hw.nics_per_node or (system.nics.count if system and system.nics else None)
        if nics is None:
            raise SpecError(
                "hardware.nics_per_node",
                None,
                "needed with hardware.scale_out",
                "set the number of scale-out ports per node",
            )
        so_bw, so_latency, so_id = link.bw_one_way_bytes_per_s * nics / per_node, link.latency_s, link.id
    elif system is not None and system.nics is not None:
        so_bw = system.nics.count * system.nics.bw_one_way_bytes_per_s / (system.accelerators_per_node * system.nodes)
    domain = su.domain_size if su is not None else 1
    return ClusterSpec(
        accelerator=acc,
        count=hw.count,
        per_node=per_node,
        scale_up_domain=max(domain, 1),
        scale_up_bw_one_way_bytes_per_s=su.bw_one_way_bytes_per_s if su else None,
        scale_up_latency_s=su_latency,
        scale_out_bw_one_way_bytes_per_s=so_bw,
        scale_out_latency_s=so_latency,
        system_id=system.id if system else None,
        scale_out_id=so_id,
        fabric_oversubscription_ratio=hw.fabric_oversubscription or _default_oversubscription(),
        nodes_per_leaf=hw.nodes_per_leaf,
    )


def _check_finetune(job: TrainingJob | None, model: ModelArch) -> None:
    if job is not None and job.finetune is not None and job.finetune.rank > model.hidden_size:
        raise SpecError("training.finetune.rank", job.finetune.rank, f"is above the hidden size {model.hidden_size}",
                        "a LoRA update of a d×d matrix has rank at most d: give a smaller rank")  # fmt: skip


def resolve(inp: ScenarioInput, path: str = "") -> Scenario:
    model = resolve_model(inp.model, scenario_path=path)
    _check_finetune(inp.training, model)
    return Scenario(
        model=model,
        cluster=resolve_cluster(inp.hardware),
        training=inp.training,
        inference=inp.inference,
        source=inp,
        path=path,
    )


def load_scenario(path: str | Path, sets: list[str] | None = None) -> Scenario:
    """Read, override, validate and resolve a scenario file."""
    return resolve(parse_scenario(read_yaml(path), sets), str(path))
