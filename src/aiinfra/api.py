"""The facade every shell (CLI, web) calls. Returns plain results; prints nothing."""

from __future__ import annotations

from typing import Any

from aiinfra import catalog
from aiinfra.analytic import model_figures as mf
from aiinfra.report.render import jsonable
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.specs.model import ModelArch
from aiinfra.specs.scenario import resolve_model

PEAK_DTYPES = ("fp64", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")


def catalog_show(id_: str) -> tuple[str, dict[str, Any]]:
    kind, spec = catalog.find_any(id_)
    return kind, jsonable(spec)


def accelerator_summary(acc: AcceleratorSpec) -> dict[str, Any]:
    return {
        "id": acc.id,
        "memory_bytes": acc.memory_bytes,
        "memory_as_published": acc.memory_as_published,
        "memory_bw_bytes_per_s": acc.memory_bw_bytes_per_s,
        **{f"dense_{d}_flop_per_s": acc.dense_flop_per_s.get(d) for d in ("bf16", "fp8", "fp4")},
        "tdp_w": acc.tdp_w,
        "scale_up": acc.scale_up.interconnect if acc.scale_up else None,
        "scale_up_bw_one_way_bytes_per_s": acc.scale_up.bw_one_way_bytes_per_s if acc.scale_up else None,
    }


def model_summary(model: str | dict[str, Any] | ModelArch, seq_len: int | None = None) -> dict[str, Any]:
    """Architecture plus derived figures (parameters, FLOPs, KV cache, weight bytes)."""
    arch: ModelArch = model if isinstance(model, ModelArch) else resolve_model(model)
    pb = mf.param_breakdown(arch)
    d_qk, d_v = mf.attention_dims(arch)
    derived: dict[str, Any] = {
        "params_total": pb.total,
        "params_active": pb.active,
        "params_embedding": pb.embedding + pb.output,
        "matmul_params_active": mf.matmul_params_active(arch),
        "flop_per_token_forward_matmul": 2.0 * mf.matmul_params_active(arch),
        "attention_flop_per_token_per_context_token_forward": mf.attention_flop_per_token_forward(arch, 1.0, False),
        "flop_convention": "model FLOPs = 2·N_matmul,active + 2·L·ctx·(d_qk+d_v) forward (non-causal); "
        "training = 3 × forward (PaLM App. B / Kaplan et al. 2020)",
        "kv_cache_bytes_per_token": {d: mf.kv_bytes_per_token(arch, d) for d in ("bf16", "fp8")},
        "weight_bytes": {d: mf.weight_bytes(arch, d) for d in ("fp32", "bf16", "fp8", "int4")},
        "attention_qk_dim": d_qk,
        "attention_v_dim": d_v,
    }
    if seq_len is not None:
        derived["seq_len_tokens"] = seq_len
        derived["flop_per_token_forward"] = mf.flop_per_token_forward(arch, seq_len)
        derived["flop_per_token_training"] = mf.flop_per_token_training(arch, seq_len)
    return {"model": jsonable(arch), "derived": derived}
