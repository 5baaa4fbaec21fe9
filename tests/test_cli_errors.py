"""Bad input: exit code 2, one message naming the field, the value and the fix; never a traceback."""

from __future__ import annotations

import json

import pytest

from .conftest import EXAMPLES, run_cli

GOOD = """model: meta-llama-3.1-70b
hardware:
  accelerator: nvidia-h100-sxm5-80gb
  count: 64
training:
  tokens: 1e12
  seq_len: 8192
  global_batch_seqs: 512
  precision: bf16
"""

# (case name, scenario text or None for a CLI-level case, extra args, words the message must contain)
CASES: list[tuple[str, str, list[str], list[str]]] = [
    (
        "unknown accelerator",
        GOOD.replace("nvidia-h100-sxm5-80gb", "h100"),
        [],
        ["hardware.accelerator", "'h100'", "did you mean", "nvidia-h100-sxm5-80gb"],
    ),
    ("unknown model", GOOD.replace("meta-llama-3.1-70b", "llama-70b"), [], ["model", "'llama-70b'", "did you mean"]),
    ("unknown top-level key", GOOD + "trianing: {}\n", [], ["trianing", "unknown key", "spelling"]),
    ("typo in training key", GOOD.replace("seq_len", "seqlen"), [], ["training.seqlen", "unknown key"]),
    ("negative count", GOOD.replace("count: 64", "count: -8"), [], ["hardware.count", "-8", "≥ 1 and ≤ 10,000,000"]),
    ("zero count", GOOD.replace("count: 64", "count: 0"), [], ["hardware.count", "0", "≥ 1"]),
    ("count not a number", GOOD.replace("count: 64", "count: many"), [], ["hardware.count", "'many'", "number"]),
    ("tokens with a unit", GOOD.replace("tokens: 1e12", "tokens: 15T"), [], ["training.tokens", "'15T'", "unit"]),
    ("seq_len in the wrong unit", GOOD.replace("seq_len: 8192", "seq_len: 8k"), [], ["training.seq_len", "'8k'"]),
    ("bad precision", GOOD.replace("precision: bf16", "precision: bf17"), [], ["training.precision", "bf17", "bf16"]),
    ("zero seq_len", GOOD.replace("seq_len: 8192", "seq_len: 0"), [], ["training.seq_len", "≥ 1"]),
    ("bad sharding", GOOD + "  plan: {sharding: zero4}\n", [], ["training.plan.sharding", "zero4", "zero3"]),
    ("zero tp", GOOD + "  plan: {tp: 0}\n", [], ["training.plan.tp", "≥ 1"]),
    ("unknown plan key", GOOD + "  plan: {tensor_parallel: 8}\n", [], ["training.plan.tensor_parallel", "unknown"]),
    ("missing hardware", "model: meta-llama-3.1-70b\n", [], ["hardware", "missing", "add"]),
    (
        "missing accelerator",
        "model: meta-llama-3.1-8b\nhardware: {count: 8}\n",
        [],
        ["hardware.accelerator", "missing"],
    ),
    ("top level is a list", "- a\n- b\n", [], ["scenario", "mapping"]),
    ("invalid yaml", "model: [unclosed\n", [], ["scenario", "YAML", "line"]),
    ("negative per_node", GOOD.replace("count: 64", "count: 64\n  per_node: -1"), [], ["hardware.per_node", "-1"]),
    (
        "system of another accelerator",
        GOOD.replace("count: 64", "count: 64\n  system: dgx-b200"),
        [],
        ["hardware.system", "dgx-b200", "matching"],
    ),
    (
        "bad weight precision",
        GOOD.replace(
            "training:", "inference: {input_tokens: 10, output_tokens: 10, weight_precision: int3}\ntraining:"
        ),
        [],
        ["inference.weight_precision", "int3", "int4"],
    ),
    (
        "memory utilisation above 1",
        GOOD.replace(
            "training:", "inference: {input_tokens: 10, output_tokens: 10, gpu_memory_utilization: 1.5}\ntraining:"
        ),
        [],
        ["inference.gpu_memory_utilization", "1.5"],
    ),
    (
        "config file missing",
        GOOD.replace("model: meta-llama-3.1-70b", "model: {config: /nonexistent/config.json}"),
        [],
        ["model.config", "file not found"],
    ),
    (
        "inline model missing field",
        GOOD.replace("model: meta-llama-3.1-70b", "model: {num_layers: 2, hidden_size: 64, num_heads: 4}"),
        [],
        ["model.", "missing"],
    ),
    ("--set without =", GOOD, ["--set", "training.plan.tp"], ["--set", "KEY=VALUE"]),
    ("--set into a scalar", GOOD, ["--set", "hardware.count.x=1"], ["hardware.count", "mapping"]),
    ("--set bad value", GOOD, ["--set", "hardware.count=-1"], ["hardware.count", "≥ 1"]),
]


@pytest.mark.parametrize(("name", "text", "extra", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_scenario_exit_2(name: str, text: str, extra: list[str], words: list[str], tmp_yaml) -> None:  # type: ignore[no-untyped-def]
    path = tmp_yaml(text)
    res = run_cli("check", path, *extra)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    assert res.stdout == ""
    for w in words:
        assert w.lower() in res.stderr.lower(), (w, res.stderr)
    assert len(res.stderr.strip().splitlines()) <= 2


def test_bad_config_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "config.json"
    cfg.write_text("{not json")
    res = run_cli("model", "show", str(cfg))
    assert res.returncode == 2 and "not valid JSON" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["catalog", "show", "nvidia-h100"], ["did you mean", "nvidia-h100-sxm5-80gb"]),
        (["catalog", "list", "gpus"], ["invalid choice"]),
        (["model", "show", "llama3-70b"], ["unknown model", "did you mean"]),
        (["check", "does-not-exist.yaml"], ["scenario", "file not found"]),
        (["no-such-command"], ["invalid choice"]),
    ],
)
def test_bad_cli_args_exit_2(args: list[str], words: list[str]) -> None:
    res = run_cli(*args)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    for w in words:
        assert w.lower() in res.stderr.lower(), (w, res.stderr)


def test_good_scenario_checks(tmp_yaml) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("check", tmp_yaml(GOOD), "--json")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    assert obj["valid"] is True and obj["hardware"]["nodes"] == 8


def test_catalog_list_and_show_json() -> None:
    res = run_cli("catalog", "list", "accelerators", "--json")
    assert res.returncode == 0
    rows = json.loads(res.stdout)["rows"]
    assert len(rows) >= 33
    res = run_cli("catalog", "show", "nvidia-h100-sxm5-80gb", "--json")
    obj = json.loads(res.stdout)
    assert obj["sources"] and obj["memory_bw_bytes_per_s"] == pytest.approx(3.35e12)


def test_model_show_json() -> None:
    res = run_cli("model", "show", "meta-llama-3.1-70b", "--json")
    obj = json.loads(res.stdout)
    assert obj["derived"]["kv_cache_bytes_per_token"]["bf16"] == 327_680
    res = run_cli("model", "show", str(EXAMPLES / "configs" / "tiny-llama-config.json"), "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["derived"]["params_total"] == 1_100_048_384
