"""The HTTP API of `aiinfra web`, through the ASGI test client: every endpoint, the same answers as the CLI's
--json, bad input as 422 naming the field (never a traceback), limits, headers, jobs."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from aiinfra.cli import main
from aiinfra.web import questions
from aiinfra.web.server import DEFAULT_EXAMPLES, Settings, create_app

from .conftest import EXAMPLES, ROOT

WEB = ROOT / "src" / "aiinfra" / "web"
#: a simulation small enough for a unit test (the shipped example runs 2,000 requests)
SMALL_SIM = {"inference.num_requests": 300}


#: the test client's requests name a host the server answers to (the guard refuses others)
LOCAL = "http://127.0.0.1"


def _client(settings: Settings | None = None) -> TestClient:
    return TestClient(create_app(settings), base_url=LOCAL, raise_server_exceptions=False)


@pytest.fixture(scope="module")
def client() -> TestClient:
    return _client()


def _cli_json(argv: list[str]) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return json.loads(out.getvalue())


def _scenario(file: str, sets: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((EXAMPLES / file).read_text())
    for key, value in (sets or {}).items():
        node = data
        *parents, last = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return data


def _same(a: Any, b: Any, where: str = "") -> None:
    """Equal JSON, except timings of the search itself (``*wall_s``), which differ run to run."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for k in a:
            if not k.endswith("wall_s"):
                _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0), where
    else:
        assert a == b, where


CASES = [  # question, example, CLI flags, query string, overrides
    ("check", "train-llama3.1-70b-h100.yaml", [], "", {}),
    ("train", "train-llama3.1-70b-h100.yaml", [], "", {}),
    ("train", "train-reliability-llama3-405b.yaml", [], "", {"reliability.trials": 200}),
    ("memory", "memory-llama2-7b-adam-fp16.yaml", [], "", {}),
    ("memory", "finetune-qlora-70b.yaml", [], "", {}),
    ("infer", "infer-llama3.1-70b-h100.yaml", [], "", {}),
    ("capacity", "capacity-llama70b-10k-users.yaml", [], "", {}),
    (
        "capacity",
        "capacity-llama70b-10k-users.yaml",
        ["--accelerators", "nvidia-h100-sxm5-80gb,nvidia-h200-sxm-141gb", "--engines", "vllm,trtllm"],
        "accelerators=nvidia-h100-sxm5-80gb,nvidia-h200-sxm-141gb&engines=vllm,trtllm",
        {},
    ),
    ("simulate", "simulate-llama70b-h100.yaml", ["--seed", "3"], "seed=3", SMALL_SIM),
    ("cost", "cost-train-70b-32xh100.yaml", [], "", {}),
    ("cost", "cost-serve-70b-5-regions.yaml", [], "", {}),
    ("datacenter", "datacenter-dgx-h100-pod.yaml", [], "", {}),
    ("tco", "tco-dgx-h100-vs-cloud.yaml", [], "", {}),
]


@pytest.mark.parametrize(("question", "example", "flags", "query", "sets"), CASES)
def test_every_question_answers_as_the_cli(
    client: TestClient, question: str, example: str, flags: list[str], query: str, sets: dict[str, Any]
) -> None:
    argv = [question, str(EXAMPLES / example), "--json", *flags]
    argv += [f"--set={k}={v}" for k, v in sets.items()]
    if question in ("capacity", "simulate"):
        argv.append("--quiet")
    expected = _cli_json(argv)
    r = client.post(f"/api/v1/{question}?{query}", json=_scenario(example, sets))
    assert r.status_code == 200, r.text
    _same(expected, r.json(), question)


