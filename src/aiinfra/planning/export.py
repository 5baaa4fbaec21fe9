"""Launch commands and Kubernetes manifests for a planned serving deployment (``aiinfra export``).

The flags come from catalog/data/engine_cli.yaml (each engine's documented CLI, with the release that introduced a
flag where known); nothing here knows an engine by name except through that table. A setting the engine cannot
express (vLLM's expert parallelism is always over every rank, vLLM issue #28889) or a flag newer than the version
asked for is refused naming it.
"""

from __future__ import annotations

import copy
import json
import shlex
from dataclasses import dataclass, field
from typing import Any

import yaml

from aiinfra.errors import SpecError


@dataclass(frozen=True, kw_only=True, slots=True)
class Served:
    """One replica layout to launch, and how many replicas."""

    engine: str
    model_path: str
    """Hugging Face repository id or a local path the engine loads."""
    tp: int
    """Tensor-parallel degree of one replica."""
    pp: int = 1
    ep: int = 1
    attention_dp: bool = False
    """Attention data-parallel over the tp ranks (experts split ep ways)."""
    weight_precision: str
    kv_precision: str | None = None
    """KV-cache format; None = the engine's default."""
    max_num_seqs: int | None = None
    """Most sequences running at once, per attention-DP rank under attention DP; None = the engine's default."""
    max_num_batched_tokens: int | None = None
    """Token budget of one iteration; None = the engine's default."""
    memory_frac: float | None = None
    """The engine's memory knob as the scenario gives it (vLLM gpu_memory_utilization)."""
    num_draft_tokens: int | None = None
    """Speculative tokens drafted per step; None = no speculative decoding."""
    replicas: int
    """Replicas to launch."""
    accelerators_per_node: int
    """Accelerators in one node: a replica larger than a node spans whole nodes in the manifest."""
    gpu_resource: str
    """Kubernetes extended resource of the accelerator (nvidia.com/gpu, amd.com/gpu)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Launch:
    """The engine command of one replica, and the extra options file it reads (TensorRT-LLM), if any."""

    argv: tuple[str, ...]
    """The engine's command line, one argument per item."""
    extra_options: dict[str, Any] | None
    """TensorRT-LLM's extra options (written as YAML to extra_options_path); None for engines that take flags only."""
    extra_options_path: str | None
    """Where the command expects the extra options file; None when there is none."""
    image: str
    """Container image of the engine."""
    port: int
    """Port the engine's server listens on."""
    notes: tuple[str, ...]
    """What the export assumed or could not express, for the user."""

    @property
    def shell(self) -> str:
        """The command line, quoted for a POSIX shell."""
        return shlex.join(self.argv)


