"""`aiinfra mig ACCELERATOR [--layout P,P,...]`: MIG profiles and valid layouts, or check one layout."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP
from aiinfra.report.render import table


def _mig(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.mig(args.accelerator, args.layout)
    obj = r.to_dict()
    gib = 2**30
    rows = [
        [
            p["name"],
            f"{p['compute_slices']}/{obj['compute_slices']}",
            f"{p['memory_slices']}/{obj['memory_slices']}",
            f"{p['memory_bytes'] / gib:.1f}",
            f"{p['memory_bw_bytes_per_s'] / 1e12:.2f}",
            p["max_instances"],
            "{" + ",".join(map(str, p["starts"])) + "}",
            "unknown" if p["copy_engines"] is None else p["copy_engines"],
            "unknown" if p["nvdec"] is None else p["nvdec"],
        ]
        for p in obj["profiles"]
    ]
    text = f"MIG profiles of {obj['accelerator']}\n" + table(
        ["profile", "compute", "memory", "GiB", "TB/s", "max", "starts", "CE", "NVDEC"], rows
    )
    if "layout" in obj:
        placed = ", ".join(f"{pl['profile']}@slice{pl['start_slice']}" for pl in obj["layout"])
        text += f"\nlayout valid: {placed}\n"
    else:
        lines = [" + ".join(pl["profile"] for pl in lay) for lay in obj["full_layouts"]]
        text += f"\n{len(lines)} full layouts (no further instance fits):\n" + "\n".join(f"  {s}" for s in lines) + "\n"
    return obj, text


def register(sub: Any) -> None:
    """Add ``aiinfra mig``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("mig", help=COMMAND_HELP["mig"])
    p.add_argument("accelerator", help="catalog accelerator id with MIG support (e.g. nvidia-a100-sxm4-80gb)")
    p.add_argument("--layout", default=None, help="comma-separated profiles to place on one GPU, e.g. 3g.40gb,2g.20gb")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.set_defaults(handler=_mig)
