"""Sweeps: one scenario question answered at every point of a grid of scenario overrides.

Each point is answered by the same application function the CLI uses (its entry of app/questions.py), in this process,
a local process pool or Ray tasks (aiinfra/sweeping/backends.py), and written as it arrives to a results directory of
Parquet parts (aiinfra/sweeping/store.py): one row per point with its grid keys, ``scenario_hash`` (its identity: the
question, its options and the fully overridden scenario), ``error`` (the message of a point that could not be
answered, else empty), ``point_wall_s`` and the flattened result (units in the column names). Running the same
sweep again skips the points already written, so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiinfra.app.base import MissingExtraError, Result, flatten
from aiinfra.app.scenario import ScenarioLike, _set_list
from aiinfra.catalog.resolve import resolve
from aiinfra.errors import AiinfraError, InfeasibleError, SpecError
from aiinfra.specs.scenario import Scenario, apply_set, parse_scenario, read_yaml

if TYPE_CHECKING:
    import pandas  # type: ignore[import-untyped]

    from aiinfra.sweeping.grid import Grid, Point

RESERVED = ("scenario_hash", "question", "error", "point_wall_s")
"""Columns every row has besides its grid keys and its result."""
TARGET_TASK_S = 0.5
"""Chunks of points are sized to take about this long, so quick points do not pay a round trip each."""
FLUSH_ROWS = 2000
FLUSH_S = 2.0
"""A part file is written every FLUSH_ROWS rows or ``flush_s`` (default FLUSH_S) seconds: what a kill -9 can lose
(and a resumed sweep runs again)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """Points sent to one worker together: everything needed to answer them, nothing more."""

    question: str
    options: dict[str, Any]
    base: dict[str, Any]
    path: str
    points: list[tuple[str, Point]]
    overlays: tuple[str, ...] = ()
    """catalog overlay folders active where the sweep started (``--catalog-overlay``), applied in each worker"""


def _missing(name: str, extra: str) -> MissingExtraError:
    return MissingExtraError(f"sweeps need {name}: pip install 'aiinfra[{extra}]'")


def _overridden(base: Mapping[str, Any], point: Point) -> dict[str, Any]:
    data = copy.deepcopy(dict(base))
    for assignment in _set_list(dict(point)):
        apply_set(data, assignment)
    return data


_OVERLAID: dict[tuple[str, ...], Any] = {}
"""Catalogs with overlays built in this worker process, by overlay folders (read once per process)."""


def _catalog(overlays: tuple[str, ...]) -> contextlib.AbstractContextManager[object]:
    """The catalog the sweep's parent had active: the shipped one, or it with the same overlay folders."""
    from aiinfra.catalog import Catalog, use

    if not overlays:
        return contextlib.nullcontext()
    if overlays not in _OVERLAID:
        cat = Catalog.default()
        for folder in overlays:
            cat = cat.with_overlay(folder)
        _OVERLAID[overlays] = cat
    return use(_OVERLAID[overlays])


