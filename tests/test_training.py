"""Training planner: memory, step time, search — against hand calculations written here."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra import catalog
from aiinfra.analytic.model_figures import params_total
from aiinfra.analytic.training_memory import TrainSetup, activation_bytes_per_layer, memory_per_rank
from aiinfra.analytic.training_step import step_time
from aiinfra.catalog.resolve import load_scenario, resolve, resolve_cluster
from aiinfra.planning.training import estimate_memory, plan_training
from aiinfra.search.plans import enumerate_plans, single_plan
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput, parse_scenario

from .conftest import EXAMPLES, run_cli

GPT = ModelArch(
    id="t-gpt",
    num_layers=24,
    hidden_size=2048,
    num_heads=16,
    ffn_hidden_size=8192,
    mlp="gelu",
    vocab_size=51200,
    attention="mha",
    tied_embeddings=True,
    norm="layernorm",
)


def _scenario(model: str, count: int, extra: dict | None = None):  # type: ignore[no-untyped-def]
    data = {
        "model": model,
        "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": count},
        "training": {"tokens": 1e9, "seq_len": 4096, "global_batch_seqs": 64, **(extra or {})},
    }
    return resolve(parse_scenario(data))


def test_adam_mixed_precision_18_bytes_per_param() -> None:
    sc = _scenario("meta-llama-2-7b", 1, {"plan": {"sharding": "none"}})
    n = params_total(sc.model)
    row = estimate_memory(sc).rows[0]
    # Megatron convention: bf16 weights 2 B, fp32 grads 4 B, fp32 master + Adam m, v 12 B
    assert row.weights_bytes == pytest.approx(2 * n)
    assert row.gradients_bytes == pytest.approx(4 * n)
    assert row.optimizer_states_bytes == pytest.approx(12 * n)
    assert n == pytest.approx(6.74e9, rel=0.01)  # Llama 2 7B: 6,738,415,616 parameters
    assert not row.fits  # 121 GB of model state cannot fit an 80 GB H100


def test_zero_sharding_divides_by_dp() -> None:
    sc = _scenario("meta-llama-2-7b", 8)
    rows = {r.plan["sharding"]: r for r in estimate_memory(sc).rows}
    n = params_total(sc.model)
    assert rows["zero1"].optimizer_states_bytes == pytest.approx(12 * n / 8)
    assert rows["zero1"].gradients_bytes == pytest.approx(4 * n)
    assert rows["zero2"].gradients_bytes == pytest.approx(4 * n / 8)
    # PyTorch FSDP (mixed precision): the sharded fp32 parameters are the master copy (weights 4/8 B), so the
    # optimizer adds only Adam m, v (8/8 B): 4 + 4 + 8 = 16 B per parameter over 8 ranks, not 20
    # + two all-gathered bf16 layers: 2 × 2 B × (4·4096² + 3·4096·11008 + norms) = 4 × 202.38e6 = 0.8095 GB
    assert rows["fsdp"].weights_bytes == pytest.approx(4 * n / 8 + 4 * 202.38e6, rel=1e-5)
    assert rows["fsdp"].optimizer_states_bytes == pytest.approx(8 * n / 8)


def test_lora_trainable_params_peft_count() -> None:
    # Llama-2-7B, r=8 on q and v: 32 layers × 2 matrices × 8 × (4096 + 4096) = 4,194,304 (PEFT prints this)
    sc = _scenario("meta-llama-2-7b", 1, {"finetune": {"method": "lora", "rank": 8, "target_modules": ["q", "v"]}})
    rep = estimate_memory(sc)
    assert rep.trainable_params == 4_194_304
    row = rep.rows[0]
    assert row.weights_bytes == pytest.approx(2 * params_total(sc.model) + 2 * 4_194_304)


def test_qlora_nf4_base() -> None:
    sc = _scenario("meta-llama-2-70b", 1, {"finetune": {"method": "qlora", "rank": 16, "target_modules": ["q", "v"]}})
    row = estimate_memory(sc).rows[0]
    lora = 80 * 16 * ((8192 + 8192) + (8192 + 1024))  # r·(d_in + d_out): q 8192→8192, v 8192→1024 (8 kv heads)
    base = params_total(sc.model) * (4 + 0.127) / 8  # NF4 + double-quantised constants (QLoRA §3)
    assert row.weights_bytes == pytest.approx(base + 2 * lora)


def test_korthikanti_selective_34_sbh_over_t() -> None:
    setup = TrainSetup(model=GPT, seq_len=2048, global_batch_seqs=8, precision="bf16", flash_attention=False)
    plans = single_plan(GPT, setup, tp=4, pp=1, dp=1, cp=1, ep=1, vp=1, mb=2, sharding="none", recompute="selective")
    act = activation_bytes_per_layer(setup, plans, plans.recompute)[0]
    assert act == pytest.approx(34 * 2048 * 2 * 2048 / 4)  # Korthikanti Table 2: 34·s·b·h/t (SP + selective)
    none = activation_bytes_per_layer(setup, plans, np.zeros(1, dtype=np.int64))[0]
    # no recompute with SP: s·b·h·(34 + 5·a·s/h)/t
    assert none == pytest.approx(2048 * 2 * 2048 * (34 + 5 * 16 * 2048 / 2048) / 4)
    full = activation_bytes_per_layer(setup, plans, np.full(1, 2))[0]
    assert full == pytest.approx(2 * 2048 * 2 * 2048 / 4)


def test_pipeline_bubble_fraction() -> None:
    cluster = resolve_cluster(HardwareInput(accelerator="nvidia-h100-sxm5-80gb", count=4))
    setup = TrainSetup(model=GPT, seq_len=2048, global_batch_seqs=8, precision="bf16")
    for vp in (1, 2):
        plans = single_plan(GPT, setup, tp=1, pp=4, dp=1, cp=1, ep=1, vp=vp, mb=1, sharding="none", recompute="none")
        s = step_time(setup, cluster, plans)
        # bubble = (p − 1)/(m·v) of the pipeline's busy time (Narayanan et al. 2021): m = 8 micro-batches
        # bubble = (p−1)/v × (one micro-batch's compute + its exposed p2p); compute = m × micro-batch compute;
        # exposed ≥ m × p2p, so the ratio is bracketed by the two denominators
        frac = 3 / (8 * vp)
        assert s.bubble_s[0] / s.compute_s[0] >= frac * (1 - 1e-9)
        assert s.bubble_s[0] / (s.compute_s[0] + s.exposed_comm_s[0]) <= frac * (1 + 1e-9)
        assert s.bubble_s[0] / s.compute_s[0] == pytest.approx(frac, rel=0.1)


def test_mfu_definition_and_time_to_train() -> None:
    sc = load_scenario(
        EXAMPLES / "train-llama3.1-70b-h100.yaml",
        ["training.plan.tp=8", "training.plan.pp=4", "training.plan.sharding=zero1"],
    )
    est = plan_training(sc).estimates[0]
    peak = sc.cluster.accelerator.dense_flop_per_s["bf16"]
    assert est.mfu_frac == pytest.approx(est.model_flop_per_step / (est.step_time_s * 1024 * peak))
    assert est.time_to_train_s == pytest.approx(15e12 / est.tokens_per_s)
    assert est.accelerator_hours == pytest.approx(est.time_to_train_s * 1024 / 3600)
    assert est.energy_j == pytest.approx(700 * 1024 * est.time_to_train_s)
    assert 0.0 < est.mfu_frac < 1.0
    assert est.plan["dp"] == 32


@settings(max_examples=25, deadline=None)
@given(
    count=st.sampled_from([8, 16, 32, 64, 128]),
    layers=st.sampled_from([12, 24, 32]),
    heads=st.sampled_from([8, 16, 32]),
    gbs=st.sampled_from([32, 64, 96, 128]),
)
def test_every_enumerated_plan_satisfies_every_constraint(count: int, layers: int, heads: int, gbs: int) -> None:
    m = ModelArch(
        id="t",
        num_layers=layers,
        hidden_size=heads * 64,
        num_heads=heads,
        num_kv_heads=heads // 2,
        ffn_hidden_size=heads * 256,
        vocab_size=1000,
    )
    en = enumerate_plans(m, count, gbs, 2048)
    p = en.plans
    assert np.all(p.tp * p.pp * p.dp * p.cp == count)
    assert np.all(heads % p.tp == 0) and np.all((heads // 2) % p.tp == 0)
    # stages may be uneven: ⌈L/pp⌉ layers on each middle stage, the rest (at least one each) on the first and last
    per_stage = -(-layers // p.pp)
    assert np.all((layers % p.pp == 0) | (p.pp <= 2) | (layers - (p.pp - 2) * per_stage >= 2))
    assert np.all((gbs // p.dp) % p.mb == 0) and np.all(gbs % p.dp == 0)
    inter = p.vp > 1  # interleaving only on equal stages
    assert np.all(p.pp[inter] > 1) and np.all(layers % p.pp[inter] == 0)
    assert np.all(((layers // p.pp[inter]) % p.vp[inter]) == 0)
    assert en.candidates == len(p) + sum(en.rejected.values())


def test_more_accelerators_do_not_slow_the_best_plan() -> None:
    t = []
    for n in (64, 128):
        sc = _scenario("meta-llama-3.1-8b", n, {"global_batch_seqs": 256})
        t.append(plan_training(sc).estimates[0].time_to_train_s)
    assert t[1] < t[0]


def test_train_cli_json_keys() -> None:
    res = run_cli("train", str(EXAMPLES / "train-llama3.1-70b-h100.yaml"), "--json")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    for key in (
        "plan",
        "fits",
        "memory_per_accelerator_bytes",
        "memory_breakdown",
        "step_time_s",
        "step_breakdown",
        "tokens_per_s",
        "tokens_per_s_per_accelerator",
        "mfu_frac",
        "time_to_train_s",
        "accelerator_hours",
        "energy_j",
        "rejected",
    ):
        assert key in obj
    assert set(obj["plan"]) >= {"tp", "pp", "dp", "cp", "ep", "vp", "microbatch_seqs", "sharding", "recompute"}
    assert {"compute_s", "exposed_communication_s", "pipeline_bubble_s"} <= set(obj["step_breakdown"])
    assert obj["fits"] is True and obj["memory_per_accelerator_bytes"] <= 80 * 2**30


def test_infeasible_plan_count_mismatch_exit_2(tmp_yaml) -> None:  # type: ignore[no-untyped-def]
    res = run_cli(
        "train",
        str(EXAMPLES / "train-llama3.1-70b-h100.yaml"),
        "--set",
        "training.plan.tp=8",
        "--set",
        "training.plan.dp=3",
    )
    assert res.returncode == 2 and "training.plan" in res.stderr and "Traceback" not in res.stderr


def test_unknown_peak_is_a_clear_error() -> None:
    sc = _scenario("meta-llama-3.1-8b", 8)
    data = {
        "model": "meta-llama-3.1-8b",
        "hardware": {"accelerator": "nvidia-a10g", "count": 8},
        "training": {"tokens": 1e9, "seq_len": 2048, "global_batch_seqs": 64},
    }
    del sc
    from aiinfra.errors import InfeasibleError

    with pytest.raises(InfeasibleError, match="no published dense bf16 peak"):
        plan_training(resolve(parse_scenario(data)))
    assert catalog.accelerator("nvidia-a10g").dense_flop_per_s == {}


def test_memory_of_best_plan_within_capacity() -> None:
    sc = _scenario("meta-llama-3.1-70b", 64)
    rep = plan_training(sc)
    for est in rep.estimates:
        assert est.fits and est.memory_per_accelerator_bytes <= sc.cluster.accelerator.memory_bytes
    plans = single_plan(
        sc.model,
        None,
        **{
            **{k: est.plan[k] for k in ("tp", "pp", "dp", "cp", "ep", "vp")},  # type: ignore[arg-type]
            "mb": est.plan["microbatch_seqs"],
            "sharding": est.plan["sharding"],
            "recompute": est.plan["recompute"],
        },
    )
    from aiinfra.planning.training import setup_from_job

    assert sc.training is not None
    mem = memory_per_rank(setup_from_job(sc.model, sc.training, reserve=sc.runtime_reserve), plans)["total"][0]
    assert mem == pytest.approx(est.memory_per_accelerator_bytes)


def test_uneven_pipeline_stages_llama3_405b() -> None:
    # Llama 3 405B: 126 layers on 16 pipeline stages, the first and last stage one layer short (Dubey et al. 2024,
    # §3.3.2): the layout is accepted, and every stage is charged ⌈126/16⌉ = 8 layers, the same as 128 layers.
    sc = load_scenario(
        EXAMPLES / "train-reliability-llama3-405b.yaml",
        ["training.plan.tp=8", "training.plan.pp=16", "training.plan.dp=128", "training.plan.vp=4"],
    )
    est = plan_training(sc).estimates[0]
    assert est.plan["pp"] == 16
    even = dataclasses.replace(sc, model=dataclasses.replace(sc.model, num_layers=128))
    est128 = plan_training(even).estimates[0]
    # the slowest stage, hence the compute and bubble per step, is the same 8-layer stage
    assert est.step_breakdown["compute_s"] == pytest.approx(est128.step_breakdown["compute_s"], rel=1e-9)
    # the searched plans of a 126-layer model now include stage counts that do not divide 126
    searched = plan_training(load_scenario(EXAMPLES / "train-reliability-llama3-405b.yaml", []))
    assert any(126 % e.plan["pp"] != 0 for e in searched.estimates)
