"""Training step time, vectorised over candidate plans.

Compute: every matrix multiply of a layer is timed by the roofline with measured efficiency for its
size (analytic/efficiency.py); backward = 2 × forward GEMM work (data and weight gradients; Narayanan
et al. 2021 §3.5); FlashAttention backward ≈ 2.5 × its forward (5 vs 2 matmuls, Dao 2023 §3.1);
selective recompute re-runs the attention core and full recompute the whole forward (Korthikanti et
al. 2022 §5). Element-wise work (norms, activations, residuals, dropout) is memory traffic counted
from the op list of a Megatron layer, 2 bytes per element — 2 LayerNorms 4+4 and residual+dropout 2×7
bytes per token·hidden, GeLU 4 (SwiGLU 6) bytes per token·ffn — each kind of kernel timed at the HBM
bandwidth measured for it (Vidur per-op profiles: norms reach ~⅓ of peak bandwidth, activations ~½,
adds ~0.9; :func:`_elementwise_time`).

Communication (analytic/comms.py ring formulas over the tier a group spans; ranks placed tp, cp, dp, pp
from innermost, as Megatron-Core orders them):
* TP: 2 all-reduces forward + 2 backward per layer of b·s·h activations (Shoeybi et al. 2019); with
  sequence parallelism all-gather + reduce-scatter of the same volume (Korthikanti et al. 2022); not
  overlapped.
* CP: ring attention passes K/V (cp−1) times forward and K/V + dK/dV backward (Liu et al. 2023),
  overlapped with the attention compute.
* EP: 2 all-to-alls forward + 2 backward per MoE layer of k·tokens·h (Lepikhin et al. 2021, GShard).
* PP: activations forward and gradients backward per micro-batch and model chunk; bubble
  (p−1)/(v·m) of the ideal time (Narayanan et al. 2021 eq. 1 and §2.2.2).
* DP: one gradient all-reduce (or reduce-scatter + all-gather, same volume — ZeRO paper §7) per step,
  overlapped with the last micro-batch's backward; FSDP/ZeRO-3 all-gather parameters forward and
  backward and reduce-scatter gradients every micro-batch (1.5× DP volume, ZeRO paper §7.2.2), unit by
  unit: only the first all-gathers, the last reduce-scatters and whatever a layer's communication takes
  beyond that layer's compute are exposed (Zhao et al. 2023, :func:`_fsdp_exposed_per_microbatch`);
  across nodes every collective also pays NCCL's ring latency (analytic/comms.py). Hybrid sharding (HSDP,
  TrainSetup.fsdp_shard_ranks) runs those collectives inside a shard group of s ranks and adds one all-reduce of
  each rank's 1/s gradient shard across the dp·cp/s replicas per step, overlapped like the DP gradient reduction
  (Zhao et al. 2023 §3.2.2: reduce-scatter within the group, then all-reduce across groups).
* Overlap is not free: compute that runs beside an FSDP gather/scatter or the data-parallel gradient reduction
  is slowed by 18.9 % of the overlapped time (Lee et al. 2025, :func:`overlapped`).
* Optimizer: Adam reads and writes its fp32 state once per step (memory-bound).
* Calibration (catalog/calibration.py, ``aiinfra calibrate``): the time on the accelerators divided by the user's
  compute scale, the exposed communication by the communication scale, plus a per-step overhead; neutral without.
* Shared NICs: the data-parallel gradient reduction (and FSDP's per-layer gathers and scatters) that run beside the
  expert all-to-alls, context-parallel ring and pipeline sends of the same backward share each rank's NIC with them;
  under max-min fair sharing two bandwidth-bound flows of a and b seconds started together both finish by a + b, the
  shorter at 2·min(a, b) (Bertsekas & Gallager, Data Networks, 2nd ed. 1992, §6.5.2), so the reduction stretches by
  min(a, b) (:func:`shared_link_s`).
* Expert load: the step waits for the busiest expert-parallel rank. Routing T token-expert assignments uniformly over
  ep ranks is multinomial: a rank's load has mean μ = T/ep and σ² = μ(1 − 1/ep), plus the spread of the learned
  router's expected loads (TrainSetup.moe_routing_skew_cv, over the ep/E experts a rank holds); the busiest of ep
  ranks carries μ + σ·E[max of ep standard normals] (:func:`expert_load_imbalance`).
* Stragglers: the step waits for the slowest of its n ranks, μ + σ·E[max of n standard normals] on compute and
  bubble, σ/μ the spread of GPU speed within a cluster (Sinha et al. SC22; :func:`straggler_factor`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from aiinfra.analytic.comms import collective_time_array, distinct_sorted, latency_row
from aiinfra.analytic.efficiency import NO_DATA, table
from aiinfra.analytic.model_figures import attention_dims, flop_per_token_training
from aiinfra.analytic.training_memory import (
    PlanArrays,
    TrainSetup,
    expert_tp_of,
    rank_params,
    shard_group_ranks,
)
from aiinfra.analytic.window import causal_mean_keys
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.model import ModelArch
from aiinfra.specs.parallelism import PARAMS_SHARDED, Recompute, Sharding
from aiinfra.specs.tables import DomainTables

ACT_BYTES = 2.0  # bf16/fp16 activations and gradients exchanged between ranks


@dataclass
class StepArrays:
    """Training step time (s) of each candidate plan and its parts (compute, exposed communication, pipeline
    bubble, straggler wait), one array element per plan."""

    step_time_s: np.ndarray
    compute_s: np.ndarray
    exposed_comm_s: np.ndarray
    bubble_s: np.ndarray
    tp_comm_s: np.ndarray
    dp_comm_exposed_s: np.ndarray
    straggler_s: np.ndarray
    """Expected wait for the slowest rank (:func:`straggler_factor`), included in ``step_time_s``."""
    microbatches: np.ndarray
    model_flop_per_step: float
    efficiency_sources: set[str] = field(default_factory=set)


def _gemm_time(
    cluster: ClusterSpec, dtype: str, flop: np.ndarray, weight_bytes: np.ndarray, src: set[str]
) -> np.ndarray:
    acc = cluster.accelerator
    peak = acc.sustained_flop_per_s(dtype)  # dense peak x power-limited fraction (power-capped parts)
    curve, label = table(cluster.tables).curve("gemm", acc.id, dtype=dtype)
    src.add(f"gemm: {label}")
    eff = curve.at_array(flop) if curve is not None else np.ones_like(flop)
    mcurve, mlabel = table(cluster.tables).curve("memory", acc.id)
    src.add(f"memory: {mlabel}")
    meff = mcurve.at_array(weight_bytes) if mcurve is not None else np.ones_like(weight_bytes)
    out: np.ndarray = np.maximum(flop / (peak * eff), weight_bytes / (acc.memory_bw_bytes_per_s * meff))
    return out


def _mem_time(cluster: ClusterSpec, nbytes: np.ndarray, src: set[str], kind: str = "memory") -> np.ndarray:
    """Memory-bound time; ``kind="elementwise"`` uses measured element-wise kernel curves (norms, adds,
    activations) when the catalog has them, else the streaming ("memory") curve, and says which."""
    mcurve, mlabel = table(cluster.tables).curve(kind, cluster.accelerator.id)
    if mcurve is None and kind != "memory":
        mcurve, mlabel = table(cluster.tables).curve("memory", cluster.accelerator.id)
        mlabel = f"{mlabel} (no {kind} curve)"
    src.add(f"{kind}: {mlabel}")
    meff = mcurve.at_array(nbytes) if mcurve is not None else np.ones_like(nbytes)
    out: np.ndarray = nbytes / (cluster.accelerator.memory_bw_bytes_per_s * meff)
    return out


def _elementwise_time(
    cluster: ClusterSpec, m: ModelArch, tokens: np.ndarray, tp: np.ndarray, src: set[str]
) -> np.ndarray:
    """Forward element-wise kernels of one layer, each timed at the bandwidth measured for its kind and
    size (Vidur per-op profiles, catalog/data/efficiency.yaml): two norms (read + write one 2-byte
    tokens × h tensor: 4 B per element each, "norm"), residual adds with dropout (2 × 7 B per element:
    add 6 B, dropout mask 1 B, "elementwise" streaming), and the MLP activation (GeLU reads and writes
    the ffn-wide tensor, 4 B per element; SwiGLU reads two and writes one, 6 B; "activation")."""
    th = tokens * float(m.hidden_size) / tp
    ffn = float(m.expert_ffn * (m.experts_per_token + m.num_shared_experts)) if m.is_moe else float(m.ffn_hidden_size)
    act_b = (6.0 if m.mlp == "swiglu" else 4.0) * tokens * ffn / tp
    norms = 2.0 * _mem_time(cluster, 4.0 * th, src, kind="norm")
    residual = 2.0 * _mem_time(cluster, 7.0 * th, src, kind="elementwise")
    act = _mem_time(cluster, act_b, src, kind="activation")
    out: np.ndarray = norms + residual + act
    return out


#: bytes a low-precision Linear writes per quantized element, scale factors included: FP8 1 B (per-tensor scale);
#: NVFP4 ½ B + one E4M3 scale byte per 16 values (NVIDIA, "Pretraining Large Language Models with NVFP4",
#: arXiv 2509.25149, §2: 16-element blocks with an FP8 E4M3 scale, plus one FP32 scale per tensor)
QUANT_BYTES = {"fp8": 1.0, "fp4": 0.5 + 1.0 / 16.0}
#: NVFP4's per-tensor FP32 scale comes from the tensor's amax, an extra read of the 16-bit tensor before the cast
#: (same paper, two-level scaling); FP8 delayed scaling takes its scale from the amax history (no extra pass)
QUANT_AMAX_PASS = {"fp8": 0.0, "fp4": 1.0}


def _quantize_time(
    cluster: ClusterSpec, m: ModelArch, dtype: str, tokens: np.ndarray, tp: np.ndarray, src: set[str]
) -> tuple[np.ndarray, np.ndarray]:
    """(forward, backward) time of one layer's FP8/FP4 casts around its Linear GEMMs, memory-bound. Transformer
    Engine quantizes every Linear's input and, in the backward, its output gradient; each needs a row-wise copy (fprop,
    dgrad) and a column-wise one (wgrad: the GEMM reduces over tokens, and block or per-tensor scales run along the
    dot-product dimension; TE docs, "Using FP8 with Transformer Engine"; NVFP4 paper §2). The norm and activation
    kernels before a Linear emit its quantized input (TE LayerNormLinear / LayerNormMLP): forward 2·q bytes per input
    element; the output gradient is read once in 16-bit and written twice: 2 + 2·q; NVFP4 adds an amax read (2 B) of
    each tensor. Zero for 16-bit GEMMs. The cast kernels run at the measured element-wise bandwidth."""
    if dtype not in QUANT_BYTES:
        zero = np.zeros_like(tokens, dtype=float)
        return zero, zero
    q, amax = QUANT_BYTES[dtype], 2.0 * QUANT_AMAX_PASS[dtype]
    q_dim = m.num_heads * m.head_size
    kv_dim = m.kv_heads * m.head_size if m.attention != "mla" else q_dim
    ffn = float(m.expert_ffn * (m.experts_per_token + m.num_shared_experts)) if m.is_moe else float(m.ffn_hidden_size)
    mats = 2.0 if m.mlp == "swiglu" else 1.0
    x_elems = 2.0 * m.hidden_size + q_dim + ffn  # inputs of QKV, output projection, FC1, FC2
    dy_elems = q_dim + 2.0 * kv_dim + m.hidden_size + mats * ffn + m.hidden_size  # their outputs
    fwd = _mem_time(cluster, tokens * x_elems * (2.0 * q + amax) / tp, src, kind="elementwise")
    bwd = _mem_time(cluster, tokens * dy_elems * (2.0 + 2.0 * q + amax) / tp, src, kind="elementwise")
    return fwd, bwd


def flash_attention_fwd_time(
    cluster: ClusterSpec,
    setup: TrainSetup,
    m: ModelArch,
    attn_dtype: str,
    attn_flop: np.ndarray,
    calls: np.ndarray,
    src: set[str],
) -> np.ndarray:
    """Forward time of a rank's fused attention: ``attn_flop`` at the measured kernel efficiency. Context parallelism
    runs ring attention as ``calls`` = cp kernel launches per layer, one per K/V chunk (Liu et al. 2023, ring
    attention; Megatron-Core / Transformer Engine CP with P2P exchange, its default): each launch holds 1/cp of the
    rank's attention FLOPs, and the efficiency is read at that size."""
    kind = "attention_triton" if setup.attention_kernel == "triton" else "attention"
    family = "fa2" if setup.attention_kernel == "flash2" else None
    acurve, alabel = table(cluster.tables).curve(
        kind, cluster.accelerator.id, dtype=attn_dtype, head_dim=int(m.head_size), kernel=family
    )
    src.add(f"{kind}: {alabel}")
    aeff = acurve.at_array(attn_flop / calls) if acurve is not None else np.ones_like(attn_flop)
    out: np.ndarray = attn_flop / (cluster.accelerator.sustained_flop_per_s(attn_dtype) * aeff)
    return out