@pytest.mark.parametrize(
    ("example", "sets"),
    [
        (
            "schedule-synthetic.yaml",
            [
                "schedule.generator.jobs=500",
                "schedule.failures.repair_s=7200",
                "schedule.failures.failure_rate_scale_ratio=50",
            ],
        ),
        ("schedule-sample.yaml", ["schedule.cluster.nodes=6"]),
    ],
)
def test_schedule_answers_as_the_cli(client: TestClient, example: str, sets: list[str]) -> None:
    expected = _cli_json(["schedule", str(EXAMPLES / example), "--json", *(f"--set={s}" for s in sets)])
    doc = next(e["scenario"] for e in client.get("/api/v1/examples").json()["examples"] if e["file"] == example)
    for assignment in sets:
        key, value = assignment.split("=")
        node = doc
        *parents, last = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = yaml.safe_load(value)
    r = client.post("/api/v1/schedule", json=doc)
    assert r.status_code == 200, r.text
    got = r.json()
    # the web app names a shipped trace by its file name; the CLI by the path the example wrote
    assert Path(expected["trace"].pop("source")).name == Path(got["trace"].pop("source")).name
    _same(expected, got)


TRACE_CSV = """job_id,arrival_s,gpus,duration_s,priority,user
a,0,8,100,0,u1
b,10,16,50,1,u2
c,20,4,30,0,u1
d,25,8,80,0,u3
"""


def test_an_uploaded_trace_is_scheduled_as_the_cli_schedules_the_file(client: TestClient, tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    spec = {"cluster": {"nodes": 2, "gpus_per_node": 8}, "policy": "backfill", "trace": "t.csv"}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"schedule": spec}))
    expected = _cli_json(["schedule", str(tmp_path / "s.yaml"), "--json"])
    r = client.post("/api/v1/schedule", json={"schedule": {**spec, "trace": None}, "trace_csv": TRACE_CSV})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["trace"].pop("source") == "uploaded.csv" and expected["trace"].pop("source") == "t.csv"
    _same(expected, got)
    bad = client.post("/api/v1/schedule", json={"schedule": spec, "trace_csv": TRACE_CSV.replace("b,10,16", "b,10,x")})
    assert bad.status_code == 422
    assert bad.json()["detail"]["field"] == "uploaded.csv row 2.gpus"  # the reader names the file, row and column


def test_pack_answers_as_the_cli(client: TestClient) -> None:
    expected = _cli_json(["pack", str(EXAMPLES / "pack-portfolio.yaml"), "--json", "--set", "pack.objective=cost"])
    doc = yaml.safe_load((EXAMPLES / "pack-portfolio.yaml").read_text())
    doc["pack"]["objective"] = "cost"
    r = client.post("/api/v1/pack", json=doc)
    assert r.status_code == 200, r.text
    _same(expected, r.json())


@pytest.mark.parametrize(
    ("question", "body", "field"),
    [
        (
            "pack",
            {
                "pack": {
                    "accelerators": ["nvidia-a100-sxm4-80gb"],
                    "workloads": [{"name": "s", "kind": "service", "model": {"config": "/etc/passwd"}}],
                }
            },
            "pack.workloads[0].model.config",
        ),
        ("pack", {"workloads": []}, "pack"),
        (
            "pack",
            {
                "pack": {
                    "accelerators": ["nvidia-a100-sxm4-8gb"],
                    "workloads": [{"name": "n", "kind": "notebook", "memory_gb": 9, "count": 1}],
                }
            },
            "pack.accelerators",
        ),
        ("pack", {"pack": {"accelerators": ["nvidia-a100-sxm4-80gb"], "workloads": []}}, "pack.workloads"),
        (
            "schedule",
            {"schedule": {"cluster": {"nodes": 2, "gpus_per_node": 8}, "policy": "fifo", "trace": "/etc/passwd"}},
            "schedule.trace",
        ),
        (
            "schedule",
            {"schedule": {"cluster": {"nodes": 2, "gpus_per_node": 8}, "policy": "fifo", "trace": "../../secret.csv"}},
            "schedule.trace",
        ),
        ("schedule", {"cluster": {"nodes": 2}}, "schedule"),
        (
            "schedule",
            {
                "schedule": {
                    "cluster": {"nodes": 2, "gpus_per_node": 8},
                    "policy": "lottery",
                    "trace": "alibaba_openb_gpu_pods.csv",
                }
            },
            "schedule.policy",
        ),
        (
            "schedule",
            {
                "schedule": {
                    "cluster": {"nodes": 0, "gpus_per_node": 8},
                    "policy": "fifo",
                    "trace": "alibaba_openb_gpu_pods.csv",
                }
            },
            "schedule.cluster.nodes",
        ),
    ],
)
def test_bad_portfolios_and_schedules_are_422(
    client: TestClient, question: str, body: dict[str, Any], field: str
) -> None:
    r = client.post(f"/api/v1/{question}", json=body)
    assert r.status_code == 422, r.text
    _no_traceback(r)
    assert r.json()["detail"]["field"].startswith(field), r.text


