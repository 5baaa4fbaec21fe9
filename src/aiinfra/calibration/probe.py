"""`aiinfra probe`: microbenchmarks of the GPU this runs on, written as efficiency rows of a catalog overlay.

The kernels are the ones the planner prices (analytic/efficiency.py row kinds, same x and fraction conventions as
catalog/data/efficiency.yaml):

* ``gemm``: torch.matmul of M×K by K×N by dtype; x = 2·M·N·K FLOP, fraction of the catalog's dense peak;
* ``attention``: torch's scaled_dot_product_attention, causal prefill; x = forward FLOP of the call, causal-halved
  (4·b·h·s²·d / 2), fraction of the bf16 dense peak; the head dimension is recorded (``head_dim``);
* ``attention_decode``: one query token against a KV cache of L tokens per sequence; x = KV bytes read, fraction of
  the HBM bandwidth (recorded for reference: the planner prices decode attention by the ``memory`` curve);
* ``memory``: a device-to-device copy; x = bytes moved (read + write), fraction of the HBM bandwidth;
* ``allreduce`` / ``allgather`` when several GPUs are visible: NCCL through torch.distributed; x = message bytes,
  fraction = bus bandwidth (nccl-tests' PERFORMANCE.md: all-reduce algbw·2(n−1)/n, all-gather algbw·(n−1)/n) over
  the accelerator's one-way scale-up link bandwidth.

Every call to the GPU goes through one seam, :class:`Device` (``TorchDevice`` on a real GPU; tests substitute a
stub), and each kernel is timed as the median of repeated CUDA-event timings after warm-up.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

from aiinfra.errors import SpecError
from aiinfra.specs.hardware import AcceleratorSpec

GEMM_SHAPES: tuple[tuple[int, int, int], ...] = tuple(
    (m, n, k) for m in (16, 128, 1024, 4096, 16384) for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))
)
"""(M, N, K): decode- to prefill-sized row counts against Llama-3-8B-shaped weights (hidden 4096, MLP 14336)."""

ATTENTION_PREFILL: tuple[tuple[int, int, int, int], ...] = tuple((1, 32, s, 128) for s in (512, 1024, 2048, 4096, 8192))
"""(batch, heads, sequence, head_dim) of the causal prefill calls."""

ATTENTION_DECODE: tuple[tuple[int, int, int, int], ...] = tuple((b, 8, 4096, 128) for b in (1, 8, 32, 128))
"""(batch, KV heads, context tokens, head_dim) of the decode calls (GQA: 8 KV heads)."""

COPY_BYTES: tuple[int, ...] = tuple(2**p for p in range(20, 32, 2))
"""Bytes of each copy: 1 MiB … 1 GiB (quarter octaves would not change the fitted t0 + bytes/B∞ line)."""

COLLECTIVE_BYTES: tuple[int, ...] = tuple(2**p for p in range(16, 31, 2))
"""Message bytes of the collectives: 64 KiB … 1 GiB."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DeviceInfo:
    """What the probe records of the machine it measured: the GPU, how many, driver and software versions."""

    name: str
    vendor: str
    """nvidia | amd."""
    count: int
    """GPUs visible (collectives run over all of them)."""
    driver: str | None
    """Driver version when the vendor's tool reports it; None otherwise."""
    runtime: str
    """``CUDA 12.4`` or ``ROCm 6.1``."""
    torch: str
    """PyTorch version."""


class Device(Protocol):
    """The one seam between the probe and the GPU: each method runs one kernel and returns its median seconds."""

    def info(self) -> DeviceInfo:
        """The GPU's name, vendor, count, driver and software versions."""

    def dtypes(self) -> tuple[str, ...]:
        """Matmul formats this device and PyTorch build time (bf16 always; fp8 where torch has it)."""
        ...

    def gemm_s(self, m: int, n: int, k: int, dtype: str) -> float:
        """Median seconds of one (m × k) · (k × n) matmul in ``dtype``."""

    def attention_prefill_s(self, batch: int, heads: int, seq: int, head_dim: int) -> float:
        """Median seconds of causal attention over ``seq`` tokens, ``heads`` heads, ``batch`` sequences."""

    def attention_decode_s(self, batch: int, kv_heads: int, context: int, head_dim: int) -> float:
        """Median seconds of one decode step's attention: one query per KV head over ``context`` cached tokens."""

    def copy_s(self, nbytes: int) -> float:
        """Median seconds of one device-to-device copy of ``nbytes``."""

    def collective_s(self, kind: str, nbytes: int) -> float:
        """One all-reduce or all-gather over every visible GPU (only called when ``info().count`` > 1)."""
        ...


def _curve(points: Sequence[tuple[float, float]]) -> list[list[float]]:
    """Median fraction per distinct x, ascending, capped at 1 (a fraction of a peak)."""
    by_x: dict[float, list[float]] = {}
    for x, y in points:
        by_x.setdefault(float(f"{x:.4g}"), []).append(y)
    return [[x, float(f"{min(statistics.median(ys), 1.0):.4g}")] for x, ys in sorted(by_x.items())]


