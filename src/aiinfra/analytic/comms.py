"""Collective-communication times over the tiers of a cluster.

Ring algorithms (Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms"; NCCL-tests
doc/PERFORMANCE.md bus-bandwidth definitions): for a buffer of S bytes over n ranks

* all-reduce:        2·(n−1)/n · S / B  + 2·(n−1)·α
* all-gather, reduce-scatter, all-to-all: (n−1)/n · S / B + (n−1)·α
* point-to-point:    S / B + α

with B the one-way bandwidth each rank achieves on the slowest tier the group spans (scale-up
NVLink/ICI inside a domain; each accelerator's share of the node's NICs across domains) times the
measured efficiency for that message size, and α the per-hop latency.

Across domains, a group with k ranks in each domain runs k rings (NCCL builds one ring per NIC and
crosses nodes once per ring; Jeaugey, "NCCL 2.0", GTC 2017; NCCL-tests PERFORMANCE.md: multi-node
bus bandwidth ≈ the node's NIC bandwidth): each ring carries S/k, so the collective sees
B = min(k · B_nic, B_scale-up) — e.g. FSDP over whole DGX nodes (k = 8) gets the node's 8 NICs,
a data-parallel group strided by tp = 8 (k = 1) one NIC — and each NIC runs at the measured efficiency of
its S/k shard (the scale-out curves are measured per NIC on that shard). All-to-all sends (n − k)/n · S
across domains over the rank's own NIC share; point-to-point uses one NIC. On a fabric whose leaves are
oversubscribed r:1 a group spanning more nodes than one leaf holds gets 1/r of that (:func:`fabric_share`).

Ring latency across nodes (catalog/data/collective_latency.yaml, NCCL's own cost model in
src/graph/tuning.cc): a ring collective over n ranks on N nodes costs, on top of its bandwidth time,
base + (steps − inter_steps)·intra_hop + inter_steps·net_hop with steps = n−1 (all-gather,
reduce-scatter) or 2(n−1) (all-reduce) and inter_steps = N−1 or 2(N−1) — e.g. 0.6 ms for an all-gather
over 128 ranks on 16 nodes. Scale-out collectives add it in full where no measured curve exists, and
the part beyond the curve's own measured configuration where one does (the curve's times already hold
the latency of the ranks it was measured on). An all-reduce across nodes takes the faster of that ring and
NCCL's double binary tree (latency 2·((ranks per node − 1)·intra hop + ⌊log2 nodes⌋·net hop), bandwidth
0.9·0.5 of the ring's bus bandwidth; collective_latency.yaml nccl-tree-simple), as NCCL's tuner picks.
On a switchless board (an HGX 4-GPU board: each pair of GPUs wired by its own links, no NVSwitch) a group of k
ranks reaches only its k − 1 peers' links, so a scale-up collective lasts at least its bytes over those links
(:func:`mesh_floor_s`): the measured curves, taken behind a switch, stand where they are slower.
docs/training-network.md describes the whole model and its sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from aiinfra.analytic.efficiency import NO_DATA, Curve, table
from aiinfra.analytic.interp import interp
from aiinfra.errors import InfeasibleError
from aiinfra.specs.hardware import ClusterSpec
from aiinfra.specs.tables import DomainTables

if TYPE_CHECKING:  # numpy is imported by the array functions only: the serving path's scalar times need none of it
    import numpy as np

Collective = Literal["allreduce", "allgather", "reducescatter", "alltoall", "p2p"]


@dataclass(frozen=True, slots=True)
class CommTime:
    """Time of one collective (s), the network tier it crosses and the efficiency row that priced it."""

    time_s: float
    tier: str
    """scale-up | scale-out | none"""
    efficiency_source: str


def group_tier(cluster: ClusterSpec, n_ranks: int, stride: int) -> str:
    """Tier a group of ``n_ranks`` ranks spaced ``stride`` apart spans (ranks fill domains in order)."""
    if n_ranks <= 1:
        return "none"
    span = (n_ranks - 1) * stride + 1
    domain = max(cluster.scale_up_domain, 1) if cluster.scale_up_bw_one_way_bytes_per_s else cluster.per_node
    return "scale-up" if span <= domain else "scale-out"


def tier_bandwidth(cluster: ClusterSpec, tier: str) -> tuple[float, float]:
    """(one-way bytes/s per rank, latency s) of a tier; raises when the catalog does not know it."""
    if tier == "scale-up":
        bw = cluster.scale_up_bw_one_way_bytes_per_s
        if bw is None:
            pcie = cluster.accelerator.pcie
            if pcie is None:
                raise InfeasibleError(
                    f"{cluster.accelerator.id}: no scale-up link or PCIe bandwidth in the catalog for "
                    "intra-node communication — choose a plan with tp = 1 or an accelerator with known links"
                )
            return pcie.bw_one_way_bytes_per_s, 0.0
        return bw, cluster.scale_up_latency_s or 0.0
    bw = cluster.scale_out_bw_one_way_bytes_per_s
    if bw is None:
        why = (
            f"system {cluster.system_id} lists no scale-out NICs"
            if cluster.system_id
            else "the catalog has no published multi-node system (with NICs) for it"
        )
        raise InfeasibleError(
            f"{cluster.accelerator.id}: scale-out bandwidth unknown ({why}) — plans spanning more than one node "
            "need hardware.scale_out (an interconnects.yaml id) with hardware.nics_per_node, or a hardware.system "
            "that lists NICs"
        )
    return bw, cluster.scale_out_latency_s or 0.0


@dataclass
class _Memo:
    """Curves derived from one catalog's tables, kept on them (:meth:`DomainTables.keep`)."""

    ring_scaled: dict[tuple[str, str | None], Curve] = field(default_factory=dict)
    """(point-to-point curve id, fabric) -> the curve scaled to the fabric's ring ceiling (:func:`_ring_scaled`)."""
    scale_up_curves: dict[tuple[Any, ...], tuple[tuple[float, ...], tuple[float, ...], float, str]] = field(
        default_factory=dict
    )
    """(kind, accelerator, ranks, engine, bandwidth) -> a scale-up curve's sizes, times, last efficiency, source."""


