"""Scenario section ``reliability:`` (failures, checkpoints, restarts): present = `train` and `cost` include them.

Figures no public source gives for every cluster (the storage tier's bandwidth, restart and repair times) are
required; defaults are those a source gives (each cited where it is declared).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from aiinfra.specs.bounds import (
    MAX_ACCELERATORS,
    MAX_BYTES,
    MAX_COUNT,
    BytesPositive,
    Fraction,
    InRange,
    Ratio,
    Seconds,
    SecondsOrZero,
)
from aiinfra.specs.common import STRICT

CheckpointMode = Literal["synchronous", "asynchronous", "in-memory"]
CheckpointLayout = Literal["sharded", "consolidated"]
PerDay = Annotated[float, InRange(0, 1e4)]
Hour = Annotated[int, InRange(0, 24)]
BytesPerS = Annotated[float, InRange(0, MAX_BYTES, lo_open=True)]
RatePerUnitHour = Annotated[float, InRange(0, 1e3)]

#: PCI Express 5.0 x16, one direction: 32 GT/s × 16 lanes × 128/130 encoding / 8 bits = 63.0 GB/s (PCI-SIG, PCI
#: Express Base Specification Revision 5.0, 2019): the device-to-host copy an asynchronous checkpoint blocks on.
PCIE5_X16_BYTES_PER_S = 32e9 * 16 * 128 / 130 / 8

#: PyTorch's default collective timeout for the NCCL backend is 10 minutes (torch.distributed.init_process_group,
#: ``timeout``): a hung collective is detected by the watchdog after this long.
NCCL_DEFAULT_TIMEOUT_S = 600.0

#: Monte-Carlo trials by default: the p90 of 2,000 trials has a standard error of about 1 % of the spread (a
#: computational choice, not a measured figure).
DEFAULT_TRIALS = 2000


@dataclass(frozen=True, kw_only=True, slots=True)
class ClusterAge:
    """Burn-in and wear-out: the unexpected rates × m(a) at the run's middle age a (days since the cluster entered
    service): m(a) = 1 + (burn_in_ratio − 1)·e^{−a / burn_in_days} + wear_out_ratio_per_year · max(0, a − onset) /
    365. Every figure is the user's: the calibration clusters' rates already hold their own (first-year) age mix."""

    __pydantic_config__ = STRICT

    age_days: Annotated[float, InRange(0, 36_500)]
    """The cluster's age when the run starts."""
    burn_in_ratio: Annotated[float, InRange(1, 100)] = 1.0
    """Rate multiple of a new cluster (early-life failures), decaying with ``burn_in_days``."""
    burn_in_days: Annotated[float, InRange(0, 36_500, lo_open=True)] | None = None
    """e-folding time of the burn-in excess (required when burn_in_ratio > 1)."""
    wear_out_onset_days: Annotated[float, InRange(0, 36_500)] = 1_095.0
    """Age when wear-out starts: Titan's K20X GPUs began failing in numbers in 2016, about three years into service
    (Ostrouchov et al., "GPU Lifetimes on Titan Supercomputer", SC20; ORNL research highlight)."""
    wear_out_ratio_per_year: Annotated[float, InRange(0, 100)] = 0.0
    """Added rate multiple per year past the onset (0 = no wear-out)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HumanResponse:
    """A person's response before a failure that needs a repair is handled, by hour of day (failures arrive
    uniformly over the day): day_s inside [day_start_hour, day_end_hour), night_s outside."""

    __pydantic_config__ = STRICT

    day_s: SecondsOrZero
    night_s: SecondsOrZero
    day_start_hour: Hour
    day_end_hour: Hour


@dataclass(frozen=True, kw_only=True, slots=True)
class LemonNodes:
    """Repeat offenders: a share of the nodes fails ``rate_ratio`` × as often and is excluded (replaced by a healthy
    node) after ``exclude_after_count`` failures."""

    __pydantic_config__ = STRICT

    share_frac: Fraction
    rate_ratio: Annotated[float, InRange(1, 1e4)]
    exclude_after_count: Annotated[int, InRange(1, 1000)]


@dataclass(frozen=True, kw_only=True, slots=True)
class SlowNodes:
    """Fail-slow nodes: the job runs ``slowdown_frac`` slower (a synchronous step waits for the slowest rank) from
    the node's slowdown until it is noticed and swapped (``noticed_s``, then a restart)."""

    __pydantic_config__ = STRICT

    per_node_per_day: PerDay
    slowdown_frac: Annotated[float, InRange(0, 0.99, lo_open=True)]
    noticed_s: SecondsOrZero


@dataclass(frozen=True, kw_only=True, slots=True)
class Rollbacks:
    """NaN / loss-spike rollbacks of the job: noticed after ``detection_s``, the job reloads a checkpoint
    ``rollback_s`` of training before the last one (e.g. PaLM: restart ~100 steps before the spike) and restarts."""

    __pydantic_config__ = STRICT

    per_day: PerDay
    detection_s: SecondsOrZero
    rollback_s: SecondsOrZero


