"""The pack question: the fewest (or cheapest) GPUs, with a MIG layout each, that hold a portfolio of services,
notebooks and small fine-tunes; compared with whole GPUs and with time-slicing / MPS."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic

from aiinfra import catalog
from aiinfra.app.base import Result
from aiinfra.app.tables import price_book
from aiinfra.catalog import mig as catalog_mig
from aiinfra.catalog.resolve import resolve
from aiinfra.errors import SpecError
from aiinfra.planning.capacity import cheapest_price
from aiinfra.sharing import mig as m
from aiinfra.sharing import pack as pk
from aiinfra.specs.bounds import MAX_PACK_COPIES, InRange
from aiinfra.specs.common import STRICT, validate
from aiinfra.specs.scenario import apply_set, parse_scenario, read_yaml

GIB = 2**30

SHARING_MODES = {
    "mig": "MIG: each instance its own SMs, L2 slice, memory controllers and DRAM; faults and memory isolated; "
    "fixed layouts (NVIDIA MIG User Guide).",
    "time_slicing": "Time-slicing: workloads take turns on the whole GPU; memory shared with no limit or fault "
    "isolation, no compute share guaranteed (NVIDIA GPU Operator, 'Time-Slicing GPUs in Kubernetes').",
    "mps": "MPS: kernels of several processes run concurrently; compute capped per client "
    "(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) and memory per client (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT) on Volta and "
    "later, but a fatal fault in one client affects all (NVIDIA Multi-Process Service documentation).",
    "whole": "Whole GPUs: nothing shared, every instance a GPU of its own.",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class PackInput:
    """The ``pack:`` section of a portfolio file: the accelerator types allowed, the workloads, the objective and the
    solver."""

    __pydantic_config__ = STRICT

    accelerators: tuple[str, ...]
    """Accelerator types the GPUs may be (catalog ids)."""
    workloads: tuple[dict[str, Any], ...]
    """Services (model, lengths, request rate, SLO), notebooks and fine-tunes, as mappings checked by kind."""
    objective: Literal["gpus", "cost"] = "gpus"
    """gpus: the fewest GPUs; cost: the cheapest per hour (catalog on-demand prices)."""
    solver: Literal["auto", "milp", "greedy"] = "auto"
    """auto | milp (HiGHS) | greedy."""
    milp_max_workloads: pydantic.PositiveInt = 2000
    """auto: the MILP up to this many workloads, the greedy above. HiGHS solved random portfolios of 2,000
    notebooks and fine-tunes on two GPU types in about 2 s on one core (bench/bench_pack.py, bench/README.md);
    beyond that the integer program's size (workloads × options) is untested."""
    time_limit_s: pydantic.PositiveFloat = 60.0
    """HiGHS time limit; a solve stopped by it reports the best packing found as not proven optimal."""
    name: str = ""
    description: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class DevWorkload:
    """A notebook / dev box or a small fine-tune: ``count`` copies each needing one instance with this memory."""

    __pydantic_config__ = STRICT

    name: str
    kind: Literal["notebook", "finetune"]
    memory_gb: pydantic.PositiveFloat
    """GPU memory one copy needs (GiB, as MIG profile names count it)."""
    count: Annotated[int, InRange(1, MAX_PACK_COPIES)] = 1
    compute_frac: Annotated[float, pydantic.Field(ge=0.0, le=1.0)] = 0.0
    """Least share of a GPU's compute slices one copy needs (0 = any)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PackResult(Result):
    """The answer of ``aiinfra pack``: each workload's chosen instances, the GPUs with their MIG layouts, and the GPU
    counts without MIG to compare."""

    spec: PackInput
    workloads: tuple[pk.Workload, ...]
    """Each workload with its options and the ones rejected."""
    packing: pk.Packing
    whole_gpus: int
    """GPUs with nothing shared (every instance a whole GPU)."""
    memory_bound_gpus: int
    """GPUs under time-slicing or MPS if memory were the only limit (a lower bound)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra pack --json`` object: objective, method, value against its lower bound, layouts, the GPU-by-GPU
        assignment, each workload's choice and options, and the comparison with whole GPUs and time-slicing."""
        from aiinfra.accuracy.answers import unvalidated

        p = self.packing
        gpus = len(p.gpus)
        gap = (p.objective_value - p.lower_bound) / p.lower_bound if p.lower_bound > 0 else 0.0
        return {
            "objective": p.objective,
            "method": p.method,
            "gpus": gpus,
            "objective_value": p.objective_value,
            "lower_bound": p.lower_bound,
            "gap_to_lower_bound_frac": gap,
            "layouts": pk.layout_counts(p),
            "assignment": [
                {
                    "gpu": k,
                    "accelerator": g.accelerator,
                    "instances": [
                        {"profile": prof, "workload": who or None}
                        for prof, who in zip(g.layout, g.assigned, strict=True)
                    ],
                }
                for k, g in enumerate(p.gpus)
            ],
            "workloads": [
                {
                    "name": w.name,
                    "kind": w.kind,
                    "chosen": {
                        "accelerator": p.choice[w.name].accelerator,
                        "profile": p.choice[w.name].profile,
                        "instances": p.choice[w.name].count,
                        "detail": p.choice[w.name].detail,
                        "ttft_s": p.choice[w.name].ttft_s,
                        "tpot_s": p.choice[w.name].tpot_s,
                    },
                    "options": [
                        {"accelerator": o.accelerator, "profile": o.profile, "instances": o.count, "detail": o.detail}
                        for o in w.options
                    ],
                    "rejected": list(w.rejected),
                }
                for w in self.workloads
            ],
            "compare": {
                "mig_gpus": gpus,
                "whole_gpus": self.whole_gpus,
                "time_slicing_or_mps_gpus_memory_bound": self.memory_bound_gpus,
                "what_each_shares": SHARING_MODES,
            },
            "accuracy": unvalidated("pack"),
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per workload: its kind and chosen accelerator, profile and instances."""
        return [
            {"workload": w["name"], "kind": w["kind"], **{f"chosen.{k}": v for k, v in w["chosen"].items()}}
            for w in self.to_dict()["workloads"]
        ]


def _options_dev(d: DevWorkload, acc: str, geo: m.MigGeometry | None) -> tuple[list[pk.Option], list[str]]:
    base = catalog.accelerator(acc)
    opts, why = [], []
    need = d.memory_gb * GIB
    if base.memory_bytes >= need:
        opts.append(
            pk.Option(accelerator=acc, profile=pk.WHOLE, count=d.count, compute_slices=geo.compute_slices if geo else 1)
        )
    if geo is not None:
        for p in geo.profiles:
            mem = base.memory_bytes * p.memory_slices / geo.memory_slices
            if mem < need:
                why.append(f"{acc}/{p.name}: {mem / GIB:.1f} GiB < {d.memory_gb:g} GiB")
            elif p.compute_slices / geo.compute_slices < d.compute_frac:
                why.append(f"{acc}/{p.name}: compute share {p.compute_slices}/{geo.compute_slices} < {d.compute_frac}")
            else:
                opts.append(pk.Option(accelerator=acc, profile=p.name, count=d.count, compute_slices=p.compute_slices))
    return opts, why


def _options_service(
    w: dict[str, Any], where: str, acc: str, geo: m.MigGeometry | None
) -> tuple[list[pk.Option], list[str], float]:
    inference = {k: v for k, v in w.items() if k not in ("name", "kind", "model")}
    if "request_rate_per_s" not in inference:
        raise SpecError(
            f"{where}.request_rate_per_s",
            None,
            "a service needs its traffic",
            "give request_rate_per_s (requests per second)",
        )
    profiles = [(pk.WHOLE, acc)] + ([(p.name, f"{acc}/{p.name}") for p in geo.profiles] if geo else [])
    opts, why, mem = [], [], math.inf
    for prof, acc_id in profiles:
        try:
            sc = resolve(
                parse_scenario(
                    {"model": w.get("model"), "hardware": {"accelerator": acc_id, "count": 1}, "inference": inference}
                )
            )
        except SpecError as exc:
            raise SpecError(f"{where}.{exc.field}", exc.value, exc.problem, exc.fix) from None
        sized = pk.size_service(sc)
        if isinstance(sized, str):
            why.append(f"{acc_id}: {sized}")
            continue
        replicas, batch, ttft, tpot = sized
        slices = geo.profile(prof).compute_slices if (geo and prof != pk.WHOLE) else (geo.compute_slices if geo else 1)
        opts.append(
            pk.Option(
                accelerator=acc,
                profile=prof,
                count=replicas,
                compute_slices=slices,
                detail=f"{replicas} replica(s) × batch {batch}: TTFT {ttft:.3f} s, TPOT {tpot:.4f} s",
                ttft_s=ttft,
                tpot_s=tpot,
            )
        )
        mem = min(mem, replicas * sc.cluster.accelerator.memory_bytes)
    return opts, why, mem


def load_pack(source: str | Path | Mapping[str, Any], set: Iterable[str] | None = None) -> PackInput:
    """A portfolio (YAML path or mapping) with ``--set`` overrides applied, validated into a PackInput; a SpecError
    unless its one top-level section is ``pack``."""
    data = dict(source) if isinstance(source, Mapping) else read_yaml(source)
    for s in set or []:
        apply_set(data, s)
    if list(data) != ["pack"]:
        raise SpecError(
            "portfolio file",
            ",".join(data) or "(empty)",
            "expected one top-level section 'pack'",
            "see examples/pack-portfolio.yaml",
        )
    return validate(PackInput, data["pack"], where="pack")


def pack(source: str | Path | Mapping[str, Any], set: Iterable[str] | None = None) -> PackResult:
    """Pack the portfolio file ``source`` (a path or a mapping in the file format) onto the fewest or cheapest GPUs."""
    spec = load_pack(source, set)
    if not spec.workloads:
        raise SpecError("pack.workloads", [], "no workloads", "list the services, notebooks and fine-tunes to pack")
    geos: dict[str, m.MigGeometry | None] = {}
    price: dict[str, float] = {}
    for k, acc in enumerate(spec.accelerators):
        a = catalog.accelerator(acc, f"pack.accelerators[{k}]")
        geos[a.id] = catalog_mig.geometries().get(a.id)
        pr = cheapest_price(price_book(), a.id)
        if spec.objective == "cost" and pr is None:
            raise SpecError(
                f"pack.accelerators[{k}]",
                acc,
                "no on-demand price in the catalog",
                "use objective: gpus, or an accelerator with a price",
            )
        price[a.id] = pr.usd_per_accelerator_hour if pr else 1.0
    works: list[pk.Workload] = []
    names: dict[str, None] = {}  # (the parameter `set` shadows the builtin here)
    for i, w in enumerate(spec.workloads):
        where = f"pack.workloads[{i}]"
        name, kind = w.get("name"), w.get("kind")
        if not isinstance(name, str) or not name or name in names:
            raise SpecError(f"{where}.name", name, "missing or repeated", "give every workload a unique name")
        names[name] = None
        opts: list[pk.Option] = []
        why: list[str] = []
        if kind == "service":
            mem = math.inf
            for acc, geo in geos.items():
                o, r, mm = _options_service(w, where, acc, geo)
                opts, why, mem = opts + o, why + r, min(mem, mm)
        elif kind in ("notebook", "finetune"):
            d = validate(DevWorkload, w, where=where)
            mem = d.memory_gb * GIB * d.count
            for acc, geo in geos.items():
                o, r = _options_dev(d, acc, geo)
                opts, why = opts + o, why + r
        else:
            raise SpecError(f"{where}.kind", kind, "unknown workload kind", "service, notebook or finetune")
        if not opts:
            raise SpecError(
                where,
                name,
                "fits no GPU or MIG instance of the given accelerators: " + "; ".join(why),
                "add a larger accelerator, lower the traffic or relax the SLO",
            )
        works.append(pk.Workload(name=name, kind=kind, options=tuple(opts), rejected=tuple(why), memory_bytes=mem))
    use_milp = spec.solver == "milp" or (spec.solver == "auto" and len(works) <= spec.milp_max_workloads)
    if use_milp:
        packing = pk.solve_milp(works, geos, price, spec.objective, spec.time_limit_s)
    else:
        bound = pk.lp_bound(works, geos, price, spec.objective)
        packing = pk.solve_greedy(works, geos, price, spec.objective, bound)
    gpu_memory_bytes = catalog.accelerator(next(iter(geos))).memory_bytes
    return PackResult(
        spec=spec,
        workloads=tuple(works),
        packing=packing,
        whole_gpus=pk.whole_gpu_count(works),
        memory_bound_gpus=pk.memory_bound_count(works, gpu_memory_bytes),
    )
