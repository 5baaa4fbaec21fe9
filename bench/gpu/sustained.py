"""Tensor-core throughput and a large-batch decode step held for a minute or more, with the SM clock, power and
temperature sampled alongside: does a GPU keep the rate short microbenchmarks measure once it runs at its power
limit? (The step model's GEMM and attention curves come from runs of a few replays; a serving engine at hundreds of
sequences keeps the tensor cores busy for minutes.)

Three loads, each for ``--seconds``: a bf16 GEMM (8192³), an fp8 GEMM of the same shape (``torch._scaled_mm``,
per-tensor scales; skipped where the GPU or PyTorch has none), and one decode step of the Llama-3.1-8B-shaped model of
``decode_step.py`` at ``--batch`` sequences of ``--context`` tokens, replayed as a CUDA graph. Every ``--window``
seconds the script records the achieved rate of that window and one ``nvidia-smi`` sample (SM clock MHz, power W,
temperature °C, active clock-event reasons). ``python bench/gpu/sustained.py --out FILE``; ``--smoke`` checks the
bookkeeping on the CPU in a second.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from collections.abc import Callable
from typing import Any

import torch
from decode_step import LLAMA_31_8B, SMOKE, Model, capture, kv_caches

QUERY = "clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"


def gpu_sample() -> dict[str, str]:
    """One nvidia-smi reading of the first GPU (empty where nvidia-smi is absent)."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "-i", "0", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(zip(QUERY.split(","), (v.strip() for v in out.split(",")), strict=False))


def hold(
    step: Callable[[], object], work_per_call: float, seconds: float, window_s: float, cuda: bool
) -> list[dict[str, Any]]:
    """Run ``step`` back to back for ``seconds``; per window its calls per second times ``work_per_call``, the
    mean ms per call, and a GPU sample taken at the window's end."""
    windows: list[dict[str, Any]] = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        calls = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < window_s:
            for _ in range(8):
                step()
            calls += 8
            if cuda:
                torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        windows.append(
            {
                "t_s": round(time.perf_counter() - start, 3),
                "ms_per_call": 1e3 * elapsed / calls,
                "rate_per_s": work_per_call * calls / elapsed,
                **gpu_sample(),
            }
        )
        print(json.dumps(windows[-1]), flush=True)
    return windows


def graphed(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` captured once as a CUDA graph; the returned callable replays it."""
    return capture(fn).replay


def gemm_loads(n: int, device: str, seconds: float, window_s: float) -> dict[str, list[dict[str, Any]]]:
    """The bf16 and (where the GPU has it) fp8 n x n x n GEMM held for ``seconds`` each."""
    cuda = device == "cuda"
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    flop = 2.0 * n**3
    loads = {"gemm_bf16": hold(lambda: a @ b, flop, seconds, window_s, cuda)}
    if cuda and hasattr(torch, "_scaled_mm") and torch.cuda.get_device_capability(0) >= (8, 9):
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=device)
        loads["gemm_fp8"] = hold(
            lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
            flop,
            seconds,
            window_s,
            cuda,
        )
    return loads


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=None)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--window", type=float, default=2.0)
    parser.add_argument("--batch", type=int, default=768)
    parser.add_argument("--context", type=int, default=300)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    cuda = not args.smoke
    device = "cuda" if cuda else "cpu"
    seconds, window = (0.2, 0.1) if args.smoke else (args.seconds, args.window)
    n = 64 if args.smoke else 8192
    doc: dict[str, Any] = {"seconds": seconds, "window_s": window, "gemm_n": n, "loads": {}}
    if cuda:
        doc |= {
            "device": torch.cuda.get_device_name(0),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "date_utc": time.strftime("%Y-%m-%d", time.gmtime()),
            "idle": gpu_sample(),
        }
    doc["loads"] |= gemm_loads(n, device, seconds, window)
    cfg = SMOKE if args.smoke else LLAMA_31_8B
    batch, ctx = (2, 16) if args.smoke else (args.batch, args.context)
    model = Model(cfg, device)
    caches = kv_caches(cfg, batch, ctx, device)
    x = torch.randn(batch, cfg.hidden, device=device, dtype=torch.bfloat16)

    def step() -> object:
        return model.decode(x, caches, ctx)

    doc["decode_case"] = {"batch": batch, "context_tokens": ctx, "config": "llama-3.1-8b" if cuda else "smoke"}
    doc["loads"]["decode_step"] = hold(graphed(step) if cuda else step, float(batch), seconds, window, cuda)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(doc, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