@dataclass(frozen=True, kw_only=True, slots=True)
class ReliabilityInput:
    """``reliability:``: how the job fails, checkpoints and restarts."""

    __pydantic_config__ = STRICT

    storage_write_bytes_per_s: BytesPerS
    """Aggregate write bandwidth of the checkpoint storage tier (Llama 3: Tectonic, 2 TB/s sustained, 7 TB/s peak)."""
    storage_read_bytes_per_s: BytesPerS | None = None
    """Aggregate read bandwidth for loading a checkpoint on restart; None = the write bandwidth."""
    node_storage_bytes_per_s: BytesPerS | None = None
    """Per-node bound on checkpoint traffic (storage NIC, local disk); None = only the aggregate bounds it."""
    checkpoint_mode: CheckpointMode = "synchronous"
    """synchronous: training stops for the whole write; asynchronous: only for the device-to-host snapshot (PyTorch
    DCP async_save; Check-N-Run, NSDI'22); in-memory: snapshot to host memory and peers, restart loads from peers
    (Gemini, SOSP'23)."""
    snapshot_bytes_per_s_per_accelerator: BytesPerS = PCIE5_X16_BYTES_PER_S
    """Device-to-host copy bandwidth per accelerator (default: PCIe 5.0 x16, one direction, 63.0 GB/s)."""
    checkpoint_bytes: BytesPositive | None = None
    """One full checkpoint; None = weights + fp32 master + optimizer states of the training section."""
    checkpoint_interval_s: Seconds | None = None
    """Seconds of training between checkpoints; None = the Young/Daly optimum."""
    detection_s: SecondsOrZero = NCCL_DEFAULT_TIMEOUT_S
    """From a hang (a collective that never completes) to the job known dead (default: PyTorch's NCCL watchdog
    timeout, 10 min)."""
    crash_detection_s: SecondsOrZero | None = None
    """From a crash (process exit, XID error) to the job known dead; None = detection_s (no faster path assumed)."""
    human_response: HumanResponse | None = None
    """A person's response time by hour of day for failures that need a repair; None = automated handling."""
    restart_failure_prob: Annotated[float, InRange(0, 0.99)] = 0.0
    """Probability that one restart attempt fails by itself after a machine swap (the replacement is a bad node
    again, or comes up with NCCL/IB errors): the recovery of a failure that needs a repair (and a slow node's swap) is
    a geometric chain of attempts, 1 / (1 − p) on average, each failed attempt costing restart_s; crashes and hangs
    that restart on the same nodes take one attempt (docs/reliability.md, "Recovery as it happens")."""
    lemon_nodes: LemonNodes | None = None
    slow_nodes: SlowNodes | None = None
    rollbacks: Rollbacks | None = None
    cluster_age: ClusterAge | None = None
    startup_s: SecondsOrZero | None = None
    """The first start (scheduling, process start, NCCL init); None = restart_s."""
    warmup_s: SecondsOrZero = 0.0
    """Compilation / warm-up after every start (restarts included) before steps reach full speed."""
    data_loading_stall_frac: Annotated[float, InRange(0, 0.9)] = 0.0
    """Share of step time lost waiting for input data."""
    planned_restarts_per_day: PerDay | None = None
    """Planned restarts of the job per day (code, data, configuration and maintenance); None = Llama 3's 47 in 54
    days (Table 5, one job)."""
    cluster_accelerators_count: Annotated[int, InRange(1, MAX_ACCELERATORS)] | None = None
    """The whole cluster the job runs in, for the expected cluster-wide failure count; None = hardware.count."""
    storage_kind: str | None = None
    """A storage row of catalog/data/reliability.yaml (kind: storage): the storage bandwidths are then rated
    figures, achieved at the row's efficiency; None = the bandwidths given are already the achieved ones."""
    storage_efficiency_frac: Fraction | None = None
    """Achieved share of the rated storage bandwidth (replaces the storage row's)."""
    checkpoint_layout: CheckpointLayout = "sharded"
    """sharded: every writer saves its own shard at once (PyTorch DCP); consolidated: one writer saves the whole."""
    checkpoint_writers_count: Annotated[int, InRange(1, MAX_COUNT)] | None = None
    """Writers in parallel; None = every node (sharded) or one (consolidated). With node_storage_bytes_per_s each
    writer is bounded by it."""
    restart_s: SecondsOrZero
    """Rescheduling onto healthy (or spare) nodes, process start and NCCL initialisation (required: depends on the
    scheduler and the job)."""
    repair_s: Seconds
    """Time a failed node is out (repair or replacement) when no spare node takes its place (required)."""
    spare_nodes: Annotated[int, InRange(0, MAX_COUNT)] | None = None
    """Hot spare nodes held beside the job; None = the count that minimises accelerator-hours held (spares included)."""
    failure_rate_scale_ratio: Ratio = 1.0
    """Multiplies every unexpected catalog rate, on top of the accelerator generation's ratio (e.g. 0.5 for hardware
    twice as reliable as the catalog's; an operator's own count over the model's)."""
    rates_per_unit_hour: dict[str, RatePerUnitHour] = field(default_factory=dict)
    """Per catalog row id (reliability.yaml), a rate replacing the row's, per unit-hour of its scale (GPU or node)."""
    include_planned: bool = True
    """Count planned interruptions (a restart at a checkpoint: no lost work, no detection, no repair)."""
    trials: Annotated[int, InRange(0, 10**6)] = DEFAULT_TRIALS
    """Monte-Carlo trials for the completion-time distribution (0 = analytic mean only)."""
    seed: Annotated[int, InRange(0, 2**63 - 1)] = 0
    """Seed of the Monte-Carlo random stream (same seed, same answer)."""
