"""The probe's seam on a real GPU: PyTorch kernels timed with CUDA events (HIP events on ROCm builds, same API).

Imported only by ``aiinfra probe`` on a machine with PyTorch; nothing else in aiinfra needs torch."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiinfra.calibration.probe import COLLECTIVE_BYTES, DeviceInfo
from aiinfra.errors import SpecError

WARMUP = 5
"""Untimed calls before timing (clock ramp-up, cuBLAS heuristics and autotuning, allocator growth)."""
REPS = 20
"""Timed calls; the median is kept (robust to a stray preemption or clock dip)."""


def _median_s(torch: Any, fn: Callable[[], Any], reps: int = REPS) -> float:
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)  # ms -> s
    return float(statistics.median(times))


def _driver(vendor: str) -> str | None:
    cmd = (
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        if vendor == "nvidia"
        else ["rocm-smi", "--showdriverversion"]
    )
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln.strip() for ln in out.splitlines() if ln.strip() and not ln.startswith("=")]
    return lines[0].split(":")[-1].strip() if lines else None


class TorchDevice:
    """GPU 0 (and, for collectives, every visible GPU) through PyTorch."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self._collectives: dict[tuple[str, int], float] | None = None

    @classmethod
    def open(cls) -> TorchDevice:
        """GPU 0 through the installed PyTorch; a SpecError when PyTorch sees no CUDA or ROCm device."""
        import torch  # type: ignore[import-not-found,unused-ignore]

        if not torch.cuda.is_available():
            raise SpecError(
                "aiinfra probe",
                "no GPU",
                "PyTorch sees no CUDA or ROCm device",
                "run it on the GPU machine with a CUDA or ROCm build of PyTorch (nvidia-smi / rocm-smi "
                "should list the GPU)",
            )
        return cls(torch)

    def info(self) -> DeviceInfo:
        """Name of GPU 0, vendor (amd under a ROCm build, else nvidia), GPUs visible, driver, CUDA or ROCm and PyTorch
        versions."""
        t = self.torch
        vendor = "amd" if getattr(t.version, "hip", None) else "nvidia"
        runtime = f"ROCm {t.version.hip}" if vendor == "amd" else f"CUDA {t.version.cuda}"
        return DeviceInfo(
            name=t.cuda.get_device_name(0),
            vendor=vendor,
            count=t.cuda.device_count(),
            driver=_driver(vendor),
            runtime=runtime,
            torch=str(t.__version__),
        )

    def dtypes(self) -> tuple[str, ...]:
        """bf16, plus fp8 where PyTorch has float8 and ``_scaled_mm`` on a CUDA GPU of compute capability 8.9 or
        later."""
        t = self.torch
        fp8 = hasattr(t, "float8_e4m3fn") and hasattr(t, "_scaled_mm") and t.cuda.get_device_capability(0) >= (8, 9)
        return ("bf16", "fp8") if fp8 and not getattr(t.version, "hip", None) else ("bf16",)

    def gemm_s(self, m: int, n: int, k: int, dtype: str) -> float:
        """Median seconds of an (m × k) · (k × n) matmul: bf16 inputs, or fp8 e4m3 inputs through ``_scaled_mm`` with a
        bf16 output."""
        t = self.torch
        dev = "cuda"
        if dtype == "fp8":
            a = t.randn(m, k, device=dev).to(t.float8_e4m3fn)
            b = t.randn(n, k, device=dev).to(t.float8_e4m3fn).t()  # column-major, as _scaled_mm requires
            one = t.tensor(1.0, device=dev)
            return _median_s(t, lambda: t._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=t.bfloat16))
        a16 = t.randn(m, k, device=dev, dtype=t.bfloat16)
        b16 = t.randn(k, n, device=dev, dtype=t.bfloat16)
        return _median_s(t, lambda: a16 @ b16)

    def attention_prefill_s(self, batch: int, heads: int, seq: int, head_dim: int) -> float:
        """Median seconds of causal bf16 ``scaled_dot_product_attention`` over ``seq`` tokens."""
        t = self.torch
        q, k, v = (t.randn(batch, heads, seq, head_dim, device="cuda", dtype=t.bfloat16) for _ in range(3))
        sdpa = t.nn.functional.scaled_dot_product_attention
        return _median_s(t, lambda: sdpa(q, k, v, is_causal=True))

    def attention_decode_s(self, batch: int, kv_heads: int, context: int, head_dim: int) -> float:
        """Median seconds of bf16 ``scaled_dot_product_attention`` of one query per KV head over ``context`` cached
        tokens."""
        t = self.torch
        q = t.randn(batch, kv_heads, 1, head_dim, device="cuda", dtype=t.bfloat16)
        k, v = (t.randn(batch, kv_heads, context, head_dim, device="cuda", dtype=t.bfloat16) for _ in range(2))
        sdpa = t.nn.functional.scaled_dot_product_attention
        return _median_s(t, lambda: sdpa(q, k, v))

    def copy_s(self, nbytes: int) -> float:
        """Median seconds of copying ``nbytes`` between two device buffers."""
        t = self.torch
        src = t.empty(nbytes, dtype=t.uint8, device="cuda")
        dst = t.empty_like(src)
        return _median_s(t, lambda: dst.copy_(src))

    def collective_s(self, kind: str, nbytes: int) -> float:
        """Median seconds of one ``kind`` collective of ``nbytes`` over every visible GPU (all sizes are measured in one
        multi-process sweep on first use)."""
        if self._collectives is None:
            self._collectives = _collective_sweep(self.torch)
        return self._collectives[(kind, nbytes)]


def _collective_sweep(torch: Any) -> dict[tuple[str, int], float]:
    """All-reduce and all-gather over every visible GPU, one process per GPU (NCCL / RCCL), rank 0's medians."""
    n = torch.cuda.device_count()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "collectives.json"
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29531")
        torch.multiprocessing.spawn(_collective_worker, args=(n, str(out)), nprocs=n, join=True)
        data = json.loads(out.read_text())
    return {(k, int(b)): float(s) for k, by in data.items() for b, s in by.items()}


def _collective_worker(rank: int, world: int, out: str) -> None:
    import torch  # type: ignore[import-not-found,unused-ignore]
    import torch.distributed as dist  # type: ignore[import-not-found,unused-ignore]

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    result: dict[str, dict[str, float]] = {"allreduce": {}, "allgather": {}}
    for nbytes in COLLECTIVE_BYTES:
        elems = nbytes // 2
        buf = torch.empty(elems, dtype=torch.bfloat16, device="cuda")
        shard = torch.empty(elems // world, dtype=torch.bfloat16, device="cuda")
        gathered = torch.empty(shard.numel() * world, dtype=torch.bfloat16, device="cuda")

        def all_reduce(b: Any = buf) -> Any:
            return dist.all_reduce(b)

        def all_gather(g: Any = gathered, s: Any = shard) -> Any:
            return dist.all_gather_into_tensor(g, s)

        result["allreduce"][str(nbytes)] = _median_s(torch, all_reduce)
        result["allgather"][str(nbytes)] = _median_s(torch, all_gather)
    if rank == 0:
        Path(out).write_text(json.dumps(result))
    dist.barrier()
    dist.destroy_process_group()
