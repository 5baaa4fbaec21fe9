"""Training memory per accelerator, vectorised over candidate plans.

Sources, factor by factor:
* Model state bytes per parameter — mixed-precision Adam. Megatron-LM convention
  (``theoretical_memory_usage.py``): bf16 weights 2 + fp32 main grads 4 + fp32 master 4 + Adam m, v 8
  = 18 B; with the distributed optimizer (ZeRO-1) 6 + 12/d. ZeRO paper convention (Rajbhandari et
  al. 2020): fp16 grads, 2 + 2 + 12 = 16 B; ZeRO-2 shards grads, ZeRO-3 shards everything (16/d).
  PyTorch FSDP FULL_SHARD keeps fp32 sharded params, grads and moments (16/d) plus the bf16 layers
  it all-gathers (two in flight with prefetch).
* Activations per layer — Korthikanti et al. 2022 Table 2 (16-bit activations):
  no recompute s·b·h·(34 + 5·a·s/h) (÷t with sequence parallelism; without it 10 + 24/t + 5as/(ht)),
  selective recompute 34·s·b·h/t, full recompute 2·s·b·h(/t). Megatron-LM generalises 34 to
  18 + 4·ffn/h for a GeLU MLP; a gated (SwiGLU) MLP stores two ffn-wide tensors and their product,
  18 + 6·ffn/h (derived the same way). FlashAttention (Dao et al. 2022) does not store the a·s²
  scores, removing the 5as/h term.
* In-flight micro-batches — 1F1B keeps min(p, m) micro-batches on the first stage; interleaving
  multiplies by 1 + (p−1)/(p·v) (Narayanan et al. 2021 §2.2; Korthikanti et al. 2022 §4.2.3).
* Logits — Megatron-LM: the output layer and cross-entropy hold 4·s·b·V/t bytes (fp32 logits).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aiinfra.analytic.model_figures import ParamBreakdown, param_breakdown
from aiinfra.specs.model import ModelArch
from aiinfra.specs.parallelism import PARAMS_SHARDED, Recompute, Sharding

#: scenario spellings in code order (Sharding / Recompute labels)
SHARDING_CODES = tuple(s.label for s in Sharding)
RECOMPUTE_CODES = tuple(r.label for r in Recompute)


@dataclass(frozen=True, slots=True)
class PlanArrays:
    """A batch of candidate plans as parallel integer arrays (one entry per plan)."""

    tp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    vp: np.ndarray
    mb: np.ndarray
    """Micro-batch (sequences)."""
    sharding: np.ndarray
    """:class:`Sharding` codes."""
    recompute: np.ndarray
    """:class:`Recompute` codes."""
    sp: np.ndarray
    """Sequence parallelism on (bool)."""

    def __len__(self) -> int:
        return int(self.tp.shape[0])

    def take(self, idx: np.ndarray) -> PlanArrays:
        """The plans at ``idx`` (an index or mask array), every field taken alike."""
        return PlanArrays(*(getattr(self, f)[idx] for f in self.__dataclass_fields__))


@dataclass(frozen=True, slots=True)
class TrainSetup:
    """Scalars one estimate needs, resolved from a scenario (or a validation row)."""

    model: ModelArch
    seq_len: int
    global_batch_seqs: int
    precision: str
    """Matmul precision: bf16 | fp16 | fp8 | fp32."""
    flash_attention: bool = True
    attention_kernel: str = "flash"
    """Fused attention kernel when flash_attention: "flash" (the fastest FlashAttention measured for the
    accelerator: FA3 on Hopper, FA2 before), "flash2" (FlashAttention-2 kernels even on Hopper) or "triton"
    (Triton FlashAttention, efficiency kind ``attention_triton``)."""
    reserve_bytes: float = 0.0
    """Framework reserve (CUDA context, allocator, NCCL buffers)."""
    ep_comm_overlap: bool = False
    """Expert-parallel all-to-all of one micro-batch hidden behind another micro-batch's computation
    (Megatron-Core ``--overlap-moe-expert-parallel-comm`` "1F1B A2A overlap"; DeepSeek-V3's DualPipe,
    DeepSeek-AI 2024, §3.2.1): only what exceeds that computation stays exposed."""
    tp_comm_overlap: bool = False
    """Tensor-parallel all-gathers / reduce-scatters split into tp chunks and pipelined with the GEMMs they
    feed (Transformer Engine userbuffers, Megatron ``--tp-comm-overlap``; Wang et al. 2023, ASPLOS)."""
    dp_grad_overlap: bool = True
    """Data-parallel gradient reduction (unsharded, ZeRO-1/2) overlapped with the last micro-batch's backward
    (PyTorch DDP buckets, Megatron ``--overlap-grad-reduce``). False: it runs after the backward, exposed — DeepSpeed
    ZeRO stage 1 registers no backward hooks, so it cannot overlap (microsoft/DeepSpeed PR #1246), and stages 0/2
    default to ``overlap_comm: false`` (stage 3 defaults to true)."""
    optimizer: str = "adam"
    grad_convention: str = "megatron"
    """Unsharded gradient bytes: "megatron" = fp32 main grads (4 B, 18 B/param with Adam);
    "zero" = 16-bit grads as counted by the ZeRO paper (2 B, 16 B/param)."""
    frozen_base_bytes_per_param: float | None = None
    """Parameter-efficient fine-tuning: the base weights are frozen, stored at this many bytes per parameter
    (2 = bf16 for LoRA, NF4's 4.127 bits for QLoRA) with no gradients or optimizer states; None = full training."""
    fsdp_shard_ranks: int = 0
    """Hybrid sharding (HSDP) of ZeRO-3 / FSDP: shard parameters, gradients and optimizer states over groups of
    this many consecutive data-parallel ranks and replicate them across the groups (PyTorch FSDP
    ``ShardingStrategy.HYBRID_SHARD``, Zhao et al. 2023, arXiv 2304.11277 §3.2.2; PaLM, Chowdhery et al. 2022 §4:
    sharded within a TPU pod, data-parallel across pods); the group is gcd(dp·cp, this). 0 = shard over the whole
    data-parallel group (FULL_SHARD)."""
    moe_routing_skew_cv: float = 0.0
    """Relative spread (σ/μ) of the experts' expected loads under the run's learned router, beyond the sampling noise
    of routing itself: 0 = uniform routing (Megatron's ``--moe-router-force-load-balancing`` draws random router
    logits; a perfectly balanced learned router); a user's own router statistics give it otherwise. The step waits
    for the busiest expert-parallel rank (training_step.expert_load_imbalance)."""
    expert_tp: int = 0
    """Tensor parallelism of the routed experts (Megatron-Core ``expert_tensor_parallel_size``); 0 = the plan's tp,
    Megatron's default when unset. A smaller value keeps whole experts per rank: more expert weights (and gradients to
    reduce) per rank, over tp/expert_tp times as many expert-data-parallel replicas."""
    low_precision_output_layer: bool = False
    """The output projection (LM head) runs in the run's FP8/FP4 format. False (the default): 16-bit, as Megatron-Core
    builds it (a ColumnParallelLinear outside Transformer Engine's autocast); Megatron-Bridge's ``fp8_output_proj``
    turns it to the run's format."""
    adapter_params: float = 0.0
    """Trainable adapter parameters of the whole model (LoRA: r·(d_in + d_out) per adapted matrix, Hu et al.
    2021), kept in 16-bit with fp32 gradients and Adam states (2 + 4 + 12 B each)."""

    @property
    def frozen_base(self) -> bool:
        """Whether the base weights are frozen (adapter fine-tuning): only the adapters train."""
        return self.frozen_base_bytes_per_param is not None

    @property
    def params(self) -> ParamBreakdown:
        """The model's parameter counts by part."""
        return param_breakdown(self.model)


def expert_tp_of(setup: TrainSetup, plans: PlanArrays) -> np.ndarray:
    """Each plan's expert tensor parallelism: TrainSetup.expert_tp where given (at most the plan's tp), else tp."""
    tp = plans.tp.astype(float)
    if setup.expert_tp <= 0:
        return tp
    out: np.ndarray = np.minimum(tp, float(setup.expert_tp))
    return out


def rank_params(setup: TrainSetup, plans: PlanArrays) -> dict[str, np.ndarray]:
    """Parameters held by one rank of the first and of the last pipeline stage (before DP sharding)."""
    pb = setup.params
    m = setup.model
    tp = plans.tp.astype(float)
    ep = plans.ep.astype(float)
    pp = plans.pp.astype(float)
    dense_layer = pb.attention_per_layer + pb.dense_mlp_per_layer
    etp = expert_tp_of(setup, plans)
    moe_layer_rank = (
        (pb.attention_per_layer + pb.moe_shared_per_layer + pb.router_per_layer) / tp
        + pb.moe_routed_per_layer / (ep * etp)
        + pb.norms_per_layer
    )
    dense_layer_rank = dense_layer / tp + pb.norms_per_layer
    per_layer = (pb.dense_layers * dense_layer_rank + pb.moe_layers * moe_layer_rank) / m.num_layers
    layers = per_layer * np.ceil(m.num_layers / pp)
    embed = pb.embedding / tp
    output = np.where((pp > 1) | (pb.output > 0), m.vocab_size * m.hidden_size / tp, 0.0)
    first = layers + embed + np.where(pp == 1, output, 0.0)
    last = layers + np.where(pp == 1, embed, 0.0) + output
    # the routed experts' share of a stage (their gradients reduce over the expert-data-parallel group)
    routed = pb.moe_layers * pb.moe_routed_per_layer / (ep * etp) / m.num_layers * np.ceil(m.num_layers / pp)
    return {"first": first, "last": last, "layer": per_layer, "routed": routed}


def shard_group_ranks(setup: TrainSetup, plans: PlanArrays) -> np.ndarray:
    """Ranks a ZeRO-3 / FSDP parameter is sharded over: the whole data-parallel group (dp·cp), or under hybrid
    sharding (:attr:`TrainSetup.fsdp_shard_ranks`) gcd(dp·cp, shard ranks); the rest of the group holds replicas."""
    dp_n: np.ndarray = plans.dp * plans.cp
    if setup.fsdp_shard_ranks <= 0:
        return dp_n
    out: np.ndarray = np.gcd(dp_n, setup.fsdp_shard_ranks)
    return out


def _state_bytes_per_param(setup: TrainSetup, plans: PlanArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weights, gradients, optimizer states) bytes per parameter on one rank, after sharding (ZeRO-1/2 over the
    whole data-parallel group; ZeRO-3 / FSDP over its shard group, :func:`shard_group_ranks`)."""
    s = plans.sharding
    shard = np.where(np.isin(s, PARAMS_SHARDED), shard_group_ranks(setup, plans), plans.dp * plans.cp).astype(float)
    fp32 = setup.precision == "fp32"
    w_full = 4.0 if fp32 else 2.0
    moments = 8.0 if setup.optimizer == "adam" else 4.0
    master = 0.0 if fp32 else 4.0
    opt_full = master + moments
    weights = np.where(s == Sharding.FSDP, 4.0 / shard, np.where(s == Sharding.ZERO3, w_full / shard, w_full))
    g_full = 4.0 if (fp32 or setup.grad_convention == "megatron") else 2.0
    grads = np.where(
        s == Sharding.FSDP,
        4.0 / shard,
        np.where(s == Sharding.ZERO3, 2.0 / shard, np.where(s == Sharding.ZERO2, g_full / shard, g_full)),
    )
    # FSDP's sharded fp32 parameters are the master weights (counted under weights): only m, v remain
    opt = np.where(s == Sharding.NONE, opt_full, np.where(s == Sharding.FSDP, moments / shard, opt_full / shard))
    return weights, grads, opt


def activation_bytes_per_layer(setup: TrainSetup, plans: PlanArrays, recompute: np.ndarray) -> np.ndarray:
    """Korthikanti et al. 2022 Table 2, per layer and micro-batch, generalised as the docstring says."""
    m = setup.model
    h = float(m.hidden_size)
    s = setup.seq_len / plans.cp.astype(float)
    b = plans.mb.astype(float)
    t = plans.tp.astype(float)
    ffn = float(m.ffn_hidden_size)
    if m.is_moe:
        ffn = float(m.expert_ffn * (m.experts_per_token + m.num_shared_experts))
    mlp_coeff = 6.0 if m.mlp == "swiglu" else 4.0
    base = 18.0 + mlp_coeff * ffn / h
    scores = 0.0 if setup.flash_attention else 5.0 * m.num_heads * s / h
    sbh = s * b * h
    sp = plans.sp & (plans.tp > 1)
    none_sp = sbh * (base + scores) / t
    none_nosp = sbh * (10.0 + (base - 10.0) / t + scores / t)
    sel_sp = sbh * base / t
    sel_nosp = sbh * (10.0 + (base - 10.0) / t)
    full = np.where(sp, 2.0 * sbh / t, 2.0 * sbh)
    none = np.where(sp, none_sp, none_nosp)
    sel = np.where(sp, sel_sp, sel_nosp)
    out: np.ndarray = np.where(recompute == Recompute.FULL, full, np.where(recompute == Recompute.SELECTIVE, sel, none))
    return out


def memory_per_rank(setup: TrainSetup, plans: PlanArrays) -> dict[str, np.ndarray]:
    """Bytes per accelerator on the most loaded pipeline stage, itemised."""
    m = setup.model
    rp = rank_params(setup, plans)
    w_b, g_b, o_b = _state_bytes_per_param(setup, plans)
    pp = plans.pp.astype(float)
    n_micro = setup.global_batch_seqs / (plans.dp * plans.mb).astype(float)
    inflight = np.minimum(pp, n_micro) * np.where(plans.vp > 1, 1.0 + (pp - 1.0) / (pp * plans.vp), 1.0)
    layers_stage = np.ceil(m.num_layers / pp)
    act_layer = activation_bytes_per_layer(setup, plans, plans.recompute)
    # full recompute re-materialises one layer's activations during backward
    working = np.where(
        plans.recompute == Recompute.FULL, activation_bytes_per_layer(setup, plans, np.zeros_like(plans.recompute)), 0.0
    )
    act_first = act_layer * layers_stage * inflight + working
    act_last = act_layer * layers_stage + working
    s_local = setup.seq_len / plans.cp.astype(float)
    logits = 4.0 * s_local * plans.mb * m.vocab_size / plans.tp
    act_last = act_last + logits
    act_first = act_first + np.where(plans.pp == 1, logits, 0.0)
    # FSDP / ZeRO-3 all-gather whole layers (bf16): current + prefetched. Under pipeline parallelism the stage keeps
    # its layers gathered across micro-batches (reshard_after_forward off, analytic/training_step.py) and accumulates
    # their unsharded gradients until the last backward's reduce-scatter: 2 B + 4 B (fp32 reduce dtype) per parameter
    sharded_params = np.isin(plans.sharding, PARAMS_SHARDED)
    pipelined = plans.pp > 1
    out: dict[str, np.ndarray] = {}
    adapters = setup.adapter_params / pp  # adapters sit in every layer: a stage holds its layers' share
    for stage, params, act in (("first", rp["first"], act_first), ("last", rp["last"], act_last)):
        if setup.frozen_base_bytes_per_param is not None:
            out[f"{stage}_weights"] = params * setup.frozen_base_bytes_per_param + adapters * 2.0
            out[f"{stage}_gradients"] = adapters * 4.0
            out[f"{stage}_optimizer"] = adapters * 12.0
        else:
            gathered = np.where(sharded_params, np.where(pipelined, 2.0 * params, 2.0 * 2.0 * rp["layer"]), 0.0)
            held_grads = np.where(sharded_params & pipelined, 4.0 * params, 0.0)
            out[f"{stage}_weights"] = params * w_b + gathered
            out[f"{stage}_gradients"] = params * g_b + held_grads
            out[f"{stage}_optimizer"] = params * o_b
        out[f"{stage}_activations"] = act
        out[f"{stage}_total"] = (
            out[f"{stage}_weights"] + out[f"{stage}_gradients"] + out[f"{stage}_optimizer"] + act + setup.reserve_bytes
        )
    worst_last = out["last_total"] > out["first_total"]
    result = {
        key: np.where(worst_last, out[f"last_{key}"], out[f"first_{key}"])
        for key in ("weights", "gradients", "optimizer", "activations", "total")
    }
    result["other"] = np.full(len(plans), setup.reserve_bytes)
    return result