def _row_value(tables: DomainTables, row_id: str, key: str) -> float:
    """A number of one collective_latency.yaml row; 0 when the catalog lacks the row (term off)."""
    row = latency_row(tables, row_id)
    return float(row[key]) if row else 0.0


def overlap_slowdown_frac(tables: DomainTables) -> float:
    """Fraction by which compute slows while a collective runs beside it (SMs, memory bandwidth and power shared):
    18.9 % on average (Lee et al. 2025, arXiv 2507.03114; collective_latency.yaml overlap-compute-slowdown)."""
    return _row_value(tables, "overlap-compute-slowdown", "slowdown_frac")


def overlapped(comm_s: np.ndarray, compute_s: np.ndarray, slowdown_frac: float) -> np.ndarray:
    """Time a collective adds to the compute it runs beside: the part it outlasts the compute, plus the slowdown of
    the compute it overlaps (``slowdown_frac`` × the overlapped time)."""
    out: np.ndarray = np.maximum(0.0, comm_s - compute_s) + slowdown_frac * np.minimum(comm_s, compute_s)
    return out


def expected_max_std_normal(n: np.ndarray) -> np.ndarray:
    """E[max of n independent standard normals] by Blom's approximation Φ⁻¹((n − 0.375)/(n + 0.25)) (Blom 1958):
    0.589 / 1.434 / 3.227 against the exact order statistics 0.5642 / 1.4236 / 3.2414 for n = 2 / 8 / 1000 (within
    5 % at n = 2, 1 % from n = 8); the leading term √(2 ln n) of the Gumbel limit overstates it by ~0.5 at these
    sizes (2.04 for n = 8). 0 for n = 1."""
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    vals = distinct_sorted(n.ravel())
    inv = NormalDist().inv_cdf
    table_ = np.array([inv((v - 0.375) / (v + 0.25)) if v > 1 else 0.0 for v in vals])
    out: np.ndarray = table_[np.searchsorted(vals, n)]
    return out


