"""Price refresh from recorded provider offers (gpuhunt's catalog format, tests/data/gpuhunt; no network): GPU name
and count mapping to catalog ids (MIG slices, multi-GPU instances, TPU slices), de-duplication, the newer-row rule,
stale marks, and the overlay read by cost, capacity and tco."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path

import pytest

from aiinfra import app
from aiinfra.app.prices import offer_name_table
from aiinfra.app.tables import price_book
from aiinfra.catalog import Catalog, use
from aiinfra.costing.offers import (
    Mapped,
    Offer,
    Unmapped,
    map_offer,
    offer_from_item,
    price_rows,
    read_gpuhunt_csv,
)
from aiinfra.costing.prices import cloud_prices, dated_today, freshness, is_stale
from aiinfra.costing.refresh import RefreshError, files_fetcher, refresh
from aiinfra.errors import SpecError

from .conftest import EXAMPLES, run_cli, run_cli_process

RECORDED = Path(__file__).parent / "data" / "gpuhunt"
PROVIDERS = ["aws", "gcp", "azure", "lambdalabs", "runpod", "vastai", "nebius", "oci", "vultr"]
TODAY = date(2026, 11, 26)


def offer(**kw: object) -> Offer:
    base: dict[str, object] = {
        "provider": "aws",
        "instance_name": "x",
        "location": "us-east-1",
        "usd_per_hour": 1.0,
        "gpu_count": 1,
        "gpu_name": "H100",
        "gpu_memory_gb": 80.0,
        "spot": False,
        "gpu_vendor": "nvidia",
    }
    base.update(kw)
    return Offer(**base)  # type: ignore[arg-type]


def mapped(o: Offer) -> Mapped:
    m = map_offer(o, offer_name_table())
    assert isinstance(m, Mapped), m
    return m


def unmapped(o: Offer) -> Unmapped:
    m = map_offer(o, offer_name_table())
    assert isinstance(m, Unmapped), m
    return m


@pytest.fixture(scope="module")
def overlay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The recorded offers of nine providers refreshed into an overlay folder, dated 2026-11-26."""
    out = tmp_path_factory.mktemp("refreshed")
    refresh(PROVIDERS, out, files_fetcher(RECORDED), today=TODAY, source="recorded", name_table=offer_name_table())
    return out


@pytest.fixture
def refreshed(overlay: Path) -> Iterator[Catalog]:
    with dated_today(TODAY), use(Catalog.default().with_overlay(overlay)) as cat:
        yield cat


def written(overlay: Path) -> dict[str, dict[str, str]]:
    with (overlay / "prices" / "cloud.csv").open(newline="") as fh:
        return {r["id"]: r for r in csv.DictReader(fh)}


# -- mapping names and counts ------------------------------------------------------------------------------------


def test_recorded_files_are_in_gpuhunts_own_format() -> None:
    """gpuhunt's own reader (when installed) reads every recorded file to CatalogItems that the live seam turns
    into exactly the offers our reader gives."""
    storage = pytest.importorskip("gpuhunt._internal.storage")
    for p in PROVIDERS:
        with (RECORDED / f"{p}.csv").open() as fh:
            theirs = [offer_from_item(i) for i in storage.load(fh, provider=p)]
        assert theirs == read_gpuhunt_csv(RECORDED / f"{p}.csv", p)


