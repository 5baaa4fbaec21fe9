"""What the web app may ask the application layer, and the limits it puts on a browser's input.

Each scenario question takes the scenario mapping (the YAML file's format, as JSON) and the CLI's options, and
returns ``app.<question>(...).to_dict()`` — exactly what ``aiinfra <question> --json`` prints. The web app adds
two rules the CLI does not need: no server-side file path comes from a client (an HF config.json is uploaded as
content), and simulations are bounded in requests (wall time is bounded by the server).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiinfra import app
from aiinfra.app.questions import TABLE, Question
from aiinfra.errors import SpecError
from aiinfra.report.render import jsonable
from aiinfra.specs.bounds import WEB_MAX_SCHEDULE_JOBS, WEB_MAX_SIMULATED_REQUESTS

__all__ = ["WEB_MAX_SCHEDULE_JOBS", "WEB_MAX_SIMULATED_REQUESTS"]

Progress = Callable[[int, int | None], None]


@dataclass(frozen=True, slots=True)
class Options:
    """The CLI's options of the scenario questions (``capacity --accelerators ... --simulate``, ``--seed``)."""

    seed: int = 0
    accelerators: tuple[str, ...] = ()
    engines: tuple[str, ...] = ()
    simulate: bool = False
    disaggregate: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _refuse_file_paths(scenario: Mapping[str, Any]) -> None:
    """A browser names no file on the server: model.config and trace arrivals are refused with the fix."""
    model = scenario.get("model")
    if isinstance(model, Mapping) and "config" in model:
        raise SpecError(
            "model.config",
            model["config"],
            "the web app reads no file on the server",
            "upload the config.json's content (model → Upload config.json) or name a catalog model",
        )
    inference = scenario.get("inference")
    arrival = inference.get("arrival") if isinstance(inference, Mapping) else None
    if isinstance(arrival, Mapping) and "path" in arrival:
        raise SpecError(
            "inference.arrival.path",
            arrival["path"],
            "the web app reads no trace file on the server",
            "use kind: poisson, gamma or concurrency here, or run `aiinfra simulate` on the file",
        )


def _bound_simulation(sc: Any) -> None:
    wl = sc.inference
    n = None if wl is None else wl.num_requests
    if n is not None and n > WEB_MAX_SIMULATED_REQUESTS:
        limit = f"{WEB_MAX_SIMULATED_REQUESTS:,}"
        raise SpecError(
            "inference.num_requests",
            n,
            f"the web app simulates at most {limit} requests",
            f"give ≤ {limit}, or run `aiinfra simulate` for more",
        )


def load(scenario: Mapping[str, Any]) -> Any:
    """The resolved scenario of a browser's mapping (file paths refused)."""
    if not isinstance(scenario, Mapping):
        raise SpecError(
            "scenario",
            type(scenario).__name__,
            "must be a JSON object in the scenario file's format",
            "send the scenario as a JSON object (examples/ show the format)",
        )
    _refuse_file_paths(scenario)
    return app.load_scenario(scenario)


def check_simulation(scenario: Mapping[str, Any]) -> Any:
    """The resolved scenario of a simulation (file paths refused, requests bounded): a job's input, checked before
    the job starts so that bad input is a 422, not a failed job."""
    sc = load(scenario)
    _bound_simulation(sc)
    return sc


def _answerer(q: Question) -> Callable[[Any, Options, Progress | None], dict[str, Any]]:
    """``q``'s answer to a resolved scenario and the web's options (a simulating request bounded first)."""

    def answer(sc: Any, o: Options, progress: Progress | None) -> dict[str, Any]:
        # the options the web offers (the rest take their defaults)
        request = q.request_of(sc, {f.name: getattr(o, f.name) for f in q.option_fields() if hasattr(o, f.name)})
        if request.simulates:
            _bound_simulation(sc)
        result: dict[str, Any] = q.answer(request, progress).to_dict()
        return result

    return answer


#: question name in the URL -> its answer: every entry of app/questions.py's table, under its route name
QUESTIONS: dict[str, Callable[[Any, Options, Progress | None], dict[str, Any]]] = {q.route: _answerer(q) for q in TABLE}

#: the questions the web app may run as jobs (POST /api/v1/jobs/<question>), besides its own series and validate
LONG_RUNNING = frozenset(q.route for q in TABLE if q.long_running)


