"""`aiinfra catalog list KIND` and `aiinfra catalog show ID`."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.app.catalog_queries import KINDS
from aiinfra.commands import COMMAND_HELP
from aiinfra.errors import SpecError
from aiinfra.report.render import fmt_num, key_values, table
from aiinfra.report.text import GB, TB, TFLOP


def _tflops(v: float | None) -> str:
    return "unknown" if v is None else f"{v / TFLOP:,.1f}"


def _list(args: argparse.Namespace) -> tuple[Any, str]:
    """Long because it lays out the command's text report line by line (formatting only: the answer and its numbers
    come from the application layer, whose result's to_dict() is the --json output)."""
    kind = args.kind
    if kind == "prices":
        return _prices(args)
    if args.diff:
        raise SpecError("--diff", True, "compares prices only", "use it with `aiinfra catalog list prices`")
    if kind == "purchases":
        return _purchases(args)
    if args.accelerator:
        raise SpecError(
            "--accelerator", args.accelerator, "filters the prices only", "use it with `aiinfra catalog list prices`"
        )
    r = app.catalog_list(kind)
    specs = list(r.specs)
    obj = r.to_dict()
    if kind == "accelerators":
        rows = []
        for a in specs:
            rows.append(
                [
                    a.id,
                    a.memory_as_published,
                    f"{a.memory_bytes / GB:,.1f}",
                    "unknown" if a.memory_bw_bytes_per_s is None else f"{a.memory_bw_bytes_per_s / TB:.2f}",
                    _tflops(a.dense_flop_per_s.get("bf16")),
                    _tflops(a.dense_flop_per_s.get("fp8")),
                    fmt_num(a.tdp_w),
                    (
                        f"{a.scale_up.interconnect} {a.scale_up.bw_one_way_bytes_per_s / GB:,.0f} GB/s"
                        if a.scale_up
                        else "none"
                    ),
                ]
            )
        text = table(
            [
                "id",
                "memory (as published)",
                "memory GB",
                "HBM TB/s",
                "BF16 dense TFLOP/s",
                "FP8 dense TFLOP/s",
                "TDP W",
                "scale-up (one-way)",
            ],
            rows,
        )
    elif kind == "models":
        figures = {m.id: app.model_show(m).derived for m in specs}
        text = table(
            ["id", "layers", "hidden", "heads/kv", "attention", "experts", "params total (B)", "params active (B)"],
            [
                [
                    m.id,
                    m.num_layers,
                    m.hidden_size,
                    f"{m.num_heads}/{m.kv_heads}",
                    m.attention,
                    f"{m.num_experts} top-{m.experts_per_token}" if m.is_moe else "dense",
                    f"{figures[m.id]['params_total'] / 1e9:.2f}",
                    f"{figures[m.id]['params_active'] / 1e9:.2f}",
                ]
                for m in specs
            ],
        )
    elif kind == "benchmarks":
        text = _benchmarks_table(specs)
    elif kind == "systems":
        text = table(
            ["id", "accelerator", "per node", "nodes", "power max W", "price USD"],
            [[s.id, s.accelerator, s.accelerators_per_node, s.nodes, s.power_max_w, s.price_usd] for s in specs],
        )
    else:
        text = table(
            ["id", "tier", "one-way GB/s", "latency µs"],
            [
                [
                    i.id,
                    i.tier,
                    f"{i.bw_one_way_bytes_per_s / GB:,.1f}",
                    "unknown" if i.latency_s is None else f"{i.latency_s * 1e6:.2g}",
                ]
                for i in specs
            ],
        )
    return obj, text + f"\n\n{len(specs)} {kind}; `aiinfra catalog show ID` gives every field with its source."


def _prices(args: argparse.Namespace) -> tuple[Any, str]:
    if args.diff:
        return _price_diff(args)
    r = app.price_list(args.accelerator)
    rows = [
        [
            p.id,
            p.accelerator,
            p.accelerators_per_instance,
            p.pricing,
            f"{p.usd_per_hour:,.2f}",
            f"{p.usd_per_accelerator_hour:,.3f}",
            p.read_on if p.age_days is not None else "date unknown",
            "" if p.age_days is None else p.age_days,
            ", ".join(f for f in ("STALE" if p.stale else "", "CONFLICT" if p.conflicting else "") if f),
        ]
        for p in r.prices
    ]
    text = table(
        ["id", "accelerator", "per instance", "pricing", "$/instance-h", "$/accelerator-h", "read on", "age d", "flag"],
        rows,
    )
    stale = sum(1 for p in r.prices if p.stale)
    obj = r.to_dict()
    return obj, text + (
        f"\n\n{len(rows)} prices; `aiinfra catalog show ID` gives a row's source; "
        "CONFLICT: the row's sources disagree (prices/README.md)"
        + (
            f"; STALE: {stale} read more than {obj['stale_after_days']} days ago (or undated): "
            f"`{obj['refresh_command']}` reads current offers"
            if stale
            else ""
        )
    )


def _money(v: Any) -> str:
    return "none" if v is None else f"{v:,.2f}"


