"""Scenario section ``reliability:`` (failures, checkpoints, restarts): present = `train` and `cost` include them.

Figures no public source gives for every cluster (the storage tier's bandwidth, restart and repair times) are
required; defaults are those a source gives (each cited where it is declared).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from aiinfra.specs.bounds import (
    MAX_BYTES,
    MAX_COUNT,
    BytesPositive,
    InRange,
    Ratio,
    Seconds,
    SecondsOrZero,
)
from aiinfra.specs.common import STRICT

CheckpointMode = Literal["synchronous", "asynchronous", "in-memory"]
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
    """From a failure to the job known dead (default: PyTorch's NCCL watchdog timeout, 10 min)."""
    restart_s: SecondsOrZero
    """Rescheduling onto healthy (or spare) nodes, process start and NCCL initialisation (required: depends on the
    scheduler and the job)."""
    repair_s: Seconds
    """Time a failed node is out (repair or replacement) when no spare node takes its place (required)."""
    spare_nodes: Annotated[int, InRange(0, MAX_COUNT)] | None = None
    """Hot spare nodes held beside the job; None = the count that minimises accelerator-hours held (spares included)."""
    failure_rate_scale_ratio: Ratio = 1.0
    """Multiplies every catalog failure rate (e.g. 0.5 for hardware twice as reliable as the Llama 3 cluster)."""
    rates_per_unit_hour: dict[str, RatePerUnitHour] = field(default_factory=dict)
    """Per catalog row id (reliability.yaml), a rate replacing the row's, per unit-hour of its scale (GPU or node)."""
    include_planned: bool = True
    """Count planned interruptions (maintenance: restart only, taken at a checkpoint)."""
    trials: Annotated[int, InRange(0, 10**6)] = DEFAULT_TRIALS
    """Monte-Carlo trials for the completion-time distribution (0 = analytic mean only)."""
    seed: Annotated[int, InRange(0, 2**63 - 1)] = 0
    """Seed of the Monte-Carlo random stream (same seed, same answer)."""
