"""Fleet design inputs of a serving workload: request classes with their own lengths, demand and SLO, and the load
over a day or a week (``inference.classes``, ``inference.load_profile``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from aiinfra.specs.bounds import MAX_USERS, InRange, RatePerS, Ratio, Seconds, SeqTokens
from aiinfra.specs.common import STRICT, FieldProblem

MAX_CLASSES = 64
"""Request classes in one scenario: each adds a capacity search per accelerator type and a MILP column per type;
published workload taxonomies (chat, code, documents, agents, batch) name a handful."""

MAX_NAME_CHARS = 64
"""A class name is a label printed in tables."""

HOURS_PER_DAY = 24
HOURS_PER_WEEK = 168


@dataclass(frozen=True, kw_only=True, slots=True)
class ClassSlo:
    """A class's own latency targets (None = the workload's)."""

    __pydantic_config__ = STRICT

    ttft_p90_s: Seconds | None = None
    tpot_p99_s: Seconds | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestClass:
    """One kind of request the fleet serves: its lengths, its demand and its SLO."""

    __pydantic_config__ = STRICT

    name: str
    """What the class is (chat, documents, agents ...), 1–64 characters."""
    input_tokens: SeqTokens
    output_tokens: SeqTokens
    share: Annotated[float, InRange(0, 1, lo_open=True)] | None = None
    """Share of the workload's demand (``inference.users`` or ``request_rate_per_s``); shares sum to 1."""
    users: Annotated[int, InRange(1, MAX_USERS)] | None = None
    """This class's own concurrent users (instead of a share)."""
    request_rate_per_s: RatePerS | None = None
    """This class's own request rate (instead of a share)."""
    think_time_s: Seconds | None = None
    """None = the workload's think_time_s."""
    slo: ClassSlo | None = None

    def __post_init__(self) -> None:
        given = [k for k in ("share", "users", "request_rate_per_s") if getattr(self, k) is not None]
        if len(given) != 1:
            raise FieldProblem(
                "share",
                self.share,
                f"class {self.name!r} gives {len(given)} of share, users, request_rate_per_s",
                "give exactly one of them",
            )
        if not self.name.strip() or len(self.name) > MAX_NAME_CHARS:
            raise FieldProblem(
                "name", self.name, f"must be 1–{MAX_NAME_CHARS} characters", "name the class (chat, documents ...)"
            )


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadProfile:
    """Demand hour by hour: multipliers of the workload's demand, or request times read from a CSV."""

    __pydantic_config__ = STRICT

    hourly_ratio: tuple[Ratio, ...] | None = None
    """Demand in each hour of a day (24 values) or a week (168) as a multiple of the workload's demand."""
    arrivals_csv: str | None = None
    """CSV with a column ``timestamp_s`` (request arrival times in seconds): the hourly request rates are its counts
    per hour of the day, averaged over the days it covers (replacing the workload's demand)."""
    scale_up_delay_s: Seconds
    """Time from deciding to add a replica until it serves: instance start plus weight load (measure yours; see
    docs/examples/fleet.md for published figures)."""
    autoscaler: Literal["reactive", "predictive"] = "reactive"
    """reactive: replicas are requested when the demand arrives and serve after the delay; predictive: requested
    ``scale_up_delay_s`` ahead from the known profile (as a forecasting planner does)."""
    reserved_pricing: Literal["reserved-1y", "reserved-3y"] = "reserved-1y"
    """The commitment priced for the always-on and base-plus-peak fleets."""

    def __post_init__(self) -> None:
        if (self.hourly_ratio is None) == (self.arrivals_csv is None):
            raise FieldProblem(
                "hourly_ratio",
                self.hourly_ratio,
                "give exactly one of hourly_ratio and arrivals_csv",
                "give 24 (a day) or 168 (a week) multipliers, or a CSV of arrival times",
            )
        if self.hourly_ratio is not None and len(self.hourly_ratio) not in (HOURS_PER_DAY, HOURS_PER_WEEK):
            raise FieldProblem(
                "hourly_ratio",
                len(self.hourly_ratio),
                "must hold 24 (a day) or 168 (a week) values",
                "give one multiplier per hour",
            )
