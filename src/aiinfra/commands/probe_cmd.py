"""`aiinfra probe --out DIR [--accelerator ID]`."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP


def _probe(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.probe(args.out, args.accelerator)
    d = r.device
    lines = [
        f"probed {d['count']} × {d['name']} ({d['runtime']}, driver {d['driver'] or 'unknown'}, "
        f"PyTorch {d['torch']}) as {r.accelerator}"
    ]
    for c in r.curves:
        pts = ", ".join(f"{x:.3g}: {y:.2f}" for x, y in c["points"])
        lines.append(f"  {c['kind']}{' ' + c['dtype'] if c.get('dtype') else ''}: {pts}")
    lines.append(f"written: {r.out_dir}/efficiency.yaml — use it: aiinfra infer S.yaml --catalog-overlay {r.out_dir}")
    return r.to_dict(), "\n".join(lines)


def register(sub: Any) -> None:
    """Add ``aiinfra probe``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("probe", help=COMMAND_HELP["probe"])
    p.add_argument("--out", required=True, metavar="DIR", help="overlay folder to write (efficiency.yaml)")
    p.add_argument("--accelerator", metavar="ID", help="catalog id of the GPU (default: matched from its name)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.set_defaults(handler=_probe)
