"""Scenarios as the application layer takes them: a file, a mapping, or an already resolved Scenario."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from aiinfra.catalog.parse import cached, code_identity
from aiinfra.catalog.resolve import resolve
from aiinfra.specs.scenario import Scenario, ScenarioInput, apply_set, parse_scenario, read_yaml

ScenarioLike = str | Path | Mapping[str, Any] | Scenario
"""A scenario file path, a mapping in the file format (examples/scenario-reference.yaml), or a Scenario."""


def _set_list(overrides: Mapping[str, Any] | Iterable[str] | None) -> list[str]:
    """``{"training.plan.tp": 8}`` or ``["training.plan.tp=8"]`` -> the CLI's ``--set`` assignments."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [
            f"{k}={yaml.safe_dump(v, default_flow_style=True).strip().removesuffix('...').strip()}"
            for k, v in overrides.items()
        ]
    return list(overrides)


def load_scenario(source: ScenarioLike, set: Mapping[str, Any] | Iterable[str] | None = None) -> Scenario:
    """Read, override, validate and resolve a scenario.

    ``source`` is a YAML file path, a mapping in the same format, or a resolved :class:`Scenario` (returned as
    is when there are no overrides). ``set`` overrides keys like the CLI's ``--set``: a mapping of dotted keys to
    values (``{"training.plan.tp": 8}``) or a list of ``KEY=VALUE`` strings. Bad input raises
    :class:`aiinfra.errors.SpecError` naming the field, the value and the fix."""
    sets = _set_list(set)
    if isinstance(source, Scenario):
        if not sets:
            return source
        data = copy.deepcopy(source.mapping) if source.mapping is not None else read_yaml(source.path)
        path = source.path
    elif isinstance(source, Mapping):  # a deep copy: overrides must not write into the caller's mapping
        data, path = copy.deepcopy(dict(source)), ""
    else:
        data, path = read_yaml(source), str(source)
    for assignment in sets:
        apply_set(data, assignment)
    return replace(resolve(_parsed(data, path), path), mapping=data)


def _parsed(data: dict[str, Any], path: str) -> ScenarioInput:
    """``parse_scenario`` of a copy of ``data``. A scenario file's validated input goes through the catalog's
    on-disk cache (one entry per file path, keyed by the content after overrides and by the validating code,
    :func:`aiinfra.catalog.parse.code_identity`): the same file read again builds no pydantic validator (start-up
    time). Invalid input is never cached, so it fails with the same error every time; mappings (the API, sweeps)
    are validated afresh."""
    if not path:
        return parse_scenario(copy.deepcopy(data))
    text = json.dumps(data, sort_keys=True, default=repr)
    identity = f"{code_identity()}|{hashlib.blake2b(text.encode(), digest_size=16).hexdigest()}"
    return cached(f"scenario|{Path(path).resolve()}", identity, lambda: parse_scenario(copy.deepcopy(data)))
