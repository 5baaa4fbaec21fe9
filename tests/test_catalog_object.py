"""The Catalog object: overlays, the active catalog, per-instance caches and the on-disk parse cache."""

from __future__ import annotations

import copy
import csv
import dataclasses
import pickle
from pathlib import Path
from typing import Any

import pytest
import yaml

from aiinfra import catalog
from aiinfra.app.tables import efficiency_table, price_book
from aiinfra.catalog import Catalog
from aiinfra.catalog.parse import cache_dir, load_rows, parse_file
from aiinfra.catalog.resolve import load_scenario
from aiinfra.catalog.tables import domain_tables
from aiinfra.costing.prices import cloud_prices
from aiinfra.errors import SpecError, UnknownIdError
from aiinfra.planning.capacity import cheapest_price
from aiinfra.planning.inference import estimate_inference
from aiinfra.planning.training import plan_training

ROOT = Path(__file__).resolve().parents[1]
H100 = "nvidia-h100-sxm5-80gb"
SOURCE = {"title": "test fixture: a copy of the shipped H100 SXM5 row", "url": None, "read_on": "2026-11-23"}


def _raw(kind: str, id_: str) -> dict[str, Any]:
    return copy.deepcopy(next(r for r in Catalog.default().raw_rows(kind) if r["id"] == id_))


def _write(folder: Path, name: str, rows: list[dict[str, Any]]) -> None:
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(yaml.safe_dump(rows, sort_keys=False))


def _clone_overlay(folder: Path, new_id: str = "acme-h100-clone") -> Path:
    """An overlay holding a copy of the H100 SXM5 row under ``new_id`` and copies of its systems."""
    acc = {**_raw("accelerators", H100), "id": new_id, "sources": [SOURCE]}
    systems = [
        {**copy.deepcopy(s), "id": f"acme-{s['id']}", "accelerator": new_id}
        for s in Catalog.default().raw_rows("systems")
        if s.get("accelerator") == H100
    ]
    _write(folder, "accelerators.yaml", [acc])
    _write(folder, "systems.yaml", systems)
    return folder


def test_overlay_adds_a_row_and_the_default_keeps_its_rows(tmp_path: Path) -> None:
    cat = Catalog.default().with_overlay(_clone_overlay(tmp_path))
    assert cat.accelerator("acme-h100-clone").memory_bytes == 80 * 2**30  # the H100's 80 GiB, copied
    assert "acme-h100-clone" not in Catalog.default().rows("accelerators")
    with pytest.raises(UnknownIdError):
        catalog.accelerator("acme-h100-clone")


def test_overlay_replaces_a_row_in_place(tmp_path: Path) -> None:
    row = {**_raw("accelerators", H100), "tdp_w": 500, "sources": [SOURCE]}
    _write(tmp_path, "accelerators.yaml", [row])
    cat = Catalog.default().with_overlay(tmp_path)
    assert cat.accelerator(H100).tdp_w == 500.0
    assert list(cat.rows("accelerators")) == list(Catalog.default().rows("accelerators"))  # same order, no new id
    assert Catalog.default().accelerator(H100).tdp_w == 700.0  # NVIDIA H100 SXM5 datasheet: up to 700 W


def test_overlay_row_without_sources_names_file_row_and_field(tmp_path: Path) -> None:
    row = _raw("accelerators", H100)
    row["id"] = "acme-nosource"
    del row["sources"]
    _write(tmp_path, "accelerators.yaml", [row])
    with pytest.raises(SpecError) as err:
        Catalog.default().with_overlay(tmp_path)
    assert "accelerators.yaml[acme-nosource].sources" in err.value.field
    assert "sources:" in err.value.fix


def test_overlay_row_failing_validation_is_a_spec_error_naming_the_field(tmp_path: Path) -> None:
    row = {**_raw("accelerators", H100), "id": "acme-bad", "sources": [SOURCE], "tdp_w": "lots"}
    _write(tmp_path, "accelerators.yaml", [row])
    with pytest.raises(SpecError) as err:
        Catalog.default().with_overlay(tmp_path)
    assert "accelerators.yaml[acme-bad]" in err.value.field and "tdp_w" in err.value.field


