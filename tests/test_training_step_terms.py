"""Step-time terms for FSDP and small models — expected values are hand calculations written here from the
sources each term cites (FlashAttention-2 paper Fig. 4, Vidur per-op profiles, NCCL's ring cost model,
Zhao et al. 2023 for FSDP's overlap)."""

from __future__ import annotations

import csv
import dataclasses
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from aiinfra.analytic.comms import collective_time, ring_latency_s
from aiinfra.analytic.training_memory import TrainSetup
from aiinfra.analytic.training_step import (
    _elementwise_time,
    _fsdp_exposed_per_microbatch,
    _gemm_time,
    _mem_time,
    _quantize_time,
    flash_attention_fwd_time,
    step_time,
)
from aiinfra.app.tables import domain_tables, efficiency_table, row_tables
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.search.plans import single_plan
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import HardwareInput
from aiinfra.validation import training_rows
from aiinfra.validation.training_rows import predict_row

A100 = "nvidia-a100-sxm4-80gb"
A100_BW = 2.039e12  # accelerators.yaml memory_bw_tb_per_s
# 2 layers of d = 2048 with 16 heads of 128 (the FlashAttention-2 benchmark's hidden size and head dim)
M = ModelArch(
    id="t",
    num_layers=2,
    hidden_size=2048,
    num_heads=16,
    ffn_hidden_size=8192,
    mlp="gelu",
    vocab_size=1,
    attention="mha",
    tied_embeddings=True,
    norm="layernorm",
)


def _cluster(n: int = 1):  # type: ignore[no-untyped-def]
    return resolve_cluster(HardwareInput(accelerator=A100, count=n, per_node=8))


# ---- attention kernel curves -------------------------------------------------------------------------------


def test_head_dim_picks_the_matching_flashattention2_curve() -> None:
    # FA2 paper Fig. 4 at S = 4096 (x = 2·B·H·S²·D with B = 4, H·D = 2048 -> 2.749e11 FLOP):
    # head dim 128 (panel d) 173 TFLOP/s, head dim 64 (panel c) 156 TFLOP/s, of the A100's 312
    x = 2 * 4 * 4096**2 * 2048
    c128, _ = efficiency_table().curve("attention", A100, dtype="bf16", head_dim=128)
    c64, _ = efficiency_table().curve("attention", A100, dtype="bf16", head_dim=64)
    cnone, label = efficiency_table().curve("attention", A100, dtype="bf16")
    assert c128 is not None and c64 is not None and cnone is not None
    assert c128.at(x) == pytest.approx(173 / 312, abs=2e-3)
    assert c64.at(x) == pytest.approx(156 / 312, abs=2e-3)
    assert label == "attention-fa2-bf16-a100"  # no head dim given: the head-dim-128 row, as before


