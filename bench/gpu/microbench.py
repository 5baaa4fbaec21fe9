"""Microbenchmarks of one GPU for the efficiency catalog: GEMM (bf16, fp8), weight streaming (GEMV-like
GEMMs and device copies), attention (PyTorch SDPA flash and cuDNN backends, prefill and decode), kernel
launch cost (eager and CUDA-graph replay) and token sampling over a large vocabulary.

Run on a machine with an NVIDIA GPU and PyTorch: ``python bench/gpu/microbench.py --out results.json``.
Every kernel is timed inside a CUDA graph of ``reps`` back-to-back calls (no launch gaps, as NVIDIA
AIConfigurator's collector times TensorRT-LLM ops), with inputs rotated over enough copies that the working set
exceeds the L2 cache, and the median of several graph replays is kept. The output is raw timings plus the
software and device facts; bench/gpu/reduce.py turns it into catalog efficiency rows.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

L2_FLUSH_BYTES = 3 * 60 * 2**20  # rotate buffers until the working set is three H200 L2 caches (60 MiB)
GEMM_M = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
# (N, K) of linear layers in common models: Llama-3 8B/70B/405B, Mixtral experts, GPT-3 175B, Qwen/DeepSeek.
GEMM_NK = (
    (4096, 4096),
    (6144, 4096),
    (28672, 4096),
    (4096, 14336),
    (10240, 8192),
    (8192, 8192),
    (57344, 8192),
    (8192, 28672),
    (16384, 16384),
    (2048, 7168),
    (7168, 2048),
    (36864, 12288),
)

# (N, K) of the same layers split by tensor parallelism (Llama-3 8B at TP 4 and 8, 70B and 405B at TP 8): the
# small weight slices a decode step streams on each GPU.
GEMM_NK_TP = (
    (768, 4096),
    (4096, 512),
    (3584, 4096),
    (4096, 1792),
    (1280, 8192),
    (8192, 1024),
    (7168, 8192),
    (8192, 3584),
    (2304, 16384),
    (16384, 2048),
    (13312, 16384),
    (16384, 6656),
)


def _graph_time_s(fn: Callable[[int], None], n_variants: int, reps: int = 20, replays: int = 5) -> float:
    """Median seconds per call of ``fn(i)`` captured ``reps`` times in one CUDA graph (i cycles the variants)."""
    reps = max(reps, n_variants)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for i in range(3):
            fn(i % n_variants)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(reps):
            fn(i % n_variants)
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / reps)
    del graph
    return statistics.median(times)


def _variants(bytes_each: int) -> int:
    return max(1, min(256, math.ceil(L2_FLUSH_BYTES / max(bytes_each, 1))))


def _eager_time_s(fn: Callable[[int], None], calls: int = 50, repeats: int = 5) -> float:
    """Median host-timed seconds per call of ``fn`` issued eagerly ``calls`` times (launch costs included)."""
    fn(0)
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for i in range(calls):
            fn(i)
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples)


def gemm_bf16(results: list[dict[str, Any]], shapes: tuple[tuple[int, int], ...] = GEMM_NK) -> None:
    dev = "cuda"
    for n, k in shapes:
        nv = _variants(2 * n * k)
        weights = [torch.randn(k, n, device=dev, dtype=torch.bfloat16) for _ in range(nv)]
        for m in GEMM_M:
            a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)

            def run(i: int, a: torch.Tensor = a, out: torch.Tensor = out, w: list[torch.Tensor] = weights) -> None:
                torch.matmul(a, w[i], out=out)

            t = _graph_time_s(run, nv)
            results.append({"op": "gemm", "dtype": "bf16", "m": m, "n": n, "k": k, "time_s": t})
        torch.cuda.empty_cache()


def gemm_fp8(results: list[dict[str, Any]], shapes: tuple[tuple[int, int], ...] = GEMM_NK) -> None:
    dev = "cuda"
    scale = torch.ones((), device=dev, dtype=torch.float32)
    for n, k in shapes:
        nv = _variants(n * k)
        # _scaled_mm wants the second operand column-major: a (N, K) row-major tensor, transposed.
        weights = [torch.randn(n, k, device=dev).to(torch.float8_e4m3fn) for _ in range(nv)]
        for m in GEMM_M:
            if m % 16:
                continue  # cuBLASLt FP8 needs every dimension a multiple of 16
            a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)

            def run(i: int, a: torch.Tensor = a, w: list[torch.Tensor] = weights) -> None:
                torch._scaled_mm(a, w[i].t(), scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)

            try:
                t = _graph_time_s(run, nv)
            except RuntimeError as exc:  # an unsupported shape is recorded, not fatal
                results.append({"op": "gemm", "dtype": "fp8", "m": m, "n": n, "k": k, "error": str(exc)[:200]})
                continue
            results.append({"op": "gemm", "dtype": "fp8", "m": m, "n": n, "k": k, "time_s": t})
        torch.cuda.empty_cache()


def copy_bandwidth(results: list[dict[str, Any]]) -> None:
    for mib in (1, 4, 16, 64, 256, 1024, 4096):
        n = mib * 2**20
        nv = _variants(2 * n)
        src = [torch.empty(n, dtype=torch.uint8, device="cuda") for _ in range(nv)]
        dst = [torch.empty(n, dtype=torch.uint8, device="cuda") for _ in range(nv)]

        def run(i: int, src: list[torch.Tensor] = src, dst: list[torch.Tensor] = dst) -> None:
            dst[i].copy_(src[i])

        t = _graph_time_s(run, nv)
        results.append({"op": "copy", "bytes_read_plus_written": 2 * n, "time_s": t})
        torch.cuda.empty_cache()


def attention_prefill(results: list[dict[str, Any]]) -> None:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    head_dim, n_heads, total_tokens = 128, 16, 16384  # the FlashAttention papers' benchmark set-up
    for name, backend in backends.items():
        for seq in (512, 1024, 2048, 4096, 8192, 16384):
            batch = total_tokens // seq
            q, k, v = (
                torch.randn(batch, n_heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                for _ in range(3)
            )
            flop_fwd = 4 * batch * n_heads * seq * seq * head_dim / 2  # causal: half the score matrix
            try:
                with sdpa_kernel(backend):

                    def fwd(i: int, q: torch.Tensor = q, k: torch.Tensor = k, v: torch.Tensor = v) -> None:
                        with torch.no_grad():
                            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

                    t_fwd = _eager_time_s(fwd, calls=10)
                    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                    grad = torch.randn_like(out)
                    torch.cuda.synchronize()
                    times = []
                    for _ in range(6):
                        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                        torch.cuda.synchronize()
                        t0 = time.perf_counter()
                        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                        o.backward(grad)
                        torch.cuda.synchronize()
                        times.append(time.perf_counter() - t0)
                    t_fwd_bwd = statistics.median(times[1:])
            except RuntimeError as exc:
                results.append({"op": "attention_prefill", "backend": name, "seq": seq, "error": str(exc)[:200]})
                continue
            results.append(
                {
                    "op": "attention_prefill",
                    "backend": name,
                    "batch": batch,
                    "heads": n_heads,
                    "seq": seq,
                    "head_dim": head_dim,
                    "flop_fwd_causal": flop_fwd,
                    "time_fwd_s": t_fwd,
                    "time_fwd_bwd_s": t_fwd_bwd,
                }
            )
            torch.cuda.empty_cache()


def attention_decode(results: list[dict[str, Any]]) -> None:
    """One query token per sequence against a KV cache (GQA: 64 query / 8 KV heads, head dim 128): KV read speed.

    The 8 query heads sharing a KV head are laid out as 8 query rows of that head (non-causal), as
    FlashDecoding-style GQA kernels do, so the dense flash kernel reads each KV head once."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    hq, hkv, d = 64, 8, 128
    group = hq // hkv
    cases = ((1, 4096), (8, 4096), (32, 4096), (64, 2048), (128, 2048), (8, 32768), (1, 131072), (256, 1024))
    for batch, ctx in cases:
        kv_bytes = 2 * batch * hkv * ctx * d * 2
        nv = _variants(kv_bytes)
        q = torch.randn(batch, hkv, group, d, device="cuda", dtype=torch.bfloat16)
        ks = [torch.randn(batch, hkv, ctx, d, device="cuda", dtype=torch.bfloat16) for _ in range(nv)]
        vs = [torch.randn(batch, hkv, ctx, d, device="cuda", dtype=torch.bfloat16) for _ in range(nv)]
        for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            try:
                with sdpa_kernel(backend):

                    def run(
                        i: int, q: torch.Tensor = q, ks: list[torch.Tensor] = ks, vs: list[torch.Tensor] = vs
                    ) -> None:
                        torch.nn.functional.scaled_dot_product_attention(q, ks[i], vs[i])

                    t = _graph_time_s(run, nv)
            except RuntimeError as exc:
                results.append(
                    {"op": "attention_decode", "backend": name, "batch": batch, "ctx": ctx, "error": str(exc)[:200]}
                )
                continue
            results.append(
                {
                    "op": "attention_decode",
                    "backend": name,
                    "batch": batch,
                    "ctx": ctx,
                    "q_heads": hq,
                    "kv_heads": hkv,
                    "head_dim": d,
                    "kv_bytes": kv_bytes,
                    "time_s": t,
                }
            )


