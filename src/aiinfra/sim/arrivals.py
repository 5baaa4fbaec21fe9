"""Request streams: Poisson, gamma (bursty), trace files; prompt/output length distributions."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aiinfra.errors import SpecError
from aiinfra.specs.bounds import MAX_SECONDS, MAX_SEQ_TOKENS, MAX_SIMULATED_REQUESTS
from aiinfra.specs.files import read_text
from aiinfra.specs.serving_sim import LengthDist

MAX_SIMULATED_TOKENS = 2 * 10**10
"""Work budget of one simulation in prompt + output tokens over all requests: the simulator steps about 7 × 10⁷
tokens a second on one core (bench/README.md: 53,800 requests/s of 1,024 + 256 tokens), so this is about five
minutes; larger runs are refused with the limit instead of running for hours."""


def check_budget(reqs: Requests) -> None:
    """Refuse a request stream whose simulation would exceed the work budgets (requests, tokens)."""
    n = len(reqs)
    if n > MAX_SIMULATED_REQUESTS:
        raise SpecError(
            "inference.num_requests",
            n,
            f"above the simulation budget of {MAX_SIMULATED_REQUESTS:,} requests",
            "simulate fewer requests (a shorter duration_s or fewer trace rows)",
        )
    tokens = int(reqs.input_tokens.sum()) + int(reqs.output_tokens.sum())
    if tokens > MAX_SIMULATED_TOKENS:
        raise SpecError(
            "inference.num_requests",
            n,
            f"{tokens:.3g} prompt + output tokens, above the simulation budget of {MAX_SIMULATED_TOKENS:.0e}",
            "simulate fewer or shorter requests",
        )


@dataclass(frozen=True, slots=True)
class Requests:
    """A request stream as arrays (one entry per request, sorted by arrival)."""

    arrival_s: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    priority: np.ndarray
    prefix_id: np.ndarray | None = None
    """Shared-prefix group per request (-1 = none)."""
    prefix_tokens: np.ndarray | None = None
    """Tokens of the shared prefix per request."""
    think_s: np.ndarray | None = None
    """Closed loop: the think time before each request is sent after its client's previous answer (None = 0)."""

    def __len__(self) -> int:
        return int(self.arrival_s.shape[0])


class ArrivalKind:
    """One ``inference.arrival.kind``: how its requests are sent. Code asks the kind (``ARRIVALS[name]``), never
    compares names: ``open_loop`` kinds draw their gaps from a rate (:meth:`gaps`), ``closed_loop`` ones send a
    client's next request when its answer ends, ``from_trace`` ones read recorded arrivals."""

    name: str = ""
    open_loop = False
    closed_loop = False
    from_trace = False

    def gaps(self, rng: np.random.Generator, rate_per_s: float, n: int, cv: float | None) -> np.ndarray:
        """``n`` inter-arrival gaps of mean 1/λ (open-loop kinds only)."""
        raise NotImplementedError(f"{self.name} arrivals have no inter-arrival gaps")


class PoissonArrivals(ArrivalKind):
    """Poisson: exponential gaps of mean 1/λ."""

    name = "poisson"
    open_loop = True

    def gaps(self, rng: np.random.Generator, rate_per_s: float, n: int, cv: float | None) -> np.ndarray:
        """``n`` exponential gaps of mean 1/``rate_per_s`` (s), a stratified sample (:func:`stratified_uniforms`:
        the run's rate is λ, not one seed's); ``cv`` is not used."""
        out: np.ndarray = -np.log1p(-stratified_uniforms(rng, n)) / rate_per_s
        return out


