"""Catalog questions: the rows of one kind, one row with its sources, a model's derived figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiinfra import catalog
from aiinfra.analytic import model_figures as mf
from aiinfra.app.base import Result, flatten
from aiinfra.app.tables import price_book
from aiinfra.catalog.resolve import resolve_model
from aiinfra.costing.prices import (
    REFRESH_COMMAND,
    STALE_AFTER_DAYS,
    InstancePrice,
    PurchasePrice,
    cloud_prices,
    every_cloud_price,
    purchase_prices,
)
from aiinfra.errors import SpecError
from aiinfra.report.render import jsonable
from aiinfra.specs.hardware import AcceleratorSpec
from aiinfra.specs.model import ModelArch

KINDS = catalog.KINDS
"""The kinds ``catalog list`` takes."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogRows(Result):
    """The answer of :func:`catalog_list`."""

    kind: str
    specs: tuple[Any, ...]
    """The rows as spec objects (AcceleratorSpec, SystemSpec, InterconnectSpec, ModelArch, BenchmarkSpec)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra catalog list KIND --json`` object: the kind and every row with all its fields and sources."""
        return {"kind": self.kind, "rows": [jsonable(s) for s in self.specs]}

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per catalog entry (sources and notes left out)."""
        return [flatten({k: v for k, v in jsonable(s).items() if k not in ("sources", "notes")}) for s in self.specs]


def catalog_list(kind: str) -> CatalogRows:
    """Every row of one catalog kind (accelerators, systems, interconnects, models, benchmarks)."""
    return CatalogRows(kind=kind, specs=tuple(catalog.rows(kind).values()))


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogRow(Result):
    """The answer of :func:`catalog_show`."""

    kind: str
    spec: Any
    """The row as its spec object; ``to_dict()`` gives every field with its sources."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra catalog show ID --json`` object: the row's kind and every field with its sources (a purchase
        row's own kind as ``purchase_kind``)."""
        row: dict[str, Any] = jsonable(self.spec)
        if self.kind == "purchases":  # a purchase row's own kind (system, accelerator ...) under its own name
            row["purchase_kind"] = row.pop("kind")
        return {"kind": self.kind, **row}


def catalog_show(id_: str) -> CatalogRow:
    """One catalog row by id, looked up in every kind, then in the cloud and purchase prices ("did you mean" hints
    when unknown)."""
    from aiinfra.errors import UnknownIdError

    try:
        kind, spec = catalog.find_any(id_)
    except UnknownIdError:
        price = next((p for p in every_cloud_price(price_book()) if p.id == id_), None)
        if price is not None:
            return CatalogRow(kind="prices", spec=price)
        bought = next((p for p in purchase_prices(price_book()) if p.id == id_), None)
        if bought is None:
            raise
        return CatalogRow(kind="purchases", spec=bought)
    return CatalogRow(kind=kind, spec=spec)


@dataclass(frozen=True, kw_only=True, slots=True)
class PriceRows(Result):
    """The answer of :func:`price_list`."""

    accelerator: str | None
    prices: tuple[InstancePrice, ...]
    """Whole-instance prices, cheapest per accelerator-hour first, each with its source and date."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra catalog list prices --json`` object: each price row with its per-accelerator-hour price,
        conflict flag, age and staleness, plus the staleness rule and the refresh command."""
        return {
            "kind": "prices",
            "accelerator": self.accelerator,
            "stale_after_days": STALE_AFTER_DAYS,
            "refresh_command": REFRESH_COMMAND,
            "rows": [
                {
                    **jsonable(p),
                    "usd_per_accelerator_hour": p.usd_per_accelerator_hour,
                    "conflicting": p.conflicting,
                    "price_age_days": p.age_days,
                    "stale": p.stale,
                }
                for p in self.prices
            ],
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per price."""
        return list(self.to_dict()["rows"])


def price_list(accelerator: str | None = None) -> PriceRows:
    """The cloud price rows of the active catalog (catalog/data/prices/cloud.csv plus any overlay), for one
    accelerator or all; an unknown accelerator id gets the catalog's "did you mean"."""
    if accelerator is not None:
        catalog.accelerator(accelerator, "--accelerator")
    return PriceRows(accelerator=accelerator, prices=tuple(cloud_prices(price_book(), accelerator)))


def accelerator_summary(acc: AcceleratorSpec) -> dict[str, Any]:
    """The figures of an accelerator most answers depend on (memory, bandwidth, dense peaks, TDP, scale-up)."""
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


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelFigures(Result):
    """The answer of :func:`model_show`."""

    arch: ModelArch
    derived: dict[str, Any]
    """Parameters (total, active, embedding), FLOPs per token (named convention), KV bytes per token, weight
    bytes per format."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra model show --json`` object: ``model`` (the architecture) and ``derived`` (parameters, FLOPs per
        token, KV and weight bytes)."""
        return {"model": jsonable(self.arch), "derived": self.derived}


def model_show(model: str | dict[str, Any] | ModelArch, seq_len: int | None = None) -> ModelFigures:
    """A model (catalog id, ``{"config": path}`` to a Hugging Face config.json, an inline mapping or a ModelArch)
    with its derived figures; ``seq_len`` adds FLOPs per token at that context length."""
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
        "flop_convention": "model FLOPs = 2·N_matmul,active + 2·L·ctx·(d_qk+d_v) forward (non-causal; sliding-window "
        "and chunked layers count the keys they attend, analytic/window.py); training = 3 × forward (PaLM App. B / "
        "Kaplan et al. 2020)",
        "kv_cache_bytes_per_token": {d: mf.kv_bytes_per_token(arch, d) for d in ("bf16", "fp8")},
        "weight_bytes": {d: mf.weight_bytes(arch, d) for d in ("fp32", "bf16", "fp8", "int4")},
        "attention_qk_dim": d_qk,
        "attention_v_dim": d_v,
    }
    if seq_len is not None:
        derived["seq_len_tokens"] = seq_len
        derived["flop_per_token_forward"] = mf.flop_per_token_forward(arch, seq_len)
        derived["flop_per_token_training"] = mf.flop_per_token_training(arch, seq_len)
    return ModelFigures(arch=arch, derived=derived)


