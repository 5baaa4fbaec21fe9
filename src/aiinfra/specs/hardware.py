"""Hardware specs: accelerators, interconnects, systems and the cluster one run uses.

All quantities SI. Link bandwidths are ONE-WAY (per direction) per accelerator or per port.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

from aiinfra.dataclass_code import loads_fast
from aiinfra.errors import InfeasibleError
from aiinfra.specs.bounds import Constraint
from aiinfra.specs.common import STRICT, Source
from aiinfra.specs.precision import BLOCK_SCALED_BASE as BLOCK_SCALED_BASE  # re-exported (specs.precision)
from aiinfra.specs.precision import PRECISIONS

if TYPE_CHECKING:
    from aiinfra.specs.tables import DomainTables

#: a fraction in (0, 1]: what ``pydantic.confloat(gt=0.0, le=1.0)`` builds, written without importing
#: ``pydantic.types`` (and its JSON-schema machinery) or annotated_types when the specs are imported (start-up time)
Frac = Annotated[float, Constraint("Interval", gt=0.0, le=1.0)]


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class ScaleUpLink:
    """An accelerator's scale-up fabric (NVLink, Infinity Fabric ...): its bandwidth and how many accelerators it
    reaches."""

    __pydantic_config__ = STRICT

    interconnect: str
    """Interconnect id (interconnects.yaml)."""
    bw_one_way_bytes_per_s: float
    """Per-accelerator bandwidth in one direction."""
    domain_size: int
    """Accelerators reachable over this fabric (8 for an HGX board, 72 for NVL72)."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class PcieLink:
    """An accelerator's PCIe host link."""

    __pydantic_config__ = STRICT

    gen: int
    """PCIe generation."""
    bw_one_way_bytes_per_s: float
    """x16 bandwidth in one direction."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class HostLink:
    """A coherent chip-to-chip link between the accelerator and its CPU's memory (NVLink-C2C on a superchip)."""

    __pydantic_config__ = STRICT

    interconnect: str
    bw_one_way_bytes_per_s: float
    """Bandwidth in one direction."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class MigSupport:
    """How a part splits into Multi-Instance GPU instances (the placement rules are in mig.yaml)."""

    __pydantic_config__ = STRICT

    max_instances: int
    """Most GPU instances one accelerator can be split into."""
    profiles: tuple[str, ...]
    """GPU-instance profile names (e.g. 1g.10gb)."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class AcceleratorSpec:
    """One accelerator model as its vendor publishes it (dense peaks only in ``dense_flop_per_s``)."""

    __pydantic_config__ = STRICT

    id: str
    name: str
    vendor: str
    """Maker (nvidia, amd, google, intel, aws): the last step of a donor efficiency curve's similarity."""
    family: str
    """Product family (nvidia-h100 for every H100 variant): parts sharing silicon; efficiency curves measured on
    one are the closest stand-in for another."""
    generation: str | None = None
    """Architecture generation (nvidia-hopper, amd-cdna3 ...): shared tensor-core design, memory technology and
    software; the next stand-in after the family. None = not placed (no generation-level borrowing)."""
    form_factor: str
    memory_bytes: float
    """Capacity in bytes (from the published figure and its unit)."""
    memory_as_published: str
    """The figure as printed, e.g. '80 GiB' (unit says how it must be read)."""
    memory_type: str | None = None
    runtime_visible_memory_bytes: float | None = None
    """What the CUDA runtime reports as the device's total (torch.cuda.mem_get_info, as engines log it): the capacity
    less what the driver keeps. Engines size their KV cache from it; None = not measured (the capacity is used)."""
    runtime_visible_memory_as_published: str | None = None
    memory_bw_bytes_per_s: float
    """Peak memory bandwidth, decimal."""
    dense_flop_per_s: dict[str, float] = field(default_factory=dict)
    """Dense peak FLOP/s (OP/s for int8) per dtype. Absent = unknown."""
    sparse_flop_per_s: dict[str, float] = field(default_factory=dict)
    """2:4 structured-sparsity peaks, never used as dense."""
    tdp_w: float | None = None
    scale_up: ScaleUpLink | None = None
    pcie: PcieLink | None = None
    host_link: HostLink | None = None
    """A coherent link to the CPU's memory (superchips); None = PCIe only."""
    host_memory_bytes: float | None = None
    """Second memory tier the accelerator reads over ``host_link`` (a superchip's CPU memory); not used for weights
    or KV by the planner (no offload model), listed so its capacity is not lost."""
    host_memory_as_published: str | None = None
    host_memory_type: str | None = None
    host_memory_bw_bytes_per_s: float | None = None
    """The CPU memory's own peak bandwidth."""
    mig: MigSupport | None = None
    launch_year: int | None = None
    list_price_usd: float | None = None
    default_per_node: int | None = None
    """Accelerators per usual node/host/tray."""
    block_scaled_formats: tuple[str, ...] = ()
    """Block-scaled (microscaling) training formats the accelerator's tensor cores run natively (mxfp8, nvfp4).
    Empty = none known: such a precision is refused rather than silently run at the plain fp8/fp4 peak."""
    power_limited_matmul_frac: Frac | None = None
    """Power-capped parts only: measured dense GEMM throughput of this part at its default power limit divided
    by the planner's GEMM efficiency curve (700 W-class measurements) at the same sizes. The clock that a lower
    power limit sustains slows every tensor-core kernel (GEMM, fused attention) by this factor; memory-bound
    kernels are left alone. None = the part runs at the curves' speed (no cap below the measured parts)."""
    burst_matmul_sustained_frac: Frac | None = None
    """Sustained over short-burst tensor-core GEMM rate at the part's own power limit: the serving engines' kernel
    tables (AIConfigurator: a few CUDA-graph replays per shape at maximum application clocks) time GEMMs in bursts
    too short for the power limit to pull the clock down, which a loaded server does not enjoy. Scales the
    compute-bound GEMMs looked up in those engine tables only (analytic/kernel_time.py gemm_efficiency). None =
    no such correction (no sustained measurement, or the part's curves are not burst timings)."""
    sources: tuple[Source, ...]
    notes: str = ""

    @property
    def runtime_memory_bytes(self) -> float:
        """The total an engine sizes its memory from: the runtime's visible total where measured, else the
        capacity."""
        return self.runtime_visible_memory_bytes or self.memory_bytes

    def sustained_flop_per_s(self, dtype: str) -> float:
        """Tensor-core rate the efficiency curves are applied to: the dense peak, times
        ``power_limited_matmul_frac`` where the part's power limit holds its clock below the measured parts'."""
        frac = self.power_limited_matmul_frac
        return self.peak_flop_per_s(dtype) * (float(frac) if frac is not None else 1.0)

    def peak_flop_per_s(self, dtype: str) -> float:
        """Dense peak for ``dtype``; a block-scaled format (mxfp8, nvfp4) runs at the fp8/fp4 peak only where the
        accelerator supports it (``block_scaled_formats``)."""
        fmt = PRECISIONS.get(dtype)
        key = fmt.peak_format if fmt is not None else dtype
        if fmt is not None and fmt.block_scaled and dtype not in self.block_scaled_formats:
            raise InfeasibleError(
                f"{self.id} has no {dtype} (block-scaled tensor-core) support in the catalog"
                f"{'; supported: ' + ', '.join(self.block_scaled_formats) if self.block_scaled_formats else ''}"
                f" — use precision {key if key in self.dense_flop_per_s else 'bf16'}"
                f"{' (per-tensor scaling)' if key in self.dense_flop_per_s else ''} or an accelerator that has it"
            )
        if key in self.dense_flop_per_s:
            return self.dense_flop_per_s[key]
        raise InfeasibleError(
            f"{self.id} has no published dense {dtype} peak in the catalog; "
            f"known: {', '.join(sorted(self.dense_flop_per_s)) or 'none'} — pick a precision it supports"
        )


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class InterconnectSpec:
    """One interconnects.yaml row: a scale-up, scale-out or host link technology and its bandwidth."""

    __pydantic_config__ = STRICT

    id: str
    name: str
    tier: str
    """scale-up | scale-out | host"""
    bw_one_way_bytes_per_s: float
    """Per accelerator (scale-up) or per port (scale-out, host), one direction."""
    latency_s: float | None = None
    """One-way latency when a source gives it; None = not in the catalog."""
    measured_efficiency_frac: float | None = None
    """Achieved fraction of ``bw_one_way_bytes_per_s`` in a published measurement."""
    links: int | None = None
    """Links per accelerator that ``bw_one_way_bytes_per_s`` sums (NVLink); None = not in the catalog."""
    sources: tuple[Source, ...]
    notes: str = ""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class ScaleUpMesh:
    """A board whose accelerators are wired to each other directly, without a switch (an HGX 4-GPU board): each pair
    shares ``links_per_peer`` of the interconnect's links, so a group of k of them reaches its k − 1 peers' links
    only, not every link of the part as a switch would give it."""

    __pydantic_config__ = STRICT

    interconnect: str
    """Interconnect id (interconnects.yaml) whose links the board wires."""
    links_per_peer: int
    """Links between each pair of accelerators."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class NicSpec:
    """A system's compute-fabric NICs (the ports that carry collectives between nodes)."""

    __pydantic_config__ = STRICT

    count: int
    """NIC ports per system."""
    bw_one_way_bytes_per_s: float
    """Per NIC port, one direction."""
    kind: str = ""
    """The NIC as the source names it (e.g. ConnectX-7); free text."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class SystemSpec:
    """One systems.yaml row: a server or rack of one accelerator type, with its CPUs, NICs, power and price where
    published."""

    __pydantic_config__ = STRICT

    id: str
    name: str
    accelerator: str
    accelerators_per_node: int
    nodes: int = 1
    """Nodes in one system (> 1 for rack-scale systems: NVL72 has 18 trays)."""
    cpu: str | None = None
    host_memory_bytes: float | None = None
    """CPU memory of the whole system; None = not published."""
    nics: NicSpec | None = None
    power_max_w: float | None = None
    """The system's maximum power draw; None = not published."""
    power_typical_w: float | None = None
    """A typical draw under load, where the vendor gives one."""
    price_usd: float | None = None
    """Published list price of one system; None for most systems."""
    scale_up_mesh: ScaleUpMesh | None = None
    """The accelerators' direct wiring on a switchless board; None = a switch (or no scale-up fabric)."""
    sources: tuple[Source, ...]
    notes: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class ClusterSpec:
    """The hardware one run uses, resolved from the catalog."""

    accelerator: AcceleratorSpec
    count: int
    """Accelerators in the job."""
    per_node: int
    """Accelerators per node (scale-up domain unless ``scale_up_domain`` says larger)."""
    scale_up_domain: int
    """Accelerators that talk over the scale-up fabric (NVLink domain)."""
    scale_up_bw_one_way_bytes_per_s: float | None
    scale_up_latency_s: float | None
    scale_out_bw_one_way_bytes_per_s: float | None
    """Per-accelerator share of the node's scale-out NICs, one direction. None = unknown."""
    scale_out_latency_s: float | None
    system_id: str | None = None
    scale_out_id: str | None = None
    fabric_oversubscription_ratio: float = 1.0
    """Leaf down:up ratio of the scale-out fabric (1 = non-blocking: NVIDIA's reference architectures, full fat tree,
    rail-optimised; catalog/data/collective_latency.yaml scale-out-fabric)."""
    nodes_per_leaf: int | None = None
    """Nodes under one leaf (per rail): groups within them do not cross the oversubscribed tier. None = any
    inter-node group crosses it."""
    nvls: bool = False
    """NVLink SHARP runs the all-reduces of groups with several ranks per node (supported and not disabled)."""
    ib_sharp: bool = False
    """InfiniBand SHARP (NCCL CollNet) runs scale-out all-reduces."""
    scale_out_fabric: str | None = None
    """efa | rdma | other: the fabric family a scale-out efficiency curve must have been measured on to serve this
    cluster (collective_latency.yaml scale-out-curve-fabrics); None = unknown (no system with NICs, no scale_out)."""
    scale_up_peer_bw_one_way_bytes_per_s: float | None = None
    """On a switchless mesh (SystemSpec.scale_up_mesh): the one-way bandwidth between one pair of accelerators, its
    links' share of the interconnect's bandwidth at the interconnect's measured efficiency; a collective among k
    ranks of the board reaches k − 1 such peers (analytic/comms.py mesh_floor_s). None = switched: any group gets
    ``scale_up_bw_one_way_bytes_per_s``."""
    tables: DomainTables = field(compare=False, repr=False)
    """The tables of the catalog this cluster was resolved against (specs/tables.py): what every step-time model,
    collective and planner given this cluster reads, in place of any catalog lookup below the application layer."""

    @property
    def nodes(self) -> int:
        """Nodes the job spans: ⌈count / per_node⌉."""
        return -(-self.count // self.per_node)
