"""Systems with published scale-out NICs, the H100 96GB peak, and block-scaled precisions (catalog coverage)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from aiinfra import catalog
from aiinfra.app.tables import row_tables
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.errors import InfeasibleError
from aiinfra.specs.scenario import HardwareInput
from aiinfra.validation import training_rows
from aiinfra.validation.training_rows import predict_row

GB = 1e9


def test_h100_96gb_peak_is_the_sxm_spec_clock_figure() -> None:
    # torchtitan benchmark footnote: MFU divides by "the peak number of SXM"; stas00's clock calculation for the
    # SXM part: 1830 MHz x 512 x 2 x 528 tensor cores = 989.4 TFLOPS dense BF16; FP8 = 2x BF16 on Hopper.
    acc = catalog.accelerator("nvidia-h100-sxm5-96gb")
    assert acc.dense_flop_per_s["bf16"] == pytest.approx(1830e6 * 512 * 2 * 528, rel=1e-3)
    assert acc.dense_flop_per_s["fp8"] == pytest.approx(2 * 989.4e12, rel=1e-3)
    # the authors bracket the true 500 W peak between H100 NVL (835.5) and SXM (989.4): stored = upper bound
    nvl = catalog.accelerator("nvidia-h100-nvl-94gb").dense_flop_per_s["bf16"]
    assert nvl < acc.dense_flop_per_s["bf16"] <= catalog.accelerator("nvidia-h100-sxm5-80gb").dense_flop_per_s["bf16"]
    assert "UPPER BOUND" in acc.notes


# (system, accelerator, per-accelerator one-way scale-out bandwidth from the source's numbers)
SYSTEMS = [
    ("azure-nd-mi300x-v5", "amd-mi300x", 8 * 400 / 8 / 8 * GB),  # 8x400 Gb NDR / 8 GPUs = 50 GB/s
    ("deepseek-h800-node", "nvidia-h800-sxm5-80gb", 50 * GB),  # DeepSeek-V3 report: IB 50 GB/s per GPU
    ("dgx-b300", "nvidia-b300-sxm-288gb", 8 * 800 / 8 / 8 * GB),  # 8x ConnectX-8 800G = 100 GB/s
    ("hls-gaudi3", "intel-gaudi3", 75 * GB),  # Intel: scale-out 3 x 200 Gb = 75 GB/s per direction per card
    ("aws-trn2-48xlarge", "aws-trainium2", 3.2e12 / 8 / 16),  # EFA v3 3.2 Tbps / 16 chips = 25 GB/s
    ("gcp-tpu-v5e-host", "google-tpu-v5e", 2 * 100e9 / 8 / 8),  # 2x100 Gbps per 8-chip host
    ("aws-g6e-48xlarge", "nvidia-l40s", 400e9 / 8 / 8),
    ("aws-g6-48xlarge", "nvidia-l4", 100e9 / 8 / 8),
    ("gcp-g4-standard-384", "nvidia-rtx-pro-6000", 400e9 / 8 / 8),
    ("azure-nc96ads-a100-v4", "nvidia-a100-pcie-80gb", 80e9 / 8 / 4),  # 80,000 Mbps over 4 GPUs
]


@pytest.mark.parametrize(("system_id", "acc_id", "bw"), SYSTEMS)
def test_new_system_resolves_scale_out_bandwidth(system_id: str, acc_id: str, bw: float) -> None:
    system = catalog.system(system_id)
    assert system.accelerator == acc_id and system.nics is not None
    assert all(s.url or s.title for s in system.sources)
    cluster = resolve_cluster(HardwareInput(accelerator=acc_id, count=4 * system.accelerators_per_node))
    assert cluster.system_id == system_id
    assert cluster.per_node == system.accelerators_per_node
    assert cluster.scale_out_bw_one_way_bytes_per_s == pytest.approx(bw, rel=1e-9)


def _reference_row(row_id: str) -> dict[str, str]:
    with (Path(training_rows.__file__).parent / "data" / "training.csv").open() as fh:
        return next(r for r in csv.DictReader(fh) if r["id"] == row_id)


@pytest.mark.parametrize("acc_id", sorted({a for _, a, _ in SYSTEMS} | {"nvidia-h100-sxm5-96gb"}))
def test_multi_node_training_row_is_predicted_on_newly_covered_accelerator(acc_id: str) -> None:
    # a 48-GPU (6-node) bf16 reference row, swapped onto the accelerator with its value blanked
    row = dict(_reference_row("megatron-core-r08-h100-1p7b"), accelerator=acc_id, value="")
    pred = predict_row(row, row_tables())
    assert pred.predicted is not None and pred.predicted > 0, pred.reason


def test_mxfp8_is_refused_on_hopper_and_runs_at_fp8_peak_on_blackwell() -> None:
    h100 = catalog.accelerator("nvidia-h100-sxm5-80gb")
    with pytest.raises(InfeasibleError, match=r"no mxfp8 .*block-scaled.* use precision fp8"):
        h100.peak_flop_per_s("mxfp8")
    with pytest.raises(InfeasibleError, match="no nvfp4"):
        h100.peak_flop_per_s("nvfp4")
    b200 = catalog.accelerator("nvidia-b200-sxm-180gb")
    assert b200.peak_flop_per_s("mxfp8") == b200.dense_flop_per_s["fp8"] == pytest.approx(4500e12)
    row = dict(_reference_row("megatron-core-r08-h100-1p7b"), precision="mxfp8", value="")
    refused = predict_row(row, row_tables())
    assert refused.predicted is None and "mxfp8" in refused.reason
    assert predict_row(dict(row, accelerator="nvidia-b200-sxm-180gb"), row_tables()).predicted is not None


def test_accelerator_without_any_system_names_the_fix() -> None:
    # no published multi-node RTX 4090 system exists: the error says why and what to set
    cluster = resolve_cluster(HardwareInput(accelerator="nvidia-rtx-4090", count=16, per_node=8))
    assert cluster.scale_out_bw_one_way_bytes_per_s is None
    row = dict(_reference_row("megatron-core-r08-h100-1p7b"), accelerator="nvidia-rtx-4090", value="")
    reason = predict_row(row, row_tables()).reason
    assert "no published multi-node system" in reason and "hardware.scale_out" in reason