def _version_tuple(v: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in v.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def _setting(row: dict[str, Any], name: str, version: str | None, why: str) -> dict[str, Any]:
    """The engine's entry for ``name``, refused when the engine lacks it or it is newer than ``version``."""
    entry = (row.get("settings") or {}).get(name)
    if entry is None:
        raise SpecError(
            "format",
            row["id"],
            f"{row['id']} has no documented flag for {why}",
            "export with another engine (--format), or change the plan",
        )
    since = entry.get("since")
    if version is not None and since is not None and _version_tuple(version) < _version_tuple(str(since)):
        flag = entry.get("flag") or entry.get("option")
        raise SpecError(
            "--engine-version",
            version,
            f"{row['id']} {version} lacks {flag} (needed for {why}; first in {since})",
            f"export for {row['id']} {since} or later",
        )
    return dict(entry)


def _set_option(options: dict[str, Any], dotted: str, value: Any) -> None:
    keys = dotted.split(".")
    node = options
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value


@dataclass
class _Command:
    """A launch command under construction: argv flags, extra-options entries and notes for one engine row."""

    row: dict[str, Any]
    version: str | None
    argv: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def put(self, name: str, value: Any, why: str) -> None:
        """Set the engine's setting ``name`` to ``value``: a flag, or an entry of the extra-options file."""
        entry = _setting(self.row, name, self.version, why)
        if "option" in entry:
            _set_option(self.options, entry["option"], entry.get("values", {}).get(value, value))
            return
        flag = entry["flag"]
        if value is True:
            self.argv.append(flag)
        else:
            self.argv.extend([flag, str(entry.get("values", {}).get(value, value))])


def _put_parallelism(c: _Command, s: Served) -> None:
    """Tensor, expert, attention-data and pipeline parallelism as the engine spells them."""
    row = c.row
    if s.attention_dp:
        # attention data-parallel over the tp ranks, experts split ep = tp ways
        if row.get("expert_parallel_equals_ranks"):
            c.put("data_parallel", s.tp, "attention data parallelism")
            c.put("tensor_parallel", 1, "tensor parallelism")
            c.put("expert_parallel", True, "expert parallelism")
        else:
            c.put("tensor_parallel", s.tp, "tensor parallelism")
            if "data_parallel" in row["settings"]:  # SGLang: --dp-size = tp with --enable-dp-attention
                c.put("data_parallel", s.tp, "attention data parallelism")
            c.put("attention_dp", True, "attention data parallelism")
            c.put("expert_parallel", s.ep, "expert parallelism")
    else:
        c.put("tensor_parallel", s.tp, "tensor parallelism")
        if s.ep > 1:
            if row.get("expert_parallel_equals_ranks"):
                if s.ep != s.tp:
                    raise SpecError(
                        "inference.plan.ep",
                        s.ep,
                        f"{row['id']} splits experts over every tensor-parallel rank (ep = tp = {s.tp}); "
                        f"ep {s.ep} cannot be expressed",
                        f"use ep {s.tp} or 1, or export for an engine with an expert-parallel size",
                    )
                c.put("expert_parallel", True, "expert parallelism")
            else:
                c.put("expert_parallel", s.ep, "expert parallelism")
    if s.pp > 1:
        c.put("pipeline_parallel", s.pp, "pipeline parallelism")


def _put_formats(c: _Command, s: Served) -> None:
    """The KV-cache and weight formats: flags where the engine has them, else a note on the checkpoint to load."""
    if s.kv_precision == "fp8":
        c.put("kv_cache_dtype", "fp8", "an FP8 KV cache")
    if s.weight_precision == "fp8":
        if "quantization" in c.row["settings"]:
            c.put("quantization", "fp8", "FP8 weights")
        else:
            c.notes.append("FP8 weights: load an FP8-quantised checkpoint (the engine reads its quantisation config)")
    elif s.weight_precision in ("int4", "int8", "fp4"):
        c.notes.append(
            f"{s.weight_precision} weights: load a checkpoint already quantised to {s.weight_precision} "
            "(AWQ/GPTQ/ModelOpt); the engine reads the format from its config"
        )


def launch(row: dict[str, Any], s: Served, version: str | None) -> Launch:
    """The launch command of one replica of ``s`` on the engine of catalog row ``row`` at ``version`` (None = the
    documented version)."""
    c = _Command(row, version, argv=list(row["launcher"]))
    if row.get("model_flag"):
        c.argv += [row["model_flag"], s.model_path]
    else:
        c.argv.append(s.model_path)
    if "backend" in (row.get("settings") or {}):
        c.put("backend", row["settings"]["backend"]["value"], "the backend")
    _put_parallelism(c, s)
    if s.max_num_seqs is not None:
        c.put("max_num_seqs", s.max_num_seqs, "the batch limit")
    if s.max_num_batched_tokens is not None:
        c.put("max_num_batched_tokens", s.max_num_batched_tokens, "the step token budget")
    _put_formats(c, s)
    if s.memory_frac is not None:
        c.put("memory_frac", s.memory_frac, "the memory fraction")
    if s.num_draft_tokens:
        entry = _setting(row, "speculative", version, "speculative decoding")
        if entry.get("format") == "json":
            c.argv += [entry["flag"], json.dumps({"num_speculative_tokens": s.num_draft_tokens})]
        else:
            c.put("speculative", s.num_draft_tokens, "speculative decoding")
        c.notes.append("speculative decoding: name the draft model or method the engine should use")
    extra_path = None
    if c.options:
        extra_path = "extra-llm-api-options.yaml"
        c.put("extra_options", extra_path, "the extra options file")
    version_tag = version or row.get("documented_version")
    image = f"{row['image']}:{(row.get('tag_prefix') or '') + version_tag if version_tag else 'latest'}"
    return Launch(
        argv=tuple(c.argv),
        extra_options=c.options or None,
        extra_options_path=extra_path,
        image=image,
        port=int(row["port"]),
        notes=tuple(c.notes),
    )


def kubernetes(s: Served, lx: Launch, name: str) -> str:
    """A Deployment and a Service for ``s.replicas`` replicas of the launch (a LeaderWorkerSet group per replica
    when a replica spans nodes), as plain multi-document YAML."""
    per_replica = s.tp * s.pp
    nodes = -(-per_replica // s.accelerators_per_node)
    gpus_per_pod = per_replica if nodes == 1 else s.accelerators_per_node

    def labels() -> dict[str, str]:  # a fresh mapping each time: shared ones would print as YAML anchors
        return {"app": name}

    volumes: list[dict[str, Any]] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    mounts = [{"name": "dshm", "mountPath": "/dev/shm"}]
    command = [*lx.argv, "--port", str(lx.port)] if "--port" not in lx.argv else list(lx.argv)
    if lx.extra_options is not None:
        volumes.append({"name": "engine-options", "configMap": {"name": f"{name}-options"}})
        mounts.append({"name": "engine-options", "mountPath": "/etc/engine"})
        command = [("/etc/engine/" + a) if a == lx.extra_options_path else a for a in command]
    container = {
        "name": "engine",
        "image": lx.image,
        "command": command,
        "ports": [{"containerPort": lx.port, "name": "http"}],
        "resources": {"limits": {s.gpu_resource: gpus_per_pod}, "requests": {s.gpu_resource: gpus_per_pod}},
        "volumeMounts": mounts,
    }

    def pod() -> dict[str, Any]:
        return copy.deepcopy(
            {"metadata": {"labels": labels()}, "spec": {"containers": [container], "volumes": volumes}}
        )

    docs: list[dict[str, Any]] = []
    if lx.extra_options is not None:
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{name}-options"},
                "data": {lx.extra_options_path: yaml.safe_dump(lx.extra_options, sort_keys=False)},
            }
        )
    if nodes == 1:
        docs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "labels": labels()},
                "spec": {"replicas": s.replicas, "selector": {"matchLabels": labels()}, "template": pod()},
            }
        )
    else:
        # one group of `nodes` pods per replica (the LeaderWorkerSet API of Kubernetes SIG Apps, as llm-d and
        # Dynamo deploy multi-node replicas)
        docs.append(
            {
                "apiVersion": "leaderworkerset.x-k8s.io/v1",
                "kind": "LeaderWorkerSet",
                "metadata": {"name": name, "labels": labels()},
                "spec": {
                    "replicas": s.replicas,
                    "leaderWorkerTemplate": {"size": nodes, "leaderTemplate": pod(), "workerTemplate": pod()},
                },
            }
        )
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "labels": labels()},
            "spec": {"selector": labels(), "ports": [{"name": "http", "port": lx.port, "targetPort": lx.port}]},
        }
    )
    return yaml.safe_dump_all(docs, sort_keys=False)