def test_find_max_rate_answers_as_the_cli(client: TestClient) -> None:
    sets = {"inference.num_requests": 200}
    expected = _cli_json(
        [
            "simulate",
            str(EXAMPLES / "simulate-llama70b-h100.yaml"),
            "--find-max-rate",
            "--json",
            "--quiet",
            "--set=inference.num_requests=200",
        ]
    )
    r = client.post("/api/v1/find-max-rate", json=_scenario("simulate-llama70b-h100.yaml", sets))
    assert r.status_code == 200, r.text
    _same(expected, r.json())


def test_simulation_series_carry_the_same_answer(client: TestClient) -> None:
    body = _scenario("simulate-llama70b-h100.yaml", SMALL_SIM)
    plain = client.post("/api/v1/simulate", json=body).json()
    series = client.post("/api/v1/simulate-series", json=body).json()
    _same(plain, series["answer"])
    assert len(series["latencies"]["ttft_s"]) == plain["completed"]
    t = series["timeline"]
    assert len(t["t_s"]) == len(t["waiting"]) == len(t["running"]) == len(t["kv_frac"]) > 10
    assert max(t["running"]) <= plain["running_seqs_max"]


def test_catalog_and_model_lookups_are_the_clis(client: TestClient) -> None:
    for kind in ("accelerators", "systems", "interconnects", "models", "benchmarks"):
        _same(_cli_json(["catalog", "list", kind, "--json"]), client.get(f"/api/v1/catalog/{kind}").json())
    _same(
        _cli_json(["catalog", "list", "prices", "--json", "--accelerator", "nvidia-h100-sxm5-80gb"]),
        client.get("/api/v1/catalog/prices?accelerator=nvidia-h100-sxm5-80gb").json(),
    )
    _same(_cli_json(["catalog", "list", "purchases", "--json"]), client.get("/api/v1/catalog/purchases").json())
    _same(
        _cli_json(["catalog", "show", "nvidia-h100-sxm5-80gb", "--json"]),
        client.get("/api/v1/catalog/row/nvidia-h100-sxm5-80gb").json(),
    )
    _same(
        _cli_json(["model", "show", "meta-llama-3.1-70b", "--seq-len", "8192", "--json"]),
        client.get("/api/v1/model/meta-llama-3.1-70b?seq_len=8192").json(),
    )


def test_mig_is_the_clis(client: TestClient) -> None:
    _same(_cli_json(["mig", "nvidia-a100-sxm4-80gb", "--json"]), client.get("/api/v1/mig/nvidia-a100-sxm4-80gb").json())
    _same(
        _cli_json(["mig", "nvidia-h100-sxm5-80gb", "--layout", "3g.40gb,2g.20gb,1g.10gb", "--json"]),
        client.get("/api/v1/mig/nvidia-h100-sxm5-80gb?layout=3g.40gb,2g.20gb,1g.10gb").json(),
    )
    r = client.get("/api/v1/mig/nvidia-a100-sxm4-80gb?layout=4g.40gb,4g.40gb")
    assert r.status_code == 422 and "no room for a second 4g.40gb" in r.json()["detail"]["message"]
    assert client.get("/api/v1/mig/nvidia-l4").status_code == 422


