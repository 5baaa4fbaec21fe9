"""Scenario loading: examples, overrides, numbers, HF configs."""

from __future__ import annotations

import pytest

from aiinfra.analytic.model_figures import params_total
from aiinfra.catalog.resolve import load_scenario
from aiinfra.specs.scenario import parse_scenario

from .conftest import EXAMPLES


def test_reference_example_loads() -> None:
    sc = load_scenario(EXAMPLES / "scenario-reference.yaml")
    assert sc.training is not None and sc.training.tokens == 15e12  # "15e12" is a string in YAML 1.1
    assert sc.training.plan is not None and sc.training.plan.tp == 8
    assert sc.cluster.count == 1024 and sc.cluster.per_node == 8 and sc.cluster.nodes == 128


def test_set_overrides_nested_key() -> None:
    sc = load_scenario(EXAMPLES / "scenario-reference.yaml", ["training.plan.tp=4", "hardware.count=512"])
    assert sc.training is not None and sc.training.plan is not None and sc.training.plan.tp == 4
    assert sc.cluster.count == 512


def test_every_example_parses() -> None:
    from aiinfra.app.pack import load_pack
    from aiinfra.app.schedule import load_schedule

    for path in sorted(EXAMPLES.glob("*.yaml")):
        text = path.read_text()
        if "\nschedule:" in "\n" + text:  # a schedule file, not a scenario
            load_schedule(path)
        elif "\npack:" in "\n" + text:  # a portfolio file
            load_pack(path)
        else:
            load_scenario(path)


def test_hf_config_by_path() -> None:
    data = {
        "model": {"config": str(EXAMPLES / "configs" / "tiny-llama-config.json")},
        "hardware": {"accelerator": "nvidia-l4"},
    }
    from aiinfra.catalog.resolve import resolve

    sc = resolve(parse_scenario(data))
    # 22 layers × (2·2048² + 2·2048·256 + 3·2048·5632 + 2·2048) + 2·32000·2048 + 2048 = 1,100,048,384
    assert params_total(sc.model) == 1_100_048_384
    assert sc.model.attention == "gqa" and sc.model.mlp == "swiglu"


def test_inline_model() -> None:
    from aiinfra.catalog.resolve import resolve

    data = {
        "model": {
            "num_layers": 2,
            "hidden_size": 64,
            "num_heads": 4,
            "ffn_hidden_size": 128,
            "vocab_size": 10,
            "attention": "mha",
            "mlp": "gelu",
            "tied_embeddings": True,
        },
        "hardware": {"accelerator": "nvidia-a100-sxm4-80gb", "count": 8},
    }
    sc = resolve(parse_scenario(data))
    # 2 × (4·64² + 2·64·128 + 2·64) + 10·64 + 64
    assert params_total(sc.model) == 2 * (4 * 64 * 64 + 2 * 64 * 128 + 2 * 64) + 10 * 64 + 64


@pytest.mark.parametrize("text", ["15e12", "1.5e13", "15000000000000"])
def test_numbers_in_many_spellings(text: str) -> None:
    data = {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": "nvidia-h100-sxm5-80gb"},
        "training": {"tokens": text, "seq_len": 8192, "global_batch_seqs": 512},
    }
    inp = parse_scenario(data)
    assert inp.training is not None and inp.training.tokens == 15e12
