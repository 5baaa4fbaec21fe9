"""The error table: every validation measurement with its prediction's signed log error, its split (open or
sealed), its source and its regime. ``build()`` predicts the rows (slow: the inference rows run the simulator);
bench/accuracy_table.py writes the result to data/error_table.json with the date, the code version and the input
files' hashes, and ``shipped()`` reads it back for the answers' bands."""

from __future__ import annotations

import csv
import functools
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiinfra.accuracy.regimes import RATE_METRICS, Regime, row_regime, source_key
from aiinfra.dataclass_code import loads_fast
from aiinfra.errors import DataError

if TYPE_CHECKING:
    from aiinfra.reliability.rates import ReliabilityTable
    from aiinfra.validation.types import RowTables

PACKAGE = Path(__file__).resolve().parent.parent
VALIDATION_DATA = PACKAGE / "validation" / "data"
TABLE_PATH = Path(__file__).resolve().parent / "data" / "error_table.json"
MADE_BY = "python bench/accuracy_table.py"

RELIABILITY_FILES = (
    "reliability_open.csv",
    "reliability_sealed.csv",
    "reliability2_open.csv",
    "reliability2_sealed.csv",
    "reliability3_open.csv",
    "reliability3_sealed.csv",
    "reliability4_open.csv",
    "reliability4_sealed.csv",
)
RELIABILITY_RATE_QUANTITIES = (
    "hardware_interruptions_count",
    "hardware_restarts_count",
    "machines_down_per_day",
    "hardware_interruptions_per_day",
    "unexpected_interruptions_count",
    "all_restarts_count",
    "unexpected_per_1000_node_days",
    "nodes_replaced_count",
    "link_failures_frac_per_month",
)
"""Reliability quantities that grow with the failure rate; ``mttf_h`` falls with it (its error is inverted)."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class ErrorRow:
    """One validation measurement and its prediction."""

    id: str
    kind: str
    split: str
    """open | sealed (sealed rows were chosen by a hash of their id before their values were scored)."""
    file: str
    source: str
    """Who published it (:func:`aiinfra.accuracy.regimes.source_key`): the unit left out in leave-one-source-out."""
    metric: str
    accelerator: str
    accelerators_count: int | None
    measured: float
    predicted: float
    log_error: float
    """ln(predicted / measured) of the regime's quantity: of the step time for every training row (a tokens/s row's
    error inverted), of the metric itself for inference, of the failure rate for reliability (an MTTF inverted)."""
    regime: Regime
    utilisation_frac: float | None = None
    """An inference row's predicted utilisation ρ̂ (aiinfra.analytic.equilibrium.utilisation): its load level."""


def _log_error(kind: str, metric: str, predicted: float, measured: float) -> float:
    le = math.log(predicted / measured)
    if kind == "training" and metric in RATE_METRICS:
        return -le
    if kind == "reliability" and metric == "mttf_h":
        return -le
    return le


def validation_files(data: Path = VALIDATION_DATA) -> list[tuple[Path, str]]:
    """Every training and inference CSV in the validation data with its split ('sealed' in the name: sealed);
    the reliability files are scored by aiinfra.reliability.validation, and a seal list (``*_seal.csv``: which ids
    are sealed, no measurements) is no validation file."""
    out = []
    for p in sorted(data.glob("*.csv")):
        if p.name in RELIABILITY_FILES or p.stem.endswith("_seal"):
            continue
        out.append((p, "sealed" if "sealed" in p.stem else "open"))
    return out


def file_hash(path: Path) -> str:
    """SHA-256 of the file's bytes, hex (the error table records it: a changed file means a stale table)."""
    import hashlib  # only building or checking the table pays its import (OpenSSL's bindings)

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _count(row: dict[str, str], key: str) -> int | None:
    try:
        v = float((row.get(key) or "").strip())
    except ValueError:
        return None
    return int(v) if math.isfinite(v) and v >= 1 else None