def answer(
    question: str, scenario: Mapping[str, Any], options: Options | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """``aiinfra <question> --json`` for a scenario mapping."""
    if question not in QUESTIONS:
        raise SpecError("question", question, f"unknown question (known: {', '.join(QUESTIONS)})", "name one of them")
    return QUESTIONS[question](load(scenario), options or Options(), progress)


def shipped_traces() -> dict[str, Path]:
    """The job traces the package ships (sharing/data/*.csv), by file name: the only traces the web app reads."""
    from aiinfra.app.schedule import __file__ as app_schedule_file

    data = Path(app_schedule_file).resolve().parents[1] / "sharing" / "data"
    return {p.name: p for p in sorted(data.glob("*.csv"))}


#: the name an uploaded trace gets (the answer's trace.source)
UPLOADED_TRACE = "uploaded.csv"


def _schedule_document(document: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The schedule document the application layer reads and the uploaded CSV's text, checked for what the web app
    refuses (a trace it does not ship, more generated jobs than its limit)."""
    if not isinstance(document, Mapping) or not isinstance(document.get("schedule"), Mapping):
        raise SpecError(
            "schedule",
            type(document).__name__,
            "expected a JSON object with one section 'schedule'",
            "send a schedule file's content (examples/schedule-synthetic.yaml shows the format)",
        )
    content = document.get("trace_csv")
    doc = {"schedule": dict(document["schedule"])}
    generator = doc["schedule"].get("generator")
    jobs = generator.get("jobs") if isinstance(generator, Mapping) else None
    if (
        content is None
        and isinstance(jobs, int | float)
        and not isinstance(jobs, bool)
        and jobs > WEB_MAX_SCHEDULE_JOBS
    ):
        limit = f"{WEB_MAX_SCHEDULE_JOBS:,}"
        raise SpecError(
            "schedule.generator.jobs",
            jobs,
            f"the web app schedules at most {limit} generated jobs",
            f"give ≤ {limit}, or run `aiinfra schedule` for more",
        )
    if content is not None:
        if not isinstance(content, str):
            raise SpecError("trace_csv", type(content).__name__, "must be the CSV file's text", "upload a CSV file")
        doc["schedule"].pop("generator", None)
        doc["schedule"]["trace"] = UPLOADED_TRACE
        return doc, content
    trace = doc["schedule"].get("trace")
    traces = shipped_traces()
    if trace is not None and (not isinstance(trace, str) or trace not in traces):
        raise SpecError(
            "schedule.trace",
            trace,
            "the web app reads only the traces aiinfra ships",
            f"name one of {', '.join(traces)}, upload the CSV (trace_csv) or describe a generator",
        )
    return doc, None


def schedule(document: Mapping[str, Any]) -> dict[str, Any]:
    """``aiinfra schedule --json`` of a schedule document. Its trace names a trace the package ships, or the
    document carries the CSV's content as ``trace_csv`` (the web app reads no client path), which is then the trace."""
    doc, content = _schedule_document(document)
    if content is not None:
        with tempfile.TemporaryDirectory(prefix="aiinfra-trace-") as tmp:
            (Path(tmp) / UPLOADED_TRACE).write_text(content, encoding="utf-8")
            return app.schedule(doc, base_dir=Path(tmp)).to_dict()
    traces = shipped_traces()
    base = next(iter(traces.values())).parent if traces else None
    return app.schedule(doc, base_dir=base).to_dict()


def _check_pack(document: Mapping[str, Any]) -> None:
    body = document.get("pack") if isinstance(document, Mapping) else None
    if not isinstance(body, Mapping):
        raise SpecError(
            "pack",
            type(document).__name__,
            "expected a JSON object with one section 'pack'",
            "send a portfolio file's content (examples/pack-portfolio.yaml shows the format)",
        )
    for i, w in enumerate(body.get("workloads") or []):
        if isinstance(w, Mapping) and isinstance(w.get("model"), Mapping) and "config" in w["model"]:
            raise SpecError(
                f"pack.workloads[{i}].model.config",
                w["model"]["config"],
                "the web app reads no file on the server",
                "name a catalog model",
            )


def pack(document: Mapping[str, Any]) -> dict[str, Any]:
    """``aiinfra pack --json`` of a portfolio document (no service may name a config.json path)."""
    _check_pack(document)
    return app.pack(document).to_dict()


EXPORT_FORMATS = ("vllm", "sglang", "trtllm", "kubernetes")
"""What POST /api/v1/export writes (app.export's formats)."""


def export(
    scenario: Mapping[str, Any], fmt: str, engine: str | None = None, engine_version: str | None = None
) -> dict[str, Any]:
    """``aiinfra export --format FMT --json`` of a scenario mapping (the model: its catalog repository)."""
    result: dict[str, Any] = app.export(load(scenario), fmt, engine, engine_version).to_dict()
    return result


def precheck(op: str, args: tuple[Any, ...]) -> None:
    """Validate a heavy question's input without doing its work (cheap: run before the question takes a worker, so
    bad input is a 422 even while every worker is busy)."""
    from aiinfra.app.pack import DevWorkload, load_pack
    from aiinfra.app.schedule import load_schedule
    from aiinfra.specs.common import validate

    if op == "answer":
        question, body, options = args
        if question not in QUESTIONS:
            raise SpecError(
                "question", question, f"unknown question (known: {', '.join(QUESTIONS)})", "name one of them"
            )
        sc = load(body)
        if question in ("simulate", "find-max-rate") or (question == "capacity" and options.simulate):
            _bound_simulation(sc)
    elif op == "series":
        check_simulation(args[0])
    elif op == "schedule":
        doc, _ = _schedule_document(args[0])
        load_schedule(doc)
    elif op == "export":
        if args[1] not in EXPORT_FORMATS:
            raise SpecError(
                "format", args[1], f"unknown export format (known: {', '.join(EXPORT_FORMATS)})", "pick one"
            )
        load(args[0])
    elif op == "pack":
        _check_pack(args[0])
        spec = load_pack(args[0])
        for i, w in enumerate(spec.workloads):
            if isinstance(w, Mapping) and w.get("kind") in ("notebook", "finetune"):
                validate(DevWorkload, w, where=f"pack.workloads[{i}]")


def simulation_series(scenario: Mapping[str, Any], seed: int = 0, points: int = 600) -> dict[str, Any]:
    """``simulate``'s answer plus what the page charts: the waiting/running/KV timelines (every k-th sample, at
    most ``points``) and every finished request's TTFT, TPOT and end-to-end latency."""
    sc = load(scenario)
    _bound_simulation(sc)
    result = app.simulate(sc, seed)
    rec = result.run.records
    step = max(1, len(rec.sample_t_s) // points)
    timeline = {
        "t_s": list(rec.sample_t_s[::step]),
        "waiting": [int(q) for q in rec.queue_len[::step]],
        "running": [int(q) for q in rec.running_seqs[::step]],
        "kv_frac": list(rec.kv_util_frac[::step]),
    }
    return {"answer": result.to_dict(), "timeline": jsonable(timeline), "latencies": result.latencies()}
