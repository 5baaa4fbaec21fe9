"""Checkpoints: size, write and load time, the time training blocks per checkpoint, and the optimal interval.

- Write time = size / min(aggregate storage bandwidth × achieved efficiency, per-writer bandwidth × writers): every
  writer (by default every node: a sharded save, PyTorch DCP) writes its shard at once and the slower of the two
  limits the whole write; a consolidated save has one writer. Rated storage bandwidth is not what checkpoints get:
  the efficiency comes from the storage row (catalog/data/reliability.yaml, kind: storage) or the user.
- Blocking time per checkpoint by mode: synchronous = the whole write; asynchronous = only the device-to-host copy of
  each accelerator's shard (PyTorch Distributed Checkpoint ``async_save``; Eisenman et al., "Check-N-Run", NSDI 2022),
  the write to storage overlapping training; in-memory = the same snapshot, kept in host memory of the node and its
  peers, so a restart loads it over the network instead of from storage (Wang et al., "Gemini: Fast Failure Recovery
  in Distributed Training with In-Memory Checkpoints", SOSP 2023).
- Optimal interval τ = √(2·δ·M) (Young, "A first order approximation to the optimum checkpoint interval", CACM 1974;
  Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 2006, first-order
  form), δ = blocking time per checkpoint, M = mean time between interruptions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiinfra.errors import SpecError
from aiinfra.specs.common import DTYPE_BYTES


def checkpoint_bytes_per_param(precision: str, optimizer: str) -> float:
    """Weights (training precision) + fp32 master copy (if below fp32) + fp32 optimizer moments."""
    fp32 = DTYPE_BYTES["fp32"]
    weights = DTYPE_BYTES[precision]
    master = 0.0 if weights >= fp32 else fp32
    moments = 2 * fp32 if optimizer == "adam" else fp32
    return weights + master + moments


def young_daly_interval_s(checkpoint_write_s: float, mtbf_s: float) -> float:
    """Optimal checkpoint interval √(2·δ·M) (Young 1974; Daly 2006 first-order form)."""
    return math.sqrt(2.0 * checkpoint_write_s * mtbf_s)


def preemption_waste_frac(checkpoint_write_s: float, mtbf_s: float, restart_s: float) -> float:
    """First-order wasted fraction δ/τ + τ/(2M) + R/M at the Young/Daly interval τ (Young 1974): checkpoint writes,
    work lost since the last checkpoint (τ/2 on average per interruption) and restarts. May exceed 1 (the job then
    never finishes)."""
    tau = young_daly_interval_s(checkpoint_write_s, mtbf_s)
    return checkpoint_write_s / tau + tau / (2.0 * mtbf_s) + restart_s / mtbf_s


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckpointTimes:
    """One checkpoint of the job: its size and the times it costs."""

    mode: str
    checkpoint_bytes: float
    write_s: float
    """Writing the whole checkpoint to the storage tier."""
    blocking_s: float
    """Training stopped per checkpoint (δ): the write (synchronous) or the device-to-host snapshot."""
    load_s: float
    """Loading it back on a restart: from storage, or from peers' memory (in-memory)."""


def checkpoint_times(
    checkpoint_bytes: float,
    *,
    nodes: int,
    accelerators: int,
    mode: str,
    storage_write_bytes_per_s: float,
    storage_read_bytes_per_s: float | None,
    node_storage_bytes_per_s: float | None,
    snapshot_bytes_per_s_per_accelerator: float,
    peer_bytes_per_s_per_accelerator: float | None,
    efficiency_frac: float = 1.0,
    read_efficiency_frac: float | None = None,
    writers_count: int | None = None,
) -> CheckpointTimes:
    """Size and times of one checkpoint (see the module docstring). In-memory restarts load each accelerator's shard
    at its scale-out bandwidth ``peer_bytes_per_s_per_accelerator`` (None: from storage, like the other modes)."""
    if not checkpoint_bytes > 0:
        raise SpecError("reliability.checkpoint_bytes", checkpoint_bytes, "must be positive", "give the bytes")
    writers = nodes if writers_count is None else writers_count
    per_node = node_storage_bytes_per_s * writers if node_storage_bytes_per_s else math.inf
    write_bw = min(storage_write_bytes_per_s * efficiency_frac, per_node)
    read_eff = efficiency_frac if read_efficiency_frac is None else read_efficiency_frac
    read_bw = min((storage_read_bytes_per_s or storage_write_bytes_per_s) * read_eff, per_node)
    write_s = checkpoint_bytes / write_bw
    snapshot_s = checkpoint_bytes / accelerators / snapshot_bytes_per_s_per_accelerator
    if mode == "synchronous":
        blocking, load = write_s, checkpoint_bytes / read_bw
    elif mode == "asynchronous":
        blocking, load = snapshot_s, checkpoint_bytes / read_bw
    elif mode == "in-memory":
        blocking = snapshot_s
        load = (
            checkpoint_bytes / accelerators / peer_bytes_per_s_per_accelerator
            if peer_bytes_per_s_per_accelerator
            else checkpoint_bytes / read_bw
        )
    else:
        raise SpecError(
            "reliability.checkpoint_mode",
            mode,
            "unknown checkpoint mode",
            "one of synchronous, asynchronous, in-memory",
        )
    return CheckpointTimes(
        mode=mode, checkpoint_bytes=checkpoint_bytes, write_s=write_s, blocking_s=blocking, load_s=load
    )
