"""Inference planner against hand calculations and roofline properties."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.model_figures import params_total
from aiinfra.analytic.step_time import StepBatch
from aiinfra.app.tables import price_book
from aiinfra.catalog.resolve import cluster_for
from aiinfra.planning.inference import activation_peak_bytes, kv_capacity, speculative_tokens_per_step
from aiinfra.units import GB

from .conftest import EXAMPLES, run_cli

L70 = catalog.model("meta-llama-3.1-70b")


def test_kv_bytes_shard_over_tp_and_replicate_beyond_kv_heads() -> None:
    c = cluster_for("nvidia-h100-sxm5-80gb", 8)
    # 2 (K,V) · 80 layers · ceil(8/8)=1 head · 128 · 2 B = 40,960 B per token per GPU
    assert InferenceModel(model=L70, cluster=c, tp=8).kv_bytes_per_token_per_accelerator == 40_960
    # tp 16 > 8 KV heads: each head is replicated, still one head per GPU
    assert InferenceModel(model=L70, cluster=c, tp=16).kv_bytes_per_token_per_accelerator == 40_960
    assert InferenceModel(model=L70, cluster=c, tp=2).kv_bytes_per_token_per_accelerator == 4 * 40_960


def test_kv_capacity_by_hand() -> None:
    c = cluster_for("nvidia-h100-sxm5-80gb", 8)
    im = InferenceModel(model=L70, cluster=c, tp=8, weight_precision="fp8", kv_precision="fp8")
    cap = kv_capacity(im, 0.9, 16, 2048)
    mem = 79.19 * 2**30  # what the CUDA runtime reports on an H100 80GB (catalog runtime_visible_memory)
    # fp8 layers, bf16 embedding and head (ModelOpt keeps lm_head unquantised): 2 · 128,256 · 8,192 vocab
    # weights take 2 B each instead of 1
    vocab = 2 * 128256 * 8192
    weights = (params_total(L70) - vocab) * 1.0 / 8 + vocab * 2.0 / 8
    act = 2048 * (3 * 8192 + 3 * 28672 / 8) * 2.0
    reserve = (3.5 + 0.392) * GB
    per_tok = 2 * 80 * 1 * 128 * 1.0  # fp8 KV, one KV head per GPU
    blocks = math.floor((0.9 * mem - weights - act - reserve) / (16 * per_tok))
    assert cap.blocks == blocks and cap.kv_capacity_tokens == 16 * blocks
    assert cap.activation_peak_bytes == pytest.approx(activation_peak_bytes(L70, 8, 2048))


def test_speculative_expected_tokens() -> None:
    # Leviathan et al. 2023: (1 − α^(γ+1)) / (1 − α); α = 0.8, γ = 4 → (1 − 0.32768)/0.2 = 3.3616
    assert speculative_tokens_per_step(0.8, 4) == pytest.approx(3.3616)
    assert speculative_tokens_per_step(1.0, 4) == 5.0


def test_moe_streams_union_of_touched_experts() -> None:
    mx = catalog.model("mixtral-8x7b")
    c = cluster_for("nvidia-h100-sxm5-80gb", 8)
    im = InferenceModel(model=mx, cluster=c, tp=2)
    t1 = im.breakdown(StepBatch.decode(1, 0)).linear_s
    t64 = im.breakdown(StepBatch.decode(64, 0)).linear_s
    # one token touches 2 of 8 experts; 64 tokens touch 8·(1 − (6/8)^64) ≈ 8 → far more bytes, not 64× more
    assert t1 < t64 < 4 * t1


@settings(max_examples=30, deadline=None)
@given(
    seqs=st.integers(1, 512),
    ctx=st.integers(0, 32768),
    prefill=st.integers(0, 8192),
    tp=st.sampled_from([1, 2, 4, 8]),
    acc=st.sampled_from(["nvidia-h100-sxm5-80gb", "nvidia-a100-sxm4-80gb", "nvidia-h200-sxm-141gb"]),
)
def test_roofline_bounds_and_bandwidth_monotonicity(seqs: int, ctx: int, prefill: int, tp: int, acc: str) -> None:
    c = cluster_for(acc, 8)
    im = InferenceModel(model=L70, cluster=c, tp=tp)
    batch = StepBatch.decode(seqs, ctx) + StepBatch.prefill(prefill)
    t = im.iteration_time_s(batch)
    a = c.accelerator
    weight_bytes_per_gpu = params_total(L70) * 2.0 / tp
    assert t >= weight_bytes_per_gpu / a.memory_bw_bytes_per_s * (1 - 1e-9)  # ≥ bytes / peak bandwidth
    assert t >= 2.0 * batch.tokens * 68e9 / tp / a.dense_flop_per_s["bf16"]  # ≥ 2·N·tokens / peak FLOP/s
    faster = dataclasses.replace(a, memory_bw_bytes_per_s=2 * a.memory_bw_bytes_per_s)
    im2 = InferenceModel(model=L70, cluster=dataclasses.replace(c, accelerator=faster), tp=tp)
    assert im2.iteration_time_s(batch) <= t * (1 + 1e-9)


def test_throughput_grows_with_batch_until_memory() -> None:
    from aiinfra.catalog.resolve import load_scenario

    last = 0.0
    for b in (1, 4, 16, 64, 256):
        from aiinfra.planning.inference import estimate_inference

        sets = [f"inference.batch={b}", "inference.concurrency=null"]  # the example gives concurrency
        e = estimate_inference(load_scenario(EXAMPLES / "infer-llama3.1-70b-h100.yaml", sets))
        assert e.fits
        assert e.output_tokens_per_s > last
        last = e.output_tokens_per_s


def test_infer_cli_json() -> None:
    res = run_cli("infer", str(EXAMPLES / "infer-llama3.1-70b-h100.yaml"), "--json")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    for key in (
        "fits",
        "kv_capacity_tokens",
        "max_concurrent_seqs",
        "ttft_s",
        "tpot_s",
        "output_tokens_per_s",
        "output_tokens_per_s_per_user",
        "memory_per_accelerator",
        "prefill_bound",
        "decode_bound",
    ):
        assert key in obj
    assert obj["decode_bound"] in ("compute", "memory", "communication")


def test_capacity_cli_json_and_demand_error(tmp_yaml) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("capacity", str(EXAMPLES / "capacity-llama70b-10k-users.yaml"), "--json")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    chosen = obj["chosen"]
    assert chosen["accelerators"] == chosen["replicas"] * chosen["tp"]
    assert chosen["replicas"] * chosen["batch_per_replica"] >= 10_000
    assert chosen["tpot_s"] <= 0.05 and chosen["ttft_s"] <= 1.0
    res = run_cli("capacity", str(EXAMPLES / "capacity-llama70b-10k-users.yaml"), "--set", "inference.users=null")
    assert res.returncode == 2 and "inference.users" in res.stderr and "Traceback" not in res.stderr


def test_capacity_compares_engines() -> None:
    # --engines vllm,trtllm: every candidate of both engines in one ranking, each exactly as the one-engine search
    # prices it; the chosen one is the cheapest of either and its engine is reported; an unknown engine exits 2
    from aiinfra.catalog.resolve import load_scenario
    from aiinfra.planning.capacity import plan_capacity

    sc = load_scenario(EXAMPLES / "capacity-llama70b-10k-users.yaml", [])
    both = plan_capacity(sc, engines=["vllm", "trtllm"], prices=price_book(), parts=catalog.rows("accelerators"))
    parts = catalog.rows("accelerators")
    alone = {e: plan_capacity(sc, engines=[e], prices=price_book(), parts=parts) for e in ("vllm", "trtllm")}
    assert {o.engine for o in both} == {"vllm", "trtllm"}
    for e, opts in alone.items():
        key = lambda o: (o.accelerator, o.tp, o.weight_precision, o.speculative)  # noqa: E731
        mine = {key(o): (o.accelerators, o.tpot_s) for o in both if o.engine == e}
        assert mine == {key(o): (o.accelerators, o.tpot_s) for o in opts}
    cheapest = min((alone[e][0] for e in alone), key=lambda o: (o.usd_per_hour, o.accelerators))
    assert (both[0].engine, both[0].accelerators) == (cheapest.engine, cheapest.accelerators)
    res = run_cli("capacity", str(EXAMPLES / "capacity-llama70b-10k-users.yaml"), "--engines", "vllm,tgi")
    assert res.returncode == 2 and "engines" in res.stderr and "tgi" in res.stderr
    assert "Traceback" not in res.stderr
    res = run_cli("capacity", str(EXAMPLES / "capacity-llama70b-10k-users.yaml"), "--engines", "trtllm", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["chosen"]["engine"] == "trtllm"


def test_context_beyond_model_is_rejected() -> None:
    res = run_cli("infer", str(EXAMPLES / "infer-llama3.1-70b-h100.yaml"), "--set", "inference.input_tokens=200000")
    assert res.returncode == 2 and "context" in res.stderr and "Traceback" not in res.stderr


def test_capacity_simulated_check() -> None:
    res = run_cli("capacity", str(EXAMPLES / "capacity-llama70b-10k-users.yaml"), "--simulate", "--json")
    assert res.returncode == 0, res.stderr
    sim = json.loads(res.stdout)["simulated"]
    assert sim["max_request_rate_per_replica_per_s"] > 0
    assert sim["replicas_needed"] == math.ceil(
        sim["demand_request_rate_per_s"] / sim["max_request_rate_per_replica_per_s"]
    )
    # demand given as 10,000 concurrent users: a closed-loop check sizes the fleet by users per replica
    closed = sim["closed_loop"]
    assert closed["users"] == 10_000
    assert closed["replicas_needed"] == math.ceil(10_000 / closed["max_users_per_replica"])
    chosen = json.loads(res.stdout)["chosen"]
    assert closed["accelerators_needed"] == closed["replicas_needed"] * chosen["tp"]
    # whole instances: replicas of tp GPUs packed k // tp to an instance of k GPUs
    k = chosen["price"]["accelerators_per_instance"]
    for check in (sim, closed):
        assert check["accelerators_billed"] == math.ceil(check["replicas_needed"] / (k // chosen["tp"])) * k


def test_attention_dp_plan_replicates_non_expert_weights(tmp_yaml) -> None:  # type: ignore[no-untyped-def]
    from aiinfra.analytic.model_figures import param_breakdown

    from .conftest import cli_json

    text = """model: qwen3-235b-a22b
