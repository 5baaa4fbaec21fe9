"""Network fabric sizing from the switch radix k (all ports at the NIC speed).

Full-size fabrics (Al-Fares, Loukissas & Vahdat, "A scalable, commodity data center network architecture",
SIGCOMM 2008):
  1 tier:                      k endpoints, 1 switch
  2 tiers (leaf–spine):        k²/2 endpoints; k leaves (k/2 down, k/2 up) + k/2 spines = 3k/2 switches
  3 tiers (k-ary fat-tree):    k³/4 endpoints; k pods × (k/2 edge + k/2 aggregation) + (k/2)² core = 5k²/4
Partial fabrics are built leaf-up: with oversubscription r:1 a leaf has ⌊k·r/(r+1)⌋ down-ports and, for d
used down-ports, ⌈d/r⌉ up-ports; a 2-tier fabric holds at most k leaves (one spine port per leaf), a 3-tier
one at most k pods of k/2 leaves.
Rail-optimised (NVIDIA DGX SuperPOD / HGX reference architectures): NIC i of every node connects to a leaf
of rail i, so each rail is sized on its own (⌈nodes / down⌉ leaves per rail) and the rails meet at the
spines; same-index GPUs talk through one leaf hop.
Optics (all-optical assumption): 2 transceiver ends per link; switch-side ends are half a twin-port 800G OSFP,
NIC-side ends a 400G single-port OSFP (powers from facility.yaml).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiinfra.errors import InfeasibleError


@dataclass(frozen=True, kw_only=True, slots=True)
class Fabric:
    """A compute fabric sized for ``endpoints`` NIC ports: switches per tier, links and transceivers."""

    topology: str
    """fat-tree | rail-optimised"""
    endpoints: int
    """NIC ports connected (host links)."""
    radix: int
    """Ports per switch at the NIC speed."""
    oversubscription_ratio: float
    """Leaf down:up ratio (1 = non-blocking)."""
    tiers: int
    """Switch tiers (1 = one switch, 2 = leaf–spine, 3 = fat-tree with core)."""
    rails: int
    """Rails sized separately (rail-optimised: one per NIC of a node; fat-tree: 1)."""
    leaf_switches: int
    spine_switches: int
    """Spines (2 tiers) or aggregation switches (3 tiers)."""
    core_switches: int
    """Core switches (3 tiers only)."""
    switches: int
    """All switches, every tier."""
    host_links: int
    """NIC-to-leaf links."""
    switch_links: int
    """Switch-to-switch links (leaf up-links, and aggregation up-links in 3 tiers)."""
    transceivers: int
    """Optical ends: 2 per link (all-optical assumption)."""
    max_endpoints: int
    """Endpoints the chosen number of tiers can hold at this radix and oversubscription."""


def max_endpoints(radix: int, tiers: int) -> int:
    """k, k²/2, k³/4 (non-blocking; Al-Fares et al. 2008)."""
    return {1: radix, 2: radix**2 // 2, 3: radix**3 // 4}[tiers]


def full_switches(radix: int, tiers: int) -> int:
    """Switches of a full non-blocking fabric: 1, 3k/2, 5k²/4."""
    return {1: 1, 2: 3 * radix // 2, 3: 5 * radix**2 // 4}[tiers]


def _check(radix: int, oversubscription: float) -> int:
    if radix < 2 or radix % 2:
        raise InfeasibleError(f"switch radix {radix} must be an even number >= 2")
    if oversubscription < 1.0:
        raise InfeasibleError(f"oversubscription {oversubscription} must be >= 1 (1 = non-blocking)")
    return max(1, math.floor(radix * oversubscription / (oversubscription + 1.0)))


def _one_switch(topology: str, endpoints: int, radix: int, r: float) -> Fabric:
    return Fabric(
        topology=topology,
        endpoints=endpoints,
        radix=radix,
        oversubscription_ratio=r,
        tiers=1,
        rails=1,
        leaf_switches=1,
        spine_switches=0,
        core_switches=0,
        switches=1,
        host_links=endpoints,
        switch_links=0,
        transceivers=2 * endpoints,
        max_endpoints=radix,
    )


def _build(topology: str, endpoints: int, rails: int, leaf_down: list[int], radix: int, r: float) -> Fabric:
    """Leaves with the given used down-ports -> spines (2 tiers) or pods + core (3 tiers)."""
    down = _check(radix, r)
    leaves = len(leaf_down)
    ups = [math.ceil(d / r) for d in leaf_down]
    up_links = sum(ups)
    half = radix // 2
    if leaves <= radix:
        spines = max(1, math.ceil(up_links / radix))
        return Fabric(
            topology=topology,
            endpoints=endpoints,
            radix=radix,
            oversubscription_ratio=r,
            tiers=2,
            rails=rails,
            leaf_switches=leaves,
            spine_switches=spines,
            core_switches=0,
            switches=leaves + spines,
            host_links=endpoints,
            switch_links=up_links,
            transceivers=2 * (endpoints + up_links),
            max_endpoints=down * radix,
        )
    pods = math.ceil(leaves / half)
    if pods > radix:
        raise InfeasibleError(
            f"{endpoints:,} endpoints need {leaves:,} leaves: more than a 3-tier fat-tree of radix {radix} holds "
            f"({radix * half:,} leaves, {max_endpoints(radix, 3):,} endpoints non-blocking) — use a larger radix, "
            "more oversubscription or a 4-tier design"
        )
    aggs = pods * half
    agg_core_links = up_links  # each aggregation switch forwards what its pod's leaves send up
    core = math.ceil(agg_core_links / radix)
    links = up_links + agg_core_links
    return Fabric(
        topology=topology,
        endpoints=endpoints,
        radix=radix,
        oversubscription_ratio=r,
        tiers=3,
        rails=rails,
        leaf_switches=leaves,
        spine_switches=aggs,
        core_switches=core,
        switches=leaves + aggs + core,
        host_links=endpoints,
        switch_links=links,
        transceivers=2 * (endpoints + links),
        max_endpoints=down * half * radix,
    )


def fat_tree(endpoints: int, radix: int, oversubscription: float = 1.0) -> Fabric:
    """Any endpoint on any leaf: leaves filled in order."""
    if endpoints < 1:
        raise InfeasibleError("a fabric needs at least one endpoint")
    down = _check(radix, oversubscription)
    if endpoints <= radix:
        return _one_switch("fat-tree", endpoints, radix, oversubscription)
    full, rest = divmod(endpoints, down)
    leaf_down = [down] * full + ([rest] if rest else [])
    return _build("fat-tree", endpoints, 1, leaf_down, radix, oversubscription)


def leaf_spine(endpoints: int, radix: int, oversubscription: float = 1.0) -> Fabric:
    """Two tiers only (error when the endpoints need three)."""
    fab = fat_tree(endpoints, radix, oversubscription)
    if fab.tiers > 2:
        raise InfeasibleError(
            f"{endpoints:,} endpoints exceed a 2-tier leaf-spine of radix {radix} "
            f"({max_endpoints(radix, 2):,} non-blocking) — use three tiers or a larger radix"
        )
    return fab


def rail_optimised(nodes: int, rails: int, radix: int, oversubscription: float = 1.0) -> Fabric:
    """NIC i of every node on rail i's leaves; each rail sized on its own, rails joined at the spines."""
    if nodes < 1 or rails < 1:
        raise InfeasibleError("a rail-optimised fabric needs at least one node and one rail")
    down = _check(radix, oversubscription)
    if rails == 1 and nodes <= radix:
        return _one_switch("rail-optimised", nodes, radix, oversubscription)
    full, rest = divmod(nodes, down)
    per_rail = [down] * full + ([rest] if rest else [])
    return _build("rail-optimised", nodes * rails, rails, per_rail * rails, radix, oversubscription)


def transceiver_power_w(fab: Fabric, switch_side_w_per_port: float, nic_side_w: float) -> float:
    """NIC ends × NIC-side module + every switch-side end × its per-port share of a (twin-port) module."""
    return fab.host_links * nic_side_w + (fab.transceivers - fab.host_links) * switch_side_w_per_port


def cluster_fabric(nodes: int, nics_per_node: int, radix: int, topology: str, oversubscription: float) -> Fabric:
    """The scale-out fabric of ``nodes`` nodes with ``nics_per_node`` ports each: ``rail-optimised`` (one rail per
    NIC, :func:`rail_optimised`) or a fat tree over every port (:func:`fat_tree`)."""
    if topology == "rail-optimised":
        return rail_optimised(nodes, nics_per_node, radix, oversubscription)
    return fat_tree(nodes * nics_per_node, radix, oversubscription)


def optical_modules(fab: Fabric) -> int:
    """Optical modules to buy: one per host link (NIC side) and one twin-port 800G OSFP per two switch-side ports
    of the links between switches."""
    return fab.host_links + math.ceil((fab.transceivers - fab.host_links) / 2)
