"""Writing rows into a catalog overlay folder: merged by id with the rows already there, each file replaced
atomically (written beside, then renamed), and the folder checked to load as an overlay before it is left."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from aiinfra.errors import SpecError


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def merged(folder: Path, name: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of ``folder/name`` with ``rows`` replacing those of the same id (others kept, new ones appended)."""
    from aiinfra.catalog.parse import load_rows
    from aiinfra.errors import DataError

    path = folder / name
    old: list[dict[str, Any]] = []
    if path.exists():
        try:
            old = [dict(r) for r in load_rows(path)]
        except DataError as exc:
            raise SpecError(
                str(path),
                "(file)",
                f"the existing overlay file cannot be read: {exc}",
                "fix or remove it, or give another --out folder",
            ) from None
    new_ids = {r["id"] for r in rows}
    return [r for r in old if r.get("id") not in new_ids] + rows


def write_rows(folder: Path, name: str, rows: list[dict[str, Any]], readme: str | None = None) -> None:
    """Write ``rows`` into ``folder/name`` (merged by id) and, when given, ``folder/<stem>.md``."""
    from aiinfra.catalog import Catalog

    if name == "calibration.yaml":  # checked before anything is written
        from aiinfra.catalog.calibration import check_rows

        check_rows(tuple(rows), name)
    all_rows = merged(folder, name, rows)
    text = yaml.safe_dump(all_rows, sort_keys=False, allow_unicode=True, width=118)
    folder.mkdir(parents=True, exist_ok=True)
    _atomic_write(folder / name, text)
    if readme is not None:
        _atomic_write(folder / f"{Path(name).stem}.md", readme)
    Catalog.default().with_overlay(folder)  # the folder loads as an overlay (raises SpecError naming the row)
