"""How far two published measurements of the same serving setup disagree: the floor under any model's error.

A validation row is one measurement. Where a publisher measured the same configuration twice (the same model,
accelerator, layout, engine, precisions, lengths, load and statistic; only the machine or the release differs), the
two values disagree by some ratio r. If each measurement is the setup's typical value times an independent
log-normal factor of spread σ, ln r ~ N(0, 2σ²), so a model that predicted the typical value exactly would still be
|N(0, σ²)| off a single measurement: its median |error| is the pairs' median |ln r| / √2 (for a normal X − Y of two
independent draws, median |X − Y| = √2 · median |X − μ|). That is the best median error any model can score on rows
like these, and where it exceeds a target the target cannot be met on those rows.

Pairs are found among the OPEN inference rows only (sealed rows stay unread), grouped by publisher (the unit of
leave-one-source-out, aiinfra.accuracy.regimes.source_key) and every configuration column except the row's id,
source, notes, value and engine release text. Throughput rows are compared per accelerator and without the request
rate, so MLPerf submissions of one system at their own rates compare (their served rate is the system's capacity under
the latency limits). Pairs whose releases differ are reported apart ("next release"): release drift, not
machine-to-machine noise.

    PYTHONPATH=src python bench/replicate_spread.py
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from aiinfra.accuracy.regimes import source_key
from aiinfra.validation.runner import read_cases

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data"

NOT_CONFIGURATION = frozenset({"id", "source", "source_url", "notes", "value", "derived", "engine_version"})
"""Columns that say who measured a row and what they found, not what they measured."""

RATE_METRICS = frozenset({"output_tokens_per_s", "requests_per_s"})
"""Rates of the whole run, compared per accelerator (aiinfra.validation.runner.RATE_METRICS also holds
tokens_per_s_per_accelerator, already per accelerator)."""
PER_RUN_COLUMNS = frozenset({"num_accelerators", "request_rate_per_s"})
"""Left out of a throughput row's configuration: its value is compared per accelerator."""


@dataclass(frozen=True, slots=True)
class Pair:
    """Two measurements of one configuration by one publisher."""

    publisher: str
    metric: str
    ids: tuple[str, str]
    log_ratio: float
    """ln(first / second), both per accelerator for a throughput."""
    same_release: bool


def configuration(row: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The columns that define what was measured (:data:`NOT_CONFIGURATION` and, for a throughput, the run's size
    and rate left out)."""
    rate = row["metric"].strip() in RATE_METRICS
    return tuple(
        (c, (row[c] or "").strip())
        for c in sorted(row)
        if c not in NOT_CONFIGURATION and not (rate and c in PER_RUN_COLUMNS)
    )


def comparable_value(row: dict[str, str]) -> float:
    """The row's value, per accelerator for a throughput."""
    value = float(row["value"])
    if row["metric"].strip() in RATE_METRICS:
        value /= max(int(float(row["num_accelerators"] or 1)), 1)
    return value


def pairs(rows: Iterable[dict[str, str]]) -> list[Pair]:
    """Every pair of rows with the same publisher and configuration."""
    groups: dict[tuple[str, tuple[tuple[str, str], ...]], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        groups[(source_key(row), configuration(row))].append(row)
    out = []
    for (pub, _), members in groups.items():
        for a, b in combinations(members, 2):
            out.append(
                Pair(
                    publisher=pub,
                    metric=a["metric"].strip(),
                    ids=(a["id"], b["id"]),
                    log_ratio=math.log(comparable_value(a) / comparable_value(b)),
                    same_release=(a.get("engine_version") or "").strip() == (b.get("engine_version") or "").strip(),
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class Spread:
    """The disagreement of a set of pairs and the model-error floor it implies."""

    pairs: int
    median_abs_log_ratio: float
    floor_median_abs_error_frac: float
    """expm1(median |ln r| / √2): the median |predicted / measured − 1| of a model exact on the typical value."""
    within_25pct_frac: float
    """Share of the pairs whose two values agree within ±25 %."""


def spread(selected: Sequence[Pair]) -> Spread:
    """:class:`Spread` of ``selected`` (at least one pair)."""
    m = statistics.median(abs(p.log_ratio) for p in selected)
    return Spread(
        pairs=len(selected),
        median_abs_log_ratio=m,
        floor_median_abs_error_frac=math.expm1(m / math.sqrt(2.0)),
        within_25pct_frac=sum(abs(math.expm1(p.log_ratio)) <= 0.25 for p in selected) / len(selected),
    )


def open_rows(data: Path = DATA) -> list[dict[str, str]]:
    """The open inference rows: inference.csv and every inference_*_open.csv (read as ``aiinfra validate`` reads
    them)."""
    files = [data / "inference.csv", *sorted(data.glob("inference*_open.csv"))]
    return [row for path in files for row in read_cases(path)[1]]


def markdown(found: Sequence[Pair]) -> str:
    """The table docs/accuracy.md shows: per publisher, kind of pair and metric."""
    lines = [
        "| publisher | pairs of | metric | pairs | median disagreement | agree within ±25 % "
        "| floor: best median error |",
        "|---|---|---|---|---|---|---|",
    ]
    keys = sorted({(p.publisher, p.same_release, p.metric) for p in found})
    for pub, same, metric in keys:
        s = spread([p for p in found if (p.publisher, p.same_release, p.metric) == (pub, same, metric)])
        lines.append(
            f"| {pub} | {'another machine' if same else 'next release'} | {metric} | {s.pairs} | "
            f"{math.expm1(s.median_abs_log_ratio):.1%} | {s.within_25pct_frac:.0%} | "
            f"{s.floor_median_abs_error_frac:.1%} |"
        )
    return "\n".join(lines)


def main() -> None:
    found = pairs(open_rows())
    print(markdown(found))
    machine = [p for p in found if p.same_release]
    if machine:
        s = spread(machine)
        print(
            f"\nsame release, another machine: {s.pairs} pairs, median disagreement "
            f"{math.expm1(s.median_abs_log_ratio):.1%}, floor {s.floor_median_abs_error_frac:.1%}"
        )


if __name__ == "__main__":
    main()
