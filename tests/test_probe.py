"""`aiinfra probe`: the GPU calls stubbed at the one seam (calibration.probe.Device), a recorded overlay, and the
clear refusal without PyTorch or a GPU. No GPU is needed: the stub's kernel times come from efficiencies chosen
here, so the fractions the probe must write are known by hand."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import yaml

from aiinfra import app
from aiinfra.app.tables import efficiency_table
from aiinfra.calibration.probe import DeviceInfo
from aiinfra.catalog import Catalog, use
from aiinfra.cli import main
from aiinfra.errors import SpecError

DATA = Path(__file__).parent / "data" / "probe"
A100 = "nvidia-a100-sxm4-80gb"
A100_BF16_PEAK = 312e12  # catalog dense BF16 peak of the A100 SXM4 (datasheet 624 TFLOPS with sparsity / 2)
A100_HBM = 2.039e12  # catalog HBM bandwidth of the A100 SXM4 80GB (datasheet 2,039 GB/s)
A100_LINK = 300e9  # catalog one-way NVLink 3 bandwidth (600 GB/s two-way)
GEMM_FRAC, PREFILL_FRAC, DECODE_FRAC, COPY_FRAC, BUS_FRAC = 0.6, 0.5, 0.7, 0.8, 0.75


class StubA100:
    """Kernel times of an A100 running every kernel at the fractions above (2 GPUs for the collectives)."""

    calls: list[str]

    def __init__(self, name: str = "NVIDIA A100-SXM4-80GB", count: int = 2) -> None:
        self.name, self.count, self.calls = name, count, []

    def info(self) -> DeviceInfo:
        return DeviceInfo(
            name=self.name, vendor="nvidia", count=self.count, driver="550.54.15", runtime="CUDA 12.4", torch="2.5.1"
        )

    def dtypes(self) -> tuple[str, ...]:
        return ("bf16",)

    def gemm_s(self, m: int, n: int, k: int, dtype: str) -> float:
        self.calls.append("gemm")
        return 2.0 * m * n * k / (GEMM_FRAC * A100_BF16_PEAK)

    def attention_prefill_s(self, batch: int, heads: int, seq: int, head_dim: int) -> float:
        self.calls.append("prefill")
        return 4.0 * batch * heads * seq * seq * head_dim / 2.0 / (PREFILL_FRAC * A100_BF16_PEAK)

    def attention_decode_s(self, batch: int, kv_heads: int, context: int, head_dim: int) -> float:
        self.calls.append("decode")
        return 2.0 * batch * kv_heads * context * head_dim * 2.0 / (DECODE_FRAC * A100_HBM)

    def copy_s(self, nbytes: int) -> float:
        self.calls.append("copy")
        return 2.0 * nbytes / (COPY_FRAC * A100_HBM)

    def collective_s(self, kind: str, nbytes: int) -> float:
        self.calls.append(kind)
        bus = 2.0 * (self.count - 1) / self.count if kind == "allreduce" else (self.count - 1) / self.count
        return nbytes * bus / (BUS_FRAC * A100_LINK)


def test_catalog_figures_the_stub_assumes() -> None:
    acc = Catalog.default().accelerator(A100)
    assert acc.dense_flop_per_s["bf16"] == pytest.approx(A100_BF16_PEAK)
    assert acc.memory_bw_bytes_per_s == pytest.approx(A100_HBM)
    assert acc.scale_up is not None and acc.scale_up.bw_one_way_bytes_per_s == pytest.approx(A100_LINK)


def test_stubbed_probe_writes_the_fractions_and_the_planner_uses_them(tmp_path: Path) -> None:
    stub = StubA100()
    result = app.probe(tmp_path / "ov", device=stub)  # the name "A100-SXM4-80GB" matches one catalog row
    assert result.accelerator == A100
    assert result.device["driver"] == "550.54.15" and result.device["runtime"] == "CUDA 12.4"
    assert {"gemm", "prefill", "decode", "copy", "allreduce", "allgather"} <= set(stub.calls)
    written = yaml.safe_load((tmp_path / "ov" / "efficiency.yaml").read_text())
    expected = {
        "gemm": GEMM_FRAC,
        "attention": PREFILL_FRAC,
        "attention_decode": DECODE_FRAC,
        "memory": COPY_FRAC,
        "allreduce": BUS_FRAC,
        "allgather": BUS_FRAC,
    }
    assert {r["kind"] for r in written} == set(expected)
    for row in written:
        assert all(y == pytest.approx(expected[row["kind"]], rel=1e-3) for _, y in row["points"]), row["id"]
        assert row["device"]["torch"] == "2.5.1" and row["sources"][0]["read_on"]
        assert row["accelerators"] == [A100]
    cat = Catalog.default().with_overlay(tmp_path / "ov")
    with use(cat):  # an engine-free lookup now reads the probe's curve (a user's row wins ties)
        look = efficiency_table().lookup("gemm", A100, 1e11, dtype="bf16")
        assert look.frac == pytest.approx(GEMM_FRAC, rel=1e-3) and look.source.startswith("probe-")


def test_ambiguous_device_name_asks_for_the_catalog_id(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as err:  # H100 80GB: SXM5 and PCIe rows both match
        app.probe(tmp_path / "ov", device=StubA100("NVIDIA H100 80GB HBM3"))
    assert err.value.field == "--accelerator" and "nvidia-h100-pcie-80gb" in str(err.value)
    assert not (tmp_path / "ov").exists()


def test_recorded_probe_overlay_loads_and_prices_memory(tmp_path: Path) -> None:
    cat = Catalog.default().with_overlay(DATA)
    with use(cat):
        curve, label = efficiency_table().curve("memory", "nvidia-l4")
        assert curve is not None and label.startswith("probe-nvidia-l4")
        assert curve.y[-1] == pytest.approx(0.83)  # the recording's 1 GiB copy point


def test_without_torch_or_gpu_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    assert main(["probe", "--out", str(tmp_path / "ov")]) == 2
    assert "needs PyTorch" in capsys.readouterr().err
    fake = types.ModuleType("torch")
    fake.cuda = types.SimpleNamespace(is_available=lambda: False)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert main(["probe", "--out", str(tmp_path / "ov")]) == 2
    err = capsys.readouterr().err
    assert "no CUDA or ROCm device" in err and "Traceback" not in err
    assert not (tmp_path / "ov").exists()