def test_triton_attention_curve_is_the_papers_triton_bars() -> None:
    # FA2 paper Fig. 4d, "FlashAttention Triton", causal, head dim 128: 50 TFLOP/s at 512, 74 at 4k, 80 at 16k
    c, label = efficiency_table().curve("attention_triton", A100, dtype="bf16", head_dim=128)
    assert c is not None and label == "attention-triton-bf16-a100"
    for s, tflops in ((512, 50), (4096, 74), (16384, 80)):
        x = 2 * (16384 // s) * s**2 * 2048
        assert c.at(x) == pytest.approx(tflops / 312, abs=2e-3)


def test_triton_h100_curve_is_derived_from_the_fa2_speedup() -> None:
    # H100 has no published Triton bars: A100 Triton × FA2's H100/A100 ratio at the same S, / 989.4 peak.
    # S = 4096: 74 · 294/173 = 125.76 TFLOP/s -> 0.1271
    c, label = efficiency_table().curve("attention_triton", "nvidia-h100-sxm5-80gb", dtype="bf16", head_dim=128)
    assert c is not None and label == "attention-triton-bf16-h100-derived"
    assert c.at(2 * 4 * 4096**2 * 2048) == pytest.approx(74 * 294 / 173 / 989.4, abs=2e-4)


def test_triton_kernel_slows_the_step_by_the_hand_computed_attention_time() -> None:
    # one A100, no parallelism, no recompute: the step-time difference between the kernels is attention only.
    # Per layer and micro-batch (B = 4, S = 4096): causal forward FLOP = 2·4·4096²·2048 = 2.749e11,
    # Triton 74 TFLOP/s vs FA2 173 TFLOP/s; forward + backward = 3.5 × forward (backward 2.5×).
    flop = 2 * 4 * 4096**2 * 2048
    per_layer = 3.5 * (flop / (74 / 312 * 312e12) - flop / (173 / 312 * 312e12))
    cl = _cluster()
    times = {}
    for kernel in ("flash", "triton"):
        setup = TrainSetup(model=M, seq_len=4096, global_batch_seqs=8, precision="bf16", attention_kernel=kernel)
        plan = single_plan(M, setup, tp=1, pp=1, dp=1, cp=1, ep=1, vp=1, mb=4, sharding="none", recompute="none")
        times[kernel] = float(step_time(setup, cl, plan).step_time_s[0])
    # 2 micro-batches (8 sequences / 4) × 2 layers; curve points read to 4 digits
    assert times["triton"] - times["flash"] == pytest.approx(2 * 2 * per_layer, rel=2e-3)


def test_validation_row_naming_attn_impl_triton_uses_the_triton_kernel() -> None:
    row = {
        "id": "r",
        "source": "mosaicml/llm-foundry benchmarks",
        "model_name": "x",
        "num_layers": "2",
        "hidden_size": "2048",
        "num_heads": "16",
        "ffn_hidden_size": "8192",
        "mlp": "gelu",
        "vocab_size": "50368",
        "seq_len": "2048",
        "accelerator": A100,
        "num_accelerators": "8",
        "accelerators_per_node": "8",
        "precision": "bf16",
        "dp": "8",
        "microbatch_seqs": "4",
        "global_batch_seqs": "64",
        "sharding": "fsdp",
        "recompute": "none",
        "metric": "tokens_per_s_per_accelerator",
        "notes": "FSDP FULL_SHARD. attn_impl triton/flash (submit_benchmarks.py)",
    }
    assert predict_row(row, row_tables()).details["attention_kernel"] == "triton"
    row["notes"] = "FSDP FULL_SHARD. attn_impl flash"
    assert predict_row(row, row_tables()).details["attention_kernel"] == "flash2"
    row["notes"] = "FSDP FULL_SHARD"
    assert predict_row(row, row_tables()).details["attention_kernel"] == "flash"


def _torchtitan_like_row(source: str, notes: str) -> dict[str, str]:
    return {
        "id": "r",
        "source": source,
        "model_name": "x",
        "num_layers": "2",
        "hidden_size": "2048",
        "num_heads": "16",
        "ffn_hidden_size": "8192",
        "mlp": "gelu",
        "vocab_size": "50368",
        "seq_len": "8192",
        "accelerator": "nvidia-h100-sxm5-96gb",
        "num_accelerators": "1",
        "accelerators_per_node": "8",
        "precision": "bf16",
        "dp": "1",
        "microbatch_seqs": "1",
        "global_batch_seqs": "1",
        "sharding": "none",
        "recompute": "none",
        "metric": "step_time_s",
        "notes": notes,
    }


def test_pytorch_sdpa_rows_run_flashattention2_on_hopper() -> None:
    # torchtitan calls F.scaled_dot_product_attention; from PyTorch 2.5.1 its default backend on H100 is FLASH
    # (FlashAttention-2), cuDNN being opt-in (pytorch/pytorch#138649). One H100 96 GB (peak 989.4), 2 layers,
    # one micro-batch of S = 8192, H·D = 2048, no recompute: causal forward FLOP per layer
    # = 2·1·8192²·(2048 + 2048)·½ = 2.749e11, a listed point of both H100 curves:
    # FA2 (flash2_h100_fwd_bwd_benchmark.png) 0.2971, FA3 (FlashAttention-3 Figs. 5/backward) 0.5266.
    # Forward + backward = 3.5 × forward, so the step grows by 2 layers × 3.5 × (t_fa2 − t_fa3); the 500 W
    # part's tensor-core rate is 0.82 × 989.4 TFLOP/s (power_limited_matmul_frac, FBGEMM PR #2546).
    flop = 2 * 1 * 8192**2 * 4096 * 0.5
    peak = 989.4e12 * 0.82
    expect = 2 * 3.5 * (flop / (peak * 0.2971) - flop / (peak * 0.5266))  # = 3.48 ms
    titan = predict_row(_torchtitan_like_row("pytorch/torchtitan benchmarks/x.md", "FSDP"), row_tables())
    sdpa_row = _torchtitan_like_row("some paper", "attention via torch scaled_dot_product_attention")
    sdpa = predict_row(sdpa_row, row_tables())
    other = predict_row(_torchtitan_like_row("some paper", "FSDP"), row_tables())
    assert titan.details["attention_kernel"] == "flash2" and sdpa.details["attention_kernel"] == "flash2"
    assert other.details["attention_kernel"] == "flash"
    assert titan.predicted - other.predicted == pytest.approx(expect, rel=1e-3)
    assert sdpa.predicted == pytest.approx(titan.predicted, rel=1e-12)


def test_power_limited_part_runs_gemms_at_the_measured_fraction() -> None:
    # One BF16 GEMM of 8192³ (2MNK = 1.0995e12 FLOP), compute-bound (no weight bytes). Both H100 parts use
    # gemm-bf16-h100-vidur: log-interpolated between (1e12, 0.696) and (3.162e12, 0.698) ->
    # 0.696 + 0.002 · log10(1.0995) / log10(3.162) = 0.69616. The 700 W 80 GB part runs at 989.4 TFLOP/s x that;
    # the 500 W 96 GB part at 0.82 x as much (power_limited_matmul_frac).
    flop = np.array([2.0 * 8192**3])
    eff = 0.696 + 0.002 * math.log10(1.0995) / math.log10(3.162)
    times = {}
    for acc in ("nvidia-h100-sxm5-80gb", "nvidia-h100-sxm5-96gb"):
        cl = resolve_cluster(HardwareInput(accelerator=acc, count=1, per_node=8))
        times[acc] = float(_gemm_time(cl, "bf16", flop, np.zeros(1), set())[0])
    assert times["nvidia-h100-sxm5-80gb"] == pytest.approx(flop[0] / (989.4e12 * eff), rel=1e-4)  # 1.596 ms
    assert times["nvidia-h100-sxm5-96gb"] == pytest.approx(flop[0] / (0.82 * 989.4e12 * eff), rel=1e-4)  # 1.947 ms


def test_power_limited_fraction_matches_its_cited_measurements() -> None:
    # FBGEMM PR #2546, 'H100 500W' BF16 GEMMs: (8192, 8192, 8192) 585.23, (65536, 8192, 7168) 575.12,
    # (65536, 3584, 8192) 546.31 TFLOP/s, against gemm-bf16-h100-vidur at those sizes: 0.69616 (1.0995e12 FLOP,
    # hand-interpolated above) and 0.698 (7.70e12 and 3.85e12 FLOP: past the last point, 3.162e12, clamped)
    eff_8k = 0.696 + 0.002 * math.log10(1.0995) / math.log10(3.162)
    ratios = [585.23 / 989.4 / eff_8k, 575.12 / 989.4 / 0.698, 546.31 / 989.4 / 0.698]  # 0.850, 0.833, 0.791
    acc96 = resolve_cluster(HardwareInput(accelerator="nvidia-h100-sxm5-96gb", count=1)).accelerator
    assert acc96.power_limited_matmul_frac == pytest.approx(sum(ratios) / 3, abs=0.005)  # 0.8245 stored as 0.82
    assert resolve_cluster(
        HardwareInput(accelerator="nvidia-h100-sxm5-80gb", count=1)
    ).accelerator.sustained_flop_per_s("bf16") == pytest.approx(989.4e12)


def test_flash2_on_hopper_uses_the_fa2_curve_not_fa3() -> None:
    # flash2_h100_fwd_bwd_benchmark.png: FlashAttention-2 on H100, causal hdim 128, 16k: 328 TFLOP/s of 989.4;
    # the default ("flash") lookup keeps the FA3 row listed first (FA3 paper: ~0.58 at 16k)
    x = 2 * 1 * 16384**2 * 2048
    fa2, label2 = efficiency_table().curve(
        "attention", "nvidia-h100-sxm5-80gb", dtype="bf16", head_dim=128, kernel="fa2"
    )
    best, label = efficiency_table().curve("attention", "nvidia-h100-sxm5-80gb", dtype="bf16", head_dim=128)
    assert fa2 is not None and best is not None
    assert label2 == "attention-fa2-bf16-h100" and label == "attention-fa3-bf16-h100"
    assert fa2.at(x) == pytest.approx(328 / 989.4, abs=2e-3)


# ---- element-wise kernels -------------------------------------------------------------------------------------


def _interp(x: float, pts: list[tuple[float, float]]) -> float:
    lx = math.log10(x)
    for (x0, y0), (x1, y1) in itertools.pairwise(pts):
        if math.log10(x0) <= lx <= math.log10(x1):
            return y0 + (y1 - y0) * (lx - math.log10(x0)) / (math.log10(x1) - math.log10(x0))
    raise AssertionError(x)


def test_elementwise_kernels_run_at_their_measured_bandwidths() -> None:
    # 8192 tokens of d = 2048, GeLU ffn 8192, one A100 80GB (2.039 TB/s). Vidur A100 per-op medians:
    #   norm       4·T·h = 6.711e7 B per LayerNorm, between (3.162e7, 0.362) and (1e8, 0.336)
    #   residual   7·T·h = 1.174e8 B per add+dropout, between (1e8, 0.883) and (3.162e8, 0.848)
    #   GeLU       4·T·f = 2.684e8 B, between (1e8, 0.476) and (3.162e8, 0.497)
    t, h, f = 8192.0, 2048.0, 8192.0
    norm_b, res_b, act_b = 4 * t * h, 7 * t * h, 4 * t * f
    e_norm = _interp(norm_b, [(3.162e7, 0.362), (1e8, 0.336)])
    e_res = _interp(res_b, [(1e8, 0.883), (3.162e8, 0.848)])
    e_act = _interp(act_b, [(1e8, 0.476), (3.162e8, 0.497)])
    expect = 2 * norm_b / (A100_BW * e_norm) + 2 * res_b / (A100_BW * e_res) + act_b / (A100_BW * e_act)
    got = _elementwise_time(_cluster(), M, np.array([t]), np.array([1.0]), set())
    assert float(got[0]) == pytest.approx(expect, rel=1e-6)
    # ~0.40 ms: about 1.5x what streaming every byte at the GEMV-like 0.78 of peak would take (0.29 ms)
    assert float(got[0]) > 1.3 * (2 * norm_b + 2 * res_b + act_b) / (A100_BW * 0.78)


# ---- NCCL ring latency ------------------------------------------------------------------------------------------


def test_nccl_ring_latency_hand_values() -> None:
    # collective_latency.yaml (NCCL tuning.cc, Ring/Simple): base 8.4 us, NVLink hop 3.4, node hop 14.0,
    # intra-node hop of a multi-node ring max(3.4, 3 × 1.0) = 3.4
    ag = ring_latency_s(domain_tables(), "allgather", np.array([128.0]), np.array([16.0]))
    assert float(ag[0]) == pytest.approx((8.4 + 112 * 3.4 + 15 * 14.0) * 1e-6)  # 599.2 us
    ar = ring_latency_s(domain_tables(), "allreduce", np.array([16.0]), np.array([2.0]))
    assert float(ar[0]) == pytest.approx((8.4 + 28 * 3.4 + 2 * 14.0) * 1e-6)  # 131.6 us
    one_node = ring_latency_s(domain_tables(), "allreduce", np.array([8.0]), np.array([1.0]))
    assert float(one_node[0]) == pytest.approx((8.4 + 14 * 3.4) * 1e-6)  # 56.0 us
    assert float(ring_latency_s(domain_tables(), "p2p", np.array([2.0]), np.array([2.0]))[0]) == 0.0


def test_small_scale_out_all_gather_pays_the_ring_latency() -> None:
    # 1 kB over 1024 ranks on 128 nodes (8 rings, one per NIC, 25 GB/s each): each NIC carries a 125 B shard.
    # The borrowed 4-node curve (allreduce-b200-4node-efa-stas00) floors small messages at its first point,
    # 131072 B at 0.0104 of the NIC: 1023/1024 · 131072 / (25e9 · 0.0104) s for one NIC's shard, and the 8 rings
    # run side by side over the node's 8 NICs (× 8 shards × 25/200) = 503.8 us.
    # NCCL ring latency beyond that measured configuration:
    # (8.4 + 896·3.4 + 127·14) − (8.4 + 28·3.4 + 3·14) = 4832.8 − 145.6 = 4687.2 us
    cl = dataclasses.replace(_cluster(1024), scale_out_fabric="efa")  # the EFA-measured curve serves an EFA cluster
    t = collective_time(cl, "allgather", 1e3, 1024, 1).time_s
    floor = 1023 / 1024 * 131072 / (25e9 * 0.0104) * 8 * 25 / 200
    assert t == pytest.approx(floor + (4832.8 - 145.6) * 1e-6, rel=1e-3)


# ---- low-precision casts ------------------------------------------------------------------------------------------


def test_fp8_casts_move_the_hand_counted_bytes() -> None:
    # M: d = 2048, 16 heads of 128 (MHA), GeLU ffn 8192. Linear inputs per token: QKV 2048 + out-proj 2048 + FC1 2048
    # + FC2 8192 = 14336 elements, written row- and column-wise in FP8: 2 B each -> 4096 tokens: 117,440,512 B.
    # Output gradients per token: QKV 6144 + out-proj 2048 + FC1 8192 + FC2 2048 = 18432, read in bf16 (2 B) and
    # written twice in FP8 (2 B): 4 B -> 301,989,888 B
    cl = _cluster(1)
    fwd, bwd = _quantize_time(cl, M, "fp8", np.array([4096.0]), np.array([1.0]), set())
    assert float(fwd[0]) == pytest.approx(float(_mem_time(cl, np.array([117_440_512.0]), set(), "elementwise")[0]))
    assert float(bwd[0]) == pytest.approx(float(_mem_time(cl, np.array([301_989_888.0]), set(), "elementwise")[0]))


def test_nvfp4_casts_add_scales_and_an_amax_pass_and_bf16_has_none() -> None:
    # NVFP4: ½ B + 1/16 B of E4M3 scale per element, twice, plus a 2 B amax read: 3.125 B per input element,
    # 2 + 1.125 + 2 = 5.125 B per gradient element (4096 tokens as above, tp = 2 halves the bytes)
    cl = _cluster(1)
    fwd, bwd = _quantize_time(cl, M, "fp4", np.array([4096.0]), np.array([2.0]), set())

    def mem(nbytes: float) -> float:
        return float(_mem_time(cl, np.array([nbytes]), set(), "elementwise")[0])

    assert float(fwd[0]) == pytest.approx(mem(4096 * 14336 * 3.125 / 2))
    assert float(bwd[0]) == pytest.approx(mem(4096 * 18432 * 5.125 / 2))
    zf, zb = _quantize_time(cl, M, "bf16", np.array([4096.0]), np.array([1.0]), set())
    assert float(zf[0]) == 0.0 and float(zb[0]) == 0.0


def test_context_parallel_attention_runs_at_the_efficiency_of_one_ring_step() -> None:
    # ring attention over cp = 4 launches 4 kernels per layer, each with a quarter of the rank's FLOPs: the time is
    # the FLOPs at the FA2 curve's efficiency for a quarter of them (the curve rises with size, so it is slower)
    setup = TrainSetup(model=M, seq_len=8192, global_batch_seqs=1, precision="bf16", attention_kernel="flash2")
    cl = _cluster(1)
    flop = np.array([4.0e11])
    curve, _ = efficiency_table().curve("attention", A100, dtype="bf16", head_dim=128, kernel="fa2")
    assert curve is not None
    peak = cl.accelerator.sustained_flop_per_s("bf16")
    one = flash_attention_fwd_time(cl, setup, M, "bf16", flop, np.array([1.0]), set())
    four = flash_attention_fwd_time(cl, setup, M, "bf16", flop, np.array([4.0]), set())
    assert float(four[0]) == pytest.approx(4.0e11 / (peak * float(curve.at_array(np.array([1.0e11]))[0])))
    assert float(one[0]) == pytest.approx(4.0e11 / (peak * float(curve.at_array(np.array([4.0e11]))[0])))
    assert float(four[0]) >= float(one[0])


# ---- FSDP exposure ----------------------------------------------------------------------------------------------


def _fsdp(layer_fwd: float, layer_bwd: float, head: float) -> tuple[float, float, float, float, float]:
    cl = _cluster(16)
    layers, layer_p, root_p = 4.0, 5e7, 1e8
    args = (np.array([16]), np.array([1]))
    ag_l = collective_time(cl, "allgather", layer_p * 2, 16, 1).time_s
    rs_l = collective_time(cl, "reducescatter", layer_p * 2, 16, 1).time_s
    ag_r = collective_time(cl, "allgather", root_p * 2, 16, 1).time_s
    rs_r = collective_time(cl, "reducescatter", root_p * 2, 16, 1).time_s
    got = _fsdp_exposed_per_microbatch(
        cl,
        np.array([layers * layer_p + root_p]),
        np.array([layer_p]),
        np.array([layers]),
        np.array([2.0]),
        *args,
        np.array([layer_fwd]),
        np.array([layer_bwd]),
        np.array([head]),
        set(),
    )
    return float(got[0]), ag_l, rs_l, ag_r, rs_r


def test_fsdp_long_layers_expose_only_the_first_gathers_and_last_scatters() -> None:
    # compute far longer than any collective: forward shows the root's and the first layer's all-gather,
    # backward the last layer's and the root's reduce-scatter (Zhao et al. 2023: prefetch hides the rest); the
    # hidden collectives slow the compute beside them by 18.9 % of their own time (Lee et al. 2025,
    # collective_latency.yaml overlap-compute-slowdown): 3 further forward gathers, the head's gather and
    # 3 backward gather + scatter pairs
    got, ag_l, rs_l, ag_r, rs_r = _fsdp(10.0, 20.0, 10.0)
    hidden = 3 * ag_l + ag_l + 3 * (ag_l + rs_l)
    assert got == pytest.approx(ag_r + ag_l + rs_l + rs_r + 0.189 * hidden)


def test_fsdp_zero_compute_serialises_every_collective() -> None:
    # no compute to hide behind: 4 layers × (all-gather forward + all-gather backward + reduce-scatter) + root
    got, ag_l, rs_l, ag_r, rs_r = _fsdp(0.0, 0.0, 0.0)
    assert got == pytest.approx(ag_r + rs_r + 4 * (2 * ag_l + rs_l))


def test_fsdp_partial_overlap_adds_the_per_layer_excess() -> None:
    # forward compute = half an all-gather, backward = half of (all-gather + reduce-scatter), head = 0:
    # forward ag_r + ag_l + 3·ag_l/2; backward ag_l + 3·(ag_l + rs_l)/2 + rs_l + rs_r; plus 18.9 % of the
    # overlapped halves (Lee et al. 2025): 3·ag_l/2 forward, 3·(ag_l + rs_l)/2 backward
    _, ag_l, rs_l, _, _ = _fsdp(0.0, 0.0, 0.0)
    got, ag_l, rs_l, ag_r, rs_r = _fsdp(ag_l / 2, (ag_l + rs_l) / 2, 0.0)
    expect = ag_r + ag_l + 1.5 * ag_l + ag_l + 1.5 * (ag_l + rs_l) + rs_l + rs_r
    expect += 0.189 * (1.5 * ag_l + 1.5 * (ag_l + rs_l))
    assert got == pytest.approx(expect)


def test_fsdp_without_regather_runs_no_backward_all_gathers() -> None:
    # reshard_after_forward=False (FSDP2 under pipeline parallelism): the forward gathers as before, the backward
    # only reduce-scatters; with no compute to hide behind: root + 4 layers gathered once, 4 + root scattered
    cl = _cluster(16)
    _, ag_l, rs_l, ag_r, rs_r = _fsdp(0.0, 0.0, 0.0)
    got = _fsdp_exposed_per_microbatch(
        cl,
        np.array([4 * 5e7 + 1e8]),
        np.array([5e7]),
        np.array([4.0]),
        np.array([2.0]),
        np.array([16]),
        np.array([1]),
        np.array([0.0]),
        np.array([0.0]),
        np.array([0.0]),
        set(),
        regather_backward=False,
    )
    assert float(got[0]) == pytest.approx(ag_r + rs_r + 4 * (ag_l + rs_l))


def _fsdp_step(pp: int, gbs: int):  # type: ignore[no-untyped-def]
    setup = TrainSetup(model=M, seq_len=2048, global_batch_seqs=gbs, precision="bf16")
    plans = single_plan(M, setup, tp=1, pp=pp, dp=8, cp=1, ep=1, vp=1, mb=1, sharding="fsdp", recompute="none")
    return step_time(setup, _cluster(8 * pp), plans)


def test_fsdp_under_pipeline_gathers_once_per_step_not_per_micro_batch() -> None:
    # without PP every micro-batch re-gathers and reduce-scatters (Zhao et al. 2023): 4x the micro-batches ->
    # 4x the FSDP traffic. Under PP a stage keeps its parameters gathered across micro-batches and reduce-scatters
    # once (torchtitan: reshard_after_forward = not pp_enabled; gradient sync on the last backward only): the
    # FSDP part of the step does not grow with the micro-batches
    one, four = _fsdp_step(1, 8), _fsdp_step(1, 32)
    assert float(four.dp_comm_exposed_s[0]) == pytest.approx(4 * float(one.dp_comm_exposed_s[0]), rel=1e-9)
    one_pp, four_pp = _fsdp_step(2, 8), _fsdp_step(2, 32)
    assert float(one_pp.dp_comm_exposed_s[0]) > 0
    assert float(four_pp.dp_comm_exposed_s[0]) == pytest.approx(float(one_pp.dp_comm_exposed_s[0]), rel=1e-9)


def test_deepspeed_zero1_gradient_reduction_is_exposed_after_the_backward() -> None:
    # 8 A100s, dp = 8, ZeRO-1: overlapped, the all-reduce of the 16-bit gradients hides under the last backward and
    # adds only the 18.9 % slowdown of the compute beside it (Lee et al. 2025); DeepSpeed stage 1 registers no
    # backward hooks (PR #1246): the whole all-reduce of 2 B x parameters over the 8 ranks is exposed
    from aiinfra.analytic.training_memory import rank_params

    common = {"model": M, "seq_len": 2048, "global_batch_seqs": 8, "precision": "bf16"}
    plans = single_plan(
        M,
        TrainSetup(**common),
        tp=1,
        pp=1,
        dp=8,
        cp=1,
        ep=1,
        vp=1,
        mb=1,  # type: ignore[arg-type]
        sharding="zero1",
        recompute="none",
    )
    over = step_time(TrainSetup(**common), _cluster(8), plans)  # type: ignore[arg-type]
    after = step_time(TrainSetup(**common, dp_grad_overlap=False), _cluster(8), plans)  # type: ignore[arg-type]
    params = float(rank_params(TrainSetup(**common), plans)["first"][0])  # type: ignore[arg-type]
    ar = collective_time(_cluster(8), "allreduce", params * 2.0, 8, 1).time_s
    assert float(after.dp_comm_exposed_s[0]) == pytest.approx(ar)
    assert float(over.dp_comm_exposed_s[0]) < ar
    assert float(after.step_time_s[0]) - float(over.step_time_s[0]) == pytest.approx(
        ar - float(over.dp_comm_exposed_s[0])
    )


def test_validation_rows_naming_deepspeed_reduce_after_the_backward() -> None:
    row = {
        "id": "t",
        "source": "a DeepSpeed ZeRO-1 run",
        "num_layers": "2",
        "hidden_size": "2048",
        "num_heads": "16",
        "num_kv_heads": "16",
        "ffn_hidden_size": "8192",
        "mlp": "gelu",
        "vocab_size": "32000",
        "attention": "mha",
        "tied_embeddings": "no",
        "seq_len": "2048",
        "accelerator": A100,
        "num_accelerators": "16",
        "accelerators_per_node": "8",
        "precision": "bf16",
        "tp": "1",
        "pp": "1",
        "dp": "16",
        "cp": "1",
        "ep": "1",
        "vp": "1",
        "microbatch_seqs": "1",
        "global_batch_seqs": "16",
        "sharding": "zero1",
        "recompute": "none",
        "metric": "step_time_s",
        "notes": "",
    }
    ds = predict_row(row, row_tables()).predicted
    other = predict_row({**row, "source": "a Megatron-LM run"}, row_tables()).predicted
    assert ds is not None and other is not None and ds > other


# ---- tensor-parallel communication overlap -------------------------------------------------------------------


def _tp_overlap_pair(model: ModelArch, tp: int, dp: int):  # type: ignore[no-untyped-def]
    """Step-time arrays of one plan on 8 A100s without and with tp_comm_overlap."""
    common = {"model": model, "seq_len": 2048, "global_batch_seqs": 8, "precision": "bf16"}
    plans = single_plan(
        model,
        TrainSetup(**common),
        tp=tp,
        pp=1,
        dp=dp,
        cp=1,
        ep=1,
        vp=1,
        mb=1,  # type: ignore[arg-type]
        sharding="none",
        recompute="none",
    )
    off = step_time(TrainSetup(**common), _cluster(8), plans)  # type: ignore[arg-type]
    on = step_time(TrainSetup(**common, tp_comm_overlap=True), _cluster(8), plans)  # type: ignore[arg-type]
    return off, on


def test_tp_comm_overlap_hides_all_but_one_chunk_when_gemms_are_longer() -> None:
    # 8-way TP inside one A100 node: with --tp-comm-overlap each collective is cut into tp = 8 chunks pipelined
    # with its GEMM (Wang et al. 2023); when the layer's GEMMs outlast its transfers only 1/8 stays exposed
    big = ModelArch(
        id="t8",
        num_layers=8,
        hidden_size=8192,
        num_heads=64,
        ffn_hidden_size=32768,
        mlp="gelu",
        vocab_size=1,
        attention="mha",
        tied_embeddings=True,
        norm="layernorm",
    )
    off, on = _tp_overlap_pair(big, tp=8, dp=1)
    assert float(on.compute_s[0]) == pytest.approx(float(off.compute_s[0]))
    # d = 8192, 2048 tokens, TP8 on NVLink: each layer's four 33.5 MB transfers take well under its GEMMs (a
    # 2·2048·8192·32768/8 FLOP MLP GEMM alone is ~0.4 ms at 70 % of 312 TFLOP/s), so exactly 1/8 stays exposed
    assert float(on.tp_comm_s[0]) == pytest.approx(float(off.tp_comm_s[0]) / 8, rel=1e-9)
    saved = float(off.tp_comm_s[0]) * 7 / 8
    assert float(off.exposed_comm_s[0]) - float(on.exposed_comm_s[0]) == pytest.approx(saved, rel=1e-9)


def test_tp_comm_overlap_changes_nothing_without_tensor_parallelism() -> None:
    off, on = _tp_overlap_pair(M, tp=1, dp=8)
    assert float(on.step_time_s[0]) == float(off.step_time_s[0])


def _rows() -> list[dict[str, str]]:
    return list(csv.DictReader((Path(training_rows.__file__).parent / "data" / "training.csv").open()))


def test_ep_comm_overlap_hides_the_all_to_all_behind_another_micro_batch() -> None:
    # the same MoE row with and without the stated overlap: the overlapped one only exposes the all-to-all time
    # that exceeds a stage's compute of one micro-batch, so it is faster, and a dense row does not change
    moe = next(r for r in _rows() if r["id"] == "mcore-moe-zoo-h100-qwen3-235b-tp2pp8vpp4ep32-deepep")
    plain = predict_row(moe, row_tables())
    assert moe["ep_comm_overlap"] == ""  # the shipped row does not state it
    over = predict_row({**moe, "ep_comm_overlap": "yes"}, row_tables())
    assert over.predicted is not None and plain.predicted is not None
    assert over.predicted < plain.predicted  # step_time_s rows: a shorter step
    assert over.details["compute_s"] == pytest.approx(plain.details["compute_s"])
    dense = next(r for r in _rows() if r["id"] == "megatron-core-r08-h100-70b")
    rt = row_tables()
    assert predict_row({**dense, "ep_comm_overlap": "yes"}, rt).predicted == predict_row(dense, rt).predicted
    # a row in the reference schema (no ep_comm_overlap column) states it in its notes
    legacy = {k: v for k, v in moe.items() if k != "ep_comm_overlap"}
    assert predict_row({**legacy, "notes": moe["notes"] + " +1f1b overlap"}, row_tables()).predicted == over.predicted
