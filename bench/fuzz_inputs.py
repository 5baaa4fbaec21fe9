"""Throw ~1,000 bad inputs at every command and count how each is answered.

Every case is an input that must be refused: out-of-range, non-finite, huge or mistyped numbers in every numeric
field of every scenario section, malformed and hostile YAML, non-UTF-8 / empty / binary files, bad config.json and
CASES.csv, bad ``--set`` values and flags. Each runs in-process through ``aiinfra.cli.main`` in a forked child with a
time limit. Outcomes:

- ``clean-2``: exit 2, one error line, no traceback (what the README promises)
- ``exit-0``: accepted (nonsense that should have been refused); with ``--json`` the output is also checked
- ``exit-1``: internal error
- ``traceback``: an exception escaped ``main`` (or a traceback was printed)
- ``hang``: still running after the time limit

    python bench/fuzz_inputs.py [--timeout-s 20] [--jobs 2] [--show exit-0,exit-1,...] [--limit N]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import math
import multiprocessing as mp
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]

#: values put in every numeric field: each is out of range for any numeric field of a scenario
BAD_VALUES: tuple[Any, ...] = (-5, ".nan", ".inf", "-.inf", 1e308, 10**30, "abc", True, [1])

ACC = "nvidia-h100-sxm5-80gb"
BASE: dict[str, dict[str, Any]] = {
    "train": {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": ACC, "count": 64},
        "training": {
            "tokens": 1e12,
            "seq_len": 4096,
            "global_batch_seqs": 256,
            "plan": {"tp": 2, "pp": 1, "cp": 1, "ep": 1, "vp": 1, "microbatch_seqs": 1},
        },
    },
    "memory": {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": ACC, "count": 8},
        "training": {
            "tokens": 1e9,
            "seq_len": 4096,
            "global_batch_seqs": 64,
            "finetune": {"method": "lora", "rank": 8},
        },
    },
    "infer": {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": ACC, "count": 8, "per_node": 8},
        "inference": {
            "input_tokens": 1024,
            "output_tokens": 256,
            "batch": 8,
            "users": 100,
            "request_rate_per_s": 2,
            "gpu_memory_utilization": 0.9,
            "block_size_tokens": 16,
            "plan": {"tp": 1, "pp": 1, "ep": 1, "replicas": 1},
            "slo": {"ttft_p90_s": 1, "tpot_p99_s": 0.05, "e2e_p99_s": 30},
            "speculative": {"num_draft_tokens": 3, "acceptance_rate": 0.7},
        },
    },
    "simulate": {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": ACC, "count": 1},
        "inference": {
            "input_tokens": 512,
            "output_tokens": 64,
            "request_rate_per_s": 4,
            "num_requests": 100,
            "duration_s": 60,
            "arrival": {"kind": "gamma", "cv": 2, "ramp_s": 1},
            "simulation": {
                "replicas": 1,
                "scheduler": {"max_num_seqs": 64, "max_num_batched_tokens": 4096},
                "input_lengths": {"kind": "uniform", "low": 100, "high": 900},
                "output_lengths": {"kind": "lognormal", "sigma": 0.5, "high": 500},
                "disaggregation": {"prefill_replicas": 1, "decode_replicas": 1},
            },
        },
    },
    "cost": {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": ACC, "count": 8, "nics_per_node": 8},
        "cost": {
            "usage": {"duration_s": 3600, "utilisation_frac": 0.8, "accelerators": 8, "tokens": 1e9},
            "pue": 1.2,
            "node_power_kw": 10,
            "electricity_usd_per_kwh": 0.1,
            "storage_usd_per_gb_month": 0.02,
            "dataset_bytes": 1e12,
            "checkpoint_bytes": 1e11,
            "checkpoints_kept": 2,
            "egress_usd_per_gb": 0.05,
            "egress_bytes": 1e10,
            "networking_usd_per_hour": 1,
            "monitoring_usd_per_month": 100,
            "spot": {"interruptions_per_instance_per_hour": 0.05, "checkpoint_write_s": 60, "restart_s": 300},
        },
    },
    "datacenter": {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": ACC, "count": 256},
        "datacenter": {
            "rack_power_limit_kw": 40,
            "switch_radix": 64,
            "oversubscription": 1,
            "nics_per_node": 8,
            "pue": 1.3,
            "checkpoint_bytes": 1e12,
            "checkpoint_write_s": 60,
            "bytes_per_token": 4,
            "switch_price_usd": 30000,
            "transceiver_price_usd": 800,
            "switch_power_w": 1500,
        },
    },
    "tco": {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": ACC, "count": 32, "system": "dgx-h100"},
        "tco": {
            "years": 5,
            "horizon_months": 60,
            "utilisation_frac": 0.9,
            "system_price_usd": 300000,
            "network_capex_usd": 1e6,
            "network_capex_frac": 0.1,
            "storage_capex_usd": 1e5,
            "colocation_usd_per_kw_month": 180,
            "electricity_usd_per_kwh": 0.08,
            "staff_usd_per_year": 150000,
            "maintenance_frac_per_year": 0.05,
            "pue": 1.3,
        },
    },
}

INLINE_MODEL: dict[str, Any] = {
    "num_layers": 8,
    "hidden_size": 1024,
    "num_heads": 16,
    "num_kv_heads": 4,
    "head_dim": 64,
    "ffn_hidden_size": 4096,
    "vocab_size": 32000,
    "max_seq_len": 8192,
    "num_experts": 8,
    "experts_per_token": 2,
    "moe_ffn_hidden_size": 1024,
    "num_shared_experts": 1,
    "first_k_dense_layers": 1,
    "moe_layer_step": 1,
    "token_type_vocab": 0,
}


@dataclasses.dataclass
class Case:
    name: str
    argv: list[str]
    files: dict[str, bytes] = dataclasses.field(default_factory=dict)
    """Relative name -> content, written into the case's own folder; ``{dir}`` in argv is that folder."""


