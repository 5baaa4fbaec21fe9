"""`aiinfra cost`, `datacenter`, `tco` from the shell: JSON parses, hand-calculated numbers, bad input -> exit 2."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from aiinfra.cli import main

from .conftest import EXAMPLES, run_cli_process

DGX_POWER = str(EXAMPLES / "cost-dgx-h100-power.yaml")
POD = str(EXAMPLES / "cost-dgx-pod-datacenter.yaml")
TCO = str(EXAMPLES / "cost-tco-startup.yaml")
SERVE = str(EXAMPLES / "cost-serve-70b-5-regions.yaml")


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run the CLI in this process (fast); exit code and captured output, like a subprocess."""

    def run(*args: str) -> Result:
        code = main(list(args))
        out = capsys.readouterr()
        return Result(code, out.out, out.err)

    return run


@pytest.fixture
def cli_json(cli):  # type: ignore[no-untyped-def]
    def run(*args: str) -> dict:  # type: ignore[type-arg]
        res = cli(*args, "--json")
        assert res.returncode == 0, res.stderr
        obj = json.loads(res.stdout)
        assert isinstance(obj, dict)
        return obj

    return run


def test_cost_dgx_year_matches_hand_calculation(cli_json) -> None:  # type: ignore[no-untyped-def]
    obj = cli_json("cost", DGX_POWER)
    e = obj["energy"]
    # one DGX H100 at its 10.2 kW maximum for 8,760 h, PUE 1.0: 89,352 kWh, $8,935.20 at $0.10; 412.72 g/kWh
    assert e["it_power_w"] == pytest.approx(10_200)
    assert e["energy_kwh"] == pytest.approx(89_352)
    assert e["electricity_cost_usd"] == pytest.approx(8_935.20)
    assert e["co2e_kg"] == pytest.approx(89_352 * 412.72 / 1_000)
    assert obj["carbon_region"]["read_on"] and obj["carbon_region"]["age_days"] >= 0
    # with the default PUE row (Uptime 2023 global average 1.58): × 1.58
    d = cli_json("cost", DGX_POWER, "--set", "cost.pue=null")
    assert d["pue"]["id"] == "pue-uptime-global-2023"
    assert d["energy"]["electricity_cost_usd"] == pytest.approx(8_935.20 * d["pue"]["value"])


def test_cost_typical_node_power_row(cli_json) -> None:  # type: ignore[no-untyped-def]
    # facility row dgx-h100-power-typical-low (6.5 kW, secondary source): 6.5 × 8,760 × $0.10 = $5,694.00
    obj = cli_json("cost", DGX_POWER, "--set", "cost.node_power=dgx-h100-power-typical-low")
    assert obj["energy"]["it_power_w"] == pytest.approx(6_500)
    assert obj["energy"]["electricity_cost_usd"] == pytest.approx(5_694.0)
    assert obj["node_power"]["id"] == "dgx-h100-power-typical-low" and obj["node_power"]["age_days"] >= 0


def test_cost_options_dated_and_sorted(cli_json) -> None:  # type: ignore[no-untyped-def]
    obj = cli_json("cost", DGX_POWER)
    opts = obj["options"]
    assert opts and all(o["price_read_on"] and o["price_age_days"] >= 0 for o in opts)
    costs = [o["compute_usd"] for o in opts]
    assert costs == sorted(costs)
    cheapest = obj["cheapest"]
    # a year on one 8-GPU instance: compute = 8,760 h × the instance's hourly price
    assert cheapest["compute_usd"] == pytest.approx(8_760 * cheapest["price_usd_per_hour"])
    items = {i["item"]: i for i in cheapest["items"]}
    assert items["storage"]["cost_usd"] is None and "storage_usd_per_gb_month" in items["storage"]["source"]


def test_cost_spot_preemptions_in_output(cli_json) -> None:  # type: ignore[no-untyped-def]
    obj = cli_json(
        "cost",
        DGX_POWER,
        "--set",
        "cost.spot={interruptions_per_instance_per_hour: 0.05, checkpoint_write_s: 120, restart_s: 600}",
        "--set",
        "cost.pricing=[spot]",
    )
    spot = obj["options"][0]
    assert spot["pricing"] == "spot" and spot["spot"]["expected_interruptions_count"] > 0
    # 1 instance: M = 72,000 s, τ = √(2·120·72,000) = 4,157 s; waste = 120/τ + τ/144,000 + 600/72,000
    tau = (2 * 120 * 72_000) ** 0.5
    waste = 120 / tau + tau / 144_000 + 600 / 72_000
    assert spot["spot"]["waste_frac"] == pytest.approx(waste)
    assert spot["billed_hours"] == pytest.approx(8_760 / (1 - waste))


def test_cost_serving_usage_block(cli_json) -> None:  # type: ignore[no-untyped-def]
    obj = cli_json("cost", SERVE)
    assert obj["duration_source"] == "cost.usage.duration_s"
    assert all(o["pricing"] != "spot" for o in obj["options"])
    assert obj["cheapest"]["usd_per_million_tokens"] > 0