def moe_grouped(results: list[dict[str, Any]]) -> None:
    """Routed-expert GEMMs with balanced routing: ``experts`` equal groups of ``m`` tokens each, timed as one
    batched GEMM (torch.bmm) and, where PyTorch has it, as one grouped GEMM (torch._grouped_mm)."""
    shapes = ((8, 4096, 14336), (64, 7168, 2048), (128, 2048, 768))  # (experts, hidden, expert width)
    for experts, hidden, width in shapes:
        w_bytes = experts * hidden * width * 2
        nv = _variants(w_bytes)
        ws = [torch.randn(experts, hidden, width, device="cuda", dtype=torch.bfloat16) for _ in range(nv)]
        wt = [torch.randn(experts, width, hidden, device="cuda", dtype=torch.bfloat16) for _ in range(nv)]
        for m in (1, 4, 16, 64, 256, 1024):
            a = torch.randn(experts, m, hidden, device="cuda", dtype=torch.bfloat16)

            def bmm(i: int, a: torch.Tensor = a, ws: list[torch.Tensor] = ws) -> None:
                torch.bmm(a, ws[i])

            row = {"op": "moe_grouped", "experts": experts, "hidden": hidden, "width": width, "m_per_expert": m}
            results.append({**row, "kernel": "bmm", "time_s": _graph_time_s(bmm, nv)})
            flat = a.reshape(experts * m, hidden)
            offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * m

            def grouped(
                i: int, flat: torch.Tensor = flat, offs: torch.Tensor = offs, wt: list[torch.Tensor] = wt
            ) -> None:
                torch._grouped_mm(flat, wt[i].transpose(-2, -1), offs=offs, out_dtype=torch.bfloat16)

            try:
                results.append({**row, "kernel": "grouped_mm", "time_s": _graph_time_s(grouped, nv)})
            except (RuntimeError, AttributeError, TypeError) as exc:
                results.append({**row, "kernel": "grouped_mm", "error": str(exc)[:200]})


