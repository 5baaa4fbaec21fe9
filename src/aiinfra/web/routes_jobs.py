"""The job routes: start a long answer (simulate-series, find-max-rate, capacity, validate) as a job, poll its
progress and answer, cancel it (web/jobs.py runs each in its own worker process)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from aiinfra.errors import SpecError
from aiinfra.web import questions
from aiinfra.web.guard import parse_json
from aiinfra.web.http_errors import NotFound
from aiinfra.web.inputs import SCENARIO_BODY, options, validation_paths
from aiinfra.web.jobs import Job, JobTable
from aiinfra.web.state import JobsDep, LanesDep, ValidatedDep

router = APIRouter()


@router.post("/api/v1/jobs/{question}", openapi_extra=SCENARIO_BODY, tags=["jobs"])
async def start_job(
    question: str,
    request: Request,
    lanes: LanesDep,
    jobs: JobsDep,
    validated: ValidatedDep,
    seed: int = Query(0, ge=0, le=2**32 - 1),
    accelerators: str | None = Query(None, max_length=2000),
    engines: str | None = Query(None, max_length=200),
    simulate: bool = Query(False),
    disaggregate: bool = Query(False),
    rows: str = Query("training"),
) -> Any:
    """Start a long answer (simulate-series, find-max-rate, capacity, validate) as a job: poll
    GET /api/v1/jobs/{id} for progress and the answer, DELETE it to cancel."""
    raw = await request.body()
    body: Any = parse_json(raw) if raw.strip() or question != "validate" else None
    opts = options(seed, accelerators, engines, simulate, disaggregate)
    if question == "validate":
        paths = tuple(str(p) for p in validation_paths(rows))
        if rows in validated:
            job = jobs.finished(question, validated[rows], validated[rows]["summary"]["n"])
        else:
            job = jobs.start(question, "validate", (paths,), lambda result: validated.setdefault(rows, result))
    elif question == "simulate-series":
        await lanes.light(lambda: questions.check_simulation(body))  # bad input is a 422 now, not a failed job
        job = jobs.start(question, "series", (body, seed))
    elif question in questions.LONG_RUNNING:
        await lanes.light(
            lambda: questions.check_simulation(body) if question != "capacity" or simulate else questions.load(body)
        )
        job = jobs.start(question, "answer", (question, body, opts))
    else:
        raise SpecError(
            "question",
            question,
            "is not run as a job",
            "use simulate-series, find-max-rate, capacity or validate, or POST /api/v1/<question>",
        )
    return JSONResponse(job.view(), status_code=202)


def _job(jobs: JobTable, job_id: str) -> Job:
    job = jobs.get(job_id)
    if job is None:
        raise NotFound(
            "job",
            job_id[:40],
            f"job = {job_id[:40]!r}: no such job (a job is kept until it has "
            "finished, then for a while) — start it again",
        )
    return job


@router.get("/api/v1/jobs/{job_id}", tags=["jobs"])
async def job_status(job_id: str, jobs: JobsDep) -> Any:
    """A job's state (running, done, error, cancelled), progress, and its answer once done."""
    return _job(jobs, job_id).view()


@router.delete("/api/v1/jobs/{job_id}", tags=["jobs"])
async def cancel_job(job_id: str, jobs: JobsDep) -> Any:
    """Cancel a job: a queued job never starts, a running job's worker process is stopped."""
    _job(jobs, job_id)
    job = jobs.cancel(job_id)
    assert job is not None
    return job.view()
