"""CLI commands. Each module has ``register(subparsers)``; handlers return (json_obj, text)."""

from __future__ import annotations

import argparse

#: modules whose ``register`` adds a sub-command (order = order in --help)
COMMAND_MODULES = [
    "aiinfra.commands.catalog_cmd",
    "aiinfra.commands.model_cmd",
    "aiinfra.commands.check_cmd",
    "aiinfra.commands.train_cmd",
    "aiinfra.commands.infer_cmd",
    "aiinfra.commands.capacity_cmd",
    "aiinfra.commands.simulate_cmd",
    "aiinfra.commands.validate_cmd",
    "aiinfra.commands.cost_cmd",
    "aiinfra.commands.datacenter_cmd",
    "aiinfra.commands.tco_cmd",
    "aiinfra.commands.sweep_cmd",
    "aiinfra.commands.mig_cmd",
    "aiinfra.commands.pack_cmd",
    "aiinfra.commands.schedule_cmd",
    "aiinfra.commands.web_cmd",
]

#: commands registered by a module not named after them (``aiinfra.commands.<command>_cmd``)
COMMAND_ALIASES = {"memory": "train"}

#: command -> its one-line help: ``aiinfra --help`` lists the commands from this table without importing any
#: command module (start-up time); each module's ``register`` passes the same line to argparse
COMMAND_HELP = {
    "catalog": "list and show catalog rows (accelerators, systems, interconnects, models, benchmarks)",
    "model": "model architecture and derived figures",
    "check": "validate a scenario file and show what it resolves to",
    "train": "training plan: memory, layout search, step time, MFU, time-to-train, energy (with a reliability: "
    "section: failures, checkpoints, restarts)",
    "memory": "training memory per accelerator (incl. LoRA / QLoRA and CPU offload)",
    "infer": "serving latency, throughput, KV capacity and memory per accelerator",
    "capacity": "cheapest deployment for a demand (users or requests/s) under SLOs",
    "simulate": "discrete-event serving simulation (continuous batching, paged KV)",
    "validate": "predict published measurements from their specs and compare",
    "cost": "cloud bill per provider and pricing kind (spot preemptions), energy and carbon",
    "datacenter": "nodes, racks, cooling, facility power, network fabric, storage bandwidth",
    "tco": "on-premise vs cloud cost over time with the breakeven month",
    "sweep": "one question over a grid of scenario keys, resumable, into Parquet; --report: the Pareto front and "
    "its plot",
    "mig": "MIG instance profiles and every valid full layout of an accelerator, or check one",
    "pack": "pack services, notebooks and fine-tunes onto the fewest MIG-partitioned GPUs",
    "schedule": "simulate a GPU-cluster scheduler on a job trace (fifo, backfill, gang, priority, fairshare; node-, "
    "topology- and MIG-aware placement)",
    "web": "local web app and HTTP API: every planner in the browser",
}


def command_module(command: str) -> str:
    """The module that registers ``command`` (it may not exist: a typo)."""
    return f"aiinfra.commands.{COMMAND_ALIASES.get(command, command)}_cmd"


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
        "prices/cloud.csv; each row with its sources, like the shipped ones)",
    )