def _leaves(obj: Any, prefix: str = "") -> list[str]:
    """Dotted paths of every numeric leaf (not bool) of a nested mapping."""
    out: list[str] = []
    for k, v in obj.items():
        path = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            out += _leaves(v, path)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out.append(path)
    return out


def _put(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    node = data
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = value
    return data


def _yaml(data: dict[str, Any]) -> bytes:
    text = yaml.safe_dump(data, sort_keys=False)
    for word in (".nan", ".inf", "-.inf"):  # plain YAML floats, not quoted strings
        text = text.replace(f"'{word}'", word)
    return text.replace("'1.0e+308'", "1.0e+308").encode()


def _scenario_case(name: str, cmd: str, data: dict[str, Any], extra: list[str] | None = None) -> Case:
    return Case(name, [cmd, "{dir}/s.yaml", "--json", *(extra or [])], {"s.yaml": _yaml(data)})


def field_cases() -> list[Case]:
    cases: list[Case] = []
    for cmd, base in BASE.items():
        for path in _leaves(base):
            for v in BAD_VALUES:
                cases.append(_scenario_case(f"{cmd}:{path}={v!r}", cmd, _put(base, path, v)))
    inline = {**BASE["infer"], "model": INLINE_MODEL}
    for path in _leaves(INLINE_MODEL):
        for v in (-5, 0, 4096.7, ".inf", 10**30, "abc", True):
            if path in ("num_shared_experts", "first_k_dense_layers", "token_type_vocab") and v == 0:
                continue  # zero is valid there
            cases.append(_scenario_case(f"infer:model.{path}={v!r}", "infer", _put(inline, f"model.{path}", v)))
    # architectures that are inconsistent, not out of range
    for name, change in {
        "heads-not-dividing-hidden": {"hidden_size": 1000, "head_dim": None},
        "kv-heads-above-heads": {"num_kv_heads": 32},
        "kv-heads-not-dividing": {"num_kv_heads": 5},
        "experts-below-top-k": {"num_experts": 2, "experts_per_token": 4},
        "dense-layers-above-layers": {"first_k_dense_layers": 9},
    }.items():
        cases.append(_scenario_case(f"infer:model:{name}", "infer", {**inline, "model": {**INLINE_MODEL, **change}}))
    return cases


def conflict_cases() -> list[Case]:
    inf = BASE["infer"]
    out = [
        _scenario_case("conflict:batch+concurrency", "infer", _put(inf, "inference.concurrency", 16)),
        _scenario_case("conflict:per_node-not-dividing", "infer", _put(inf, "hardware.per_node", 3)),
        _scenario_case("conflict:count-true", "infer", _put(inf, "hardware.count", True)),
        _scenario_case("conflict:operations-section", "infer", {**inf, "operations": {"oncall": 1}}),
        _scenario_case("conflict:finetune-rank", "memory", _put(BASE["memory"], "training.finetune.rank", 100000)),
        _scenario_case("conflict:tokens-inf", "train", _put(BASE["train"], "training.tokens", ".inf")),
        _scenario_case("conflict:pue-below-1", "cost", _put(BASE["cost"], "cost.pue", 0.5)),
        _scenario_case("conflict:network-frac-7", "tco", _put(BASE["tco"], "tco.network_capex_frac", 7)),
        _scenario_case("conflict:maint-frac-3", "tco", _put(BASE["tco"], "tco.maintenance_frac_per_year", 3)),
        _scenario_case("conflict:providers-unknown", "tco", _put(BASE["tco"], "tco.providers", ["nosuchcloud"])),
        _scenario_case(
            "conflict:moe-inline-topk", "infer", {**inf, "model": {**INLINE_MODEL, "experts_per_token": -5}}
        ),
        _scenario_case("conflict:moe-layer-step-0", "infer", {**inf, "model": {**INLINE_MODEL, "moe_layer_step": 0}}),
    ]
    return out


HOSTILE_YAML: dict[str, bytes] = {
    "python-object-tag": b"model: !!python/object/apply:os.system ['true']\nhardware: {accelerator: x}\n",
    "python-name-tag": b"model: !!python/name:os.system\n",
    "custom-tag": b"model: !foo bar\n",
    "duplicate-key": b"model: meta-llama-3.1-8b\nmodel: meta-llama-3.1-70b\nhardware: {accelerator: "
    + ACC.encode()
    + b"}\ninference: {input_tokens: 1, output_tokens: 1}\n",
    "duplicate-nested-key": b"model: meta-llama-3.1-8b\nhardware: {accelerator: "
    + ACC.encode()
    + b", count: 8, count: 16}\ninference: {input_tokens: 1, output_tokens: 1}\n",
    "billion-laughs": (
        "a: &a [x,x,x,x,x,x,x,x,x]\n"
        + "".join(f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefg", "bcdefgh", strict=True))
        + "model: *h\n"
    ).encode(),
    "unclosed-bracket": b"model: [\n",
    "tab-indent": b"model:\n\t- x\n",
    "list-top": b"- a\n- b\n",
    "scalar-top": b"42\n",
    "empty": b"",
    "only-comment": b"# nothing\n",
    "null-top": b"~\n",
    "binary": bytes(range(256)) * 4,
    "latin1": "model: caf\xe9\nhardware: {accelerator: x}\n".encode("latin-1"),
    "utf16": "model: meta-llama-3.1-8b\n".encode("utf-16"),
    "nul-bytes": b"model: a\x00b\n",
    "huge-int-key": b"model: meta-llama-3.1-8b\nhardware: {accelerator: "
    + ACC.encode()
    + b", count: 1"
    + b"0" * 5000
    + b"}\n",
    "many-documents": b"a: 1\n---\nb: 2\n",
    "deep-nesting": b"model: " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "merge-key-loop": b"a: &a {b: 1}\nc: {<<: *a, <<: *a}\nmodel: x\n",
    "model-wrong-type": b"model: 42\nhardware: {accelerator: " + ACC.encode() + b"}\n",
    "model-list": b"model: [a, b]\nhardware: {accelerator: " + ACC.encode() + b"}\n",
    "hardware-string": b"model: meta-llama-3.1-8b\nhardware: h100\n",
    "unknown-accelerator": b"model: meta-llama-3.1-8b\nhardware: {accelerator: nosuch}\ninference: {input_tokens: 1, "
    b"output_tokens: 1}\n",
    "training-list": b"model: meta-llama-3.1-8b\nhardware: {accelerator: " + ACC.encode() + b"}\ntraining: [1]\n",
}

COMMANDS = ("check", "train", "memory", "infer", "capacity", "simulate", "cost", "datacenter", "tco")


def file_cases() -> list[Case]:
    cases: list[Case] = []
    for name, content in HOSTILE_YAML.items():
        for cmd in ("check", "infer", "cost"):
            cases.append(Case(f"yaml:{name}:{cmd}", [cmd, "{dir}/s.yaml", "--json"], {"s.yaml": content}))
    for cmd in COMMANDS:
        cases.append(Case(f"file:directory:{cmd}", [cmd, "{dir}", "--json"]))
        cases.append(Case(f"file:missing:{cmd}", [cmd, "{dir}/nope.yaml", "--json"]))
    # config.json
    good = {
        "num_hidden_layers": 4,
        "hidden_size": 512,
        "num_attention_heads": 8,
        "num_key_value_heads": 8,
        "intermediate_size": 2048,
        "vocab_size": 32000,
        "model_type": "llama",
    }
    configs: dict[str, bytes] = {
        "missing-vocab": json.dumps({k: v for k, v in good.items() if k != "vocab_size"}).encode(),
        "heads-zero": json.dumps({**good, "num_attention_heads": 0}).encode(),
        "hidden-negative": json.dumps({**good, "hidden_size": -4096}).encode(),
        "layers-zero": json.dumps({**good, "num_hidden_layers": 0}).encode(),
        "kv-above-heads": json.dumps({**good, "num_key_value_heads": 16}).encode(),
        "heads-not-dividing": json.dumps({**good, "hidden_size": 500}).encode(),
        "hidden-fraction": json.dumps({**good, "hidden_size": 4096.7}).encode(),
        "hidden-string": json.dumps({**good, "hidden_size": "big"}).encode(),
        "hidden-null": json.dumps({**good, "hidden_size": None, "n_embd": None}).encode(),
        "hidden-nan": json.dumps({**good, "hidden_size": float("nan")}).encode(),
        "hidden-inf": json.dumps({**good, "hidden_size": float("inf")}).encode(),
        "vocab-huge": json.dumps({**good, "vocab_size": 10**30}).encode(),
        "experts-negative": json.dumps({**good, "num_local_experts": 8, "num_experts_per_tok": -5}).encode(),
        "experts-below-topk": json.dumps({**good, "num_local_experts": 2, "num_experts_per_tok": 4}).encode(),
        "text-config-not-dict": json.dumps({"text_config": 5}).encode(),
        "list": b"[1, 2]",
        "not-json": b"{nope",
        "empty": b"",
        "latin1": '{"model_type": "caf\xe9"}'.encode("latin-1"),
        "binary": bytes(range(256)),
    }
    for name, content in configs.items():
        yaml_text = (
            f"model: {{config: '{{dir}}/config.json'}}\nhardware: {{accelerator: {ACC}, count: 8}}\n"
            "inference: {input_tokens: 128, output_tokens: 16}\n"
        ).encode()
        cases.append(
            Case(
                f"config:{name}:infer",
                ["infer", "{dir}/s.yaml", "--json"],
                {"s.yaml": yaml_text, "config.json": content},
            )
        )
        cases.append(
            Case(f"config:{name}:model", ["model", "show", "{dir}/config.json", "--json"], {"config.json": content})
        )
    cases.append(Case("config:directory:model", ["model", "show", "{dir}", "--json"]))
    # traces
    trace_base = _put(BASE["simulate"], "inference.arrival", {"kind": "trace", "path": "{dir}/t.csv"})
    trace_base["inference"].pop("duration_s")
    traces: dict[str, bytes] = {
        "huge-tokens": b"arrival_s,input_tokens,output_tokens\n0,1" + b"0" * 30 + b",10\n",
        "huge-arrival": b"arrival_s,input_tokens,output_tokens\n1e308,10,10\n",
        "latin1": "arrival_s,input_tokens,output_tokens\n0,10,10\ncaf\xe9,1,1\n".encode("latin-1"),
        "binary": bytes(range(256)),
        "empty": b"",
        "header-only": b"arrival_s,input_tokens,output_tokens\n",
        "negative": b"arrival_s,input_tokens,output_tokens\n-1,10,10\n",
    }
    for name, content in traces.items():
        cases.append(
            Case(
                f"trace:{name}", ["simulate", "{dir}/s.yaml", "--json"], {"s.yaml": _yaml(trace_base), "t.csv": content}
            )
        )
    # validation CSVs
    header = (ROOT / "src/aiinfra/validation/data/training.csv").read_text().splitlines()[0]
    first = (ROOT / "src/aiinfra/validation/data/training.csv").read_text().splitlines()[1]
    cols = header.split(",")
    vi = cols.index("value")

    def with_value(v: str) -> bytes:
        cells = next(iter(__import__("csv").reader([first])))
        cells[vi] = v
        out = io.StringIO()
        __import__("csv").writer(out).writerow(cells)
        return (header + "\n" + out.getvalue()).encode()

    csvs: dict[str, bytes] = {
        "header-only": (header + "\n").encode(),
        "empty": b"",
        "binary": bytes(range(256)),
        "latin1": (header + "\n").encode() + "caf\xe9\n".encode("latin-1"),
        "no-columns": b"a,b\n1,2\n",
        "value-nan": with_value("nan"),
        "value-inf": with_value("inf"),
        "value-negative": with_value("-5"),
        "value-text": with_value("abc"),
        "value-huge": with_value("1e308"),
    }
    for name, content in csvs.items():
        cases.append(Case(f"csv:{name}", ["validate", "{dir}/c.csv", "--json"], {"c.csv": content}))
    cases.append(Case("csv:directory", ["validate", "{dir}", "--json"]))
    return cases


def flag_cases() -> list[Case]:
    sim = _yaml(BASE["simulate"])
    inf = _yaml(BASE["infer"])
    out = [
        Case("flag:seed-negative", ["simulate", "{dir}/s.yaml", "--json", "--seed", "-1"], {"s.yaml": sim}),
        Case("flag:seed-huge", ["simulate", "{dir}/s.yaml", "--json", "--seed", str(10**30)], {"s.yaml": sim}),
        Case("flag:seed-text", ["simulate", "{dir}/s.yaml", "--seed", "x"], {"s.yaml": sim}),
        Case("flag:plot-into-file", ["simulate", "{dir}/s.yaml", "--plot", "{dir}/s.yaml"], {"s.yaml": sim}),
        Case("flag:plot-unwritable", ["simulate", "{dir}/s.yaml", "--plot", "/proc/nope"], {"s.yaml": sim}),
        Case("flag:tco-plot-file", ["tco", "{dir}/s.yaml", "--plot", "{dir}/s.yaml"], {"s.yaml": _yaml(BASE["tco"])}),
        Case(
            "flag:tco-plot-unwritable",
            ["tco", "{dir}/s.yaml", "--plot", "/proc/nope/x.svg"],
            {"s.yaml": _yaml(BASE["tco"])},
        ),
        Case(
            "flag:markdown-dir",
            ["validate", str(ROOT / "src/aiinfra/validation/data/training.csv"), "--markdown", "{dir}"],
        ),
        Case("flag:accelerators-unknown", ["capacity", "{dir}/s.yaml", "--accelerators", "X"], {"s.yaml": inf}),
        Case("flag:accelerators-empty", ["capacity", "{dir}/s.yaml", "--accelerators", ","], {"s.yaml": inf}),
        Case("flag:engines-unknown", ["capacity", "{dir}/s.yaml", "--engines", "nosuch"], {"s.yaml": inf}),
        Case(
            "flag:capacity-seed-negative", ["capacity", "{dir}/s.yaml", "--seed", "-1", "--simulate"], {"s.yaml": inf}
        ),
        Case("flag:model-seq-len-negative", ["model", "show", "meta-llama-3.1-8b", "--seq-len", "-5"]),
        Case("flag:model-seq-len-zero", ["model", "show", "meta-llama-3.1-8b", "--seq-len", "0"]),
        Case("flag:model-seq-len-huge", ["model", "show", "meta-llama-3.1-8b", "--seq-len", str(10**30)]),
        Case("flag:model-unknown", ["model", "show", "nosuch-model"]),
        Case("flag:catalog-unknown", ["catalog", "show", "nosuch"]),
        Case("flag:unknown-command", ["nosuch"]),
        Case("flag:no-args", []),
    ]
    sets = [
        "inference.input_tokens=[",
        "inference.input_tokens={a: [}",
        "inference.input_tokens=!!python/name:os",
        "inference.input_tokens=.inf",
        "inference.input_tokens=1e400",
        "noequals",
        "=5",
        ".=5",
        "inference.input_tokens.x=5",
        "hardware=5",
        "inference.batch=&a [*a]",
        "inference.input_tokens=" + "9" * 40,
        "inference.input_tokens=\x00",
        "inference.batch=-1",
        "model=!!binary aGVsbG8=",
    ]
    for s in sets:
        out.append(Case(f"set:{s[:40]!r}", ["infer", "{dir}/s.yaml", "--json", "--set", s], {"s.yaml": inf}))
    return out


def all_cases() -> list[Case]:
    return field_cases() + conflict_cases() + file_cases() + flag_cases()


def _child(case: Case, folder: str, conn: Any) -> None:
    from aiinfra.cli import main

    for rel, content in case.files.items():
        Path(folder, rel).write_bytes(content.replace(b"{dir}", folder.encode()))
    argv = [a.replace("{dir}", folder) for a in case.argv]
    out, err = io.StringIO(), io.StringIO()
    rc: int | None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as exc:
                rc = int(exc.code) if isinstance(exc.code, int) else 2
    except BaseException as exc:  # an exception escaped main: a traceback at the user
        conn.send(("traceback", f"{type(exc).__name__}: {exc}"[:300]))
        return
    stderr = err.getvalue()
    conn.send(_classify(rc, out.getvalue(), stderr, "--json" in argv))


def _finite(obj: Any) -> bool:
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(_finite(v) for v in obj.values())
    if isinstance(obj, list):
        return all(_finite(v) for v in obj)
    return True


def _classify(rc: int | None, stdout: str, stderr: str, as_json: bool) -> tuple[str, str]:
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if "Traceback" in stderr:
        return "traceback", last[:300]
    if rc == 0:
        if as_json:
            try:
                if not _finite(json.loads(stdout)):
                    return "exit-0", "non-finite JSON"
            except ValueError:
                return "exit-0", "output is not JSON"
        return "exit-0", stdout.strip().splitlines()[0][:200] if stdout.strip() else ""
    if rc == 2:
        # argparse's own errors print the usage first (lines from "usage:" on, continuations indented)
        lines = [ln for ln in stderr.strip().splitlines() if ln.strip() and not ln.startswith(("usage:", " "))]
        return ("clean-2", last[:300]) if len(lines) == 1 else ("exit-2-messy", stderr[:300])
    return f"exit-{rc}", last[:300]


def run_case(case: Case, timeout_s: float) -> tuple[str, str]:
    ctx = mp.get_context("fork")
    with tempfile.TemporaryDirectory() as folder:
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(case, folder, send))
        proc.start()
        if recv.poll(timeout_s):
            result: tuple[str, str] = recv.recv()
            proc.join(5)
        else:
            result = ("hang", f"still running after {timeout_s:g} s")
        if proc.is_alive():
            proc.kill()
            proc.join()
        return result


def _warm_up() -> None:
    """Load the catalog and efficiency tables once in this process, so every forked case starts with them."""
    from aiinfra.cli import main as cli_main

    with tempfile.TemporaryDirectory() as folder:
        for cmd in ("infer", "train", "cost"):
            path = Path(folder, f"{cmd}.yaml")
            path.write_bytes(_yaml(BASE[cmd]))
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                cli_main([cmd, str(path), "--json"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--timeout-s", type=float, default=20.0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--show", default="exit-0,exit-1,traceback,hang,exit-2-messy", help="outcomes whose cases are listed"
    )
    ap.add_argument("--limit", type=int, default=0, help="run only every k-th case (quick look)")
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    args = ap.parse_args(argv)
    _warm_up()

    cases = [c for c in all_cases() if args.only in c.name]
    if args.limit:
        cases = cases[:: args.limit]
    from concurrent.futures import ThreadPoolExecutor

    done = Counter[str]()

    def one(case: Case) -> tuple[str, str]:
        result = run_case(case, args.timeout_s)
        done[result[0]] += 1
        if sum(done.values()) % 100 == 0:
            print(f"  {sum(done.values())} of {len(cases)} done", file=sys.stderr, flush=True)
        return result

    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, cases))
    counts = Counter(kind for kind, _ in results)
    show = set(args.show.split(","))
    for case, (kind, detail) in zip(cases, results, strict=True):
        if kind in show:
            print(f"{kind:12s} {case.name}: {detail}")
    print(f"\n{len(cases)} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
