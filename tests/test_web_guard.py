"""The web app's request guard, lanes and jobs, through the ASGI test client: who may ask (Host, origin, content
type), what a body may hold (NaN, surrogates, size, speed), how much work one request may start (bounds, deadline,
lanes, 429) and jobs (ids valid until they end, cancel, 404)."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from aiinfra.cli import main
from aiinfra.web.guard import allowed_hosts, host_name
from aiinfra.web.jobs import JobTable
from aiinfra.web.lanes import Stopped
from aiinfra.web.server import Settings, create_app, error_detail

from .conftest import EXAMPLES

LOCAL = "http://127.0.0.1"
INFER = yaml.safe_load((EXAMPLES / "infer-llama3.1-70b-h100.yaml").read_text())
SCHEDULE = yaml.safe_load((EXAMPLES / "schedule-synthetic.yaml").read_text())
RELIABILITY = yaml.safe_load((EXAMPLES / "train-reliability-llama3-405b.yaml").read_text())
SIMULATE = yaml.safe_load((EXAMPLES / "simulate-llama70b-h100.yaml").read_text())


def _client(settings: Settings | None = None) -> TestClient:
    return TestClient(create_app(settings), base_url=LOCAL, raise_server_exceptions=False)


@pytest.fixture(scope="module")
def client() -> TestClient:
    return _client()


def _detail(r: Any) -> dict[str, Any]:
    assert "Traceback" not in r.text
    d: dict[str, Any] = r.json()["detail"]
    return d


# ---------- 1. origin safety


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "10.0.0.5", ""])
def test_a_host_the_server_does_not_serve_is_403(client: TestClient, host: str) -> None:
    for method, path in (("GET", "/"), ("GET", "/api/v1/examples"), ("POST", "/api/v1/infer")):
        r = client.request(method, path, headers={"host": host}, json=INFER)
        assert r.status_code == 403, (host, path)
        assert _detail(r)["field"] == "host" and "--allow-host" in _detail(r)["message"]
        assert r.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000"])
def test_the_local_names_are_served(client: TestClient, host: str) -> None:
    assert client.get("/api/v1/examples", headers={"host": host}).status_code == 200


def test_the_allow_list_is_the_bound_address_the_local_names_and_the_extra_ones() -> None:
    assert allowed_hosts("127.0.0.1") == ("localhost", "127.0.0.1", "[::1]")
    assert allowed_hosts("0.0.0.0", ["box.lan"]) == ("localhost", "127.0.0.1", "[::1]", "box.lan")  # no wildcard
    assert "192.168.1.10" in allowed_hosts("192.168.1.10")
    assert host_name("[::1]:8000") == "[::1]" and host_name("::1") == "[::1]" and host_name("Box.Lan:80") == "box.lan"
    served = _client(Settings(allowed_hosts=allowed_hosts("0.0.0.0", ["box.lan"])))
    assert served.get("/api/v1/examples", headers={"host": "box.lan:8000"}).status_code == 200
    assert served.get("/api/v1/examples", headers={"host": "other.lan"}).status_code == 403


def test_listening_on_every_address_needs_an_explicit_allow_host(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["web", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "--host" in err and "--allow-host" in err


@pytest.mark.parametrize(
    "ctype",
    [
        None,
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/html",
    ],
)
def test_a_state_changing_request_without_a_json_body_type_is_415(client: TestClient, ctype: str | None) -> None:
    """The types an HTML form on another site can send without asking (a 'simple' cross-site request)."""
    headers = {} if ctype is None else {"content-type": ctype}
    for path in ("/api/v1/infer", "/api/v1/jobs/simulate-series", "/api/v1/yaml"):
        r = client.post(path, content=json.dumps(INFER).encode(), headers=headers)
        assert r.status_code == 415, (path, ctype)
        assert _detail(r)["field"] == "content-type" and "application/json" in _detail(r)["message"]


def test_json_and_yaml_bodies_are_accepted(client: TestClient) -> None:
    r = client.post(
        "/api/v1/infer", content=json.dumps(INFER).encode(), headers={"content-type": "application/json; charset=utf-8"}
    )
    assert r.status_code == 200
    r = client.post("/api/v1/parse-yaml", content=b"a: 1\n", headers={"content-type": "application/yaml"})
    assert r.status_code == 200 and r.json() == {"a": 1}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"origin": "http://evil.example"}, 403),
        ({"origin": "null"}, 403),
        ({"origin": "http://127.0.0.1:9999"}, 403),  # another port is another origin
        ({"origin": "file://"}, 403),
        ({"sec-fetch-site": "cross-site"}, 403),
        ({"sec-fetch-site": "same-site"}, 403),
        ({"origin": "http://127.0.0.1"}, 200),
        ({"origin": "http://127.0.0.1", "sec-fetch-site": "same-origin"}, 200),
        ({"sec-fetch-site": "none"}, 200),  # typed into the address bar, or no browser at all
        ({}, 200),  # curl, scripts
    ],
)
def test_state_changing_requests_must_come_from_this_origin(
    client: TestClient, headers: dict[str, str], status: int
) -> None:
    r = client.post("/api/v1/infer", json=INFER, headers=headers)
    assert r.status_code == status, r.text
    if status == 403:
        assert _detail(r)["field"] in ("origin", "sec-fetch-site")
    # reading is not state-changing: a cross-origin GET is answered (the browser keeps it from the other page)
    assert client.get("/api/v1/examples", headers=headers).status_code == 200
    r = client.delete("/api/v1/jobs/j0", headers=headers)
    assert r.status_code == (404 if status == 200 else 403)


# ---------- 4. bodies


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_in_json_are_422(client: TestClient, text: str) -> None:
    raw = json.dumps(INFER)
    raw = raw.replace('"inference": {', f'"inference": {{"request_rate_per_s": {text}, ', 1)
    for path in ("/api/v1/infer", "/api/v1/yaml", "/api/v1/jobs/simulate-series", "/api/v1/schedule"):
        r = client.post(path, content=raw.encode(), headers={"content-type": "application/json"})
        assert r.status_code == 422, (path, text, r.text)
        assert "finite" in _detail(r)["message"] or "not a JSON number" in _detail(r)["message"]


@pytest.mark.parametrize(
    "raw",
    [
        b'{"model": "\\ud800"}',
        b'{"model": "a\\udfffb"}',
        b'{"\\ud83d": 1}',
        b'{"hardware": {"accelerator": ["\\ud800"]}}',
    ],
)
def test_lone_surrogates_are_422(client: TestClient, raw: bytes) -> None:
    for path in ("/api/v1/infer", "/api/v1/yaml", "/api/v1/model-from-config"):
        r = client.post(path, content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 422, (path, raw, r.text)
        assert "surrogate" in _detail(r)["message"]


@pytest.mark.parametrize("text", ["a: .nan\n", "a: [1, -.inf]\n", 'a: "\\ud800"\n'])
def test_a_yaml_file_with_nan_or_surrogates_is_422(client: TestClient, text: str) -> None:
    r = client.post("/api/v1/parse-yaml", content=text.encode(), headers={"content-type": "application/yaml"})
    assert r.status_code == 422, r.text
    assert _detail(r)["field"].startswith("yaml")


def test_a_chunked_body_over_the_limit_is_413() -> None:
    small = _client(Settings(max_body_bytes=1000))

    def chunks() -> Iterator[bytes]:
        yield b'{"model": "'
        for _ in range(50):
            yield b"x" * 100

    r = small.post("/api/v1/infer", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "1,000 bytes" in _detail(r)["message"]
    assert small.post("/api/v1/infer", json=INFER).status_code == 200  # and it goes on serving


def _asgi(app: Any, receive_messages: list[dict[str, Any]], stall: bool) -> tuple[int, float]:
    """One POST straight through the ASGI app; the client sends ``receive_messages`` then stalls (if ``stall``)."""
    sent: list[dict[str, Any]] = []
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/v1/infer",
        "raw_path": b"/api/v1/infer",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), (b"content-length", b"100000")],
        "http_version": "1.1",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
        "root_path": "",
        "asgi": {"version": "3.0"},
    }
    queue = list(receive_messages)

    async def receive() -> dict[str, Any]:
        if queue:
            return queue.pop(0)
        if stall:
            await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    t0 = time.monotonic()
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], time.monotonic() - t0


def test_a_slow_or_short_body_times_out_with_408() -> None:
    app = create_app(Settings(body_timeout_s=0.3))
    # a Content-Length of 100,000 and 10 bytes sent: the server answers within its limit, not never
    status, took_s = _asgi(app, [{"type": "http.request", "body": b'{"model": ', "more_body": True}], stall=True)
    assert status == 408 and took_s < 5


# ---------- 2. bounded work


@pytest.mark.parametrize(
    ("path", "body", "field", "limit"),
    [
        (
            "/api/v1/schedule",
            {
                "schedule": {
                    **SCHEDULE["schedule"],
                    "generator": {**SCHEDULE["schedule"]["generator"], "jobs": 3_000_000},
                }
            },
            "schedule.generator.jobs",
            "50,000",
        ),
        (
            "/api/v1/schedule",
            {"schedule": {**SCHEDULE["schedule"], "generator": {**SCHEDULE["schedule"]["generator"], "jobs": 60_000}}},
            "schedule.generator.jobs",
            "50,000",
        ),
        (
            "/api/v1/schedule",
            {"schedule": {**SCHEDULE["schedule"], "cluster": {**SCHEDULE["schedule"]["cluster"], "nodes": 10**8}}},
            "schedule.cluster.nodes",
            "100,000",
        ),
        (
            "/api/v1/schedule",
            {"schedule": {**SCHEDULE["schedule"], "utilisation_bins": 10**9}},
            "schedule.utilisation_bins",
            "10,000",
        ),
        (
            "/api/v1/schedule",
            {"schedule": {**SCHEDULE["schedule"], "backfill_depth": 10**12}},
            "schedule.backfill_depth",
            "1,000,000",
        ),
        (
            "/api/v1/pack",
            {
                "pack": {
                    "accelerators": ["nvidia-a100-sxm4-80gb"],
                    "workloads": [{"name": "n", "kind": "notebook", "memory_gb": 9, "count": 10**8}],
                }
            },
            "pack.workloads[0].count",
            "100,000",
        ),
        (
            "/api/v1/simulate",
            {**SIMULATE, "inference": {**SIMULATE["inference"], "num_requests": 10**6}},
            "inference.num_requests",
            "20,000",
        ),
        (
            "/api/v1/train",
            {**RELIABILITY, "reliability": {**RELIABILITY["reliability"], "trials": 10**9}},
            "reliability.trials",
            "1,000,000",
        ),
    ],
)
def test_every_size_that_drives_the_work_is_bounded_at_validation(
    client: TestClient, path: str, body: dict[str, Any], field: str, limit: str
) -> None:
    t0 = time.monotonic()
    r = client.post(path, json=body)
    assert r.status_code == 422, r.text
    d = _detail(r)
    assert d["field"].startswith(field), d
    assert limit in d["message"], d
    assert time.monotonic() - t0 < 30  # refused at validation, not after the work


def test_the_clis_bounds_are_the_specs(capsys: pytest.CaptureFixture[str]) -> None:
    example = str(EXAMPLES / "schedule-synthetic.yaml")
    assert main(["schedule", example, "--set", "schedule.generator.jobs=3000000"]) == 2
    assert "schedule.generator.jobs" in capsys.readouterr().err


def test_the_deadline_stops_the_work_itself() -> None:
    slow = _client(Settings(max_wall_s=1.0))
    body = {"schedule": {**SCHEDULE["schedule"], "generator": {**SCHEDULE["schedule"]["generator"], "jobs": 50_000}}}
    t0 = time.monotonic()
    r = slow.post("/api/v1/schedule", json=body)
    assert r.status_code == 422 and "limit of 1 s" in _detail(r)["message"]
    assert time.monotonic() - t0 < 10
    time.sleep(0.2)
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("aiinfra-")]  # killed, not orphaned


def test_cheap_questions_do_not_wait_behind_heavy_ones_and_a_full_lane_is_429() -> None:
    c = _client(Settings(heavy_workers=1, heavy_queue=0))
    assert c.post("/api/v1/infer", json=INFER).status_code == 200  # the catalog's caches warm
    body = {"schedule": {**SCHEDULE["schedule"], "generator": {**SCHEDULE["schedule"]["generator"], "jobs": 30_000}}}
    heavy: list[int] = []
    t = threading.Thread(target=lambda: heavy.append(c.post("/api/v1/schedule", json=body).status_code))
    t.start()
    try:
        deadline = time.monotonic() + 20
        while not multiprocessing.active_children() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert c.post("/api/v1/infer", json=INFER).status_code == 200
        assert t.is_alive() and not heavy  # answered while the heavy schedule still runs: not behind it
        full = c.post("/api/v1/schedule", json=SCHEDULE)
        assert full.status_code == 429 and "busy" in _detail(full)["message"]
        assert full.headers["retry-after"]
    finally:
        t.join(timeout=120)
    assert heavy == [200]


# ---------- 3. jobs


def test_an_unknown_job_is_404(client: TestClient) -> None:
    for method in ("GET", "DELETE"):
        r = client.request(method, "/api/v1/jobs/j999999")
        assert r.status_code == 404
        assert _detail(r)["field"] == "job" and "no such job" in _detail(r)["message"]


class _BlockingLanes:
    """Stands in for the lanes: each job's work waits for its event (or a cancel)."""

    max_wall_s = 60.0

    def __init__(self) -> None:
        self.release = threading.Event()

    def run_blocking(self, op: str, args: Any, progress: Any, stop: Any, deadline: float) -> Any:
        while not self.release.wait(0.01):
            if stop():
                raise Stopped
        return {"op": op}