def rows_of_file(
    path: Path,
    split: str,
    generations: Mapping[str, str | None],
    tables: RowTables,
    only: Iterable[str] | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> list[ErrorRow]:
    """Predict the rows of one training or inference CSV (``only``: just these ids) and return those with a
    measurement, a prediction and a regime (``generations``: accelerator id -> catalog generation; ``tables``: the
    catalog's rows the predictors read)."""
    from aiinfra.validation.runner import _measured, _predictor, read_cases

    kind, rows = read_cases(path)
    if only is not None:
        keep = set(only)
        rows = [r for r in rows if r["id"] in keep]
    predictor = _predictor(kind)
    out = []
    for done, row in enumerate(rows, start=1):
        measured = _measured(row, "value")
        regime = row_regime(kind, row, generations)
        if measured and regime is not None and predictor is not None:
            try:
                prediction = predictor({k: v for k, v in row.items() if k != "value"}, tables)
            except Exception:  # a row the predictor fails on has no error to learn from
                prediction = None
            pred = prediction.predicted if prediction is not None else None
            rho = _utilisation(prediction.details) if prediction is not None else None
            if kind == "inference":  # the load level is the prediction's own utilisation
                regime = row_regime(kind, row, generations, rho) or regime
            if pred is not None and pred > 0:
                out.append(
                    ErrorRow(
                        id=row["id"],
                        kind=kind,
                        split=split,
                        file=path.name,
                        source=source_key(row),
                        metric=row["metric"].strip(),
                        accelerator=row["accelerator"].strip(),
                        accelerators_count=_count(row, "num_accelerators"),
                        measured=measured,
                        predicted=pred,
                        log_error=_log_error(kind, row["metric"].strip(), pred, measured),
                        regime=regime,
                        utilisation_frac=rho,
                    )
                )
        if progress is not None:
            progress(done, len(rows))
    return out


def _utilisation(details: Mapping[str, Any]) -> float | None:
    """The predicted utilisation a row's prediction details carry (aiinfra.validation.inference_rows), if any."""
    v = details.get("utilisation_frac")
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def reliability_rows(
    generations: Mapping[str, str | None], rates: ReliabilityTable, only: Iterable[str] | None = None
) -> list[ErrorRow]:
    """The reliability validation's rate rows (aiinfra.reliability.validation: Kokolis et al.'s rows
    leave-one-source-out); the ETTR row is left out (one row; the answers derive ETTR's band from the rates)."""
    from aiinfra.reliability.validation import _loo_ratio, predict, read_rows, sealed

    open_rows = read_rows("open")
    loo = _loo_ratio(rates, open_rows)
    keep = set(only) if only is not None else None
    out = []
    for split in ("open", "sealed"):
        for row in read_rows(split):
            regime = row_regime("reliability", row, generations)
            if row["quantity"] not in (*RELIABILITY_RATE_QUANTITIES, "mttf_h"):  # shares, storage: no rate error
                continue
            if regime is None or (keep is not None and row["id"] not in keep):
                continue
            if sealed(row["id"]) != (split == "sealed"):
                raise DataError(f"reliability row {row['id']} is in the {split} file against the sealing rule")
            pred, value = predict(rates, row, loo), float(row["value"])
            out.append(
                ErrorRow(
                    id=row["id"],
                    kind="reliability",
                    split=split,
                    file=f"reliability_{split}.csv",
                    source=source_key(row),
                    metric=row["quantity"],
                    accelerator=row["accelerator"],
                    accelerators_count=_count(row, "accelerators_count"),
                    measured=value,
                    predicted=pred,
                    log_error=_log_error("reliability", row["quantity"], pred, value),
                    regime=regime,
                )
            )
    return out


def build(
    generations: Mapping[str, str | None],
    rates: ReliabilityTable,
    tables: RowTables,
    progress: Callable[[str, int, int | None], None] | None = None,
) -> list[ErrorRow]:
    """Predict every validation row (minutes: the inference rows run the simulator); ``generations`` as
    :func:`rows_of_file`."""
    out: list[ErrorRow] = []
    for path, split in validation_files():
        cb = None if progress is None else functools.partial(progress, path.name)
        out += rows_of_file(path, split, generations, tables, progress=cb)
    return out + reliability_rows(generations, rates)


def row_dict(r: ErrorRow) -> dict[str, Any]:
    """An error row as the table's JSON writes it (its regime as a nested mapping)."""
    d = asdict(r)
    d["regime"] = asdict(r.regime)
    return d


def row_from_dict(d: dict[str, Any], shared: dict[Any, Any] | None = None) -> ErrorRow:
    """The inverse of :func:`row_dict`; with ``shared``, equal texts and regimes of the rows read with the same
    mapping become one object."""
    if shared is None:
        return ErrorRow(**{**d, "regime": Regime(**d["regime"])})
    regime = Regime(**d["regime"])
    texts = {k: shared.setdefault(v, v) if isinstance(v, str) else v for k, v in d.items() if k != "regime"}
    return ErrorRow(**texts, regime=shared.setdefault(regime, regime))


def write(rows: list[ErrorRow], meta: dict[str, Any], path: Path = TABLE_PATH) -> None:
    """The table as JSON: the metadata, then one row per line (diffs stay readable)."""
    head = json.dumps(meta, indent=1, ensure_ascii=False)
    body = ",\n".join(" " + json.dumps(row_dict(r), ensure_ascii=False, sort_keys=True) for r in rows)
    path.write_text(head[:-2] + ',\n "rows": [\n' + body + "\n ]\n}\n", encoding="utf-8")


def files_meta() -> dict[str, dict[str, str]]:
    """The input files the table is made of, each with its split and SHA-256 (a changed file = a stale table)."""
    files = {p.name: {"split": s, "sha256": file_hash(p)} for p, s in validation_files()}
    for name in RELIABILITY_FILES:
        files[name] = {"split": "sealed" if "sealed" in name else "open", "sha256": file_hash(VALIDATION_DATA / name)}
    return files


@functools.lru_cache(maxsize=2)
def _read(path: Path) -> tuple[dict[str, Any], tuple[ErrorRow, ...]]:
    """The table's meta and rows, through the catalog's on-disk cache of parsed files (keyed by the file's path,
    size and modification time, and this module's): a warm start unpickles the rows instead of parsing the JSON
    (start-up time)."""
    from aiinfra.diskcache import cached, file_identity

    try:
        identity = file_identity(path)
    except OSError as exc:
        raise DataError(f"error table {path.name} unreadable ({exc}); rebuild it with `{MADE_BY}`") from None
    # keyed by this module too: the parsed value's shape is its code's (``_parse`` shares equal texts and regimes)
    parsed_by = f"{identity}|{file_identity(Path(__file__))}"
    meta, rows = cached(f"error-table|{path.resolve()}", parsed_by, lambda: _parse(path))
    _preload_calibration(path, identity, rows)
    return meta, rows


def _preload_calibration(path: Path, table_identity: str, rows: tuple[ErrorRow, ...]) -> None:
    """Seed the bands' calibration factors of this table from the on-disk cache, and keep new ones there: each
    factor is a leave-one-source-out pass over the open rows, the same for every process that reads the same table
    with the same band code (model.py and regimes.py name the code in the key)."""
    from aiinfra.accuracy import model, regimes
    from aiinfra.diskcache import file_identity, load, store

    try:
        identity = "|".join(
            [table_identity, file_identity(Path(model.__file__)), file_identity(Path(regimes.__file__))]
        )
    except OSError:
        return
    slot = f"error-table-calibration|{path.resolve()}"
    stored = load(slot, identity)
    model.preload_factors(rows, stored if isinstance(stored, dict) else {}, lambda f: store(slot, identity, dict(f)))


def _parse(path: Path) -> tuple[dict[str, Any], tuple[ErrorRow, ...]]:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"error table {path.name} unreadable ({exc}); rebuild it with `{MADE_BY}`") from None
    # equal regimes and texts shared (one object each): the on-disk cache pickles, and a warm start unpickles, each
    # once instead of once per row
    shared: dict[Any, Any] = {}
    rows = tuple(row_from_dict(d, shared) for d in obj.pop("rows"))
    return obj, rows


def shipped(path: Path = TABLE_PATH) -> tuple[ErrorRow, ...]:
    """The shipped error table's rows."""
    return _read(path)[1]


def shipped_meta(path: Path = TABLE_PATH) -> dict[str, Any]:
    """When and how the shipped table was made, and from which files."""
    return _read(path)[0]


def read_csv_rows(path: Path) -> list[dict[str, str]]:
    """A CSV file's rows as header -> text mappings."""
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))