def test_an_uploaded_config_json_is_the_model_of_that_file(client: TestClient) -> None:
    path = EXAMPLES / "configs" / "tiny-llama-config.json"
    expected = _cli_json(["model", "show", str(path), "--json"])
    r = client.post("/api/v1/model-from-config?name=configs", json=json.loads(path.read_text()))
    assert r.status_code == 200, r.text
    got = r.json()
    _same(expected["derived"], got["derived"])
    # the architecture it returns is a scenario's inline model: infer takes it
    scenario = {
        "model": got["model"],
        "hardware": {"accelerator": "nvidia-h100-sxm5-80gb"},
        "inference": {"input_tokens": 128, "output_tokens": 16},
    }
    assert client.post("/api/v1/infer", json=scenario).status_code == 200


def test_validation_rows_are_the_clis(client: TestClient, tmp_path: Path) -> None:
    csv = ROOT / "src" / "aiinfra" / "validation" / "data" / "training.csv"
    _same(_cli_json(["validate", str(csv), "--json", "--quiet"]), client.get("/api/v1/validate?rows=training").json())


def test_yaml_round_trip(client: TestClient) -> None:
    scenario = _scenario("train-llama3.1-70b-h100.yaml")
    text = client.post("/api/v1/yaml", json=scenario)
    assert text.status_code == 200 and text.headers["content-type"].startswith("application/yaml")
    assert yaml.safe_load(text.text) == scenario
    back = client.post("/api/v1/parse-yaml", content=text.text.encode(), headers={"content-type": "application/yaml"})
    assert back.json() == scenario


def test_examples_and_schema_come_from_the_shipped_files_and_specs(client: TestClient) -> None:
    ex = client.get("/api/v1/examples").json()
    files = {e["file"] for e in ex["examples"]}
    assert set(DEFAULT_EXAMPLES.values()) <= files
    assert "simulate-trace-priority.yaml" not in files  # names a trace file: a browser cannot send it
    for e in ex["examples"]:
        shipped = yaml.safe_load((EXAMPLES / e["file"]).read_text())
        if "trace" in shipped.get("schedule", {}):  # a shipped trace is named by its file name on the web
            shipped["schedule"]["trace"] = Path(shipped["schedule"]["trace"]).name
        assert e["scenario"] == json.loads(json.dumps(shipped))  # JSON keys are strings (the generator's gpus map)
    schema = client.get("/api/v1/schema/scenario").json()["sections"]
    assert set(schema) == {
        "hardware",
        "training",
        "inference",
        "cost",
        "datacenter",
        "tco",
        "reliability",
        "schedule",
        "pack",
    }
    # the description is the spec's attribute docstring (specs/scenario.py, HardwareInput.count)
    assert schema["hardware"]["properties"]["count"]["description"] == "Accelerators in the job or fleet."
    assert "ttft_p90_s" in schema["inference"]["$defs"]["Slo"]["properties"]