def latency_row(tables: DomainTables, row_id: str = "nccl-ring-simple") -> Mapping[str, Any] | None:
    """One row of collective_latency.yaml by id (None when the catalog lacks it), indexed once per catalog (the
    search calls this for every distinct group size)."""
    return tables.collective_latency().get(row_id)


def tree_latency_s(tables: DomainTables, n_ranks: np.ndarray, n_nodes: np.ndarray) -> np.ndarray:
    """NCCL double-binary-tree all-reduce latency (Simple): 2·((ranks per node − 1)·intra hop + ⌊log2 nodes⌋·net
    hop) (collective_latency.yaml nccl-tree-simple, NCCL tuning.cc); inf where the catalog has no tree row."""
    import numpy as np

    n = np.asarray(n_ranks, dtype=float)
    nodes = np.maximum(np.asarray(n_nodes, dtype=float), 1.0)
    r = latency_row(tables, "nccl-tree-simple")
    if r is None:
        return np.full(np.broadcast(n, nodes).shape, np.inf)
    ppn = np.maximum(np.round(n / nodes), 1.0)
    lat = float(r["base_us"]) + 2.0 * (
        (ppn - 1.0) * float(r["nvlink_hop_us"]) + np.floor(np.log2(nodes)) * float(r["net_hop_us"])
    )
    out: np.ndarray = np.where(n > 1, lat * 1e-6, 0.0)
    return out


def tree_bandwidth_factor(tables: DomainTables, n_ranks: float) -> float:
    """Tree all-reduce bandwidth time over the ring's for the same buffer: NCCL's model gives the tree
    busBw·0.9·0.5 of algorithm bandwidth and the ring busBw·n/(2(n−1)) (tuning.cc), so the factor is
    1 / (bus_bw_factor · alg_bw_ratio · 2(n−1)/n) = n / (0.9·(n−1)); inf without a tree row."""
    r = latency_row(tables, "nccl-tree-simple")
    if r is None or n_ranks <= 1:
        return float("inf")
    return 1.0 / (float(r["bus_bw_factor"]) * float(r["alg_bw_ratio"]) * 2.0 * (n_ranks - 1.0) / n_ranks)


