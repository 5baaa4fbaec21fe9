"""`aiinfra check SCENARIO.yaml`: validate a scenario and show what it resolves to."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import api
from aiinfra.commands import add_scenario_args
from aiinfra.report.render import jsonable, key_values
from aiinfra.specs.scenario import load_scenario


def _check(args: argparse.Namespace) -> tuple[Any, str]:
    sc = load_scenario(args.scenario, args.set)
    c = sc.cluster
    hw = {
        "accelerator": api.accelerator_summary(c.accelerator),
        "count": c.count,
        "per_node": c.per_node,
        "nodes": c.nodes,
        "system": c.system_id,
        "scale_up_domain": c.scale_up_domain,
        "scale_up_bw_one_way_bytes_per_s": c.scale_up_bw_one_way_bytes_per_s,
        "scale_out_bw_one_way_bytes_per_s": c.scale_out_bw_one_way_bytes_per_s,
    }
    obj = {
        "valid": True,
        "model": api.model_summary(sc.model),
        "hardware": hw,
        "training": jsonable(sc.training),
        "inference": jsonable(sc.inference),
        "sections": sorted(sc.source.extras),
    }
    text = key_values(
        [
            ("model", f"{sc.model.id} ({sc.model.num_layers} layers, hidden {sc.model.hidden_size})"),
            ("accelerator", c.accelerator.id),
            ("count", c.count),
            ("per_node", c.per_node),
            ("nodes", c.nodes),
            ("system", c.system_id or "unknown"),
            ("training", "yes" if sc.training else "no"),
            ("inference", "yes" if sc.inference else "no"),
        ],
        f"scenario {args.scenario}: valid",
    )
    return obj, text


def register(sub: Any) -> None:
    p = sub.add_parser("check", help="validate a scenario file and show what it resolves to")
    add_scenario_args(p)
    p.set_defaults(handler=_check)
