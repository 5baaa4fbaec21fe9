"""Serving mechanisms of the step model (issue 29, item 3): pipeline-parallel micro-batches, per-step engine
overheads, small-message tensor-parallel all-reduce. Expected values are hand calculations written in each test or
published microbenchmark figures."""

from __future__ import annotations

import dataclasses

import pytest

from aiinfra import catalog
from aiinfra.analytic.comms import collective_time
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_overheads import kernels_per_step, overheads_for, sampling_s, with_overheads
from aiinfra.analytic.step_time import StepBatch
from aiinfra.app.tables import domain_tables
from aiinfra.catalog.resolve import cluster_for
from aiinfra.planning.inference import kv_capacity

L70 = catalog.model("meta-llama-3.1-70b")
H100 = "nvidia-h100-sxm5-80gb"


def _model(pp: int, micro: bool | None, layers: int | None = None, engine: str | None = None) -> InferenceModel:
    """Llama-3.1-70B on pp H100s (tp 1); no engine: kernels only (no per-step engine costs), pipelining as given."""
    arch = L70 if layers is None else dataclasses.replace(L70, num_layers=layers)
    return InferenceModel(model=arch, cluster=cluster_for(H100, pp), tp=1, pp=pp, engine=engine, micro_batching=micro)


def test_engines_keep_pp_micro_batches_in_flight() -> None:
    # vLLM V1 (max_concurrent_batches = pp) and TensorRT-LLM's PyExecutor (num_micro_batches = pp_size)
    assert catalog.engine("vllm").pipeline_micro_batches
    assert catalog.engine("trtllm").pipeline_micro_batches
    assert _model(2, None, engine="vllm").pipelines_micro_batches
    assert not _model(1, None, engine="vllm").pipelines_micro_batches


def test_one_request_is_not_split_over_the_pipeline() -> None:
    # batch 1: k = min(pp, 1) = 1 micro-batch, so the cycle is one trip through both stages, the head and one
    # hop: max(2·t_s + t_head + t_hop, 1·(t_s + t_head)) = the unpipelined sum
    one = StepBatch.decode(1, 2000)
    piped = _model(2, True).iteration_time_s(one)
    plain = _model(2, False).iteration_time_s(one)
    assert piped == pytest.approx(plain, rel=1e-12)


def test_decode_cycle_is_the_last_stage_serving_both_micro_batches() -> None:
    # 128 decoding sequences on pp = 2 (tp = 1, no collectives): two micro-batches of 64. The last stage runs 40
    # layers plus the head for each of them, i.e. a 40-layer model at batch 64 (t_s + t_head), twice per cycle; the
    # trip 2·t_s + t_head + t_hop is shorter because the hop of 64 × 8192 × 2 B = 1 MiB over NVLink (~10 µs) is
    # shorter than the head's read of 128256 × 8192 × 2 B = 2.1 GB (~0.7 ms). So the cycle = 2 × T(40 layers, 64).
    piped = _model(2, True).iteration_time_s(StepBatch.decode(128, 3000))
    half = _model(1, None, layers=40).iteration_time_s(StepBatch.decode(64, 3000))
    assert piped == pytest.approx(2 * half, rel=1e-9)


def test_compute_bound_prefill_pipelines_to_about_half() -> None:
    # 8 prompts of 2048 tokens (16,384 tokens, compute-bound) on pp = 2: without micro-batches the two stages run in
    # turn, 2·t_s(16384) + t_head + t_hop; with two micro-batches of 8192 tokens each stage works on one while the
    # other works on the other (GPipe, Huang et al. 2019), and t_s(8192) ≈ t_s(16384)/2 when compute-bound, so the
    # step takes about half as long (a little more: the hop and the head).
    step = StepBatch()
    for _ in range(8):
        step = step + StepBatch.prefill(2048)
    assert step.prefill_requests == 8
    piped = _model(2, True).iteration_time_s(step)
    plain = _model(2, False).iteration_time_s(step)
    assert 0.45 < piped / plain < 0.6