hardware: {accelerator: nvidia-h100-sxm5-80gb, count: 8}
inference: {weight_precision: fp8, kv_precision: fp8, input_tokens: 1000, output_tokens: 1000, batch: 64,
            plan: {tp: 8, ep: 8, attention_dp: true}}
"""
    pb = param_breakdown(catalog.model("qwen3-235b-a22b"))
    routed = pb.moe_layers * pb.moe_routed_per_layer
    # every rank keeps the attention, router and embedding weights whole and 1/8 of the routed experts (1 B each);
    # the embedding and output head stay bf16 (2 B)
    vocab = pb.embedding + pb.output
    expect = (pb.total - routed - vocab) + 2 * vocab + routed / 8
    dp = cli_json("infer", tmp_yaml(text))
    tp = cli_json("infer", tmp_yaml(text.replace("attention_dp: true", "attention_dp: false"), "b.yaml"))
    assert dp["memory_per_accelerator"]["weights_bytes"] == pytest.approx(expect, rel=1e-9)
    assert tp["memory_per_accelerator"]["weights_bytes"] == pytest.approx((pb.total + vocab) / 8, rel=1e-9)


def test_capacity_layouts_offer_attention_dp_for_moe() -> None:
    from aiinfra.planning.capacity import layouts
    from aiinfra.report.render import layout_label

    def names(model_id: str) -> list[str]:
        plans = layouts(catalog.model(model_id), 8)
        return [f"tp{p.tp}" + (" dp" if p.attention_dp else "") + (f" ep{p.ep}" if p.ep > 1 else "") for p in plans]

    # Qwen3-235B: 64 heads, 4 KV heads (tp 8 replicates them), 128 experts: every tp, and for tp > 1 the experts
    # split ep = tp ways under TP attention and under attention DP
    assert names("qwen3-235b-a22b") == [
        "tp1",
        "tp2",
        "tp2 ep2",
        "tp2 dp ep2",
        "tp4",
        "tp4 ep4",
        "tp4 dp ep4",
        "tp8",
        "tp8 ep8",
        "tp8 dp ep8",
    ]
    # a dense model gets tensor parallelism only; a domain of 4 stops at tp 4
    assert names("meta-llama-3.1-70b") == ["tp1", "tp2", "tp4", "tp8"]
    assert [p.tp for p in layouts(catalog.model("meta-llama-3.1-70b"), 4)] == [1, 2, 4]
    # how infer and capacity print them
    assert [layout_label(4), layout_label(4, 4), layout_label(8, 8, attention_dp=True)] == [
        "tp4",
        "tp4 ep4",
        "tp8 dp-attn ep8",
    ]


def test_capacity_moe_table_names_layouts(tmp_yaml) -> None:  # type: ignore[no-untyped-def]
    text = """model: qwen3-235b-a22b