def launch_cost(results: list[dict[str, Any]]) -> None:
    """Seconds per tiny kernel: eager launches (CPU-bound issue rate) and replayed from a CUDA graph."""
    x = torch.zeros(1, device="cuda")
    n = 2000
    for _ in range(200):
        x.add_(1.0)
    torch.cuda.synchronize()
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1.0)
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / n)
    results.append(
        {"op": "launch", "mode": "eager_pytorch", "kernels": n, "time_per_kernel_s": statistics.median(samples)}
    )

    def run(i: int) -> None:
        x.add_(1.0)

    results.append(
        {
            "op": "launch",
            "mode": "cuda_graph_replay",
            "kernels": 200,
            "time_per_kernel_s": _graph_time_s(run, 1, reps=200),
        }
    )
    # the fixed cost of launching one graph, measured as a graph of one tiny kernel, host-timed
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x.add_(1.0)
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        x.add_(1.0)
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(500):
            graph.replay()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / 500)
    results.append({"op": "launch", "mode": "graph_launch_host", "time_per_graph_s": statistics.median(samples)})


def sampling(results: list[dict[str, Any]]) -> None:
    """Per-step token selection over a 128,256-token vocabulary (Llama 3), as engines do it after the LM head."""
    vocab = 128256
    for batch in (1, 8, 32, 128, 256):
        logits = torch.randn(batch, vocab, device="cuda", dtype=torch.float32)

        def greedy(i: int, logits: torch.Tensor = logits) -> None:
            torch.argmax(logits, dim=-1)

        def temperature(i: int, logits: torch.Tensor = logits) -> None:
            probs = torch.softmax(logits / 0.7, dim=-1)
            torch.multinomial(probs, 1)

        def top_p(i: int, logits: torch.Tensor = logits) -> None:
            sorted_logits, idx = torch.sort(logits, dim=-1, descending=True)
            probs = torch.softmax(sorted_logits, dim=-1)
            cum = probs.cumsum(dim=-1)
            probs = probs.masked_fill(cum - probs > 0.9, 0.0)
            choice = torch.multinomial(probs, 1)
            torch.gather(idx, -1, choice)

        for name, fn in (("greedy", greedy), ("temperature", temperature), ("top_p_sort", top_p)):
            t = _eager_time_s(fn)  # engines run the sampler outside their CUDA graphs, launches included
            results.append({"op": "sampling", "method": name, "batch": batch, "vocab": vocab, "time_s": t})


