"""The per-app state and how the routes reach it: :class:`Settings` (the server's limits), and on ``app.state`` this
app's lanes (web/lanes.py), job store (web/jobs.py) and validation tables, each route taking what it needs through a
dependency (:data:`LanesDep`, :data:`JobsDep`, :data:`ValidatedDep`) instead of a closure. The lanes and jobs are shut
down when the server stops (:func:`lifespan`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request

from aiinfra.web import questions
from aiinfra.web.guard import LOCAL_HOSTS
from aiinfra.web.http_errors import error_detail
from aiinfra.web.jobs import JobTable
from aiinfra.web.lanes import Lanes


@dataclass(frozen=True)
class Settings:
    """The web server's limits: the hosts it answers, body size and time, the longest answer, and the threads, worker
    processes and queues of each lane."""

    allowed_hosts: tuple[str, ...] = LOCAL_HOSTS
    """Host names the server answers to (``aiinfra web`` adds the bound address and ``--allow-host``)."""
    max_body_bytes: int = 1_000_000
    """A scenario is a few kB; a config.json upload tens of kB."""
    body_timeout_s: float = 10.0
    """Longest a client may take to send its body (1 MB at 1 Mbit/s)."""
    max_wall_s: float = 120.0
    """Longest answer the server computes for one request or job."""
    light_workers: int = 4
    """Threads answering cheap questions (lookups, memory, infer, tco, datacenter, YAML)."""
    light_queue: int = 32
    """Cheap answers waiting for a thread at most (beyond: 429, retry later)."""
    heavy_workers: int = 2
    """Worker processes answering heavy questions at once (the CI machine has 2 cores)."""
    heavy_queue: int = 4
    """Heavy answers waiting for a worker at most (beyond: 429, retry later)."""
    job_workers: int = 2
    """Jobs running at once, each in its own worker process."""
    max_queued_jobs: int = 8
    """Jobs waiting to start at most (beyond: 429)."""
    worker_memory_bytes: int = 3 * 2**30
    """Address space of one worker process: the largest bounded answers peak at about 100 MB resident (bench/README.md,
    web hostile-request section); 3 GiB leaves room for the interpreter's and numerical libraries' reservations."""


def install_state(api: FastAPI, settings: Settings) -> None:
    """Put on ``api.state`` the settings, this app's lanes and job store built from them, and an empty store of
    validation tables (computed once per process, by row set)."""
    lanes = Lanes(
        light_workers=settings.light_workers,
        light_queue=settings.light_queue,
        heavy_workers=settings.heavy_workers,
        heavy_queue=settings.heavy_queue,
        max_wall_s=settings.max_wall_s,
        worker_memory_bytes=settings.worker_memory_bytes,
    )
    api.state.settings = settings
    api.state.lanes = lanes
    api.state.jobs = JobTable(lanes, error_detail, workers=settings.job_workers, max_queued=settings.max_queued_jobs)
    api.state.validated = {}


@contextlib.asynccontextmanager
async def lifespan(api: FastAPI) -> AsyncIterator[None]:
    """The server's life: at its end, running jobs' processes are killed instead of holding the machine after
    Ctrl-C, and the lanes' workers stop."""
    yield
    api.state.jobs.shutdown()
    api.state.lanes.shutdown()


async def app_lanes(request: Request) -> Lanes:
    """The lanes of the app serving ``request``."""
    lanes: Lanes = request.app.state.lanes
    return lanes


async def app_jobs(request: Request) -> JobTable:
    """The job store of the app serving ``request``."""
    jobs: JobTable = request.app.state.jobs
    return jobs


async def app_validated(request: Request) -> dict[str, Any]:
    """The validation tables the app serving ``request`` has computed, by row set (training, inference)."""
    validated: dict[str, Any] = request.app.state.validated
    return validated


LanesDep = Annotated[Lanes, Depends(app_lanes)]
JobsDep = Annotated[JobTable, Depends(app_jobs)]
ValidatedDep = Annotated[dict[str, Any], Depends(app_validated)]


async def heavy(lanes: Lanes, request: Request, op: str, *args: Any) -> Any:
    """Validated on the light lane (bad input is a 422 even while every worker is busy), then answered by a
    worker process."""
    if op != "validate":
        await lanes.light(lambda: questions.precheck(op, args))
    return await lanes.heavy(op, args, request.is_disconnected)