@pytest.mark.parametrize(
    ("kw", "accelerator", "count"),
    [
        # one part under the name and memory: mapped from the name table
        ({"gpu_name": "L4", "gpu_memory_gb": 24.0, "instance_name": "g6.xlarge"}, "nvidia-l4", 1),
        (
            {"gpu_name": "H200", "gpu_memory_gb": 141.0, "gpu_count": 8, "instance_name": "gpu-h200-sxm 8gpu"},
            "nvidia-h200-sxm-141gb",
            8,
        ),
        ({"gpu_name": "MI300X", "gpu_memory_gb": 192.0, "gpu_count": 8, "gpu_vendor": "amd"}, "amd-mi300x", 8),
        # H100 80 GB is SXM5 or PCIe: the instance name says which (form token, or the memory type HBM3 = SXM5)
        ({"instance_name": "gpu_8x_h100_sxm5", "gpu_count": 8}, "nvidia-h100-sxm5-80gb", 8),
        ({"instance_name": "gpu_1x_h100_pcie"}, "nvidia-h100-pcie-80gb", 1),
        ({"instance_name": "NVIDIA H100 80GB HBM3"}, "nvidia-h100-sxm5-80gb", 1),
        # ... or a shipped row of the same instance does (aws p5.48xlarge is priced as H100 SXM5 in cloud.csv)
        ({"instance_name": "p5.48xlarge", "gpu_count": 8}, "nvidia-h100-sxm5-80gb", 8),
        (
            {"provider": "azure", "instance_name": "Standard_NC24ads_A100_v4", "gpu_name": "A100"},
            "nvidia-a100-pcie-80gb",
            1,
        ),
        # a fraction of a GPU whose memory names exactly one MIG profile: H100 NVL 94 GB / 8 memory slices = 1g.12gb
        ({"provider": "vultr", "gpu_name": "H100NVL", "gpu_memory_gb": 12.0}, "nvidia-h100-nvl-94gb/1g.12gb", 1),
        # TPU slices: v5p counts TensorCores (2 per chip: v5p-8 = 4 chips), v5e (v5litepod) and v6e count chips
        ({"provider": "gcp", "gpu_vendor": "google", "gpu_name": "v5p-8", "gpu_memory_gb": 95.0}, "google-tpu-v5p", 4),
        (
            {"provider": "gcp", "gpu_vendor": "google", "gpu_name": "v5litepod-8", "gpu_memory_gb": 128.0},
            "google-tpu-v5e",
            8,
        ),
    ],
)
def test_gpu_names_and_counts_map_to_catalog_ids(kw: dict[str, object], accelerator: str, count: int) -> None:
    m = mapped(offer(**kw))
    assert (m.accelerator, m.accelerators_per_instance) == (accelerator, count)


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        ({"instance_name": "a3-highgpu-1g"}, "does not say which"),  # H100 80 GB, no form: listed, not guessed
        ({"gpu_name": "A100", "gpu_memory_gb": 40.0, "instance_name": "gpu_1x_a100"}, "does not say which"),
        ({"gpu_name": "A100", "gpu_memory_gb": 40.0, "instance_name": "a100_pcie_40"}, "no such part in the catalog"),
        ({"gpu_name": "T4", "gpu_memory_gb": 16.0}, "not in offer_names.yaml"),
        ({"gpu_name": "V100", "gpu_memory_gb": 16.0}, "no catalog accelerator for V100 16 GB"),
        # 24 GB of an H100 NVL is both 1g.24gb and 2g.24gb: which is not said
        ({"gpu_name": "H100NVL", "gpu_memory_gb": 24.0}, "1g.24gb and 2g.24gb"),
        ({"gpu_name": "RTXPRO6000", "gpu_memory_gb": 12.0}, "no MIG profiles"),
        (
            {"provider": "gcp", "provider_data": {"is_dws_calendar_mode": True}, "instance_name": "a3-highgpu-8g"},
            "DWS calendar mode",
        ),
    ],
)
def test_offers_that_cannot_be_mapped_are_listed_with_why(kw: dict[str, object], why: str) -> None:
    assert why in unmapped(offer(**kw)).reason


def test_cpu_only_offers_are_skipped() -> None:
    cpu = offer(gpu_count=0, gpu_name=None, gpu_memory_gb=None, gpu_vendor=None)
    assert map_offer(cpu, offer_name_table()) is None


def test_pricing_kind_region_and_provider_names() -> None:
    m = mapped(offer(provider="gcp", instance_name="a3-highgpu-8g", location="us-central1-b", spot=True, gpu_count=8))
    assert (m.provider, m.region, m.pricing) == ("gcp", "us-central1", "spot")  # zone -> region
    lam = mapped(offer(provider="lambdalabs", instance_name="gpu_8x_h100_sxm5", gpu_count=8))
    assert lam.provider == "lambda"  # the catalog's name for gpuhunt's lambdalabs


