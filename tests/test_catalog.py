"""Catalog integrity and spot checks against datasheet figures (expected values from the cited sheets)."""

from __future__ import annotations

import csv
import re

import pytest
import yaml

from aiinfra import catalog
from aiinfra.catalog import data_path
from aiinfra.errors import UnknownIdError

KEBAB = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")

REQUIRED_ACCELERATORS = """nvidia-v100-sxm2-32gb nvidia-a100-sxm4-40gb nvidia-a100-sxm4-80gb nvidia-a100-pcie-80gb
nvidia-h100-sxm5-80gb nvidia-h100-pcie-80gb nvidia-h100-sxm5-96gb nvidia-h100-nvl-94gb nvidia-h200-sxm-141gb
nvidia-h800-sxm5-80gb nvidia-b200-sxm-180gb nvidia-gb200 nvidia-b300-sxm-288gb nvidia-gb300 nvidia-l40s nvidia-l4
nvidia-a10g nvidia-rtx-4090 nvidia-rtx-5090 nvidia-rtx-pro-6000 amd-mi250x amd-mi300x amd-mi325x amd-mi355x
google-tpu-v4 google-tpu-v5e google-tpu-v5p google-tpu-v6e intel-gaudi2 intel-gaudi3 aws-trainium1 aws-trainium2
aws-inferentia2""".split()

REQUIRED_MODELS = """gpt3-175b gpt2-1.5b bert-base meta-llama-2-7b meta-llama-2-13b meta-llama-2-70b meta-llama-3.1-8b
meta-llama-3.1-70b meta-llama-3.1-405b mixtral-8x7b deepseek-v3 qwen3-235b-a22b qwen3-30b-a3b""".split()

REQUIRED_SYSTEMS = "dgx-h100 dgx-h200 dgx-b200 gb200-nvl72".split()


def _all_ids() -> list[str]:
    ids: list[str] = []
    for kind in catalog.KINDS:
        ids += [str(r["id"]) for r in catalog.raw_rows(kind)]
    prices = data_path("prices")
    if prices.is_dir():
        for path in sorted(prices.glob("*.csv")):
            with path.open() as fh:
                ids += [row["id"] for row in csv.DictReader(fh)]
    return ids


@pytest.mark.parametrize("acc_id", REQUIRED_ACCELERATORS)
def test_required_accelerators_present(acc_id: str) -> None:
    assert catalog.accelerator(acc_id).id == acc_id


@pytest.mark.parametrize("model_id", REQUIRED_MODELS)
def test_required_models_present(model_id: str) -> None:
    assert catalog.model(model_id).id == model_id


@pytest.mark.parametrize("system_id", REQUIRED_SYSTEMS)
def test_required_systems_present(system_id: str) -> None:
    sysm = catalog.system(system_id)
    assert catalog.accelerator(sysm.accelerator)  # refers to a known accelerator


def test_ids_unique_and_kebab_case() -> None:
    ids = _all_ids()
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    bad = [i for i in ids if not KEBAB.match(i)]
    assert not bad


@pytest.mark.parametrize("kind", catalog.KINDS)
def test_every_row_has_a_source_with_date(kind: str) -> None:
    for spec in catalog.rows(kind).values():
        assert spec.sources, f"{kind} {spec.id} has no source"
        for s in spec.sources:
            assert s.title.strip(), spec.id
            assert re.match(r"^\d{4}-\d{2}(-\d{2})?$", s.read_on), (spec.id, s.read_on)


def test_sparse_is_never_stored_as_dense() -> None:
    # where a 2:4-sparse figure is stored, the dense one must be below it (NVIDIA: exactly half)
    for acc in catalog.rows("accelerators").values():
        for dtype, sparse in acc.sparse_flop_per_s.items():
            dense = acc.dense_flop_per_s.get(dtype)
            if dense is not None:
                assert dense < sparse, (acc.id, dtype)
                if acc.vendor == "nvidia":
                    assert dense == pytest.approx(sparse / 2, rel=0.02), (acc.id, dtype)


def test_h100_sxm_datasheet_figures() -> None:
    # NVIDIA H100 datasheet: 989 TFLOPS BF16 dense (1,979 with sparsity), 1,979 FP8 dense, 3.35 TB/s, 700 W;
    # NVLink 4 900 GB/s two-way = 450 GB/s one way
    h100 = catalog.accelerator("nvidia-h100-sxm5-80gb")
    assert h100.dense_flop_per_s["bf16"] == pytest.approx(989e12, rel=0.005)
    assert h100.dense_flop_per_s["fp8"] == pytest.approx(1979e12, rel=0.005)
    assert h100.memory_bw_bytes_per_s == pytest.approx(3.35e12, rel=0.001)
    assert h100.tdp_w == 700
    assert h100.scale_up is not None and h100.scale_up.bw_one_way_bytes_per_s == pytest.approx(450e9, rel=0.01)
    assert h100.memory_bytes >= 80e9


def test_a100_and_b200_dense_peaks() -> None:
    # A100 datasheet: 312 TFLOPS BF16 dense (624 sparse); HGX B200: 2,250 BF16 / 4,500 FP8 dense
    assert catalog.accelerator("nvidia-a100-sxm4-80gb").dense_flop_per_s["bf16"] == pytest.approx(312e12, rel=0.005)
    b200 = catalog.accelerator("nvidia-b200-sxm-180gb")
    assert b200.dense_flop_per_s["bf16"] == pytest.approx(2250e12, rel=0.01)
    assert b200.dense_flop_per_s["fp8"] == pytest.approx(4500e12, rel=0.01)


def test_unknown_id_suggests() -> None:
    with pytest.raises(UnknownIdError) as exc:
        catalog.accelerator("h100")
    assert "nvidia-h100-sxm5-80gb" in str(exc.value)


def test_catalog_models_match_hand_counts() -> None:
    from aiinfra.analytic.model_figures import kv_bytes_per_token, params_active, params_total

    assert params_total(catalog.model("meta-llama-3.1-70b")) == pytest.approx(70.6e9, rel=0.01)
    assert kv_bytes_per_token(catalog.model("meta-llama-3.1-70b"), "bf16") == 327_680
    ds = catalog.model("deepseek-v3")
    assert params_total(ds) == pytest.approx(671e9, rel=0.01)
    assert params_active(ds) == pytest.approx(37e9, rel=0.03)
    # Llama 3.1 8B model card 8.03B; 405B model card 405B
    assert params_total(catalog.model("meta-llama-3.1-8b")) == pytest.approx(8.03e9, rel=0.01)
    assert params_total(catalog.model("meta-llama-3.1-405b")) == pytest.approx(405e9, rel=0.01)
    # Mixtral 8x7B: 46.7B total, 12.9B active (Jiang et al. 2024)
    mx = catalog.model("mixtral-8x7b")
    assert params_total(mx) == pytest.approx(46.7e9, rel=0.01)
    assert params_active(mx) == pytest.approx(12.9e9, rel=0.01)
    # Qwen3 model cards: 235B total / 22B active; 30.5B / 3.3B
    assert params_total(catalog.model("qwen3-235b-a22b")) == pytest.approx(235e9, rel=0.01)
    assert params_active(catalog.model("qwen3-235b-a22b")) == pytest.approx(22e9, rel=0.03)
    assert params_total(catalog.model("qwen3-30b-a3b")) == pytest.approx(30.5e9, rel=0.01)


def test_data_files_parse_as_yaml_lists() -> None:
    for name in ("accelerators", "systems", "interconnects", "models"):
        rows = yaml.safe_load(data_path(f"{name}.yaml").read_text())
        assert isinstance(rows, list) and rows
