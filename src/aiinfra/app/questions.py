"""The one table of scenario questions: each entry names the question, its request (the resolved scenario plus
that question's options, a frozen dataclass), the function that answers it, its result type, whether it runs
long (a job in the web app) and whether it reports progress.

Every shell derives what it offers from this table: the CLI's option flags (:func:`add_option_args`), the Python
API's keywords (tests/test_questions.py checks them), a sweep's options and a point's identity (the request's
options with their defaults), the web app's question routes. Adding a question = a request class (when it has
options), a function and a result in the app layer, and one :data:`TABLE` entry (docs/architecture.md).

Functions and result types are named by import path and loaded on first use, so reading the table imports no
planner (start-up time).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiinfra.errors import SpecError

if TYPE_CHECKING:
    from aiinfra.app.base import Result
    from aiinfra.specs.scenario import Scenario

Progress = Callable[[int, int | None], None]
"""A long answer's progress callback: (done, total or None)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Request:
    """A scenario question's input: the resolved scenario (a question with options subclasses this)."""

    scenario: Scenario

    @property
    def simulates(self) -> bool:
        """Whether answering runs the discrete-event simulator (the web app bounds such requests' size)."""
        return False


def _option(default: Any, help: str, cli: str, metavar: str | None = None) -> Any:
    """A request option: its default, its help, and how the CLI reads it (``list``: comma-separated words;
    ``flag``: present = True; ``seed``: a seed, specs.cli_types.seed)."""
    return field(default=default, metadata={"help": help, "cli": cli, "metavar": metavar})


_SEED_HELP = "random seed (same seed, same result)"


@dataclass(frozen=True, kw_only=True, slots=True)
class CapacityRequest(Request):
    """The cheapest fleet for the scenario's demand (``aiinfra capacity``)."""

    accelerators: tuple[str, ...] = _option(
        (), "comma-separated catalog ids to consider (default: the scenario's)", "list"
    )
    """Catalog accelerator ids to consider; empty = the scenario's."""
    engines: tuple[str, ...] = _option(
        (),
        "comma-separated serving engines to consider: vllm, trtllm, sglang (default: the scenario's inference.engine)",
        "list",
    )
    """Serving engines to consider; empty = the scenario's inference.engine."""
    simulate: bool = _option(
        False,
        "check the chosen deployment by simulating one replica: the most users it keeps "
        "within the SLO (closed loop) and the highest Poisson rate",
        "flag",
    )
    """Check the chosen deployment by simulating one replica."""
    seed: int = _option(0, _SEED_HELP, "seed")
    """Seed of the simulated check."""
    disaggregate: bool = _option(
        False, "also size prefill/decode pools (xPyD) and recommend them where they bill less at the SLO", "flag"
    )
    """Also size disaggregated prefill/decode pools."""

    @property
    def simulates(self) -> bool:
        """Whether the simulated check was asked (``simulate``)."""
        return self.simulate


@dataclass(frozen=True, kw_only=True, slots=True)
class SimulateRequest(Request):
    """A discrete-event serving simulation (``aiinfra simulate``, ``--find-max-rate``)."""

    seed: int = _option(0, _SEED_HELP, "seed")
    """Seed of the arrivals and lengths (same seed, same result)."""

    @property
    def simulates(self) -> bool:
        """Always: the question is a simulation."""
        return True