# -- de-duplication ----------------------------------------------------------------------------------------------


def test_duplicates_collapse_to_one_row_at_the_lowest_price() -> None:
    zones = [
        mapped(offer(provider="gcp", instance_name="a3-highgpu-8g", location=z, usd_per_hour=p, gpu_count=8))
        for z, p in (("us-central1-a", 88.0), ("us-central1-b", 88.0), ("us-central1-c", 90.0))
    ]
    rows = price_rows(zones, "2026-11-26", "t")
    assert len(rows) == 1
    assert rows[0].usd_per_hour == 88.0 and "3 offers" in rows[0].notes and "88-90" in rows[0].notes


def test_one_gpu_type_sold_in_several_sizes_gives_one_row_per_size() -> None:
    pods = [
        mapped(
            offer(
                provider="runpod",
                instance_name="NVIDIA H100 80GB HBM3",
                location="US-KS-2",
                usd_per_hour=p,
                gpu_count=n,
            )
        )
        for n, p in ((1, 2.69), (8, 21.52))
    ]
    rows = price_rows(pods, "2026-11-26", "t")
    assert sorted((r.instance, r.accelerators_per_instance, r.usd_per_hour) for r in rows) == [
        ("1x NVIDIA H100 80GB HBM3", 1, 2.69),
        ("8x NVIDIA H100 80GB HBM3", 8, 21.52),
    ]


def test_marketplace_listings_are_one_offer_per_gpu_count_and_place() -> None:
    listings = [
        mapped(
            offer(
                provider="vastai",
                instance_name=i,
                location="US",
                usd_per_hour=p,
                gpu_name="RTX4090",
                gpu_memory_gb=24.0,
            )
        )
        for i, p in (("27650011", 0.35), ("27650012", 0.41))
    ]
    rows = price_rows(listings, "2026-11-26", "t")
    assert [(r.instance, r.usd_per_hour) for r in rows] == [("1x RTX4090 listing", 0.35)]


# -- the refresh -------------------------------------------------------------------------------------------------


def test_refresh_writes_every_provider_each_row_sourced_and_dated(overlay: Path) -> None:
    rows = written(overlay)
    assert {r["provider"] for r in rows.values()} >= {
        "aws",
        "gcp",
        "azure",
        "lambda",
        "runpod",
        "vastai",
        "nebius",
        "oci",
        "vultr",
    }
    assert all(r["read_on"] == "2026-11-26" and r["source_title"] and r["source_url"] for r in rows.values())
    # the exact duplicate p5 row of aws.csv is one row; its price is the recorded one
    p5 = [r for r in rows.values() if r["instance"] == "p5.48xlarge" and r["pricing"] == "on-demand"]
    assert [(r["accelerator"], r["accelerators_per_instance"], float(r["usd_per_hour"])) for r in p5] == [
        ("nvidia-h100-sxm5-80gb", "8", 55.04)
    ]
    text = (overlay / "REFRESH.md").read_text()
    assert "a3-highgpu-1g" in text and "DWS calendar mode" in text  # the unmapped offers are listed


def test_one_provider_failing_writes_the_others_and_names_it(tmp_path: Path) -> None:
    def fetch(provider: str) -> Sequence[Offer]:
        if provider == "gcp":
            raise ConnectionError("gcp catalog: connection refused")
        return files_fetcher(RECORDED)(provider)

    rep = refresh(["aws", "gcp"], tmp_path, fetch, today=TODAY, name_table=offer_name_table())
    assert rep.failed == {"gcp": "gcp catalog: connection refused"}
    assert {r.provider for r in rep.rows} == {"aws"}
    assert "gcp: gcp catalog: connection refused" in (tmp_path / "REFRESH.md").read_text()


def test_no_network_writes_nothing(tmp_path: Path) -> None:
    def offline(provider: str) -> Sequence[Offer]:
        raise OSError("[Errno -3] Temporary failure in name resolution")

    with pytest.raises(RefreshError, match="no provider could be read, nothing written"):
        refresh(["aws", "gcp"], tmp_path / "out", offline, today=TODAY, name_table=offer_name_table())
    assert not (tmp_path / "out").exists()