def model_from_hf_config(config: dict[str, Any], name: str = "") -> ModelFigures:
    """A model from a Hugging Face config.json's content (not a path: what a browser uploads), with its derived
    figures; ``to_dict()["model"]`` is an inline architecture a scenario's ``model:`` takes."""
    from aiinfra.catalog.hf_config import arch_from_hf_config

    if not isinstance(config, dict):
        raise SpecError(
            "model.config", type(config).__name__, "is not a JSON object", "give a Hugging Face config.json"
        )
    return model_show(arch_from_hf_config(config, "model.config", name=name))


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckResult(Result):
    """The answer of :func:`check`."""

    scenario: Any
    """The resolved scenario (aiinfra.specs.scenario.Scenario)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra check --json`` object: the resolved model with its derived figures, the hardware as resolved,
        the training and inference sections with defaults filled in, and the other sections present."""
        sc = self.scenario
        c = sc.cluster
        hw = {
            "accelerator": accelerator_summary(c.accelerator),
            "count": c.count,
            "per_node": c.per_node,
            "nodes": c.nodes,
            "system": c.system_id,
            "scale_up_domain": c.scale_up_domain,
            "scale_up_bw_one_way_bytes_per_s": c.scale_up_bw_one_way_bytes_per_s,
            "scale_out_bw_one_way_bytes_per_s": c.scale_out_bw_one_way_bytes_per_s,
        }
        return {
            "valid": True,
            "model": model_show(sc.model).to_dict(),
            "hardware": hw,
            "training": jsonable(sc.training),
            "inference": jsonable(sc.inference),
            "sections": sorted(sc.source.extras),
        }


def check(scenario: Any) -> CheckResult:
    """A scenario validated and resolved (every id to its catalog row); loading it already raised any error."""
    return CheckResult(scenario=scenario)


@dataclass(frozen=True, kw_only=True, slots=True)
class PurchaseRows(Result):
    """The answer of :func:`purchase_list`."""

    accelerator: str | None
    purchases: tuple[PurchasePrice, ...]
    """Purchase prices (systems, accelerators, network parts), each with its source and date."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra catalog list purchases --json`` object: every purchase row with its source and date."""
        return {"kind": "purchases", "accelerator": self.accelerator, "rows": [jsonable(p) for p in self.purchases]}

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per purchase price."""
        return list(self.to_dict()["rows"])


def purchase_list(accelerator: str | None = None) -> PurchaseRows:
    """The purchase price rows of the active catalog (catalog/data/prices/purchase.csv): systems, accelerators and
    network parts, for one accelerator or all, by kind then price."""
    if accelerator is not None:
        catalog.accelerator(accelerator, "--accelerator")
    rows = [p for p in purchase_prices(price_book()) if accelerator is None or p.accelerator == accelerator]
    return PurchaseRows(
        accelerator=accelerator, purchases=tuple(sorted(rows, key=lambda p: (p.kind, p.unit_price_usd, p.id)))
    )