def fabric_share(cluster: ClusterSpec, span_nodes: np.ndarray) -> np.ndarray:
    """Fraction of the NIC bandwidth a group keeps on the cluster's fabric: 1/r on a leaf oversubscribed r:1 when
    the group spans more nodes than one leaf holds (every node's uplinks carry all its traffic at once in a
    synchronous step; Al-Fares et al. 2008 on oversubscription), else 1."""
    import numpy as np

    r = max(float(cluster.fabric_oversubscription_ratio), 1.0)
    leaf = cluster.nodes_per_leaf
    crosses = np.asarray(span_nodes, dtype=float) > (leaf if leaf is not None else 1)
    out: np.ndarray = np.where(crosses, 1.0 / r, 1.0)
    return out


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (what np.unique returns, without its first-call import of numpy.ma)."""
    import numpy as np

    ordered = np.sort(values)
    keep = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    out: np.ndarray = ordered[keep]
    return out


def ring_latency_s(tables: DomainTables, kind: Collective, n_ranks: np.ndarray, n_nodes: np.ndarray) -> np.ndarray:
    """NCCL ring (Simple protocol) latency of one collective; zeros when the catalog has no model row."""
    import numpy as np

    n = np.asarray(n_ranks, dtype=float)
    nodes = np.asarray(n_nodes, dtype=float)
    r = latency_row(tables)
    if r is None or kind not in ("allreduce", "allgather", "reducescatter"):
        return np.zeros(np.broadcast(n, nodes).shape)
    us = 1e-6
    mult = 2.0 if kind == "allreduce" else 1.0
    steps = mult * (n - 1.0)
    inter = mult * np.maximum(nodes - 1.0, 0.0)
    intra_hop = np.where(
        nodes > 1,
        max(float(r["nvlink_hop_us"]), float(r["net_overhead_us"]) * float(r["net_overhead_simple_factor"])),
        float(r["nvlink_hop_us"]),
    )
    lat = float(r["base_us"]) + (steps - inter) * intra_hop + inter * float(r["net_hop_us"])
    out: np.ndarray = np.where(n > 1, lat * us, 0.0)
    return out


def pcie_ring_allreduce_s(cluster: ClusterSpec, size_bytes: np.ndarray, n_ranks: int) -> tuple[np.ndarray, str] | None:
    """All-reduce among ``n_ranks`` > 2 accelerators joined only by PCIe: NCCL's ring over peer-to-peer hops, each
    hop timed by the part's own measured two-GPU all-reduce (collective_latency.yaml pcie-p2p-ring). A ring of n
    ranks is 2(n−1) steps of S/n bytes over one hop (Patarasuk & Yuan 2009), a two-GPU all-reduce of X bytes is 2
    steps of X/2 on the same hop, so t_n(S) = (n−1)·t_2(2S/n). None where the catalog lacks the row, the rank count
    is below its ``min_ranks``, or the part has no two-GPU curve of its own."""
    import numpy as np

    row = latency_row(cluster.tables, "pcie-p2p-ring")
    acc = cluster.accelerator
    if row is None or n_ranks < int(row["min_ranks"]) or acc.pcie is None:
        return None
    eff = table(cluster.tables)
    curve, src = eff.curve("allreduce", acc.id, n_ranks=2, tier="scale-up")
    if curve is None or curve.n_ranks != 2 or eff.similarity(acc.id, curve) != 0:
        return None
    bw = acc.pcie.bw_one_way_bytes_per_s
    pts_size = 10.0 ** np.asarray(curve.log_x)
    pts_time = pts_size / (bw * np.asarray(curve.y))  # two ranks: bus factor 2·(2−1)/2 = 1
    chunk = 2.0 * np.asarray(size_bytes, dtype=float) / n_ranks
    t2 = np.interp(chunk, pts_size, pts_time)
    beyond = chunk > pts_size[-1]
    t2[beyond] = chunk[beyond] / (bw * curve.y[-1])
    out: np.ndarray = (n_ranks - 1) * t2
    return out, f"{row['id']} ring of {n_ranks} over {src}"


_FACTOR = {"allreduce": 2.0, "allgather": 1.0, "reducescatter": 1.0, "alltoall": 1.0}
_CURVE_KIND = {"reducescatter": "allgather"}


def curve_fabric(tables: DomainTables, curve_id: str) -> str | None:
    """The fabric family a scale-out curve was measured on (collective_latency.yaml scale-out-curve-fabrics), None
    for a curve that serves every fabric."""
    row = latency_row(tables, "scale-out-curve-fabrics")
    fabrics = row.get("curves", {}) if row else {}
    out = fabrics.get(curve_id)
    return str(out) if out is not None else None


def fabric_curve(
    cluster: ClusterSpec, kind: Collective, n_ranks: int, tier: str, engine: str | None = None
) -> tuple[Curve | None, str, bool]:
    """The curve timing ``kind`` on ``cluster`` and whether it is the fabric's point-to-point curve standing in for
    a collective one. A scale-out curve measured on another fabric than the cluster's is not used
    (collective_latency.yaml scale-out-curve-fabrics: AWS EFA's mid-size messages run far below InfiniBand's); a ring
    collective then takes each NIC's efficiency from the cluster fabric's own two-node point-to-point curve."""
    tables = cluster.tables
    curve, src = _curve_for(tables, kind, cluster.accelerator.id, n_ranks, tier, engine)
    if tier != "scale-out" or curve is None:
        return curve, src, False
    fabric = curve_fabric(tables, curve.id)
    if fabric is None or fabric == cluster.scale_out_fabric:
        return curve, src, False
    if kind in ("allreduce", "allgather", "reducescatter"):
        p2p, p2p_src = table(tables).curve("p2p", cluster.accelerator.id, n_ranks=2, tier="scale-out")
        if p2p is not None and curve_fabric(tables, p2p.id) in (None, cluster.scale_out_fabric):
            ring = _ring_scaled(tables, p2p, cluster.scale_out_fabric)
            return ring, f"{p2p_src} per NIC ({src} is from another fabric)", True
    return None, f"{NO_DATA} ({src} is from another fabric)", False


def _ring_scaled(tables: DomainTables, p2p: Curve, fabric: str | None) -> Curve:
    """The point-to-point curve (one send/recv stream) scaled so that its largest message reads the fabric's ring
    ceiling (collective_latency.yaml scale-out-curve-fabrics ring_ceiling_frac: a ring keeps several channels per NIC
    busy), its size dependence kept; unscaled where the fabric has no ceiling. Memoised per catalog."""
    row = latency_row(tables, "scale-out-curve-fabrics")
    ceiling = (row or {}).get("ring_ceiling_frac", {}).get(fabric) if fabric else None
    if ceiling is None or not p2p.y:
        return p2p

    memo = (tables.cached(_Memo) or tables.keep(_Memo())).ring_scaled
    key = (p2p.id, fabric)
    if key not in memo:
        scale = float(ceiling) / p2p.y[-1]
        memo[key] = replace(p2p, id=f"{p2p.id}@ring", y=tuple(min(1.0, v * scale) for v in p2p.y))
    return memo[key]


def _curve_for(
    tables: DomainTables, kind: Collective, acc_id: str, n_ranks: int, tier: str, engine: str | None = None
) -> tuple[Curve | None, str]:
    """The measured curve timing ``kind``: its own kind's curve (reduce-scatter: the all-gather curve), else the
    all-reduce curve. A curve measured on this accelerator beats one borrowed from another (efficiency.similarity):
    all-gather, reduce-scatter and all-to-all use the part's own all-reduce curve rather than another part's
    curve of their kind (bus bandwidth is defined alike for all of them, NCCL-tests PERFORMANCE.md)."""
    eff = table(tables)
    curve, src = eff.curve(_CURVE_KIND.get(kind, kind), acc_id, n_ranks=n_ranks, tier=tier, engine=engine)
    if kind == "allreduce":
        return curve, src
    ar, ar_src = eff.curve("allreduce", acc_id, n_ranks=n_ranks, tier=tier, engine=engine)
    if ar is None:
        return curve, src
    if curve is None or (kind != "p2p" and eff.similarity(acc_id, ar) < eff.similarity(acc_id, curve)):
        return ar, ar_src
    return curve, src


def engine_allreduce_measured(cluster: ClusterSpec, n_ranks: int, engine: str) -> bool:
    """Whether a scale-up all-reduce lookup for ``n_ranks`` ranks of the cluster's part naming ``engine`` finds that
    engine's own timings (an ``engine``-tagged curve) rather than an engine-free one."""
    curve, _ = table(cluster.tables).curve(
        "allreduce", cluster.accelerator.id, n_ranks=max(n_ranks, 2), tier="scale-up", engine=engine
    )
    return curve is not None and curve.engine == engine