def test_job_ids_stay_valid_until_the_jobs_finish() -> None:
    lanes = _BlockingLanes()
    table = JobTable(lanes, error_detail, workers=2, max_queued=200, keep=5)  # type: ignore[arg-type]
    jobs = [table.start("simulate", "answer", ()) for _ in range(100)]
    assert all(table.get(j.id) is j for j in jobs)  # 100 unfinished jobs: none forgotten
    assert table.cancel(jobs[50].id) is not None and jobs[50].state == "cancelled"  # a queued one never runs
    lanes.release.set()
    deadline = time.monotonic() + 30
    while any(j.state in ("queued", "running") for j in jobs) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sum(table.get(j.id) is not None for j in jobs) == 5  # finished: the newest 5 are kept
    table.shutdown()


def test_jobs_beyond_the_queue_are_429_and_cancel_stops_a_single_simulation() -> None:
    c = _client(Settings(job_workers=1, max_queued_jobs=1))
    big = {**SIMULATE, "inference": {**SIMULATE["inference"], "num_requests": 20_000, "request_rate_per_s": 12}}
    first = c.post("/api/v1/jobs/simulate-series", json=big)
    second = c.post("/api/v1/jobs/simulate-series", json=big)
    third = c.post("/api/v1/jobs/simulate-series", json=big)
    assert (first.status_code, second.status_code, third.status_code) == (202, 202, 429)
    # one simulation has no step to stop at: its process is killed
    deadline = time.monotonic() + 20
    while c.get(f"/api/v1/jobs/{first.json()['id']}").json()["state"] != "running" and time.monotonic() < deadline:
        time.sleep(0.02)
    t0 = time.monotonic()
    for job in (first, second):
        assert c.delete(f"/api/v1/jobs/{job.json()['id']}").status_code == 200
    while time.monotonic() - t0 < 10:
        states = [c.get(f"/api/v1/jobs/{j.json()['id']}").json()["state"] for j in (first, second)]
        if states == ["cancelled", "cancelled"]:
            break
        time.sleep(0.02)
    # a job that ran to its end would read "done": cancelled means the process was stopped
    assert states == ["cancelled", "cancelled"]
    time.sleep(0.2)
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("aiinfra-")]
