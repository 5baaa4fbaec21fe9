"""The FastAPI app: the page (static/), the JSON API (/api/v1) and its OpenAPI schema, over aiinfra.app.

Every scenario answer is ``aiinfra <question> --json``'s object (web/questions.py). Bad input is HTTP 422 with
the CLI's field/value/fix; a crash in one request is a 500 naming the exception, never a traceback, and the server
keeps serving. The request guard (web/guard.py) checks the Host, the origin and the content type and reads the
bounded body before the app does; the work runs in bounded lanes (web/lanes.py: threads for cheap questions,
killable worker processes for heavy ones, 429 when full). Every response carries a Content-Security-Policy (scripts
only from this server: the charting library is served from the installed plotly package, so the page works
offline) and ``nosniff``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from fastapi import FastAPI, Query, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles

from aiinfra import __version__, app
from aiinfra.errors import AiinfraError, DataError, InfeasibleError, SpecError
from aiinfra.web import questions
from aiinfra.web.guard import LOCAL_HOSTS, GuardSettings, check_json_value, guard, parse_json
from aiinfra.web.jobs import Job, JobTable
from aiinfra.web.lanes import LaneFull, Lanes, Stopped, WorkError
from aiinfra.web.schema import scenario_form_schema

STATIC_DIR = Path(__file__).parent / "static"
#: the shipped examples (a source checkout; an installed wheel has none and the pages start from the reference)
EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "examples"

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
}

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
#: questions answered on the light lane (threads): analytic, every size that drives their work bounded by the specs;
#: the others (layout searches, simulations, Monte-Carlo trials) run in killable worker processes
LIGHT_QUESTIONS = frozenset({"check", "memory", "infer", "datacenter", "tco"})
CATALOG_KINDS = ("accelerators", "systems", "interconnects", "models", "benchmarks")
VALIDATION_ROWS = ("training", "inference")


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


def error_detail(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON detail of an exception: the CLI's message, never a traceback."""
    if isinstance(exc, SpecError):
        value = exc.value if isinstance(exc.value, int | float | bool) or exc.value is None else str(exc.value)[:200]
        return 422, {"field": exc.field, "value": value, "problem": exc.problem, "fix": exc.fix, "message": str(exc)}
    if isinstance(exc, InfeasibleError):
        return 422, {"field": None, "message": f"infeasible: {exc}"}
    if isinstance(exc, DataError):
        return 500, {"field": None, "message": f"internal error (shipped data): {exc}"}
    if isinstance(exc, AiinfraError):
        return 422, {"field": None, "message": str(exc)}
    if isinstance(exc, RecursionError):
        return 422, {"field": "body", "message": "body: nested too deeply — send a scenario in the file's format"}
    return 500, {"field": None, "message": f"internal error: {type(exc).__name__}: {exc} (the server keeps running)"}


def _error_response(exc: BaseException) -> JSONResponse:
    status, detail = error_detail(exc)
    return JSONResponse({"detail": detail}, status_code=status)


class NotFound(Exception):
    """A lookup of the API that names nothing (a job id, a catalog id): answered 404 with the field, the value and a
    message."""

    def __init__(self, field: str, value: str, message: str) -> None:
        super().__init__(message)
        self.field, self.value, self.message = field, value, message


async def _json_body(request: Request) -> Any:
    return parse_json(await request.body())


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


def _options(
    seed: int, accelerators: str | None, engines: str | None, simulate: bool, disaggregate: bool = False
) -> questions.Options:
    def split(text: str | None) -> tuple[str, ...]:
        return tuple(x.strip() for x in (text or "").split(",") if x.strip())

    return questions.Options(
        seed=seed,
        accelerators=split(accelerators),
        engines=split(engines),
        simulate=simulate,
        disaggregate=disaggregate,
    )


