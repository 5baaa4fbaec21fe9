"""Predict a training.csv row's metric from its specs only (never from ``value``)."""

from __future__ import annotations

import numpy as np

from aiinfra.analytic.training_memory import TrainSetup, memory_per_rank
from aiinfra.analytic.training_step import step_time
from aiinfra.planning.training import reserve_bytes
from aiinfra.search.plans import single_plan
from aiinfra.specs.precision import PRECISIONS
from aiinfra.specs.scenario import HardwareInput
from aiinfra.validation import switches
from aiinfra.validation.rows import RowError, integer, model_from_row, reasoned
from aiinfra.validation.switches import DEEPSPEED, SDPA_ATTN
from aiinfra.validation.types import RowPrediction, RowTables

#: the precisions a training row may name, each mapped to the format its matmuls run at (specs.precision)
PRECISION = {p: PRECISIONS[p].peak_format for p in ("bf16", "fp16", "fp8", "mxfp8", "nvfp4")}
#: sources whose software predates FlashAttention (Dao et al., 2022-05): attention scores materialised (the 2021
#: Megatron-LM README's GPT-3 example ran the same code release as Narayanan et al. 2021)
PRE_FLASH_SOURCES = ("Narayanan et al. 2021", "Korthikanti", "Megatron-LM README (2021)")
#: the fused-attention kernel a row ran (its ``attention_kernel`` column; blank: by the source below, else "flash"):
#: "triton": llm-foundry's ``attn_impl: triton``, the Triton FlashAttention kernel, which llm-foundry's
#: scripts/train/benchmarking/submit_benchmarks.py defaults ``--attn_impl`` to (every revision from 2023-05 to
#: 2024-01; its sweep.sh passes no ``--attn_impl`` for the A100 runs); "flash2": llm-foundry's ``attn_impl: flash``
#: (flash-attn 2.x with the gpu-flash2 extra that submit_benchmarks.py installs from 2024-01), FlashAttention-2
#: kernels, also on Hopper, or PyTorch SDPA (torchtitan, validation.switches.SDPA_ATTN), whose default backend on
#: H100/H200 from PyTorch 2.5.1 until the cuDNN >= 9.15 builds of 2.10 is the FLASH backend, i.e.
#: FlashAttention-2 kernels: the cuDNN backend, made the H100 default in 2.5, was turned opt-in after the 2.5
#: release (pytorch/pytorch#138649 "SDPA 2.5 Issue tracking", PR #138522, 2024-10); on 2.6.0.dev20241204 an H100
#: measured default SDPA at 329 TFLOP/s against 631 for cuDNN and 632 for FA3 (pytorch/pytorch#142132, shape
#: 1x24x4608x128), the FA2 level; cuDNN became the preferred backend again only for cuDNN > 9.15 (sdp_utils.cpp
#: check_prefer_cudnn_attention, PyTorch 2.10). The torchtitan rows date from 2024-12 to 2025-06, inside that window.
ATTENTION_KERNELS = ("triton", "flash2", "flash")


def attention_kernel_for(source: str, stated: str) -> str:
    """The fused-attention kernel a row ran: the one its ``attention_kernel`` column states, else "flash2" for a
    PyTorch SDPA source (torchtitan), else "flash" (fastest measured kernel); rules documented above."""
    if stated:
        if stated not in ATTENTION_KERNELS:
            raise RowError(f"attention_kernel {stated!r} is not one of {', '.join(ATTENTION_KERNELS)}")
        return stated
    return "flash2" if SDPA_ATTN.search(source) else "flash"