def _price_diff(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.price_diff(args.examples, examples=not args.no_examples)
    obj = r.to_dict()
    rows = []
    for c in obj["changes"]:
        old, new = c["old"], c["new"]
        was = "new offer" if old is None else f"{old['usd_per_hour']:,.4g} ({old['price_read_on']})"
        change = "" if c["change_frac"] is None else f"{c['change_frac']:+.1%}"
        rows.append(
            [
                c["provider"],
                c["instance"],
                c["region"],
                c["pricing"],
                c["accelerator"],
                was,
                f"{new['usd_per_hour']:,.4g} ({new['price_read_on']})",
                change,
            ]
        )
    where = ", ".join(obj["overlays"]) or "none (only the shipped rows are in use: run `aiinfra prices refresh`)"
    lines = [f"price rows in use: {obj['rows_in_use']} (shipped: {obj['shipped_rows']}); overlays: {where}", ""]
    lines.append(
        table(
            [
                "provider",
                "instance",
                "region",
                "pricing",
                "accelerator",
                "shipped $/h (read)",
                "in use $/h (read)",
                "per GPU-h",
            ],
            rows,
        )
        if rows
        else "no offer differs from the shipped rows"
    )
    if obj["examples"]:
        lines += ["", "cheapest answer of each shipped example (shipped prices -> prices in use):"]
        ex_rows = []
        for e in obj["examples"]:
            if e["error"]:
                ex_rows.append([e["example"], e["question"], "error", e["error"], ""])
                continue
            b, a = e["before"], e["after"]
            ex_rows.append(
                [
                    e["example"],
                    f"{e['question']} ({e['unit']})",
                    "none" if b is None else f"{_money(b['value'])} {b['price_id']}",
                    "none" if a is None else f"{_money(a['value'])} {a['price_id']}",
                    ""
                    if a is None
                    else f"read {a['price_read_on']}, {a['price_age_days']} d" + (" STALE" if a["stale"] else ""),
                ]
            )
        lines.append(table(["example", "answer", "shipped", "in use", "price age"], ex_rows))
    return obj, "\n".join(lines)


def _purchases(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.purchase_list(args.accelerator)
    rows = [
        [
            p.id,
            p.kind,
            p.item,
            p.accelerator or "",
            f"{p.unit_price_usd:,.0f}",
            p.read_on if p.age_days is not None else "date unknown",
        ]
        for p in r.purchases
    ]
    text = table(["id", "kind", "item", "accelerator", "$ each", "read on"], rows)
    return r.to_dict(), text + f"\n\n{len(rows)} purchase prices; `aiinfra catalog show ID` gives a row's source."


def _benchmarks_table(specs: list[Any]) -> str:
    def tok(v: float | None) -> str:
        return "unknown" if v is None else f"{v:,.0f}"

    def lim(b: Any) -> str:
        c = b.latency_constraints.get("server")
        if c is None:
            return "unknown"
        if c.ttft_p99_s is not None and c.tpot_p99_s is not None:
            return f"TTFT {c.ttft_p99_s:g} s / TPOT {c.tpot_p99_s * 1e3:g} ms"
        return "unknown" if c.e2e_p99_s is None else f"query {c.e2e_p99_s:g} s"

    return table(
        ["id", "samples", "input mean", "input max", "output mean", "Server p99 limits"],
        [
            [
                b.id,
                tok(b.num_samples),
                tok(b.input_tokens.mean),
                tok(b.input_tokens.max),
                tok(b.output_tokens.mean),
                lim(b),
            ]
            for b in specs
        ],
    )


def _show(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.catalog_show(args.id)
    obj = r.to_dict()
    kind = obj.pop("kind")
    row = obj
    pairs: list[tuple[str, Any]] = []
    for k, v in row.items():
        if k in ("sources", "notes"):
            continue
        if isinstance(v, dict):
            for kk, vv in v.items():
                if isinstance(vv, dict):  # one more level (benchmark latency limits per scenario)
                    vv = ", ".join(f"{a} {b:g}" for a, b in vv.items() if b is not None)
                pairs.append((f"{k}.{kk}", vv if not isinstance(vv, list) else ", ".join(map(str, vv))))
        elif isinstance(v, list):
            pairs.append((k, ", ".join(map(str, v))))
        else:
            pairs.append((k, v))
    lines = [key_values(pairs, f"{kind[:-1]} {args.id}"), "", "sources:"]
    for s in row.get("sources", []):
        flds = f" [{', '.join(s['fields'])}]" if s.get("fields") else ""
        lines.append(f"  - {s['title']} ({s.get('url') or 'document'}), read {s['read_on']}{flds}")
    if row.get("notes"):
        lines += ["", f"notes: {row['notes']}"]
    return r.to_dict(), "\n".join(lines)


def register(sub: Any) -> None:
    """Add ``aiinfra catalog`` and its subcommands, with their arguments and handlers, to the CLI's subparsers
    ``sub``."""
    p = sub.add_parser("catalog", help=COMMAND_HELP["catalog"])
    csub = p.add_subparsers(dest="catalog_command", required=True, parser_class=type(p))
    pl = csub.add_parser("list", help="a table of one kind")
    pl.add_argument("kind", choices=(*KINDS, "prices", "purchases"))
    pl.add_argument("--accelerator", help="prices, purchases: only this accelerator's rows")
    pl.add_argument(
        "--diff",
        action="store_true",
        help="prices: what changed between the shipped rows and the "
        "rows in use (refreshed prices, --catalog-overlay), per offer, and the effect on the cheapest "
        "answer of each shipped example",
    )
    pl.add_argument(
        "--examples", metavar="DIR", help="--diff: the example scenarios (default: examples/ of the source checkout)"
    )
    pl.add_argument("--no-examples", action="store_true", help="--diff: offers only, no example answers")
    pl.add_argument(
        "--catalog-overlay",
        metavar="DIR",
        help="add or replace catalog rows from DIR (e.g. a `prices refresh --out DIR` folder)",
    )
    pl.add_argument("--json", action="store_true")
    pl.set_defaults(handler=_list)
    ps = csub.add_parser("show", help="every field of one row with its source")
    ps.add_argument("id")
    ps.add_argument("--json", action="store_true")
    ps.set_defaults(handler=_show)