def facts() -> dict[str, Any]:
    props = torch.cuda.get_device_properties(0)
    smi = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        smi = subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm,clocks.max.mem",
                "--format=csv,noheader",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    return {
        "date_utc": time.strftime("%Y-%m-%d", time.gmtime()),
        "device": torch.cuda.get_device_name(0),
        "sm_count": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "nvidia_smi": smi,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
        "method": "GEMM, copy, decode attention: CUDA-graph replay of max(20, copies) back-to-back calls, inputs "
        "rotated over copies until the working set is >= 180 MiB (3x L2), median of 5 replays after 3 eager "
        "warm-ups. Prefill attention forward and sampling: host-timed eager calls (median of 5 x 10 or 50 calls, "
        "launches included); attention forward+backward: host-timed, median of 5 after one warm-up",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    doc: dict[str, Any] = {"facts": facts(), "results": [], "seconds": {}}
    sections = {
        "launch": launch_cost,
        "sampling": sampling,
        "copy": copy_bandwidth,
        "gemm_bf16": gemm_bf16,
        "gemm_fp8": gemm_fp8,
        "gemm_tp_bf16": lambda r: gemm_bf16(r, GEMM_NK_TP),
        "gemm_tp_fp8": lambda r: gemm_fp8(r, GEMM_NK_TP),
        "attention_prefill": attention_prefill,
        "attention_decode": attention_decode,
        "moe_grouped": moe_grouped,
    }
    for name, fn in sections.items():
        if args.only and name not in args.only:
            continue
        t0 = time.perf_counter()
        try:
            fn(doc["results"])
        except Exception as exc:  # keep what the other sections measured
            doc.setdefault("errors", {})[name] = repr(exc)[:500]
        doc["seconds"][name] = round(time.perf_counter() - t0, 1)
        with open(args.out, "w") as fh:
            json.dump(doc, fh, indent=1)
        print(name, doc["seconds"][name], "s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
