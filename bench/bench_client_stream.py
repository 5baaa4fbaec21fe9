"""What a Python asyncio benchmark client costs per streamed chunk (SSE over HTTP), on this machine.

A serving benchmark's client (``vllm bench serve``, vLLM's benchmarks/benchmark_serving.py, sglang.bench_serving)
is one asyncio process that reads every request's server-sent-event stream and, per chunk: receives it (a socket
read, aiohttp's HTTP/chunked-transfer parser, the wake-up of the request's coroutine), splits the SSE event out of
the bytes, strips the ``data: `` prefix, parses the JSON, reads the token text, takes a ``time.perf_counter()``
timestamp, appends the gap to the request's inter-token list and appends the text. If it handles C chunks per
second, a round of one chunk for each of N streams takes N / C seconds, and the inter-token latency it measures
cannot be shorter. This script measures C.

Two processes on the loopback interface (127.0.0.1 only), each pinned to its own core where the machine has two:

* a mock OpenAI-compatible completions server (raw asyncio streams, cheap per chunk, so that it is not the slow
  stage): each POST /v1/completions streams ``max_tokens`` chunks shaped like vLLM's completion chunks, one per
  "step", each as its own HTTP chunk (chunked transfer encoding, as uvicorn sends a streaming response), then
  ``data: [DONE]``. Steps run either as fast as the client drains them (``step_ms`` 0: the server writes a round to
  every open stream and waits only when a stream's send buffer is full) or every ``step_ms`` milliseconds.
* a client written for this script (not copied) that does each chunk's work the way the benchmark clients' loops do,
  in two variants:
  - ``iter_any``: the loop of vLLM's ``async_request_openai_completions``
    (vllm/benchmarks/lib/endpoint_request_func.py,
    vllm-project/vllm, ``StreamedResponseHandler``): read whatever bytes arrived (``response.content.iter_any()``),
    decode them incrementally, split the buffer on blank lines into SSE messages (a stripped read's last message is
    taken as complete when its JSON parses, so it is parsed twice), drop ``data: ``, ``json.loads``,
    ``choices[0].get("text")``, timestamp, append the gap, append the text;
  - ``lines``: the older loop of vLLM's benchmarks/backend_request_func.py and of sgl-project/sglang
    python/sglang/bench_serving.py ``async_request_openai_completions``: ``async for line in response.content``
    (aiohttp's line reader), strip, skip blank lines, decode, drop ``data: ``, ``json.loads``, the same bookkeeping.

Measured: the client process's CPU seconds (``time.process_time``) and wall seconds over the window in which every
stream of the burst is open (from the last stream's first chunk to the first stream's end), divided by the chunks
received in it: CPU µs per chunk and chunks per second; the server's CPU µs per chunk the same way; and, in paced
mode, the mean inter-token latency the client records against the server's step. Run:

    python bench/bench_client_stream.py [--quick] [--out bench/results/client-stream-<date>.json]

Needs aiohttp (``pip install aiinfra[bench]``). Not a test; the numbers are the machine's.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import datetime as dt
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
HIGH_WATER_BYTES = 16 * 1024
"""Server: a stream whose send buffer holds more than this waits for the client (asyncio's drain)."""
SNDBUF_BYTES = 8 * 1024
"""Server: the kernel's send buffer per stream (SO_SNDBUF), so that a free-running server stays a few dozen chunks
ahead of the client rather than megabytes."""


def _runqueue_wait_s() -> float:
    """Seconds this process has waited runnable for a CPU (Linux /proc/self/schedstat, field 2; 0 elsewhere): on a
    shared machine, the share of wall time it was kept off its core by other processes."""
    try:
        return int(Path("/proc/self/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


# ------------------------------------------------------------------------------------------------- server
def _chunk_parts(stream_id: int, model: str) -> tuple[bytes, bytes]:
    """The bytes of one stream's SSE events around the token text, shaped like a vLLM completions stream chunk and
    framed as one HTTP chunk each (the token text is 4 characters, so the frame's length is fixed)."""
    body = json.dumps(
        {
            "id": f"cmpl-{stream_id:032x}",
            "object": "text_completion",
            "created": 1764115200,
            "model": model,
            "choices": [{"index": 0, "text": "@@@@", "logprobs": None, "finish_reason": None, "stop_reason": None}],
            "usage": None,
        },
        separators=(", ", ": "),
    )
    event = f"data: {body}\n\n".encode()
    framed = f"{len(event):x}\r\n".encode() + event + b"\r\n"
    head, tail = framed.split(b"@@@@")
    return head, tail


_DONE = b"data: [DONE]\n\n"
_DONE_FRAMED = f"{len(_DONE):x}\r\n".encode() + _DONE + b"\r\n" + b"0\r\n\r\n"
_HEADERS = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"transfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n"
)


@dataclass
class _Stream:
    writer: asyncio.StreamWriter
    sid: int
    left: int
    head: bytes
    tail: bytes
    sent: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)


class MockServer:
    """Streams one chunk per open stream per step (module docstring)."""

    def __init__(self, step_s: float, model: str) -> None:
        self.step_s = step_s
        self.model = model
        self.active: list[_Stream] = []
        self.wake = asyncio.Event()
        self.next_id = 0
        self.chunks = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.transport.set_write_buffer_limits(high=HIGH_WATER_BYTES)
        sock = writer.get_extra_info("socket")
        if sock is not None:  # keep the kernel from buffering far ahead of the client (the kernel doubles it)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF_BYTES)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                length = 0
                for h in lines[1:]:
                    if h.lower().startswith("content-length:"):
                        length = int(h.split(":", 1)[1])
                body = await reader.readexactly(length) if length else b""
                path = lines[0].split(" ")[1]
                if path == "/stats":
                    data = json.dumps(
                        {"cpu_s": time.process_time(), "chunks": self.chunks, "wait_s": _runqueue_wait_s()}
                    ).encode()
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                        + str(len(data)).encode()
                        + b"\r\n\r\n"
                        + data
                    )
                    await writer.drain()
                    continue
                req = json.loads(body)
                stream = _Stream(writer, self.next_id, int(req["max_tokens"]), *_chunk_parts(self.next_id, self.model))
                self.next_id += 1
                writer.write(_HEADERS)
                self.active.append(stream)
                # a burst starts stepping once all its requests are in (so every stream is open in the window)
                if len(self.active) >= int(req.get("burst", 1)):
                    self.wake.set()
                await stream.done.wait()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def steps(self) -> None:
        """The engine's steps: each writes one chunk to every open stream."""
        next_t = time.perf_counter()
        while True:
            if not self.active or not self.wake.is_set():
                self.wake.clear()
                await self.wake.wait()
                next_t = time.perf_counter()
            for s in self.active:
                s.writer.write(s.head + b" %03d" % (s.sent % 1000) + s.tail)
                s.sent += 1
                s.left -= 1
                self.chunks += 1
                if s.left == 0:
                    s.writer.write(_DONE_FRAMED)
                    s.done.set()
            self.active = [s for s in self.active if s.left > 0]
            if not self.active:
                self.wake.clear()
            if self.step_s > 0:
                next_t += self.step_s
                await asyncio.sleep(max(0.0, next_t - time.perf_counter()))
            else:
                full = [s for s in self.active if s.writer.transport.get_write_buffer_size() > HIGH_WATER_BYTES]
                for s in full:
                    await s.writer.drain()
                await asyncio.sleep(0)