H200 = catalog.accelerator("nvidia-h200-sxm-141gb")


def test_sampling_time_from_the_h200_measurement() -> None:
    # kernel_overheads_h200.yaml sampling-h200-greedy: batch 32 → 28.40 µs, batch 128 → 41.92 µs. Batch 64 lies a
    # third of the way: 28.40 + (41.92 − 28.40)/3 = 32.907 µs. Over a 32,000-token vocabulary the batch-dependent part
    # shrinks by 32000/128256: 27.77 + (32.907 − 27.77) × 0.2495 = 29.05 µs (batch 1: 27.77 µs, launches).
    ov = overheads_for(H200, domain_tables())
    assert ov is not None
    assert sampling_s(ov, "greedy", 64, 128256) == pytest.approx(32.907e-6, rel=1e-4)
    assert sampling_s(ov, "greedy", 64, 32000) == pytest.approx(29.05e-6, rel=1e-3)
    # beyond the largest batch measured (256) the last segment continues: (50.73 − 41.92) / (256 − 128) = 0.068828 µs
    # a sequence, so batch 1,000 (a burst) takes 50.73 + 744 × 0.068828 = 101.94 µs, not the 50.73 µs of batch 256
    assert sampling_s(ov, "greedy", 1000, 128256) == pytest.approx(101.94e-6, rel=1e-4)
    assert sampling_s(ov, "greedy", 1, 128256) == pytest.approx(27.77e-6)  # the smallest batch measured


def test_graph_captured_decode_pays_one_graph_launch_and_the_sampler() -> None:
    # vLLM, 8 decoding sequences (≤ 512: a CUDA graph): + 5.097 µs graph launch + 28.09 µs greedy sampling at batch 8
    step = StepBatch.decode(8, 1000)
    t = with_overheads(0.010, step, H200, "vllm", kernels=1000, vocab=128256, tables=domain_tables())
    assert t == pytest.approx(0.010 + 5.097e-6 + 28.09e-6, rel=1e-9)


def test_eager_step_is_floored_by_python_kernel_issue() -> None:
    # vLLM, 600 decoding sequences (> 512: eager): Llama-3.1-8B at tp 1 launches 32 × 11 + 1 = 353 kernels at
    # 10.42 µs each = 3.678 ms, above a 1 ms GPU time, so the step takes 3.678 ms + greedy sampling at batch 600
    # (the 128 → 256 segment continued: 50.73 + 344 × 0.068828 = 74.41 µs). A TensorRT-LLM run that states no release
    # (its TensorRT engines' C++ runtime): no floor, only its sampler.
    kernels = kernels_per_step(32, 1, 0)
    assert kernels == 353
    step = StepBatch.decode(600, 600 * 1000)
    assert with_overheads(
        0.001, step, H200, "vllm", kernels=kernels, vocab=128256, tables=domain_tables()
    ) == pytest.approx(353 * 10.42e-6 + 74.41e-6, rel=1e-4)
    assert with_overheads(
        0.001, step, H200, "trtllm", kernels=kernels, vocab=128256, tables=domain_tables()
    ) == pytest.approx(0.001 + 74.41e-6, rel=1e-4)


