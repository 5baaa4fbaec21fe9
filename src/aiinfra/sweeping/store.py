"""The results of a sweep: a directory of Parquet part files (``--out results.parquet`` is that directory).

A single Parquet file cannot be appended to after a crash (its footer is written on close), so each flushed batch
of rows is a complete small file, written to a hidden temporary name, synced and renamed: a ``kill -9`` loses at
most the rows not yet flushed, never a written part. A resumed sweep reads the ``scenario_hash`` column of every
part and skips those points. At the end the parts are merged into one file (streamed part by part, duplicates
dropped). pyarrow and pandas read the directory as one dataset; ``read_table`` also reconciles column types that
differ between parts (a column all-integer in one part and fractional in another is float64; a column mixing
kinds is text), so the dataset always reads as one table.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from aiinfra.errors import SpecError

HASH = "scenario_hash"
ERROR = "error"
META = "_sweep.json"
"""The sweep's question and options; names starting with ``_`` or ``.`` are ignored by Parquet dataset readers."""


def encode_value(value: Any) -> Any:
    """A flattened result value as a cell: lists and mappings become JSON text, the rest stays as it is."""
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "str"


_ARROW = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string()}


def column_type(kinds: set[str]) -> pa.DataType:
    """One Arrow type for a column from the kinds of its non-null cells."""
    if not kinds:
        return pa.null()
    if len(kinds) == 1:
        return _ARROW[next(iter(kinds))]
    if kinds <= {"int", "float"}:
        return pa.float64()
    return pa.string()


def to_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows (mappings with possibly different keys) -> a table with one type per column."""
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    arrays = []
    for name in names:
        cells = [row.get(name) for row in rows]
        typ = column_type({_kind(c) for c in cells if c is not None})
        if typ == pa.string():
            cells = [c if c is None or isinstance(c, str) else json.dumps(c) for c in cells]
        elif typ == pa.float64():
            cells = [None if c is None else float(c) for c in cells]
        arrays.append(pa.array(cells, type=typ))
    return pa.Table.from_arrays(arrays, names=list(names))


def unified_schema(schemas: Iterable[pa.Schema]) -> pa.Schema:
    """The schema every part is read as: the columns of all parts in first-seen order, each with one type."""
    types: dict[str, set[pa.DataType]] = {}
    for schema in schemas:
        for field in schema:
            types.setdefault(field.name, set()).add(field.type)
    fields = []
    for name, seen in types.items():
        real = {t for t in seen if t != pa.null()}
        if len(real) <= 1:
            typ = next(iter(real)) if real else pa.null()
        elif real <= {pa.int64(), pa.float64()}:
            typ = pa.float64()
        else:
            typ = pa.string()
        fields.append(pa.field(name, typ))
    return pa.schema(fields)


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """A part's table with exactly ``schema``'s columns and types (absent columns are null)."""
    arrays = []
    for field in schema:
        if field.name in table.column_names:
            col = table[field.name]
            arrays.append(col if col.type == field.type else pc.cast(col, field.type))
        else:
            arrays.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _sync_replace(tmp: Path, final: Path) -> None:
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class ResultStore:
    """A results directory: finished points, atomic part writes, compaction."""

    def __init__(self, root: str | Path, meta: Mapping[str, Any]) -> None:
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise SpecError(
                "--out",
                str(root),
                "is a file, not a results directory",
                "give a new path (a directory of Parquet parts is created there)",
            )
        self.root.mkdir(parents=True, exist_ok=True)
        meta_path = self.root / META
        new = json.loads(json.dumps(dict(meta), default=str))
        if meta_path.exists():
            old = json.loads(meta_path.read_text())
            if old.get("question") != new.get("question") or old.get("options") != new.get("options"):
                raise SpecError(
                    "--out",
                    str(root),
                    f"holds a sweep of {old.get('question')} {old.get('options')}",
                    "resume with the same question and options, or give another --out",
                )
            new["keys"] = list(dict.fromkeys([*old.get("keys", []), *new.get("keys", [])]))  # a grid grown by keys
        tmp = self.root / f".{META}.{uuid.uuid4().hex[:8]}.tmp"
        tmp.write_text(json.dumps(new, sort_keys=True) + "\n")
        _sync_replace(tmp, meta_path)
        self._written = 0

    def parts(self) -> list[Path]:
        """The Parquet part files written so far, in name order."""
        return sorted(p for p in self.root.glob("part-*.parquet"))

    def finished(self) -> dict[str, bool]:
        """Hash -> whether the point failed, for every point already written (reads two columns only)."""
        done: dict[str, bool] = {}
        for part in self.parts():
            names = pq.read_schema(part).names
            table = pq.read_table(part, columns=[c for c in (HASH, ERROR) if c in names])
            errors = table[ERROR].to_pylist() if ERROR in names else [None] * table.num_rows
            for h, e in zip(table[HASH].to_pylist(), errors, strict=True):
                done.setdefault(h, e is not None)
        return done

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Write rows as one new part: to a hidden temporary file, synced, then renamed into place."""
        if not rows:
            return
        self._written += 1
        name = f"part-{time.time_ns():020d}-{os.getpid()}-{self._written:06d}.parquet"
        tmp = self.root / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
        pq.write_table(to_table(rows), tmp)
        _sync_replace(tmp, self.root / name)

    def compact(self) -> None:
        """Merge every part into one file, streamed part by part, each point once (the first written)."""
        parts = self.parts()
        if len(parts) <= 1:
            return
        schema = unified_schema(pq.read_schema(p) for p in parts)
        name = f"part-{time.time_ns():020d}-compact.parquet"
        tmp = self.root / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
        seen: set[str] = set()
        with pq.ParquetWriter(tmp, schema) as writer:
            for part in parts:
                table = _new_rows(conform(pq.read_table(part), schema), seen)
                if table.num_rows:
                    writer.write_table(table)
        _sync_replace(tmp, self.root / name)
        for part in parts:
            part.unlink()


def _new_rows(table: pa.Table, seen: set[str]) -> pa.Table:
    keep = []
    for h in table[HASH].to_pylist():
        keep.append(h not in seen)
        seen.add(h)
    return table if all(keep) else table.filter(pa.array(keep))


def read_table(root: str | Path) -> pa.Table:
    """Every point of a results directory (or a single Parquet file) as one table, each point once."""
    path = Path(root)
    if not path.exists():
        raise SpecError("results", str(root), "not found", "give the --out path of a sweep")
    parts = sorted(path.glob("part-*.parquet")) if path.is_dir() else [path]
    if not parts:
        raise SpecError("results", str(root), "holds no results yet", "run the sweep first")
    schema = unified_schema(pq.read_schema(p) for p in parts)
    seen: set[str] = set()
    tables = [_new_rows(conform(pq.read_table(p), schema), seen) for p in parts]
    return pa.concat_tables(tables)
