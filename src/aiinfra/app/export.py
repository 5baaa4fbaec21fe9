"""``aiinfra export``: the launch command or Kubernetes manifest of a planned serving deployment."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

from aiinfra import catalog
from aiinfra.app.base import Result
from aiinfra.errors import SpecError
from aiinfra.planning.export import Launch, Served, kubernetes, launch
from aiinfra.specs.scenario import Scenario

ExportFormat = Literal["vllm", "sglang", "trtllm", "kubernetes"]
FORMATS: tuple[str, ...] = get_args(ExportFormat)

_HF_REPO = re.compile(r"^https://huggingface\.co/(?!datasets/|spaces/|docs/|blog/)([\w.-]+/[\w.-]+)(?:/|$)")
"""A Hugging Face repository page or file URL."""
_AIC_CONFIG = re.compile(r"/model_configs/([\w.-]+)--([\w.-]+)_config\.json$")
"""AIConfigurator's bundled config files, named ``<org>--<repo>_config.json`` after their repository."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ExportResult(Result):
    """The answer of :func:`export`."""

    format: str
    engine: str
    engine_version: str | None
    source: str
    """Where the deployment came from: the scenario's inference.plan, or capacity's cheapest choice."""
    served: Served
    launch: Launch
    manifest: str | None
    """Kubernetes YAML (format kubernetes)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra export --json`` object: the engine and its version, where the deployment came from, replicas
        and accelerators per replica, the launch command, image, port and extra options, and the manifest when asked."""
        out: dict[str, Any] = {
            "format": self.format,
            "engine": self.engine,
            "engine_version": self.engine_version,
            "source": self.source,
            "replicas": self.served.replicas,
            "accelerators_per_replica": self.served.tp * self.served.pp,
            "command": list(self.launch.argv),
            "command_line": self.launch.shell,
            "image": self.launch.image,
            "port": self.launch.port,
            "extra_options": self.launch.extra_options,
            "extra_options_file": self.launch.extra_options_path,
            "notes": list(self.launch.notes),
        }
        if self.manifest is not None:
            out["manifest_yaml"] = self.manifest
        return out


def _engine_row(engine: str) -> dict[str, Any]:
    rows = {r["id"]: r for r in catalog.file_rows("engine_cli.yaml")}
    if engine not in rows:
        raise SpecError(
            "--engine",
            engine,
            f"no launch flags for this engine (known: {', '.join(sorted(rows))})",
            "export for one of them",
        )
    return rows[engine]


def model_repository(sc: Scenario) -> str | None:
    """The Hugging Face repository of a catalog model, read from its sources (None when none names one)."""
    for row in catalog.raw_rows("models"):
        if row.get("id") != sc.model.id:
            continue
        urls = [str(src.get("url") or "") for src in row.get("sources") or ()]
        for url in urls:
            m = _HF_REPO.match(url)
            if m:
                return m.group(1)
        for url in urls:
            a = _AIC_CONFIG.search(url)
            if a:
                return f"{a.group(1)}/{a.group(2)}"
    return None


def _gpu_resource(vendor: str) -> str:
    rows = {r["id"]: r["resource"] for r in catalog.file_rows("kubernetes_resources.yaml")}
    if vendor not in rows:
        raise SpecError(
            "hardware.accelerator",
            vendor,
            "no Kubernetes device-plugin resource known for this vendor",
            "export a command (--format vllm|sglang|trtllm) instead",
        )
    return str(rows[vendor])


def export(
    scenario: Scenario,
    format: str,
    engine: str | None = None,
    engine_version: str | None = None,
    model_path: str | None = None,
    accelerators: list[str] | None = None,
) -> ExportResult:
    """The deployment to launch — the scenario's ``inference.plan`` when it gives one, else the cheapest fleet of
    :func:`aiinfra.app.capacity` on the engine exported for — as that engine's launch command (``format`` vllm,
    sglang, trtllm) or a Kubernetes manifest (``format`` kubernetes, engine = ``engine`` or the scenario's).

    Long because it resolves the deployment (given plan or capacity's fleet) and then the engine's flags for it; the
    flags' table is catalog/data/engine_cli.yaml and the rendering planning/export.py."""
    from aiinfra.app.inference import capacity

    if format not in FORMATS:
        raise SpecError("--format", format, f"unknown export format (known: {', '.join(FORMATS)})", "pick one")
    wl = scenario.inference
    if wl is None:
        raise SpecError("inference", None, "the scenario has no inference section", "add inference: {...}")
    eng = format if format != "kubernetes" else (engine or wl.engine)
    row = _engine_row(eng)
    path = model_path or model_repository(scenario)
    if path is None:
        raise SpecError(
            "--model-path",
            None,
            f"model {scenario.model.id!r} names no Hugging Face repository",
            "give --model-path (a repository id or a local folder)",
        )
    acc = scenario.cluster.accelerator
    if wl.plan is not None:
        plan = wl.plan
        per_replica = plan.tp * plan.pp
        replicas = plan.replicas or max(1, scenario.cluster.count // per_replica)
        tp, pp, ep, adp, batch = plan.tp, plan.pp, plan.ep, plan.attention_dp, None
        precision: str = wl.weight_precision
        source, draft = "inference.plan", wl.speculative
    else:
        planning_engine = eng if eng in _planned_engines() else wl.engine
        best = capacity(scenario, accelerators, [planning_engine]).chosen
        acc = catalog.accelerator(best.accelerator)
        tp, pp, ep, adp, batch, replicas = best.tp, 1, best.ep, best.attention_dp, best.batch_per_replica, best.replicas
        precision, source = best.weight_precision, f"capacity (cheapest on {planning_engine})"
        draft = wl.speculative if best.speculative else None
    if eng == "trtllm" and acc.vendor != "nvidia":
        raise SpecError(
            "--format", eng, f"TensorRT-LLM runs on NVIDIA GPUs only, not {acc.id}", "export for vllm or sglang"
        )
    per_node = (
        scenario.cluster.per_node if acc.id == scenario.cluster.accelerator.id else (acc.default_per_node or tp * pp)
    )
    # a batch limit per attention-DP rank where the engine applies its limits per rank (engines.yaml)
    seqs = None if batch is None else (-(-batch // tp) if adp else batch)
    served = Served(
        engine=eng,
        model_path=path,
        tp=tp,
        pp=pp,
        ep=ep,
        attention_dp=adp,
        weight_precision=precision,
        kv_precision=wl.kv_precision,
        max_num_seqs=seqs,
        memory_frac=wl.gpu_memory_utilization if eng != "trtllm" else None,
        num_draft_tokens=draft.num_draft_tokens if draft else None,
        replicas=replicas,
        accelerators_per_node=per_node,
        gpu_resource=_gpu_resource(acc.vendor),
    )
    lx = launch(row, served, engine_version)
    manifest = None
    if format == "kubernetes":
        name = re.sub(r"[^a-z0-9-]+", "-", f"{scenario.model.id}-{eng}".lower()).strip("-")[:63]
        manifest = kubernetes(served, lx, name)
    return ExportResult(
        format=format,
        engine=eng,
        engine_version=engine_version or row.get("documented_version"),
        source=source,
        served=served,
        launch=lx,
        manifest=manifest,
    )


def _planned_engines() -> tuple[str, ...]:
    from aiinfra.specs.workload import ENGINES

    return ENGINES