hardware: {accelerator: nvidia-h200-sxm-141gb, count: 8}
inference: {weight_precision: fp8, input_tokens: 1000, output_tokens: 1000, users: 2000,
            slo: {ttft_p90_s: 2.0, tpot_p99_s: 0.1}}
"""
    res = run_cli("capacity", str(tmp_yaml(text)), "--engines", "vllm,trtllm", "--json")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    every = [obj["chosen"], *obj["alternatives"]]
    dp = [o for o in every if o["attention_dp"]]
    assert dp and all(o["ep"] == o["tp"] > 1 for o in dp)
    assert any(o["ep"] > 1 and not o["attention_dp"] for o in every)
    # equal bills are ranked by $ per million output tokens (throughput headroom)
    feasible = [o for o in every if o["accelerators"] > 0]
    for a, b in itertools.pairwise(feasible):
        assert (a["usd_per_hour"], a["accelerators"]) <= (b["usd_per_hour"], b["accelerators"])
        if (a["usd_per_hour"], a["accelerators"]) == (b["usd_per_hour"], b["accelerators"]):
            assert a["usd_per_million_output_tokens"] <= b["usd_per_million_output_tokens"]


def test_known_accuracy_gaps_are_printed(tmp_yaml) -> None:  # type: ignore[no-untyped-def]
    from .conftest import cli_json

    text = """model: meta-llama-4-scout
