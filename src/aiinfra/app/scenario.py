"""Scenarios as the application layer takes them: a file, a mapping, or an already resolved Scenario."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from aiinfra.specs.scenario import Scenario, parse_scenario, read_yaml, resolve

ScenarioLike = str | Path | Mapping[str, Any] | Scenario
"""A scenario file path, a mapping in the file format (examples/scenario-reference.yaml), or a Scenario."""


def _set_list(overrides: Mapping[str, Any] | Iterable[str] | None) -> list[str]:
    """``{"training.plan.tp": 8}`` or ``["training.plan.tp=8"]`` -> the CLI's ``--set`` assignments."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{k}={yaml.safe_dump(v, default_flow_style=True).strip().removesuffix('...').strip()}"
                for k, v in overrides.items()]  # fmt: skip
    return list(overrides)


def load_scenario(
    source: ScenarioLike, set: Mapping[str, Any] | Iterable[str] | None = None
) -> Scenario:
    """Read, override, validate and resolve a scenario.

    ``source`` is a YAML file path, a mapping in the same format, or a resolved :class:`Scenario` (returned as
    is when there are no overrides). ``set`` overrides keys like the CLI's ``--set``: a mapping of dotted keys to
    values (``{"training.plan.tp": 8}``) or a list of ``KEY=VALUE`` strings. Bad input raises
    :class:`aiinfra.errors.SpecError` naming the field, the value and the fix."""
    sets = _set_list(set)
    if isinstance(source, Scenario):
        if not sets:
            return source
        return resolve(parse_scenario(_source_mapping(source), sets), source.path)
    if isinstance(source, Mapping):
        return resolve(parse_scenario(dict(source), sets), "")
    return resolve(parse_scenario(read_yaml(source), sets), str(source))


def _source_mapping(sc: Scenario) -> dict[str, Any]:
    """The file-format mapping a resolved scenario came from (for re-applying overrides)."""
    if sc.path:
        return read_yaml(sc.path)
    from aiinfra.report.render import jsonable

    src = jsonable(sc.source)
    extras = src.pop("extras", {}) or {}
    return {k: v for k, v in {**src, **extras}.items() if v is not None}
