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
    """How a pool's next request picks its replica (one router per simulation; it keeps its own counters)."""

    def pick(self, pool: Sequence[ServingReplica]) -> ServingReplica:
        """The replica that receives the next request."""
        ...


class RoundRobin:
    """Request i goes to replica i mod n."""

    def __init__(self) -> None:
        self._next = 0

    def pick(self, pool: Sequence[ServingReplica]) -> ServingReplica:
        """The next replica in turn (the counter advances once per request)."""
        rep = pool[self._next % len(pool)]
        self._next += 1
        return rep


class LeastOutstandingTokens:
    """The replica with the fewest outstanding tokens (prompt still to prefill plus output still to produce)."""

    def pick(self, pool: Sequence[ServingReplica]) -> ServingReplica:
        """The replica with the fewest outstanding tokens; ties to the lowest index."""
        return min(pool, key=lambda r: (r.outstanding_tokens, r.idx))


def make_router(kind: str) -> Router:
    """The router named ``kind``: ``least-outstanding-tokens``, anything else round-robin."""
    if kind == "least-outstanding-tokens":
        return LeastOutstandingTokens()
    return RoundRobin()
