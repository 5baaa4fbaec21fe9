"""Hostile requests against `aiinfra web` on 127.0.0.1: about 500 requests a hostile page or client could send.

Starts the server as a separate process (``python -m aiinfra.cli web``) and sends, in groups: foreign Host headers
(DNS rebinding), foreign origins, cross-site content types, NaN / ±Infinity and lone surrogates in JSON, sizes far
past the bounds, chunked bodies over the limit, slow and short bodies (a Content-Length larger than the body), a
flood of jobs and a flood of heavy questions while a cheap one is timed. Samples the resident memory of the server
and its worker processes throughout. Prints one JSON line: the status counts per group, 5xx (must be 0), hangs (no
answer within the client's timeout; must be 0), the largest resident memory, and the cheap question's latency
under the flood.

    python bench/bench_web_hostile.py
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import copy
import json
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
JSON = {"content-type": "application/json"}
CLIENT_TIMEOUT_S = 150.0
"""A request unanswered for this long is a hang (the server's own limits are 120 s of work, 10 s for a body)."""


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((EXAMPLES / name).read_text())
    return data


INFER = _load("infer-llama3.1-70b-h100.yaml")
SCHEDULE = _load("schedule-synthetic.yaml")
SIMULATE = _load("simulate-llama70b-h100.yaml")
PACK = _load("pack-portfolio.yaml")
TRAIN = _load("train-llama3.1-70b-h100.yaml")


def _set(doc: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    node = out
    *parents, last = key.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = value
    return out


class Memory(threading.Thread):
    """Samples the summed resident memory of the server and every process below it."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.peak_bytes = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.1):
            try:
                procs = [self.root, *self.root.children(recursive=True)]
                total = 0
                for p in procs:
                    with contextlib.suppress(psutil.Error):
                        total += p.memory_info().rss
                self.peak_bytes = max(self.peak_bytes, total)
            except psutil.Error:
                return


def _request(client: httpx.Client, method: str, path: str, **kw: Any) -> int | str:
    try:
        return client.request(method, path, timeout=CLIENT_TIMEOUT_S, **kw).status_code
    except httpx.TimeoutException:
        return "hang"
    except httpx.HTTPError as exc:
        return f"closed:{type(exc).__name__}"


def _raw(port: int, head: bytes, body: bytes, stall_s: float) -> int | str:
    """A request written on a socket: the head and part of a body, then nothing for ``stall_s``."""
    with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT_S) as s:
        s.sendall(head + body)
        if stall_s:
            time.sleep(stall_s)
        try:
            data = s.recv(200)
        except TimeoutError:
            return "hang"
    if not data:
        return "closed"
    return int(data.split(b" ", 2)[1])


def groups(port: int) -> Iterator[tuple[str, list[tuple[str, str, dict[str, Any]]]]]:
    """(group, [(method, path, httpx keywords)])."""
    good = json.dumps(INFER).encode()
    hosts = [
        "evil.example",
        "evil.example:8000",
        "127.0.0.1.evil.example",
        "10.0.0.5",
        "",
        "localhost.evil",
        "[::2]",
        "attacker.127.0.0.1.nip.io",
        "0.0.0.0",
        "127.0.0.2",
    ]
    yield (
        "bad host",
        [
            (m, p, {"headers": {"host": h, "content-type": "application/json"}, "content": good})
            for h in hosts
            for m, p in (
                ("GET", "/"),
                ("GET", "/api/v1/examples"),
                ("POST", "/api/v1/infer"),
                ("POST", "/api/v1/jobs/simulate-series"),
                ("GET", "/api/v1/catalog/prices"),
                ("DELETE", "/api/v1/jobs/j1"),
            )
        ],
    )
    origins = [
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": f"http://127.0.0.1:{port + 1}"},
        {"origin": "file://"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
        {"origin": "http://evil.example", "sec-fetch-site": "cross-site"},
        {"origin": f"https://localhost:{port}.evil.example"},
        {"origin": "http://127.0.0.1"},
        {"origin": "javascript:alert(1)"},
    ]
    yield (
        "bad origin",
        [
            (m, p, {"headers": {**o, "content-type": "application/json"}, "content": good})
            for o in origins
            for m, p in (
                ("POST", "/api/v1/infer"),
                ("POST", "/api/v1/train"),
                ("POST", "/api/v1/jobs/find-max-rate"),
                ("POST", "/api/v1/yaml"),
                ("DELETE", "/api/v1/jobs/j1"),
                ("POST", "/api/v1/schedule"),
            )
        ],
    )
    ctypes = [
        None,
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/html",
        "application/xml",
        "image/png",
        "application/jsonp",
        "application/json-seq",
    ]
    yield (
        "bad content type",
        [
            (m, p, {"headers": {} if c is None else {"content-type": c}, "content": good})
            for c in ctypes
            for m, p in (
                ("POST", "/api/v1/infer"),
                ("POST", "/api/v1/train"),
                ("POST", "/api/v1/jobs/simulate-series"),
                ("POST", "/api/v1/schedule"),
                ("POST", "/api/v1/pack"),
                ("POST", "/api/v1/model-from-config"),
            )
        ],
    )
    nan_bodies = []
    for const in ("NaN", "Infinity", "-Infinity", "1e400", "-1e999"):
        for path, doc, key in (
            ("/api/v1/infer", INFER, "inference"),
            ("/api/v1/train", TRAIN, "training"),
            ("/api/v1/simulate", SIMULATE, "inference"),
            ("/api/v1/cost", TRAIN, "hardware"),
            ("/api/v1/jobs/simulate-series", SIMULATE, "inference"),
            ("/api/v1/yaml", INFER, "inference"),
        ):
            raw = json.dumps(doc).replace(f'"{key}": {{', f'"{key}": {{"x_bad": {const}, ', 1)
            nan_bodies.append(("POST", path, {"content": raw.encode(), "headers": JSON}))
        for path, text in (("/api/v1/schedule", json.dumps(SCHEDULE)), ("/api/v1/pack", json.dumps(PACK))):
            raw = text.replace('{"schedule": {', f'{{"schedule": {{"horizon_s": {const}, ', 1).replace(
                '{"pack": {', f'{{"pack": {{"time_limit_s": {const}, ', 1
            )
            nan_bodies.append(("POST", path, {"content": raw.encode(), "headers": JSON}))
    for text in ("a: .nan\n", "a: .inf\n", "a: -.inf\n", "x: [1, .NaN]\n"):
        nan_bodies.append(
            ("POST", "/api/v1/parse-yaml", {"content": text.encode(), "headers": {"content-type": "application/yaml"}})
        )
    yield "NaN and Infinity", nan_bodies
    surrogates = ['"\\ud800"', '"a\\udfffb"', '"\\ud83d"', '"\\udc00\\ud800"']
    sur_bodies = []
    for s in surrogates:
        for path in (
            "/api/v1/infer",
            "/api/v1/train",
            "/api/v1/yaml",
            "/api/v1/model-from-config",
            "/api/v1/schedule",
            "/api/v1/pack",
            "/api/v1/jobs/simulate-series",
        ):
            raw = '{"model": ' + s + ', "hardware": {"accelerator": "nvidia-h100-sxm5-80gb"}, ' + s + ": 1}"
            sur_bodies.append(("POST", path, {"content": raw.encode(), "headers": JSON}))
        sur_bodies.append(
            (
                "POST",
                "/api/v1/parse-yaml",
                {"content": f"a: {s}\n".encode(), "headers": {"content-type": "application/yaml"}},
            )
        )
    yield "lone surrogates", sur_bodies
    gen = SCHEDULE["schedule"]["generator"]
    huge = [
        ("/api/v1/schedule", _set(SCHEDULE, "schedule.generator", {**gen, "jobs": n}))
        for n in (10**8, 3 * 10**6, 10**18, 60_000)
    ]
    huge += [
        ("/api/v1/schedule", _set(SCHEDULE, f"schedule.{k}", v))
        for k, v in (
            ("cluster.nodes", 10**9),
            ("cluster.nodes", 10**6),
            ("cluster.gpus_per_node", 10**7),
            ("cluster.mig_nodes", 10**9),
            ("utilisation_bins", 10**9),
            ("utilisation_bins", 10**6),
            ("backfill_depth", 10**15),
            ("cluster.nodes_per_leaf", 10**12),
        )
    ]
    huge += [("/api/v1/schedule", _set(SCHEDULE, "schedule.generator", {**gen, "users": 10**12}))]
    huge += [
        (p, _set(SIMULATE, "inference.num_requests", n))
        for n in (10**6, 10**8, 10**12)
        for p in ("/api/v1/simulate", "/api/v1/simulate-series", "/api/v1/find-max-rate")
    ]
    huge += [
        ("/api/v1/infer", _set(INFER, k, v))
        for k, v in (
            ("hardware.count", 10**12),
            ("inference.input_tokens", 10**12),
            ("inference.output_tokens", 10**15),
            ("inference.request_rate_per_s", 1e300),
            ("inference.users", 10**20),
            ("hardware.per_node", 10**9),
        )
    ]
    huge += [
        ("/api/v1/train", _set(TRAIN, k, v))
        for k, v in (
            ("hardware.count", 10**15),
            ("training.seq_len", 10**12),
            ("training.tokens", 1e300),
            ("training.global_batch_seqs", 10**14),
            ("training.top_k_plans", 10**12),
        )
    ]
    huge += [
        ("/api/v1/pack", _set(PACK, "pack.workloads", [{"name": "n", "kind": "notebook", "memory_gb": 9, "count": c}]))
        for c in (10**8, 10**12, 10**6)
    ]
    huge += [("/api/v1/tco", _set(_load("tco-dgx-h100-vs-cloud.yaml"), "tco.years", 10**9))]
    huge += [("/api/v1/jobs/simulate-series", _set(SIMULATE, "inference.num_requests", n)) for n in (10**7, 10**9)]
    yield "huge sizes", [("POST", p, {"json": b}) for p, b in huge] * 2

    def chunks(total: int) -> Iterator[bytes]:
        yield b'{"model": "'
        sent = 0
        while sent < total:
            yield b"x" * 65536
            sent += 65536

    yield (
        "oversize bodies",
        [
            ("POST", p, {"content": chunks(n), "headers": {"content-type": "application/json"}})
            for n in (1_100_000, 5_000_000, 30_000_000)
            for p in ("/api/v1/infer", "/api/v1/schedule", "/api/v1/parse-yaml", "/api/v1/jobs/simulate-series")
        ]
        + [
            (
                "POST",
                "/api/v1/infer",
                {"content": b"{" + b" " * 2_000_000 + b"}", "headers": {"content-type": "application/json"}},
            )
        ]
        * 4,
    )  # declared length


def run(port: int, server_pid: int) -> dict[str, Any]:
    base = f"http://127.0.0.1:{port}"
    mem = Memory(server_pid)
    mem.start()
    out: dict[str, Any] = {"groups": {}}
    fivexx = hangs = total = 0

    def tally(name: str, statuses: list[int | str]) -> None:
        nonlocal fivexx, hangs, total
        out["groups"][name] = dict(Counter(str(s) for s in statuses))
        fivexx += sum(isinstance(s, int) and s >= 500 for s in statuses)
        hangs += sum(s == "hang" for s in statuses)
        total += len(statuses)

    with httpx.Client(base_url=base) as client, cf.ThreadPoolExecutor(8) as pool:
        for name, reqs in groups(port):
            tally(name, list(pool.map(lambda r: _request(client, r[0], r[1], **r[2]), reqs)))
        # slow and short bodies, all at once: a Content-Length of 10,000 and a few bytes, then silence
        head = (
            b"POST /api/v1/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 10000\r\n\r\n"
        )
        with cf.ThreadPoolExecutor(20) as slow_pool:
            slow = list(slow_pool.map(lambda i: _raw(port, head, b'{"model": ' * (i % 3), 0), range(20)))
        tally("slow or short bodies", slow)
        # a flood of jobs: each a 20,000-request simulation; the table takes its slots and queue, the rest is 429
        big = _set(SIMULATE, "inference.num_requests", 20_000)
        started = list(pool.map(lambda _: client.post("/api/v1/jobs/simulate-series", json=big, timeout=60), range(40)))
        ids = [r.json()["id"] for r in started if r.status_code == 202]
        tally("job flood", [r.status_code for r in started])
        unknown = [client.get(f"/api/v1/jobs/{i}").status_code for i in ids]
        cancels = [client.delete(f"/api/v1/jobs/{i}").status_code for i in ids]
        cancels += [client.delete(f"/api/v1/jobs/j{n:016x}").status_code for n in range(10)]
        tally("job status and cancel", unknown + cancels)
        # a flood of heavy questions (50,000-job schedules) while a cheap one is timed
        heavy = _set(SCHEDULE, "schedule.generator", {**gen_jobs(50_000)})
        t0 = time.monotonic()
        client.post("/api/v1/infer", json=INFER, timeout=CLIENT_TIMEOUT_S).raise_for_status()
        out["cheap_infer_alone_s"] = round(time.monotonic() - t0, 3)
        flood = [pool.submit(_request, client, "POST", "/api/v1/schedule", json=heavy) for _ in range(12)]
        time.sleep(1.0)
        t0 = time.monotonic()
        cheap = client.post("/api/v1/infer", json=INFER, timeout=CLIENT_TIMEOUT_S)
        out["cheap_infer_under_flood_s"] = round(time.monotonic() - t0, 3)
        out["cheap_infer_status"] = cheap.status_code
        tally("heavy flood", [f.result() for f in flood])
    time.sleep(0.5)
    mem.stop.set()
    out.update(requests=total, server_5xx=fivexx, hangs=hangs, peak_rss_mb=round(mem.peak_bytes / 1e6, 1))
    return out


def gen_jobs(n: int) -> dict[str, Any]:
    g: dict[str, Any] = dict(SCHEDULE["schedule"]["generator"])
    g["jobs"] = n
    return g


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "aiinfra.cli", "web", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/v1/examples", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        start_rss = psutil.Process(proc.pid).memory_info().rss
        result = run(port, proc.pid)
        result["server_rss_at_start_mb"] = round(start_rss / 1e6, 1)
        result["server_still_answers"] = (
            httpx.post(f"http://127.0.0.1:{port}/api/v1/infer", json=INFER, timeout=60).status_code == 200
        )
        print(json.dumps(result))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
