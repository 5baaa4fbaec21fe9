"""The question routes: ``POST /api/v1/<question>`` for every question of the web table (web/questions.py), answered
as ``aiinfra <question> --json``, cheap ones on the light lane and the others in a worker process; and the questions
with a body of their own (schedule, pack) or extra query parameters (export, simulate-series)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Query, Request

from aiinfra.web import questions
from aiinfra.web.inputs import SCENARIO_BODY, json_body, options
from aiinfra.web.state import LanesDep, heavy

#: questions answered on the light lane (threads): analytic, every size that drives their work bounded by the specs;
#: the others (layout searches, simulations, Monte-Carlo trials) run in killable worker processes
LIGHT_QUESTIONS = frozenset({"check", "memory", "infer", "datacenter", "tco"})

router = APIRouter()


def _answer_route(question: str) -> Callable[..., Awaitable[Any]]:
    async def route(
        request: Request,
        lanes: LanesDep,
        seed: int = Query(0, ge=0, le=2**32 - 1),
        accelerators: str | None = Query(None, max_length=2000, description="capacity: comma-separated catalog ids"),
        engines: str | None = Query(None, max_length=200, description="capacity: vllm,trtllm,sglang"),
        simulate: bool = Query(False, description="capacity: check by simulating one replica"),
        disaggregate: bool = Query(False, description="capacity: also size prefill/decode pools"),
    ) -> Any:
        body = await json_body(request)
        opts = options(seed, accelerators, engines, simulate, disaggregate)
        if question in LIGHT_QUESTIONS:
            return await lanes.light(lambda: questions.answer(question, body, opts))
        return await heavy(lanes, request, "answer", question, body, opts)

    route.__name__ = f"answer_{question.replace('-', '_')}"
    route.__doc__ = (
        f"`aiinfra {question.replace('find-max-rate', 'simulate --find-max-rate')} --json` of the scenario in the body."
    )
    return route


for _question in questions.QUESTIONS:
    router.post(f"/api/v1/{_question}", openapi_extra=SCENARIO_BODY, tags=["questions"])(_answer_route(_question))


def _document_body(description: str) -> dict[str, Any]:
    """The OpenAPI request body of a route that takes a whole file's content (not a scenario)."""
    schema = {"type": "object", "description": description}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


@router.post(
    "/api/v1/schedule",
    tags=["questions"],
    openapi_extra=_document_body(
        "a schedule file's content: {schedule: {cluster, policy, generator | trace, ...}}, optionally with "
        "trace_csv: a trace CSV's text, used as the trace"
    ),
)
async def schedule(request: Request, lanes: LanesDep) -> Any:
    """`aiinfra schedule --json`; the trace names one the package ships (GET /api/v1/examples lists them) or
    comes as the body's `trace_csv` text."""
    body = await json_body(request)
    return await heavy(lanes, request, "schedule", body)


@router.post(
    "/api/v1/pack",
    tags=["questions"],
    openapi_extra=_document_body("a portfolio file's content: {pack: {accelerators, workloads, objective, ...}}"),
)
async def pack(request: Request, lanes: LanesDep) -> Any:
    """`aiinfra pack --json`: the fewest (or cheapest) GPUs with a MIG layout each for a portfolio."""
    body = await json_body(request)
    return await heavy(lanes, request, "pack", body)


@router.post("/api/v1/export", openapi_extra=SCENARIO_BODY, tags=["questions"])
async def export(
    request: Request,
    lanes: LanesDep,
    format: str = Query(..., max_length=20),
    engine: str | None = Query(None, max_length=20),
    engine_version: str | None = Query(None, max_length=40),
) -> Any:
    """`aiinfra export --json`: the launch command (vllm, sglang, trtllm) or the Kubernetes manifest of the
    planned deployment (the scenario's inference.plan, else capacity's cheapest)."""
    body = await json_body(request)
    return await heavy(lanes, request, "export", body, format, engine, engine_version)


@router.post("/api/v1/simulate-series", openapi_extra=SCENARIO_BODY, tags=["questions"])
async def simulate_series(request: Request, lanes: LanesDep, seed: int = Query(0, ge=0, le=2**32 - 1)) -> Any:
    """`simulate`'s answer plus the queue/running/KV timelines and per-request latencies the page charts."""
    body = await json_body(request)
    return await heavy(lanes, request, "series", body, seed)
