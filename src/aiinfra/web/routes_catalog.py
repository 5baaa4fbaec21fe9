"""The lookup routes, each the CLI's ``--json`` on the light lane: catalog tables, rows, cloud and purchase prices,
a model's figures (from the catalog or an uploaded config.json), MIG layouts; and the validation tables (computed once
per process in a worker)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from aiinfra import app
from aiinfra.errors import SpecError
from aiinfra.web.inputs import json_body, validation_paths
from aiinfra.web.state import LanesDep, ValidatedDep, heavy

CATALOG_KINDS = ("accelerators", "systems", "interconnects", "models", "benchmarks")

router = APIRouter()


@router.get("/api/v1/catalog/prices", tags=["catalog"])
async def prices(lanes: LanesDep, accelerator: str | None = Query(None, max_length=200)) -> Any:
    """`aiinfra catalog list prices --json`: every cloud price with its source and date."""
    return await lanes.light(lambda: app.price_list(accelerator).to_dict())


@router.get("/api/v1/catalog/purchases", tags=["catalog"])
async def purchases(lanes: LanesDep, accelerator: str | None = Query(None, max_length=200)) -> Any:
    """`aiinfra catalog list purchases --json`: every purchase price with its source and date."""
    return await lanes.light(lambda: app.purchase_list(accelerator).to_dict())


@router.get("/api/v1/catalog/row/{row_id}", tags=["catalog"])
async def catalog_row(row_id: str, lanes: LanesDep) -> Any:
    """`aiinfra catalog show ID --json`: every field of a row with its sources."""
    return await lanes.light(lambda: app.catalog_show(row_id).to_dict())


@router.get("/api/v1/catalog/{kind}", tags=["catalog"])
async def catalog_list(kind: str, lanes: LanesDep) -> Any:
    """`aiinfra catalog list KIND --json` (accelerators, systems, interconnects, models, benchmarks)."""
    if kind not in CATALOG_KINDS:
        known = ", ".join((*CATALOG_KINDS, "prices", "purchases"))
        raise SpecError("kind", kind, f"unknown catalog table (known: {known})", "name one of them")
    return await lanes.light(lambda: app.catalog_list(kind).to_dict())


@router.get("/api/v1/model/{model_id}", tags=["catalog"])
async def model(model_id: str, lanes: LanesDep, seq_len: int | None = Query(None, ge=1, le=100_000_000)) -> Any:
    """`aiinfra model show ID --json`."""
    return await lanes.light(lambda: app.model_show(model_id, seq_len).to_dict())


@router.post(
    "/api/v1/model-from-config",
    tags=["catalog"],
    openapi_extra={"requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}}},
)
async def model_from_config(request: Request, lanes: LanesDep, name: str = Query("", max_length=200)) -> Any:
    """A Hugging Face config.json's content -> the architecture (a scenario's inline `model:`) and figures."""
    body = await json_body(request)
    return await lanes.light(lambda: app.model_from_hf_config(body, name).to_dict())


@router.get("/api/v1/mig/{accelerator}", tags=["catalog"])
async def mig(accelerator: str, lanes: LanesDep, layout: str | None = Query(None, max_length=500)) -> Any:
    """`aiinfra mig ACCELERATOR [--layout P,P,...] --json`: MIG profiles and every full layout, or one checked."""
    return await lanes.light(lambda: app.mig(accelerator, layout).to_dict())


@router.get("/api/v1/validate", tags=["validation"])
async def validate(request: Request, lanes: LanesDep, validated: ValidatedDep, rows: str = Query("training")) -> Any:
    """`aiinfra validate --json` of the shipped training or inference rows (computed once per process)."""
    paths = tuple(str(p) for p in validation_paths(rows))
    if rows not in validated:
        validated[rows] = await heavy(lanes, request, "validate", paths)
    return validated[rows]
