"""One whole engine step of a Llama-3.1-8B-shaped model on one GPU, timed: a check of the step-time model's sum of
kernels against a real step (not a calibration: no catalog row is made from it).

The model is built from its config with random bf16 weights (no checkpoint): per layer RMSNorm, fused QKV, rotary
embedding, the KV-cache write, attention (decode: the query heads of a KV head packed as rows of one FlashAttention
call; prefill: PyTorch's default causal attention kernel, KV heads repeated per query group), output projection,
RMSNorm, fused gate/up, SiLU·up, down projection, residual adds; then the final norm, the LM head and a greedy token
pick. Each case is captured once as a CUDA graph and replayed (median of 20), as serving engines replay decode
steps. ``python bench/gpu/decode_step.py --out FILE`` (``--large`` adds 512-1,024 sequences); ``--smoke`` runs a
tiny config on the CPU without graphs (checks shapes only).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Config:
    layers: int = 32
    hidden: int = 4096
    heads: int = 32
    kv_heads: int = 8
    head_dim: int = 128
    ffn: int = 14336
    vocab: int = 128256


LLAMA_31_8B = Config()
SMOKE = Config(layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64, ffn=512, vocab=1000)
DECODE_CASES = ((1, 1024), (1, 8192), (8, 2048), (32, 2048), (64, 4096), (128, 2048), (256, 1024))
LARGE_DECODE_CASES = ((512, 300), (768, 300), (1024, 300))
"""``--large``: the batches of a burst of 1,000 ShareGPT-length requests (docs/serving.md, "Bursts of 1,000
requests")."""
PREFILL_CASES = (512, 2048, 8192)


class Model:
    def __init__(self, cfg: Config, device: str) -> None:
        self.cfg = cfg
        bf = torch.bfloat16
        q_out = (cfg.heads + 2 * cfg.kv_heads) * cfg.head_dim

        def w(k: int, n: int) -> torch.Tensor:
            return torch.randn(k, n, device=device, dtype=bf) * k**-0.5

        self.layers = [
            {
                "norm1": torch.ones(cfg.hidden, device=device, dtype=bf),
                "qkv": w(cfg.hidden, q_out),
                "o": w(cfg.heads * cfg.head_dim, cfg.hidden),
                "norm2": torch.ones(cfg.hidden, device=device, dtype=bf),
                "gate_up": w(cfg.hidden, 2 * cfg.ffn),
                "down": w(cfg.ffn, cfg.hidden),
            }
            for _ in range(cfg.layers)
        ]
        self.final_norm = torch.ones(cfg.hidden, device=device, dtype=bf)
        self.lm_head = w(cfg.hidden, cfg.vocab)

    def _rope(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)

    def decode(self, x: torch.Tensor, caches: list[tuple[torch.Tensor, torch.Tensor]], pos: int) -> torch.Tensor:
        """One decode step for ``x`` (batch, hidden) at position ``pos`` of every sequence's cache."""
        c = self.cfg
        b = x.shape[0]
        group = c.heads // c.kv_heads
        cos = torch.ones(c.head_dim // 2, device=x.device, dtype=x.dtype)
        sin = torch.zeros(c.head_dim // 2, device=x.device, dtype=x.dtype)
        for layer, (k_cache, v_cache) in zip(self.layers, caches, strict=True):
            h = F.rms_norm(x, (c.hidden,), layer["norm1"])
            qkv = h @ layer["qkv"]
            q, k, v = qkv.split([c.heads * c.head_dim, c.kv_heads * c.head_dim, c.kv_heads * c.head_dim], dim=-1)
            q = self._rope(q.view(b, c.kv_heads, group, c.head_dim), cos, sin)
            k = self._rope(k.view(b, c.kv_heads, 1, c.head_dim), cos, sin)
            k_cache[:, :, pos : pos + 1] = k
            v_cache[:, :, pos : pos + 1] = v.view(b, c.kv_heads, 1, c.head_dim)
            att = F.scaled_dot_product_attention(q, k_cache[:, :, : pos + 1], v_cache[:, :, : pos + 1])
            x = x + att.reshape(b, c.heads * c.head_dim) @ layer["o"]
            h = F.rms_norm(x, (c.hidden,), layer["norm2"])
            g, u = (h @ layer["gate_up"]).chunk(2, dim=-1)
            x = x + (F.silu(g) * u) @ layer["down"]
        logits = F.rms_norm(x, (c.hidden,), self.final_norm) @ self.lm_head
        return torch.argmax(logits, dim=-1)

    def prefill(self, x: torch.Tensor) -> torch.Tensor:
        """One prompt of ``x.shape[0]`` tokens (no cache kept: the step's arithmetic and traffic only)."""
        c = self.cfg
        s = x.shape[0]
        cos = torch.ones(c.head_dim // 2, device=x.device, dtype=x.dtype)
        sin = torch.zeros(c.head_dim // 2, device=x.device, dtype=x.dtype)
        for layer in self.layers:
            h = F.rms_norm(x, (c.hidden,), layer["norm1"])
            q, k, v = (h @ layer["qkv"]).split(
                [c.heads * c.head_dim, c.kv_heads * c.head_dim, c.kv_heads * c.head_dim], dim=-1
            )
            q = self._rope(q.view(s, c.heads, c.head_dim).transpose(0, 1), cos, sin)
            k = self._rope(k.view(s, c.kv_heads, c.head_dim).transpose(0, 1), cos, sin)
            v = v.view(s, c.kv_heads, c.head_dim).transpose(0, 1)
            # the dense fused kernels want as many KV heads as query heads: each KV head repeated for its group
            group = c.heads // c.kv_heads
            k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
            att = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True)
            x = x + att[0].transpose(0, 1).reshape(s, c.heads * c.head_dim) @ layer["o"]
            h = F.rms_norm(x, (c.hidden,), layer["norm2"])
            g, u = (h @ layer["gate_up"]).chunk(2, dim=-1)
            x = x + (F.silu(g) * u) @ layer["down"]
        logits = F.rms_norm(x[-1:], (c.hidden,), self.final_norm) @ self.lm_head
        return torch.argmax(logits, dim=-1)


def kv_caches(cfg: Config, batch: int, ctx: int, device: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Random bf16 K and V caches of every layer, room for ``ctx`` cached tokens plus the step's own."""
    shape = (batch, cfg.kv_heads, ctx + 1, cfg.head_dim)
    return [
        (
            torch.randn(shape, device=device, dtype=torch.bfloat16),
            torch.randn(shape, device=device, dtype=torch.bfloat16),
        )
        for _ in range(cfg.layers)
    ]


def capture(fn: Any) -> torch.cuda.CUDAGraph:
    """``fn`` warmed up on a side stream, then captured once as a CUDA graph."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


def events_ms(fn: Any, reps: int) -> float:
    """Median milliseconds of ``fn()`` over ``reps`` calls, each bracketed by CUDA events."""
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def graph_ms(fn: Any, replays: int = 20) -> float:
    """Median milliseconds of one replay of a CUDA graph holding ``fn()`` (GPU time, no host launches)."""
    graph = capture(fn)
    graph.replay()
    torch.cuda.synchronize()
    return events_ms(graph.replay, replays)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=None)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--large", action="store_true", help="add decode steps at 512-1,024 sequences")
    args = parser.parse_args()
    cfg = SMOKE if args.smoke else LLAMA_31_8B
    device = "cpu" if args.smoke else "cuda"
    torch.manual_seed(0)
    model = Model(cfg, device)
    bf = torch.bfloat16
    doc: dict[str, Any] = {"config": asdict(cfg), "decode": [], "prefill": []}
    if not args.smoke:
        doc["device"] = torch.cuda.get_device_name(0)
        doc["torch"] = torch.__version__
        doc["date_utc"] = time.strftime("%Y-%m-%d", time.gmtime())
    cases = DECODE_CASES + (LARGE_DECODE_CASES if args.large else ())
    for batch, ctx in cases if not args.smoke else ((2, 16),):
        caches = kv_caches(cfg, batch, ctx, device)
        x = torch.randn(batch, cfg.hidden, device=device, dtype=bf)
        if args.smoke:
            model.decode(x, caches, ctx)
            ms = float("nan")
        else:
            ms = graph_ms(lambda x=x, caches=caches, ctx=ctx: model.decode(x, caches, ctx))
        doc["decode"].append({"batch": batch, "context_tokens": ctx, "step_ms": ms})
        print("decode", batch, ctx, ms, flush=True)
        del caches
        if not args.smoke:
            torch.cuda.empty_cache()
    for s in PREFILL_CASES if not args.smoke else (32,):
        x = torch.randn(s, cfg.hidden, device=device, dtype=bf)
        if args.smoke:
            model.prefill(x)
            ms = float("nan")
        else:
            ms = graph_ms(lambda x=x: model.prefill(x))
        doc["prefill"].append({"prompt_tokens": s, "step_ms": ms})
        print("prefill", s, ms, flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(doc, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
