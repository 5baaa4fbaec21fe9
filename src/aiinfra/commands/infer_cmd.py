"""`aiinfra infer`."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_scenario_args
from aiinfra.report.render import key_values
from aiinfra.report.text import GB


def _infer(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.infer(app.load_scenario(args.scenario, args.set))
    sc, e, layout = r.scenario, r.estimate, r.layout
    m = e.memory_per_accelerator
    pairs: list[tuple[str, Any]] = [
        ("deployment", f"{e.replicas} replica(s) × {layout} pp{e.pp} on {e.accelerator}, weights "
                       f"{e.weight_precision}, KV {e.kv_precision}, engine {e.engine}"),
        ("fits", e.fits),
        ("memory per accelerator", f"weights {m['weights_bytes'] / GB:.1f} GB, KV cache {m['kv_cache_bytes'] / GB:.1f} "
                                   f"GB, activations {m['activations_bytes'] / GB:.2f} GB, reserve "
                                   f"{m['runtime_reserve_bytes'] / GB:.1f} GB of {m['capacity_bytes'] / GB:.1f} GB"),
        ("KV capacity (tokens per replica)", e.kv_capacity_tokens),
        ("max concurrent sequences", e.max_concurrent_seqs),
        ("load", e.load),
        ("batch (sequences per replica)", e.batch_seqs),
        ("TTFT", f"{e.ttft_s * 1e3:.1f} ms (prefill bound: {e.prefill_bound})"),
        ("TPOT", f"{e.tpot_s * 1e3:.2f} ms (decode bound: {e.decode_bound})"),
        ("output tokens/s (all replicas)", e.output_tokens_per_s),
        ("output tokens/s per user", e.output_tokens_per_s_per_user),
        ("requests/s", e.requests_per_s),
    ]  # fmt: skip
    text = key_values(pairs, f"{sc.model.id} inference") + "".join(f"\nnote: {n}" for n in e.notes)
    return r.to_dict(), text


def register(sub: Any) -> None:
    p = sub.add_parser("infer", help=COMMAND_HELP["infer"])
    add_scenario_args(p)
    p.set_defaults(handler=_infer)
