"""Racks, cooling, facility power and storage bandwidth of a cluster.

Racks: nodes per rack = ⌊rack power limit / node power⌋ (node power = the system's maximum input power, else
its accelerators' TDP only); racks = ⌈nodes / nodes per rack⌉. Cooling: air while a full rack stays within the
air-cooling limit (facility.yaml rack-air-cooling-limit), else liquid (rear-door heat exchangers or
direct-to-chip). Facility power = IT power × PUE.
Checkpoint = model weights in the training precision + fp32 master weights (when training below fp32) +
optimizer moments (Adam m and v in fp32; SGD momentum in fp32) — what a mixed-precision run must save to
resume (Rajbhandari et al., ZeRO, SC 2020 §3.1: 2 + 4 + 4 + 4 = 14 bytes per parameter for bf16 Adam).
Storage write bandwidth = checkpoint bytes / target write time; data feed = tokens/s × bytes per token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiinfra.errors import InfeasibleError


@dataclass(frozen=True, kw_only=True, slots=True)
class Racks:
    """How a cluster's nodes fill racks under a rack power limit, the cooling that takes, and the facility power."""

    nodes: int
    node_power_w: float
    """One node's power: the system's maximum input power, else its accelerators' TDP."""
    rack_power_limit_w: float
    nodes_per_rack: int
    """⌊rack power limit / node power⌋, at most the nodes there are."""
    racks: int
    rack_power_w: float
    """Power of a full rack."""
    air_cooling_limit_w: float
    """Highest rack power air cooling removes (facility.yaml rack-air-cooling-limit unless given)."""
    cooling: str
    """air | liquid"""
    it_power_w: float
    """All nodes at their node power."""
    pue_ratio: float
    facility_power_w: float
    """IT power × PUE."""


def racks(
    nodes: int, node_power_w: float, rack_power_limit_w: float, air_cooling_limit_w: float, pue_ratio: float
) -> Racks:
    """Pack ``nodes`` of ``node_power_w`` into racks of at most ``rack_power_limit_w``: liquid cooling when a full rack
    exceeds ``air_cooling_limit_w``; an InfeasibleError when one node exceeds the rack limit."""
    if node_power_w > rack_power_limit_w:
        raise InfeasibleError(
            f"one node draws {node_power_w / 1e3:.1f} kW, more than the {rack_power_limit_w / 1e3:.1f} kW rack limit "
            "— raise datacenter.rack_power_limit_kw (liquid-cooled racks; facility row rack-liquid-gb300-nvl72)"
        )
    per_rack = min(nodes, int(rack_power_limit_w // node_power_w))
    n_racks = math.ceil(nodes / per_rack)
    rack_w = per_rack * node_power_w
    it_w = nodes * node_power_w
    return Racks(
        nodes=nodes,
        node_power_w=node_power_w,
        rack_power_limit_w=rack_power_limit_w,
        nodes_per_rack=per_rack,
        racks=n_racks,
        rack_power_w=rack_w,
        air_cooling_limit_w=air_cooling_limit_w,
        cooling="air" if rack_w <= air_cooling_limit_w else "liquid",
        it_power_w=it_w,
        pue_ratio=pue_ratio,
        facility_power_w=it_w * pue_ratio,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class StorageNeed:
    """The storage bandwidth a training run needs: checkpoint writes within a target time and the training-data feed."""

    checkpoint_bytes: float
    checkpoint_source: str
    """Where checkpoint_bytes comes from (the scenario, or the model's weights and optimizer state), for the report."""
    checkpoint_write_s: float | None
    """Target time to write one checkpoint; None = not given."""
    checkpoint_write_bw_bytes_per_s: float | None
    """None when no target write time is given."""
    tokens_per_s: float | None
    """Training throughput of the run; None = unknown."""
    bytes_per_token: float
    data_feed_bw_bytes_per_s: float | None
    """None when the training throughput is unknown."""


def storage_need(
    checkpoint_bytes: float,
    checkpoint_source: str,
    checkpoint_write_s: float | None,
    tokens_per_s: float | None,
    bytes_per_token: float,
) -> StorageNeed:
    """Checkpoint write bandwidth (bytes / target time) and data-feed bandwidth (tokens/s × bytes per token), each None
    when its input is missing."""
    return StorageNeed(
        checkpoint_bytes=checkpoint_bytes,
        checkpoint_source=checkpoint_source,
        checkpoint_write_s=checkpoint_write_s,
        checkpoint_write_bw_bytes_per_s=checkpoint_bytes / checkpoint_write_s if checkpoint_write_s else None,
        tokens_per_s=tokens_per_s,
        bytes_per_token=bytes_per_token,
        data_feed_bw_bytes_per_s=tokens_per_s * bytes_per_token if tokens_per_s is not None else None,
    )