def test_pages_scripts_and_docs_are_served_with_security_headers(client: TestClient) -> None:
    for path in ("/", "/static/app.js", "/static/app.css", "/vendor/plotly.min.js", "/api/docs", "/api/openapi.json"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.headers["x-content-type-options"] == "nosniff"
        assert "script-src 'self'" in r.headers["content-security-policy"]
    page = client.get("/").text
    assert "<script>" not in page and "http://" not in page and "https://" not in page  # nothing from a CDN
    paths = client.get("/api/openapi.json").json()["paths"]
    for q in questions.QUESTIONS:
        assert f"/api/v1/{q}" in paths


BAD = [  # (question, overrides or a whole body, field named in the 422)
    ("train", {"hardware.count": -1}, "hardware.count"),
    ("train", {"hardware.count": "many"}, "hardware.count"),
    ("train", {"hardware.count": 10**9}, "hardware.count"),
    ("train", {"hardware.accelerator": "nvidia-h1000"}, "hardware.accelerator"),
    ("train", {"model": "llama-9"}, "model"),
    ("train", {"training.plan": {"tp": 3}}, "training.plan"),
    ("train", {"training.seq_len": 0}, "training.seq_len"),
    ("train", {"training.tokens": -5}, "training.tokens"),
    ("train", {"training.precision": "fp7"}, "training.precision"),
    ("train", {"training.optimizer": "lion9"}, "training.optimizer"),
    ("train", {"training.global_batch_seqs": 1.5}, "training.global_batch_seqs"),
    ("train", {"training.unknown_key": 1}, "training.unknown_key"),
    ("train", {"hardware.per_node": 0}, "hardware.per_node"),
    ("train", {"hardware.system": "dgx-h9000"}, "hardware.system"),
    ("train", {"reliability": {"restart_s": 60}}, "reliability"),
    ("memory", {"training.offload": "disk"}, "training.offload"),
    ("infer", {"inference.input_tokens": -1}, "inference.input_tokens"),
    ("infer", {"inference.weight_precision": "int3"}, "inference.weight_precision"),
    ("infer", {"inference.engine": "sglang9"}, "inference.engine"),
    ("infer", {"inference.plan": {"tp": 3}}, "inference.plan"),
    ("infer", {"inference.slo": {"ttft_p90_s": -1}}, "inference.slo.ttft_p90_s"),
    ("infer", {"inference.request_rate_per_s": "fast"}, "inference.request_rate_per_s"),
    ("infer", {"inference.think_time_s": -3}, "inference.think_time_s"),
    ("infer", {"model": {"config": "/etc/passwd"}}, "model.config"),
    ("simulate", {"inference.num_requests": questions.WEB_MAX_SIMULATED_REQUESTS + 1}, "inference.num_requests"),
    ("simulate", {"inference.arrival": {"kind": "trace", "path": "../../secret.csv"}}, "inference.arrival.path"),
    ("capacity", {"inference.users": 0}, "inference.users"),
    ("cost", {"cost.pue": 0.5}, "cost.pue"),
    ("cost", {"cost.providers": "aws"}, "cost.providers"),
    ("tco", {"tco.years": -2}, "tco.years"),
    ("tco", {"tco.electricity_usd_per_kwh": "cheap"}, "tco.electricity_usd_per_kwh"),
    ("datacenter", {"datacenter.rack_power_limit_kw": -41}, "datacenter.rack_power_limit_kw"),
    ("datacenter", {"datacenter.pue": 0}, "datacenter.pue"),
]
EXAMPLE_OF = {
    "train": "train-llama3.1-70b-h100.yaml",
    "memory": "memory-llama2-7b-adam-fp16.yaml",
    "infer": "infer-llama3.1-70b-h100.yaml",
    "simulate": "simulate-llama70b-h100.yaml",
    "capacity": "capacity-llama70b-10k-users.yaml",
    "cost": "cost-train-70b-32xh100.yaml",
    "tco": "tco-dgx-h100-vs-cloud.yaml",
    "datacenter": "datacenter-dgx-h100-pod.yaml",
}


def _no_traceback(r: Any) -> None:
    assert "Traceback" not in r.text and 'File "' not in r.text


@pytest.mark.parametrize(("question", "sets", "field"), BAD)
def test_bad_input_is_422_naming_the_field(client: TestClient, question: str, sets: dict[str, Any], field: str) -> None:
    r = client.post(f"/api/v1/{question}", json=_scenario(EXAMPLE_OF[question], sets))
    assert r.status_code == 422, r.text
    _no_traceback(r)
    detail = r.json()["detail"]
    assert detail["field"] == field or detail["field"].startswith(field + "."), detail
    assert detail["message"].startswith(detail["field"])  # the CLI's "field = value: problem — fix"


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/v1/train", b"{not json", "body"),
        ("/api/v1/train", b"[1, 2]", "scenario"),
        ("/api/v1/train", b'"a string"', "scenario"),
        ("/api/v1/train", b"[" * 100_000 + b"]" * 100_000, "body"),
        ("/api/v1/train", b"\xff\xfe", "body"),
        ("/api/v1/infer", b"{}", "model"),
        ("/api/v1/nonsense", b"{}", None),
        ("/api/v1/parse-yaml", b"a: [1, 2\n", "yaml"),
        ("/api/v1/parse-yaml", b"!!python/object:os.system {}", "yaml"),
        ("/api/v1/parse-yaml", b"a: 1\na: 2\n", "yaml"),
        ("/api/v1/parse-yaml", b"- just a list", "yaml"),
        ("/api/v1/model-from-config", b'{"hidden_size": 10}', "model.config"),
        ("/api/v1/model-from-config", b"[1]", "model.config"),
        ("/api/v1/yaml", b"[1]", "body"),
    ],
)
def test_bad_bodies_are_refused_with_the_reason(client: TestClient, path: str, body: bytes, field: str | None) -> None:
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code in (404, 405) if field is None else r.status_code == 422, r.text
    _no_traceback(r)
    if field is not None:
        assert r.json()["detail"]["field"] == field or r.json()["detail"]["field"].startswith(field), r.text


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/catalog/gpus",
        "/api/v1/catalog/row/no-such-row",
        "/api/v1/model/llama-9",
        "/api/v1/model/meta-llama-3.1-8b?seq_len=-1",
        "/api/v1/validate?rows=everything",
    ],
)
def test_bad_lookups_are_422_naming_the_value(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 422, r.text
    _no_traceback(r)
    assert r.json()["detail"]["message"]


def test_bad_options_are_422(client: TestClient) -> None:
    body = _scenario("capacity-llama70b-10k-users.yaml")
    for query, field in (
        ("seed=-1", "seed"),
        ("seed=x", "seed"),
        ("accelerators=nvidia-h1000", "accelerators"),
        ("engines=sglang9", "engines"),
    ):
        r = client.post(f"/api/v1/capacity?{query}", json=body)
        assert r.status_code == 422, (query, r.text)
        _no_traceback(r)
        assert r.json()["detail"]["field"].lstrip("-") == field


def test_a_body_over_the_limit_is_413() -> None:
    small = _client(Settings(max_body_bytes=1000))
    r = small.post("/api/v1/train", content=b"{" + b" " * 2000 + b"}", headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "1,000 bytes" in r.json()["detail"]["message"]


def test_an_answer_past_the_wall_time_limit_is_422_with_the_reason() -> None:
    slow = _client(Settings(max_wall_s=0.001))
    r = slow.post("/api/v1/simulate", json=_scenario("simulate-llama70b-h100.yaml"))
    assert r.status_code == 422
    assert "limit of 0.001 s" in r.json()["detail"]["message"]


def test_a_crash_is_a_500_and_the_server_goes_on(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(sc: Any, o: Any, progress: Any) -> Any:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(questions.QUESTIONS, "memory", broken)
    r = client.post("/api/v1/memory", json=_scenario(EXAMPLE_OF["memory"]))
    assert r.status_code == 500
    _no_traceback(r)
    assert "ZeroDivisionError" in r.json()["detail"]["message"]
    assert r.headers["x-content-type-options"] == "nosniff"
    monkeypatch.undo()
    assert client.post("/api/v1/memory", json=_scenario(EXAMPLE_OF["memory"])).status_code == 200


def _wait(client: TestClient, job_id: str, timeout_s: float = 120.0) -> dict[str, Any]:
    import time

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        s: dict[str, Any] = client.get(f"/api/v1/jobs/{job_id}").json()
        if s["state"] != "running":
            return s
        time.sleep(0.05)
    raise AssertionError("job did not end")


def test_a_job_reports_progress_and_ends_with_the_answer(client: TestClient) -> None:
    body = _scenario("simulate-llama70b-h100.yaml", {"inference.num_requests": 200})
    started = client.post("/api/v1/jobs/find-max-rate", json=body)
    assert started.status_code == 202 and started.json()["state"] == "running"
    done = _wait(client, started.json()["id"])
    assert done["state"] == "done" and done["done"] >= 2  # one progress call per simulation
    _same(client.post("/api/v1/find-max-rate", json=body).json(), done["result"])


def test_a_cancelled_job_stops_at_its_next_step(client: TestClient) -> None:
    body = _scenario("simulate-llama70b-h100.yaml", {"inference.num_requests": 3000})
    job = client.post("/api/v1/jobs/find-max-rate", json=body).json()
    assert client.delete(f"/api/v1/jobs/{job['id']}").status_code == 200
    end = _wait(client, job["id"])
    assert end["state"] == "cancelled" and "result" not in end


def test_a_job_past_the_wall_time_limit_ends_with_the_reason() -> None:
    import time

    slow = _client(Settings(max_wall_s=0.01))
    body = _scenario("simulate-llama70b-h100.yaml", {"inference.num_requests": questions.WEB_MAX_SIMULATED_REQUESTS})
    job = slow.post("/api/v1/jobs/simulate-series", json=body).json()
    time.sleep(0.02)
    end = _wait(slow, job["id"])
    assert end["state"] == "error" and "limit of 0.01 s" in end["error"]["message"]
    assert "result" not in end


def test_a_job_with_bad_input_is_refused_before_it_starts(client: TestClient) -> None:
    r = client.post(
        "/api/v1/jobs/simulate-series", json=_scenario("simulate-llama70b-h100.yaml", {"inference.num_requests": 0})
    )
    assert r.status_code == 422 and r.json()["detail"]["field"] == "inference.num_requests"
    assert client.post("/api/v1/jobs/train", json={}).status_code == 422


def test_validation_as_a_job(client: TestClient) -> None:
    job = client.post("/api/v1/jobs/validate?rows=training", json={}).json()
    done = _wait(client, job["id"])
    assert done["state"] == "done" and done["done"] == done["total"] == done["result"]["summary"]["n"]
    again = client.post("/api/v1/jobs/validate?rows=training", json={})  # a second visit: the table is kept
    assert again.status_code == 202 and again.json()["state"] == "done"
    assert again.json()["result"] == done["result"]


def test_the_web_package_is_a_shell_over_the_app_layer() -> None:
    allowed = ("aiinfra.app", "aiinfra.report", "aiinfra.specs", "aiinfra.errors", "aiinfra.web")
    for path in WEB.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("aiinfra"):
                names = [f"aiinfra.{a.name}" for a in node.names] if node.module == "aiinfra" else [node.module]
                for name in names:
                    assert name == "aiinfra.__version__" or name.startswith(allowed), (path.name, name)


def test_web_command_checks_its_port_and_warns_off_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    from aiinfra.commands.web_cmd import is_loopback

    assert main(["web", "--port", "70000"]) == 2
    assert "--port" in capsys.readouterr().err
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10")


def test_export_route_answers_as_the_cli(client: TestClient) -> None:
    """POST /api/v1/export is `aiinfra export --json` (the capacity page's "Deploy it" button)."""
    path = EXAMPLES / "infer-llama3.1-70b-h100.yaml"
    body = yaml.safe_load(path.read_text())
    for fmt in ("vllm", "kubernetes"):
        res = client.post(f"/api/v1/export?format={fmt}", json=body)
        assert res.status_code == 200, res.text
        assert res.json() == _cli_json(["export", str(path), "--format", fmt, "--json"])
    bad = client.post("/api/v1/export?format=helm", json=body)
    assert bad.status_code == 422 and "format" in bad.text


def test_capacity_with_classes_and_a_day_profile_carries_the_fleet_sections(client: TestClient) -> None:
    body = yaml.safe_load((EXAMPLES / "capacity-two-classes.yaml").read_text())
    res = client.post("/api/v1/capacity?accelerators=nvidia-h200-sxm-141gb", json=body)
    assert res.status_code == 200, res.text
    fleet = res.json()["fleet"]
    assert "mixing does not help" in fleet["verdict"] and fleet["mixed"]["pools"]


def test_capacity_disaggregate_option_answers_as_the_cli(client: TestClient) -> None:
    path = EXAMPLES / "capacity-long-prompts.yaml"
    res = client.post("/api/v1/capacity?disaggregate=true", json=yaml.safe_load(path.read_text()))
    assert res.status_code == 200, res.text
    cli = _cli_json(["capacity", str(path), "--disaggregate", "--json"])
    assert res.json()["disaggregated"] == cli["disaggregated"]
    assert cli["disaggregated"]["recommended"] == "disaggregated"