def test_cli_refresh_without_network_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "no-offers"
    empty.mkdir()
    res = run_cli("prices", "refresh", "--offers", str(empty), "--providers", "aws,gcp", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "nothing written" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "o").exists()


# -- which row is used ------------------------------------------------------------------------------------------


def test_the_newer_row_of_the_same_offer_wins(refreshed: Catalog) -> None:
    """aws-p5-48xlarge-us-east-1-on-demand is shipped at $98.32 read 2026-11-22; the refresh read $55.04 on
    2026-11-26: only the newer row is used."""
    p5 = [
        p
        for p in cloud_prices(price_book(), "nvidia-h100-sxm5-80gb", pricing=("on-demand",))
        if p.provider == "aws" and p.instance == "p5.48xlarge" and p.region == "us-east-1"
    ]
    assert [(p.usd_per_hour, p.read_on, p.age_days) for p in p5] == [(55.04, "2026-11-26", 0)]


def test_an_older_refreshed_row_loses_to_a_newer_shipped_one(tmp_path: Path) -> None:
    # read before 2026-11-22
    rep = refresh(["aws"], tmp_path, files_fetcher(RECORDED), today=date(2026, 1, 5), name_table=offer_name_table())
    assert rep.rows
    with dated_today(TODAY), use(Catalog.default().with_overlay(tmp_path)):
        p5 = [
            p
            for p in cloud_prices(price_book(), "nvidia-h100-sxm5-80gb", pricing=("on-demand",))
            if p.instance == "p5.48xlarge" and p.region == "us-east-1"
        ]
    assert [(p.id, p.usd_per_hour) for p in p5] == [("aws-p5-48xlarge-us-east-1-on-demand", 98.32)]


def test_a_user_overlay_row_with_the_shipped_id_replaces_it(tmp_path: Path) -> None:
    (tmp_path / "prices").mkdir()
    (tmp_path / "prices" / "cloud.csv").write_text(
        "id,provider,instance,region,accelerator,accelerators_per_instance,pricing,usd_per_hour,source_title,"
        "source_url,read_on,notes\naws-p5-48xlarge-us-east-1-on-demand,aws,p5.48xlarge,us-east-1,"
        "nvidia-h100-sxm5-80gb,8,on-demand,40,my quote,,2026-10-01,\n"
    )
    with dated_today(TODAY), use(Catalog.default().with_overlay(tmp_path)):
        rows = cloud_prices(price_book(), "nvidia-h100-sxm5-80gb")
        p5 = [p for p in rows if p.id == "aws-p5-48xlarge-us-east-1-on-demand"]
    assert [(p.usd_per_hour, p.age_days) for p in p5] == [(40.0, 56)]  # 2026-10-01 -> 2026-11-26


