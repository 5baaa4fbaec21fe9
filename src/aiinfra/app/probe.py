"""`aiinfra probe`: microbenchmark the local GPU and write the measured efficiency curves as a catalog overlay."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiinfra.app.base import Result
from aiinfra.errors import SpecError

if TYPE_CHECKING:
    from aiinfra.calibration.probe import Device


@dataclass(frozen=True, kw_only=True, slots=True)
class ProbeResult(Result):
    """The answer of ``aiinfra probe``: the GPU measured and the efficiency curves written into the overlay."""

    out_dir: str
    """The overlay folder whose efficiency.yaml holds the curves."""
    accelerator: str
    """Catalog id the curves are written for."""
    device: dict[str, Any]
    """Name, vendor, GPU count, driver, CUDA/ROCm and PyTorch versions."""
    curves: tuple[dict[str, Any], ...]
    """Per written row: id, kind, dtype, points [x, fraction]."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra probe --json`` object: the folder, the accelerator, the device and the curves."""
        return {
            "out_dir": self.out_dir,
            "accelerator": self.accelerator,
            "device": self.device,
            "curves": list(self.curves),
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per measured point: curve id, kind, dtype, x and the fraction of peak."""
        return [
            {"id": c["id"], "kind": c["kind"], "dtype": c.get("dtype"), "x": x, "fraction": y}
            for c in self.curves
            for x, y in c["points"]
        ]


def probe(out: str | Path, accelerator: str | None = None, device: Device | None = None) -> ProbeResult:
    """Time the kernels on ``device`` (default: GPU 0 through PyTorch; a SpecError when there is none) and write
    ``out/efficiency.yaml`` (rows merged by id with any already there) and ``out/efficiency.md``."""
    from aiinfra import catalog
    from aiinfra.calibration.probe import match_accelerator, rows, torch_device
    from aiinfra.catalog.overlay_files import write_rows

    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise SpecError("--out", str(out), "is a file", "give a folder (created if absent)")
    dev = device if device is not None else torch_device()
    info = dev.info()
    acc_id = accelerator or match_accelerator(info.name, catalog.rows("accelerators"))
    acc = catalog.accelerator(acc_id, "--accelerator")
    written = rows(dev, acc)
    md = [
        f"# aiinfra probe on {info.name}",
        "",
        f"{info.count} × {info.name} ({info.vendor}), driver {info.driver or 'unknown'}, {info.runtime}, "
        f"PyTorch {info.torch}; catalog accelerator `{acc.id}`.",
        "",
        "| row | kind | x | fraction |",
        "|---|---|---|---|",
    ]
    md += [f"| {r['id']} | {r['kind']} | {x:.4g} | {y:.3f} |" for r in written for x, y in r["points"]]
    write_rows(out_dir, "efficiency.yaml", written, "\n".join(md) + "\n")
    device_dict = {
        "name": info.name,
        "vendor": info.vendor,
        "count": info.count,
        "driver": info.driver,
        "runtime": info.runtime,
        "torch": info.torch,
    }
    curves = tuple({"id": r["id"], "kind": r["kind"], "dtype": r.get("dtype"), "points": r["points"]} for r in written)
    return ProbeResult(out_dir=str(out_dir), accelerator=acc.id, device=device_dict, curves=curves)
