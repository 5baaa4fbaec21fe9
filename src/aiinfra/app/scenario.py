"""Scenarios as the application layer takes them: a file, a mapping, or an already resolved Scenario."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from aiinfra.catalog.parse import cached, code_identity
from aiinfra.catalog.resolve import resolve
from aiinfra.diskcache import blake2b
from aiinfra.specs.scenario import Scenario, ScenarioInput, apply_set, parse_scenario, read_yaml

ScenarioLike = str | Path | Mapping[str, Any] | Scenario
"""A scenario file path, a mapping in the file format (examples/scenario-reference.yaml), or a Scenario."""


def _set_list(overrides: Mapping[str, Any] | Iterable[str] | None) -> list[str]:
    """``{"training.plan.tp": 8}`` or ``["training.plan.tp=8"]`` -> the CLI's ``--set`` assignments."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        import yaml

        return [
            f"{k}={yaml.safe_dump(v, default_flow_style=True).strip().removesuffix('...').strip()}"
            for k, v in overrides.items()
        ]
    return list(overrides)


def load_scenario(source: ScenarioLike, set: Mapping[str, Any] | Iterable[str] | None = None) -> Scenario:
    """Read, override, validate and resolve a scenario.

    ``source`` is a YAML file path, a mapping in the same format, or a resolved :class:`Scenario` (returned as
    is when there are no overrides, its cluster bound to the active catalog's tables). ``set`` overrides keys like
    the CLI's ``--set``: a mapping of dotted keys to values (``{"training.plan.tp": 8}``) or a list of
    ``KEY=VALUE`` strings. Bad input raises :class:`aiinfra.errors.SpecError` naming the field, the value and the
    fix."""
    sets = _set_list(set)
    if isinstance(source, Scenario):
        if not sets:
            return _bound(source)
        data = copy.deepcopy(source.mapping) if source.mapping is not None else read_yaml(source.path)
        path = source.path
    elif isinstance(source, Mapping):  # a deep copy: overrides must not write into the caller's mapping
        data, path = copy.deepcopy(dict(source)), ""
    else:
        path = str(source)
        data, inp = _file_input(path, sets)
        return replace(resolve(inp, path), mapping=data)
    for assignment in sets:
        apply_set(data, assignment)
    return replace(resolve(parse_scenario(copy.deepcopy(data)), path), mapping=data)


def _bound(scenario: Scenario) -> Scenario:
    """``scenario`` with its cluster carrying the active catalog's tables (a Scenario resolved earlier, perhaps
    against another catalog, is answered against the catalog in force, as the planners' lookups always were)."""
    from aiinfra.catalog.tables import domain_tables

    tables = domain_tables()
    if scenario.cluster.tables is tables:
        return scenario
    return replace(scenario, cluster=replace(scenario.cluster, tables=tables))


def _file_input(path: str, sets: list[str]) -> tuple[dict[str, Any], ScenarioInput]:
    """A scenario file's mapping (overrides applied) and its validated input. Kept in the catalog's on-disk cache
    (one entry per file path, keyed by the file's bytes, the overrides and the validating code,
    :func:`aiinfra.catalog.parse.code_identity`): reading the same file again parses no YAML and
    builds no pydantic validator (start-up time). Invalid input is never cached, so it fails with the same error
    every time."""

    def build() -> tuple[dict[str, Any], ScenarioInput]:
        data = read_yaml(path)
        for assignment in sets:
            apply_set(data, assignment)
        return data, parse_scenario(copy.deepcopy(data))

    try:
        content = blake2b(Path(path).read_bytes(), digest_size=16).hexdigest()
    except OSError:  # absent, a folder or unreadable: read_yaml says so
        return build()
    identity = f"{code_identity()}|{content}|{json.dumps(sets)}"
    return cached(f"scenario|{Path(path).resolve()}", identity, build)