def test_the_refreshed_folder_is_read_by_default(overlay: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIINFRA_PRICES_DIR", str(overlay))
    Catalog.forget_user_default()  # the setting changed inside this process
    with dated_today(TODAY):
        ids = {p.id for p in app.price_list("nvidia-l4").prices}
    assert "aws-g6-xlarge-us-east-1-on-demand-2026-11-26" in ids
    monkeypatch.setenv("AIINFRA_PRICES_DIR", "off")
    Catalog.forget_user_default()
    assert all(not i.endswith("2026-11-26") for i in {p.id for p in app.price_list("nvidia-l4").prices})


# -- stale marks -------------------------------------------------------------------------------------------------


def test_stale_after_90_days() -> None:
    assert not is_stale(90) and is_stale(91) and is_stale(None)
    f = freshness("2026-04-01", 239)
    assert f["stale"] and f["price_age_days"] == 239 and f["refresh_command"] == "aiinfra prices refresh"
    assert freshness("2026-11-26", 0)["refresh_command"] is None


def test_age_counts_to_the_injected_date() -> None:
    """runpod-secure-8x-h100-on-demand was read 2026-04-01: 239 days to 2026-11-26, 30 days to 2026-05-01."""

    def age(day: date) -> int | None:
        with dated_today(day):
            rows = cloud_prices(price_book(), "nvidia-h100-sxm5-80gb")
            return next(p.age_days for p in rows if p.id == "runpod-secure-8x-h100-on-demand")

    assert (age(TODAY), age(date(2026, 5, 1))) == (239, 30)


# -- the answers use the refreshed rows --------------------------------------------------------------------------


def test_cost_uses_the_refreshed_rows_with_their_dates(refreshed: Catalog) -> None:
    """cost-train-70b-32xh100 on spot: the recorded aws p5 spot offer ($11.20 per 8-GPU instance-hour = $1.40 per
    GPU-hour) undercuts the shipped Vast.ai spot row ($12.16 = $1.52), so it is the cheapest, dated today."""
    r = app.cost(app.load_scenario(str(EXAMPLES / "cost-train-70b-32xh100.yaml"), ["cost.pricing=[spot]"]))
    d = r.to_dict()
    assert d["cheapest"]["price_id"] == "aws-p5-48xlarge-us-east-1-spot-2026-11-26"
    assert (d["cheapest"]["price_usd_per_hour"], d["price_read_on"], d["price_age_days"], d["stale"]) == (
        11.2,
        "2026-11-26",
        0,
        False,
    )
    shipped_spot = next(o for o in d["options"] if o["price_id"] == "vastai-8x-h100-spot")
    assert shipped_spot["stale"] and shipped_spot["price_age_days"] == 239


def test_tco_uses_the_refreshed_rows_with_their_dates(refreshed: Catalog) -> None:
    """tco-dgx-h100-vs-cloud: the cheapest on-demand line is now nebius at $15.92 per 8-GPU instance-hour =
    $1.99 per GPU-hour (shipped: runpod Secure Cloud at $22.32 = $2.79)."""
    r = app.tco(app.load_scenario(str(EXAMPLES / "tco-dgx-h100-vs-cloud.yaml")))
    od = next(ln for ln in r.cloud_lines if ln.pricing == "on-demand")
    assert (od.source_id, round(od.usd_per_accelerator_hour, 4), od.read_on, od.age_days, od.stale) == (
        "nebius-gpu-h100-sxm-8gpu-128vcpu-1600gb-eu-north1-on-demand-2026-11-26",
        1.99,
        "2026-11-26",
        0,
        False,
    )
    cheapest = r.cloud_lines[0]
    assert r.to_dict()["price_age_days"] == cheapest.age_days and r.to_dict()["stale"] == cheapest.stale


def test_capacity_prices_with_the_refreshed_rows(refreshed: Catalog) -> None:
    """capacity-llama70b-10k-users reduced to 50 users: the whole-instance bill uses the cheapest on-demand
    offer; the recorded runpod 1-GPU H100 pod ($2.69, read 2026-11-26) ties the shipped one ($2.69, 2026-11-24)
    per GPU-hour, the refreshed 8-GPU nebius instance is $1.99 per GPU-hour."""
    sc = app.load_scenario(str(EXAMPLES / "capacity-llama70b-10k-users.yaml"), ["inference.users=50"])
    d = app.capacity(sc).to_dict()
    assert d["price_read_on"] == "2026-11-26" and d["price_age_days"] == 0 and d["stale"] is False
    assert d["chosen"]["price"]["source_id"].endswith("-2026-11-26")


def test_price_list_marks_stale_rows(refreshed: Catalog) -> None:
    rows = app.price_list("nvidia-h100-sxm5-80gb").to_dict()["rows"]
    by_id = {r["id"]: r for r in rows}
    assert by_id["runpod-secure-8x-h100-on-demand"]["stale"] is True
    assert by_id["lambda-gpu-8x-h100-sxm5-us-east-1-on-demand-2026-11-26"]["stale"] is False


def test_diff_names_old_and_new_per_offer_and_the_examples_effect(refreshed: Catalog, tmp_path: Path) -> None:
    ex = tmp_path / "examples"
    ex.mkdir()
    (ex / "cost-train-70b-32xh100.yaml").write_text((EXAMPLES / "cost-train-70b-32xh100.yaml").read_text())
    d = app.price_diff(ex).to_dict()
    p5 = next(
        c
        for c in d["changes"]
        if c["instance"] == "p5.48xlarge" and c["region"] == "us-east-1" and c["pricing"] == "on-demand"
    )
    assert (p5["old"]["usd_per_hour"], p5["new"]["usd_per_hour"]) == (98.32, 55.04)
    assert p5["change_frac"] == pytest.approx(55.04 / 98.32 - 1)
    assert any(c["old"] is None and c["provider"] == "nebius" for c in d["changes"])
    [effect] = d["examples"]
    assert effect["before"]["price_id"] == "vastai-8x-h100-spot"
    assert effect["after"]["price_id"] == "aws-p5-48xlarge-us-east-1-spot-2026-11-26"
    assert effect["after"]["price_read_on"] == "2026-11-26"


def test_refresh_refuses_a_file_as_out(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(SpecError, match="--out"):
        app.prices_refresh(["aws"], f, RECORDED, today=TODAY)


def test_cli_reads_the_refreshed_folder_and_an_explicit_overlay_on_top(
    overlay: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`aiinfra cost` with the refreshed folder as default and a user's row given by --catalog-overlay: the user's
    newer row (2026-11-25 > the shipped 2026-04-01) wins its offer, the refreshed rows stay, stale rows are marked
    in text and JSON."""
    monkeypatch.setenv("AIINFRA_PRICES_DIR", str(overlay))
    monkeypatch.setenv("AIINFRA_TODAY", "2026-11-26")
    (tmp_path / "prices").mkdir()
    (tmp_path / "prices" / "cloud.csv").write_text(
        "id,provider,instance,region,accelerator,accelerators_per_instance,pricing,usd_per_hour,source_title,"
        "source_url,read_on,notes\nmy-vastai-quote,vastai,8x H100 marketplace,us,nvidia-h100-sxm5-80gb,8,spot,"
        "8.0,my quote,,2026-11-25,\n"
    )
    args = (
        "cost",
        str(EXAMPLES / "cost-train-70b-32xh100.yaml"),
        "--set",
        "cost.pricing=[spot]",
        "--catalog-overlay",
        str(tmp_path),
    )
    res = run_cli_process(*args, "--json")  # a fresh process: AIINFRA_PRICES_DIR is read at start
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    ids = [o["price_id"] for o in d["options"]]
    assert d["cheapest"]["price_id"] == "my-vastai-quote" and d["price_age_days"] == 1 and d["stale"] is False
    assert "vastai-8x-h100-spot" not in ids  # the same offer, older: replaced by the newer row
    assert "aws-p5-48xlarge-us-east-1-spot-2026-11-26" in ids  # the refreshed rows are still in use
    example = str(EXAMPLES / "cost-train-70b-32xh100.yaml")
    text = run_cli_process("cost", example, "--catalog-overlay", str(tmp_path)).stdout
    assert "2026-11-25 (1 d)" in text  # every pricing kind: the reserved rows read 2023-07-27 are stale
    assert "2023-07-27 (1218 d) STALE" in text and "`aiinfra prices refresh`" in text


def test_refresh_into_the_default_folder_is_used_by_every_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIINFRA_PRICES_DIR", str(tmp_path / "cache"))
    r = app.prices_refresh(["nebius"], None, RECORDED, today=TODAY)
    assert r.default_overlay and r.to_dict()["rows_written"] == 4
    with dated_today(TODAY):
        ids = {p.id for p in app.price_list("nvidia-h200-sxm-141gb").prices}
    assert "nebius-gpu-h200-sxm-8gpu-128vcpu-1600gb-eu-north1-spot-2026-11-26" in ids
    monkeypatch.delenv("AIINFRA_PRICES_DIR")
    Catalog.forget_user_default()


def test_a_superseded_shipped_row_can_still_be_shown(refreshed: Catalog) -> None:
    row = app.catalog_show("aws-p5-48xlarge-us-east-1-on-demand").to_dict()
    assert (row["kind"], row["usd_per_hour"]) == ("prices", 98.32)