def collective_time(
    cluster: ClusterSpec, kind: Collective, size_bytes: float, n_ranks: int, stride: int = 1, engine: str | None = None
) -> CommTime:
    """Time of one collective on ``size_bytes`` (the full buffer) among ``n_ranks`` ranks (``engine``: the serving
    engine whose own collective timings are preferred, efficiency module docstring)."""
    if n_ranks <= 1 or size_bytes <= 0:
        return CommTime(0.0, "none", "")
    tier = group_tier(cluster, n_ranks, stride)
    if tier == "scale-up" and kind != "alltoall" and cluster.scale_up_bw_one_way_bytes_per_s is not None:
        return _scale_up_time(cluster, kind, float(size_bytes), n_ranks, engine)
    import numpy as np

    sources: set[str] = set()
    t = collective_time_array(
        cluster, kind, np.array([size_bytes]), np.array([n_ranks]), np.array([stride]), sources, engine
    )
    return CommTime(float(t[0]), tier, "; ".join(sorted(sources)))


def mesh_floor_s(cluster: ClusterSpec, kind: Collective, size_bytes: float, n_ranks: int) -> float:
    """The least time a scale-up collective of ``size_bytes`` (the full buffer) among ``n_ranks`` ranks takes on a
    switchless board (ClusterSpec.scale_up_peer_bw_one_way_bytes_per_s = B_p per pair; 0 on a switched fabric). Each
    rank reaches its n − 1 peers over their own links: a ring collective (NCCL builds one ring per edge-disjoint
    cycle of the full mesh) moves its factor·S per rank over (n − 1)·B_p; a point-to-point hop moves S over one
    pair's B_p; an all-to-all sends S/n to each peer over that peer's B_p."""
    peer = cluster.scale_up_peer_bw_one_way_bytes_per_s
    if peer is None or n_ranks <= 1:
        return 0.0
    if kind == "p2p":
        return size_bytes / peer
    if kind == "alltoall":
        return size_bytes / n_ranks / peer
    factor = _FACTOR[kind] * (n_ranks - 1) / n_ranks
    return factor * size_bytes / ((n_ranks - 1) * peer)