@dataclass(frozen=True, slots=True)
class Question:
    """One entry of :data:`TABLE`."""

    name: str
    """The question's name: the CLI command, ``app.<name>``, the sweep's ``--question``, the web route."""
    function: str
    """``module:function`` answering it: ``function(scenario, **options[, progress])``."""
    result: str
    """``module:class`` of its result."""
    request: type[Request] = Request
    """Its request: the scenario plus the question's options."""
    long_running: bool = False
    """May run for long: the web app runs it as a job."""
    reports_progress: bool = False
    """Its function takes ``progress=`` (called while it simulates)."""
    sweepable: bool = True
    """A sweep may ask it at every point of a grid."""

    @property
    def route(self) -> str:
        """The web app's path segment (``/api/v1/<route>``)."""
        return self.name.replace("_", "-")

    def answerer(self) -> Callable[..., Result]:
        """The app-layer function (imported on first use)."""
        return _load(self.function)  # type: ignore[no-any-return]

    def result_type(self) -> type[Result]:
        """The result class (imported on first use)."""
        return _load(self.result)  # type: ignore[no-any-return]

    def option_fields(self) -> tuple[dataclasses.Field[Any], ...]:
        """The request's fields beyond the scenario, in declaration order."""
        return tuple(f for f in dataclasses.fields(self.request) if f.name != "scenario")

    def options(self, given: Mapping[str, Any] | None = None, where: str = "options") -> dict[str, Any]:
        """Every option of the question, defaults filled in, sequences as tuples (equal requests compare and hash
        equally however they were given); an unknown option is a SpecError naming the known ones."""
        known = {f.name: f for f in self.option_fields()}
        given = dict(given or {})
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise SpecError(where, given, f"{self.name} takes {', '.join(known) or 'no options'}", "give only those")
        out: dict[str, Any] = {}
        for name, f in known.items():
            value = given.get(name, f.default)
            if isinstance(f.default, tuple):
                value = tuple(value) if value else ()
            out[name] = value
        return out

    def request_of(self, scenario: Scenario, options: Mapping[str, Any] | None = None) -> Request:
        """The request for ``scenario`` with ``options`` (checked, defaults filled in)."""
        return self.request(scenario=scenario, **self.options(options))

    def answer(self, request: Request, progress: Progress | None = None) -> Result:
        """Answer ``request``; ``progress`` reaches a long-running question's function while it simulates."""
        options = {f.name: getattr(request, f.name) for f in self.option_fields()}
        if self.reports_progress and progress is not None and request.simulates:
            options["progress"] = progress
        return self.answerer()(request.scenario, **options)


def _load(path: str) -> Any:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


#: every scenario question, in the order the CLI lists them
TABLE: tuple[Question, ...] = (
    Question("check", "aiinfra.app.catalog_queries:check", "aiinfra.app.catalog_queries:CheckResult"),
    Question("train", "aiinfra.app.training:train", "aiinfra.app.training:TrainResult"),
    Question("memory", "aiinfra.app.training:memory", "aiinfra.app.training:MemoryResult"),
    Question("infer", "aiinfra.app.inference:infer", "aiinfra.app.inference:InferResult"),
    Question(
        "capacity",
        "aiinfra.app.inference:capacity",
        "aiinfra.app.inference:CapacityResult",
        CapacityRequest,
        long_running=True,
        reports_progress=True,
    ),
    Question(
        "simulate",
        "aiinfra.app.simulation:simulate",
        "aiinfra.app.simulation:SimulateResult",
        SimulateRequest,
        long_running=True,
    ),
    Question(
        "find_max_rate",
        "aiinfra.app.simulation:find_max_rate",
        "aiinfra.app.simulation:MaxRateResult",
        SimulateRequest,
        long_running=True,
        reports_progress=True,
        sweepable=False,
    ),
    Question("cost", "aiinfra.app.cost:cost", "aiinfra.app.cost:CostResult"),
    Question("datacenter", "aiinfra.app.datacenter:datacenter", "aiinfra.app.datacenter:DatacenterResult"),
    Question("tco", "aiinfra.app.tco:tco", "aiinfra.app.tco:TcoResult"),
)

#: name -> entry
QUESTION: dict[str, Question] = {q.name: q for q in TABLE}


def question(name: str, where: str = "question") -> Question:
    """The entry named ``name`` (``find-max-rate`` as the web writes it too), or a SpecError listing them."""
    q = QUESTION.get(name.replace("-", "_"))
    if q is None:
        raise SpecError(where, name, f"unknown question (known: {', '.join(QUESTION)})", "name one of them")
    return q


def option_fields(questions: tuple[Question, ...] = TABLE) -> dict[str, dataclasses.Field[Any]]:
    """Every option any of ``questions`` takes, by name (first declaration wins): what a shell offering all of
    them (the sweep command) must accept."""
    out: dict[str, dataclasses.Field[Any]] = {}
    for q in questions:
        for f in q.option_fields():
            out.setdefault(f.name, f)
    return out
