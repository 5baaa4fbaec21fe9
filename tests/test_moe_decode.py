"""MoE decode mechanisms (analytic/moe_decode.py): each against a hand calculation or the project's measurement."""

from __future__ import annotations

import pytest

from aiinfra import catalog
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.kernel_time import memory_fit
from aiinfra.analytic.moe_decode import (
    busiest_rank_experts,
    expert_stream_bytes_per_s,
    routing_kernels,
)
from aiinfra.app.tables import domain_tables, row_tables

H200 = "nvidia-h200-sxm-141gb"
H100 = "nvidia-h100-sxm5-80gb"


def test_busiest_rank_by_hand() -> None:
    # 8 experts top-4, one token: each expert touched with p = 1 - (1 - 4/8) = 1/2. Two ranks of 4 experts each:
    # F(x) of Binomial(4, 1/2) = 1/16, 5/16, 11/16, 15/16 for x = 0..3, and
    # E[max of 2] = sum (1 - F(x)^2) = 4 - (1 + 25 + 121 + 225) / 256 = 2.546875, above the mean of 2
    assert busiest_rank_experts(8, 4, 1, 2) == pytest.approx(2.546875, rel=1e-12)
    # one rank: the union E·p
    assert busiest_rank_experts(8, 4, 1, 1) == pytest.approx(4.0)
    # every expert touched: each rank streams all of its own
    assert busiest_rank_experts(256, 8, 10_000, 8) == pytest.approx(32.0)


def test_routing_kernels_follow_vllm_fused_experts() -> None:
    # top-k, moe_align_block_size, moe_sum; with W8A8 FP8 two per_token_group_quant_fp8 calls more
    assert routing_kernels("bf16") == 3
    assert routing_kernels("fp4") == 3
    assert routing_kernels("fp8") == 5


def test_grouped_stream_rate_is_the_h200_measurement() -> None:
    # kernel_overheads_h200.yaml grouped-gemm-h200-grouped-mm, 1 token per expert: the median shape is 128x2048x768
    # (143.0 us), and again at 16 tokens per expert (129.5 us)
    acc = catalog.accelerator(H200)
    one = 128 * 2048 * 768 * 2 / 143.0e-6
    sixteen = 128 * 2048 * 768 * 2 / 129.5e-6
    assert expert_stream_bytes_per_s(domain_tables(), acc, 1.0) == pytest.approx(one, rel=1e-3)
    assert expert_stream_bytes_per_s(domain_tables(), acc, 16.0) == pytest.approx(sixteen, rel=1e-3)
    # a third slower than the same weights as one batched GEMM (torch.bmm, 64x7168x2048 at 1 token: 419.3 us)
    bmm = 64 * 7168 * 2048 * 2 / 419.3e-6
    assert expert_stream_bytes_per_s(domain_tables(), acc, 1.0) < 0.7 * bmm


def test_hopper_part_borrows_the_h200_fraction() -> None:
    h100 = catalog.accelerator(H100)
    rate = expert_stream_bytes_per_s(domain_tables(), h100, 1.0)
    assert rate == pytest.approx(0.5866 * h100.memory_bw_bytes_per_s, rel=1e-3)


def test_deepseek_decode_experts_by_hand() -> None:
    # DeepSeek-V3 FP8 on 8 H200, experts tensor-parallel, one decoding token, the shape-blind term (no engine named;
    # an engine's own block-FP8 op at this shape is priced from its measured timings instead, test_dsr1_mechanisms):
    # 8 experts of 3·7168·2048 FP8 weights in each of the 58 MoE layers, a 1/8 slice per rank, streamed at 0.5866 of
    # 4.8 TB/s; 2 grouped GEMMs and 5 routing kernels per layer at t0 each, the weighted sum moving 9·7168 bf16
    tables = row_tables()
    cluster = tables.cluster_for(H200, 8)
    model = catalog.model("deepseek-v3")
    im = InferenceModel(model=model, cluster=cluster, tp=8, weight_precision="fp8")
    t0, b_inf = memory_fit(cluster.tables, cluster.accelerator, None)
    weights = 8 * 3 * 7168 * 2048 * 58 / 8
    expected = 58 * 2 * t0 + weights / (0.5866 * 4.8e12) + 58 * 5 * t0 + 58 * 9 * 7168 * 2 / b_inf
    assert im.experts(1, 58).memory_s == pytest.approx(expected, rel=1e-3)


def test_other_generations_keep_the_dense_streaming_fit() -> None:
    # torch._grouped_mm runs CUTLASS SM90 kernels: an Ampere part borrows no Hopper grouped rate
    assert expert_stream_bytes_per_s(domain_tables(), catalog.accelerator("nvidia-a100-sxm4-80gb"), 1.0) is None


def test_shape_blind_experts_match_vllm_measured_fused_moe_at_decode() -> None:
    # NVIDIA AIConfigurator's timings of vLLM's fused-MoE op on H200 (efficiency_aic_moe_by_shape_vllm.yaml: fraction
    # of the bf16 peak at the tokens entering the layer), Qwen3-235B-A22B's expert shape, 1-8 tokens: the measured
    # time is per-rank FLOP / (fraction · peak). The term with no engine named (shape-blind: touched experts at the
    # grouped rate plus routing kernels) lands within 0.8-1.25 of it at the median (the dense streaming fit alone
    # priced it at about half)
    import statistics

    tables = row_tables()
    model = catalog.model("qwen3-235b-a22b")
    shape = [model.hidden_size, model.expert_ffn, model.num_experts, model.experts_per_token]
    got = []
    for r in domain_tables().file_rows("efficiency_aic_moe_by_shape_vllm.yaml"):
        if list(r["accelerators"]) != [H200] or list(r["moe_shape"][:4]) != shape:
            continue
        moe_tp, moe_ep = int(r["moe_shape"][4]), int(r["moe_shape"][5])
        cluster = tables.cluster_for(H200, max(moe_tp, moe_ep))
        im = InferenceModel(model=model, cluster=cluster, tp=max(moe_tp, moe_ep), ep=moe_ep, attention_dp=moe_ep > 1)
        for x, frac in r["points"]:
            if x <= 8:
                flop = 2.0 * x * 8 * 3 * 4096 * 1536 / moe_tp / moe_ep
                measured_s = flop / (frac * cluster.accelerator.dense_flop_per_s["bf16"])
                got.append(im.experts(float(x), 1.0).time_s / measured_s)
    assert len(got) >= 20
    assert 0.8 <= statistics.median(got) <= 1.25
