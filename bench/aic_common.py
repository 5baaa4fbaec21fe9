"""What the AIConfigurator reduction scripts (bench/aic_efficiency_*.py) share: where the installed
data lives, how its systems map to catalog accelerators, and how the rows cite it."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

#: the systems whose SGLang tables are reduced (Hopper, Ampere and the B200, where validation rows ran SGLang; the
#: GB200, B300, GB300, L40S and RTX PRO 6000 SGLang tables are left out), in the order the rows are printed
SGLANG_SYSTEMS = ("h200_sxm", "h100_sxm", "a100_sxm", "b200_sxm")

COMMIT_095F58A = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
"""ai-dynamo/aiconfigurator commit (2026-08-21) the block-FP8 and MXFP4 reductions read."""
#: engine id -> its name in the rows' titles and notes
ENGINE_NAMES = {"vllm": "vLLM", "trtllm": "TensorRT-LLM", "sglang": "SGLang"}
#: the Hopper systems the per-format reductions read -> their short name in the row ids
HOPPER_SYSTEMS = {"h100_sxm": "h100", "h200_sxm": "h200"}


def hopper_tables(
    data: Path, op: str, engine: str, version: str, systems: dict[str, str] | None = None
) -> Iterator[tuple[str, str, str]]:
    """(system, short name, path under ``data``) of each Hopper system's ``<op>_perf.parquet`` table (op: gemm, moe)
    of ``engine`` ``version`` (``systems``: other systems -> short names instead); a missing table is named on stderr
    and skipped."""
    for system, short in (HOPPER_SYSTEMS if systems is None else systems).items():
        rel = f"{system}/{op}/{engine}/{version}/{op}_perf.parquet"
        if not (data / rel).exists():
            print(f"# no {rel}", file=sys.stderr)
            continue
        yield system, short, rel


@dataclass(frozen=True)
class ExtraTable:
    """One more system's table for an engine, beyond the Hopper systems at a reduction's version: where the part's
    oldest usable table is another release, or holds several kernels for the format and only one is what the engine
    ran (``kernel_source``; None: every row of the table)."""

    engine: str
    system: str
    short: str
    version: str
    kernel_source: str | None = None


def engine_tables(
    data: Path,
    op: str,
    engine: str,
    version: str,
    systems: dict[str, str] | None = None,
    extra: tuple[ExtraTable, ...] = (),
) -> list[tuple[str, str, str, str, str | None]]:
    """(system, short name, path under ``data``, version, kernel_source kept or None) of ``engine``'s
    ``<op>_perf.parquet`` tables: each system's at ``version`` (:func:`hopper_tables`), then ``extra``'s tables for
    this engine; a missing table is named on stderr and skipped."""
    out: list[tuple[str, str, str, str, str | None]] = [
        (system, short, rel, version, None) for system, short, rel in hopper_tables(data, op, engine, version, systems)
    ]
    for x in extra:
        if x.engine != engine:
            continue
        rel = f"{x.system}/{op}/{engine}/{x.version}/{op}_perf.parquet"
        if not (data / rel).exists():
            print(f"# no {rel}", file=sys.stderr)
            continue
        out.append((x.system, x.short, rel, x.version, x.kernel_source))
    return out


def data_folder(given: Path | None) -> Path | None:
    """``given`` (a script's --data) or else the installed systems/data; None, said on stderr, when there is neither."""
    data = given or data_root()
    if data is None:
        print("aiconfigurator_core is not installed and no --data given; nothing to reduce", file=sys.stderr)
    return data


ACCELERATORS = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "catalog" / "data" / "accelerators.yaml"


def catalog_accelerators() -> dict[str, dict[str, Any]]:
    """The catalog's accelerator rows by id: the peaks and bandwidths the reductions divide by."""
    import yaml

    return {str(r["id"]): r for r in yaml.safe_load(ACCELERATORS.read_text())}


def parquet_reader() -> Any | None:
    """pandas, which reads the parquet tables (with pyarrow); None, said on stderr, where it is not installed."""
    try:
        import pandas as pd
    except ImportError:
        print("pandas (with pyarrow) is needed to read the parquet tables; nothing to reduce", file=sys.stderr)
        return None
    return pd


def reduction_inputs(given: Path | None) -> tuple[Path, Any] | None:
    """The systems/data folder (``given``: a script's --data, else the installed one) and pandas to read it; None,
    said on stderr, where either is missing."""
    data = data_folder(given)
    pd = parquet_reader() if data is not None else None
    return None if data is None or pd is None else (data, pd)


def reduction_setup(doc: str, header: str) -> tuple[Path, Any, dict[str, dict[str, Any]]] | None:
    """The command line of a reduction that takes only ``--data`` (``doc``: the script's docstring, whose first
    paragraph describes it): the systems/data folder, pandas and the catalog's accelerator rows, with the output
    file's ``header`` printed; None, said on stderr, where the data or pandas are missing."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="AIConfigurator systems/data folder")
    inputs = reduction_inputs(ap.parse_args().data)
    if inputs is None:
        return None
    print(header)
    return (*inputs, catalog_accelerators())


def present_tables(data: Path, tables: Iterable[Any], op: str, table: str) -> Iterator[tuple[Any, str, Path]]:
    """(table, catalog accelerator id, path) of each of ``tables`` (objects with ``system``, ``engine`` and
    ``version``) whose ``<system>/<op>/<engine>/<version>/<table>_perf.parquet`` exists under ``data``; a missing one
    is named on stderr and skipped."""
    for t in tables:
        path = data / t.system / op / t.engine / t.version / f"{table}_perf.parquet"
        if not path.exists():
            print(f"# no {path}", file=sys.stderr)
            continue
        yield t, SYSTEM_IDS[t.system], path


def engine_table_source(rel: str, engine: str, version: str, what: str) -> tuple[str, str]:
    """(title, url) of the AIConfigurator table ``rel`` (a path under systems/data) of ``engine`` ``version`` at
    commit COMMIT_095F58A; ``what``: the timings it holds, as the title names them."""
    url = f"{REPO}/blob/{COMMIT_095F58A}/{DATA_DIR}/{rel}"
    title = (
        f"ai-dynamo/aiconfigurator systems/data/{rel} ({ENGINE_NAMES[engine]} {version} {what}, NVIDIA collection, "
        "Apache-2.0; latency in ms)"
    )
    return title, url


def engine_curve_row(
    *,
    row_id: str,
    kind: str,
    acc_id: str,
    m_tokens: int,
    x: str,
    pts_yaml: str,
    engine: str,
    source: tuple[str, str, str, str],
    note: str,
    dtype: str = "bf16",
) -> str:
    """One engine-only (cross_check) curve row of ``dtype`` keyed by ``m_tokens`` in the catalog's efficiency format;
    ``source``: (title, url, read_on, fields)."""
    import yaml

    title, url, read_on, fields = source
    lines = [
        f"- id: {row_id}",
        f"  kind: {kind}",
        f"  accelerators: [{acc_id}]",
        f"  dtype: {dtype}",
        f"  m_tokens: {m_tokens}",
        f"  x: '{x}'",
        f"  points: {pts_yaml}",
        "  provenance: measured",
        f"  engine: {engine}",
        "  cross_check: true",
        "  sources:",
        f"    - {{title: '{title}', url: '{url}', read_on: '{read_on}', fields: [{fields}]}}",
        "  notes: " + yaml.safe_dump(note, width=10**6, default_style="'").strip(),
    ]
    return "\n".join(lines)


def data_root() -> Path | None:
    """systems/data of the installed aiconfigurator_core (None when it is not installed here)."""
    spec = importlib.util.find_spec("aiconfigurator_core")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))) / "systems" / "data"
    return root if root.is_dir() else None


#: the ``moe_perf.parquet`` columns that identify one timed fused-MoE call (format, tokens, shape, split)
MOE_CALL_COLUMNS = (
    "moe_dtype",
    "num_tokens",
    "hidden_size",
    "inter_size",
    "topk",
    "num_experts",
    "moe_tp_size",
    "moe_ep_size",
)

#: the AIConfigurator ``moe_perf.parquet`` columns a ``moe_shape`` row is read from, as its source's ``fields``
MOE_SHAPE_FIELDS = (
    "[kernel_source, moe_dtype, num_tokens, hidden_size, inter_size, topk, num_experts, moe_tp_size, moe_ep_size, "
    "distribution, latency]"
)


def moe_rank_flop(tokens: Any, h: int, i: int, k: int, tp: int, ep: int) -> Any:
    """FLOP per rank of a gated (SwiGLU: three h x i matrices) fused-MoE layer on ``tokens`` tokens entering it,
    top-``k`` routing, experts split ``tp`` ways in width and ``ep`` ways in number: 2*T*k*3*h*i/tp/ep (a number or a
    numpy array of token counts)."""
    return 2 * tokens * k * 3 * h * i / tp / ep


def moe_shape_row_head(
    rid: str, acc_id: str, dtype: str, shape: tuple[int, int, int, int, int, int], points: str, engine: str
) -> list[str]:
    """The lines of a catalog ``moe_shape`` row up to its ``sources:`` key (id, kind, part, dtype, shape
    [hidden, expert width, experts, top-k, moe_tp, moe_ep], the x axis, the points, provenance and engine)."""
    return [
        f"- id: {rid}",
        "  kind: moe_shape",
        f"  accelerators: [{acc_id}]",
        f"  dtype: {dtype}",
        f"  moe_shape: [{', '.join(str(v) for v in shape)}]",
        "  x: 'tokens entering the MoE layer (before expert-parallel dispatch)'",
        f"  points: [{points}]",
        "  provenance: measured",
        f"  engine: {engine}",
        "  cross_check: true",
        "  sources:",
    ]
