"""What the three AIConfigurator reduction scripts (bench/aic_efficiency_*.py) share: where the installed
data lives, how its systems map to catalog accelerators, and how the rows cite it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

READ_ON = "2026-11-23"
REPO = "https://github.com/ai-dynamo/aiconfigurator"
DATA_DIR = "aic-core/src/aiconfigurator_core/systems/data"
TREE_URL = f"{REPO}/tree/main/{DATA_DIR}"
BLOB_URL = f"{REPO}/blob/main/{DATA_DIR}"

#: AIConfigurator system directory -> catalog accelerator id
SYSTEM_IDS: dict[str, str] = {
    "h100_sxm": "nvidia-h100-sxm5-80gb",
    "h200_sxm": "nvidia-h200-sxm-141gb",
    "b200_sxm": "nvidia-b200-sxm-180gb",
    "gb200": "nvidia-gb200",
    "b300_sxm": "nvidia-b300-sxm-288gb",
    "gb300": "nvidia-gb300",
    "l40s": "nvidia-l40s",
    "rtx_pro_6000_server": "nvidia-rtx-pro-6000",
    "a100_sxm": "nvidia-a100-sxm4-80gb",
}


def data_root() -> Path | None:
    """systems/data of the installed aiconfigurator_core (None when it is not installed here)."""
    spec = importlib.util.find_spec("aiconfigurator_core")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))) / "systems" / "data"
    return root if root.is_dir() else None
