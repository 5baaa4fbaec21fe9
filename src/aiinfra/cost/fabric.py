"""Network fabric sizing from the switch radix k (all ports at the NIC speed).

Two tiers (leaf–spine): up to k²/2 endpoints with k leaves and k/2 spines when non-blocking; three tiers
(k-ary fat-tree, Al-Fares, Loukissas & Vahdat, SIGCOMM 2008): up to k³/4 endpoints with 5k²/4 switches.
Oversubscription r:1 gives each leaf k·r/(r+1) down-ports and k/(r+1) up-ports. Rail-optimised layouts
(NVIDIA reference architectures) connect NIC i of every node to leaf i: same counts, different wiring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiinfra.errors import InfeasibleError


@dataclass(frozen=True, kw_only=True, slots=True)
class Fabric:
    endpoints: int
    radix: int
    tiers: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    switches: int
    host_links: int
    switch_links: int
    transceivers: int
    """Optical ends: 2 per link (all-optical assumption)."""
    max_endpoints: int


def max_endpoints(radix: int, tiers: int) -> int:
    return {1: radix, 2: radix**2 // 2, 3: radix**3 // 4}[tiers]


def fat_tree(endpoints: int, radix: int, oversubscription: float = 1.0) -> Fabric:
    if radix < 2 or radix % 2:
        raise InfeasibleError(f"switch radix {radix} must be an even number >= 2")
    down = max(1, math.floor(radix * oversubscription / (oversubscription + 1.0)))
    up = radix - down
    if endpoints <= radix:
        return Fabric(endpoints=endpoints, radix=radix, tiers=1, leaf_switches=1, spine_switches=0,
                      core_switches=0, switches=1, host_links=endpoints, switch_links=0,
                      transceivers=2 * endpoints, max_endpoints=radix)  # fmt: skip
    leaves = math.ceil(endpoints / down)
    if leaves * up <= radix * radix // 2 and leaves <= radix:
        spines = math.ceil(leaves * up / radix)
        links = leaves * up
        return Fabric(endpoints=endpoints, radix=radix, tiers=2, leaf_switches=leaves, spine_switches=spines,
                      core_switches=0, switches=leaves + spines, host_links=endpoints, switch_links=links,
                      transceivers=2 * (endpoints + links), max_endpoints=down * radix)  # fmt: skip
    limit = max_endpoints(radix, 3)
    if endpoints > limit * oversubscription:
        raise InfeasibleError(f"{endpoints} endpoints exceed a 3-tier fat-tree of radix {radix} ({limit}) — "
                              "use a larger radix or more tiers")  # fmt: skip
    half = radix // 2
    pods = math.ceil(leaves / half)
    aggs = pods * half
    core = math.ceil(aggs * half / radix)
    links = leaves * up + aggs * half
    return Fabric(endpoints=endpoints, radix=radix, tiers=3, leaf_switches=leaves, spine_switches=aggs,
                  core_switches=core, switches=leaves + aggs + core, host_links=endpoints, switch_links=links,
                  transceivers=2 * (endpoints + links), max_endpoints=limit)  # fmt: skip
