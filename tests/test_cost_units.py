"""Cost, energy, spot, fabric, racks and TCO functions against hand calculations written here."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra import catalog
from aiinfra.app.tables import price_book
from aiinfra.costing import Usage
from aiinfra.costing.carbon import co2e_kg, intensity
from aiinfra.costing.cloud import cloud_options
from aiinfra.costing.datacenter import racks, storage_need
from aiinfra.costing.energy import annual_power_cost_usd, energy, power_draw
from aiinfra.costing.fabric import (
    fat_tree,
    full_switches,
    leaf_spine,
    max_endpoints,
    rail_optimised,
    transceiver_power_w,
)
from aiinfra.costing.prices import InstancePrice, age_days, cloud_prices, facility, grid_carbon_rows
from aiinfra.costing.spot import spot_run
from aiinfra.costing.tco import CloudLine, OnPremInputs, breakeven, cloud_monthly_usd, cumulative, onprem, tco
from aiinfra.errors import InfeasibleError, UnknownIdError
from aiinfra.reliability.checkpoint import checkpoint_bytes_per_param, preemption_waste_frac, young_daly_interval_s
from aiinfra.report.plots import tco_plot
from aiinfra.specs.common import validate
from aiinfra.specs.cost import CostInput

H100 = "nvidia-h100-sxm5-80gb"


# --- fabric (Al-Fares et al. 2008) ---------------------------------------------------------------------------


def test_fat_tree_k64_full_sizes() -> None:
    assert max_endpoints(64, 2) == 2_048  # k²/2
    assert max_endpoints(64, 3) == 65_536  # k³/4
    assert (full_switches(64, 2), full_switches(64, 3)) == (96, 5_120)  # 3k/2, 5k²/4
    two = fat_tree(2_048, 64)  # 64 leaves (32 down, 32 up) + 2,048 uplinks / 64 ports = 32 spines
    assert (two.tiers, two.leaf_switches, two.spine_switches, two.switches, two.switch_links) == (2, 64, 32, 96, 2_048)
    three = fat_tree(65_536, 64)  # 2,048 edge + 64 pods × 32 agg + 32² core = 5,120; edge-agg + agg-core = 2 × k³/4
    assert (three.tiers, three.leaf_switches, three.spine_switches, three.core_switches) == (3, 2_048, 2_048, 1_024)
    assert three.switches == 5_120 and three.switch_links == 2 * 65_536
    assert fat_tree(40, 64).tiers == 1  # fits one 64-port switch
    assert fat_tree(2_049, 64).tiers == 3
    with pytest.raises(InfeasibleError):
        fat_tree(65_537, 64)
    with pytest.raises(InfeasibleError):
        leaf_spine(2_049, 64)


def test_oversubscribed_leaf() -> None:
    # 3:1 at radix 64: 48 down, 16 up per leaf; 480 endpoints -> 10 leaves, 160 uplinks, 3 spines (160/64)
    f = fat_tree(480, 64, oversubscription=3.0)
    assert (f.leaf_switches, f.switch_links, f.spine_switches) == (10, 160, 3)
    assert f.max_endpoints == 48 * 64


def test_rail_optimised_scalable_unit() -> None:
    # 32 DGX × 8 rails at radix 64: one 32-down leaf per rail = 8 leaves, 8 × 32 = 256 uplinks, 4 spines
    su = rail_optimised(32, 8, 64)
    assert (su.tiers, su.leaf_switches, su.spine_switches, su.switch_links, su.endpoints) == (2, 8, 4, 256, 256)
    # 64 nodes: 2 leaves per rail = 16 leaves, 512 uplinks, 8 spines
    two_su = rail_optimised(64, 8, 64)
    assert (two_su.leaf_switches, two_su.spine_switches, two_su.switch_links) == (16, 8, 512)
    # 40 nodes: 32 + 8 down-ports per rail -> 16 leaves, uplinks 8 × (32 + 8) = 320
    assert rail_optimised(40, 8, 64).switch_links == 320


def test_transceiver_power_research_note() -> None:
    # 2-tier k=64, 2,048 hosts: 2,048 NIC ends × 9 W + 3 × 1,024 twin-port modules × 17 W = 70,656 W
    f = fat_tree(2_048, 64)
    assert transceiver_power_w(f, 17 / 2, 9) == pytest.approx(2_048 * 9 + 3 * 1_024 * 17)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60_000), st.sampled_from([16, 32, 64, 128]), st.sampled_from([1.0, 2.0, 3.0]))
def test_fabric_has_enough_ports(endpoints: int, radix: int, r: float) -> None:
    try:
        f = fat_tree(endpoints, radix, r)
    except InfeasibleError:
        assert endpoints > max_endpoints(radix, 3) * r / 2  # only huge fabrics are refused
        return
    ports = f.switches * radix
    assert ports >= f.host_links + 2 * f.switch_links  # every link end sits on a switch port
    assert f.endpoints <= f.max_endpoints or f.tiers == 1


# --- energy and carbon ---------------------------------------------------------------------------------------


def test_seed_dgx_annual_power() -> None:
    # 10.2 kW × 8,760 h × $0.10/kWh = $8,935.20 (the seed's "~$9,000"); × PUE 1.58 = $14,117.62
    assert annual_power_cost_usd(10_200, 0.10) == pytest.approx(8_935.20)
    assert annual_power_cost_usd(10_200, 0.10, 1.58) == pytest.approx(14_117.616)


def test_dgx_power_draw_from_catalog() -> None:
    acc, dgx = catalog.accelerator(H100), catalog.system("dgx-h100")
    u = Usage(accelerator_id=H100, accelerator_count=8, duration_s=8_760 * 3_600)
    p = power_draw(u, acc, dgx)
    # 8 × 700 W = 5.6 kW; host = 10.2 kW − 5.6 kW = 4.6 kW; IT = 10.2 kW
    assert (p.accelerator_power_w, p.host_overhead_power_w, p.it_power_w) == pytest.approx((5_600, 4_600, 10_200))
    e = energy(u, acc, dgx, 1.3, 0.10, intensity("gcp-us-central1-2024", grid_carbon_rows(price_book())))
    assert e.energy_kwh == pytest.approx(10.2 * 8_760 * 1.3)
    assert e.electricity_cost_usd == pytest.approx(10.2 * 8_760 * 1.3 * 0.10)
    assert e.co2e_kg == pytest.approx(10.2 * 8_760 * 1.3 * 412.72 / 1_000)
    # half utilisation halves power; one GPU of a DGX carries 1/8 of the host overhead
    half = power_draw(Usage(accelerator_id=H100, accelerator_count=8, duration_s=1, utilisation_frac=0.5), acc, dgx)
    assert half.it_power_w == pytest.approx(5_100)
    one = power_draw(Usage(accelerator_id=H100, accelerator_count=1, duration_s=1), acc, dgx)
    assert one.it_power_w == pytest.approx(700 + 4_600 / 8)


def test_power_without_system_is_flagged() -> None:
    acc = catalog.accelerator(H100)
    p = power_draw(Usage(accelerator_id=H100, accelerator_count=8, duration_s=1), acc, None)
    assert p.host_overhead_power_w is None and p.it_power_w == pytest.approx(5_600)
    assert any("overhead unknown" in n for n in p.notes)


def test_carbon() -> None:
    assert co2e_kg(1_000, 400) == pytest.approx(400)
    with pytest.raises(UnknownIdError, match="did you mean"):
        intensity("gcp-us-central1", grid_carbon_rows(price_book()))


# --- spot (Young 1974 / Daly 2006) ---------------------------------------------------------------------------


def test_young_daly() -> None:
    tau = young_daly_interval_s(60, 3_600)  # √(2 · 60 s · 3,600 s) = 657.3 s
    assert tau == pytest.approx(math.sqrt(2 * 60 * 3_600))
    assert preemption_waste_frac(60, 3_600, 120) == pytest.approx(60 / tau + tau / 7_200 + 120 / 3_600)


def test_spot_run_hand_calculation() -> None:
    # 4 instances × 0.05 preemptions/instance-hour -> M = 3,600 / 0.2 = 18,000 s; δ = 120 s, R = 600 s
    r = spot_run(100 * 3_600, 4, 0.05, 120, 600)
    tau = math.sqrt(2 * 120 * 18_000)  # 2,078.5 s
    waste = 120 / tau + tau / 36_000 + 600 / 18_000  # 0.1488
    assert r.mtbf_s == pytest.approx(18_000) and r.checkpoint_interval_s == pytest.approx(tau)
    assert r.waste_frac == pytest.approx(waste)
    assert r.wall_s == pytest.approx(360_000 / (1 - waste))
    assert r.expected_interruptions_count == pytest.approx(360_000 / (1 - waste) / 18_000)
    # the wall clock is exactly useful work + checkpoint writes + lost work + restarts
    assert r.wall_s is not None and r.lost_work_s is not None and r.restart_total_s is not None
    assert r.checkpoint_overhead_s is not None
    assert r.wall_s == pytest.approx(360_000 + r.checkpoint_overhead_s + r.lost_work_s + r.restart_total_s)
    hopeless = spot_run(3_600, 100, 10, 600, 600)  # M = 3.6 s: never finishes
    assert not hopeless.feasible and hopeless.wall_s is None


# --- cloud bill ----------------------------------------------------------------------------------------------


def _price(pricing: str, usd_per_hour: float) -> InstancePrice:
    return InstancePrice(
        id=f"test-{pricing}",
        source_title="test fixture",
        source_url=None,
        read_on="2026-01-01",
        age_days=10,
        provider="testcloud",
        instance="t8",
        region="nowhere",
        accelerator=H100,
        accelerators_per_instance=8,
        pricing=pricing,
        usd_per_hour=usd_per_hour,
    )


def test_cloud_bill_itemised() -> None:
    u = Usage(accelerator_id=H100, accelerator_count=16, duration_s=10 * 3_600, tokens=1e9, checkpoint_bytes=1e11)
    ci = validate(
        CostInput,
        {
            "storage_usd_per_gb_month": 0.02,
            "dataset_bytes": 1e12,
            "checkpoints_kept": 2,
            "egress_usd_per_gb": 0.09,
            "egress_bytes": 1e11,
        },
        where="cost",
    )
    (o,) = cloud_options(u, [_price("on-demand", 20.0)], ci, grid_carbon=())
    assert o.instances == 2 and o.compute_usd == pytest.approx(2 * 10 * 20.0)  # 2 × 10 h × $20
    items = {i.item: i for i in o.items}
    # (1,000 GB + 2 × 100 GB) × 10/730 month × $0.02
    assert items["storage"].cost_usd == pytest.approx(1_200 * 10 / 730 * 0.02)
    assert items["egress"].cost_usd == pytest.approx(100 * 0.09)
    assert items["networking"].cost_usd is None and "networking_usd_per_hour" in items["networking"].source
    assert set(o.unknown_items) == {"networking", "monitoring"}
    assert o.total_known_usd == pytest.approx(400 + 1_200 * 10 / 730 * 0.02 + 9)
    assert o.usd_per_million_tokens == pytest.approx(o.total_known_usd * 1e6 / 1e9)


def test_spot_option_is_stretched_and_sorted() -> None:
    u = Usage(accelerator_id=H100, accelerator_count=32, duration_s=100 * 3_600)
    ci = validate(
        CostInput,
        {"spot": {"interruptions_per_instance_per_hour": 0.05, "checkpoint_write_s": 120, "restart_s": 600}},
        where="cost",
    )
    opts = cloud_options(u, [_price("on-demand", 30.0), _price("spot", 10.0)], ci, grid_carbon=())
    spot = next(o for o in opts if o.price.pricing == "spot")
    assert spot.spot is not None and spot.billed_hours == pytest.approx(spot.spot.wall_s / 3_600)  # type: ignore[operator]
    assert spot.compute_usd == pytest.approx(4 * 10.0 * spot.billed_hours)
    assert [o.price.pricing for o in opts] == ["spot", "on-demand"]


def test_catalog_prices_are_dated() -> None:
    rows = cloud_prices(price_book(), H100)
    assert rows, "no H100 prices in prices/cloud.csv"
    assert all(r.read_on and r.age_days is not None and r.age_days >= 0 for r in rows)
    per_acc = [r.usd_per_accelerator_hour for r in rows]
    assert per_acc == sorted(per_acc)
    assert age_days("2026-01-01") is not None and age_days("undated") is None


# --- racks, storage ------------------------------------------------------------------------------------------


def test_racks_and_cooling() -> None:
    # 32 DGX H100 at 10.2 kW: 41 kW racks hold 4 (40.8 kW, liquid above 30 kW); 30 kW racks hold 2 (20.4 kW, air)
    dense = racks(32, 10_200, 41_000, 30_000, 1.3)
    assert (dense.nodes_per_rack, dense.racks, dense.rack_power_w, dense.cooling) == (4, 8, 40_800, "liquid")
    assert dense.facility_power_w == pytest.approx(32 * 10_200 * 1.3)
    air = racks(32, 10_200, 30_000, 30_000, 1.3)
    assert (air.nodes_per_rack, air.racks, air.cooling) == (2, 16, "air")
    with pytest.raises(InfeasibleError, match="rack_power_limit_kw"):
        racks(1, 10_200, 8_000, 30_000, 1.3)
    assert facility(price_book(), "rack-air-cooling-limit").value > 0


def test_checkpoint_bytes() -> None:
    assert checkpoint_bytes_per_param("bf16", "adam") == 14  # 2 + 4 master + 8 (m, v)
    assert checkpoint_bytes_per_param("fp32", "adam") == 12  # no separate master copy
    assert checkpoint_bytes_per_param("bf16", "sgd") == 10
    s = storage_need(1e12, "test", 100, 1e6, 4)
    assert s.checkpoint_write_bw_bytes_per_s == pytest.approx(1e10) and s.data_feed_bw_bytes_per_s == 4e6


# --- TCO -----------------------------------------------------------------------------------------------------


def test_breakeven_arithmetic() -> None:
    # $1,000 up front + $100/month vs $300/month: 1,000 + 100 m ≤ 300 m from m = 5
    assert breakeven(cumulative(1_000, 100, 12), cumulative(0, 300, 12)) == 5
    assert breakeven(cumulative(1_000, 300, 12), cumulative(0, 300, 12)) is None
    assert cloud_monthly_usd(2.0, 8, "on-demand", 0.5) == pytest.approx(2.0 * 8 * 365)
    assert cloud_monthly_usd(2.0, 8, "reserved-1y", 0.5) == pytest.approx(2.0 * 8 * 730)


def test_tco_startup_hand_calculation() -> None:
    op = onprem(
        OnPremInputs(
            nodes=4,
            system_price_usd=300_000,
            node_max_power_w=10_200,
            utilisation_frac=0.9,
            pue_ratio=1.3,
            usd_per_kwh=0.0859,
            network_capex_usd=180_000,
            colocation_usd_per_kw_month=184.06,
            staff_usd_per_year=120_000,
            years=5,
        )
    )
    power = 40.8 * 0.9 * 1.3 * 730 * 0.0859  # $2,993.41/month
    colo = 184.06 * 40.8  # $7,509.65/month (capacity, used or not)
    assert op.capex_usd == 1_380_000
    assert op.opex_breakdown_usd_per_month["power_usd"] == pytest.approx(power)
    assert op.opex_usd_per_month == pytest.approx(power + colo + 10_000)
    assert op.depreciation_usd_per_month == pytest.approx(1_380_000 / 60)
    cloud = CloudLine(
        pricing="on-demand",
        source_id="x",
        provider="p",
        read_on="2026-01-01",
        age_days=1,
        usd_per_accelerator_hour=2.79,
        monthly_usd=cloud_monthly_usd(2.79, 32, "on-demand", 0.9),
    )
    t = tco(op, [cloud], 60)
    exact = 1_380_000 / (2.79 * 32 * 730 * 0.9 - (power + colo + 10_000))  # 1.38M / (58,657 − 20,503) ≈ 36.2
    assert t.breakeven_exact_months["on-demand:x"] == pytest.approx(exact)
    assert t.breakeven_month["on-demand:x"] == math.ceil(exact)
    assert t.breakeven_month["on-demand:x"] == breakeven(t.onprem_cumulative_usd, t.cloud_cumulative_usd["on-demand:x"])
    import tempfile

    with tempfile.TemporaryDirectory() as out:
        svg = Path(tco_plot(Path(out), t, "test")[1]).read_text()  # the breakeven month is marked on the plot
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg") and "month 37" in svg
