"""`aiinfra infer`."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_scenario_args
from aiinfra.report.bands import accuracy_line, band
from aiinfra.report.render import fmt_num, key_values
from aiinfra.report.text import GB


def _infer(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.infer(app.load_scenario(args.scenario, args.set))
    sc, e, layout = r.scenario, r.estimate, r.layout
    m = e.memory_per_accelerator
    obj = r.to_dict()
    acc = obj["accuracy"]
    pairs: list[tuple[str, Any]] = [
        (
            "deployment",
            f"{e.replicas} replica(s) × {layout} pp{e.pp} on {e.accelerator}, weights "
            f"{e.weight_precision}, KV {e.kv_precision}, engine {e.engine}",
        ),
        ("fits", e.fits),
        (
            "memory per accelerator",
            f"weights {m['weights_bytes'] / GB:.1f} GB, KV cache {m['kv_cache_bytes'] / GB:.1f} "
            f"GB, activations {m['activations_bytes'] / GB:.2f} GB, reserve "
            f"{m['runtime_reserve_bytes'] / GB:.1f} GB of {m['capacity_bytes'] / GB:.1f} GB"
            + (
                f" ({m['runtime_visible_bytes'] / GB:.1f} GB visible to the runtime)"
                if m.get("runtime_visible_bytes", m["capacity_bytes"]) != m["capacity_bytes"]
                else ""
            ),
        ),
        ("KV capacity (tokens per replica)", e.kv_capacity_tokens),
        ("max concurrent sequences", e.max_concurrent_seqs),
        ("load", e.load),
        ("batch (sequences per replica)", e.batch_seqs),
        ("requests in flight per replica", f"{e.requests_in_flight:.1f}"),
        (
            "TTFT",
            f"{e.ttft_s * 1e3:.1f} ms{band(acc, 'ttft_s', lambda v: f'{v * 1e3:.1f}')} (prefill bound: "
            f"{e.prefill_bound})",
        ),
        (
            "TPOT",
            f"{e.tpot_s * 1e3:.2f} ms{band(acc, 'tpot_s', lambda v: f'{v * 1e3:.2f}')} (decode bound: "
            f"{e.decode_bound})",
        ),
        *_tails(e),
        ("output tokens/s (all replicas)", fmt_num(e.output_tokens_per_s) + band(acc, "output_tokens_per_s")),
        (
            "output tokens/s per user",
            fmt_num(e.output_tokens_per_s_per_user) + band(acc, "output_tokens_per_s_per_user"),
        ),
        ("requests/s", fmt_num(e.requests_per_s) + band(acc, "requests_per_s")),
    ]
    text = key_values(pairs, f"{sc.model.id} inference") + "".join(f"\nnote: {n}" for n in e.notes)
    return obj, text + "\n" + accuracy_line(acc)


def _tails(e: Any) -> list[tuple[str, Any]]:
    """TTFT and TPOT percentiles under the load (none for a static batch or without a load)."""
    out: list[tuple[str, Any]] = []
    for name, t, digits in (("TTFT", e.ttft_percentiles_s, 1), ("TPOT", e.tpot_percentiles_s, 2)):
        if t is not None:
            out.append(
                (
                    f"{name} p50 / p90 / p99",
                    f"{t.p50_s * 1e3:.{digits}f} / {t.p90_s * 1e3:.{digits}f} / {t.p99_s * 1e3:.{digits}f} ms",
                )
            )
    return out


def register(sub: Any) -> None:
    """Add ``aiinfra infer``, its arguments and its handler to the CLI's subparsers ``sub``."""
    p = sub.add_parser("infer", help=COMMAND_HELP["infer"])
    add_scenario_args(p)
    p.set_defaults(handler=_infer)
