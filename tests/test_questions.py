"""The one question table (app/questions.py): every shell's list of questions and options is the table's."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import typing

import pytest

from aiinfra import api, app
from aiinfra.app.questions import QUESTION, TABLE, CapacityRequest, SimulateRequest, question
from aiinfra.commands import add_option_args, options_from_args
from aiinfra.errors import SpecError

from .conftest import EXAMPLES

INFER = EXAMPLES / "infer-llama3.1-70b-h100.yaml"


def test_each_entry_loads_its_function_and_result() -> None:
    for q in TABLE:
        fn = q.answerer()
        assert fn is getattr(app, q.name)
        assert typing.get_type_hints(fn)["return"] is q.result_type()
        params = list(inspect.signature(fn).parameters)
        assert params[0] == "scenario"
        # the function takes exactly the request's options (and progress= when it reports progress)
        assert [p for p in params[1:] if p != "progress"] == [f.name for f in q.option_fields()]
        assert ("progress" in params) == q.reports_progress


def test_app_questions_and_the_sweep_are_the_sweepable_entries() -> None:
    assert list(app.QUESTIONS) == [q.name for q in TABLE if q.sweepable]
    assert "find_max_rate" not in app.QUESTIONS


def test_the_web_routes_are_the_table() -> None:
    from aiinfra.web import questions as web

    assert list(web.QUESTIONS) == [q.route for q in TABLE]
    assert {"capacity", "simulate", "find-max-rate"} == web.LONG_RUNNING


def test_api_keywords_are_the_request_fields() -> None:
    for q in TABLE:
        fn = getattr(api, q.name)
        keywords = [p for p in inspect.signature(fn).parameters if p not in ("scenario", "set", "catalog")]
        assert keywords == [f.name for f in q.option_fields()], q.name


def test_options_fill_defaults_and_refuse_unknown_names() -> None:
    cap = QUESTION["capacity"]
    assert cap.options({"accelerators": ["a", "b"]}) == {
        "accelerators": ("a", "b"),
        "engines": (),
        "simulate": False,
        "seed": 0,
        "disaggregate": False,
    }
    assert cap.options({"accelerators": ["a"]}) == cap.options({"accelerators": ("a",), "seed": 0})
    with pytest.raises(SpecError, match="capacity takes accelerators, engines, simulate, seed, disaggregate"):
        cap.options({"sed": 1})
    with pytest.raises(SpecError, match="infer takes no options"):
        QUESTION["infer"].options({"seed": 1})
    with pytest.raises(SpecError, match="unknown question"):
        question("nope")
    assert question("find-max-rate").name == "find_max_rate"


def test_simulating_requests_are_known_by_their_options() -> None:
    sc = object()  # the property reads no scenario field
    assert CapacityRequest(scenario=sc, simulate=True).simulates  # type: ignore[arg-type]
    assert not CapacityRequest(scenario=sc).simulates  # type: ignore[arg-type]
    assert SimulateRequest(scenario=sc).simulates  # type: ignore[arg-type]


def test_cli_flags_are_the_request_fields() -> None:
    parser = argparse.ArgumentParser()
    add_option_args(parser, ["capacity"])
    args = parser.parse_args(["--accelerators", "a, b", "--simulate", "--seed", "7"])
    assert options_from_args(args, "capacity") == {
        "accelerators": ("a", "b"),
        "engines": (),
        "simulate": True,
        "seed": 7,
        "disaggregate": False,
    }
    flags = {a.dest for a in parser._actions} - {"help"}
    assert flags == {f.name for f in dataclasses.fields(CapacityRequest)} - {"scenario"}


def test_answer_by_name_is_the_function() -> None:
    sc = app.load_scenario(INFER)
    assert app.answer("infer", INFER).to_dict() == app.infer(sc).to_dict()
    with pytest.raises(SpecError, match="infer takes no options"):
        app.answer("infer", INFER, seed=1)
