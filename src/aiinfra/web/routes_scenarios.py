"""The scenario routes: the shipped examples the pages start from, the scenario's JSON Schema (the forms), and a
scenario to and from YAML."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from aiinfra.errors import AiinfraError, SpecError
from aiinfra.web import questions
from aiinfra.web.guard import check_json_value
from aiinfra.web.inputs import SCENARIO_BODY, json_body
from aiinfra.web.schema import scenario_form_schema

#: the shipped examples (a source checkout; an installed wheel has none and the pages start from the reference)
EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "examples"

#: the page each shipped example opens first on (the seed questions' scenarios)
DEFAULT_EXAMPLES = {
    "train": "train-llama3.1-70b-h100.yaml",
    "memory": "memory-llama2-7b-adam-fp16.yaml",
    "infer": "infer-llama3.1-70b-h100.yaml",
    "capacity": "capacity-llama70b-10k-users.yaml",
    "simulate": "simulate-llama70b-h100.yaml",
    "cost": "cost-train-70b-32xh100.yaml",
    "tco": "tco-dgx-h100-vs-cloud.yaml",
    "datacenter": "datacenter-dgx-h100-pod.yaml",
    "schedule": "schedule-synthetic.yaml",
    "pack": "pack-portfolio.yaml",
}

router = APIRouter()


def _title(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[:1]
    return first[0].lstrip("# ").strip() if first and first[0].startswith("#") else path.stem


def _pages_of(name: str, data: dict[str, Any]) -> list[str]:
    pages: list[str] = []
    if "training" in data:
        pages += ["train", "memory", "cost"]
    if "inference" in data:
        pages += ["infer", "capacity", "simulate", "cost"]
    if "tco" in data or name.startswith("tco-"):
        pages.append("tco")
    if "datacenter" in data or name.startswith("datacenter-"):
        pages.append("datacenter")
    return list(dict.fromkeys(pages))


@cache
def shipped_examples() -> list[dict[str, Any]]:
    """The examples the pages start from: each with its title, pages and scenario; files a browser could not send
    (a config.json path, a trace file) are left out."""
    from aiinfra.specs.yaml_safe import load_yaml

    out: list[dict[str, Any]] = []
    traces = questions.shipped_traces()
    for path in sorted(EXAMPLES_DIR.glob("*.yaml")) if EXAMPLES_DIR.is_dir() else []:
        data = load_yaml(path.read_text(encoding="utf-8"), "example", path.name)
        if isinstance(data, dict) and isinstance(data.get("pack"), dict):
            out.append({"file": path.name, "title": _title(path), "pages": ["pack"], "scenario": data})
            continue
        if isinstance(data, dict) and isinstance(data.get("schedule"), dict):
            trace = data["schedule"].get("trace")
            if trace is None or Path(str(trace)).name in traces:  # a shipped trace, named as the web app takes it
                if trace is not None:
                    data["schedule"]["trace"] = Path(str(trace)).name
                out.append({"file": path.name, "title": _title(path), "pages": ["schedule"], "scenario": data})
            continue
        if not isinstance(data, dict) or "model" not in data or "hardware" not in data:
            continue
        try:
            questions.load(data)
        except AiinfraError:
            continue
        pages = _pages_of(path.name, data)
        if pages:
            out.append({"file": path.name, "title": _title(path), "pages": pages, "scenario": data})
    order = {f: i for i, f in enumerate(DEFAULT_EXAMPLES.values())}
    return sorted(out, key=lambda e: (order.get(e["file"], len(order)), e["file"]))


@router.get("/api/v1/examples", tags=["scenarios"])
async def examples() -> Any:
    """The shipped example scenarios, each with the pages it answers."""
    return {"examples": shipped_examples(), "defaults": DEFAULT_EXAMPLES}


@router.get("/api/v1/schema/scenario", tags=["scenarios"])
async def scenario_schema() -> Any:
    """JSON Schema of each scenario section, from the specs, with their field descriptions."""
    return scenario_form_schema()


@router.post("/api/v1/yaml", openapi_extra=SCENARIO_BODY, tags=["scenarios"])
async def to_yaml(request: Request) -> PlainTextResponse:
    """A scenario as a YAML file."""
    body = await json_body(request)
    if not isinstance(body, dict):
        raise SpecError("body", type(body).__name__, "must be a JSON object", "send a scenario")
    text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
    return PlainTextResponse(
        text, media_type="application/yaml", headers={"content-disposition": 'attachment; filename="scenario.yaml"'}
    )


@router.post(
    "/api/v1/parse-yaml",
    tags=["scenarios"],
    openapi_extra={"requestBody": {"content": {"application/yaml": {"schema": {"type": "string"}}}}},
)
async def parse_yaml(request: Request) -> Any:
    """A scenario YAML file's text -> its JSON object (the CLI's safe loader: no tags, no duplicate keys)."""
    from aiinfra.specs.yaml_safe import load_yaml

    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError("yaml", "…", "is not UTF-8 text", "upload a scenario YAML file") from exc
    data = load_yaml(text, "yaml", "uploaded file")
    if not isinstance(data, dict):
        raise SpecError("yaml", type(data).__name__, "is not a mapping", "upload a scenario YAML file")
    check_json_value(data, "yaml")
    return data
