"""A cluster's facility: nodes, racks, cooling, facility power, the compute fabric (switches, optics) and
storage bandwidth for checkpoints and the data feed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from aiinfra.app.base import Result, accuracy_for
from aiinfra.app.sourced import best_training_estimate, checkpoint_size, pue_figure, scenario_system, section
from aiinfra.app.tables import price_book
from aiinfra.costing import Usage
from aiinfra.costing.datacenter import Racks, StorageNeed, racks, storage_need
from aiinfra.costing.energy import PowerDraw, power_draw
from aiinfra.costing.fabric import Fabric, cluster_fabric, optical_modules, transceiver_power_w
from aiinfra.costing.prices import DEFAULT_FACILITY, FacilityFigure, age_text, facility, purchase
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.report.render import jsonable
from aiinfra.specs.cost import DatacenterInput
from aiinfra.specs.scenario import Scenario
from aiinfra.units import HOUR_S


def _unit_price_src(value: float | None, id_: str | None, field: str) -> tuple[float | None, str | None]:
    if value is not None and id_ is not None:
        raise SpecError(f"{field}_purchase_id", id_, f"given together with {field}_price_usd", "give one of the two")
    if id_ is not None:
        row = purchase(price_book(), id_, f"{field}_purchase_id")
        return row.unit_price_usd, age_text(row)
    return value, "scenario" if value is not None else None


@dataclass(frozen=True, kw_only=True, slots=True)
class DatacenterResult(Result):
    """The answer of :func:`datacenter`."""

    scenario: Scenario
    inputs: DatacenterInput
    """The scenario's datacenter section."""
    nodes: int
    """Nodes of the cluster: ⌈accelerators / per node⌉."""
    power: PowerDraw
    """The cluster's draw for one hour at full load (accelerators, host overhead, IT power)."""
    racks: Racks
    node_power_source: str
    """Where a node's power comes from: the system's maximum power, or the accelerators' TDP only."""
    rack_power_limit_w: float
    """The scenario's rack limit, else the catalog's air-cooling limit."""
    air_limit: FacilityFigure
    """The catalog's air-cooling limit per rack."""
    pue_ratio: float
    pue_source: dict[str, Any]
    """The PUE with its source (the scenario, or a facility row with its age)."""
    switch_radix: int
    """Ports per switch: the scenario's, else the catalog row's."""
    radix_row: FacilityFigure | None
    """The facility row the radix comes from (None when the scenario gives it)."""
    nics_per_node: int
    """Compute-fabric ports per node: the scenario's, else the system's NICs, else one per accelerator."""
    fabric: Fabric
    transceiver_rows: tuple[FacilityFigure, FacilityFigure]
    """Switch-side and NIC-side transceiver power rows."""
    transceiver_power_w: float
    """Power of every optical transceiver end of the fabric (NIC side and switch side)."""
    transceiver_modules: int
    """Optical modules to buy: one per host link, one twin-port module per two switch-side ports between switches."""
    switch_power_w: float | None
    """All switches at the scenario's per-switch power; None when not given (not in the catalog)."""
    network_cost_usd: dict[str, float | None]
    """switches_usd and transceivers_usd: count × unit price, None where the price is unknown."""
    switch_price_usd: float | None
    """Price of one switch (scenario or purchase row); None = unknown."""
    switch_price_source: str | None
    """"scenario", the purchase row with its age, or None when unknown."""
    transceiver_price_usd: float | None
    """Price of one optical module (scenario or purchase row); None = unknown."""
    transceiver_price_source: str | None
    storage: StorageNeed | None
    """Checkpoint and data-feed bandwidth needs; None when the checkpoint size is unknown."""
    training_plan: Any
    """The training plan's layout behind the storage data feed (None without a training section)."""
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra datacenter --json`` object: racks, cooling and power with their sources, the fabric, network
        power and cost, the storage bandwidths and notes."""
        rk, air, radix_row, fab, di = self.racks, self.air_limit, self.radix_row, self.fabric, self.inputs
        sw_side, nic_side = self.transceiver_rows
        out: dict[str, Any] = {
            **jsonable(rk),
            "node_power_source": self.node_power_source,
            "rack_power_limit_source": "scenario" if di.rack_power_limit_kw else age_text(air),
            "air_cooling_limit_source": age_text(air),
            "pue": self.pue_source,
            "nics_per_node": self.nics_per_node,
            "fabric": jsonable(fab),
            "switch_radix_source": age_text(radix_row) if radix_row else "scenario",
            "transceiver_power_w": self.transceiver_power_w,
            "transceiver_power_sources": [age_text(sw_side), age_text(nic_side)],
            "transceiver_modules": self.transceiver_modules,
            "switch_power_w": self.switch_power_w,
            "network_power_known_w": self.transceiver_power_w + (self.switch_power_w or 0.0),
            "network_cost_usd": self.network_cost_usd,
            "switch_price_source": self.switch_price_source,
            "transceiver_price_source": self.transceiver_price_source,
            "storage": jsonable(self.storage) if self.storage else None,
            "notes": list(self.notes),
        }
        out["accuracy"] = accuracy_for("datacenter", self.scenario, {**out, "plan": self.training_plan})
        return out


def datacenter(scenario: Scenario) -> DatacenterResult:
    """Size the facility for the scenario's cluster: nodes and racks under the rack power limit, air or liquid
    cooling, IT and facility power, a fat-tree or rail-optimised fabric (switches, links, optics and their
    power and cost), and the storage bandwidth a checkpoint write and the data feed need.

    Long because it composes the facility's parts in order (nodes and racks, cooling, power, fabric, storage), each
    a call into costing/."""
    sc = scenario
    di: DatacenterInput = section(sc, DatacenterInput, "datacenter")
    c = sc.cluster
    system = scenario_system(sc)
    nodes = math.ceil(c.count / c.per_node)
    usage = Usage(accelerator_id=c.accelerator.id, accelerator_count=c.count, duration_s=HOUR_S)
    pd = power_draw(usage, c.accelerator, system)
    if pd.node_max_power_w is None:
        raise InfeasibleError(
            f"{c.accelerator.id}: neither a system power nor a TDP in the catalog — node power unknown"
        )
    node_src = (
        f"{system.id} maximum power"
        if system is not None and system.power_max_w is not None
        else "accelerators' TDP only (host power unknown)"
    )
    air = facility(price_book(), DEFAULT_FACILITY["rack_air_limit"])
    limit_w = di.rack_power_limit_kw * 1e3 if di.rack_power_limit_kw else air.value * 1e3
    pue, pue_src = pue_figure(di.pue, "datacenter")
    rk = racks(nodes, pd.node_max_power_w, limit_w, air.value * 1e3, pue)
    radix_row = facility(price_book(), DEFAULT_FACILITY["switch_radix"]) if di.switch_radix is None else None
    radix = di.switch_radix or int(radix_row.value if radix_row else 0)
    nics = di.nics_per_node or (system.nics.count if system is not None and system.nics else c.per_node)
    fab = cluster_fabric(nodes, nics, radix, di.topology, di.oversubscription)
    sw_side = facility(price_book(), DEFAULT_FACILITY["transceiver_switch_side"])
    nic_side = facility(price_book(), DEFAULT_FACILITY["transceiver_nic_side"])
    # a twin-port 800G OSFP serves two 400G switch ports
    tr_w = transceiver_power_w(fab, sw_side.value / 2.0, nic_side.value)
    sw_price, sw_price_src = _unit_price_src(di.switch_price_usd, di.switch_purchase_id, "datacenter.switch")
    tr_price, tr_price_src = _unit_price_src(
        di.transceiver_price_usd, di.transceiver_purchase_id, "datacenter.transceiver"
    )
    modules = optical_modules(fab)
    switch_w = fab.switches * di.switch_power_w if di.switch_power_w is not None else None
    net_cost = {
        "switches_usd": fab.switches * sw_price if sw_price is not None else None,
        "transceivers_usd": modules * tr_price if tr_price is not None else None,
    }
    ckpt, ckpt_src = checkpoint_size(sc, di.checkpoint_bytes, assume_training=True)
    est = best_training_estimate(sc) if sc.training is not None else None
    storage = (
        storage_need(
            ckpt, ckpt_src, di.checkpoint_write_s, est.tokens_per_s if est is not None else None, di.bytes_per_token
        )
        if ckpt is not None
        else None
    )
    notes = [
        *pd.notes,
        *(["switch power not in the catalog: set datacenter.switch_power_w"] if switch_w is None else []),
    ]
    return DatacenterResult(
        scenario=sc,
        inputs=di,
        nodes=nodes,
        power=pd,
        racks=rk,
        node_power_source=node_src,
        rack_power_limit_w=limit_w,
        air_limit=air,
        pue_ratio=pue,
        pue_source=pue_src,
        switch_radix=radix,
        radix_row=radix_row,
        nics_per_node=nics,
        fabric=fab,
        transceiver_rows=(sw_side, nic_side),
        transceiver_power_w=tr_w,
        transceiver_modules=modules,
        switch_power_w=switch_w,
        network_cost_usd=net_cost,
        switch_price_usd=sw_price,
        switch_price_source=sw_price_src,
        transceiver_price_usd=tr_price,
        transceiver_price_source=tr_price_src,
        storage=storage,
        training_plan=getattr(est, "plan", None),
        notes=tuple(n for n in notes if n),
    )