def test_overlay_rejects_a_file_it_cannot_hold(tmp_path: Path) -> None:
    _write(tmp_path, "models.yaml", [])
    with pytest.raises(SpecError, match=r"models\.yaml"):
        Catalog.default().with_overlay(tmp_path)


def _price_row(**over: str) -> dict[str, str]:
    row = {
        "id": "acme-cloud-h100-on-demand",
        "provider": "acme",
        "instance": "h100x8",
        "region": "moon-1",
        "accelerator": H100,
        "accelerators_per_instance": "8",
        "pricing": "on-demand",
        "usd_per_hour": "8.0",
        "source_title": "acme price page (test fixture)",
        "source_url": "",
        "read_on": "2026-11-01",
        "notes": "",
    }
    return {**row, **over}


def _write_prices(folder: Path, rows: list[dict[str, str]]) -> Path:
    (folder / "prices").mkdir(parents=True, exist_ok=True)
    with (folder / "prices" / "cloud.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return folder


def test_overlay_price_row_is_used_by_both_price_readers(tmp_path: Path) -> None:
    cat = Catalog.default().with_overlay(_write_prices(tmp_path, [_price_row()]))
    with catalog.use(cat):
        assert "acme-cloud-h100-on-demand" in [p.id for p in cloud_prices(price_book(), H100)]
        best = cheapest_price(price_book(), H100)
    assert best is not None and best.source_id == "acme-cloud-h100-on-demand"
    assert best.usd_per_accelerator_hour == 1.0  # 8 USD per hour for 8 accelerators
    assert "acme-cloud-h100-on-demand" not in [p.id for p in cloud_prices(price_book(), H100)]


def test_overlay_price_row_without_a_source_is_rejected(tmp_path: Path) -> None:
    _write_prices(tmp_path, [_price_row(source_title="")])
    with pytest.raises(SpecError) as err:
        Catalog.default().with_overlay(tmp_path)
    assert err.value.field.endswith("cloud.csv[acme-cloud-h100-on-demand].source_title")


def _flat_gemm_overlay(tmp_path: Path) -> Catalog:
    """An overlay whose clone of the H100 has a flat 0.5 bf16 GEMM curve (row gemm-bf16-acme-test)."""
    row = {
        "id": "gemm-bf16-acme-test",
        "kind": "gemm",
        "accelerators": ["acme-h100-clone"],
        "dtype": "bf16",
        "x": "flop",
        "points": [[1e9, 0.5], [1e12, 0.5]],
        "provenance": "measured",
        "sources": [SOURCE],
    }
    folder = _clone_overlay(tmp_path)
    _write(folder, "efficiency.yaml", [row])
    return Catalog.default().with_overlay(folder)


def test_overlay_efficiency_row_wins_for_its_part_and_stays_in_its_catalog(tmp_path: Path) -> None:
    cat = _flat_gemm_overlay(tmp_path)
    with catalog.use(cat):
        look = efficiency_table().lookup("gemm", "acme-h100-clone", 1e11, dtype="bf16")
    assert (look.frac, look.source) == (0.5, "gemm-bf16-acme-test")
    assert all(c.id != "gemm-bf16-acme-test" for c in efficiency_table().curves)


def test_a_cluster_carries_the_tables_of_its_catalog(tmp_path: Path) -> None:
    """A cluster resolved against an overlay reads the overlay's rows wherever it is priced (no active catalog is
    read below the application layer): the overlay's flat 0.5 GEMM curve for its part, outside the ``use`` block."""
    from aiinfra.analytic.efficiency import table
    from aiinfra.analytic.kernel_time import gemm_efficiency
    from aiinfra.catalog.resolve import cluster_for

    cat = _flat_gemm_overlay(tmp_path)
    with catalog.use(cat):
        cluster = cluster_for("acme-h100-clone", 8)
    assert cluster.tables is domain_tables(cat) and cluster.tables is not domain_tables()
    assert gemm_efficiency(cluster.tables, cluster.accelerator, "bf16", 1e11) == 0.5
    assert table(cluster.tables).curve("gemm", "acme-h100-clone", dtype="bf16")[1] == "gemm-bf16-acme-test"
    assert all(c.id != "gemm-bf16-acme-test" for c in table(domain_tables()).curves)


def test_trial_factors_answer_every_calibration_lookup_and_share_what_is_derived() -> None:
    from aiinfra.analytic.efficiency import table
    from aiinfra.specs.calibration import NEUTRAL, Factors

    tables = domain_tables()
    factors = Factors(compute_efficiency_scale=0.5, source="trial")
    trial = tables.with_trial(factors)
    assert trial.factors_for("training", H100) is factors
    assert trial.factors_for("inference", "amd-mi300x", "vllm") is factors
    assert tables.factors_for("training", H100) == NEUTRAL  # the shipped catalog has no calibration rows
    assert table(trial) is table(tables)  # the efficiency table is built once per catalog, trials included


def test_a_resolved_scenario_is_answered_against_the_catalog_in_force(tmp_path: Path) -> None:
    from aiinfra.app import load_scenario as app_load_scenario

    sc = app_load_scenario(str(ROOT / "examples" / "infer-llama3.1-70b-h100.yaml"))
    assert sc.cluster.tables is domain_tables()
    cat = Catalog.default().with_overlay(_clone_overlay(tmp_path))
    with catalog.use(cat):
        assert app_load_scenario(sc).cluster.tables is domain_tables(cat)
    assert app_load_scenario(sc) is sc


def test_use_isolates_and_restores_the_active_catalog(tmp_path: Path) -> None:
    default = catalog.active()
    cat = Catalog.default().with_overlay(_clone_overlay(tmp_path))
    before = estimate_inference(load_scenario(str(ROOT / "examples" / "infer-llama3.1-70b-h100.yaml")))
    with catalog.use(cat):
        assert catalog.active() is cat
        assert catalog.accelerator("acme-h100-clone").id == "acme-h100-clone"
    assert catalog.active() is default
    with pytest.raises(RuntimeError), catalog.use(cat):
        raise RuntimeError("the block fails")
    assert catalog.active() is default
    after = estimate_inference(load_scenario(str(ROOT / "examples" / "infer-llama3.1-70b-h100.yaml")))
    assert dataclasses.asdict(after) == dataclasses.asdict(before)


def _numbers(obj: Any) -> dict[str, float]:
    return {k: v for k, v in dataclasses.asdict(obj).items() if isinstance(v, int | float) and not k.endswith("wall_s")}


def test_overlay_accelerator_copy_plans_like_the_original(tmp_path: Path) -> None:
    """A new accelerator row needs no code: a copy under a new id (family, generation and vendor copied with it)
    gives the original's inference and training figures through the planners."""
    cat = Catalog.default().with_overlay(_clone_overlay(tmp_path))
    infer = str(ROOT / "examples" / "infer-llama3.1-70b-h100.yaml")
    train = str(ROOT / "examples" / "train-llama3.1-70b-h100.yaml")
    inf_orig = estimate_inference(load_scenario(infer))
    tr_orig = plan_training(load_scenario(train))
    with catalog.use(cat):
        inf_copy = estimate_inference(load_scenario(infer, ["hardware.accelerator=acme-h100-clone"]))
        tr_copy = plan_training(load_scenario(train, ["hardware.accelerator=acme-h100-clone"]))
    assert inf_copy.accelerator == "acme-h100-clone"
    assert _numbers(inf_copy) == _numbers(inf_orig)
    assert [_numbers(e) for e in tr_copy.estimates] == [_numbers(e) for e in tr_orig.estimates]


@pytest.mark.parametrize(
    ("family", "generation", "vendor", "expected"),
    [
        ("nvidia-h100", "nvidia-hopper", "nvidia", 1),  # same family as the H100 SXM5 curve
        ("acme-x1", "nvidia-hopper", "nvidia", 2),  # same generation only
        ("acme-x1", "acme-gen1", "nvidia", 3),  # same vendor only
        ("acme-x1", "acme-gen1", "acme", 4),  # nothing shared
    ],
)
def test_donor_similarity_comes_from_the_rows_fields(
    tmp_path: Path, family: str, generation: str, vendor: str, expected: int
) -> None:
    acc = {
        **_raw("accelerators", H100),
        "id": "acme-x1",
        "family": family,
        "generation": generation,
        "vendor": vendor,
        "sources": [SOURCE],
    }
    _write(tmp_path, "accelerators.yaml", [acc])
    with catalog.use(Catalog.default().with_overlay(tmp_path)):
        curve = next(c for c in efficiency_table().curves if c.accelerators == (H100,))
        assert efficiency_table().similarity("acme-x1", curve) == expected
        assert efficiency_table().similarity(H100, curve) == 0


def test_shipped_rows_carry_family_and_vendor() -> None:
    for acc in catalog.rows("accelerators").values():
        assert acc.family and acc.vendor, acc.id
    assert catalog.accelerator(H100).generation == "nvidia-hopper"
    assert catalog.accelerator("amd-mi300x").generation == "amd-cdna3"


def test_caches_are_per_catalog_instance(tmp_path: Path) -> None:
    cat = Catalog.default().with_overlay(_clone_overlay(tmp_path))
    with catalog.use(cat):
        overlay_table = efficiency_table()
    assert efficiency_table() is not overlay_table
    assert efficiency_table() is efficiency_table()  # built once for the default catalog


# ---------------------------------------------------------------------------------------- on-disk parse cache


def test_cache_hit_equals_a_fresh_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("AIINFRA_NO_CACHE", raising=False)
    shipped = Catalog.default()
    names = ["accelerators.yaml", "systems.yaml", "engines.yaml", "efficiency.yaml", "prices/cloud.csv"]
    for name in names:
        first = load_rows(shipped.path(name))  # writes the entry
        assert first == parse_file(shipped.path(name))
    assert len(list((tmp_path / "cache" / "aiinfra").glob("*.pickle"))) == len(names)  # one entry per file
    for name in names:
        assert load_rows(shipped.path(name)) == parse_file(shipped.path(name))  # read from the entry
    for kind in catalog.KINDS:
        Catalog(shipped.root).rows(kind)  # validates and stores
    hits = {kind: Catalog(shipped.root).rows(kind) for kind in catalog.KINDS}  # read back
    monkeypatch.setenv("AIINFRA_NO_CACHE", "1")
    fresh = Catalog(shipped.root)
    for kind in catalog.KINDS:
        assert hits[kind] == fresh.rows(kind) and list(hits[kind]) == list(fresh.rows(kind))


def test_cache_entry_is_not_used_after_the_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    data = tmp_path / "rows.yaml"
    data.write_text("- {id: a, value: 1}\n")
    assert load_rows(data) == [{"id": "a", "value": 1}]
    data.write_text("- {id: a, value: 22}\n")
    assert load_rows(data) == [{"id": "a", "value": 22}]


def test_corrupt_or_unwritable_cache_never_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "rows.yaml"
    data.write_text("- {id: a, value: 1}\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    load_rows(data)
    for entry in (tmp_path / "cache" / "aiinfra").glob("*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert load_rows(data) == [{"id": "a", "value": 1}]
    for entry in (tmp_path / "cache" / "aiinfra").glob("*.pickle"):
        entry.write_bytes(pickle.dumps(("wrong identity", [{"id": "stale"}])))
    assert load_rows(data) == [{"id": "a", "value": 1}]
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the cache folder cannot be created
    assert load_rows(data) == [{"id": "a", "value": 1}]


def test_no_cache_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("AIINFRA_NO_CACHE", "1")
    assert cache_dir() is None
    data = tmp_path / "rows.yaml"
    data.write_text("- {id: a}\n")
    assert load_rows(data) == [{"id": "a"}]
    assert not (tmp_path / "cache").exists()


def test_runtime_reserve_read_once_applied_per_planner() -> None:
    """runtime.yaml (aiconfigurator h100_sxm: other 3.5 GB, NCCL 0.392 GB): training always takes both, inference
    takes NCCL's buffers only when tensor parallelism communicates."""
    from aiinfra.app.tables import domain_tables
    from aiinfra.planning.inference import _reserve_bytes
    from aiinfra.planning.training import reserve_bytes

    reserve = catalog.runtime_reserve()
    assert reserve is not None
    assert reserve.reserve_bytes(with_nccl=False) == pytest.approx(3.5e9)
    assert reserve_bytes(catalog.runtime_reserve()) == pytest.approx(3.892e9)
    assert _reserve_bytes(domain_tables(), 1) == pytest.approx(3.5e9)
    assert _reserve_bytes(domain_tables(), 8) == pytest.approx(3.892e9)
