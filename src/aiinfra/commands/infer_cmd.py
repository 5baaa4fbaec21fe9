"""`aiinfra infer` and `aiinfra capacity`."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra.capacity import plan_capacity
from aiinfra.commands import add_scenario_args
from aiinfra.inference import estimate_inference
from aiinfra.report.render import jsonable, key_values, table
from aiinfra.specs.scenario import load_scenario
from aiinfra.units import GB


def _infer(args: argparse.Namespace) -> tuple[Any, str]:
    sc = load_scenario(args.scenario, args.set)
    e = estimate_inference(sc)
    m = e.memory_per_accelerator
    pairs: list[tuple[str, Any]] = [
        ("deployment", f"{e.replicas} replica(s) × tp{e.tp} pp{e.pp} on {e.accelerator}, weights {e.weight_precision},"
                       f" KV {e.kv_precision}"),
        ("fits", e.fits),
        ("memory per accelerator", f"weights {m['weights_bytes'] / GB:.1f} GB, KV cache {m['kv_cache_bytes'] / GB:.1f} "
                                   f"GB, activations {m['activations_bytes'] / GB:.2f} GB, reserve "
                                   f"{m['runtime_reserve_bytes'] / GB:.1f} GB of {m['capacity_bytes'] / GB:.1f} GB"),
        ("KV capacity (tokens per replica)", e.kv_capacity_tokens),
        ("max concurrent sequences", e.max_concurrent_seqs),
        ("batch (sequences per replica)", e.batch_seqs),
        ("TTFT", f"{e.ttft_s * 1e3:.1f} ms (prefill bound: {e.prefill_bound})"),
        ("TPOT", f"{e.tpot_s * 1e3:.2f} ms (decode bound: {e.decode_bound})"),
        ("output tokens/s (all replicas)", e.output_tokens_per_s),
        ("output tokens/s per user", e.output_tokens_per_s_per_user),
        ("requests/s", e.requests_per_s),
    ]  # fmt: skip
    text = key_values(pairs, f"{sc.model.id} inference") + "".join(f"\nnote: {n}" for n in e.notes)
    return jsonable(e), text


def _capacity(args: argparse.Namespace) -> tuple[Any, str]:
    sc = load_scenario(args.scenario, args.set)
    accs = args.accelerators.split(",") if args.accelerators else None
    options = plan_capacity(sc, accs)
    best = options[0]
    rows = [[o.accelerator, o.tp, o.weight_precision, "yes" if o.speculative else "no", o.batch_per_replica,
             o.replicas, o.accelerators, f"{o.ttft_s * 1e3:.0f}", f"{o.tpot_s * 1e3:.1f}",
             "unknown" if o.usd_per_hour is None else f"{o.usd_per_hour:,.0f}",
             "unknown" if o.usd_per_million_output_tokens is None else f"{o.usd_per_million_output_tokens:.2f}",
             o.verdict] for o in options]  # fmt: skip
    price = (f"price: {best.price.source_id}, read {best.price.read_on} ({best.price.age_days} days old)"
             if best.price else "price: unknown (no on-demand row in catalog/data/prices/cloud.csv)")  # fmt: skip
    text = "\n".join([
        f"cheapest: {best.accelerators} × {best.accelerator} as {best.replicas} replica(s) of tp{best.tp} "
        f"({best.weight_precision}), batch {best.batch_per_replica} per replica", price, "",
        table(["accelerator", "tp", "weights", "spec", "batch", "replicas", "accelerators", "TTFT ms", "TPOT ms",
               "$/h", "$/M out tok", "verdict"], rows),
    ])  # fmt: skip
    return {"chosen": jsonable(best), "alternatives": [jsonable(o) for o in options[1:]]}, text


def register(sub: Any) -> None:
    p = sub.add_parser("infer", help="serving latency, throughput, KV capacity and memory per accelerator")
    add_scenario_args(p)
    p.set_defaults(handler=_infer)
    c = sub.add_parser("capacity", help="cheapest deployment for a demand (users or requests/s) under SLOs")
    add_scenario_args(c)
    c.add_argument("--accelerators", help="comma-separated catalog ids to consider (default: the scenario's)")
    c.set_defaults(handler=_capacity)
