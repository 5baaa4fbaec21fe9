"""Every numeric (float) field of every spec and result dataclass carries its unit in its name."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re

import aiinfra

UNIT_WORDS = (
    "bytes s per_s w j usd frac flop tokens seqs kwh g kg co2e_kg per_token per_kwh per_hour per_month per_year "
    "per_gb per_kw_month per_gb_month per_million_tokens months years days hours ratio kw mw c per_j per_flop "
    "per_w bits params count per_step per_user per_accelerator_hour requests per_context_token per_accelerator "
    "per_node per_rack per_param x prob gb per_replica per_day per_kernel"
).split()
UNIT_SUFFIX = re.compile(r"(^|_)(" + "|".join(sorted(UNIT_WORDS, key=len, reverse=True)) + r")$")
#: dimensionless counts whose unit is the thing counted (documented in their docstrings)
COUNT_FIELDS = {
    "ParamBreakdown": {
        "embedding",
        "output",
        "attention_per_layer",
        "dense_mlp_per_layer",
        "moe_routed_per_layer",
        "moe_shared_per_layer",
        "router_per_layer",
        "norms_per_layer",
        "final_norm",
    },
    "StepBatch": {"prefill_attention_pairs"},
    "Packing": {"objective_value", "lower_bound"},  # in the objective's unit: GPUs or $ per hour (its `objective`)
    "InRange": {"lo", "hi"},  # bounds of a field in that field's unit
    "LengthDist": {"sigma"},  # σ of log(length): dimensionless
    "TrainSetup": {"moe_routing_skew_cv"},  # coefficient of variation of expert loads: dimensionless
    "RowPrediction": {"predicted"},  # in the SI unit of the row's metric column
    # the issue fixes these JSON keys; measured/predicted are in the unit named by the case's `metric`,
    # rel_error is a signed fraction
    "Case": {"measured", "predicted", "rel_error"},
    # statistics of one quantity: the unit is in the name of the field that holds them (ttft_s, itl_s ...)
    "Percentiles": {"mean", "p50", "p90", "p99"},
    # a fitted parameter's bounds, neutral value and probe step: in its own unit (a scale: none; an overhead: s)
    "Param": {"lo", "hi", "neutral", "probe"},
    "Fit": {"cost"},  # least-squares cost: half the sum of squared log errors, dimensionless
    # dimensionless multipliers of the catalog's efficiencies (1 = unchanged)
    "Factors": {"compute_efficiency_scale", "memory_efficiency_scale", "communication_efficiency_scale"},
    "ReliabilityReport": {"restart_attempts_mean"},  # restart attempts per recovery
    "Scored": {"value", "predicted"},  # in the unit of the scored quantity (named by its `quantity`)
    # error bands: bounds in the quantity's own unit, log ratios (ln(predicted / measured)) and a multiplier
    "Checked": {"low", "high", "low_log", "high_log"},
    "Band": {"centre_log", "low_log", "high_log", "between_sd_log"},
    "_Raw": {"centre_log", "below_log", "above_log", "between_sd_log"},
    "ErrorRow": {"measured", "predicted", "log_error"},  # measured/predicted in the unit of the row's metric
    # mean counts of sequences (requests) in a replica's batch
    "InferenceEstimate": {"requests_in_flight"},
    "ReplicaState": {"batch"},
    "LoadPoint": {"in_flight", "in_flight_p99"},
    "RequestClass": {"share"},  # a fraction of the workload's demand
    "DayFleet": {"per_replica_demand"},  # in the profile's demand unit (its demand_unit: users or requests/s)
    "ServingWorkload": {"engine_version"},  # a release string; a YAML number is accepted only to be refused with a fix
}


def _dataclasses() -> list[type]:
    found: list[type] = []
    for mod in pkgutil.walk_packages(aiinfra.__path__, "aiinfra."):
        if mod.name.startswith("aiinfra.web"):
            continue
        module = importlib.import_module(mod.name)
        for obj in vars(module).values():
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__:
                found.append(obj)
    return found


def test_float_fields_carry_units() -> None:
    bad: list[str] = []
    classes = _dataclasses()
    assert len(classes) > 10
    for cls in classes:
        for f in dataclasses.fields(cls):
            ann = str(f.type)
            if "float" not in ann or "dict" in ann or "tuple" in ann or "list" in ann:
                continue
            if f.name in COUNT_FIELDS.get(cls.__name__, set()):
                continue
            if not UNIT_SUFFIX.search(f.name):
                bad.append(f"{cls.__module__}.{cls.__name__}.{f.name}")
    assert not bad, "float fields without a unit in the name: " + ", ".join(bad)