def test_datacenter_pod(cli_json) -> None:  # type: ignore[no-untyped-def]
    obj = cli_json("datacenter", POD)
    # 32 DGX H100 at 10.2 kW in 41 kW racks: 4 per rack, 8 racks, liquid (above 30 kW); 8 rails of 32 at radix 64
    assert (obj["nodes"], obj["nodes_per_rack"], obj["racks"], obj["cooling"]) == (32, 4, 8, "liquid")
    assert obj["it_power_w"] == pytest.approx(32 * 10_200)
    assert obj["facility_power_w"] == pytest.approx(32 * 10_200 * 1.3)
    fab = obj["fabric"]
    assert (fab["topology"], fab["tiers"], fab["leaf_switches"], fab["spine_switches"]) == ("rail-optimised", 2, 8, 4)
    # Llama-3.1-70B: 70,553,706,496 params × 14 B = 987.75 GB; written in 60 s = 16.46 GB/s
    st = obj["storage"]
    assert st["checkpoint_bytes"] == pytest.approx(70_553_706_496 * 14)
    assert st["checkpoint_write_bw_bytes_per_s"] == pytest.approx(70_553_706_496 * 14 / 60)
    assert st["data_feed_bw_bytes_per_s"] == pytest.approx(st["tokens_per_s"] * 4)
    assert obj["network_cost_usd"]["switches_usd"] is None  # no switch price in the catalog: unknown
    priced = cli_json("datacenter", POD, "--set", "datacenter.switch_price_usd=25000")
    assert priced["network_cost_usd"]["switches_usd"] == 12 * 25_000


def test_tco_cli_and_plot(tmp_path: Path, cli_json) -> None:  # type: ignore[no-untyped-def]
    obj = cli_json("tco", TCO, "--plot", str(tmp_path))
    assert obj["plots"] == [str(tmp_path / "tco.png"), str(tmp_path / "tco.svg")]
    assert obj["capex_usd"] == pytest.approx(4 * 300_000 * 1.15)
    assert obj["colocation_source"].startswith("colocation-na-2024h2")
    for line in obj["cloud"]:
        key = f"{line['pricing']}:{line['source_id']}"
        exact = obj["breakeven_exact_months"][key]
        gap = line["monthly_usd"] - obj["monthly_opex_usd"]
        assert exact == (pytest.approx(obj["capex_usd"] / gap) if gap > 0 else None)
        assert line["read_on"] and line["age_days"] >= 0
    ET.fromstring((tmp_path / "tco.svg").read_text())


@pytest.mark.parametrize(
    ("cmd", "example", "sets", "words"),
    [
        ("cost", DGX_POWER, ["cost.carbon_region=us-central"], ["cost.carbon_region", "did you mean"]),
        ("cost", DGX_POWER, ["cost.pue=-1"], ["cost.pue", "≥ 1 and ≤ 3"]),
        ("cost", DGX_POWER, ["cost.bogus=1"], ["cost.bogus", "unknown key"]),
        (
            "cost",
            DGX_POWER,
            ["cost.electricity_usd_per_kwh=null", "cost.electricity_price=eia-iowa"],
            ["cost.electricity_price", "did you mean"],
        ),
        ("cost", DGX_POWER, ["cost.electricity_price=eia-iowa-industrial-2025-04"], ["give one of the two"]),
        ("cost", DGX_POWER, ["cost.usage.duration_s=null"], ["cost.usage.duration_s", "set cost.usage.duration_s"]),
        ("cost", DGX_POWER, ["cost.usage.utilisation_frac=1.5"], ["cost.usage.utilisation_frac", "≤ 1"]),
        ("cost", DGX_POWER, ["cost.spot={checkpoint_write_s: 60}"], ["cost.spot", "missing"]),
        ("cost", DGX_POWER, ["cost.pricing=[cheap]"], ["cost.pricing", "on-demand"]),
        ("cost", DGX_POWER, ["cost.node_power=dgx-h100-typical"], ["cost.node_power", "did you mean"]),
        ("cost", DGX_POWER, ["cost.node_power=pue-uptime-global-2023"], ["pue-uptime-global-2023", "kw"]),
        ("tco", TCO, ["tco.system_price_usd=null"], ["tco.system_price_usd", "set tco.system_price_usd"]),
        ("tco", TCO, ["tco.utilisation_frac=1.5"], ["tco.utilisation_frac"]),
        ("tco", TCO, ["tco.electricity_price=null"], ["tco.electricity_usd_per_kwh"]),
        ("tco", TCO, ["tco.years=0"], ["tco.years", "≥ 1"]),
        ("datacenter", POD, ["datacenter.switch_radix=0"], ["datacenter.switch_radix"]),
        ("datacenter", POD, ["datacenter.topology=torus"], ["datacenter.topology", "rail-optimised"]),
        ("datacenter", POD, ["datacenter.rack_power_limit_kw=8"], ["rack_power_limit_kw"]),
        ("datacenter", POD, ["datacenter.switch_purchase_id=qm9700"], ["datacenter.switch_purchase_id"]),
    ],
)
def test_bad_input(cli, cmd: str, example: str, sets: list[str], words: list[str]) -> None:  # type: ignore[no-untyped-def]
    res = cli(cmd, example, *[x for s in sets for x in ("--set", s)])
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    for w in words:
        assert w.lower() in res.stderr.lower(), res.stderr


@pytest.mark.parametrize(("cmd", "example"), [("cost", DGX_POWER), ("datacenter", POD), ("tco", TCO)])
def test_json_is_one_object(cmd: str, example: str) -> None:
    res = run_cli_process(cmd, example, "--json")  # a real process: its stdout holds exactly one JSON object
    assert res.returncode == 0, res.stderr
    assert isinstance(json.loads(res.stdout), dict)