def create_app(settings: Settings | None = None) -> Any:
    """The ASGI app (FastAPI, wrapped in the request guard).

    Long because FastAPI registers each route as a closure over this app's lanes, job store and limits; every route
    is a few lines and together they read as the API's table of contents."""
    s = settings or Settings()
    lanes = Lanes(
        light_workers=s.light_workers,
        light_queue=s.light_queue,
        heavy_workers=s.heavy_workers,
        heavy_queue=s.heavy_queue,
        max_wall_s=s.max_wall_s,
        worker_memory_bytes=s.worker_memory_bytes,
    )
    jobs = JobTable(lanes, error_detail, workers=s.job_workers, max_queued=s.max_queued_jobs)
    validated: dict[str, Any] = {}  # the validation tables, computed once per process

    @contextlib.asynccontextmanager
    async def lifespan(app_: FastAPI) -> AsyncIterator[None]:
        yield
        jobs.shutdown()  # running jobs' processes are killed instead of holding the machine after Ctrl-C
        lanes.shutdown()

    api = FastAPI(
        title="aiinfra",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        openapi_url="/api/openapi.json",
        description="Every answer of the aiinfra CLI over HTTP: POST a scenario (the YAML file's format, "
        "as JSON) to /api/v1/<question>; the response is `aiinfra <question> --json`. "
        "Bad input: 422 with field, value, problem and fix.",
    )
    api.state.jobs = jobs
    api.state.lanes = lanes

    @api.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        try:
            response = await call_next(request)
        except Exception as exc:  # a crash is a 500 with its name, and the server goes on
            response = _error_response(exc)
        response.headers.update(SECURITY_HEADERS)
        return response

    @api.exception_handler(AiinfraError)
    async def aiinfra_error(request: Request, exc: AiinfraError) -> JSONResponse:
        return _error_response(exc)

    @api.exception_handler(WorkError)
    async def work_error(request: Request, exc: WorkError) -> JSONResponse:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status)

    @api.exception_handler(LaneFull)
    async def lane_full(request: Request, exc: LaneFull) -> JSONResponse:
        return JSONResponse(
            {"detail": {"field": None, "message": str(exc)}}, status_code=429, headers={"retry-after": "5"}
        )

    @api.exception_handler(Stopped)
    async def stopped(request: Request, exc: Stopped) -> JSONResponse:  # the client went away: nobody reads it
        return JSONResponse({"detail": {"field": None, "message": "stopped: the client went away"}}, 499)

    @api.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound) -> JSONResponse:
        return JSONResponse({"detail": {"field": exc.field, "value": exc.value, "message": exc.message}}, 404)

    from fastapi.exceptions import RequestValidationError

    @api.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("query", "body", "path"))
        value = first.get("input")
        return JSONResponse(
            {
                "detail": {
                    "field": where or "request",
                    "value": value if isinstance(value, str | int | float | bool) else None,
                    "message": f"{where}: {first.get('msg', 'invalid')}",
                }
            },
            status_code=422,
        )

    bounded = lanes.light

    async def heavy(request: Request, op: str, *args: Any) -> Any:
        """Validated on the light lane (bad input is a 422 even while every worker is busy), then answered by a
        worker process."""
        if op != "validate":
            await bounded(lambda: questions.precheck(op, args))
        return await lanes.heavy(op, args, request.is_disconnected)

    scenario_body = {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "description": "a scenario in the YAML file's format (examples/scenario-reference.yaml)",
                    }
                }
            },
        }
    }

    for name in questions.QUESTIONS:

        def make(question: str) -> Callable[..., Awaitable[Any]]:
            async def route(
                request: Request,
                seed: int = Query(0, ge=0, le=2**32 - 1),
                accelerators: str | None = Query(
                    None, max_length=2000, description="capacity: comma-separated catalog ids"
                ),
                engines: str | None = Query(None, max_length=200, description="capacity: vllm,trtllm,sglang"),
                simulate: bool = Query(False, description="capacity: check by simulating one replica"),
                disaggregate: bool = Query(False, description="capacity: also size prefill/decode pools"),
            ) -> Any:
                body = await _json_body(request)
                opts = _options(seed, accelerators, engines, simulate, disaggregate)
                if question in LIGHT_QUESTIONS:
                    return await bounded(lambda: questions.answer(question, body, opts))
                return await heavy(request, "answer", question, body, opts)

            route.__name__ = f"answer_{question.replace('-', '_')}"
            route.__doc__ = (
                f"`aiinfra {question.replace('find-max-rate', 'simulate --find-max-rate')} --json` of "
                "the scenario in the body."
            )
            return route

        api.post(f"/api/v1/{name}", openapi_extra=scenario_body, tags=["questions"])(make(name))

    @api.post(
        "/api/v1/schedule",
        tags=["questions"],
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "description": "a schedule file's content: "
                            "{schedule: {cluster, policy, generator | trace, ...}}, optionally with "
                            "trace_csv: a trace CSV's text, used as the trace",
                        }
                    }
                },
            }
        },
    )
    async def schedule(request: Request) -> Any:
        """`aiinfra schedule --json`; the trace names one the package ships (GET /api/v1/examples lists them) or
        comes as the body's `trace_csv` text."""
        body = await _json_body(request)
        return await heavy(request, "schedule", body)

    @api.post(
        "/api/v1/pack",
        tags=["questions"],
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "description": "a portfolio file's content: "
                            "{pack: {accelerators, workloads, objective, ...}}",
                        }
                    }
                },
            }
        },
    )
    async def pack(request: Request) -> Any:
        """`aiinfra pack --json`: the fewest (or cheapest) GPUs with a MIG layout each for a portfolio."""
        body = await _json_body(request)
        return await heavy(request, "pack", body)

    @api.post("/api/v1/export", openapi_extra=scenario_body, tags=["questions"])
    async def export(
        request: Request,
        format: str = Query(..., max_length=20),
        engine: str | None = Query(None, max_length=20),
        engine_version: str | None = Query(None, max_length=40),
    ) -> Any:
        """`aiinfra export --json`: the launch command (vllm, sglang, trtllm) or the Kubernetes manifest of the
        planned deployment (the scenario's inference.plan, else capacity's cheapest)."""
        body = await _json_body(request)
        return await heavy(request, "export", body, format, engine, engine_version)

    @api.post("/api/v1/simulate-series", openapi_extra=scenario_body, tags=["questions"])
    async def simulate_series(request: Request, seed: int = Query(0, ge=0, le=2**32 - 1)) -> Any:
        """`simulate`'s answer plus the queue/running/KV timelines and per-request latencies the page charts."""
        body = await _json_body(request)
        return await heavy(request, "series", body, seed)

    @api.post("/api/v1/jobs/{question}", openapi_extra=scenario_body, tags=["jobs"])
    async def start_job(
        question: str,
        request: Request,
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
        opts = _options(seed, accelerators, engines, simulate, disaggregate)
        if question == "validate":
            paths = tuple(str(p) for p in _validation_paths(rows))
            if rows in validated:
                job = jobs.finished(question, validated[rows], validated[rows]["summary"]["n"])
            else:
                job = jobs.start(question, "validate", (paths,), lambda result: validated.setdefault(rows, result))
        elif question == "simulate-series":
            await bounded(lambda: questions.check_simulation(body))  # bad input is a 422 now, not a failed job
            job = jobs.start(question, "series", (body, seed))
        elif question in questions.LONG_RUNNING:
            await bounded(
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

    def _job(job_id: str) -> Job:
        job = jobs.get(job_id)
        if job is None:
            raise NotFound(
                "job",
                job_id[:40],
                f"job = {job_id[:40]!r}: no such job (a job is kept until it has "
                "finished, then for a while) — start it again",
            )
        return job

    @api.get("/api/v1/jobs/{job_id}", tags=["jobs"])
    async def job_status(job_id: str) -> Any:
        """A job's state (running, done, error, cancelled), progress, and its answer once done."""
        return _job(job_id).view()

    @api.delete("/api/v1/jobs/{job_id}", tags=["jobs"])
    async def cancel_job(job_id: str) -> Any:
        """Cancel a job: a queued job never starts, a running job's worker process is stopped."""
        _job(job_id)
        job = jobs.cancel(job_id)
        assert job is not None
        return job.view()

    @api.get("/api/v1/examples", tags=["scenarios"])
    async def examples() -> Any:
        """The shipped example scenarios, each with the pages it answers."""
        return {"examples": shipped_examples(), "defaults": DEFAULT_EXAMPLES}

    @api.get("/api/v1/schema/scenario", tags=["scenarios"])
    async def scenario_schema() -> Any:
        """JSON Schema of each scenario section, from the specs, with their field descriptions."""
        return scenario_form_schema()

    @api.post("/api/v1/yaml", openapi_extra=scenario_body, tags=["scenarios"])
    async def to_yaml(request: Request) -> PlainTextResponse:
        """A scenario as a YAML file."""
        body = await _json_body(request)
        if not isinstance(body, dict):
            raise SpecError("body", type(body).__name__, "must be a JSON object", "send a scenario")
        text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
        return PlainTextResponse(
            text, media_type="application/yaml", headers={"content-disposition": 'attachment; filename="scenario.yaml"'}
        )

    @api.post(
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

    @api.get("/api/v1/catalog/prices", tags=["catalog"])
    async def prices(accelerator: str | None = Query(None, max_length=200)) -> Any:
        """`aiinfra catalog list prices --json`: every cloud price with its source and date."""
        return await bounded(lambda: app.price_list(accelerator).to_dict())

    @api.get("/api/v1/catalog/purchases", tags=["catalog"])
    async def purchases(accelerator: str | None = Query(None, max_length=200)) -> Any:
        """`aiinfra catalog list purchases --json`: every purchase price with its source and date."""
        return await bounded(lambda: app.purchase_list(accelerator).to_dict())

    @api.get("/api/v1/catalog/row/{row_id}", tags=["catalog"])
    async def catalog_row(row_id: str) -> Any:
        """`aiinfra catalog show ID --json`: every field of a row with its sources."""
        return await bounded(lambda: app.catalog_show(row_id).to_dict())

    @api.get("/api/v1/catalog/{kind}", tags=["catalog"])
    async def catalog_list(kind: str) -> Any:
        """`aiinfra catalog list KIND --json` (accelerators, systems, interconnects, models, benchmarks)."""
        if kind not in CATALOG_KINDS:
            known = ", ".join((*CATALOG_KINDS, "prices", "purchases"))
            raise SpecError("kind", kind, f"unknown catalog table (known: {known})", "name one of them")
        return await bounded(lambda: app.catalog_list(kind).to_dict())

    @api.get("/api/v1/model/{model_id}", tags=["catalog"])
    async def model(model_id: str, seq_len: int | None = Query(None, ge=1, le=100_000_000)) -> Any:
        """`aiinfra model show ID --json`."""
        return await bounded(lambda: app.model_show(model_id, seq_len).to_dict())

    @api.post(
        "/api/v1/model-from-config",
        tags=["catalog"],
        openapi_extra={"requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}}},
    )
    async def model_from_config(request: Request, name: str = Query("", max_length=200)) -> Any:
        """A Hugging Face config.json's content -> the architecture (a scenario's inline `model:`) and figures."""
        body = await _json_body(request)
        return await bounded(lambda: app.model_from_hf_config(body, name).to_dict())

    @api.get("/api/v1/mig/{accelerator}", tags=["catalog"])
    async def mig(accelerator: str, layout: str | None = Query(None, max_length=500)) -> Any:
        """`aiinfra mig ACCELERATOR [--layout P,P,...] --json`: MIG profiles and every full layout, or one checked."""
        return await bounded(lambda: app.mig(accelerator, layout).to_dict())

    @api.get("/api/v1/validate", tags=["validation"])
    async def validate(request: Request, rows: str = Query("training")) -> Any:
        """`aiinfra validate --json` of the shipped training or inference rows (computed once per process)."""
        paths = tuple(str(p) for p in _validation_paths(rows))
        if rows not in validated:
            validated[rows] = await heavy(request, "validate", paths)
        return validated[rows]

    @api.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html")

    @api.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        return Response(status_code=204)

    @api.get("/api/docs", include_in_schema=False)
    async def docs() -> FileResponse:
        return FileResponse(STATIC_DIR / "docs.html")

    @api.get("/vendor/plotly.min.js", include_in_schema=False)
    async def plotly_js() -> FileResponse:
        import plotly

        return FileResponse(
            Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
            media_type="text/javascript",
            headers={"cache-control": "max-age=86400"},
        )

    api.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return guard(
        api,
        GuardSettings(
            allowed_hosts=s.allowed_hosts,
            max_body_bytes=s.max_body_bytes,
            body_timeout_s=s.body_timeout_s,
            headers=SECURITY_HEADERS,
        ),
    )


def _validation_paths(rows: str) -> list[Path]:
    from aiinfra.app.validation import shipped_cases

    if rows not in VALIDATION_ROWS:
        raise SpecError("rows", rows, f"unknown row set (known: {', '.join(VALIDATION_ROWS)})", "name one of them")
    return [p for p in shipped_cases() if Path(p).stem == rows]