def straggler_factor(tables: DomainTables, n_ranks: np.ndarray) -> np.ndarray:
    """Expected slowest-of-n over the mean of per-rank compute times: a synchronous step waits for its slowest rank;
    with rank speeds N(μ, σ²) the step takes μ + σ·E[max of n standard normals] (:func:`expected_max_std_normal`),
    σ/μ = the cv of a GPU's speed within one cluster (Sinha et al. SC22; collective_latency.yaml
    gpu-speed-variation). 1 for one rank."""
    cv = _row_value(tables, "gpu-speed-variation", "cv_frac")
    out: np.ndarray = 1.0 + cv * expected_max_std_normal(n_ranks)
    return out


def shared_link_s(own_s: np.ndarray, other_s: np.ndarray | float) -> np.ndarray:
    """Duration of a collective of ``own_s`` seconds alone on a link that a concurrent flow of ``other_s`` seconds
    shares from the same start: max-min fair sharing gives each half the link while both run, so the pair finishes
    by own + other and the shorter flow at 2·min (Bertsekas & Gallager 1992, §6.5.2); the collective is slowed by
    min(own, other)."""
    own = np.asarray(own_s, dtype=float)
    out: np.ndarray = own + np.minimum(own, np.asarray(other_s, dtype=float))
    return out


def expert_load_imbalance(
    assignments_per_rank: np.ndarray, ep: np.ndarray, experts_per_rank: np.ndarray, skew_cv: float
) -> np.ndarray:
    """Load of the busiest of ``ep`` expert-parallel ranks over the mean (:mod:`training_step` docstring): the
    multinomial spread of uniform routing, sqrt((1 − 1/ep)/μ) for μ token-expert assignments per rank, and the
    learned router's per-expert spread ``skew_cv`` averaged over the rank's experts (÷ sqrt(experts per rank)),
    taken at E[max of ep standard normals]. 1 for ep = 1."""
    mu = np.maximum(np.asarray(assignments_per_rank, dtype=float), 1.0)
    n = np.asarray(ep, dtype=float)
    cv2 = (1.0 - 1.0 / n) / mu + skew_cv**2 / np.maximum(np.asarray(experts_per_rank, dtype=float), 1.0)
    out: np.ndarray = np.where(n > 1, 1.0 + np.sqrt(cv2) * expected_max_std_normal(n), 1.0)
    return out


def _crosses(cluster: ClusterSpec, n_ranks: np.ndarray, stride: np.ndarray) -> np.ndarray:
    """Whether a group of ``n_ranks`` spaced ``stride`` apart leaves the scale-up domain (its traffic uses NICs)."""
    domain = max(cluster.scale_up_domain, 1) if cluster.scale_up_bw_one_way_bytes_per_s else cluster.per_node
    out: np.ndarray = (np.asarray(n_ranks) > 1) & ((np.asarray(n_ranks) - 1) * np.asarray(stride) + 1 > domain)
    return out


