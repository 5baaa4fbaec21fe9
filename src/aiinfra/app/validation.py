"""Predicted vs measured for published runs: the validation of the planners."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiinfra.app.base import Result
from aiinfra.app.tables import row_tables
from aiinfra.report.render import jsonable
from aiinfra.validation.report import markdown
from aiinfra.validation.runner import Case, by_target, run, summarise


def shipped_cases() -> list[Path]:
    """The validation CSVs shipped with the package (training and inference reference rows)."""
    from importlib import resources

    data = Path(str(resources.files("aiinfra.validation").joinpath("data")))
    return [data / "training.csv", data / "inference.csv"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ValidateResult(Result):
    """The answer of :func:`validate`."""

    files: tuple[dict[str, Any], ...]
    """One runner result per CSV file (its kind and cases), for the markdown report."""
    cases: tuple[Case, ...]
    """Every row: measured, predicted, signed relative error, group and accuracy target."""
    summary: dict[str, Any]
    """Rows, predicted, compared, median and p90 |error|."""
    targets: dict[str, dict[str, Any]]
    """Per accuracy target: rows, median |error|, share within ±25 %, worst row, met or not."""
    bands: dict[str, Any] = field(default_factory=dict)
    """Per case id its 80 % interval without its own source (predicted_low, predicted_high, split), and
    ``coverage``: the share of measurements inside their interval by regime and split (aiinfra.accuracy)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``aiinfra validate --json`` object: every case with its 80 % interval, the summary, the accuracy targets
        and the interval coverage."""
        per_case = self.bands.get("cases", {})
        cases = [
            {**jsonable(c), **per_case.get(c.id, {"predicted_low": None, "predicted_high": None})} for c in self.cases
        ]
        return {
            "cases": cases,
            "summary": self.summary,
            "targets": self.targets,
            "coverage": self.bands.get("coverage", []),
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per validation case."""
        return [jsonable(c) for c in self.cases]

    def markdown(self) -> str:
        """The report docs/validation.md is made of."""
        return markdown(list(self.files))

    def markdown_keeping(self, old: str) -> str:
        """The report spliced into ``old``: each ``## <kind> rows (<file>)`` section this run wrote replaces the
        section of that heading in place (to the next ``## `` heading), and every other section of ``old`` stays
        where it is (the at-scale and serving tables of the bench scripts, the error bands of
        bench/accuracy_table.py, the reliability figures of bench/reliability_validation.py). A section ``old``
        lacks goes before the first section written by a script (error bands, reliability), else at the end."""
        from aiinfra.accuracy.coverage import MARK as BANDS_MARK
        from aiinfra.reliability.validation import MARK as RELIABILITY_MARK

        if not old.strip():
            return self.markdown()
        new_head, new_sections = _sections(self.markdown())
        _, old_sections = _sections(old)
        headings = [h for h, _ in old_sections]
        merged = [(h, dict(new_sections).get(h, body)) for h, body in old_sections]
        missing = [(h, body) for h, body in new_sections if h not in headings]
        if missing:
            marks = (BANDS_MARK, RELIABILITY_MARK)
            at = next((i for i, (_, body) in enumerate(merged) if any(m in body for m in marks)), len(merged))
            merged[at:at] = missing
        return new_head + "".join(body for _, body in merged)


def _offset(progress: Callable[[int, int | None], None], before: int, total: int) -> Callable[[int, int | None], None]:
    """One file's ``progress(done, n)`` as the whole run's (rows of the files before it counted)."""

    def update(done: int, _rows: int | None) -> None:
        progress(before + done, total)

    return update


def validate(
    cases: Sequence[str | Path] | None = None, progress: Callable[[int, int | None], None] | None = None
) -> ValidateResult:
    """Predict every row of the validation CSVs (default: the shipped training and inference rows) from its
    specs only and compare with the published measurement. ``progress(done, total)``: called after each row."""
    from aiinfra.validation.runner import read_cases

    paths = list(cases or shipped_cases())
    results: list[dict[str, Any]] = []
    if progress is None:
        results = [run(p, row_tables()) for p in paths]
    else:
        sizes = [len(read_cases(p)[1]) for p in paths]
        total = sum(sizes)
        for i, p in enumerate(paths):
            results.append(run(p, row_tables(), _offset(progress, sum(sizes[:i]), total)))
    every = [c for r in results for c in r["cases"]]
    return ValidateResult(
        files=tuple(results),
        cases=tuple(every),
        summary=summarise(every),
        targets=by_target(every),
        bands=validated_bands(results),
    )


def validated_bands(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each case's 80 % interval from the error model without the case's own source, over the shipped error table
    with this run's predictions in place of its rows, and the coverage by regime and split."""
    from aiinfra import catalog
    from aiinfra.accuracy.coverage import check, groups, rows_from_cases, summary
    from aiinfra.accuracy.table import shipped
    from aiinfra.errors import DataError

    gens = catalog.generations()
    fresh = [e for r in results for e in rows_from_cases(Path(r["file"]), r["cases"], gens)]
    try:
        pool = {e.id: e for e in shipped()}
    except DataError:
        pool = {}
    pool.update({e.id: e for e in fresh})
    checked = check(fresh, list(pool.values()))
    cases = {
        c.row.id: {
            "predicted_low": c.low,
            "predicted_high": c.high,
            "split": c.row.split,
            "band_regime": c.pooled_regime,
        }
        for c in checked
    }
    coverage = [{"regime": label, "split": split, **summary(rows)} for label, split, rows in groups(checked)]
    return {"cases": cases, "coverage": coverage}


def _sections(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` as its preamble and its ``## `` sections in order, each (heading line, its text up to the next
    section); a ``<!-- ... -->`` marker line standing just before a heading (blank lines between allowed) starts
    that heading's section."""
    lines = text.splitlines(keepends=True)
    starts = []
    for i, line in enumerate(lines):
        if line.startswith("## "):
            j = i
            while j > 0 and not lines[j - 1].strip():
                j -= 1
            starts.append(j - 1 if j > 0 and re.match(r"<!--.*-->\s*$", lines[j - 1]) else i)
    if not starts:
        return text, []
    head = "".join(lines[: starts[0]])
    bounds = [*starts, len(lines)]
    sections = []
    for a, b in itertools.pairwise(bounds):
        body = "".join(lines[a:b])
        heading = next(line for line in lines[a:b] if line.startswith("## ")).rstrip("\n")
        sections.append((heading, body))
    return head, sections
