"""MIG profiles and placements checked by hand against the NVIDIA MIG User Guide (Supported MIG Profiles tables;
`nvidia-smi mig -lgipp` placements {0..6}:1, {0,2,4,6}:2, {0,2,4}:2, {0,4}:4, {0}:4, {0}:8)."""

from __future__ import annotations

import pytest

from aiinfra import app, catalog
from aiinfra.catalog import mig as catalog_mig
from aiinfra.catalog.resolve import resolve
from aiinfra.errors import SpecError
from aiinfra.sharing import mig
from aiinfra.specs.scenario import parse_scenario

A100 = "nvidia-a100-sxm4-80gb"

# the guide's "Number of Instances Available" column for A100 80GB
GUIDE_MAX_A100_80 = {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1}


@pytest.mark.parametrize(("profile", "n"), GUIDE_MAX_A100_80.items())
def test_a100_80gb_at_most_n_of_each_profile(profile: str, n: int) -> None:
    geo = catalog_mig.geometry(A100)
    assert len(mig.place(geo, [profile] * n)) == n
    with pytest.raises(SpecError, match="no room"):
        mig.place(geo, [profile] * (n + 1))


def test_every_mig_accelerator_in_the_catalog_has_geometry_with_its_profile_names() -> None:
    for acc_id, geo in catalog_mig.geometries().items():
        acc = catalog.accelerator(acc_id)
        assert acc.mig is not None
        names = {p.name for p in geo.profiles}
        assert names <= set(acc.mig.profiles), acc_id
        assert all(s.url for s in geo.sources)


def test_guide_examples_of_valid_layouts() -> None:
    geo = catalog_mig.geometry(A100)
    # 4g + 2g + 1g: 4g at slice 0, 2g at 4, 1g at 6 (7 compute slices)
    placed = mig.place(geo, ["1g.10gb", "2g.20gb", "4g.40gb"])
    assert [(p.profile, p.start) for p in placed] == [("4g.40gb", 0), ("2g.20gb", 4), ("1g.10gb", 6)]
    # the example: 3g.40gb,2g.20gb,1g.10gb
    assert len(mig.place(geo, ["3g.40gb", "2g.20gb", "1g.10gb"])) == 3


def test_invalid_layouts_name_the_reason() -> None:
    geo = catalog_mig.geometry(A100)
    with pytest.raises(SpecError, match=r"no room for a second 4g\.40gb"):
        mig.place(geo, ["4g.40gb", "4g.40gb"])
    # two 3g take all 8 memory slices: a 1g has no slice left although a compute slice is idle
    with pytest.raises(SpecError, match=r"no room for a 1g\.10gb .* beside 3g\.40gb@0, 3g\.40gb@4"):
        mig.place(geo, ["3g.40gb", "3g.40gb", "1g.10gb"])
    # 4g (4) + 3 × 1g (3) + another 1g = 8 compute slices
    with pytest.raises(SpecError, match="8 compute slices"):
        mig.place(geo, ["4g.40gb"] + ["1g.10gb"] * 4)
    with pytest.raises(SpecError, match="unknown MIG profile"):
        mig.place(geo, ["5g.50gb"])
    with pytest.raises(SpecError, match=r"second 1g\.10gb\+me"):
        mig.place(geo, ["1g.10gb+me", "1g.10gb+me"])


def test_full_layouts_are_maximal_and_include_the_hand_listed_ones() -> None:
    geo = catalog_mig.geometry(A100)
    layouts = {tuple(sorted(p.profile for p in lay)) for lay in mig.full_layouts(geo)}
    for expected in [
        ("7g.80gb",),
        ("3g.40gb", "3g.40gb"),
        ("3g.40gb", "4g.40gb"),
        ("1g.10gb", "2g.20gb", "4g.40gb"),
        ("1g.10gb",) * 7,
        ("1g.10gb", "2g.20gb", "2g.20gb", "2g.20gb"),
    ]:
        assert tuple(sorted(expected)) in layouts
    # not maximal: 4g alone leaves room for a 3g
    assert ("4g.40gb",) not in layouts
    for lay in mig.full_layouts(geo):
        assert sum(p.compute_slices for p in lay) <= 7
        mig.place(geo, [p.profile for p in lay])  # each one is valid


def test_instance_accelerator_scales_by_slices() -> None:
    base = catalog.accelerator(A100)
    inst = mig.instance_accelerator(base, catalog_mig.geometry(A100), "3g.40gb")
    assert inst.id == f"{A100}/3g.40gb"
    assert inst.memory_bytes == pytest.approx(base.memory_bytes * 4 / 8)
    assert inst.memory_bw_bytes_per_s == pytest.approx(base.memory_bw_bytes_per_s * 4 / 8)
    assert inst.dense_flop_per_s["bf16"] == pytest.approx(base.dense_flop_per_s["bf16"] * 3 / 7)
    assert inst.scale_up is None and inst.mig is None and inst.tdp_w is None


def test_mig_instance_resolves_as_a_scenario_accelerator() -> None:
    sc = resolve(parse_scenario({"model": "meta-llama-3.1-8b", "hardware": {"accelerator": f"{A100}/1g.10gb"}}))
    assert sc.cluster.accelerator.memory_bytes == pytest.approx(80 * 2**30 / 8)
    assert sc.cluster.scale_up_bw_one_way_bytes_per_s is None
    with pytest.raises(SpecError, match="unknown MIG profile"):
        resolve(parse_scenario({"model": "meta-llama-3.1-8b", "hardware": {"accelerator": f"{A100}/9g.99gb"}}))
    with pytest.raises(SpecError, match="no MIG profiles"):
        resolve(parse_scenario({"model": "meta-llama-3.1-8b", "hardware": {"accelerator": "nvidia-l4/1g.5gb"}}))


def test_app_mig_result_json() -> None:
    r = app.mig(A100, "3g.40gb,2g.20gb,1g.10gb").to_dict()
    assert r["layout_valid"] is True and [p["start_slice"] for p in r["layout"]] == [0, 4, 6]
    listing = app.mig(A100).to_dict()
    assert {p["name"] for p in listing["profiles"]} >= set(GUIDE_MAX_A100_80)
    assert listing["full_layouts"]