def rows(device: Device, acc: AcceleratorSpec, today: str | None = None) -> list[dict[str, Any]]:
    """The efficiency rows of one probe run on ``acc``.

    Long because it writes one loop of rows per microbenchmark kind (GEMMs per dtype, prefill and decode attention,
    memory copies, collectives per GPU count), each with the same provenance."""
    info = device.info()
    day = today or date.today().isoformat()
    provenance = {
        "name": info.name,
        "vendor": info.vendor,
        "count": info.count,
        "driver": info.driver,
        "runtime": info.runtime,
        "torch": info.torch,
    }
    source = [
        {
            "title": f"aiinfra probe on {info.name} ({info.runtime}, driver {info.driver or 'unknown'}, "
            f"PyTorch {info.torch}), measured by the user",
            "read_on": day,
        }
    ]
    slug = f"probe-{acc.id}-{day}"

    def row(
        kind: str, suffix: str, x: str, points: list[list[float]], timings: list[dict[str, Any]], **extra: Any
    ) -> dict[str, Any]:
        return {
            "id": f"{slug}-{suffix}",
            "kind": kind,
            "accelerators": [acc.id],
            **extra,
            "x": x,
            "points": points,
            "provenance": "measured",
            "device": provenance,
            "timings": timings,
            "sources": source,
        }

    out: list[dict[str, Any]] = []
    for dtype in device.dtypes():
        peak = acc.dense_flop_per_s.get(dtype)
        if not peak:
            continue  # the catalog gives no dense peak to divide by
        pts, timed = [], []
        for m, n, k in GEMM_SHAPES:
            t = device.gemm_s(m, n, k, dtype)
            flop = 2.0 * m * n * k
            pts.append((flop, flop / t / peak))
            timed.append({"m": m, "n": n, "k": k, "time_s": t})
        out.append(row("gemm", f"gemm-{dtype}", "flop per GEMM (2*M*N*K)", _curve(pts), timed, dtype=dtype))
    bf16 = acc.dense_flop_per_s.get("bf16")
    if bf16:
        pts, timed = [], []
        for b, h, s, d in ATTENTION_PREFILL:
            t = device.attention_prefill_s(b, h, s, d)
            flop = 4.0 * b * h * s * s * d / 2.0
            pts.append((flop, flop / t / bf16))
            timed.append({"batch": b, "heads": h, "seq": s, "head_dim": d, "time_s": t})
        out.append(
            row(
                "attention",
                "attention-prefill",
                "forward flop per attention call (causal-halved)",
                _curve(pts),
                timed,
                dtype="bf16",
                head_dim=ATTENTION_PREFILL[0][3],
            )
        )
    bw = acc.memory_bw_bytes_per_s
    pts, timed = [], []
    for b, h, ctx, d in ATTENTION_DECODE:
        t = device.attention_decode_s(b, h, ctx, d)
        kv_bytes = 2.0 * b * h * ctx * d * 2.0  # K and V, bf16
        pts.append((kv_bytes, kv_bytes / t / bw))
        timed.append({"batch": b, "kv_heads": h, "context": ctx, "head_dim": d, "time_s": t})
    out.append(
        row(
            "attention_decode",
            "attention-decode",
            "KV-cache bytes read per decode call",
            _curve(pts),
            timed,
            dtype="bf16",
        )
    )
    pts, timed = [], []
    for nbytes in COPY_BYTES:
        t = device.copy_s(nbytes)
        pts.append((2.0 * nbytes, 2.0 * nbytes / t / bw))
        timed.append({"bytes": nbytes, "time_s": t})
    out.append(row("memory", "memory-copy", "bytes moved per kernel (read + write)", _curve(pts), timed))
    n = info.count
    link = acc.scale_up.bw_one_way_bytes_per_s if acc.scale_up is not None else None
    if n > 1 and link:
        for kind, bus in (("allreduce", 2.0 * (n - 1) / n), ("allgather", (n - 1) / n)):
            pts, timed = [], []
            for nbytes in COLLECTIVE_BYTES:
                t = device.collective_s(kind, nbytes)
                pts.append((float(nbytes), nbytes / t * bus / link))
                timed.append({"bytes": nbytes, "time_s": t})
            out.append(
                row(
                    kind,
                    f"{kind}-{n}gpu",
                    "message bytes (full buffer per rank)",
                    _curve(pts),
                    timed,
                    tier="scale-up",
                    n_ranks=n,
                )
            )
    return out


def match_accelerator(name: str, accelerators: dict[str, AcceleratorSpec]) -> str:
    """The catalog id whose name holds every word of the device's name that names the part (``H100``, ``80GB``,
    ``MI300X``), else a SpecError asking for --accelerator."""
    words = [
        w.lower()
        for w in name.replace("-", " ").split()
        if any(ch.isdigit() for ch in w) and not w.lower().startswith("hbm")
    ]  # the memory type is no part name
    hits = [a.id for a in accelerators.values() if words and all(w in a.name.lower().replace("-", " ") for w in words)]
    if len(hits) == 1:
        return hits[0]
    raise SpecError(
        "--accelerator",
        name,
        f"the device name matches {len(hits)} catalog accelerators"
        + (f" ({', '.join(sorted(hits)[:5])})" if hits else ""),
        "name the catalog id: --accelerator ID (aiinfra catalog list accelerators)",
    )


def torch_device() -> Device:
    """The real GPU through PyTorch, or a SpecError saying what is missing."""
    try:
        import torch  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        raise SpecError(
            "aiinfra probe",
            "torch",
            "needs PyTorch with CUDA or ROCm",
            "install PyTorch for your GPU (https://pytorch.org/get-started/) on the GPU machine",
        ) from None
    from aiinfra.calibration.torch_device import TorchDevice

    return TorchDevice.open()
