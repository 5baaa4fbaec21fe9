"""Where a request's work runs: two lanes, each with a fixed number of slots, so one heavy question cannot starve a
cheap one and no amount of requests grows the server without bound.

- The **light lane** (lookups, ``memory``, ``infer``, ``tco``, ``datacenter``, YAML): worker threads; every size
  that drives their work is bounded when the scenario is validated (specs/bounds.py).
- The **heavy lane** (layout searches, simulations, schedules, packing, validation, jobs): each answer runs in its
  own worker process, started from a fork server that has imported the package once. A deadline (``max_wall_s``),
  a cancelled job or a client that went away kills the process: the work stops, its memory is returned. Each
  process runs under an address-space limit (``worker_memory_bytes``), so one answer cannot take the machine.

When a lane's slots and its short queue are full, the request is refused at once with 429 (:class:`LaneFull`)
instead of waiting behind the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import multiprocessing
import os
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

from aiinfra.errors import SpecError

Progress = Callable[[int, int | None], None]


def past_wall_limit(field: str, value: str, limit_s: float) -> SpecError:
    """The error of an answer that ran past the web app's wall-time limit (a request or a job)."""
    return SpecError(
        field,
        value,
        f"ran past the web app's limit of {limit_s:g} s",
        "ask a smaller question (fewer requests or candidates), or use the CLI",
    )


class LaneFull(Exception):
    """Every slot of a lane and its queue are taken: HTTP 429."""

    def __init__(self, lane: str, slots: int) -> None:
        super().__init__(f"the server is busy: all {slots} {lane} slots are taken — retry in a few seconds")
        self.lane = lane


class WorkError(Exception):
    """A worker process's answer was an error: its HTTP status and JSON detail (made in the worker)."""

    def __init__(self, status: int, detail: dict[str, Any]) -> None:
        super().__init__(detail.get("message", ""))
        self.status, self.detail = status, detail


class Stopped(Exception):
    """The work was stopped (a cancelled job, a client that went away) before it answered."""


class Slots:
    """``slots`` running at once and at most ``queue`` waiting; thread-safe (the test client runs one event loop per
    request, so no asyncio primitive is shared)."""

    def __init__(self, name: str, slots: int, queue: int) -> None:
        self.name, self.slots, self.queue = name, slots, queue
        self._lock = threading.Lock()
        self.running = 0
        self.waiting = 0

    def try_take(self) -> bool:
        """Take a slot if one is free now (True), else leave everything as it is (False)."""
        with self._lock:
            if self.running < self.slots:
                self.running += 1
                return True
            return False

    async def take(self, deadline: float, limit_s: float) -> None:
        """A slot, waiting in the queue until ``deadline``; :class:`LaneFull` when the queue is full too."""
        if self.try_take():
            return
        with self._lock:
            if self.waiting >= self.queue:
                raise LaneFull(self.name, self.slots)
            self.waiting += 1
        try:
            while not self.try_take():
                if time.monotonic() > deadline:
                    raise past_wall_limit("request", "waiting for a slot", limit_s)
                await asyncio.sleep(0.02)
        finally:
            with self._lock:
                self.waiting -= 1

    def release(self) -> None:
        """Give a slot back."""
        with self._lock:
            self.running -= 1


# ---------- the worker process


def _preloaded() -> list[str]:
    return ["aiinfra.web.questions", "aiinfra.app.validation", "aiinfra.web.lanes", "aiinfra.web.warm"]


_CONTEXT: Any = None
_CONTEXT_LOCK = threading.Lock()


def context() -> Any:
    """The multiprocessing context of the workers: a fork server (started once, with the package imported) where
    the platform has one, else spawn."""
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            if "forkserver" in multiprocessing.get_all_start_methods():
                forkserver = multiprocessing.get_context("forkserver")
                forkserver.set_forkserver_preload(_preloaded())
                _CONTEXT = forkserver
            else:
                _CONTEXT = multiprocessing.get_context("spawn")
        return _CONTEXT


def start_fork_server() -> None:
    """Start the fork server (it imports and warms the package: seconds) before the first heavy request needs it."""
    ctx = context()
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        with contextlib.suppress(Exception):
            forkserver.ensure_running()


def _work(op: str, args: tuple[Any, ...], progress: Progress) -> Any:
    from aiinfra import app
    from aiinfra.web import questions

    if op == "answer":
        question, body, options = args
        return questions.answer(question, body, options, progress)
    if op == "series":
        return questions.simulation_series(*args)
    if op == "schedule":
        return questions.schedule(*args)
    if op == "pack":
        return questions.pack(*args)
    if op == "export":
        return questions.export(*args)
    if op == "validate":
        return app.validate(list(args[0]), progress).to_dict()
    raise SpecError("op", op, "unknown work", "a bug in the web app")


def _worker_main(
    conn: Connection, op: str, args: tuple[Any, ...], memory_bytes: int, overlays: tuple[str, ...] = ()
) -> None:
    """Entry of a worker process: the answer or the error (status and detail), sent back over ``conn``; answered
    against the shipped catalog with the caller's ``overlays`` laid over it (``aiinfra web --catalog-overlay``)."""
    import resource

    from aiinfra import app
    from aiinfra.web.http_errors import error_detail

    if memory_bytes > 0:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    def progress(done: int, total: int | None) -> None:
        conn.send(("progress", done, total))

    try:
        with app.catalog_with_overlays(overlays):
            answer = _work(op, args, progress)
        conn.send(("done", answer))
    except MemoryError:
        conn.send(
            (
                "error",
                422,
                {
                    "field": None,
                    "message": f"the answer needs more than the web app's "
                    f"{memory_bytes / 2**30:g} GiB per answer — ask a smaller question, or use the CLI",
                },
            )
        )
    except BaseException as exc:  # every error is an answer: the status and detail the server would give
        status, detail = error_detail(exc)
        conn.send(("error", status, detail))
    finally:
        conn.close()