class GammaArrivals(ArrivalKind):
    """Gamma (bursty): shape k = 1/cv², scale = cv²/λ (mean 1/λ, coefficient of variation cv)."""

    name = "gamma"
    open_loop = True

    def gaps(self, rng: np.random.Generator, rate_per_s: float, n: int, cv: float | None) -> np.ndarray:
        """``n`` gamma gaps of mean 1/``rate_per_s`` (s) and coefficient of variation ``cv``; a SpecError on
        inference.arrival.cv when it is missing."""
        if cv is None:
            raise SpecError(
                "inference.arrival.cv",
                None,
                "gamma arrivals need a coefficient of variation",
                "set inference.arrival.cv (1 = Poisson, > 1 = bursty)",
            )
        from scipy.special import gammaincinv  # type: ignore[import-untyped,unused-ignore]

        shape = 1.0 / cv**2
        u = np.clip(stratified_uniforms(rng, n), 1e-12, 1.0 - 1e-12)  # a stratified sample, as the Poisson gaps
        out: np.ndarray = np.asarray(gammaincinv(shape, u), dtype=float) / (rate_per_s * shape)
        return out


class ClosedLoopArrivals(ArrivalKind):
    """A closed loop of ``concurrency`` clients (sim/run.py places their first requests)."""

    name = "concurrency"
    closed_loop = True


class TraceArrivals(ArrivalKind):
    """Arrivals and lengths read from a trace file (:func:`read_trace`)."""

    name = "trace"
    from_trace = True


#: every arrival kind by name (the names of specs.workload.Arrival.kind)
ARRIVALS: dict[str, ArrivalKind] = {
    k.name: k for k in (PoissonArrivals(), GammaArrivals(), ClosedLoopArrivals(), TraceArrivals())
}


def interarrival_s(rng: np.random.Generator, kind: str, rate_per_s: float, n: int, cv: float | None) -> np.ndarray:
    """``n`` gaps of the open-loop arrival ``kind`` (:data:`ARRIVALS`) at λ = ``rate_per_s``; the rate and the
    request count are checked first (before drawing, since duration_s × rate sizes the draw)."""
    if rate_per_s <= 0:
        raise SpecError("inference.request_rate_per_s", rate_per_s, "must be > 0", "give a positive arrival rate")
    if n > 2 * MAX_SIMULATED_REQUESTS:
        raise SpecError(
            "inference.duration_s",
            f"{n:.3g} requests at {rate_per_s:g}/s",
            f"above the simulation budget of {MAX_SIMULATED_REQUESTS:,} requests",
            "give a shorter duration_s, a lower rate, or num_requests",
        )
    return ARRIVALS[kind].gaps(rng, rate_per_s, n, cv)


