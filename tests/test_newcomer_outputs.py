"""What a newcomer tripped on in the printed answers (issue 34): no MFU for a plan that does not fit, no 0 ms
latencies on rejected capacity rows, a same-bill verdict that says which way each difference goes, energy in kWh
below 1 MWh and "1 node" singular."""

from __future__ import annotations

import pytest

from aiinfra import app
from aiinfra.planning.capacity import same_bill_verdict
from aiinfra.report.text import human_energy, plural

from .conftest import EXAMPLES, cli_json, run_cli

LORA = str(EXAMPLES / "finetune-lora-7b.yaml")


def test_plan_that_does_not_fit_prints_no_mfu() -> None:
    # full fine-tuning of a 7B model (16 B/param with Adam ≈ 108 GB) on one 24 GB L4 cannot fit
    args = [LORA, "--set", "hardware.accelerator=nvidia-l4", "--set", "training.finetune.method=full"]
    res = run_cli("train", *args)
    assert res.returncode == 0, res.stderr
    assert "fits                          no" in res.stdout
    mfu_line = next(line for line in res.stdout.splitlines() if line.strip().startswith("MFU"))
    assert "%" not in mfu_line
    assert cli_json("train", *args)["mfu_frac"] is None


def test_one_node_run_in_kwh_and_singular() -> None:
    # LoRA on one A100 for 6.1 h at 400 W TDP: ~2.4 kWh, one node
    res = run_cli("train", LORA)
    assert "(1 node)" in res.stdout and "(1 nodes)" not in res.stdout
    energy = next(line for line in res.stdout.splitlines() if line.strip().startswith("energy"))
    assert "kWh" in energy and "MWh" not in energy


def test_human_energy_and_plural_by_hand() -> None:
    assert human_energy(9 * 3.6e6) == "9.0 kWh"  # 9 kWh, not "0.0 MWh"
    assert human_energy(2.5e3 * 3.6e6) == "2.5 MWh"
    assert plural(1, "node") == "1 node" and plural(4, "node") == "4 nodes"


def test_rejected_capacity_rows_have_no_latency() -> None:
    sc = app.load_scenario(str(EXAMPLES / "capacity-llama70b-10k-users.yaml"))
    r = app.capacity(sc, ["nvidia-h100-sxm5-80gb"])
    rejected = [o for o in r.options if o.verdict.startswith("rejected")]
    assert rejected, "tp1 bf16 70B on an 80 GB H100 leaves no KV room"
    assert all(o.ttft_s is None and o.tpot_s is None for o in rejected)
    rows = r.to_dict()["alternatives"]
    assert all(o["ttft_s"] is None for o in rows if o["verdict"].startswith("rejected"))


def test_same_bill_verdict_signs() -> None:
    # a row 4 cents an hour cheaper and 9 cents cheaper per million tokens is not "$-0.09 more"
    text = same_bill_verdict(-0.04, -0.09)
    assert "-" not in text and "$0.09 less" in text and "$0.04/h less" in text
    assert "$0.12 more per million" in same_bill_verdict(0.2, 0.12)


def test_launch_year_printed_without_separator() -> None:
    res = run_cli("catalog", "show", "nvidia-h100-sxm5-80gb")
    line = next(line for line in res.stdout.splitlines() if line.strip().startswith("launch_year"))
    assert line.split()[-1] == "2022"


def test_did_you_mean_keeps_the_leading_part() -> None:
    res = run_cli("infer", str(EXAMPLES / "infer-llama3.1-70b-h100.yaml"), "--set", "hardware.accelerator=nvidia-h1000")
    assert res.returncode == 2
    assert "did you mean nvidia-h100-" in res.stderr


def test_one_rtx_4090_needs_no_per_node() -> None:
    sc = app.load_scenario(
        str(EXAMPLES / "infer-llama3.1-70b-h100.yaml"),
        set=[
            "hardware.accelerator=nvidia-rtx-4090",
            "hardware.count=1",
            "model=meta-llama-3.1-8b",
            "inference.plan.tp=1",
        ],
    )
    assert sc.cluster.per_node == 1 and sc.cluster.nodes == 1


def test_reference_scenario_draft_model_is_in_the_catalog() -> None:
    import re

    from aiinfra import catalog

    text = (EXAMPLES / "scenario-reference.yaml").read_text()
    drafts = re.findall(r"draft_model:\s*([\w.\-]+)", text)
    assert drafts
    for d in drafts:
        assert catalog.model(d).id == d