def _fsdp_exposed_per_microbatch(
    cluster: ClusterSpec,
    stage_params: np.ndarray,
    layer_params: np.ndarray,
    layers: np.ndarray,
    grad_bytes: np.ndarray,
    dp_n: np.ndarray,
    dp_stride: np.ndarray,
    layer_fwd_s: np.ndarray,
    layer_bwd_s: np.ndarray,
    head_s: np.ndarray,
    src: set[str],
    regather_backward: bool | np.ndarray = True,
    nic_fwd_s: np.ndarray | float = 0.0,
    nic_bwd_s: np.ndarray | float = 0.0,
) -> np.ndarray:
    """Exposed FSDP / ZeRO-3 communication of one micro-batch, unit by unit (one unit per layer plus a
    root unit holding embedding and output layer; Zhao et al. 2023, "PyTorch FSDP: Experiences on Scaling
    Fully Sharded Data Parallel", arXiv 2304.11277, communication optimisations: overlapping communication and
    computation, backward prefetching, forward prefetching).

    Forward: the root all-gather and the first layer's all-gather have nothing to hide behind; each
    further layer's all-gather is prefetched during the previous layer's forward and shows only where it
    is longer (forward prefetch). Backward: the last layer's all-gather overlaps the output layer's
    backward; then each layer's reduce-scatter and the next layer's prefetched all-gather share the one
    communication stream while that layer's backward (with its recompute) runs; the final layer's and the
    root's reduce-scatters finish after the last backward kernel. Parameters travel in 16-bit, gradients
    in ``grad_bytes`` per parameter. ``regather_backward=False`` (per plan where an array) is FSDP2 with
    ``reshard_after_forward=False``: the parameters gathered in the forward stay unsharded, so the backward runs
    reduce-scatters only. ``nic_fwd_s`` / ``nic_bwd_s``: other traffic a layer's forward / backward puts on the same
    NICs (expert all-to-alls, the context-parallel ring) while the layer's gather / scatter runs beside it: where the
    gathers cross nodes they share the NIC with it (:func:`shared_link_s`).
    """
    slow = overlap_slowdown_frac(cluster.tables)
    root_params = np.maximum(stage_params - layers * layer_params, 0.0)
    ag_l = collective_time_array(cluster, "allgather", layer_params * 2.0, dp_n, dp_stride, src)
    rs_l = collective_time_array(cluster, "reducescatter", layer_params * grad_bytes, dp_n, dp_stride, src)
    ag_fwd_l, ag_rs_bwd_l, rs_bwd_l = ag_l, ag_l + rs_l, rs_l
    if np.any(nic_fwd_s) or np.any(nic_bwd_s):  # only plans whose layers put other traffic on the NIC
        out_of_node = _crosses(cluster, dp_n, dp_stride)
        ag_fwd_l = np.where(out_of_node, shared_link_s(ag_l, nic_fwd_s), ag_l)
        ag_rs_bwd_l = np.where(out_of_node, shared_link_s(ag_l + rs_l, nic_bwd_s), ag_l + rs_l)
        rs_bwd_l = np.where(out_of_node, shared_link_s(rs_l, nic_bwd_s), rs_l)
    ag_root = collective_time_array(cluster, "allgather", root_params * 2.0, dp_n, dp_stride, src)
    rs_root = collective_time_array(cluster, "reducescatter", root_params * grad_bytes, dp_n, dp_stride, src)
    rest = np.maximum(layers - 1.0, 0.0)
    fwd = ag_root + ag_l + rest * overlapped(ag_fwd_l, layer_fwd_s, slow)
    bwd = (
        np.where(
            regather_backward,
            overlapped(ag_l, head_s, slow) + rest * overlapped(ag_rs_bwd_l, layer_bwd_s, slow),
            rest * overlapped(rs_bwd_l, layer_bwd_s, slow),
        )
        + rs_l
        + rs_root
    )
    out: np.ndarray = fwd + bwd
    return out


@dataclass(frozen=True, slots=True)
class _Shapes:
    """What every phase of one step reads: the run, the cluster, the layouts as float arrays, the tokens a rank
    holds per micro-batch, and the set collecting the efficiency sources used."""

    setup: TrainSetup
    cluster: ClusterSpec
    plans: PlanArrays
    src: set[str]
    dtype: str
    weight_bytes_per_param: float
    """Bytes per weight element a GEMM streams in the run's format."""
    tp: np.ndarray
    cp: np.ndarray
    pp: np.ndarray
    tokens: np.ndarray
    """Tokens per micro-batch per rank (the sequence split cp ways)."""

    @classmethod
    def of(cls, setup: TrainSetup, cluster: ClusterSpec, plans: PlanArrays) -> _Shapes:
        """The shapes of ``plans`` for ``setup`` on ``cluster``."""
        dtype = "bf16" if setup.precision in ("bf16", "fp16") else setup.precision
        cp = plans.cp.astype(float)
        return cls(
            setup=setup,
            cluster=cluster,
            plans=plans,
            src=set(),
            dtype=dtype,
            weight_bytes_per_param=QUANT_BYTES.get(dtype, 4.0 if dtype == "fp32" else 2.0),
            tp=plans.tp.astype(float),
            cp=cp,
            pp=plans.pp.astype(float),
            tokens=plans.mb * setup.seq_len / cp,
        )

    def gemm(
        self,
        n_out: float,
        n_in: float,
        count: float = 1.0,
        tok: np.ndarray | None = None,
        dt: str | None = None,
        wb: float | None = None,
    ) -> np.ndarray:
        """Time of ``count`` forward GEMMs of an n_in × n_out weight split tp ways over ``tok`` tokens (default: the
        micro-batch's), in format ``dt`` (default: the run's) streaming ``wb`` bytes per weight."""
        t = self.tokens if tok is None else tok
        flop = 2.0 * t * n_in * n_out / self.tp
        nbytes = n_in * n_out * (self.weight_bytes_per_param if wb is None else wb) / self.tp
        return count * _gemm_time(self.cluster, self.dtype if dt is None else dt, flop, nbytes, self.src)


@dataclass(frozen=True, slots=True)
class _LayerGemms:
    """Forward GEMM times of one layer per rank (s): attention projections, the dense MLP, the MoE MLP, and the
    busiest expert-parallel rank's load factor."""

    attn_gemms: np.ndarray
    dense_mlp: np.ndarray
    moe_mlp: np.ndarray
    load: np.ndarray
    """Load of the busiest expert-parallel rank's experts over the mean (1 for a dense model)."""