async def _serve(step_s: float, model: str) -> None:
    srv = MockServer(step_s, model)
    server = await asyncio.start_server(srv.handle, HOST, 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    await asyncio.gather(server.serve_forever(), srv.steps())


# ------------------------------------------------------------------------------------------------- client
@dataclass
class _Window:
    """Counters of one burst; the window opens when every stream has its first chunk, closes at the first end."""

    n: int
    chunks: int = 0
    started: int = 0
    start: tuple[float, float, int, float] | None = None
    end: tuple[float, float, int, float] | None = None

    def mark(self) -> tuple[float, float, int, float]:
        return (time.perf_counter(), time.process_time(), self.chunks, _runqueue_wait_s())


@dataclass
class _Result:
    ttft_s: float = 0.0
    itl_s: list[float] = field(default_factory=list)
    text: str = ""
    latency_s: float = 0.0


def _on_token(res: _Result, w: _Window, text: str | None, st: float, last: float) -> float:
    """Bookkeeping per token chunk, as the benchmark clients do it: timestamp, TTFT or the gap, the text."""
    now = time.perf_counter()
    if not res.ttft_s:
        res.ttft_s = now - st
        w.started += 1
        if w.started == w.n:
            w.start = w.mark()
    else:
        res.itl_s.append(now - last)
    res.text += text or ""
    w.chunks += 1
    return now


def _on_data(res: _Result, w: _Window, data: str, st: float, last: float) -> float:
    """One SSE ``data:`` payload as both clients handle it: ``[DONE]`` ends the stream, a chunk with choices is a
    token; returns the time of the last token."""
    if data == "[DONE]":
        return last
    parsed = json.loads(data)
    if choices := parsed.get("choices"):
        return _on_token(res, w, choices[0].get("text"), st, last)
    return last


def _finish(res: _Result, w: _Window, st: float, last: float) -> _Result:
    """The request's latency (to its last token) and, for the last request to end, the window's end."""
    res.latency_s = last - st
    if w.end is None:
        w.end = w.mark()
    return res


def _split_sse(buf: str) -> tuple[list[str], str]:
    """Complete SSE messages in ``buf`` (separated by a blank line) and the incomplete rest."""
    msgs = []
    while "\n\n" in buf:
        msg, buf = buf.split("\n\n", 1)
        msg = msg.strip()
        if msg:
            msgs.append(msg)
    return msgs, buf


async def _request_iter_any(session: Any, url: str, n_tokens: int, w: _Window) -> _Result:
    """vLLM's current client loop, re-written (module docstring: ``iter_any``)."""
    res, st = _Result(), time.perf_counter()
    last = st
    payload = {"model": "m", "prompt": "hello", "max_tokens": n_tokens, "stream": True, "burst": w.n}
    async with session.post(url, json=payload) as resp:
        decoder, buf = codecs.getincrementaldecoder("utf-8")(), ""
        async for raw in resp.content.iter_any():
            raw = raw.strip()
            if not raw:
                continue
            msgs, buf = _split_sse(buf + decoder.decode(raw))
            if buf.startswith("data: "):
                # the stripped read ends in a message without its blank line: complete if it is [DONE] or parses
                # as JSON (the handler parses it once here, and the loop again below)
                rest = buf.removeprefix("data: ").strip()
                complete = rest == "[DONE]"
                if not complete and rest:
                    try:
                        json.loads(rest)
                        complete = True
                    except json.JSONDecodeError:
                        pass
                if complete:
                    msgs.append(buf.strip())
                    buf = ""
            for msg in msgs:
                if msg.startswith(":"):
                    continue
                last = _on_data(res, w, msg.removeprefix("data: "), st, last)
    return _finish(res, w, st, last)


async def _request_lines(session: Any, url: str, n_tokens: int, w: _Window) -> _Result:
    """The line-reader loop of vLLM's benchmark_serving.py and sglang.bench_serving, re-written (``lines``)."""
    res, st = _Result(), time.perf_counter()
    last = st
    payload = {"model": "m", "prompt": "hello", "max_tokens": n_tokens, "stream": True, "burst": w.n}
    async with session.post(url, json=payload) as resp:
        async for line in resp.content:
            line = line.strip()
            if not line:
                continue
            last = _on_data(res, w, line.decode("utf-8").removeprefix("data: "), st, last)
    return _finish(res, w, st, last)


async def _stats(session: Any, base: str) -> dict[str, float]:
    async with session.get(base + "/stats") as r:
        return dict(await r.json())


async def _burst(port: int, n: int, n_tokens: int, variant: str, reps: int) -> list[dict[str, float]]:
    import aiohttp

    base = f"http://{HOST}:{port}"
    fn = _request_iter_any if variant == "iter_any" else _request_lines
    out = []
    # the benchmark clients' session: no connection limit (a burst opens one connection per request)
    conn = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=3600)) as session:
        for _ in range(reps):
            w = _Window(n)
            s0, b0 = await _stats(session, base), time.perf_counter()
            results = await asyncio.gather(*(fn(session, base + "/v1/completions", n_tokens, w) for _ in range(n)))
            s1, b1 = await _stats(session, base), time.perf_counter()
            assert w.start is not None and w.end is not None
            (t0, c0, k0, q0), (t1, c1, k1, q1) = w.start, w.end
            chunks = k1 - k0
            tpots = [(r.latency_s - r.ttft_s) / (len(r.itl_s)) for r in results if r.itl_s]
            out.append(
                {
                    "window_chunks": chunks,
                    "window_wall_s": t1 - t0,
                    "client_cpu_us_per_chunk": 1e6 * (c1 - c0) / chunks if chunks else float("nan"),
                    "client_chunks_per_wall_s": chunks / (t1 - t0) if t1 > t0 else float("nan"),
                    "client_cpu_share_of_wall": (c1 - c0) / (t1 - t0) if t1 > t0 else float("nan"),
                    # runnable but kept off the CPU by other processes (a shared machine): wall figures then overstate
                    "client_runqueue_share_of_wall": (q1 - q0) / (t1 - t0) if t1 > t0 else float("nan"),
                    "server_runqueue_share_of_wall": (s1["wait_s"] - s0["wait_s"]) / (b1 - b0),
                    "server_cpu_us_per_chunk": 1e6 * (s1["cpu_s"] - s0["cpu_s"]) / max(s1["chunks"] - s0["chunks"], 1),
                    # the server's busy share over the whole burst: near 1, the server (not the client) set the pace
                    "server_cpu_share_of_wall": (s1["cpu_s"] - s0["cpu_s"]) / (b1 - b0),
                    "mean_tpot_s": statistics.fmean(tpots),
                    "total_chunks": sum(len(r.itl_s) + 1 for r in results),
                }
            )
    return out