def test_model_config_resolves_beside_the_scenario_and_is_named_by_the_checkpoint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    cfg = json.loads((EXAMPLES / "configs" / "tiny-llama-config.json").read_text())
    cfg["_name_or_path"] = "acme/tiny-llama"
    folder = tmp_path / "scen"
    (folder / "cfg").mkdir(parents=True)
    (folder / "cfg" / "config.json").write_text(json.dumps(cfg))
    (folder / "s.yaml").write_text(
        "model: {config: cfg/config.json}\nhardware: {accelerator: nvidia-h100-sxm5-80gb, count: 1}\n"
    )
    sc = app.load_scenario(str(folder / "s.yaml"))  # the working directory is the repository, not the folder
    assert sc.model.name == "acme/tiny-llama"
    del cfg["_name_or_path"]
    (folder / "cfg" / "config.json").write_text(json.dumps(cfg))
    assert app.load_scenario(str(folder / "s.yaml")).model.name == "cfg"  # else its folder


def test_tco_honours_cost_providers_unless_tco_names_its_own() -> None:
    ref = str(EXAMPLES / "scenario-reference.yaml")
    lines = app.tco(app.load_scenario(ref, set=["cost.providers=[aws]"])).cloud_lines
    assert lines and {ln.provider for ln in lines} == {"aws"}
    lines = app.tco(app.load_scenario(ref, set=["cost.providers=[aws]", "tco.providers=[lambda]"])).cloud_lines
    assert lines and {ln.provider for ln in lines} == {"lambda"}
    assert "providers:" in (EXAMPLES / "scenario-reference.yaml").read_text().split("\ntco:")[1]


def test_purchase_prices_listed_and_shown() -> None:
    # purchase.csv: the DGX A100 launch list price, $199,000 (May 2020)
    r = app.purchase_list("nvidia-a100-sxm4-40gb")
    dgx = next(p for p in r.purchases if p.id == "purchase-dgx-a100-launch")
    assert dgx.unit_price_usd == 199000 and dgx.kind == "system"
    res = run_cli("catalog", "list", "purchases")
    assert res.returncode == 0 and "purchase-dgx-a100-launch" in res.stdout and "199,000" in res.stdout
    shown = app.catalog_show("purchase-dgx-a100-launch").to_dict()
    assert shown["kind"] == "purchases" and shown["purchase_kind"] == "system"


def test_sweep_frame_error_column_is_empty_not_nan(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from aiinfra.app.sweep import read_frame
    from aiinfra.sweeping.store import ResultStore

    store = ResultStore(tmp_path / "r", {"question": "infer", "options": {}})
    store.write([{"scenario_hash": "h1", "error": None, "v": 1.0}, {"scenario_hash": "h2", "error": "error: bad"}])
    assert read_frame(tmp_path / "r")["error"].tolist() == ["", "error: bad"]
    ok_only = ResultStore(tmp_path / "s", {"question": "infer", "options": {}})
    ok_only.write([{"scenario_hash": "h1", "error": None, "v": 1.0}])
    assert read_frame(tmp_path / "s")["error"].tolist() == [""]


def test_gh200_is_its_own_accelerator_with_two_memory_tiers() -> None:
    from aiinfra import catalog

    # NVIDIA GH200 datasheet: 96 GB HBM3 at 4 TB/s (or 144 GB HBM3e at 4.9 TB/s), up to 480 GB LPDDR5X at 512 GB/s,
    # NVLink-C2C 900 GB/s two-way = 450 GB/s each way; dense BF16 = 1,979 sparse / 2
    a = catalog.accelerator("nvidia-gh200-96gb")
    assert (a.memory_bytes, a.memory_bw_bytes_per_s, a.memory_type) == (96e9, 4.0e12, "HBM3")
    assert (a.host_memory_bytes, a.host_memory_bw_bytes_per_s, a.host_memory_type) == (480e9, 0.512e12, "LPDDR5X")
    assert a.host_link is not None and a.host_link.bw_one_way_bytes_per_s == 450e9
    assert a.dense_flop_per_s["bf16"] == pytest.approx(a.sparse_flop_per_s["bf16"] / 2, rel=1e-4)
    b = catalog.accelerator("nvidia-gh200-144gb")
    assert (b.memory_bytes, b.memory_bw_bytes_per_s, b.memory_type) == (144e9, 4.9e12, "HBM3e")
    hw = {"accelerator": "nvidia-gh200-96gb", "system": "gh200-grace-hopper", "count": 1}
    sc = app.load_scenario({"model": "meta-llama-3.1-8b", "hardware": hw})
    assert sc.cluster.accelerator.id == "nvidia-gh200-96gb"