def _overlay_fingerprint(overlays: tuple[str, ...]) -> str:
    """Hash of every file in the overlay folders, in order ("" for the shipped catalog): part of a point's
    identity, so a resumed sweep does not reuse rows answered against other catalog rows."""
    if not overlays:
        return ""
    digest = hashlib.sha256()
    for folder in overlays:
        for f in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
            digest.update(f"{f.relative_to(folder)}\0".encode() + f.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def answer_chunk(chunk: Chunk) -> list[dict[str, Any]]:
    """Answer every point of a chunk (run in a worker): one row each, errors recorded rather than raised."""
    with _catalog(chunk.overlays):
        return _answer_points(chunk)


def _answer_points(chunk: Chunk) -> list[dict[str, Any]]:
    from aiinfra.app.questions import QUESTION
    from aiinfra.sweeping.store import encode_value

    rows = []
    for point_hash, point in chunk.points:
        start = time.perf_counter()
        keys = {k: encode_value(v) for k, v in point}
        error: str | None = None
        result: dict[str, Any] = {}
        try:
            scenario = resolve(parse_scenario(_overridden(chunk.base, point)), chunk.path)
            q = QUESTION[chunk.question]
            result = flatten(q.answer(q.request_of(scenario, chunk.options)).to_dict())
        except InfeasibleError as exc:
            error = f"infeasible: {exc}"
        except AiinfraError as exc:
            error = f"error: {exc}"
        except Exception as exc:  # a bug at one point must not end a long sweep: recorded, named, counted
            error = f"internal error: {type(exc).__name__}: {exc}"
        row: dict[str, Any] = {
            "scenario_hash": point_hash,
            "question": chunk.question,
            **keys,
            "error": error,
            "point_wall_s": time.perf_counter() - start,
        }
        for name, value in result.items():
            row[f"result.{name}" if name in row else name] = encode_value(value)
        rows.append(row)
    return rows


@dataclass(frozen=True, slots=True)
class SweepResult(Result):
    """What a sweep did; its rows are in ``out`` (``frame()`` reads them)."""

    out: str
    question: str
    """The question asked at every point."""
    backend: str
    """The backend that ran the points: serial, process or ray (``auto`` resolved to one)."""
    workers: int
    """Worker processes used."""
    points: int
    """distinct points of the grid"""
    skipped: int
    """points already in ``out`` (a resumed sweep), not run again"""
    run: int
    """points answered by this call"""
    failures: int
    """points of the grid whose row has an error (earlier runs included)"""
    lost: int
    """points not answered: their worker died, or the pool broke before they were sent (run the sweep again)"""
    wall_s: float
    points_per_s: float
    """points answered by this call per second of its wall time"""
    hashes: tuple[str, ...] = field(repr=False, default=())

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra sweep --json`` object: where the rows are, the question, the backend, and the point counts and
        rate."""
        return {
            "out": self.out,
            "question": self.question,
            "backend": self.backend,
            "workers": self.workers,
            "points": self.points,
            "skipped": self.skipped,
            "run": self.run,
            "failures": self.failures,
            "lost": self.lost,
            "wall_s": self.wall_s,
            "points_per_s": self.points_per_s,
        }

    def frame(self) -> pandas.DataFrame:
        """This sweep's rows, in grid order, as a DataFrame (rows of other grids in the same ``out`` left out)."""
        return read_frame(self.out, self.hashes)


def read_frame(results: str | Path, hashes: Sequence[str] = ()) -> pandas.DataFrame:
    """A results directory as a DataFrame; given ``hashes``, only those points in that order; the error column is
    the message or empty."""
    try:
        import pandas
    except ImportError:
        raise _missing("pandas", "sweep") from None
    from aiinfra.sweeping.store import read_table

    frame = read_table(results).to_pandas()
    if "error" in frame.columns:  # a point without an error reads as empty, not NaN (pandas' missing string)
        frame["error"] = frame["error"].astype(object).where(frame["error"].notna(), "")
    if hashes:
        order = {h: i for i, h in enumerate(hashes)}
        frame = frame[frame["scenario_hash"].isin(order)]
        frame = frame.iloc[frame["scenario_hash"].map(order).argsort()].reset_index(drop=True)
    assert isinstance(frame, pandas.DataFrame)
    return frame


def _base(scenario: ScenarioLike) -> tuple[dict[str, Any], str]:
    """The file-format mapping of a scenario and the path relative trace files are read next to."""
    if isinstance(scenario, Scenario):
        mapping = scenario.mapping if scenario.mapping is not None else read_yaml(scenario.path)
        return copy.deepcopy(mapping), scenario.path
    if isinstance(scenario, Mapping):
        return copy.deepcopy(dict(scenario)), ""
    return read_yaml(scenario), str(Path(scenario).resolve())


class _Checker:
    """Validates every point in this process before any work: parsing each (cheap), resolving each distinct model
    and hardware section once. A grid value with which no point loads is bad input naming its key (exit 2); a
    point that fails only in its combination of values is left to its worker, which records the error."""

    def __init__(self, grid: Grid) -> None:
        from aiinfra.catalog.resolve import resolve_cluster, resolve_model

        self._resolve_model, self._resolve_cluster = resolve_model, resolve_cluster
        self._resolved: set[str] = set()
        self._zip_keys = {k for k, _ in grid.zipped}
        self._loads: set[tuple[str, str]] = set()
        self._fails: dict[tuple[str, str], tuple[SpecError, Any]] = {}

    def _load(self, data: dict[str, Any]) -> None:
        inp = parse_scenario(data)
        model_key = "model " + json.dumps(inp.model, sort_keys=True, default=str)
        if model_key not in self._resolved:
            self._resolve_model(inp.model)
            self._resolved.add(model_key)
        hardware_key = "hardware " + repr(inp.hardware)
        if hardware_key not in self._resolved:
            self._resolve_cluster(inp.hardware)
            self._resolved.add(hardware_key)

    def add(self, data: dict[str, Any], point: Point) -> None:
        """Try to load ``data`` (the scenario of ``point``): a failure is remembered against each of the point's values,
        a success clears them all (a value is bad only if no point loads with it)."""
        values = [((k, json.dumps(v, sort_keys=True, default=str)), v) for k, v in point]
        try:
            self._load(data)
        except SpecError as exc:
            for kv, v in values:
                self._fails.setdefault(kv, (exc, v))
        else:
            self._loads.update(kv for kv, _ in values)

    def raise_bad_values(self) -> None:
        """SpecError for a value no point loads with, preferring one its own error names."""
        bad = [(kv[0], exc, v) for kv, (exc, v) in self._fails.items() if kv not in self._loads]
        if not bad:
            return
        key, exc, value = next((b for b in bad if b[1].field == b[0] or b[1].field.startswith(f"{b[0]}.")), bad[0])
        flag = "--zip" if key in self._zip_keys else "--grid"
        where = "" if exc.field == key else f" ({exc.field})"
        raise SpecError(f"{flag} {key}", value, f"{exc.problem}{where}", exc.fix)


def parse_axes(grid: Sequence[str], zipped: Sequence[str]) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """The CLI's ``--grid`` and ``--zip`` texts (``KEY=V1,V2,...``) -> the axes ``sweep`` takes."""
    from aiinfra.sweeping.grid import parse_axis

    axes: tuple[dict[str, list[Any]], dict[str, list[Any]]] = ({}, {})
    for flag, texts, into in (("--grid", grid, axes[0]), ("--zip", zipped, axes[1])):
        for text in texts:
            key, values = parse_axis(text, flag)
            if key in axes[0] or key in axes[1]:
                raise SpecError(f"{flag} {key}", text, "key given twice", "give each key once")
            into[key] = values
    return axes


def _question_options(question: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Every option of the question, defaults filled in (so equal requests hash equally however they are given):
    the fields of its request (app/questions.py)."""
    from aiinfra.app.questions import QUESTION

    q = QUESTION.get(question)
    if q is None or not q.sweepable:
        known = ", ".join(n for n, e in QUESTION.items() if e.sweepable)
        raise SpecError("--question", question, "unknown question", f"name one of {known}")
    return q.options(options)


def _chunks(
    base: dict[str, Any],
    path: str,
    question: str,
    options: dict[str, Any],
    todo: Iterator[tuple[str, Point]],
    size: list[int],
    overlays: tuple[str, ...],
) -> Iterator[Chunk]:
    """Lazy chunks of the points to run; ``size[0]`` (updated as timings arrive) sets each chunk's length."""
    while True:
        points = [p for _, p in zip(range(size[0]), todo, strict=False)]
        if not points:
            return
        yield Chunk(question, options, base, path, points, overlays)


def sweep(
    scenario: ScenarioLike,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    zip: Mapping[str, Sequence[Any]] | None = None,
    question: str = "infer",
    options: Mapping[str, Any] | None = None,
    set: Mapping[str, Any] | Sequence[str] | None = None,
    out: str | Path | None = None,
    backend: str = "auto",
    workers: int | None = None,
    address: str | None = None,
    progress: bool | None = None,
    flush_s: float = FLUSH_S,
) -> SweepResult:
    """Answer ``question`` at every point of ``grid`` (keys crossed) × ``zip`` (keys walked together), writing rows
    to the results directory ``out`` as they arrive (a new temporary directory when None). ``backend``: ``serial``
    (this process), ``process`` (a local pool of ``workers`` processes), ``ray`` (Ray tasks; ``address`` of a
    cluster) or ``auto`` (a pool unless there is a single point or CPU). Rows are written at least every ``flush_s``
    seconds. Every key and value is checked before any work: a bad one raises SpecError naming it.

    Long because it checks every option and point before any work, then runs the backend, the store and the progress
    report together; the parts are sweeping/grid.py, store.py and backends.py."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise _missing("pyarrow", "sweep") from None
    from aiinfra.sweeping.backends import BACKENDS, default_workers, process_pool, ray_tasks, serial
    from aiinfra.sweeping.grid import Grid
    from aiinfra.sweeping.store import ResultStore

    if backend not in BACKENDS:
        raise SpecError("--backend", backend, "unknown backend", f"name one of {', '.join(BACKENDS)}")
    if workers is not None and workers < 1:
        raise SpecError("--workers", workers, "must be at least 1", "give a positive number of processes")
    opts = _question_options(question, options or {})
    base, path = _base(scenario)
    for assignment in _set_list(set):
        apply_set(base, assignment)
    points = Grid.build(grid, zip)
    start = time.perf_counter()
    from aiinfra.catalog import active

    overlays = tuple(str(Path(d).resolve()) for d in active().overlay_dirs)
    hashes = _checked_hashes(base, points, question, opts, _overlay_fingerprint(overlays))
    distinct = len(dict.fromkeys(hashes))

    root = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="aiinfra-sweep-"))
    store = ResultStore(root, {"question": question, "options": opts, "keys": points.keys})
    finished = store.finished()
    skipped = sum(1 for h in dict.fromkeys(hashes) if h in finished)
    failures = sum(1 for h in dict.fromkeys(hashes) if finished.get(h))
    seen = builtins.set(finished)

    def todo() -> Iterator[tuple[str, Point]]:
        for h, point in builtins.zip(hashes, points, strict=True):  # (``zip`` is an argument here)
            if h not in seen:
                seen.add(h)
                yield h, point

    n_workers = workers or default_workers()
    to_run = distinct - skipped
    chosen = backend if backend != "auto" else ("serial" if to_run <= 1 or n_workers == 1 else "process")
    size = [1]
    chunks = _chunks(base, path, question, opts, todo(), size, overlays)
    ray_slots: list[int] = []
    if chosen == "serial":
        n_workers = 1
        outcomes = serial(answer_chunk, chunks)
    elif chosen == "process":
        outcomes = process_pool(answer_chunk, chunks, n_workers)
    else:
        outcomes = ray_tasks(answer_chunk, chunks, address, workers, ray_slots)
    bar = _progress_bar(distinct, skipped, progress)
    try:
        run, new_failures = _drain(outcomes, store, bar, size, to_run, n_workers, flush_s)
    finally:
        if bar is not None:
            bar.close()
    store.compact()
    wall_s = time.perf_counter() - start
    return SweepResult(
        out=str(root),
        question=question,
        backend=chosen,
        workers=ray_slots[0] if ray_slots else n_workers,
        points=distinct,
        skipped=skipped,
        run=run,
        failures=failures + new_failures,
        lost=distinct - skipped - run,
        wall_s=wall_s,
        points_per_s=run / wall_s if wall_s > 0 else 0.0,
        hashes=tuple(dict.fromkeys(hashes)),
    )


def _checked_hashes(
    base: dict[str, Any], points: Grid, question: str, options: dict[str, Any], catalog: str
) -> list[str]:
    """Every point checked (SpecError for a bad value) and its identity hash, in grid order."""
    from aiinfra.sweeping.grid import point_hash

    checker = _Checker(points)
    hashes: list[str] = []
    for point in points:
        data = _overridden(base, point)
        checker.add(data, point)
        hashes.append(point_hash(question, options, data, catalog))
    checker.raise_bad_values()
    return hashes


def _drain(
    outcomes: Iterator[tuple[Any, Any]],
    store: Any,
    bar: Any,
    size: list[int],
    to_run: int,
    workers: int,
    flush_s: float,
) -> tuple[int, int]:
    """Write rows as chunks finish (a part every FLUSH_ROWS rows or ``flush_s`` seconds, and whatever is left when
    interrupted), resize chunks to about TARGET_TASK_S each; returns (points answered, of which failed). A chunk
    lost with its worker is skipped: its points stay unwritten and a re-run answers them."""
    run = failures = 0
    busy_s = 0.0
    buffer: list[dict[str, Any]] = []
    flushed = time.monotonic()
    try:
        for _, outcome in outcomes:
            if isinstance(outcome, BaseException):
                continue
            buffer += outcome
            run += len(outcome)
            failures += sum(1 for row in outcome if row["error"] is not None)
            busy_s += sum(row["point_wall_s"] for row in outcome)
            size[0] = max(
                1, min(256, int(TARGET_TASK_S * run / max(busy_s, 1e-9)), max(1, (to_run - run) // (2 * workers)))
            )
            if bar is not None:
                bar.update(len(outcome))
                bar.set_postfix(failures=failures, refresh=False)
            if len(buffer) >= FLUSH_ROWS or time.monotonic() - flushed >= flush_s:
                store.write(buffer)
                buffer, flushed = [], time.monotonic()
    finally:
        store.write(buffer)
    return run, failures


def _progress_bar(total: int, done: int, enabled: bool | None) -> Any:
    """tqdm on stderr with rate and ETA (shown when stderr is a terminal unless asked)."""
    if enabled is False or (enabled is None and not sys.stderr.isatty()):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, initial=done, unit="point", file=sys.stderr, dynamic_ncols=True, smoothing=0.05)


def sweep_frame(scenario: ScenarioLike, **kwargs: Any) -> pandas.DataFrame:
    """``sweep`` returning its rows as a DataFrame in grid order (``aiinfra.sweep``); a temporary results directory
    is removed afterwards, one given as ``out`` is kept."""
    result = sweep(scenario, **kwargs)
    try:
        frame = result.frame()
        frame.attrs["summary"] = result.to_dict()
        return frame
    finally:
        if kwargs.get("out") is None:
            shutil.rmtree(result.out, ignore_errors=True)


DEFAULT_AXES: dict[str, tuple[str, str]] = {
    "train": ("accelerator_hours", "time_to_train_s"),
    "infer": ("count", "ttft_s"),
    "capacity": ("chosen.usd_per_hour", "chosen.ttft_s"),
    "simulate": ("output_tokens_per_s:max", "ttft_s.p90"),
    "cost": ("cheapest.total_known_usd", "duration_s"),
}
"""The two objectives ``--report`` plots when none are named, by question (``:max`` = larger is better)."""


@dataclass(frozen=True, slots=True)
class ParetoResult(Result):
    """The Pareto front of a sweep's results over two columns."""

    results: str
    """The results file the front was read from."""
    x: str
    """The column on the x axis."""
    y: str
    x_max: bool
    """Larger x is better (else smaller)."""
    y_max: bool
    keys: list[str]
    """the sweep's grid keys (the columns that say which point a row is)"""
    shown: list[str]
    """further columns shown for each front row"""
    points: int
    failures: int
    without_values: int
    """answered points with no value in ``x`` or ``y``"""
    front: list[dict[str, Any]]
    """the non-dominated rows, best ``x`` first: grid keys, shown columns, ``x``, ``y`` and ``scenario_hash``"""
    plots: list[str]
    """Paths of the plots written."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra sweep --report RESULTS --json`` object: the columns and their directions, counts, the
        front and the plots written."""
        return {
            "results": self.results,
            "x": self.x,
            "y": self.y,
            "x_max": self.x_max,
            "y_max": self.y_max,
            "keys": self.keys,
            "shown": self.shown,
            "points": self.points,
            "failures": self.failures,
            "without_values": self.without_values,
            "front": self.front,
            "plots": self.plots,
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """The front's rows, best x first."""
        return self.front


def _column(names: Sequence[str], spec: str, flag: str) -> tuple[str, bool]:
    """``--x cost`` -> the one column it names: exact, else the one whose last dotted part starts with it, else
    the one containing it; ``:max`` asks for larger-is-better."""
    name, _, sense = spec.partition(":")
    if sense not in ("", "min", "max"):
        raise SpecError(flag, spec, f"unknown direction '{sense}'", "append :min or :max, or nothing (min)")
    results = [n for n in names if n not in RESERVED]
    for match in (lambda n: n == name, lambda n: n.rsplit(".", 1)[-1].startswith(name), lambda n: name in n):
        found = [n for n in results if match(n)]
        if len(found) == 1:
            return found[0], sense == "max"
        if len(found) > 1:
            raise SpecError(
                flag, name, f"matches {len(found)} columns: {', '.join(found[:8])}", "name one of them exactly"
            )
    raise SpecError(flag, name, "no such column", f"columns include {', '.join(results[:12])}")


def pareto(
    results: str | Path,
    x: str | None = None,
    y: str | None = None,
    plot: str | Path | None = None,
    show: Sequence[str] = (),
) -> ParetoResult:
    """The Pareto front of a results directory over columns ``x`` and ``y`` (both minimised unless ``:max``),
    with the columns named in ``show`` alongside, and its plot as PNG and SVG in the directory ``plot``."""
    import pyarrow as pa

    from aiinfra.sweeping import pareto as front_of
    from aiinfra.sweeping.store import META, read_table

    table = read_table(results)
    meta_path = Path(results) / META
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    question = str(meta.get("question", table["question"][0].as_py() if table.num_rows else ""))
    keys = [k for k in meta.get("keys", []) if k in table.column_names]
    default_x, default_y = DEFAULT_AXES.get(question, (None, None))
    if (x or default_x) is None or (y or default_y) is None:
        raise SpecError("--x/--y", None, f"no default columns for a {question} sweep", "name them: --x COL --y COL")
    x_col, x_max = _column(table.column_names, str(x or default_x), "--x")
    y_col, y_max = _column(table.column_names, str(y or default_y), "--y")
    for flag, col in (("--x", x_col), ("--y", y_col)):
        typ = table.schema.field(col).type
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ)):
            raise SpecError(flag, col, f"is not a numeric column ({typ})", "name a column of numbers")
    errors = table["error"].to_pylist()
    xs, ys = table[x_col].to_pylist(), table[y_col].to_pylist()
    usable = [i for i in range(table.num_rows) if errors[i] is None and xs[i] is not None and ys[i] is not None]
    fx, fy = [float(xs[i]) for i in usable], [float(ys[i]) for i in usable]
    on_front = front_of.front(fx, fy, x_max, y_max)
    shown = [_column(table.column_names, name, "--show")[0] for name in show]
    key_values = {k: table[k].to_pylist() for k in dict.fromkeys([*keys, *shown, "scenario_hash"])}
    rows = [{**{k: v[usable[i]] for k, v in key_values.items()}, x_col: fx[i], y_col: fy[i]} for i in on_front]
    plots: list[str] = []
    if plot is not None:
        from aiinfra.report.plots import pareto_plot, plot_dir

        labels = [" ".join(str(table[k][usable[i]].as_py()) for k in keys) for i in range(len(usable))]
        sense = {False: "lower is better", True: "higher is better"}
        title = f"{question} sweep: {len(usable)} points over {', '.join(keys)}"
        plots = pareto_plot(
            plot_dir(str(plot)),
            f"pareto-{x_col}-{y_col}",
            title,
            f"{x_col} ({sense[x_max]})",
            f"{y_col} ({sense[y_max]})",
            fx,
            fy,
            on_front,
            labels,
        )
    return ParetoResult(
        results=str(results),
        x=x_col,
        y=y_col,
        x_max=x_max,
        y_max=y_max,
        keys=keys,
        shown=shown,
        points=table.num_rows,
        failures=sum(e is not None for e in errors),
        without_values=table.num_rows - len(usable) - sum(e is not None for e in errors),
        front=rows,
        plots=plots,
    )