def _layer_gemms(s: _Shapes) -> _LayerGemms:
    """The linear layers of one transformer layer, forward, on one rank."""
    m, h = s.setup.model, float(s.setup.model.hidden_size)
    d_qk, _ = attention_dims(m)
    q_dim = m.num_heads * m.head_size
    kv_dim = m.kv_heads * m.head_size if m.attention != "mla" else d_qk  # MLA: up-projected per head
    attn_gemms = s.gemm(q_dim + 2 * kv_dim, h) + s.gemm(h, q_dim)
    mlp_mats = 2.0 if m.mlp == "swiglu" else 1.0
    dense_mlp = s.gemm(mlp_mats * m.ffn_hidden_size, h) + s.gemm(h, m.ffn_hidden_size)
    load = np.ones_like(s.tp)
    if not m.is_moe:
        return _LayerGemms(attn_gemms, dense_mlp, np.zeros_like(dense_mlp), load)
    local_experts = m.num_experts / s.plans.ep.astype(float)
    # the busiest expert-parallel rank sets the pace (expert_load_imbalance): its experts see load × the mean
    load = expert_load_imbalance(s.tokens * m.experts_per_token, s.plans.ep, local_experts, s.setup.moe_routing_skew_cv)
    tok_e = load * s.tokens * m.experts_per_token / local_experts  # tokens per local expert on the busiest rank
    f = float(m.expert_ffn)
    routed = local_experts * (s.gemm(mlp_mats * f, h, tok=tok_e) + s.gemm(h, f, tok=tok_e))
    shared = m.num_shared_experts * (s.gemm(mlp_mats * f, h) + s.gemm(h, f))
    router = s.gemm(float(m.num_experts), h) * s.tp  # replicated router
    return _LayerGemms(attn_gemms, dense_mlp, routed + shared + router, load)


def _attention_core(s: _Shapes) -> tuple[np.ndarray, np.ndarray]:
    """(forward, backward) time of the attention core per rank: heads / tp, queries s/cp against s keys."""
    setup, m, plans, cp, tp = s.setup, s.setup.model, s.plans, s.cp, s.tp
    d_qk, d_v = attention_dims(m)
    # keys per query: the sequence (half of it causally, where the flash kernel skips the masked half), at most the
    # window on sliding-window layers (analytic/window.py)
    keys = causal_mean_keys(m, setup.seq_len, setup.flash_attention)
    attn_flop = 2.0 * plans.mb * (setup.seq_len / cp) * keys * (d_qk + d_v) / tp
    # the attention core stays in 16-bit under FP8/FP4 training: Transformer Engine's FP8 recipes quantise the
    # Linear GEMMs (FP8 dot-product attention is an opt-in, fp8_dpa / Megatron --fp8-dot-product-attention),
    # and torchao float8 converts nn.Linear modules only
    attn_dtype = "fp16" if setup.precision == "fp16" else "bf16"
    if setup.flash_attention:
        attn_fwd = flash_attention_fwd_time(s.cluster, setup, m, attn_dtype, attn_flop, cp, s.src)
        return attn_fwd, 2.5 * attn_fwd
    scores = plans.mb * m.num_heads / tp * (setup.seq_len / cp) * setup.seq_len
    attn_fwd = _gemm_time(s.cluster, attn_dtype, attn_flop, np.zeros_like(attn_flop), s.src) + _mem_time(
        s.cluster, scores * 11.0, s.src
    )  # QKᵀ write 2 B, softmax read/write 4 B, dropout mask 1 B + read/write 4 B per score
    return attn_fwd, 2.0 * attn_fwd


@dataclass(frozen=True, slots=True)
class _StageCompute:
    """Compute times of one micro-batch on one pipeline stage, per rank (s)."""

    gemms: _LayerGemms
    attn_fwd: np.ndarray
    attn_bwd: np.ndarray
    layer_fwd: np.ndarray
    """A layer's forward, averaged over dense and MoE layers, quantisation included."""
    layer_bwd: np.ndarray
    recompute: np.ndarray
    """A layer's recomputation in the backward (full: the forward; selective: attention unless FlashAttention)."""
    layers_stage: np.ndarray
    logits: np.ndarray
    """The output projection (forward and backward) and the cross-entropy over the vocabulary."""
    stage: np.ndarray
    """The whole stage: layers × (forward + backward + recompute) + logits."""


def _output_head(s: _Shapes, bwd_gemm: float) -> np.ndarray:
    """The output projection (forward + backward) and the fp32 cross-entropy over the vocabulary, per rank.

    Logits written (4 B), log-softmax read + write (8 B), backward read + write (8 B) per vocabulary entry and token.
    The output projection stays in 16-bit under FP8/FP4 recipes: Megatron-Core's GPTModel builds it as
    tensor_parallel.ColumnParallelLinear, not a Transformer Engine module, so TE's fp8/fp4 autocast leaves it alone;
    torchtitan's float8 conversion skips the module named "output" (Float8 filter_fqns default); Megatron-Bridge's
    fp8_output_proj (TrainSetup.low_precision_output_layer) runs it in the run's format."""
    setup, m, dtype = s.setup, s.setup.model, s.dtype
    head_dtype = "fp16" if setup.precision == "fp16" else ("fp32" if dtype == "fp32" else "bf16")
    head_wbytes = 4.0 if dtype == "fp32" else 2.0
    if setup.low_precision_output_layer:
        head_dtype, head_wbytes = dtype, s.weight_bytes_per_param
    h = float(m.hidden_size)
    out: np.ndarray = (1.0 + bwd_gemm) * s.gemm(float(m.vocab_size), h, dt=head_dtype, wb=head_wbytes) + _mem_time(
        s.cluster, 20.0 * s.tokens * m.vocab_size / s.tp, s.src, kind="elementwise"
    )
    return out


def _stage_compute(s: _Shapes) -> _StageCompute:
    """One micro-batch's forward, backward and recomputation on one pipeline stage."""
    setup, m, plans = s.setup, s.setup.model, s.plans
    g = _layer_gemms(s)
    attn_fwd, attn_bwd = _attention_core(s)
    elementwise = _elementwise_time(s.cluster, m, s.tokens, s.tp, s.src)
    quant_fwd, quant_bwd = _quantize_time(s.cluster, m, s.dtype, s.tokens, s.tp, s.src)
    dense_fwd = g.attn_gemms + g.dense_mlp + attn_fwd + elementwise
    moe_fwd = g.attn_gemms + g.moe_mlp + attn_fwd + elementwise
    n_dense = m.num_layers - m.num_moe_layers
    layer_fwd = (n_dense * dense_fwd + m.num_moe_layers * moe_fwd) / m.num_layers
    # a frozen base (LoRA / QLoRA) computes input gradients only: its backward GEMMs are 1× forward, not 2×
    # (no weight-gradient GEMMs); the rank-r adapters' GEMMs are ~r/h of the base's and left out
    bwd_gemm = 1.0 if setup.frozen_base else 2.0
    layer_bwd = bwd_gemm * (layer_fwd - attn_fwd) + attn_bwd + quant_bwd
    layer_fwd = layer_fwd + quant_fwd
    recompute = np.where(
        plans.recompute == Recompute.FULL, layer_fwd, np.where(plans.recompute == Recompute.SELECTIVE, attn_fwd, 0.0)
    )
    if setup.flash_attention:  # FlashAttention already recomputes scores in its backward
        recompute = np.where(plans.recompute == Recompute.SELECTIVE, 0.0, recompute)
    layers_stage = np.ceil(m.num_layers / s.pp)
    logits = _output_head(s, bwd_gemm)
    stage = layers_stage * (layer_fwd + layer_bwd + recompute) + logits
    return _StageCompute(g, attn_fwd, attn_bwd, layer_fwd, layer_bwd, recompute, layers_stage, logits, stage)