hardware: {accelerator: nvidia-h100-sxm5-80gb, count: 4}
inference: {engine: trtllm, weight_precision: fp8, kv_precision: fp8, input_tokens: 128, output_tokens: 2048,
            batch: max, plan: {tp: 4, ep: 4, attention_dp: true}}
"""
    gap = [n for n in cli_json("infer", tmp_yaml(text))["notes"] if n.startswith("accuracy:")]
    assert len(gap) == 1 and "Llama 4" in gap[0] and "docs/validation-analysis.md" in gap[0]
    # the same deployment on vLLM, and a dense model on TensorRT-LLM, fall in no known gap
    for other in (
        text.replace("engine: trtllm", "engine: vllm"),
        text.replace("meta-llama-4-scout", "meta-llama-3.1-8b"),
    ):
        assert not [n for n in cli_json("infer", tmp_yaml(other, "b.yaml"))["notes"] if n.startswith("accuracy:")]
    # capacity prints the notes of the deployment it chose
    demand = """model: meta-llama-4-scout
hardware: {accelerator: nvidia-h100-sxm5-80gb, count: 8}
inference: {weight_precision: fp8, input_tokens: 1000, output_tokens: 1000, users: 500,
            slo: {ttft_p90_s: 2.0, tpot_p99_s: 0.1}}
"""
    path = tmp_yaml(demand, "c.yaml")
    res = run_cli("capacity", path, "--engines", "trtllm", "--accelerators", "nvidia-h100-sxm5-80gb", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["accuracy_notes"] == [n.removeprefix("accuracy: ") for n in gap]
    res = run_cli("capacity", path, "--engines", "vllm", "--accelerators", "nvidia-h100-sxm5-80gb")
    # no known-gap note (the error band's own "accuracy:" line is on every answer)
    assert res.returncode == 0 and "note: accuracy:" not in res.stdout
