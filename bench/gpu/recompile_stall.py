"""The one-off host stall of a ``torch.compile(dynamic=True)`` function when it first sees a batch of two or more.

PyTorch specialises sizes 0 and 1, so a function first compiled on one request (a server's single-request warm-up)
is compiled again at its first larger batch. SGLang 0.5.6 sets a decode batch's positions this way outside its CUDA
graph (``model_executor/forward_batch_info.py`` ``clamp_position``), so the first decode batch of two or more
requests after a launch waits for a recompile (docs/serving.md, "Not priced: the first concurrent batch's
recompile"). This times that stall on the machine it runs on, with the compiler caches cold (fresh inductor and
Triton cache folders, as in a new container) and then warm (a second process on the same folders), for the same
one-line function: the first call at size 1, the first at size 16 (the recompile) and a later one at size 32 (no
recompile). Not a calibration: no catalog row is made from it.

    python bench/gpu/recompile_stall.py --out FILE [--device cuda|cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any


def _one_process(device: str) -> dict[str, float]:
    """Milliseconds of the first calls at sizes 1, 16 and 32 in this process (compiles included)."""
    import torch

    @torch.compile(dynamic=True)
    def clamp_position(seq_lens: torch.Tensor) -> torch.Tensor:
        return torch.clamp(seq_lens - 1, min=0).to(torch.int64)

    out: dict[str, float] = {}
    for size in (1, 16, 32):
        seq_lens = torch.arange(1, size + 1, device=device, dtype=torch.int32)
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        clamp_position(seq_lens)
        if device == "cuda":
            torch.cuda.synchronize()
        out[f"first_call_size_{size}_ms"] = (time.perf_counter() - start) * 1e3
    return out


def _run_child(device: str, cache_dir: str) -> dict[str, float]:
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache_dir, "inductor"),
        "TRITON_CACHE_DIR": os.path.join(cache_dir, "triton"),
    }
    done = subprocess.run(
        [sys.executable, __file__, "--child", "--device", device], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _cpu_name() -> str:
    """The CPU's model name and core count (Linux /proc/cpuinfo), for a run on the host."""
    name = "cpu"
    try:
        with open("/proc/cpuinfo") as f:
            name = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), name)
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores (inductor's C++ backend)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="JSON file to write")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_one_process(args.device)))
        return
    import torch

    with tempfile.TemporaryDirectory() as cache_dir:
        cold = _run_child(args.device, cache_dir)
        warm = _run_child(args.device, cache_dir)
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "device": torch.cuda.get_device_name(0) if args.device == "cuda" else _cpu_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cold_caches": cold,
        "warm_caches": warm,
        "recompile_stall_ms": {"cold": cold["first_call_size_16_ms"], "warm": warm["first_call_size_16_ms"]},
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