# ------------------------------------------------------------------------------------------------- driver
def _pin(core: int) -> bool:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {core})
        return True
    return False


def run_case(n: int, n_tokens: int, step_ms: float, variant: str, reps: int) -> dict[str, Any]:
    """One server process (core 0) and one client burst of ``n`` streams (this process, core 1)."""
    srv = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--step-ms", str(step_ms)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert srv.stdout is not None
        port = int(srv.stdout.readline())
        runs = asyncio.run(_burst(port, n, n_tokens, variant, reps))
    finally:
        srv.terminate()
        srv.wait()
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return {
        "streams": n,
        "tokens_per_stream": n_tokens,
        "step_ms": step_ms,
        "variant": variant,
        "reps": runs,
        "median": med,
    }


def _cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--step-ms", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="fewer chunks and repetitions (a smoke run)")
    ap.add_argument("--paced-only", action="store_true", help="only the paced 1,000-stream runs")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = ap.parse_args()
    if args.serve:
        _pin(0)
        asyncio.run(_serve(args.step_ms / 1e3, "Qwen/Qwen3-14B"))
        return
    pinned = _pin(1)
    reps = 1 if args.quick else args.reps
    budget = 20_000 if args.quick else 100_000  # chunks per burst
    cases: list[dict[str, Any]] = []
    for variant in ("iter_any", "lines") if not args.paced_only else ():
        for n in (1, 10, 100, 1000):
            cases.append(run_case(n, max(budget // n, 50), 0.0, variant, reps))
            _show(cases[-1])
    # paced: the server steps every step_ms; does the client keep up with 1,000 streams?
    for step_ms in (80.0, 50.0, 40.0, 30.0, 20.0, 15.0, 10.0) if not args.quick else (40.0,):
        cases.append(run_case(1000, 60 if not args.quick else 20, step_ms, "iter_any", reps))
        _show(cases[-1])
    import aiohttp

    report = {
        "what": "Python asyncio benchmark client: CPU per streamed SSE chunk (bench/bench_client_stream.py)",
        "date": dt.date.today().isoformat(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "pinned_server_core0_client_core1": pinned,
        "python": platform.python_version(),
        "aiohttp": aiohttp.__version__,
        "platform": platform.platform(),
        "cases": cases,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")


def _show(case: dict[str, Any]) -> None:
    m = case["median"]
    print(
        f"{case['variant']:8} N={case['streams']:5d} step={case['step_ms']:5.1f} ms: client "
        f"{m['client_cpu_us_per_chunk']:6.1f} CPU µs/chunk, {m['client_chunks_per_wall_s']:9.0f} chunks/s "
        f"(CPU {m['client_cpu_share_of_wall']:.0%} of wall); server {m['server_cpu_us_per_chunk']:5.1f} µs/chunk "
        f"(CPU {m['server_cpu_share_of_wall']:.0%}); run-queue wait client {m['client_runqueue_share_of_wall']:.0%} "
        f"server {m['server_runqueue_share_of_wall']:.0%}; "
        f"mean TPOT {m['mean_tpot_s'] * 1e3:7.2f} ms",
        flush=True,
    )


if __name__ == "__main__":
    main()
