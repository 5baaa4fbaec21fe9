"""CLI commands. Each module has ``register(subparsers)``; handlers return (json_obj, text)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

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
    "prices": "refresh the cloud prices from the providers (needs aiinfra[prices])",
    "export": "launch command (vllm, sglang, trtllm) or Kubernetes manifest of the planned deployment",
    "calibrate": "fit efficiency factors to your own benchmark results; write a catalog overlay (--catalog-overlay "
    "DIR) every command applies",
    "probe": "microbenchmark this machine's GPU (GEMM, attention, HBM, NCCL) into a catalog overlay (needs PyTorch "
    "and an NVIDIA or AMD GPU)",
}


def command_module(command: str) -> str:
    """The module that registers ``command`` (it may not exist: a typo)."""
    return f"aiinfra.commands.{COMMAND_ALIASES.get(command, command)}_cmd"


def add_scenario_args(p: argparse.ArgumentParser) -> None:
    """The arguments every scenario command takes: the scenario file, ``--json``, ``--set KEY=VALUE`` overrides and
    ``--catalog-overlay DIR``."""
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


def _words(text: str) -> tuple[str, ...]:
    """A comma-separated list flag's value: its words, stripped, empty ones dropped."""
    return tuple(w.strip() for w in text.split(",") if w.strip())


def add_option_args(p: argparse.ArgumentParser, questions: Sequence[str] = (), name_questions: bool = False) -> None:
    """One flag per request option of ``questions`` (all of app/questions.py's table when empty): ``--seed``,
    ``--accelerators a,b`` … as each field's metadata says; ``name_questions`` starts each help with the questions
    that take it (a shell offering several questions: the sweep)."""
    from aiinfra.app.questions import QUESTION, TABLE, option_fields
    from aiinfra.specs import cli_types

    entries = tuple(QUESTION[q] for q in questions) if questions else TABLE
    for name, f in option_fields(entries).items():
        help_text = str(f.metadata["help"])
        if name_questions:
            takers = [q.name for q in entries if any(o.name == name for o in q.option_fields())]
            help_text = f"{', '.join(takers)}: {help_text}"
        flag, kind = "--" + name.replace("_", "-"), f.metadata["cli"]
        if kind == "flag":
            p.add_argument(flag, action="store_true", help=help_text)
        elif kind == "list":
            p.add_argument(flag, type=_words, default=f.default, metavar="A,B", help=help_text)
        elif kind == "seed":
            p.add_argument(flag, type=cli_types.seed, default=f.default, help=help_text)
        else:
            raise ValueError(f"request option {name}: unknown cli kind {kind!r}")


def options_from_args(args: argparse.Namespace, question: str) -> dict[str, Any]:
    """The request options of ``question`` as parsed from its flags (:func:`add_option_args`)."""
    from aiinfra.app.questions import QUESTION

    return {f.name: getattr(args, f.name) for f in QUESTION[question].option_fields()}