class Worker:
    """One answer in its own process: started, polled for messages, killed."""

    def __init__(self, op: str, args: tuple[Any, ...], memory_bytes: int) -> None:
        from aiinfra import app

        ctx = context()
        self._conn, child = ctx.Pipe(duplex=False)
        overlays = app.catalog_overlay_dirs()  # the caller's catalog (a request's or a job's context)
        self._proc = ctx.Process(
            target=_worker_main, args=(child, op, args, memory_bytes, overlays), daemon=True, name=f"aiinfra-{op}"
        )
        self._proc.start()
        child.close()
        self.pid = self._proc.pid

    def poll(self, progress: Progress | None) -> tuple[bool, Any]:
        """(finished, answer) after reading what the worker sent; raises :class:`WorkError` for its error."""
        while self._conn.poll():
            try:
                msg = self._conn.recv()
            except (EOFError, OSError):
                break
            if msg[0] == "progress":
                if progress is not None:
                    progress(msg[1], msg[2])
            elif msg[0] == "done":
                return True, msg[1]
            else:
                raise WorkError(msg[1], msg[2])
        if not self._proc.is_alive() and not self._conn.poll():
            code = self._proc.exitcode
            raise WorkError(
                500,
                {
                    "field": None,
                    "message": f"internal error: the worker process ended without an "
                    f"answer (exit code {code}; the server keeps running)",
                },
            )
        return False, None

    def kill(self) -> None:
        """Kill the worker process and close it."""
        with contextlib.suppress(Exception):
            self._proc.kill()
        self.close()

    def close(self) -> None:
        """Close the pipe to the worker and wait up to 5 s for the process to end."""
        with contextlib.suppress(Exception):
            self._conn.close()
        with contextlib.suppress(Exception):
            self._proc.join(timeout=5)


class Lanes:
    """The server's lanes and their limits."""

    def __init__(
        self,
        *,
        light_workers: int,
        light_queue: int,
        heavy_workers: int,
        heavy_queue: int,
        max_wall_s: float,
        worker_memory_bytes: int,
    ) -> None:
        self.light_slots = Slots("light", light_workers, light_queue)
        self.heavy_slots = Slots("heavy", heavy_workers, heavy_queue)
        self._light_pool = ThreadPoolExecutor(max_workers=light_workers, thread_name_prefix="aiinfra-light")
        self.max_wall_s = max_wall_s
        self.worker_memory_bytes = worker_memory_bytes
        threading.Thread(target=start_fork_server, daemon=True, name="aiinfra-forkserver").start()

    async def light(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` on a light worker thread, bounded by the wall-time limit. The slot is held until the thread
        really ends, so a thread past its limit still counts against the lane."""
        deadline = time.monotonic() + self.max_wall_s
        await self.light_slots.take(deadline, self.max_wall_s)
        try:
            # in the caller's context: the catalog of the request (`aiinfra web --catalog-overlay`)
            future = self._light_pool.submit(contextvars.copy_context().run, fn)
        except BaseException:
            self.light_slots.release()
            raise
        future.add_done_callback(lambda _: self.light_slots.release())
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout=max(0.0, deadline - time.monotonic()))
        except TimeoutError as exc:
            raise past_wall_limit("request", "…", self.max_wall_s) from exc

    async def heavy(self, op: str, args: tuple[Any, ...], gone: Callable[[], Awaitable[bool]] | None = None) -> Any:
        """The answer of ``op`` in a worker process; killed at the deadline or when ``gone()`` says the client
        went away."""
        deadline = time.monotonic() + self.max_wall_s
        await self.heavy_slots.take(deadline, self.max_wall_s)
        try:
            worker = Worker(op, args, self.worker_memory_bytes)
            try:
                wait_s, checked = 0.002, time.monotonic()
                while True:
                    finished, answer = worker.poll(None)
                    if finished:
                        return answer
                    if time.monotonic() > deadline:
                        raise past_wall_limit("request", "…", self.max_wall_s)
                    if gone is not None and time.monotonic() - checked > 0.2:
                        checked = time.monotonic()
                        if await gone():
                            raise Stopped
                    await asyncio.sleep(wait_s)
                    wait_s = min(0.05, wait_s * 1.5)
            finally:
                worker.kill()
        finally:
            self.heavy_slots.release()

    def run_blocking(
        self, op: str, args: tuple[Any, ...], progress: Progress, stop: Callable[[], bool], deadline: float
    ) -> Any:
        """The answer of ``op`` in a worker process, from a job's thread; :class:`Stopped` when ``stop()`` turns
        true, the wall-time error past ``deadline`` (the process is killed either way)."""
        worker = Worker(op, args, self.worker_memory_bytes)
        try:
            while True:
                finished, answer = worker.poll(progress)
                if finished:
                    return answer
                if stop():
                    raise Stopped
                if time.monotonic() > deadline:
                    raise past_wall_limit("job", op, self.max_wall_s)
                time.sleep(0.02)
        finally:
            worker.kill()

    def shutdown(self) -> None:
        """Stop the light lane's thread pool without waiting; queued answers are cancelled."""
        self._light_pool.shutdown(wait=False, cancel_futures=True)


def worker_pids() -> list[int]:
    """Process ids of this process's live children (the hostile-request bench sums their memory)."""
    return [p.pid for p in multiprocessing.active_children() if p.pid is not None and p.pid != os.getpid()]
