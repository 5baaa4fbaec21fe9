"""`aiinfra export`: engine launch commands and Kubernetes manifests of a planned deployment.

Expected flags are those of each engine's documentation (catalog/data/engine_cli.yaml cites them): vLLM's
``vllm serve MODEL --tensor-parallel-size N``, SGLang's ``--tp-size``/``--dp-size``/``--enable-dp-attention``,
TensorRT-LLM's ``trtllm-serve MODEL --tp_size N --ep_size N`` with ``enable_attention_dp`` in the extra options YAML.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from aiinfra import app
from aiinfra.app.export import FORMATS, export
from aiinfra.cli import main
from aiinfra.errors import SpecError
from tests.conftest import EXAMPLES

INFER = str(EXAMPLES / "infer-llama3.1-70b-h100.yaml")


def _plan(**plan: Any) -> Any:
    return app.load_scenario(INFER, set=[f"inference.plan.{k}={v}" for k, v in plan.items()])


def _moe_attention_dp() -> Any:
    return app.load_scenario(
        INFER,
        set=[
            "model=qwen3-30b-a3b",
            "inference.plan.tp=8",
            "inference.plan.ep=8",
            "inference.plan.attention_dp=true",
            "inference.weight_precision=bf16",
            "inference.kv_precision=bf16",
        ],
    )


def test_vllm_command_of_a_given_plan() -> None:
    r = export(_plan(tp=8), "vllm")
    argv = r.launch.argv
    assert argv[:3] == ("vllm", "serve", "meta-llama/Llama-3.1-70B")  # the catalog model's repository
    i = argv.index("--tensor-parallel-size")
    assert argv[i + 1] == "8"
    assert r.source == "inference.plan"
    assert r.served.replicas == 1  # 8 accelerators / tp 8


def test_attention_dp_moe_on_each_engine() -> None:
    sc = _moe_attention_dp()
    v = export(sc, "vllm").launch.argv
    # vLLM: DP attention = --data-parallel-size over single-GPU ranks, experts over all ranks
    assert v[v.index("--data-parallel-size") + 1] == "8"
    assert v[v.index("--tensor-parallel-size") + 1] == "1"
    assert "--enable-expert-parallel" in v
    s = export(sc, "sglang").launch.argv
    assert s[s.index("--tp-size") + 1] == "8" and s[s.index("--dp-size") + 1] == "8"
    assert "--enable-dp-attention" in s and s[s.index("--ep-size") + 1] == "8"
    t = export(sc, "trtllm").launch
    assert t.argv[t.argv.index("--tp_size") + 1] == "8" and t.argv[t.argv.index("--ep_size") + 1] == "8"
    assert t.extra_options == {"enable_attention_dp": True}
    assert t.argv[t.argv.index("--extra_llm_api_options") + 1] == t.extra_options_path


def test_fp8_kv_and_weights_flags() -> None:
    sc = app.load_scenario(
        INFER, set=["inference.plan.tp=4", "inference.weight_precision=fp8", "inference.kv_precision=fp8"]
    )
    v = export(sc, "vllm").launch.argv
    assert v[v.index("--kv-cache-dtype") + 1] == "fp8" and v[v.index("--quantization") + 1] == "fp8"
    s = export(sc, "sglang").launch.argv
    assert s[s.index("--kv-cache-dtype") + 1] == "fp8_e4m3"
    t = export(sc, "trtllm").launch
    assert t.extra_options == {"kv_cache_config": {"dtype": "fp8"}}
    assert any("FP8-quantised checkpoint" in n for n in t.notes)  # TensorRT-LLM reads FP8 from the checkpoint


def test_vllm_cannot_split_experts_fewer_ways_than_its_ranks() -> None:
    sc = app.load_scenario(INFER, set=["model=qwen3-30b-a3b", "inference.plan.tp=8", "inference.plan.ep=4"])
    with pytest.raises(SpecError) as e:
        export(sc, "vllm")
    assert e.value.field == "inference.plan.ep"
    assert "--ep_size" in export(sc, "trtllm").launch.argv  # TensorRT-LLM has an expert-parallel size


def test_a_flag_newer_than_the_version_is_refused() -> None:
    sc = app.load_scenario(INFER, set=["model=qwen3-30b-a3b", "inference.plan.tp=8", "inference.plan.ep=8"])
    with pytest.raises(SpecError) as e:
        export(sc, "trtllm", engine_version="0.18.2")  # --ep_size first documented in 0.19
    assert e.value.field == "--engine-version" and "--ep_size" in str(e.value)
    with pytest.raises(SpecError, match="--enable-expert-parallel"):
        export(sc, "vllm", engine_version="0.7.3")
    assert "--ep_size" in export(sc, "trtllm", engine_version="0.19.0").launch.argv


def test_kubernetes_manifest_of_the_capacity_choice() -> None:
    sc = app.load_scenario(str(EXAMPLES / "capacity-llama70b-10k-users.yaml"))
    best = app.capacity(sc).chosen
    r = export(sc, "kubernetes")
    docs = list(yaml.safe_load_all(r.manifest or ""))
    kinds = [d["kind"] for d in docs]
    assert kinds == ["Deployment", "Service"]
    dep = docs[0]
    assert dep["spec"]["replicas"] == best.replicas
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": best.tp}
    assert container["command"][:2] == ["vllm", "serve"]
    assert container["command"][container["command"].index("--max-num-seqs") + 1] == str(best.batch_per_replica)
    assert docs[1]["spec"]["ports"][0]["port"] == 8000
    assert dep["spec"]["selector"]["matchLabels"] == dep["spec"]["template"]["metadata"]["labels"]


def test_multi_node_replica_is_a_leader_worker_set() -> None:
    sc = app.load_scenario(INFER, set=["hardware.count=32", "inference.plan.tp=8", "inference.plan.pp=2"])
    r = export(sc, "kubernetes", engine="trtllm")
    docs = list(yaml.safe_load_all(r.manifest or ""))
    lws = next(d for d in docs if d["kind"] == "LeaderWorkerSet")
    assert lws["spec"]["replicas"] == 2  # 32 accelerators / (tp 8 × pp 2)
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2  # 16 accelerators on 8-GPU nodes
    pod = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    assert pod["resources"]["limits"] == {"nvidia.com/gpu": 8}


@pytest.mark.parametrize(
    "example", ["infer-llama3.1-70b-h100.yaml", "simulate-llama70b-h100.yaml", "capacity-llama70b-10k-users.yaml"]
)
def test_every_format_for_each_serving_example(example: str) -> None:
    sc = app.load_scenario(str(EXAMPLES / example))
    for fmt in FORMATS:
        d = export(sc, fmt).to_dict()
        assert d["command"] and d["replicas"] >= 1
        if fmt == "kubernetes":
            assert [doc["kind"] for doc in yaml.safe_load_all(d["manifest_yaml"])][-1] == "Service"


def test_cli_bad_combination_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "export",
            INFER,
            "--format",
            "trtllm",
            "--set",
            "model=qwen3-30b-a3b",
            "--set",
            "inference.plan.tp=8",
            "--set",
            "inference.plan.ep=8",
            "--engine-version",
            "0.18.2",
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "--engine-version" in err and "--ep_size" in err and "Traceback" not in err
    assert main(["export", INFER, "--format", "vllm", "--model-path", "/models/llama", "--json"]) == 0
    assert '"/models/llama"' in capsys.readouterr().out