def test_trtllm_pytorch_executor_graphs_stop_at_128_then_issue_from_python() -> None:
    # TensorRT-LLM from 1.0 runs its PyTorch executor: CudaGraphConfig captures generation-only batches up to 128
    # (max_batch_size 0 -> 128) and runs larger ones eagerly from Python. 128 decodes: a 1 ms GPU step + one graph
    # launch (5.097 µs) + greedy sampling at 128 (41.92 µs); 129 decodes: floored at 353 kernels × 10.42 µs = 3.678 ms
    # + sampling at 129 (41.92 + (50.73 − 41.92) / 128 = 41.99 µs); a prompt in the step makes it eager too. The
    # 0.x TensorRT engines (no release stated here) keep the C++ runtime: no floor.
    trt = catalog.engine("trtllm")
    assert trt.graph_max_batch(H200.memory_bytes, 1, (1, 2, 0)) == 128
    assert trt.graph_max_batch(H200.memory_bytes, 1, (0, 16, 0)) is None
    kw = dict(kernels=353, vocab=128256, tables=domain_tables())
    t128 = with_overheads(0.001, StepBatch.decode(128, 128_000), H200, "trtllm", engine_version="1.2.0rc1", **kw)  # type: ignore[arg-type]
    assert t128 == pytest.approx(0.001 + 5.097e-6 + 41.92e-6, rel=1e-9)
    t129 = with_overheads(0.001, StepBatch.decode(129, 129_000), H200, "trtllm", engine_version="1.2.0rc1", **kw)  # type: ignore[arg-type]
    assert t129 == pytest.approx(353 * 10.42e-6 + 41.99e-6, rel=1e-4)
    mixed = StepBatch(prefill_tokens=64, prefill_attention_pairs=2080.0, decode_seqs=8, decode_context_tokens=8_000)
    t_mixed = with_overheads(0.001, mixed, H200, "trtllm", engine_version="1.2.0rc1", **kw)  # type: ignore[arg-type]
    assert t_mixed == pytest.approx(353 * 10.42e-6 + sampling_s_h200(9), rel=1e-9)
    t_engine = with_overheads(0.001, StepBatch.decode(129, 129_000), H200, "trtllm", engine_version="0.16.0", **kw)  # type: ignore[arg-type]
    assert t_engine == pytest.approx(0.001 + 41.99e-6, rel=1e-4)


def sampling_s_h200(seqs: int) -> float:
    """Greedy sampling of ``seqs`` sequences over Llama 3's 128,256 tokens on the H200 (its own table)."""
    ov = overheads_for(H200, domain_tables())
    assert ov is not None
    return sampling_s(ov, "greedy", seqs, 128256)


H100_SPEC = catalog.accelerator(H100)


def test_sglang_045_graphs_cap_the_ranks_summed_sequences() -> None:
    # sglang 0.4.5.post1 server_args: cuda_graph_max_bs 160 on an H200 (141 GB >= 25,000 MiB) at any tp, where the
    # later release's bands give 512 at tp 8; under DP attention CudaGraphRunner.can_run compares the tokens summed
    # over the ranks with it and replays only when every rank decodes. 8 ranks of 25 decodes: 200 > 160 → eager,
    # floored at 1,000 kernels × 10.42 µs = 10.42 ms above a 5 ms GPU time, + greedy sampling of one rank's 25
    # sequences (interpolated between batch 16 and 32 of the H200 table); 8 × 20 = 160 → one graph launch. A
    # prefill on any rank makes the step eager even when the other ranks decode alone.
    sg = catalog.engine("sglang")
    h200 = catalog.accelerator("nvidia-h200-sxm-141gb")
    assert sg.graph_max_batch(h200.memory_bytes, 8, (0, 4, 5)) == 160
    assert sg.graph_max_batch(h200.memory_bytes, 8) == 512
    tables = domain_tables()
    ov = overheads_for(h200, tables)
    assert ov is not None
    sample_25 = sampling_s(ov, "greedy", 25, 129280)
    rank = StepBatch.decode(25, 25_000)
    whole = StepBatch.decode(200, 200_000)
    kw = dict(kernels=1000, vocab=129280, tp=8, tables=tables)
    t = with_overheads(0.005, rank, h200, "sglang", engine_version="0.4.5", whole=whole, **kw)  # type: ignore[arg-type]
    assert t == pytest.approx(1000 * 10.42e-6 + sample_25, rel=1e-9)
    # the current release's rule: one rank's 25 sequences ≤ 512 → a graph
    t_now = with_overheads(0.005, rank, h200, "sglang", whole=whole, **kw)  # type: ignore[arg-type]
    assert t_now == pytest.approx(0.005 + 5.097e-6 + sample_25, rel=1e-9)
    rank20, whole160 = StepBatch.decode(20, 20_000), StepBatch.decode(160, 160_000)
    sample_20 = sampling_s(ov, "greedy", 20, 129280)
    t160 = with_overheads(0.005, rank20, h200, "sglang", engine_version="0.4.5", whole=whole160, **kw)  # type: ignore[arg-type]
    assert t160 == pytest.approx(0.005 + 5.097e-6 + sample_20, rel=1e-9)
    mixed = StepBatch(prefill_tokens=100, prefill_attention_pairs=5050.0, decode_seqs=140, decode_context_tokens=1)
    t_pre = with_overheads(0.005, rank20, h200, "sglang", engine_version="0.4.5", whole=mixed, **kw)  # type: ignore[arg-type]
    assert t_pre == pytest.approx(1000 * 10.42e-6 + sample_20, rel=1e-9)