def _scale_up_time(
    cluster: ClusterSpec, kind: Collective, size_bytes: float, n_ranks: int, engine: str | None
) -> CommTime:
    """:func:`collective_time_array`'s scale-up branch for one buffer (no rings across domains, no tree, no PCIe
    ring), with the measured curve's points memoised per catalog: the same arithmetic without the array set-up the
    serving simulator would pay at every distinct token count."""
    bw, alpha = tier_bandwidth(cluster, "scale-up")
    key = (kind, cluster.accelerator.id, n_ranks, engine, bw)
    memo = (cluster.tables.cached(_Memo) or cluster.tables.keep(_Memo())).scale_up_curves
    got = memo.get(key)
    factor = 1.0 if kind == "p2p" else _FACTOR[kind] * (n_ranks - 1) / n_ranks
    if got is None:
        curve, src = _curve_for(cluster.tables, kind, cluster.accelerator.id, n_ranks, "scale-up", engine)
        if curve is None:
            got = ((), (), 0.0, src)
        else:  # element by element what the array branch computes: 10^log_x, factor·size / (bw·efficiency)
            pts_size = tuple(10.0 ** float(v) for v in curve.log_x)
            pts_time = tuple(factor * s / (bw * float(y)) for s, y in zip(pts_size, curve.y, strict=True))
            got = (pts_size, pts_time, float(curve.y[-1]), src)
        memo[key] = got
    pts_size, pts_time, y_last, src = got
    if not pts_size:
        steps = 1.0 if kind == "p2p" else _FACTOR[kind] * (n_ranks - 1)
        t = factor * 1.0 * size_bytes / bw + max(steps * alpha, 0.0)
    elif size_bytes > pts_size[-1]:
        t = factor * size_bytes / (bw * y_last)
    else:
        t = interp(size_bytes, pts_size, pts_time)
    if cluster.scale_up_peer_bw_one_way_bytes_per_s is not None:
        t = max(t, mesh_floor_s(cluster, kind, size_bytes, n_ranks))
    return CommTime(t, "scale-up", f"{kind}/scale-up: {src}")


