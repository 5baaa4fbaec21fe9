"""What the routes read from a request besides the scenario's own checks: the JSON body, the capacity options from the
query string, the row set of a validation table, and the OpenAPI description of a scenario body."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request

from aiinfra.errors import SpecError
from aiinfra.web import questions
from aiinfra.web.guard import parse_json

VALIDATION_ROWS = ("training", "inference")

#: the request body of a route that takes a scenario, as the OpenAPI schema shows it
SCENARIO_BODY = {
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


async def json_body(request: Request) -> Any:
    """The request's body as JSON (the guard has read and bounded it)."""
    return parse_json(await request.body())


def options(
    seed: int, accelerators: str | None, engines: str | None, simulate: bool, disaggregate: bool = False
) -> questions.Options:
    """A question's options from the query string (``accelerators`` and ``engines`` comma-separated)."""

    def split(text: str | None) -> tuple[str, ...]:
        return tuple(x.strip() for x in (text or "").split(",") if x.strip())

    return questions.Options(
        seed=seed,
        accelerators=split(accelerators),
        engines=split(engines),
        simulate=simulate,
        disaggregate=disaggregate,
    )


def validation_paths(rows: str) -> list[Path]:
    """The shipped validation files of a row set (training, inference); a SpecError naming ``rows`` otherwise."""
    from aiinfra.app.validation import shipped_cases

    if rows not in VALIDATION_ROWS:
        raise SpecError("rows", rows, f"unknown row set (known: {', '.join(VALIDATION_ROWS)})", "name one of them")
    return [p for p in shipped_cases() if Path(p).stem == rows]
