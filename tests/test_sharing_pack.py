"""Packing: optima of small portfolios worked by hand from the MIG User Guide's A100 80GB placements
(1g.10gb: 10 GiB, 1/7 compute, starts 0-6; 3g.40gb: 40 GiB, 3/7 compute, starts {0, 4}; at most seven 1g.10gb)."""

from __future__ import annotations

from typing import Any

import pytest

from aiinfra import app
from aiinfra.catalog import mig as catalog_mig
from aiinfra.errors import SpecError
from aiinfra.sharing import mig

from .conftest import EXAMPLES, run_cli

A100 = "nvidia-a100-sxm4-80gb"


def portfolio(*workloads: dict[str, Any], solver: str = "milp") -> dict[str, Any]:
    return {"pack": {"accelerators": [A100], "solver": solver, "workloads": list(workloads)}}


def nb(name: str, gb: float, count: int = 1) -> dict[str, Any]:
    return {"name": name, "kind": "notebook", "memory_gb": gb, "count": count}


FT = {"name": "ft", "kind": "finetune", "memory_gb": 35, "compute_frac": 0.4}


@pytest.mark.parametrize(
    ("works", "gpus", "whole"),
    [
        # seven 9 GiB notebooks: seven 1g.10gb on one GPU (the guide's maximum); whole GPUs: 7
        ([nb("n", 9, 7)], 1, 7),
        # an eighth needs a second GPU
        ([nb("n", 9, 8)], 2, 8),
        # a 35 GiB fine-tune needing ≥ 0.4 of the compute: 3g.40gb (3/7 = 0.43) at slice 4, four 1g.10gb at 0-3
        ([FT, nb("n", 9, 4)], 1, 5),
        # two such fine-tunes take memory slices 0-3 and 4-7: no room for a 1g.10gb beside them -> 2 GPUs
        ([FT, {**FT, "name": "ft2"}, nb("n", 9, 1)], 2, 3),
    ],
)
def test_milp_optimum_matches_hand_packing(works: list[dict[str, Any]], gpus: int, whole: int) -> None:
    d = app.pack(portfolio(*works)).to_dict()
    assert d["method"] == "milp"
    assert d["gpus"] == gpus
    assert d["compare"]["whole_gpus"] == whole
    assert d["lower_bound"] <= gpus + 1e-9
    geo = catalog_mig.geometry(A100)
    for g in d["assignment"]:  # every GPU's layout is valid per the MIG rules
        mig.place(geo, [i["profile"] for i in g["instances"]])
    # every instance a workload chose is assigned exactly once
    chosen = {w["name"]: w["chosen"]["instances"] for w in d["workloads"]}
    assigned: dict[str, int] = {}
    for g in d["assignment"]:
        for i in g["instances"]:
            if i["workload"]:
                assigned[i["workload"]] = assigned.get(i["workload"], 0) + 1
    assert assigned == chosen


def test_greedy_is_never_below_the_bound_and_reports_its_gap() -> None:
    # greedy: the fine-tune takes 3g.40gb (fewest slices), notebooks 1g.10gb; first-fit decreasing gives 1 GPU here
    d = app.pack(portfolio(FT, nb("n", 9, 4), solver="greedy")).to_dict()
    assert d["method"] == "greedy"
    assert d["gpus"] == 1
    assert d["gpus"] >= d["lower_bound"] - 1e-9
    assert d["gap_to_lower_bound_frac"] >= 0


def test_cost_objective_counts_dollars() -> None:
    d = app.pack({"pack": {**portfolio(nb("n", 9, 7))["pack"], "objective": "cost"}}).to_dict()
    assert d["objective"] == "cost"
    assert d["gpus"] == 1
    assert d["objective_value"] > 1  # $ per hour of one A100, not a GPU count


def test_bad_portfolios_name_the_field() -> None:
    with pytest.raises(SpecError, match="fits no GPU"):
        app.pack(portfolio(nb("big", 100)))
    with pytest.raises(SpecError, match="unknown workload kind"):
        app.pack(portfolio({"name": "x", "kind": "batch"}))
    with pytest.raises(SpecError, match="missing or repeated"):
        app.pack(portfolio(nb("n", 9), nb("n", 9)))


def test_example_runs_and_an_empty_portfolio_is_exit_2() -> None:
    r = run_cli("pack", str(EXAMPLES / "pack-portfolio.yaml"), "--json")
    assert r.returncode == 0, r.stderr
    r2 = run_cli("pack", str(EXAMPLES / "pack-portfolio.yaml"), "--set", "pack.workloads=[]")
    assert r2.returncode == 2
    assert "pack.workloads" in r2.stderr and "Traceback" not in r2.stderr


def test_a_service_gets_the_smallest_instance_meeting_its_slo() -> None:
    """One light Llama-3.1-8B FP8 service alone: the optimum is one GPU; its chosen instance meets the SLO by the
    planner's own figures, and so does every option offered (options that miss it are listed as rejected)."""
    svc = {
        "name": "chat",
        "kind": "service",
        "model": "meta-llama-3.1-8b",
        "weight_precision": "fp8",
        "kv_precision": "fp8",
        "input_tokens": 512,
        "output_tokens": 128,
        "request_rate_per_s": 0.5,
        "slo": {"ttft_p90_s": 1.0, "tpot_p99_s": 0.05},
    }
    d = app.pack(portfolio(svc, nb("n", 9, 1))).to_dict()
    assert d["gpus"] == 1
    (w,) = [w for w in d["workloads"] if w["name"] == "chat"]
    assert w["chosen"]["ttft_s"] <= 1.0 and w["chosen"]["tpot_s"] <= 0.05
    assert any(o["profile"] == "whole" for o in w["options"])
    # 0.5 request/s × (TTFT + 128 × TPOT ≤ 1 + 6.4 s) ≤ 4 sequences in flight; 8 GB of FP8 weights plus their KV
    # fit a 3g.40gb (40 GB) with room to spare, so a MIG slice, not a whole GPU, is the packing's choice
    assert w["chosen"]["profile"] != "whole"
