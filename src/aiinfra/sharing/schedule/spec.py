"""The schedule file format (``schedule:`` section) and the job table the simulator consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

import pydantic

from aiinfra.specs.bounds import MAX_CLUSTER_NODES, MAX_PER_NODE, MAX_SCHEDULE_JOBS, MAX_UTILISATION_BINS, InRange
from aiinfra.specs.common import STRICT

PosInt = pydantic.PositiveInt
NonNegInt = pydantic.NonNegativeInt
PosFloat = pydantic.PositiveFloat
Nodes = Annotated[int, InRange(1, MAX_CLUSTER_NODES)]
JobCount = Annotated[int, InRange(1, MAX_SCHEDULE_JOBS)]

Policy = Literal["fifo", "backfill", "gang", "priority", "fairshare"]
POLICIES: tuple[str, ...] = ("fifo", "backfill", "gang", "priority", "fairshare")


@dataclass(frozen=True, kw_only=True, slots=True)
class ClusterInput:
    """The ``schedule.cluster`` section: whole-GPU nodes, their leaf groups and any MIG-mode nodes."""

    __pydantic_config__ = STRICT

    nodes: Nodes
    """Nodes of whole GPUs (gang-scheduled jobs take GPUs on these)."""
    gpus_per_node: Annotated[int, InRange(1, MAX_PER_NODE)]
    """GPUs in one node (whole-GPU and MIG-mode nodes alike)."""
    nodes_per_leaf: Nodes | None = None
    """Nodes under one leaf (top-of-rack) switch, consecutive node ids; the ``gang`` policy keeps a job's nodes in
    as few leaves as possible. None = one leaf (no topology)."""
    accelerator: str | None = None
    """Catalog accelerator id; needed when jobs ask for MIG profiles (its MIG rules place them)."""
    mig_nodes: Annotated[int, InRange(0, MAX_CLUSTER_NODES)] = 0
    """Extra nodes whose GPUs run in MIG mode, for jobs that name a MIG profile (0 = none)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class GeneratorInput:
    """A synthetic trace: every parameter is stated by the user (none is assumed)."""

    __pydantic_config__ = STRICT

    jobs: JobCount
    seed: int
    arrival_rate_per_s: PosFloat
    """Poisson arrivals."""
    gpus: dict[int, float]
    """GPU count -> probability (normalised)."""
    duration_median_s: PosFloat
    duration_sigma: PosFloat
    """Log-normal durations: median and sigma of log(duration)."""
    users: JobCount
    priorities: dict[int, float] = field(default_factory=lambda: {0: 1.0})
    """Priority -> probability."""
    mig_profiles: dict[str, float] = field(default_factory=dict)
    """MIG profile -> probability of a job asking for it instead of whole GPUs (sums to at most 1)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FailuresInput:
    """Node failures drawn from the reliability catalog's per-GPU and per-node rates (catalog/data/reliability.yaml,
    the unexpected rows: Llama 3's 16,384-H100 cluster unless ``rates_per_unit_hour`` replaces them)."""

    __pydantic_config__ = STRICT

    repair_s: PosFloat
    """A failed node is out this long when its cause needs a repair (required: depends on spares and staff)."""
    restart_s: pydantic.NonNegativeFloat = 0.0
    """Added to an interrupted job's remaining work (rescheduling, process start, loading the checkpoint)."""
    checkpoint_interval_s: PosFloat | None = None
    """An interrupted job loses the work since its last checkpoint (taken every this many seconds of its run);
    None = no checkpoints: it loses all the work of the interrupted run."""
    failure_rate_scale_ratio: PosFloat = 1.0
    """Multiplies every catalog rate (0.5 = hardware twice as reliable as the Llama 3 cluster)."""
    rates_per_unit_hour: dict[str, pydantic.NonNegativeFloat] = field(default_factory=dict)
    """Per reliability.yaml row id, a rate replacing the row's (per GPU-hour or node-hour, as the row counts)."""
    seed: NonNegInt = 0
    """Seed of the failure times (same seed, same failures)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScheduleInput:
    """The ``schedule:`` section of a schedule file: the cluster, the queue policy, the jobs (a trace or a generator)
    and the optional horizon and node failures."""

    __pydantic_config__ = STRICT

    cluster: ClusterInput
    policy: Policy
    """fifo | backfill (EASY) | gang (EASY, whole nodes for jobs of a node or more, fewest leaves) | priority
    (preemptive) | fairshare (least-served user first, with EASY backfill). See sharing/schedule/sim.py."""
    trace: str | None = None
    """CSV trace (job_id,arrival_s,gpus,duration_s,priority,user[,mig_profile]), relative to the schedule file."""
    generator: GeneratorInput | None = None
    horizon_s: PosFloat | None = None
    """Stop the simulation here (jobs then running or queued are reported as such); None = run until all finish."""
    backfill_depth: JobCount | None = None
    """Most queued jobs a backfill pass examines behind the blocked head; None = all."""
    failures: FailuresInput | None = None
    """Node failures (whole-GPU nodes; MIG-mode nodes do not fail in this model); None = no failures."""
    utilisation_bins: Annotated[int, InRange(1, MAX_UTILISATION_BINS)] = 48
    """Points of the utilisation-over-time series."""
    name: str = ""
    description: str = ""


@dataclass(frozen=True, slots=True)
class Jobs:
    """The trace as columns (index = row of the trace)."""

    ids: tuple[str, ...]
    arrival_s: tuple[float, ...]
    gpus: tuple[int, ...]
    """Whole GPUs; 0 for a job on a MIG instance."""
    duration_s: tuple[float, ...]
    priority: tuple[int, ...]
    user: tuple[str, ...]
    mig_profile: tuple[str, ...]
    """'' for whole-GPU jobs."""

    def __len__(self) -> int:
        return len(self.ids)
