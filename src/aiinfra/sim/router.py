"""Request routers over a pool of replicas.

* round-robin: the i-th request goes to replica i mod n (nginx / Kubernetes Service default);
* least-outstanding-tokens: the replica with the fewest prompt tokens still to prefill plus output tokens
  still to produce (ties to the lowest index): Envoy's least-request load balancing with requests
  weighted by their remaining tokens.

Routers keep their own counters (one per simulation: no state shared between runs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from aiinfra.sim.replica import ServingReplica


class Router(Protocol):
    def pick(self, pool: Sequence[ServingReplica]) -> ServingReplica:
        """The replica that receives the next request."""
        ...


class RoundRobin:
    def __init__(self) -> None:
        self._next = 0

    def pick(self, pool: Sequence[ServingReplica]) -> ServingReplica:
        rep = pool[self._next % len(pool)]
        self._next += 1
        return rep


class LeastOutstandingTokens:
    def pick(self, pool: Sequence[ServingReplica]) -> ServingReplica:
        return min(pool, key=lambda r: (r.outstanding_tokens, r.idx))


def make_router(kind: str) -> Router:
    if kind == "least-outstanding-tokens":
        return LeastOutstandingTokens()
    return RoundRobin()
