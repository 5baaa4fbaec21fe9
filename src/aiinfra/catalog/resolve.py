"""A scenario resolved against the catalog: every id in the file (model, accelerator or MIG instance, system,
interconnect) becomes the spec it names, and the cluster's links are filled from the catalog's rows. This is where
the file format (specs/scenario.py, which knows no catalog) meets the catalog's data.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from aiinfra import catalog
from aiinfra.catalog import mig
from aiinfra.catalog.tables import domain_tables
from aiinfra.errors import SpecError
from aiinfra.specs.common import validate
from aiinfra.specs.hardware import ClusterSpec, ScaleUpMesh
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput, Scenario, ScenarioInput, parse_scenario, plain_numbers, read_yaml
from aiinfra.specs.serving_sim import ServingTables
from aiinfra.specs.workload import TrainingJob


def resolve_model(model: str | dict[str, Any], field: str = "model", scenario_path: str = "") -> ModelArch:
    """A catalog id, a config.json (relative to the scenario file's folder: specs.files.beside_scenario) or an
    inline architecture."""
    from aiinfra.catalog.hf_config import load_hf_config
    from aiinfra.specs.files import beside_scenario

    if isinstance(model, str):
        return catalog.model(model, field)
    if set(model) == {"config"}:
        return load_hf_config(beside_scenario(str(model["config"]), scenario_path), f"{field}.config")
    return validate(ModelArch, plain_numbers(model), where=field)


def _default_oversubscription() -> float:
    """The catalog's default scale-out fabric (collective_latency.yaml, scale-out-fabric: non-blocking)."""
    row = next((r for r in catalog.raw_rows("collective_latency") if r.get("id") == "scale-out-fabric"), None)
    return float(row["oversubscription_ratio"]) if row else 1.0


def _nvls_supported(scale_up_interconnect: str | None, domain: int) -> bool:
    """NVLink SHARP in the scale-up switch (collective_latency.yaml nccl-nvls: NVLink 4/5 behind NVSwitch)."""
    row = next((r for r in catalog.raw_rows("collective_latency") if r.get("id") == "nccl-nvls"), None)
    if row is None or scale_up_interconnect is None:
        return False
    return scale_up_interconnect in row["scale_up_interconnects"] and domain >= int(row["min_domain"])


def _fabric_of(text: str) -> str:
    """The fabric family a scale-out interconnect id or NIC description names (collective_latency.yaml
    scale-out-curve-fabrics): efa (AWS Elastic Fabric Adapter, SRD), rdma (InfiniBand or RoCE through ConnectX-class
    NICs), or other (TCP Ethernet, TPU data-centre network)."""
    t = text.lower()
    if "efa" in t or "elastic fabric adapter" in t:
        return "efa"
    if "no infiniband" in t or "no gpudirect rdma" in t:
        return "other"
    if any(w in t for w in ("infiniband", "roce", "connectx", "gpudirect rdma")):
        return "rdma"
    return "other"


def resolve_cluster(hw: HardwareInput) -> ClusterSpec:
    """The hardware section against the active catalog: the accelerator (or MIG instance), its system (the one named,
    else the first that documents its NICs, preferring single nodes), accelerators per node, scale-up and scale-out
    bandwidths and latencies, fabric and SHARP switches; a SpecError naming the field when a figure it needs is
    missing."""
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
    nvls_ok = _nvls_supported(su.interconnect if su else None, domain)
    mesh_bw = None
    if system is not None and system.scale_up_mesh is not None:
        # a switchless board: its accelerators reach each other over their pairs' links only, no in-switch reduction
        mesh_bw = _mesh_peer_bw(system.scale_up_mesh, system.id)
        domain, nvls_ok = system.accelerators_per_node, False
    fabric = _fabric_of(so_id) if so_id else None
    if fabric is None and system is not None and system.nics is not None:
        fabric = _fabric_of(system.nics.kind)
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
        nvls=hw.nvls is not False and nvls_ok,
        ib_sharp=hw.ib_sharp,
        scale_out_fabric=fabric,
        scale_up_peer_bw_one_way_bytes_per_s=mesh_bw,
        tables=domain_tables(),
    )


def _mesh_peer_bw(mesh: ScaleUpMesh, system_id: str) -> float:
    """One pair's one-way bandwidth on a switchless board: links_per_peer of the interconnect's links, each
    ``bw_one_way / links``, at the interconnect's measured efficiency (1 where none is catalogued)."""
    link = catalog.interconnect(mesh.interconnect, "systems.scale_up_mesh.interconnect")
    if not link.links:
        raise SpecError(
            "systems.scale_up_mesh.interconnect",
            mesh.interconnect,
            f"(system {system_id}) has no link count in interconnects.yaml",
            "add links: N to the interconnect row",
        )
    return link.bw_one_way_bytes_per_s * mesh.links_per_peer / link.links * (link.measured_efficiency_frac or 1.0)


def cluster_for(accelerator: str, count: int, system: str | None = None) -> ClusterSpec:
    """``count`` accelerators of one kind, in ``system`` when given (its board's nodes and wiring); when the catalog
    gives no accelerators-per-node figure (PCIe and workstation cards) they are taken as one host holding all
    ``count``."""
    if system is not None:
        return resolve_cluster(HardwareInput(accelerator=accelerator, count=count, system=system))
    acc = catalog.accelerator(accelerator)
    per_node = None if getattr(acc, "default_per_node", None) else count
    return resolve_cluster(HardwareInput(accelerator=accelerator, count=count, per_node=per_node))


def _check_finetune(job: TrainingJob | None, model: ModelArch) -> None:
    if job is not None and job.finetune is not None and job.finetune.rank > model.hidden_size:
        raise SpecError(
            "training.finetune.rank",
            job.finetune.rank,
            f"is above the hidden size {model.hidden_size}",
            "a LoRA update of a d×d matrix has rank at most d: give a smaller rank",
        )


def resolve(inp: ScenarioInput, path: str = "") -> Scenario:
    """A validated ScenarioInput resolved against the active catalog: the model, the cluster and the runtime reserve
    bound to a Scenario (a LoRA rank above the model's hidden size is refused)."""
    model = resolve_model(inp.model, scenario_path=path)
    _check_finetune(inp.training, model)
    return Scenario(
        model=model,
        cluster=resolve_cluster(inp.hardware),
        training=inp.training,
        inference=inp.inference,
        source=inp,
        path=path,
        runtime_reserve=catalog.runtime_reserve(),
    )


def load_scenario(path: str | Path, sets: list[str] | None = None) -> Scenario:
    """Read, override, validate and resolve a scenario file."""
    return resolve(parse_scenario(read_yaml(path), sets), str(path))


def scenario_of(data: Mapping[str, Any], path: str = "") -> Scenario:
    """A mapping in the file format validated and resolved; the Scenario keeps (a copy of) the mapping, so further
    overrides can be layered on it (what app.load_scenario gives for a mapping)."""
    mapping = copy.deepcopy(dict(data))
    return replace(resolve(parse_scenario(copy.deepcopy(mapping)), path), mapping=mapping)


def serving_tables(scenario: Scenario) -> ServingTables:
    """The catalog's rows a serving simulation of ``scenario`` reads: its engine's profile and the speculative draft
    model its workload names."""
    wl = scenario.inference
    if wl is None:
        raise SpecError("inference", None, "the scenario has no inference section", "add inference: {...}")
    draft = None
    if wl.speculative is not None and wl.speculative.draft_model:
        draft = catalog.model(wl.speculative.draft_model, "inference.speculative.draft_model")
    return ServingTables(engine=catalog.engine(wl.engine), draft_model=draft)
