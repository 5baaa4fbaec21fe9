"""Every input checked: bounds, architectures, files, YAML, JSON output, work budgets, conflicting keys, flags.

Each case states the input and what the one-line error must name. The property test at the end throws arbitrary
values into every numeric field and requires exit 0 with finite JSON or exit 2 with one error line.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiinfra.catalog.hf_config import arch_from_hf_config, load_hf_config
from aiinfra.catalog.resolve import load_scenario
from aiinfra.cli import main
from aiinfra.errors import SpecError
from aiinfra.report.render import json_text
from aiinfra.specs.scenario import parse_scenario
from aiinfra.specs.yaml_safe import MAX_YAML_NODES, load_yaml
from aiinfra.validation.runner import read_cases

ACC = "nvidia-h100-sxm5-80gb"
BASE: dict[str, Any] = {
    "model": "meta-llama-3.1-8b",
    "hardware": {"accelerator": ACC, "count": 8},
    "inference": {"input_tokens": 512, "output_tokens": 64, "batch": 8},
}


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse
            rc = int(exc.code) if isinstance(exc.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def with_key(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    node = data
    *parents, leaf = path.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[leaf] = value
    return data


def spec_error(data: dict[str, Any]) -> SpecError:
    with pytest.raises(SpecError) as info:
        parse_scenario(data)
    return info.value


# --- bounds: one per kind of bound, the message names field, value and range -----------------------------------
@pytest.mark.parametrize(
    ("path", "value", "words"),
    [
        ("hardware.count", 10**30, ["hardware.count", "≤ 10,000,000"]),
        ("hardware.count", True, ["hardware.count", "true/false"]),
        ("hardware.count", 4.5, ["hardware.count", "whole number"]),
        ("inference.batch", 10**9, ["inference.batch", "≤ 10,000,000"]),
        ("inference.input_tokens", 10**30, ["inference.input_tokens", "≤ 100,000,000"]),
        ("inference.slo.ttft_p90_s", math.inf, ["inference.slo.ttft_p90_s", "finite"]),
        ("inference.request_rate_per_s", math.nan, ["inference.request_rate_per_s", "finite"]),
        ("inference.arrival.ramp_s", math.inf, ["inference.arrival.ramp_s", "finite"]),
        ("inference.num_requests", 10**8, ["inference.num_requests", "≤ 10,000,000"]),
        ("inference.simulation.output_lengths", {"kind": "lognormal", "sigma": math.inf}, ["sigma", "finite"]),
        ("cost.pue", 0.5, ["cost.pue", "≥ 1 and ≤ 3"]),
        ("cost.usage.duration_s", 1e308, ["cost.usage.duration_s", "≤"]),
        (
            "cost.spot",
            {"interruptions_per_instance_per_hour": math.inf, "checkpoint_write_s": 60},
            ["interruptions_per_instance_per_hour", "finite"],
        ),
        ("datacenter.rack_power_limit_kw", math.inf, ["datacenter.rack_power_limit_kw", "finite"]),
        ("datacenter.oversubscription", math.inf, ["datacenter.oversubscription", "finite"]),
        ("datacenter.switch_price_usd", 1e308, ["datacenter.switch_price_usd", "≤"]),
        ("tco.network_capex_frac", 7, ["tco.network_capex_frac", "≥ 0 and ≤ 1"]),
        ("tco.maintenance_frac_per_year", 3, ["tco.maintenance_frac_per_year", "≤ 1"]),
        ("tco.horizon_months", 10**7, ["tco.horizon_months", "≤ 1,200"]),
        ("tco.years", 10**30, ["tco.years", "≤ 100"]),
        ("training", {"tokens": math.inf, "seq_len": 4096, "global_batch_seqs": 8}, ["training.tokens", "finite"]),
        (
            "training",
            {"tokens": 1e12, "seq_len": 4096, "global_batch_seqs": 10**9},
            ["training.global_batch_seqs", "≤ 10,000,000"],
        ),
    ],
)
def test_numeric_bounds(path: str, value: Any, words: list[str]) -> None:
    msg = str(spec_error(with_key(BASE, path, value)))
    for w in words:
        assert w in msg, (w, msg)


# --- model architectures -----------------------------------------------------------------------------------------
INLINE = {
    "num_layers": 4,
    "hidden_size": 1024,
    "num_heads": 16,
    "num_kv_heads": 4,
    "ffn_hidden_size": 4096,
    "vocab_size": 32000,
}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"hidden_size": -4096}, ["model.hidden_size", "≥ 1"]),
        ({"num_heads": 0}, ["model.num_heads", "≥ 1"]),
        ({"num_layers": 0}, ["model.num_layers"]),
        ({"hidden_size": 1000}, ["model.num_heads", "does not divide hidden_size 1000"]),  # 1000 / 16 = 62.5
        ({"num_kv_heads": 32}, ["model.num_kv_heads", "does not divide num_heads 16"]),
        ({"num_kv_heads": 5}, ["model.num_kv_heads", "does not divide"]),  # 16 / 5 is not whole
        ({"num_experts": 2, "experts_per_token": 4}, ["model.experts_per_token", "above num_experts 2"]),
        ({"num_experts": 8, "experts_per_token": -5}, ["model.experts_per_token"]),
        ({"num_experts": 8, "moe_layer_step": 0}, ["model.moe_layer_step"]),
        ({"hidden_size": 4096.7}, ["model.hidden_size", "whole number"]),
    ],
)
def test_inline_architecture_refused(change: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(SpecError) as info:
        load_scenario_from({**BASE, "model": {**INLINE, **change}})
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def load_scenario_from(data: dict[str, Any], tmp: Path | None = None) -> Any:
    from aiinfra.catalog.resolve import resolve

    return resolve(parse_scenario(data))


GOOD_CONFIG = {
    "num_hidden_layers": 4,
    "hidden_size": 512,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "intermediate_size": 2048,
    "vocab_size": 32000,
    "model_type": "llama",
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"vocab_size": None}, "vocab_size"),
        ({"num_attention_heads": 0}, "num_heads"),
        ({"hidden_size": -4096}, "hidden_size"),
        ({"num_hidden_layers": 0}, "num_layers"),
        ({"num_key_value_heads": 16}, "num_kv_heads"),
        ({"hidden_size": 500}, "num_heads"),  # 500 / 8 = 62.5
        ({"hidden_size": 4096.7}, "hidden_size"),
        ({"hidden_size": "big"}, "hidden_size"),
        ({"hidden_size": math.nan}, "hidden_size"),
        ({"num_local_experts": 2, "num_experts_per_tok": 4}, "experts_per_token"),
    ],
)
def test_config_json_refused(change: dict[str, Any], field: str) -> None:
    cfg = {k: v for k, v in {**GOOD_CONFIG, **change}.items() if v is not None}
    with pytest.raises(SpecError) as info:
        arch_from_hf_config(cfg)
    assert info.value.field.startswith("model.config") and field in info.value.field, str(info.value)


def test_config_json_good_still_reads() -> None:
    arch = arch_from_hf_config(GOOD_CONFIG)
    assert (arch.hidden_size, arch.head_size, arch.kv_heads) == (512, 64, 8)  # 512 / 8 heads = 64


# --- files -------------------------------------------------------------------------------------------------------
BAD_FILES: dict[str, tuple[bytes | None, str]] = {
    "latin-1": ("model: caf\xe9\n".encode("latin-1"), "not UTF-8"),
    "binary": (bytes(range(256)), "binary"),
    "empty": (b"", "empty"),
    "directory": (None, "directory"),
}


@pytest.mark.parametrize("kind", list(BAD_FILES))
@pytest.mark.parametrize("reader", ["scenario", "config", "cases", "trace"])
def test_bad_files_name_the_file(tmp_path: Path, kind: str, reader: str) -> None:
    content, words = BAD_FILES[kind]
    path = tmp_path / "f"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(SpecError) as info:
        if reader == "scenario":
            load_scenario(path)
        elif reader == "config":
            load_hf_config(path)
        elif reader == "cases":
            read_cases(path)
        else:
            from aiinfra.sim.arrivals import read_trace

            read_trace(str(path))
    assert str(path) in str(info.value) and words in str(info.value), str(info.value)


def test_cases_csv_header_only_and_negative_value(tmp_path: Path) -> None:
    from aiinfra.validation.runner import REQUIRED_TRAINING

    header = ",".join((*REQUIRED_TRAINING, "value"))
    p = tmp_path / "c.csv"
    p.write_text(header + "\n")
    with pytest.raises(SpecError, match="no rows"):
        read_cases(p)
    row = ",".join(["x"] * len(REQUIRED_TRAINING) + ["-5"])
    p.write_text(header + "\n" + row + "\n")
    with pytest.raises(SpecError, match="finite number > 0"):
        read_cases(p)


# --- YAML --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a: 1\na: 2\n", "duplicate key 'a' at line 2"),
        ("h: {count: 8, count: 16}\n", "duplicate key 'count'"),
        ("m: !!python/object/apply:os.system ['true']\n", "tag !!python/object/apply:os.system is not allowed"),
        ("m: !!binary aGk=\n", "tag !!binary is not allowed"),
        ("m: !foo bar\n", "tag !foo is not allowed"),
        ("m: " + "[" * 200 + "]" * 200 + "\n", "nested deeper than"),
        ("m: 1" + "0" * 5000 + "\n", "not loadable"),
        ("m: [\n", "not valid YAML"),
    ],
)
def test_yaml_refused(text: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        load_yaml(text, "scenario", "s.yaml")
    assert words in str(info.value), str(info.value)


def test_yaml_alias_bomb_refused_before_expanding() -> None:
    # 9 ** 8 = 43 million leaves from 8 lines; refused by counting nodes, not by expanding them
    lines = ["a: &a [x,x,x,x,x,x,x,x,x]"] + [
        f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]" for p, n in zip("abcdefg", "bcdefgh", strict=True)
    ]
    with pytest.raises(SpecError, match=f"more than {MAX_YAML_NODES:,}"):
        load_yaml("\n".join(lines) + "\n", "scenario", "s.yaml")


def test_yaml_plain_aliases_and_merges_still_load() -> None:
    assert load_yaml("a: &x {b: 1}\nc: {<<: *x, d: 2}\n", "scenario", "s") == {"a": {"b": 1}, "c": {"b": 1, "d": 2}}


# --- JSON output -------------------------------------------------------------------------------------------------
def test_json_text_refuses_non_finite_and_names_where() -> None:
    assert json_text({"a": [1.5, None]}) == '{"a": [1.5, null]}'
    with pytest.raises(ValueError, match=r"inf at a\[1\]"):
        json_text({"a": [1.0, math.inf]})


# --- work budgets and conflicting keys ----------------------------------------------------------------------------
def test_simulation_budget_refused_with_the_limit(tmp_path: Path) -> None:
    data = with_key(
        BASE, "inference", {"input_tokens": 512, "output_tokens": 64, "request_rate_per_s": 1e6, "duration_s": 1e6}
    )
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(data))
    rc, _, err = run(["simulate", str(p), "--json"])
    assert rc == 2 and "inference.duration_s" in err and "10,000,000 requests" in err, err


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (with_key(BASE, "inference.concurrency", 16), "inference.concurrency"),
        (with_key(BASE, "hardware.per_node", 3), "hardware.per_node = 3: does not divide count 8"),
        ({**BASE, "operations": {"oncall": 1}}, "operations"),
    ],
)
def test_conflicting_or_unread_keys_refused(data: dict[str, Any], words: str) -> None:
    assert words in str(spec_error(data))


def test_per_node_above_count_is_part_of_one_node() -> None:
    assert parse_scenario(with_key(BASE, "hardware", {"accelerator": ACC, "count": 1, "per_node": 8}))


def test_finetune_rank_above_hidden_size() -> None:
    data = {
        **BASE,
        "training": {
            "tokens": 1e9,
            "seq_len": 4096,
            "global_batch_seqs": 8,
            "finetune": {"method": "lora", "rank": 100000},
        },
    }
    with pytest.raises(SpecError, match="hidden size 4096"):  # Llama 3.1 8B: hidden 4096
        load_scenario_from(data)


# --- flags -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["model", "show", "meta-llama-3.1-8b", "--seq-len", "-5"], "--seq-len"),
        (["simulate", "{s}", "--seed", "-1"], "--seed"),
        (["simulate", "{s}", "--set", "inference.batch=[", "--json"], "--set inference.batch"),
        (["tco", "{s}", "--plot", "{s}"], "--plot"),  # a file where a folder is wanted
    ],
)
def test_bad_flags_exit_2(tmp_path: Path, argv: list[str], words: str) -> None:
    s = tmp_path / "s.yaml"
    s.write_text(yaml.safe_dump(BASE))
    rc, _, err = run([a.replace("{s}", str(s)).replace("{dir}", str(tmp_path)) for a in argv])
    assert rc == 2 and words in err and "Traceback" not in err, err


# --- property: arbitrary values in every numeric field -----------------------------------------------------------
PROPERTY_BASE: dict[str, Any] = {
    "model": "meta-llama-3.1-8b",
    "hardware": {"accelerator": ACC, "count": 16, "per_node": 8, "nics_per_node": 8},
    "inference": {
        "input_tokens": 512,
        "output_tokens": 64,
        "batch": 8,
        "users": 100,
        "request_rate_per_s": 2.0,
        "num_requests": 100,
        "duration_s": 60.0,
        "gpu_memory_utilization": 0.9,
        "block_size_tokens": 16,
        "slo": {"ttft_p90_s": 1.0, "tpot_p99_s": 0.05, "e2e_p99_s": 30.0},
        "arrival": {"kind": "gamma", "cv": 2.0, "ramp_s": 1.0},
    },
    "cost": {
        "usage": {"duration_s": 3600.0, "utilisation_frac": 0.8, "tokens": 1e9},
        "pue": 1.2,
        "node_power_kw": 10.0,
        "electricity_usd_per_kwh": 0.1,
        "storage_usd_per_gb_month": 0.02,
        "dataset_bytes": 1e12,
        "checkpoints_kept": 2,
        "egress_usd_per_gb": 0.05,
        "egress_bytes": 1e10,
        "spot": {"interruptions_per_instance_per_hour": 0.05, "checkpoint_write_s": 60.0, "restart_s": 300.0},
    },
    "datacenter": {
        "rack_power_limit_kw": 40.0,
        "switch_radix": 64,
        "oversubscription": 1.0,
        "pue": 1.3,
        "checkpoint_write_s": 60.0,
        "bytes_per_token": 4.0,
        "switch_price_usd": 30000.0,
        "transceiver_price_usd": 800.0,
        "switch_power_w": 1500.0,
    },
    "tco": {
        "years": 5,
        "horizon_months": 60,
        "utilisation_frac": 0.9,
        "system_price_usd": 300000.0,
        "network_capex_frac": 0.1,
        "colocation_usd_per_kw_month": 180.0,
        "electricity_usd_per_kwh": 0.08,
        "staff_usd_per_year": 150000.0,
        "maintenance_frac_per_year": 0.05,
        "pue": 1.3,
    },
}


def _leaves(obj: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for k, v in obj.items():
        path = f"{prefix}.{k}" if prefix else k
        out += _leaves(v, path) if isinstance(v, dict) else [path] if isinstance(v, int | float) else []
    return out


LEAVES = _leaves(PROPERTY_BASE)
ANY_VALUE = st.one_of(
    st.integers(min_value=-(10**31), max_value=10**31),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
)


def _finite(obj: Any) -> bool:
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(_finite(v) for v in obj.values())
    if isinstance(obj, list):
        return all(_finite(v) for v in obj)
    return True


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    changes=st.dictionaries(st.sampled_from(LEAVES), ANY_VALUE, min_size=1, max_size=3),
    command=st.sampled_from(["check", "infer", "cost", "datacenter", "tco"]),
)
def test_any_value_in_any_field_is_answered_or_refused_cleanly(
    tmp_path: Path, changes: dict[str, Any], command: str
) -> None:
    data = PROPERTY_BASE
    for path, value in changes.items():
        data = with_key(data, path, value)
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(data))
    rc, out, err = run([command, str(p), "--json"])
    if rc == 0:
        assert _finite(json.loads(out)), out
    else:
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1, (rc, err)
        assert lines[0].startswith(("error: ", "infeasible: ")) and "Traceback" not in err, err
