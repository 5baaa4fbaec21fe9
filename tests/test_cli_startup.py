"""The CLI's start-up: `--version` and `--help` import no command module, no numpy and no application layer; the
command table lists every command with the help its module registers."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from aiinfra.cli import build_parser
from aiinfra.commands import COMMAND_HELP, COMMAND_MODULES

_PROBE = """
import contextlib, io, sys
from aiinfra.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main([{flag!r}])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "pydantic", "yaml")
               or m.startswith(("aiinfra.app", "aiinfra.commands.", "aiinfra.specs", "aiinfra.catalog")))
print(",".join(heavy))
"""


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_nothing_heavy(flag: str) -> None:
    # a fresh interpreter: this test process has imported everything already
    done = subprocess.run([sys.executable, "-c", _PROBE.format(flag=flag)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def _subcommand_help(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {c.dest: c.help for c in action._choices_actions}


def test_the_table_lists_every_command_with_its_modules_help() -> None:
    registered: dict[str, str | None] = {}
    for module in COMMAND_MODULES:
        parser = argparse.ArgumentParser()
        importlib.import_module(module).register(parser.add_subparsers())
        registered |= _subcommand_help(parser)
    assert registered == COMMAND_HELP
    assert _subcommand_help(build_parser(["--help"])) == COMMAND_HELP


def test_a_command_imports_only_its_module() -> None:
    parser = build_parser(["memory", "x.yaml"])
    assert list(_subcommand_help(parser)) == ["train", "memory"]  # memory is registered by train_cmd


def test_an_absent_section_has_nothing_to_check() -> None:
    # parse_scenario validates the cost, datacenter and tco sections only when given (start-up time): valid because
    # an absent section takes every default, so none may have a required field
    import dataclasses

    from aiinfra.specs.scenario import _SECTION_SPECS

    for name, (module, cls_name) in _SECTION_SPECS.items():
        if name == "reliability":  # present = on: checked whenever present, required fields and all
            continue
        cls = getattr(importlib.import_module(module), cls_name)
        missing = dataclasses.MISSING
        required = [f.name for f in dataclasses.fields(cls) if f.default is missing and f.default_factory is missing]
        assert required == [], cls


def test_a_scenario_without_sections_loads_no_section_specs() -> None:
    # `infer`'s example has no cost, datacenter, tco or reliability section: their specs are not imported (start-up)
    probe = (
        "import sys; from aiinfra.specs.scenario import parse_scenario;"
        "parse_scenario({'model': 'x', 'hardware': {'accelerator': 'a'}});"
        "print(sorted(m for m in sys.modules if m in ('aiinfra.specs.cost', 'aiinfra.specs.reliability')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_scenario_file_is_validated_once_then_read_from_the_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the validated input of a scenario file is cached (app/scenario.py): a second load builds no pydantic
    # validator and gives the same scenario; a changed file is validated again, and bad input is never cached
    from aiinfra.app.scenario import load_scenario
    from aiinfra.errors import SpecError
    from aiinfra.specs import common

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("AIINFRA_NO_CACHE", raising=False)
    path = tmp_path / "s.yaml"
    path.write_text("model: meta-llama-3.1-8b\nhardware: {accelerator: nvidia-h100-sxm5-80gb, count: 1}\n")
    first = load_scenario(str(path))
    monkeypatch.setattr(common, "_ADAPTERS", {})
    again = load_scenario(str(path))
    assert again.source == first.source and common._ADAPTERS == {}
    path.write_text("model: meta-llama-3.1-8b\nhardware: {accelerator: nvidia-h100-sxm5-80gb, count: 2}\n")
    assert load_scenario(str(path)).source.hardware.count == 2
    path.write_text("model: meta-llama-3.1-8b\nhardware: {accelerator: nvidia-h100-sxm5-80gb, count: -1}\n")
    for _ in range(2):
        with pytest.raises(SpecError, match=r"hardware\.count"):
            load_scenario(str(path))
