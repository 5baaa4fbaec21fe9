"""Cost, energy, datacenter and TCO against hand calculations."""

from __future__ import annotations

import json
import math

import pytest

from aiinfra.costing.energy import annual_power_cost_usd
from aiinfra.costing.fabric import fat_tree
from aiinfra.costing.tco import breakeven, cloud_monthly_usd, cumulative
from aiinfra.reliability.checkpoint import preemption_waste_frac, young_daly_interval_s

from .conftest import EXAMPLES, run_cli


def test_fat_tree_k64() -> None:
    two = fat_tree(2048, 64)  # k²/2 = 2,048 hosts: 64 leaves + 32 spines
    assert (two.tiers, two.leaf_switches, two.spine_switches, two.switches) == (2, 64, 32, 96)
    assert two.max_endpoints == 64 * 64 // 2
    three = fat_tree(65536, 64)  # k³/4 = 65,536 hosts with 5k²/4 = 5,120 switches (Al-Fares et al. 2008)
    assert (three.tiers, three.switches) == (3, 5 * 64 * 64 // 4)
    assert fat_tree(40, 64).tiers == 1
    assert fat_tree(2049, 64).tiers == 3


def test_oversubscribed_leaf() -> None:
    # 3:1 oversubscription: each 64-port leaf has 48 down and 16 up ports
    f = fat_tree(480, 64, oversubscription=3.0)
    assert f.leaf_switches == 10 and f.switch_links == 10 * 16


def test_seed_dgx_annual_power() -> None:
    # seed: 10.2 kW × 8,760 h × $0.10/kWh = $8,935.20 (the seed rounds to ~$9,000); with PUE 1.58: × 1.58
    assert annual_power_cost_usd(10_200, 0.10) == pytest.approx(8935.20)
    assert annual_power_cost_usd(10_200, 0.10, 1.58) == pytest.approx(8935.20 * 1.58)


def test_young_daly() -> None:
    # √(2 · 60 s · 3600 s) = 657.3 s; waste = 60/657.3 + 657.3/7200 + 120/3600
    tau = young_daly_interval_s(60, 3600)
    assert tau == pytest.approx(math.sqrt(2 * 60 * 3600))
    assert preemption_waste_frac(60, 3600, 120) == pytest.approx(60 / tau + tau / 7200 + 120 / 3600)


def test_breakeven_arithmetic() -> None:
    # on-prem $1,000 up front + $100/month vs cloud $300/month: 1000 + 100 m ≤ 300 m from m = 5
    assert breakeven(cumulative(1000, 100, 12), cumulative(0, 300, 12)) == 5
    assert breakeven(cumulative(1000, 300, 12), cumulative(0, 300, 12)) is None
    # on-demand pays 730 h × utilisation; reserved pays every hour
    assert cloud_monthly_usd(2.0, 8, "on-demand", 0.5) == pytest.approx(2.0 * 8 * 365)
    assert cloud_monthly_usd(2.0, 8, "reserved-1y", 0.5) == pytest.approx(2.0 * 8 * 730)


def test_cost_cli_energy_matches_hand_calculation() -> None:
    res = run_cli("cost", str(EXAMPLES / "cost-dgx-h100-power.yaml"), "--json")
    assert res.returncode == 0, res.stderr
    e = json.loads(res.stdout)["energy"]
    # DGX H100 at 10.2 kW max for 8,760 h, PUE 1.0: 89,352 kWh, $8,935.20; CO2 at 412.72 g/kWh (GCP us-central1)
    assert e["energy_kwh"] == pytest.approx(89_352)
    assert e["electricity_cost_usd"] == pytest.approx(8935.2)
    assert e["co2e_kg"] == pytest.approx(89_352 * 412.72 / 1000)


def test_cost_lists_prices_with_age() -> None:
    res = run_cli("cost", str(EXAMPLES / "cost-dgx-h100-power.yaml"), "--json")
    opts = json.loads(res.stdout)["options"]
    assert opts and all("price_read_on" in o and o["price_age_days"] >= 0 for o in opts)
    assert [o["compute_usd"] for o in opts] == sorted(o["compute_usd"] for o in opts)


def test_datacenter_cli() -> None:
    res = run_cli("datacenter", str(EXAMPLES / "datacenter-dgx-h100-pod.yaml"), "--json")
    obj = json.loads(res.stdout)
    # 32 DGX H100 at 10.2 kW, 41 kW racks → 4 per rack → 8 racks; 256 NIC ports → 2-tier, radix 64
    assert (obj["nodes"], obj["nodes_per_rack"], obj["racks"]) == (32, 4, 8)
    assert obj["cooling"] == "liquid" and obj["fabric"]["tiers"] == 2
    assert obj["it_power_w"] == pytest.approx(32 * 10_200)


def test_tco_cli_and_plot(tmp_path) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("tco", str(EXAMPLES / "tco-dgx-h100-vs-cloud.yaml"), "--json", "--plot", str(tmp_path))
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    assert obj["capex_usd"] == pytest.approx(4 * 300_000 * 1.15)
    assert (tmp_path / "tco.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "tco.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a file where the plot directory should be: exit 2 naming --plot, before any work
    clash = run_cli("tco", str(EXAMPLES / "tco-dgx-h100-vs-cloud.yaml"), "--plot", str(tmp_path / "tco.png"))
    assert clash.returncode == 2 and "--plot" in clash.stderr and "Traceback" not in clash.stderr


@pytest.mark.parametrize(
    ("cmd", "sets", "words"),
    [
        ("cost", ["cost.carbon_region=us-central"], ["cost.carbon_region", "did you mean"]),
        ("cost", ["cost.pue=-1"], ["cost.pue", "≥ 1 and ≤ 3"]),
        ("cost", ["cost.bogus=1"], ["cost.bogus", "unknown key"]),
        ("tco", ["tco.system_price_usd=null"], ["tco.system_price_usd"]),
        ("tco", ["tco.utilisation_frac=1.5"], ["tco.utilisation_frac"]),
        ("datacenter", ["datacenter.switch_radix=0"], ["datacenter.switch_radix"]),
    ],
)
def test_bad_input(cmd: str, sets: list[str], words: list[str]) -> None:
    example = {
        "cost": "cost-dgx-h100-power.yaml",
        "tco": "tco-dgx-h100-vs-cloud.yaml",
        "datacenter": "datacenter-dgx-h100-pod.yaml",
    }[cmd]
    res = run_cli(cmd, str(EXAMPLES / example), *[x for s in sets for x in ("--set", s)])
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    for w in words:
        assert w.lower() in res.stderr.lower(), res.stderr


def test_checkpoint_storage_bandwidth() -> None:
    res = run_cli(
        "datacenter",
        str(EXAMPLES / "datacenter-dgx-h100-pod.yaml"),
        "--set",
        "datacenter.checkpoint_write_s=60",
        "--json",
    )
    st = json.loads(res.stdout)["storage"]
    # Llama-3.1-70B: 70,553,706,496 params × (2 B bf16 + 12 B fp32 master, m, v) = 987.75 GB; / 60 s
    assert st["checkpoint_bytes"] == pytest.approx(70_553_706_496 * 14)
    assert st["checkpoint_write_bw_bytes_per_s"] == pytest.approx(70_553_706_496 * 14 / 60)
