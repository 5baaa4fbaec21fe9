"""Where a sweep's chunks of points run: in this process, a local process pool, or Ray tasks on a cluster.

Every backend maps one function over a lazy iterator of tasks and yields ``(task, outcome)`` as they finish —
the outcome is the function's return value, or the exception that lost the task (a worker that died). At most
``2 × workers`` tasks are in flight, so memory does not grow with the number of points.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from aiinfra.errors import SpecError

BACKENDS = ("auto", "serial", "process", "ray")
Outcome = tuple[Any, Any]
"""(task, the function's return value or the exception that lost the task)"""


def default_workers() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def serial(fn: Callable[[Any], Any], tasks: Iterator[Any]) -> Iterator[Outcome]:
    """Each task in this process, in order (exceptions propagate: nothing else could have lost the task)."""
    for task in tasks:
        yield task, fn(task)


def _exit_with_parent(parent_pid: int) -> None:
    """Pool initializer: a worker whose parent was killed (``kill -9`` leaves no one to stop it) exits too."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="aiinfra-sweep-parent-watch").start()


def process_pool(fn: Callable[[Any], Any], tasks: Iterator[Any], workers: int) -> Iterator[Outcome]:
    """A local pool of ``workers`` spawned processes (a fresh interpreter each: no state inherited by fork)."""
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_exit_with_parent,
        initargs=(os.getpid(),),
    )
    pending: dict[Future[Any], Any] = {}
    broken = finished = False
    try:
        while True:
            while not broken and len(pending) < 2 * workers:
                task = next(tasks, None)
                if task is None:
                    break
                pending[pool.submit(fn, task)] = task
            if not pending:
                finished = True
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                task = pending.pop(future)
                exc = future.exception()
                broken = broken or isinstance(exc, BrokenProcessPool)
                yield task, exc if exc is not None else future.result()
    finally:  # interrupted: leave running tasks behind rather than wait for them
        pool.shutdown(wait=finished, cancel_futures=True)


def ray_tasks(
    fn: Callable[[Any], Any],
    tasks: Iterator[Any],
    address: str | None,
    workers: int | None,
    slots: list[int] | None = None,
) -> Iterator[Outcome]:
    """Ray tasks: on the running Ray instance if this process started one (``ray.init`` before), else on the
    cluster at ``address`` (``auto``: the local node's cluster), else on a new local instance stopped at the end.
    A task whose worker dies is retried by Ray (``max_retries``); one that still fails is yielded as lost. The
    number of tasks run at once (``workers``, else the cluster's CPUs) is appended to ``slots``."""
    try:
        import ray
    except ImportError:
        raise SpecError("--backend", "ray", "Ray is not installed", "pip install 'aiinfra[ray]'") from None
    started = not ray.is_initialized()
    if started:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(max_retries=3)(fn)
        width = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
        if slots is not None:
            slots.append(width)
        pending: dict[Any, Any] = {}
        while True:
            while len(pending) < 2 * width:
                task = next(tasks, None)
                if task is None:
                    break
                pending[remote.remote(task)] = task
            if not pending:
                return
            ready, _ = ray.wait(list(pending), num_returns=1)
            task = pending.pop(ready[0])
            try:
                outcome = ray.get(ready[0])
            except ray.exceptions.RayError as exc:
                outcome = exc
            yield task, outcome
    finally:
        if started:
            ray.shutdown()