def test_sglang_prefill_iterations_run_alone_in_every_release_read() -> None:
    # enable_mixed_chunk defaults to False and the scheduler runs a new prefill batch before the decodes in every
    # wheel read, 0.2.14 (the oldest) through 0.5.23 (the newest): the rule holds from 0.2.14 with no upper bound, and
    # for an unstated release (the current one). Inside: 0.2.14 (its first release), 0.3.0, 0.4.5, 0.5.7 and a later
    # 0.6 / 1.0; outside: 0.2.13 and 0.1.x (not read). vLLM never has it.
    sg = catalog.engine("sglang")
    for inside in ((0, 2, 14), (0, 3, 0), (0, 4, 5), (0, 5, 7), (0, 5, 23), (0, 6), (1, 0, 0)):
        assert sg.prefill_alone(inside), inside
    for outside in ((0, 2, 13), (0, 1, 26)):
        assert not sg.prefill_alone(outside), outside
    assert sg.prefill_alone(None)
    assert not catalog.engine("vllm").prefill_alone((0, 8, 4))
    assert not catalog.engine("vllm").prefill_alone(None)


def test_sglang_defaults_on_an_h100_follow_its_server_args() -> None:
    # sglang server_args._handle_gpu_memory_settings on an 80 GiB part (< 90 GiB band): chunked_prefill_size 8192,
    # cuda_graph_max_bs 256 at tp 1 and 512 at tp 8. mem_fraction_static at tp 1: reserved = 512 + 8192 × 1.5 +
    # 256 × 2 + 1 × 1024 / 8 = 13,440 MiB (above the 10,240 MiB floor) → (81,920 − 13,440) / 81,920 = 0.836; at tp 8:
    # 512 + 12,288 + 1,024 + 1,024 = 14,848 → 0.819.
    sg = catalog.engine("sglang")
    d = sg.scheduler_defaults(H100_SPEC, "server")
    assert (d.max_num_batched_tokens, d.max_num_seqs) == (8192, 2048)
    assert sg.graph_max_batch(H100_SPEC.memory_bytes, 1) == 256
    assert sg.graph_max_batch(H100_SPEC.memory_bytes, 8) == 512
    assert sg.static_memory_fraction(H100_SPEC.memory_bytes, 1, 1) == 0.836
    assert sg.static_memory_fraction(H100_SPEC.memory_bytes, 8, 8) == 0.819
    assert sg.chunked_prefill and not sg.reserves_full_context and sg.kv_block_tokens(16) == 1


def test_sglang_kv_pool_is_its_static_fraction_less_the_weights() -> None:
    # Llama-3.1-8B bf16 on one H100 under SGLang: pool = 0.836 × the 79.19 GiB the runtime reports − weights
    # (activations and CUDA graphs live in the 16.4 % the fraction leaves out; the fraction itself from the part's
    # 80 GiB), one token = 2 × 32 layers × 8 KV heads × 128 × 2 B = 131,072 B.
    im = InferenceModel(model=catalog.model("meta-llama-3.1-8b"), cluster=cluster_for(H100, 1), engine="sglang")
    cap = kv_capacity(im, 0.9, 1, 8192, "sglang")
    expected = (0.836 * 79.19 * 2**30 - im.weight_bytes_per_accelerator) / 131_072
    assert cap.kv_capacity_tokens == int(expected)


