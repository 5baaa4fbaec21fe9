"""CLI commands. Each module has ``register(subparsers)``; handlers return (json_obj, text)."""

from __future__ import annotations

import argparse

#: modules whose ``register`` adds a sub-command (order = order in --help)
COMMAND_MODULES = [
    "aiinfra.commands.catalog_cmd",
    "aiinfra.commands.prices_cmd",
    "aiinfra.commands.model_cmd",
    "aiinfra.commands.check_cmd",
    "aiinfra.commands.train_cmd",
    "aiinfra.commands.infer_cmd",
    "aiinfra.commands.capacity_cmd",
    "aiinfra.commands.export_cmd",
    "aiinfra.commands.simulate_cmd",
    "aiinfra.commands.validate_cmd",
    "aiinfra.commands.cost_cmd",
    "aiinfra.commands.datacenter_cmd",
    "aiinfra.commands.tco_cmd",
    "aiinfra.commands.sweep_cmd",
    "aiinfra.commands.mig_cmd",
    "aiinfra.commands.pack_cmd",
    "aiinfra.commands.schedule_cmd",
    "aiinfra.commands.calibrate_cmd",
    "aiinfra.commands.probe_cmd",
    "aiinfra.commands.web_cmd",
]


def add_scenario_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", help="scenario YAML file (see examples/)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario key, e.g. --set training.plan.tp=8 (repeatable)",
    )
    p.add_argument(
        "--catalog-overlay",
        metavar="DIR",
        help="add or replace catalog rows from DIR (accelerators.yaml, systems.yaml, efficiency.yaml, "
        "prices/cloud.csv, calibration.yaml from aiinfra calibrate; each row with its sources, like the shipped ones)",
    )
