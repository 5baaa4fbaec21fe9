"""The load of a serving deployment over the capacity its own prediction gives (ρ̂): the error bands' load level.

Near capacity an error in the step time comes out of the latency amplified: for an open-loop replica at its steady
state n* = λ · L · f(n*) (Little's law), d ln TPOT / d ln step = 1 / (1 − ε), ε the step's elasticity in the load
(bench/loaded_step.py computes it per validation row). The product's model of a loaded replica is
aiinfra.planning.loaded (B = λ · R(B), N users thinking Z); this module holds only the ratio the error model and the
validation rows share, below both layers.
"""

from __future__ import annotations


def utilisation(
    *,
    rate_per_s: float | None = None,
    sequences: float | None = None,
    saturated_requests_per_s: float | None = None,
    saturated_seqs: float | None = None,
) -> float | None:
    """ρ̂, the load over the capacity the prediction itself gives (so it is known when answering): for open arrivals
    at ``rate_per_s``, the rate over the requests/s the deployment serves at its saturated batch
    (``saturated_requests_per_s``: the classic ρ = λ/μ); for ``sequences`` sent at once (a closed loop of clients,
    a burst, a static batch), their count over the most the deployment runs at once (``saturated_seqs``, all
    replicas): a closed loop has no queue until its clients outnumber the batch slots, and beyond them the queue is
    its excess. None when there is no load (offline) or no capacity to measure it against."""
    if rate_per_s is not None:
        return rate_per_s / saturated_requests_per_s if saturated_requests_per_s else None
    if sequences is not None and saturated_seqs:
        return sequences / saturated_seqs
    return None