@reasoned("training")
def predict_row(row: dict[str, str], tables: RowTables) -> RowPrediction:
    """The row's metric from its columns: cluster, precision, layout and run settings, then the step-time model. Long
    (about 80 lines) because it reads the row's columns once each, in the order its assumption flags are reported
    (the flags' order is the reason text `validate` prints). ``tables``: the catalog's rows it reads."""
    model, flags = model_from_row(row, tables.models)
    n = integer(row, "num_accelerators")
    if not n:
        raise RowError("num_accelerators blank")
    per_node = integer(row, "accelerators_per_node")
    cluster = tables.resolve_cluster(HardwareInput(accelerator=row["accelerator"].strip(), count=n, per_node=per_node))
    raw_precision = (row.get("precision") or "bf16").strip()
    precision = PRECISION.get(raw_precision)
    if precision is None:
        raise RowError(f"precision {row.get('precision')!r} not modelled")
    if PRECISIONS[raw_precision].block_scaled:
        cluster.accelerator.peak_flop_per_s(raw_precision)  # refuses mxfp8/nvfp4 where the hardware lacks it
    seq = integer(row, "seq_len")
    gbs = integer(row, "global_batch_seqs")
    if not seq or not gbs:
        raise RowError("seq_len or global_batch_seqs blank")
    tp = integer(row, "tp", 1) or 1
    pp = integer(row, "pp", 1) or 1
    cp = integer(row, "cp", 1) or 1
    ep = integer(row, "ep", 1) or 1
    dp = integer(row, "dp") or n // (tp * pp * cp)
    vp = integer(row, "vp")
    if vp is None:
        vp = 1
        if pp > 1:
            flags.append("vp blank: assumed 1 (no interleaving)")
    mb = integer(row, "microbatch_seqs")
    if mb is None:
        mb = 1
        flags.append("microbatch_seqs blank: assumed 1")
    sharding = (row.get("sharding") or "").strip()
    if not sharding:
        sharding = "none"
        flags.append("sharding blank: assumed none")
    recompute = (row.get("recompute") or "").strip()
    if recompute in ("", "unknown"):
        recompute = "none"
        flags.append("recompute not stated: assumed none")
    source = row.get("source") or ""
    deepspeed = switches.flag(row, "deepspeed") or bool(DEEPSPEED.search(source))
    flash = not any(s in source for s in PRE_FLASH_SOURCES)
    kernel = attention_kernel_for(source, switches.text(row, "attention_kernel"))
    if precision == "fp4" and "fp4" not in cluster.accelerator.dense_flop_per_s:
        raise RowError(f"{cluster.accelerator.id} has no dense fp4 peak in the catalog")
    setup = TrainSetup(
        model=model,
        seq_len=seq,
        global_batch_seqs=gbs,
        precision=precision,
        flash_attention=flash,
        attention_kernel=kernel,
        reserve_bytes=reserve_bytes(tables.runtime_reserve),
        tp_comm_overlap=switches.flag(row, "tp_comm_overlap"),
        ep_comm_overlap=switches.flag(row, "ep_comm_overlap"),
        # DeepSpeed with ZeRO stage 0-2 reduces gradients after the backward (TrainSetup.dp_grad_overlap)
        dp_grad_overlap=not (sharding in ("none", "zero1", "zero2") and deepspeed),
        fsdp_shard_ranks=integer(row, "fsdp_shard_ranks") or 0,
        low_precision_output_layer=switches.flag(row, "low_precision_output_layer"),
        expert_tp=integer(row, "expert_tp") or 0,
    )
    plans = single_plan(
        model, setup, tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, vp=vp, mb=mb, sharding=sharding, recompute=recompute
    )
    st = step_time(setup, cluster, plans)
    mem = memory_per_rank(setup, plans)
    step = float(st.step_time_s[0])
    metric = row.get("metric", "").strip()
    if metric == "step_time_s":
        pred = step
    elif metric == "tokens_per_s_per_accelerator":
        pred = gbs * seq / step / n
    else:
        raise RowError(f"metric {metric!r} not modelled for training rows")
    details = {
        "step_time_s": step,
        "compute_s": float(st.compute_s[0]),
        "exposed_comm_s": float(st.exposed_comm_s[0]),
        "bubble_s": float(st.bubble_s[0]),
        "memory_per_accelerator_bytes": float(mem["total"][0]),
        "fits": bool(np.all(mem["total"] <= cluster.accelerator.memory_bytes)),
        "flash_attention": flash,
        "attention_kernel": kernel if flash else "none (scores materialised)",
        "efficiency_sources": sorted(st.efficiency_sources),
    }
    return RowPrediction(pred, reason="; ".join(flags), details=details)
