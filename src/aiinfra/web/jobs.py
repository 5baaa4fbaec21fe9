"""Long answers as jobs: started by one request, polled for progress, cancellable.

Each job runs in its own worker process (web/lanes.py); the application layer reports ``progress(done, total)``
after each simulation or validation row, and the worker sends it to the server. Cancelling a job, or a job running
past ``max_wall_s``, kills its process, so the work really stops (a single simulation included).

At most ``workers`` jobs run at once and ``max_queued`` wait; more is a 429 (:class:`~aiinfra.web.lanes.LaneFull`).
A job's id stays valid until it has finished: only finished jobs are forgotten, the oldest first, beyond ``keep``.
"""

from __future__ import annotations

import contextvars
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from aiinfra.web.lanes import LaneFull, Lanes, Stopped, WorkError, past_wall_limit

__all__ = ["Job", "JobTable", "past_wall_limit"]

ENDED = frozenset({"done", "error", "cancelled"})


@dataclass
class Job:
    """One long-running question the web app answers in the background, as its status endpoint reports it."""

    id: str
    question: str
    created_s: float = field(default_factory=time.monotonic)
    """When it was queued (monotonic clock)."""
    started_s: float | None = None
    """When it started running (None while queued)."""
    state: str = "queued"
    """queued | running | done | error | cancelled"""
    done: int = 0
    """Progress: units done of ``total``."""
    total: int | None = None
    """Units of work in all; None when not known."""
    result: Any = None
    """The answer's JSON object once done."""
    error: dict[str, Any] | None = None
    """The error detail (as the HTTP API gives it) when the job failed."""
    cancel_requested: bool = False
    ended_s: float | None = None

    def view(self) -> dict[str, Any]:
        """The job as ``GET /api/v1/jobs/{id}`` returns it: id, question, state, progress and elapsed seconds, the
        result when done, the error when it failed."""
        start = self.started_s if self.started_s is not None else self.created_s
        end = self.ended_s if self.ended_s is not None else time.monotonic()
        out: dict[str, Any] = {
            "id": self.id,
            "question": self.question,
            "state": self.state,
            "done": self.done,
            "total": self.total,
            "elapsed_s": round(max(0.0, end - start), 3),
        }
        if self.state == "done":
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        return out


class JobTable:
    """The server's jobs."""

    def __init__(
        self,
        lanes: Lanes,
        error_detail: Callable[[BaseException], tuple[int, dict[str, Any]]],
        *,
        workers: int = 2,
        max_queued: int = 8,
        keep: int = 64,
    ) -> None:
        self._lanes = lanes
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="aiinfra-job")
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._workers, self._max_queued, self._keep = workers, max_queued, keep
        self._error_detail = error_detail
        self.max_wall_s = lanes.max_wall_s

    def _unfinished(self) -> int:
        return sum(j.state not in ENDED for j in self._jobs.values())

    def start(self, question: str, op: str, args: tuple[Any, ...], on_done: Callable[[Any], None] | None = None) -> Job:
        """A new job running ``op`` (lanes' work names) on ``args``; :class:`LaneFull` when every slot and the
        queue are taken."""
        with self._lock:
            if self._unfinished() >= self._workers + self._max_queued:
                raise LaneFull("job", self._workers)
            job = Job(id="j" + secrets.token_hex(8), question=question)
            self._jobs[job.id] = job
            self._forget_finished()
        # the job runs in the caller's context: the catalog its worker answers against (`--catalog-overlay`)
        self._pool.submit(contextvars.copy_context().run, self._run, job, op, args, on_done)
        return job

    def finished(self, question: str, result: Any, steps: int | None = None) -> Job:
        """A job that is done already (an answer the server keeps, such as the validation table), with its
        ``steps`` done out of as many."""
        now = time.monotonic()
        job = Job(
            id="j" + secrets.token_hex(8),
            question=question,
            started_s=now,
            state="done",
            result=result,
            ended_s=now,
            done=steps or 0,
            total=steps,
        )
        with self._lock:
            self._jobs[job.id] = job
            self._forget_finished()
        return job

    def _forget_finished(self) -> None:
        ended = [k for k, j in self._jobs.items() if j.state in ENDED]
        for k in ended[: max(0, len(ended) - self._keep)]:
            del self._jobs[k]

    def _progress(self, job: Job) -> Callable[[int, int | None], None]:
        def progress(done: int, total: int | None) -> None:
            job.done, job.total = done, total

        return progress

    def _end(self, job: Job, state: str, error: dict[str, Any] | None = None, result: Any = None) -> None:
        with self._lock:
            if job.state in ENDED:
                return
            job.state, job.error, job.result, job.ended_s = state, error, result, time.monotonic()
            self._forget_finished()

    def _run(self, job: Job, op: str, args: tuple[Any, ...], on_done: Callable[[Any], None] | None) -> None:
        if job.cancel_requested:
            self._end(job, "cancelled")
            return
        job.started_s = time.monotonic()
        job.state = "running"
        try:
            result = self._lanes.run_blocking(
                op, args, self._progress(job), lambda: job.cancel_requested, job.started_s + self.max_wall_s
            )
        except Stopped:
            self._end(job, "cancelled")
        except WorkError as exc:
            self._end(job, "error", exc.detail)
        except Exception as exc:  # the wall-time limit, or the server's own failure: this job's answer only
            self._end(job, "error", self._error_detail(exc)[1])
        else:
            self._end(job, "done", result=result)
            if on_done is not None:
                on_done(result)

    def get(self, job_id: str) -> Job | None:
        """The job ``job_id``; None when there is none (never started, or forgotten after it ended)."""
        with self._lock:
            return self._jobs.get(job_id)

    def cancel(self, job_id: str) -> Job | None:
        """Cancel a job: a queued one never starts, a running one's process is killed."""
        job = self.get(job_id)
        if job is not None and job.state not in ENDED:
            job.cancel_requested = True
            if job.state == "queued":
                self._end(job, "cancelled")
        return job

    def shutdown(self) -> None:
        """Ask every job to stop and shut the pool down without waiting; queued jobs never start."""
        for job in list(self._jobs.values()):
            job.cancel_requested = True
        self._pool.shutdown(wait=False, cancel_futures=True)
