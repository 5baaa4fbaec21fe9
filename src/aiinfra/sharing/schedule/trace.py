"""Job traces: a CSV file (every row checked, the first bad one named) or a seeded synthetic generator."""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

import numpy as np

from aiinfra.errors import SpecError
from aiinfra.sharing.schedule.spec import GeneratorInput, Jobs

K = TypeVar("K")

COLUMNS = ("job_id", "arrival_s", "gpus", "duration_s", "priority", "user")
OPTIONAL = ("mig_profile",)


def _number(raw: str | None, where: str, name: str, integer: bool, minimum: float, allow_blank: bool = False) -> float:
    text = (raw or "").strip()
    if not text:
        if allow_blank:
            return 0.0
        raise SpecError(f"{where}.{name}", raw or "", "missing", f"give {name} in every row")
    try:
        value = float(text)
    except ValueError:
        raise SpecError(f"{where}.{name}", text, "not a number", f"write {name} as a number") from None
    if not math.isfinite(value) or value < minimum or (integer and not value.is_integer()):
        kind = "an integer" if integer else "a number"
        raise SpecError(f"{where}.{name}", text, f"must be {kind} ≥ {minimum:g}", f"fix {name} in this row")
    return value


def read_trace(path: Path, field: str = "schedule.trace") -> Jobs:
    """Read a CSV trace; a malformed row raises SpecError naming its line and column."""
    if not path.is_file():
        raise SpecError(field, str(path), "file not found", "give the trace CSV's path relative to the schedule file")
    ids: list[str] = []
    arrival: list[float] = []
    gpus: list[int] = []
    duration: list[float] = []
    priority: list[int] = []
    user: list[str] = []
    mig: list[str] = []
    with path.open(newline="") as fh:
        rows = (line for line in fh if line.strip() and not line.lstrip().startswith("#"))
        reader = csv.DictReader(rows)
        header = tuple(reader.fieldnames or ())
        missing = [c for c in COLUMNS if c not in header]
        unknown = [c for c in header if c not in COLUMNS + OPTIONAL]
        if missing or unknown:
            raise SpecError(
                f"{field} header",
                ",".join(header),
                f"missing columns {missing}" if missing else f"unknown columns {unknown}",
                f"columns: {','.join(COLUMNS + OPTIONAL)}",
            )
        seen: set[str] = set()
        for n, row in enumerate(reader, start=1):
            where = f"{path.name} row {n}"
            if None in row:
                raise SpecError(where, row[None], "more cells than header columns", "remove the extra cells")
            job_id = (row["job_id"] or "").strip()
            if not job_id or job_id in seen:
                raise SpecError(f"{where}.job_id", job_id, "missing or repeated", "give every job a unique id")
            seen.add(job_id)
            profile = (row.get("mig_profile") or "").strip()
            g = _number(row["gpus"], where, "gpus", True, 0 if profile else 1, allow_blank=bool(profile))
            if profile and g:
                raise SpecError(
                    f"{where}.gpus",
                    row["gpus"],
                    "a MIG job takes one instance, not whole GPUs",
                    "leave gpus empty (or 0) when mig_profile is set",
                )
            dur = _number(row["duration_s"], where, "duration_s", False, 0)
            if dur <= 0:
                raise SpecError(f"{where}.duration_s", row["duration_s"], "must be > 0", "fix duration_s in this row")
            ids.append(job_id)
            arrival.append(_number(row["arrival_s"], where, "arrival_s", False, 0))
            gpus.append(int(g))
            duration.append(dur)
            priority.append(int(_number(row["priority"], where, "priority", True, -1e9)))
            u = (row["user"] or "").strip()
            if not u:
                raise SpecError(f"{where}.user", row["user"], "missing", "give every job a user")
            user.append(u)
            mig.append(profile)
    if not ids:
        raise SpecError(field, str(path), "no job rows", "add rows after the header")
    return Jobs(tuple(ids), tuple(arrival), tuple(gpus), tuple(duration), tuple(priority), tuple(user), tuple(mig))


def _choice(rng: np.random.Generator, table: Mapping[K, float], n: int, field: str) -> list[K]:
    keys = list(table)
    p = np.array([table[k] for k in keys], dtype=float)
    if (p < 0).any() or p.sum() <= 0:
        raise SpecError(field, table, "probabilities must be ≥ 0 with a positive sum", "fix the weights")
    idx = rng.choice(len(keys), size=n, p=p / p.sum())
    return [keys[i] for i in idx]


def generate(g: GeneratorInput) -> Jobs:
    """Seeded synthetic trace: Poisson arrivals, GPU counts and priorities from the given tables, log-normal
    durations, users uniform. Same seed, same jobs."""
    rng = np.random.default_rng(g.seed)
    n = g.jobs
    arrival = np.cumsum(rng.exponential(1.0 / g.arrival_rate_per_s, size=n))
    gpus = _choice(rng, g.gpus, n, "schedule.generator.gpus")
    if any(x < 1 for x in gpus):
        raise SpecError("schedule.generator.gpus", g.gpus, "GPU counts must be ≥ 1", "fix the table")
    duration = g.duration_median_s * np.exp(g.duration_sigma * rng.standard_normal(n))
    prio = _choice(rng, g.priorities, n, "schedule.generator.priorities")
    users = rng.integers(0, g.users, size=n)
    mig = [""] * n
    if g.mig_profiles:
        share = sum(g.mig_profiles.values())
        if share > 1 + 1e-9 or min(g.mig_profiles.values()) < 0:
            raise SpecError(
                "schedule.generator.mig_profiles",
                g.mig_profiles,
                "probabilities must be ≥ 0, sum ≤ 1",
                "lower the weights",
            )
        mig = _choice(rng, {"": 1.0 - share, **g.mig_profiles}, n, "schedule.generator.mig_profiles")
        gpus = [0 if m else x for x, m in zip(gpus, mig, strict=True)]
    return Jobs(
        tuple(f"g{i}" for i in range(n)),
        tuple(float(x) for x in arrival),
        tuple(gpus),
        tuple(float(x) for x in duration),
        tuple(prio),
        tuple(f"u{int(u)}" for u in users),
        tuple(mig),
    )


def write_trace(jobs: Jobs, path: Path, comment: str = "") -> None:
    """Write jobs in the CSV format :func:`read_trace` reads."""
    with path.open("w", newline="") as fh:
        for line in comment.splitlines():
            fh.write(f"# {line}\n")
        w = csv.writer(fh)
        w.writerow(COLUMNS + OPTIONAL)
        for i in range(len(jobs)):
            w.writerow(
                [
                    jobs.ids[i],
                    f"{jobs.arrival_s[i]:.1f}",
                    jobs.gpus[i] or "",
                    f"{jobs.duration_s[i]:.1f}",
                    jobs.priority[i],
                    jobs.user[i],
                    jobs.mig_profile[i],
                ]
            )