def test_sglang_collectives_use_its_own_all_reduce_timings() -> None:
    # a decode step's 16 KiB all-reduce (one token of Llama-70B: 8192 x 2 B) on 8 H100s under SGLang is priced by
    # SGLang's own measured all-reduce (NVIDIA AIConfigurator's h100_sxm/comm/sglang/0.5.14/custom_allreduce_perf,
    # CUDA graph, 8 GPUs: message_size 8192 elements in 0.00374848 ms; row allreduce-h100-8gpu-sglang-aic), a
    # fifth of NCCL's ring at that size
    im = InferenceModel(model=L70, cluster=cluster_for(H100, 8), tp=8, engine="sglang")
    assert im.collective_engine == "sglang"
    one = collective_time(im.cluster, "allreduce", 8192 * 2, 8, engine=im.collective_engine)
    nccl = collective_time(im.cluster, "allreduce", 8192 * 2, 8)
    assert "allreduce-h100-8gpu-sglang-aic" in one.efficiency_source
    assert one.time_s == pytest.approx(0.00374848e-3, rel=1e-3)
    assert nccl.time_s > 4 * one.time_s


def test_sglang_without_rows_of_its_own_uses_vllms_custom_all_reduce() -> None:
    # on a part without SGLang all-reduce rows (B300) its custom all-reduce, adapted from vLLM's kernel, is priced
    # with vLLM's rows (engines.yaml collective_rows_engine): row allreduce-b300-8gpu-vllm-aic; on the B200, which has
    # SGLang's own rows, with them
    im = InferenceModel(model=L70, cluster=cluster_for("nvidia-b300-sxm-288gb", 8), tp=8, engine="sglang")
    assert im.collective_engine == "vllm"
    one = collective_time(im.cluster, "allreduce", 8192 * 2, 8, engine=im.collective_engine)
    assert "allreduce-b300-8gpu-vllm-aic" in one.efficiency_source
    own = InferenceModel(model=L70, cluster=cluster_for("nvidia-b200-sxm-180gb", 8), tp=8, engine="sglang")
    assert own.collective_engine == "sglang"
    mine = collective_time(own.cluster, "allreduce", 8192 * 2, 8, engine=own.collective_engine)
    assert "allreduce-b200-8gpu-sglang-aic" in mine.efficiency_source


def test_a_stated_budget_keeps_trtllm_whole_prompts() -> None:
    # a Poisson row that states TensorRT-LLM's --max_num_tokens gets the engine's own scheduling: whole prompts (no
    # chunked context by default) riding with the decodes, not the simulator's chunked default
    from aiinfra.validation.benchmark_rows import sim_settings

    flags: list[str] = []
    trt = catalog.engine("trtllm")
    sim = sim_settings({"num_requests": "50"}, trt, 11000, {"max_num_batched_tokens": 11000}, None, 10.0, flags)
    assert sim["scheduler"] == {"max_num_batched_tokens": 11000, "max_num_seqs": 2048, "chunked_prefill": False}
    assert trt.whole_prompts_with_decodes and not catalog.engine("vllm").whole_prompts_with_decodes


