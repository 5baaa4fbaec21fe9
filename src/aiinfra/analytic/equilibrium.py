"""The steady state of a replica serving open (Poisson) arrivals with continuous batching, and how sensitive its
TPOT is to the step time.

At a steady rate λ (requests/s per replica) whose requests produce L output tokens each, a sequence stays in the
decode set for L steps, so by Little's law (Little 1961, Operations Research 9(3)) the sequences in flight are
n = λ · L · s, with s the step time; and the step's own length grows with what it carries, s = f(n) (decodes of n
sequences plus the prompt tokens that arrive during one step, λ · I · s). The steady state is the fixed point
n* = λ · L · f(n*). With the step's elasticity in the load at that point, ε = n · f'(n) / f(n) (< 1 for a stable
queue), scaling every step by k moves the fixed point: d ln n* / d ln k = 1 / (1 − ε), and since TPOT = k · f(n*),

    d ln TPOT / d ln k = 1 / (1 − ε).

So near capacity (ε → 1) a small error in the step time of a loaded replica becomes a large error in its TPOT:
at ε = 0.9 a 2 % longer step gives a 20 % longer TPOT. MLPerf's Server scenario is run at the highest rate whose
p99 TPOT stays under its limit, i.e. close to ε = 1 by construction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

_BISECTIONS = 80
_STEP_ITERATIONS = 60


@dataclass(frozen=True, slots=True)
class OpenLoopEquilibrium:
    """The fixed point n* = λ · L · f(n*) of a replica under Poisson arrivals."""

    in_flight_seqs: float
    """n*: sequences decoding at once."""
    step_s: float
    """f(n*): the step time there (the model's TPOT in the steady state, fixed costs of the step included)."""
    elasticity_ratio: float
    """ε = n · f'(n) / f(n) at n* (central difference over n* ± 2 %)."""

    @property
    def tpot_amplification(self) -> float:
        """d ln TPOT / d ln k: how many percent TPOT moves per percent of step time (1 / (1 − ε))."""
        return 1.0 / (1.0 - self.elasticity_ratio)


def open_loop_equilibrium(
    rate_per_s: float, output_tokens: float, step_s: Callable[[float], float], max_seqs: float
) -> OpenLoopEquilibrium | None:
    """The steady state of ``rate_per_s`` requests/s of ``output_tokens`` each on a replica whose step lasts
    ``step_s(n)`` with n sequences in flight (non-decreasing in n); None when no fixed point exists below ``max_seqs``
    (the rate exceeds what the replica serves: the queue grows without bound)."""
    if rate_per_s <= 0 or output_tokens <= 0:
        raise ValueError("rate_per_s and output_tokens must be positive")
    work = rate_per_s * output_tokens

    def excess(n: float) -> float:
        return work * step_s(n) - n

    if excess(max_seqs) > 0:
        return None
    lo, hi = 0.0, float(max_seqs)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    n = 0.5 * (lo + hi)
    s = step_s(n)
    h = max(0.02 * n, 1e-6)  # a step model may round n to whole sequences: a difference over 4 % of n
    slope = (step_s(n + h) - step_s(max(n - h, 0.0))) / (n + h - max(n - h, 0.0))
    return OpenLoopEquilibrium(n, s, n * slope / s if s > 0 else 0.0)


def self_consistent_step_s(step_of: Callable[[float], float], prompt_tokens_per_s: float) -> float:
    """The step time s of a step that carries the prompt tokens arriving while it runs: s = step_of(λ · I · s)
    (``step_of(prefill_tokens)``, non-decreasing; ``prompt_tokens_per_s`` = λ · I), by fixed-point iteration from
    the step without prompts (it converges while a prompt token costs less than its arrival gap)."""
    s = step_of(0.0)
    for _ in range(_STEP_ITERATIONS):
        nxt = step_of(prompt_tokens_per_s * s)
        if abs(nxt - s) <= 1e-12 * max(s, 1e-12):
            return nxt
        s = nxt
    return s


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