@dataclass(frozen=True, slots=True)
class _Group:
    """Collectives of one rank count on one tier (the plans selected by a mask), with their per-rank bandwidth."""

    kind: Collective
    tier: str
    n_val: int
    size: np.ndarray
    """Bytes per rank of each selected plan's collective."""
    k: np.ndarray
    """Parallel rings (one NIC each): ranks of the group in one scale-up domain (1 on the scale-up tier)."""
    bw_bytes_per_s: float
    """The tier's one-way bytes/s per rank."""
    bw_arr: np.ndarray
    """Bandwidth each plan's collective moves at (k rings capped by the scale-up link; fabric share applied)."""
    a2a_frac: np.ndarray | float
    """Share of an all-to-all's traffic that leaves the domain (1 elsewhere)."""
    alpha_s: float
    rings: bool
    tree: bool


def _group(
    cluster: ClusterSpec,
    kind: Collective,
    tier: str,
    n_val: int,
    size: np.ndarray,
    st: np.ndarray,
    span: np.ndarray,
    domain: int,
) -> _Group:
    """The bandwidth side of one (rank count, tier) group: k ranks of the group per domain -> k parallel rings, one NIC
    each (module docstring); an oversubscribed leaf shares its uplinks among the nodes below it."""
    import numpy as np

    bw, alpha = tier_bandwidth(cluster, tier)
    m = size.size
    rings = tier == "scale-out" and kind in ("allreduce", "allgather", "reducescatter")
    k = np.clip(domain // st, 1, n_val).astype(float) if rings else np.ones(m)
    if rings:
        up = cluster.scale_up_bw_one_way_bytes_per_s
        bw_arr = np.minimum(k * bw, up) if up else k * bw
    else:
        bw_arr = np.full(m, bw)
    if tier == "scale-out" and cluster.fabric_oversubscription_ratio > 1.0:
        bw_arr = bw_arr * fabric_share(cluster, np.ceil(span / domain))
    a2a_frac: np.ndarray | float = 1.0
    if tier == "scale-out" and kind == "alltoall":
        k_a2a = np.clip(domain // st, 1, n_val)
        a2a_frac = (n_val - k_a2a) / (n_val - 1)
    return _Group(kind, tier, n_val, size, k, bw, bw_arr, a2a_frac, alpha, rings, rings and kind == "allreduce")


def _latencies(
    cluster: ClusterSpec, g: _Group, curve: Curve | None, per_nic_p2p: bool
) -> tuple[np.ndarray | float, np.ndarray | float, np.ndarray]:
    """(ring latency, tree latency, nodes) of a ring group across nodes (0, inf and 0 elsewhere); a measured
    scale-out curve already contains the latency of the node count it was measured on, so only the excess counts."""
    import numpy as np

    if not g.rings:
        return 0.0, np.inf, np.zeros(g.size.size)
    kind, tables = g.kind, cluster.tables
    nodes = np.ceil(g.n_val / g.k)
    ranks = np.full(g.size.size, float(g.n_val))
    ring_lat: np.ndarray | float = ring_latency_s(tables, kind, ranks, nodes)
    tree_lat: np.ndarray | float = tree_latency_s(tables, ranks, nodes) if g.tree else np.inf
    if curve is not None and curve.n_ranks and not per_nic_p2p:  # scale-out curves count nodes
        ref_nodes = np.minimum(float(curve.n_ranks), nodes)
        ref_lat = ring_latency_s(tables, kind, ref_nodes * g.k, ref_nodes)
        ring_lat = np.maximum(0.0, ring_lat - ref_lat)
        if g.tree:
            tree_lat = np.maximum(0.0, tree_lat - ref_lat)
    return ring_lat, tree_lat, nodes


def _bandwidth_time(g: _Group, curve: Curve | None, factor: float) -> np.ndarray:
    """The bandwidth term of each collective of the group (s).

    Without a curve: the bytes over the group's bandwidth. With a measured curve: interpolate the measured TIMES
    linearly in size (a latency floor below the smallest message, the largest message's efficiency beyond it) —
    monotone in size; the curve is a time per byte at the tier's per-rank bandwidth. The k parallel rings (one per
    NIC) each carry S/k: each NIC sees the efficiency of an S/k message (the scale-out curves are measured per NIC on
    that shard, efficiency.yaml) and the node moves k of them."""
    import numpy as np

    if curve is None:
        out: np.ndarray = factor * g.a2a_frac * g.size / g.bw_arr
        return out
    pts_size = 10.0 ** np.asarray(curve.log_x)
    pts_time = factor * pts_size / (g.bw_bytes_per_s * np.asarray(curve.y))
    sz = g.size / g.k
    t = np.interp(sz, pts_size, pts_time)
    beyond = sz > pts_size[-1]
    t[beyond] = factor * sz[beyond] / (g.bw_bytes_per_s * curve.y[-1])
    timed: np.ndarray = t * g.k * (g.bw_bytes_per_s / g.bw_arr) * g.a2a_frac
    return timed


def _group_time(cluster: ClusterSpec, g: _Group, sources: set[str] | None, engine: str | None) -> np.ndarray:
    """Time of each collective of one (rank count, tier) group: bandwidth plus latency, and for an all-reduce
    across nodes the fastest of ring, tree and in-network reduction, as NCCL's tuner picks (tuning.cc)."""
    import numpy as np

    kind, tier, n_val = g.kind, g.tier, g.n_val
    if tier == "scale-up" and kind == "allreduce" and cluster.scale_up_bw_one_way_bytes_per_s is None:
        ring = pcie_ring_allreduce_s(cluster, g.size, n_val)
        if ring is not None:  # PCIe-only parts: NCCL's ring over P2P hops (pcie_ring_allreduce_s)
            if sources is not None:
                sources.add(f"{kind}/{tier}: {ring[1]}")
            return ring[0]
    curve, src, per_nic_p2p = fabric_curve(cluster, kind, n_val, tier, engine)
    if sources is not None:
        sources.add(f"{kind}/{tier}: {src}")
    factor = 1.0 if kind == "p2p" else _FACTOR[kind] * (n_val - 1) / n_val
    ring_lat, tree_lat, nodes = _latencies(cluster, g, curve, per_nic_p2p)
    bw_time = _bandwidth_time(g, curve, factor)
    tree_bw = tree_bandwidth_factor(cluster.tables, float(n_val)) if g.tree else 0.0
    if curve is None:
        steps = 1.0 if kind == "p2p" else _FACTOR[kind] * (n_val - 1)
        out = bw_time + np.maximum(steps * g.alpha_s, ring_lat)
        if g.tree:  # NCCL's tuner runs ring or tree, whichever its model says is faster (tuning.cc)
            out = np.minimum(out, bw_time * tree_bw + np.maximum(steps * g.alpha_s, tree_lat))
    else:
        out = bw_time + ring_lat
        if g.tree:  # the tree's latency grows with log2(nodes), the ring's with the ranks (tuning.cc)
            out = np.minimum(out, bw_time * tree_bw + tree_lat)
    if g.tree:
        out = np.minimum(out, in_network_allreduce_s(cluster, bw_time, factor, g.size, g.k, nodes))
    if tier == "scale-up" and cluster.scale_up_peer_bw_one_way_bytes_per_s is not None:
        floor = np.array([mesh_floor_s(cluster, kind, float(s), n_val) for s in g.size])
        out = np.maximum(out, floor)
    result: np.ndarray = out
    return result


def collective_time_array(
    cluster: ClusterSpec,
    kind: Collective,
    size_bytes: np.ndarray,
    n_ranks: np.ndarray,
    stride: np.ndarray,
    sources: set[str] | None = None,
    engine: str | None = None,
) -> np.ndarray:
    """Vectorised :func:`collective_time` over arrays of plans (same formulas), one (rank count, tier) group at a
    time."""
    import numpy as np

    size = np.asarray(size_bytes, dtype=float)
    n = np.asarray(n_ranks, dtype=int)
    st = np.asarray(stride, dtype=int)
    size, n, st = np.broadcast_arrays(size, n, st)
    out = np.zeros(size.shape, dtype=float)
    active = (n > 1) & (size > 0)
    if not active.any():
        return out
    domain = max(cluster.scale_up_domain, 1) if cluster.scale_up_bw_one_way_bytes_per_s else cluster.per_node
    span = (n - 1) * st + 1
    scale_up = span <= domain
    for n_val in distinct_sorted(n[active]):
        for tier, tier_mask in (("scale-up", scale_up), ("scale-out", ~scale_up)):
            mask = active & (n == n_val) & tier_mask
            if not mask.any():
                continue
            g = _group(cluster, kind, tier, int(n_val), size[mask], st[mask], span[mask], domain)
            out[mask] = _group_time(cluster, g, sources, engine)
    return out


def in_network_allreduce_s(
    cluster: ClusterSpec,
    ring_bw_s: np.ndarray,
    factor: float,
    size_bytes: np.ndarray,
    ranks_per_node: np.ndarray,
    nodes: np.ndarray,
) -> np.ndarray:
    """The faster of the in-network all-reduces the cluster runs (inf where none). ``ring_bw_s`` is the ring's
    bandwidth time through the group's NICs, factor·S / (k·B_nic·efficiency), factor = 2(n−1)/n.

    NVLS_TREE (NVLink SHARP inside each node, a tree per NIC between nodes; NCCL's model, src/tuning/nvls.cc,
    collective_latency.yaml nccl-nvls), for groups with ≥ 2 ranks per node: bus bandwidth = min(the NICs', doubled on
    two nodes; the node's measured NVLS bus bandwidth), converted like the ring's, latency 23 + 2·⌊log2 nodes⌋·14 µs.
    InfiniBand SHARP (nccl-collnet-sharp, only with hardware.ib_sharp): each NIC sends its S/k shard up the switch
    tree once and gets the reduced shard back once: the ring's bandwidth time / factor, / 0.85 on Hopper and later,
    NCCL's CollNet latency."""
    import numpy as np

    k = np.asarray(ranks_per_node, dtype=float)
    n_nodes = np.asarray(nodes, dtype=float)
    best = np.full(np.broadcast(ring_bw_s, k, n_nodes).shape, np.inf)
    nvls = latency_row(cluster.tables, "nccl-nvls")
    su = cluster.accelerator.scale_up
    if cluster.nvls and nvls is not None and su is not None and cluster.scale_up_bw_one_way_bytes_per_s:
        inter_s = ring_bw_s / np.where(n_nodes <= 2, float(nvls["two_node_inter_bw_factor"]), 1.0)
        intra_frac = float(nvls["intra_busbw_frac"].get(su.interconnect, 1.0))
        intra_busbw = intra_frac * cluster.scale_up_bw_one_way_bytes_per_s
        intra_s = factor * np.asarray(size_bytes, dtype=float) / intra_busbw
        hops = np.floor(np.log2(np.maximum(n_nodes, 1.0)))
        lat = (float(nvls["nvlink_hop_us"]) + 2.0 * hops * float(nvls["net_hop_us"])) * 1e-6
        t = np.maximum(inter_s, intra_s) + lat
        best = np.where((k >= float(nvls["min_ranks_per_node"])) & (n_nodes > 1), np.minimum(best, t), best)
    sharp = latency_row(cluster.tables, "nccl-collnet-sharp")
    if cluster.ib_sharp and sharp is not None:
        hopper_plus = cluster.accelerator.generation in ("nvidia-hopper", "nvidia-blackwell-dc")
        corr = float(sharp["hopper_plus_bw_factor"]) if hopper_plus else 1.0
        lat = (
            2.0 * (np.minimum(1.0, k - 1.0) * float(sharp["nvlink_hop_us"]) + (k - 1.0) * float(sharp["arity_us"]))
            + float(sharp["net_hop_us"])
        ) * 1e-6
        best = np.where(n_nodes > 1, np.minimum(best, ring_bw_s / factor / corr + lat), best)
    return best