def stratified_uniforms(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` draws on [0, 1), one in each of the n equal slices of probability, in random order (stratified
    sampling: McKay, Beckman & Conover, Technometrics 1979). A run of n requests then has the distribution's mean
    and spread, not those of one seed's sample: a benchmark's few prompts (10 at one client, 200 offline) stand for
    the dataset they were drawn from, and a plain draw of 200 heavy-tailed ShareGPT answers can miss its mean by a
    fifth. The open-loop gaps are drawn the same way, so a run of n requests at λ spans n / λ as its rate says."""
    out: np.ndarray = (rng.permutation(n) + rng.random(n)) / max(n, 1)
    return out


class LengthKind:
    """One ``LengthDist.kind``: how ``n`` token counts of mean ``mean`` are drawn (stratified: each kind maps
    :func:`stratified_uniforms` through its inverse CDF)."""

    name: str = ""

    def draw(self, rng: np.random.Generator, dist: LengthDist, mean: int, n: int, field: str) -> np.ndarray:
        """``n`` token counts of mean ``mean`` (int64); ``field`` names the scenario field in errors."""
        raise NotImplementedError


class FixedLengths(LengthKind):
    """Every request at ``mean`` tokens."""

    name = "fixed"

    def draw(self, rng: np.random.Generator, dist: LengthDist, mean: int, n: int, field: str) -> np.ndarray:
        """``n`` copies of ``mean``."""
        return np.full(n, mean, dtype=np.int64)


class UniformLengths(LengthKind):
    """Uniform on [low, high] (default [1, 2·mean − 1], so the mean is ``mean``)."""

    name = "uniform"

    def draw(self, rng: np.random.Generator, dist: LengthDist, mean: int, n: int, field: str) -> np.ndarray:
        """``n`` integers uniform on [low, high], both ends included; a SpecError on ``field``.high below low."""
        lo = dist.low if dist.low is not None else 1
        hi = dist.high if dist.high is not None else max(2 * mean - lo, lo)
        if hi < lo:
            raise SpecError(f"{field}.high", hi, f"is below low = {lo}", "give high >= low")
        out: np.ndarray = np.minimum(lo + np.floor(stratified_uniforms(rng, n) * (hi - lo + 1)), hi).astype(np.int64)
        return out


class LognormalLengths(LengthKind):
    """Lognormal with E[length] = ``mean``: μ = ln(mean) − σ²/2 (rounded, at least 1, at most ``high`` when given —
    a dataset's longest sample; the cap lowers the mean by the clipped tail)."""

    name = "lognormal"

    def draw(self, rng: np.random.Generator, dist: LengthDist, mean: int, n: int, field: str) -> np.ndarray:
        """``n`` rounded lognormal draws of mean ``mean``; a SpecError on ``field``.sigma when σ is missing."""
        if dist.sigma is None:
            raise SpecError(
                f"{field}.sigma",
                None,
                "a lognormal length distribution needs σ",
                "set sigma (the standard deviation of log(length), e.g. 0.5)",
            )
        sigma = dist.sigma
        mu = np.log(mean) - sigma**2 / 2.0  # so that E[length] = mean
        from scipy.special import ndtri  # type: ignore[import-untyped,unused-ignore]

        u = np.clip(stratified_uniforms(rng, n), 1e-12, 1.0 - 1e-12)
        z: np.ndarray = np.asarray(ndtri(u), dtype=float)  # the standard normal's inverse CDF
        drawn = np.maximum(1, np.round(np.exp(mu + sigma * z)))
        # capped at the longest sequence any input may state (keeps a wide σ's far tail an int64)
        drawn = np.minimum(drawn, dist.high if dist.high is not None else MAX_SEQ_TOKENS)
        out: np.ndarray = drawn.astype(np.int64)
        return out


def quantile_table_mean(quantiles: Sequence[float]) -> float:
    """The mean of the piecewise-linear distribution of a quantile table (lengths at probabilities 0, 1/K, ..., 1):
    the mean of (q_i + q_(i+1)) / 2 over its K segments."""
    q = np.asarray(quantiles, dtype=float)
    return float(np.mean((q[1:] + q[:-1]) / 2.0))


class EmpiricalLengths(LengthKind):
    """A dataset's own length distribution, from its quantile table ``quantiles`` (lengths at probabilities 0, 1/K,
    ..., 1): each draw is the piecewise-linear inverse CDF at a uniform u, times mean / (the table's mean), so the
    draws have mean ``mean`` and the dataset's shape — a lognormal moment fit keeps the mean and spread of a bimodal
    dataset such as ShareGPT but not its mass of short answers (a quarter of them under 30 tokens). The table's
    mean is that of its piecewise-linear distribution (:func:`quantile_table_mean`)."""

    name = "empirical"

    def draw(self, rng: np.random.Generator, dist: LengthDist, mean: int, n: int, field: str) -> np.ndarray:
        """``n`` rounded draws (at least 1, at most ``high`` when given); a SpecError on ``field``.quantiles when the
        table is missing or decreases."""
        q = np.asarray(dist.quantiles or (), dtype=float)
        if q.size < 2:
            raise SpecError(
                f"{field}.quantiles",
                None,
                "an empirical length distribution needs its quantile table",
                "give quantiles: the dataset's lengths at evenly spaced probabilities, minimum first, maximum last",
            )
        if bool(np.any(np.diff(q) < 0)):
            raise SpecError(
                f"{field}.quantiles", list(dist.quantiles or ()), "decreases", "list the quantiles in rising order"
            )
        table_mean = quantile_table_mean(dist.quantiles or ())
        probs = np.linspace(0.0, 1.0, q.size)
        drawn = np.interp(stratified_uniforms(rng, n), probs, q) * (mean / table_mean)
        drawn = np.minimum(np.maximum(1, np.round(drawn)), dist.high if dist.high is not None else MAX_SEQ_TOKENS)
        out: np.ndarray = drawn.astype(np.int64)
        return out


#: every length distribution by name (the names of specs.serving_sim.LengthDist.kind)
LENGTHS: dict[str, LengthKind] = {
    k.name: k for k in (FixedLengths(), UniformLengths(), LognormalLengths(), EmpiricalLengths())
}


def lengths(rng: np.random.Generator, dist: LengthDist | None, mean: int, n: int, field: str) -> np.ndarray:
    """``n`` token counts of mean ``mean`` drawn as ``dist`` says (:data:`LENGTHS`); fixed when None."""
    if dist is None:
        return FixedLengths().draw(rng, LengthDist(), mean, n, field)
    return LENGTHS[dist.kind].draw(rng, dist, mean, n, field)


REQUIRED_TRACE = ("arrival_s", "input_tokens", "output_tokens")


def read_trace(path: str) -> Requests:
    """CSV or JSONL with arrival_s, input_tokens, output_tokens (optional prefix_id, priority)."""
    p = Path(path)
    text = read_text(p, "inference.arrival.path", "a CSV or JSONL trace")
    rows: list[dict[str, object]]
    if p.suffix == ".jsonl":
        rows = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                raise SpecError("inference.arrival.path", path, f"line {lineno}: not JSON", "fix the trace") from None
    else:
        try:
            rows = list(csv.DictReader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise SpecError("inference.arrival.path", path, f"not a readable CSV ({exc})", "fix the trace") from None
    if not rows:
        raise SpecError("inference.arrival.path", path, "trace is empty", "give at least one request")
    cols: dict[str, list[float]] = {k: [] for k in (*REQUIRED_TRACE, "priority")}
    prefix_names: list[str] = []
    for i, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise SpecError(f"trace row {i}", row, "is not an object", "write one JSON object per line")
        for key in (*REQUIRED_TRACE, "priority"):
            raw = row.get(key)
            if key == "priority" and raw in (None, ""):
                raw = 0
            try:
                value = float(raw)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise SpecError(
                    f"trace row {i}.{key}",
                    raw,
                    "missing or not a number",
                    f"every row needs {', '.join(REQUIRED_TRACE)} (priority optional, an integer)",
                ) from None
            if not math.isfinite(value) or abs(value) > (MAX_SEQ_TOKENS if key != "arrival_s" else MAX_SECONDS):
                raise SpecError(
                    f"trace row {i}.{key}",
                    raw,
                    f"is not finite or above the largest allowed ({MAX_SEQ_TOKENS:,} tokens; a century of seconds)",
                    "fix the trace row",
                )
            if key != "arrival_s" and not value.is_integer():
                raise SpecError(f"trace row {i}.{key}", raw, "must be a whole number", "fix the trace row")
            if (key == "arrival_s" and value < 0) or (key in ("input_tokens", "output_tokens") and value < 1):
                raise SpecError(
                    f"trace row {i}.{key}",
                    raw,
                    "must be positive" if key != "arrival_s" else "must be ≥ 0",
                    "fix the trace row",
                )
            cols[key].append(value)
        prefix_names.append(str(row.get("prefix_id") or ""))
    order = np.argsort(np.asarray(cols["arrival_s"]), kind="stable")
    prompts = np.asarray(cols["input_tokens"], dtype=np.int64)
    groups = {name: i for i, name in enumerate(sorted({n for n in prefix_names if n}))}
    pid = np.array([groups.get(n, -1) for n in prefix_names], dtype=np.int64)
    # the shared prefix of a group = its shortest prompt (the trace gives no prefix length)
    shortest = {g: int(prompts[pid == g].min()) for g in groups.values()}
    ptok = np.array([shortest.get(int(g), 0) for g in pid], dtype=np.int64)
    return Requests(
        arrival_s=np.asarray(cols["arrival_s"])[order],
        input_tokens=np.asarray(cols["input_tokens"], dtype=np.int64)[order],
        output_tokens=np.asarray(cols["output_tokens"], dtype=np.int64)[order],
        priority=np.asarray(cols["priority"], dtype=np.int64)[order],
        prefix_id=pid[order],
        prefix_tokens=ptok[order],
    )