@dataclass(frozen=True, slots=True)
class _MicrobatchComm:
    """Communication of one micro-batch on one stage (s) and the traffic it puts on the rank's NIC."""

    tp_mb: np.ndarray
    ep_mb: np.ndarray
    cp_mb: np.ndarray
    pp_mb: np.ndarray
    nic_layer_fwd: np.ndarray
    nic_layer_bwd: np.ndarray
    nic_last_bwd: np.ndarray
    """NIC time of the last micro-batch's backward (the data-parallel collectives share the NIC with it)."""


def _tp_per_layer(s: _Shapes, c: _StageCompute, act: np.ndarray) -> np.ndarray:
    """Exposed tensor-parallel all-reduces of one layer (4, or 6 under full recompute)."""
    plans, tp = s.plans, s.tp
    ones = np.ones_like(tp)
    n_tp_coll = 4.0 + np.where(plans.recompute == Recompute.FULL, 2.0, 0.0)
    tp_layer: np.ndarray = n_tp_coll * collective_time_array(s.cluster, "allreduce", act, plans.tp, ones, s.src)
    if s.setup.tp_comm_overlap:
        # decomposed collectives (Wang et al. 2023, ASPLOS: "Overlap communication with dependent computation
        # via decomposition"): each is cut into tp chunks, chunk i's transfer runs under chunk i-1's GEMM, so
        # one chunk stays exposed plus whatever the transfers exceed the layer's linear GEMMs (fwd + 2x bwd)
        gemm_layer_s = 3.0 * (c.gemms.attn_gemms + c.gemms.dense_mlp)
        tp_layer = np.where(
            plans.tp > 1, tp_layer / tp + np.maximum(0.0, tp_layer - gemm_layer_s) * (tp - 1.0) / tp, tp_layer
        )
    return tp_layer


def _microbatch_comm(s: _Shapes, c: _StageCompute) -> _MicrobatchComm:
    """Tensor, expert, context and pipeline-parallel communication of one micro-batch on one stage."""
    setup, m, plans, cluster, src, tp, cp, pp = s.setup, s.setup.model, s.plans, s.cluster, s.src, s.tp, s.cp, s.pp
    act = s.tokens * float(m.hidden_size) * ACT_BYTES
    tp_mb = c.layers_stage * _tp_per_layer(s, c, act)
    if m.is_moe:
        # each rank dispatches its own tokens: with tp > 1 Megatron-Core requires sequence parallelism for
        # MoE, so a TP rank holds tokens/tp of the micro-batch; k copies go out (dispatch) and come back
        # (combine), forward and backward (Lepikhin et al. 2021, GShard §2.2)
        moe_in = np.where(plans.tp > 1, act / tp, act)
        # the busiest rank receives load × its mean share of the dispatched tokens
        a2a = c.gemms.load * collective_time_array(
            cluster, "alltoall", moe_in * m.experts_per_token, plans.ep, plans.tp, src
        )
        ep_mb = np.ceil(m.num_moe_layers / pp) * 4.0 * a2a
        if setup.ep_comm_overlap:
            # one micro-batch's dispatch/combine runs under another micro-batch's forward/backward on the same
            # stage (Megatron-Core 1F1B A2A overlap; DeepSeek-V3 DualPipe §3.2.1): only the excess is exposed
            ep_mb = np.maximum(0.0, ep_mb - c.stage)
    else:
        a2a = np.zeros_like(tp_mb)
        ep_mb = np.zeros_like(tp_mb)
    kv_bytes = 2.0 * plans.mb * (setup.seq_len / cp) * (m.kv_heads * m.head_size) * ACT_BYTES
    cp_comm = 3.0 * (cp - 1.0) * collective_time_array(cluster, "p2p", kv_bytes, plans.cp, plans.tp, src)
    cp_mb = c.layers_stage * np.maximum(0.0, cp_comm - (c.attn_fwd + c.attn_bwd))
    pp_msg = np.where(plans.sp & (plans.tp > 1), act / tp, act)
    pp_stride = plans.tp * plans.cp * plans.dp
    pp_mb = np.where(
        plans.pp > 1, 2.0 * plans.vp * collective_time_array(cluster, "p2p", pp_msg, plans.pp, pp_stride, src), 0.0
    )
    # traffic a layer's forward / backward and a micro-batch's backward put on the rank's NIC (groups that leave the
    # scale-up domain): expert all-to-alls (2 per MoE layer each way), the context-parallel ring (K/V forward; K/V
    # and dK/dV backward), the pipeline's gradient sends; the data-parallel collectives running beside them share
    # the NIC (shared_link_s)
    moe_frac = m.num_moe_layers / m.num_layers
    zero = np.zeros_like(tp_mb)
    ep_nic = np.where(_crosses(cluster, plans.ep, plans.tp), 2.0 * moe_frac * a2a, 0.0) if m.is_moe else zero
    cp_nic = np.where(_crosses(cluster, plans.cp, plans.tp), cp_comm / 3.0, 0.0) if np.any(plans.cp > 1) else zero
    nic_layer_fwd, nic_layer_bwd = ep_nic + cp_nic, ep_nic + 2.0 * cp_nic
    pp_nic = np.where(_crosses(cluster, plans.pp, pp_stride), pp_mb / 2.0, 0.0)
    nic_last_bwd = c.layers_stage * nic_layer_bwd + pp_nic
    return _MicrobatchComm(tp_mb, ep_mb, cp_mb, pp_mb, nic_layer_fwd, nic_layer_bwd, nic_last_bwd)


