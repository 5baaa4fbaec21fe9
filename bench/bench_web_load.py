"""Bounded load test of `aiinfra web` on 127.0.0.1: concurrent clients send a fixed number of requests.

Starts the server as a separate process (``python -m aiinfra.cli web``), measures the first page (time from launch
until ``/`` answers, then the first answer of ``/api/v1/train``), then ``--clients`` threads send ``--requests``
requests in total, mixing the pages' questions (infer, train, memory, tco, datacenter, catalog). A 429 (the heavy
lane full) is retried after its Retry-After, as a client should. Prints one JSON line: requests/s, p50/p99 latency,
errors (must be 0), 429s retried and the server's resident memory before and after.

    python bench/bench_web_load.py --clients 8 --requests 400
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MIX = [  # (method, path, example file or None), sent round-robin
    ("POST", "/api/v1/infer", "infer-llama3.1-70b-h100.yaml"),
    ("POST", "/api/v1/memory", "memory-llama2-7b-adam-fp16.yaml"),
    ("POST", "/api/v1/tco", "tco-dgx-h100-vs-cloud.yaml"),
    ("POST", "/api/v1/datacenter", "datacenter-dgx-h100-pod.yaml"),
    ("GET", "/api/v1/catalog/accelerators", None),
    ("POST", "/api/v1/train", "train-llama2-70b-a100.yaml"),
    ("POST", "/api/v1/capacity", "capacity-llama70b-10k-users.yaml"),
    ("GET", "/", None),
]


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=400)
    args = ap.parse_args()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    bodies = {f: yaml.safe_load((EXAMPLES / f).read_text()) for _, _, f in MIX if f}
    launched = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "aiinfra.cli", "web", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with httpx.Client(timeout=60) as c:
            while True:
                try:
                    if c.get(base + "/").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.02)
            first_page_s = time.perf_counter() - launched
            t0 = time.perf_counter()
            c.post(base + "/api/v1/train", json=bodies["train-llama2-70b-a100.yaml"]).raise_for_status()
            first_train_s = time.perf_counter() - t0
        rss_before = _rss_bytes(proc.pid)
        latencies: list[float] = []
        errors: list[str] = []
        busy: list[str] = []
        lock = threading.Lock()
        counter = iter(range(args.requests))

        def client() -> None:
            with httpx.Client(timeout=120) as c:
                for i in counter:
                    method, path, f = MIX[i % len(MIX)]
                    t = time.perf_counter()
                    r = c.request(method, base + path, json=bodies[f] if f else None)
                    while r.status_code == 429:  # the heavy lane is full: retry as its Retry-After says
                        with lock:
                            busy.append(path)
                        time.sleep(min(5.0, float(r.headers.get("retry-after", "1"))))
                        r = c.request(method, base + path, json=bodies[f] if f else None)
                    dt = time.perf_counter() - t
                    with lock:
                        latencies.append(dt)
                        if r.status_code != 200:
                            errors.append(f"{path}: {r.status_code}")

        threads = [threading.Thread(target=client) for _ in range(args.clients)]
        start = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        wall = time.perf_counter() - start
        rss_after = _rss_bytes(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    q = statistics.quantiles(latencies, n=100)
    print(
        json.dumps(
            {
                "clients": args.clients,
                "requests": len(latencies),
                "errors": len(errors),
                "error_examples": errors[:5],
                "retried_429": len(busy),
                "wall_s": round(wall, 2),
                "requests_per_s": round(len(latencies) / wall, 1),
                "p50_s": round(q[49], 4),
                "p99_s": round(q[98], 4),
                "first_page_s": round(first_page_s, 3),
                "first_train_answer_s": round(first_train_s, 3),
                "server_rss_before_mb": round(rss_before / 2**20, 1),
                "server_rss_after_mb": round(rss_after / 2**20, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