def test_the_scheduler_setting_overrides_the_release_default_overlap() -> None:
    from aiinfra.planning.inference import overlaps_scheduling
    from aiinfra.specs.common import validate
    from aiinfra.specs.workload import ServingWorkload

    base = {"input_tokens": 256, "output_tokens": 256, "engine": "trtllm", "request_rate_per_s": 4.0}
    trt, sg = catalog.engine("trtllm"), catalog.engine("sglang")
    assert not overlaps_scheduling(trt, validate(ServingWorkload, base))  # an unstated release: off
    on = {**base, "simulation": {"scheduler": {"overlap_scheduling": True}}}
    assert overlaps_scheduling(trt, validate(ServingWorkload, on))
    off = {**base, "engine": "sglang", "simulation": {"scheduler": {"overlap_scheduling": False}}}
    assert not overlaps_scheduling(sg, validate(ServingWorkload, off))


def _sim_example(*sets: str):  # type: ignore[no-untyped-def]
    from pathlib import Path

    from aiinfra.catalog.resolve import load_scenario

    ex = Path(__file__).resolve().parents[1] / "examples" / "simulate-llama70b-h100.yaml"
    return load_scenario(ex, list(sets))


def test_kv_reservation_setting_overrides_the_engine_policy() -> None:
    # TensorRT-LLM reserves prompt + output by default (GUARANTEED_NO_EVICT); MAX_UTILIZATION allocates as tokens
    # arrive: inference.simulation.scheduler.kv_reservation picks either, for any engine
    from aiinfra.planning.inference import model_for, reserves_full_context
    from aiinfra.sim.run import limits_for
    from aiinfra.specs.common import validate
    from aiinfra.specs.workload import ServingWorkload

    dt = domain_tables()
    base = {"input_tokens": 256, "output_tokens": 256, "engine": "trtllm"}
    assert reserves_full_context("trtllm", dt, validate(ServingWorkload, base))
    inc = validate(ServingWorkload, {**base, "simulation": {"scheduler": {"kv_reservation": "incremental"}}})
    assert not reserves_full_context("trtllm", dt, inc)
    full = {**base, "engine": "vllm", "simulation": {"scheduler": {"kv_reservation": "full"}}}
    assert reserves_full_context("vllm", dt, validate(ServingWorkload, full))
    for policy, reserved in (("incremental", False), ("full", True)):
        sc = _sim_example("inference.engine=trtllm", f"inference.simulation.scheduler.kv_reservation={policy}")
        assert sc.inference is not None
        im = model_for(sc.model, sc.cluster, sc.inference)
        assert limits_for(sc, sc.inference, im, engine=catalog.engine("trtllm")).reserve_full_context is reserved


def test_kv_reservation_sizes_the_kv_bound_batch() -> None:
    # 2,000-token prompts and answers, TensorRT-LLM's 32-token blocks: a whole-context reservation holds
    # ceil(4,000 / 32) · 32 = 4,000 tokens a request; allocation as tokens arrive holds the prompt and half the
    # answer on average, 2,000 + 1,000 = 3,000 -> 3,008 tokens; the same cache then fits cap // 4,000 or cap // 3,008
    from aiinfra.planning.inference import estimate
    from aiinfra.specs.common import validate
    from aiinfra.specs.workload import ServingWorkload

    cl = cluster_for(H100, 2)
    base = {"input_tokens": 2000, "output_tokens": 2000, "engine": "trtllm", "batch": "max", "plan": {"tp": 2}}
    full = estimate(L70, cl, validate(ServingWorkload, base), cap_batch=False)
    inc_wl = {**base, "simulation": {"scheduler": {"kv_reservation": "incremental"}}}
    inc = estimate(L70, cl, validate(ServingWorkload, inc_wl), cap_batch=False)
    cap = full.kv_capacity_tokens
    assert cap > 0 and inc.kv_capacity_tokens == cap
    assert (full.batch_seqs, inc.batch_seqs) == (cap // 4000, cap // 3008)


def test_mlperf_rows_take_the_harness_policy() -> None:
    # NVIDIA's MLPerf harness runs TensorRT-LLM with MAX_UTILIZATION (engines.yaml mlperf_kv_reservation)
    assert catalog.engine("trtllm").mlperf_kv_reservation == "incremental"
    assert catalog.engine("vllm").mlperf_kv_reservation is None