@dataclass(frozen=True, slots=True)
class _GradGroups:
    """A stage's parameters per rank and the groups their gradients are reduced over."""

    rp: np.ndarray
    """Parameters a rank of the first stage holds."""
    layer_params: np.ndarray
    grad_bytes: np.ndarray
    """Bytes per gradient element reduced (fp32 under FSDP and for adapters, else 16-bit)."""
    dense_rp: np.ndarray
    routed_rp: np.ndarray
    dp_n: np.ndarray
    dp_stride: np.ndarray
    edp_n: np.ndarray
    edp_stride: np.ndarray


def _grad_groups(s: _Shapes) -> _GradGroups:
    """Parameters per rank and the data-parallel (and expert-data-parallel) groups reducing their gradients."""
    setup, m, plans = s.setup, s.setup.model, s.plans
    rpa = rank_params(setup, plans)
    rp = rpa["first"]
    dp_n = plans.dp * plans.cp
    dp_stride = plans.tp
    grad_bytes = np.where(plans.sharding == Sharding.FSDP, 4.0, 2.0)
    if setup.frozen_base:  # only the adapters' fp32 gradients are reduced and updated
        rp = np.full_like(rp, setup.adapter_params / plans.pp.astype(float))
        grad_bytes = np.full_like(rp, 4.0)
    # routed experts are replicated over the expert-data-parallel group, not the data-parallel one: Megatron-Core
    # reduces their gradients in separate buckets over the dp·cp/ep ranks holding the same experts, each ep
    # data-parallel ranks apart (parallel_state: expert groups ordered tp-ep-dp-pp over a stage's tp·cp·dp ranks);
    # those replicas sit in different scale-up domains once ep·tp fills one, so their reduction crosses the NICs
    routed_rp = np.zeros_like(rp)
    edp_n, edp_stride = dp_n, dp_stride
    if m.is_moe and not setup.frozen_base:
        routed_rp = np.where(plans.ep > 1, rpa["routed"], 0.0)
        # expert groups hold etp·ep ranks of the stage's tp·cp·dp (expert_tensor_parallel_size; = tp by default)
        etp = expert_tp_of(setup, plans).astype(np.int64)
        edp_n = np.maximum((dp_n * plans.tp) // (plans.ep * etp), 1)
        edp_stride = etp * plans.ep
    return _GradGroups(rp, rpa["layer"], grad_bytes, rp - routed_rp, routed_rp, dp_n, dp_stride, edp_n, edp_stride)


def _grad_sync(
    s: _Shapes,
    all_reduce: bool,
    params: np.ndarray,
    grad_bytes: np.ndarray,
    n: np.ndarray,
    stride: np.ndarray,
    idx: np.ndarray,
) -> np.ndarray:
    """Gradient synchronisation of ``params`` per rank over groups of ``n`` ranks ``stride`` apart (layouts ``idx``).

    ZeRO-1/2 (Megatron's distributed optimizer, DeepSpeed) reduce-scatter the gradients and all-gather the updated
    16-bit parameters instead of all-reducing (Rajbhandari et al. 2020 §7: the same ring volume); NCCL runs those as
    rings across nodes (its NVLS_TREE and tree algorithms are all-reduce only, src/tuning/nvls.cc)."""
    cluster, src = s.cluster, s.src
    if all_reduce:
        return collective_time_array(cluster, "allreduce", (params * grad_bytes)[idx], n[idx], stride[idx], src)
    rs: np.ndarray = collective_time_array(
        cluster, "reducescatter", (params * grad_bytes)[idx], n[idx], stride[idx], src
    )
    ag: np.ndarray = collective_time_array(cluster, "allgather", params[idx] * 2.0, n[idx], stride[idx], src)
    out: np.ndarray = rs + ag
    return out


def _dp_gradients_s(s: _Shapes, g: _GradGroups) -> np.ndarray:
    """The data-parallel gradient reduction of a replicated (or ZeRO-1/2) stage, before any overlap (s)."""
    plans = s.plans
    every = np.arange(g.rp.size)
    dp_ar = _grad_sync(s, True, g.dense_rp, g.grad_bytes, g.dp_n, g.dp_stride, every)
    if np.any(g.routed_rp > 0):
        dp_ar = dp_ar + np.where(
            g.routed_rp > 0, _grad_sync(s, True, g.routed_rp, g.grad_bytes, g.edp_n, g.edp_stride, every), 0.0
        )
    zero12 = np.flatnonzero((plans.sharding == Sharding.ZERO1) | (plans.sharding == Sharding.ZERO2))
    if zero12.size:
        dp_ar = dp_ar.copy()
        dp_ar[zero12] = _grad_sync(s, False, g.dense_rp, g.grad_bytes, g.dp_n, g.dp_stride, zero12)
        if np.any(g.routed_rp[zero12] > 0):
            dp_ar[zero12] += np.where(
                g.routed_rp[zero12] > 0,
                _grad_sync(s, False, g.routed_rp, g.grad_bytes, g.edp_n, g.edp_stride, zero12),
                0.0,
            )
    return dp_ar


@dataclass(frozen=True, slots=True)
class _DataParallel:
    """Exposed data-parallel time of one step (s) and the micro-batches each rank runs."""

    n_micro: np.ndarray
    dp_exposed: np.ndarray
    """Gradient reduction of replicated and ZeRO-1/2 stages left after overlap with the last backward."""
    fsdp_total: np.ndarray
    """Parameter gathers and gradient reduce-scatters of FSDP / ZeRO-3 stages (HSDP's replica all-reduce included)."""
    optimizer: np.ndarray


def _sharded_exposed(
    s: _Shapes, c: _StageCompute, comm: _MicrobatchComm, g: _GradGroups, n_micro: np.ndarray, last_bwd: np.ndarray
) -> np.ndarray:
    """Exposed FSDP / ZeRO-3 traffic of one step (zero for stages whose parameters are not sharded).

    Under pipeline parallelism the frameworks keep a stage's parameters gathered across its micro-batches and
    reduce-scatter its gradients once, in the last micro-batch's backward: torchtitan's default FSDP2 policy is
    reshard_after_forward = not pp_enabled ("to avoid per-microbatch all-gathers",
    models/llama3/infra/parallelize.py), and PyTorch's pipeline schedules enable gradient sync on the last backward
    only (Llama 3 paper §3.3.2 describes the same for its 4D training). Without pipelining every micro-batch
    re-gathers and reduce-scatters (Zhao et al. 2023). HSDP: each rank's gradient shard (1/shard_n of the stage) is
    all-reduced across the replica groups once per step, during the last backward (Zhao et al. 2023 §3.2.2)."""
    setup, plans, cluster, src = s.setup, s.plans, s.cluster, s.src
    shard_n = shard_group_ranks(setup, plans)
    fsdp_mb = _fsdp_exposed_per_microbatch(
        cluster,
        g.rp,
        g.layer_params,
        c.layers_stage,
        g.grad_bytes,
        shard_n,
        g.dp_stride,
        c.layer_fwd,
        c.layer_bwd + c.recompute,
        c.logits,
        src,
        regather_backward=plans.pp == 1,
        nic_fwd_s=comm.nic_layer_fwd,
        nic_bwd_s=comm.nic_layer_bwd,
    )
    fsdp_step = np.where(plans.pp > 1, fsdp_mb, n_micro * fsdp_mb)
    replica_exposed = np.zeros_like(fsdp_step)
    if setup.fsdp_shard_ranks > 0:
        dp_n, dp_stride = g.dp_n, g.dp_stride
        replica_ar = collective_time_array(
            cluster, "allreduce", g.rp / shard_n * g.grad_bytes, dp_n // shard_n, dp_stride * shard_n, src
        )
        replica_ar = np.where(
            _crosses(cluster, dp_n // shard_n, dp_stride * shard_n),
            shared_link_s(replica_ar, comm.nic_last_bwd),
            replica_ar,
        )
        replica_exposed = (
            overlapped(replica_ar, last_bwd, overlap_slowdown_frac(cluster.tables))
            if setup.dp_grad_overlap
            else replica_ar
        )
    return np.where(np.isin(plans.sharding, PARAMS_SHARDED), fsdp_step + replica_exposed, 0.0)


def _data_parallel(s: _Shapes, c: _StageCompute, comm: _MicrobatchComm) -> _DataParallel:
    """Gradient reduction, sharded-parameter traffic and the optimizer step of one step."""
    setup, plans, cluster = s.setup, s.plans, s.cluster
    n_micro = np.maximum(setup.global_batch_seqs / (plans.dp * plans.mb), 1.0)
    g = _grad_groups(s)
    dp_ar = _dp_gradients_s(s, g)
    dp_ar = np.where(_crosses(cluster, g.dp_n, g.dp_stride), shared_link_s(dp_ar, comm.nic_last_bwd), dp_ar)
    last_bwd = c.layers_stage * c.layer_bwd
    dp_hidden = overlapped(dp_ar, last_bwd, overlap_slowdown_frac(cluster.tables)) if setup.dp_grad_overlap else dp_ar
    dp_exposed = np.where(np.isin(plans.sharding, PARAMS_SHARDED), 0.0, dp_hidden)
    fsdp_total = _sharded_exposed(s, c, comm, g, n_micro, last_bwd)
    shard = np.where(plans.sharding == Sharding.NONE, 1.0, g.dp_n.astype(float))
    optimizer = _mem_time(cluster, g.rp / shard * 30.0, s.src)  # fp32 master, m, v, grad read + write; bf16 copy
    return _DataParallel(n_micro, dp_exposed, fsdp_total, optimizer)


def step_time(setup: TrainSetup, cluster: ClusterSpec, plans: PlanArrays) -> StepArrays:
    """Step time of every layout in ``plans`` for ``setup`` on ``cluster`` (vectorised over layouts): the stages'
    compute per micro-batch, the communication each micro-batch exposes, the data-parallel gradient and
    sharded-parameter traffic, the pipeline bubble and the wait for the slowest rank, scaled by the user's
    calibration of the accelerator."""
    s = _Shapes.of(setup, cluster, plans)
    c = _stage_compute(s)
    comm = _microbatch_comm(s, c)
    d = _data_parallel(s, c, comm)
    # --- assemble; the user's calibration of this accelerator (catalog/calibration.py; neutral without one)
    # divides the time on the accelerator by its compute scale and the exposed communication by its own
    cal = cluster.tables.factors_for("training", cluster.accelerator.id)
    k_comp, k_comm = cal.compute_efficiency_scale, cal.communication_efficiency_scale
    stage_compute, optimizer = c.stage / k_comp, d.optimizer / k_comp
    tp_mb, mb_comm = comm.tp_mb / k_comm, (comm.tp_mb + comm.ep_mb + comm.cp_mb + comm.pp_mb) / k_comm
    dp_exposed, fsdp_total = d.dp_exposed / k_comm, d.fsdp_total / k_comm
    n_micro = d.n_micro
    compute = n_micro * stage_compute
    bubble = (s.pp - 1.0) / plans.vp * (stage_compute + mb_comm)
    exposed = n_micro * mb_comm + dp_exposed + fsdp_total + optimizer
    # every rank's compute (and the bubble, which is compute time of the stages that wait) runs at the pace of the
    # slowest of the job's ranks
    n_ranks = plans.tp * plans.pp * plans.cp * plans.dp
    straggler = (straggler_factor(cluster.tables, n_ranks) - 1.0) * (compute + bubble)
    step = compute + exposed + bubble + straggler + cal.step_overhead_s
    m = setup.model
    model_flop = flop_per_token_training(m, setup.seq_len) * setup.global_batch_seqs * setup.seq_len
    if setup.frozen_base:  # forward + input-gradient backward: 2 of the 3 forward-equivalents of full training
        model_flop *= 2.0 / 3.0
    if any(x.endswith(NO_DATA) for x in s.src):
        s.src.add("note: some operations have no measured efficiency and use the ideal roofline")
    return StepArrays(
        step_time_s=step,
        compute_s=compute,
        exposed_comm_s=exposed,
        bubble_s=bubble,
        tp_comm_s=n_micro * tp_mb,
        dp_comm_exposed_s=dp_exposed + fsdp_total,
        straggler_s=straggler,
        microbatches=n_micro,
        model_flop_per_step=model_flop,
        efficiency_sources=s.src,
    )
