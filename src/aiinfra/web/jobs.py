"""Long answers as jobs: started by one request, polled for progress, cancellable.

A simulation-backed answer (``simulate``, ``find-max-rate``, ``capacity`` with ``simulate``, ``validate``) runs in a
worker thread; the application layer calls ``progress(done, total)`` after each simulation or validation row, and
that call raises :class:`Cancelled` once the job is cancelled, so the work stops at the next step instead of
running on. A single simulation has no step to stop at: cancelling it discards its answer when it ends.
"""

from __future__ import annotations

import contextvars
import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from aiinfra.errors import SpecError

Work = Callable[[Callable[[int, int | None], None]], Any]


def past_wall_limit(field: str, value: str, limit_s: float) -> SpecError:
    """The error of an answer that ran past the web app's wall-time limit (a request or a job)."""
    return SpecError(field, value, f"ran past the web app's limit of {limit_s:g} s",
                     "ask a smaller question (fewer requests or candidates), or use the CLI")


class Cancelled(Exception):
    """Raised inside a job's progress callback once the job is cancelled."""


@dataclass
class Job:
    id: str
    question: str
    started_s: float = field(default_factory=time.monotonic)
    state: str = "running"
    """running | done | error | cancelled"""
    done: int = 0
    total: int | None = None
    result: Any = None
    error: dict[str, Any] | None = None
    cancel_requested: bool = False
    ended_s: float | None = None

    def view(self) -> dict[str, Any]:
        end = self.ended_s if self.ended_s is not None else time.monotonic()
        out: dict[str, Any] = {"id": self.id, "question": self.question, "state": self.state, "done": self.done,
                               "total": self.total, "elapsed_s": round(end - self.started_s, 3)}  # fmt: skip
        if self.state == "done":
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        return out


class JobTable:
    """The server's jobs: at most ``workers`` run at once, the newest ``keep`` are remembered."""

    def __init__(self, error_detail: Callable[[BaseException], tuple[int, dict[str, Any]]], workers: int = 2,
                 keep: int = 32, max_wall_s: float = 120.0) -> None:  # fmt: skip
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="aiinfra-job")
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._keep = keep
        self._error_detail = error_detail
        self.max_wall_s = max_wall_s

    def start(self, question: str, work: Work) -> Job:
        with self._lock:
            job = Job(id=f"j{next(self._ids)}", question=question)
            self._jobs[job.id] = job
            while len(self._jobs) > self._keep:
                self._jobs.popitem(last=False)
        # the job runs in the caller's context: the catalog it answers against (`aiinfra web --catalog-overlay`)
        self._pool.submit(contextvars.copy_context().run, self._run, job, work)
        return job

    def _progress(self, job: Job) -> Callable[[int, int | None], None]:
        def progress(done: int, total: int | None) -> None:
            job.done, job.total = done, total
            if job.cancel_requested:
                raise Cancelled
            if time.monotonic() - job.started_s > self.max_wall_s:
                raise past_wall_limit("job", job.question, self.max_wall_s)

        return progress

    def _run(self, job: Job, work: Work) -> None:
        try:
            result = work(self._progress(job))
            if job.state != "running":
                return  # ran past the limit (get() ended it) or was cancelled: the answer is discarded
            job.result, job.state = result, ("cancelled" if job.cancel_requested else "done")
        except Cancelled:
            job.state = "cancelled"
        except Exception as exc:  # bad input, or one job's crash: its own answer, never the server's
            if job.state == "running":
                job.state, job.error = "error", self._error_detail(exc)[1]
        finally:
            if job.ended_s is None:
                job.ended_s = time.monotonic()

    def get(self, job_id: str) -> Job | None:
        """The job; one still running past ``max_wall_s`` (a single simulation has no step to stop at) is ended
        here with the reason, and its answer discarded when its thread finishes."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is not None and job.state == "running" and time.monotonic() - job.started_s > self.max_wall_s:
            job.cancel_requested = True
            error = self._error_detail(past_wall_limit("job", job.question, self.max_wall_s))[1]
            job.state, job.error, job.ended_s = "error", error, time.monotonic()
        return job

    def cancel(self, job_id: str) -> Job | None:
        job = self.get(job_id)
        if job is not None and job.state == "running":
            job.cancel_requested = True
        return job

    def shutdown(self) -> None:
        for job in list(self._jobs.values()):
            job.cancel_requested = True
        self._pool.shutdown(wait=False, cancel_futures=True)
