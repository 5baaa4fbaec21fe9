"""`aiinfra model show ID|config.json`: architecture plus derived figures."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP
from aiinfra.report.render import key_values
from aiinfra.specs import cli_types


def _show(args: argparse.Namespace) -> tuple[Any, str]:
    ref: str | dict[str, Any] = args.model
    if args.model.endswith(".json") or Path(args.model).is_file():
        ref = {"config": args.model}
    obj = app.model_show(ref, args.seq_len).to_dict()
    arch = obj["model"]
    keys = [
        "num_layers",
        "hidden_size",
        "num_heads",
        "num_kv_heads",
        "head_dim",
        "ffn_hidden_size",
        "mlp",
        "vocab_size",
        "tied_embeddings",
        "attention",
        "num_experts",
        "experts_per_token",
        "moe_ffn_hidden_size",
        "num_shared_experts",
        "first_k_dense_layers",
        "kv_lora_rank",
        "qk_rope_head_dim",
        "sliding_window_tokens",
        "sliding_window_layers",
        "attention_chunk_tokens",
        "chunked_attention_layers",
        "fp4_scale_block_elements",
        "fp4_bf16_modules",
        "max_seq_len",
    ]
    d = obj["derived"]
    shown = [k for k in keys if arch.get(k) not in (None, 0, "none") or k == "num_layers"]
    pairs: list[tuple[str, Any]] = [(k, arch[k]) for k in shown]
    derived: list[tuple[str, Any]] = [
        ("params_total", d["params_total"]),
        ("params_active", d["params_active"]),
        ("params_embedding (in+out)", d["params_embedding"]),
        ("flop_per_token_forward_matmul", d["flop_per_token_forward_matmul"]),
        ("attention_flop_per_token_per_context_token_forward", d["attention_flop_per_token_per_context_token_forward"]),
    ]
    if "flop_per_token_training" in d:
        derived += [
            ("flop_per_token_forward", d["flop_per_token_forward"]),
            ("flop_per_token_training", d["flop_per_token_training"]),
        ]
    derived += [(f"kv_cache_bytes_per_token[{k}]", v) for k, v in d["kv_cache_bytes_per_token"].items()]
    derived += [(f"weight_bytes[{k}]", v) for k, v in d["weight_bytes"].items()]
    text = "\n".join(
        [
            key_values(pairs, f"model {arch['id']} {arch.get('name', '')}"),
            "",
            key_values(derived, "derived"),
            "",
            f"FLOP convention: {d['flop_convention']}",
        ]
    )
    return obj, text


def register(sub: Any) -> None:
    """Add ``aiinfra model`` and its subcommands, with their arguments and handlers, to the CLI's subparsers ``sub``."""
    p = sub.add_parser("model", help=COMMAND_HELP["model"])
    msub = p.add_subparsers(dest="model_command", required=True, parser_class=type(p))
    ps = msub.add_parser("show", help="a catalog model id or a Hugging Face config.json path")
    ps.add_argument("model")
    ps.add_argument(
        "--seq-len", type=cli_types.seq_len, default=None, help="also give FLOPs per token at this context length"
    )
    ps.add_argument("--json", action="store_true")
    ps.set_defaults(handler=_show)
