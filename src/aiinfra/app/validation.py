"""Predicted vs measured for published runs: the validation of the planners."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiinfra.app.base import Result
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

    def to_dict(self) -> dict[str, Any]:
        return {"cases": [jsonable(c) for c in self.cases], "summary": self.summary, "targets": self.targets}

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per validation case."""
        return [jsonable(c) for c in self.cases]

    def markdown(self) -> str:
        """The report docs/validation.md is made of."""
        return markdown(list(self.files))

    def write_markdown(self, path: str) -> None:
        """Write :meth:`markdown` to ``path``, keeping the reliability section an earlier file ends with (it is
        written by its own script, bench/reliability_validation.py)."""
        from pathlib import Path

        from aiinfra.reliability.validation import MARK

        out = Path(path)
        old = out.read_text() if out.exists() else ""
        tail = old[old.index(MARK) :] if MARK in old else ""
        out.write_text(self.markdown().rstrip("\n") + "\n\n" + tail if tail else self.markdown())


def _offset(
    progress: Callable[[int, int | None], None], before: int, total: int
) -> Callable[[int, int | None], None]:
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
        results = [run(p) for p in paths]
    else:
        sizes = [len(read_cases(p)[1]) for p in paths]
        total = sum(sizes)
        for i, p in enumerate(paths):
            results.append(run(p, _offset(progress, sum(sizes[:i]), total)))
    every = [c for r in results for c in r["cases"]]
    return ValidateResult(files=tuple(results), cases=tuple(every), summary=summarise(every),
                          targets=by_target(every))  # fmt: skip
