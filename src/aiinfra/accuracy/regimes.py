"""The regime of a validation row or of an answer: the features the error of a prediction depends on, and the order
in which a regime with too few measured rows is pooled with its neighbours (docs/accuracy.md, "Regimes")."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from aiinfra.dataclass_code import loads_fast

ANY = "any"
"""A dimension pooled over (every value)."""

SCALE_BANDS: tuple[tuple[str, int, int | None], ...] = (
    ("1–63", 1, 63),
    ("64–511", 64, 511),
    ("512–999", 512, 999),
    ("≥ 1,000", 1000, None),
)
"""Accelerator-count bands, as docs/validation.md reports the training error (aiinfra.validation.runner)."""

UTILISATION_LEVELS: tuple[tuple[str, float], ...] = (("light", 0.5), ("loaded", 0.8), ("near-saturation", 1.25))
"""Load levels by the prediction's own utilisation ρ̂ (analytic.equilibrium): each level holds the loads below its
bound; ρ̂ ≥ 1.25 is ``overloaded`` (latencies only: :func:`load_level`). Under a load, latency is the step time
amplified by queueing. An M/G/1 queue's mean wait is ρ·E[S²] / (2·(1 − ρ)·E[S]) (the Pollaczek–Khinchine
mean-value formula; Kleinrock, *Queueing Systems* Vol. 1, 1975, ch. 5). With continuous batching, a step of
s·(a + b·n) at n = λ·L·TPOT sequences in flight (Little's law, L output tokens per request) gives
TPOT = s·a / (1 − s·ρ) with ρ = b·λ·L, so d ln TPOT / d ln s = 1 / (1 − ρ): a relative error in the predicted step
time (or capacity) comes out of the latency amplified 1 / (1 − ρ) times, under 2× below ρ = 0.5, 2–5× up to 0.8,
and without bound towards 1. Past saturation the queue grows for as long as arrivals outrun service: N requests
arriving at λ above the service rate μ wait (N / 2)·(1 / μ − 1 / λ) on average, so d ln wait / d ln μ =
ρ / (ρ − 1), and a saturated batch's TPOT follows its step time one for one; the amplification falls back from
without bound at ρ = 1 to 5× at ρ = 1.25 (the same 5× as at 0.8) and towards 1 beyond. The bounds are those
amplifications, not fitted to the validation rows."""

SATURATED_LEVELS: tuple[str, ...] = ("near-saturation", "overloaded")
"""The levels at or past saturation (ρ̂ ≥ 0.8): a calibration level with too few publishers of its own borrows the
factor of these together (aiinfra.accuracy.model.calibrate)."""


@loads_fast
@dataclass(frozen=True, kw_only=True, slots=True)
class Regime:
    """Where a prediction lies. ``kind`` and ``quantity`` are never pooled over; every other field may be
    :data:`ANY` (pooled)."""

    kind: str
    """training | inference | reliability."""
    quantity: str
    """The error's quantity: step_time (training); ttft, tpot, throughput (inference); interruptions (reliability)."""
    scale_band: str = ANY
    arch: str = ANY
    """dense | moe."""
    generation: str = ANY
    """The accelerator's generation in the catalog (nvidia-hopper ...)."""
    engine: str = ANY
    parallelism: str = ANY
    """pipeline | tensor | sharded | data (training)."""
    load: str = ANY
    """batch-1 | light | loaded | near-saturation | overloaded | offline (inference: :func:`load_level`)."""

    def pooled(self, dims: tuple[str, ...]) -> Regime:
        """This regime with ``dims`` pooled over."""
        return replace(self, **{d: ANY for d in dims})

    def label(self) -> str:
        """As the answers print it: 'training step_time · ≥ 1,000 accelerators · dense · nvidia-hopper'."""
        parts = [f"{self.kind} {self.quantity}"]
        for f in fields(self)[2:]:
            v = getattr(self, f.name)
            if v != ANY:
                parts.append(f"{v} accelerators" if f.name == "scale_band" else f"{v} load" if f.name == "load" else v)
        return " · ".join(parts)


HIERARCHY: dict[str, tuple[str, ...]] = {
    "training": ("parallelism", "generation", "arch", "scale_band"),
    "inference": ("generation", "arch", "engine", "load"),
    "reliability": ("generation",),
}
"""Per kind, the regime's dimensions in the order they are pooled over when a regime has too few rows: the
first is given up first. Training keeps the scale band longest (the error grows with scale: docs/validation.md),
inference the load level (batch-1 latency and saturated throughput miss differently)."""


def levels(regime: Regime) -> list[Regime]:
    """The regime, then each coarser pooling of it, down to the kind and quantity alone."""
    dims = HIERARCHY[regime.kind]
    return [regime.pooled(dims[:i]) for i in range(len(dims) + 1)]


def scale_band(count: int | None) -> str:
    """The SCALE_BANDS label of an accelerator count (ANY when the count is unknown or in no band)."""
    if count is None:
        return ANY
    for label, lo, hi in SCALE_BANDS:
        if count >= lo and (hi is None or count <= hi):
            return label
    return ANY


def generation_of(accelerator_id: str, generations: Mapping[str, str | None]) -> str:
    """The catalog generation of an accelerator id (``generations``: id -> generation, read from the catalog at the
    application boundary); the id itself where the catalog has none."""
    key = accelerator_id.strip()
    if key not in generations:
        return key or ANY
    return generations[key] or key


def parallelism_family(tp: int, pp: int, sharding: str) -> str:
    """pipeline (pp > 1), else tensor (tp > 1), else sharded (ZeRO-3 / FSDP) or data."""
    if pp > 1:
        return "pipeline"
    if tp > 1:
        return "tensor"
    return "sharded" if sharding in ("zero3", "fsdp") else "data"


def load_level(sequences: int | None, offline: bool, rho: float | None, quantity: str) -> str:
    """offline (no load: the largest batch that fits, or more demand than it serves by construction), batch-1 (one
    sequence at a time: no batching, no queue), else the :data:`UTILISATION_LEVELS` band of ``rho``
    (analytic.equilibrium.utilisation); ANY when the utilisation is unknown. ``quantity``: the error's (ttft, tpot,
    throughput). ``overloaded`` (ρ̂ ≥ 1.25) is a level of the latencies only: a throughput is the offered load below
    capacity and the capacity above it, so its error is at most the capacity's, amplified neither side of
    saturation, and every throughput at ρ̂ ≥ 0.8 is ``near-saturation``."""
    if offline:
        return "offline"
    if sequences == 1:
        return "batch-1"
    if rho is None:
        return ANY
    level = next((name for name, bound in UTILISATION_LEVELS if rho < bound), "overloaded")
    return "near-saturation" if level == "overloaded" and quantity == "throughput" else level


INFERENCE_QUANTITY = {
    "ttft_s": "ttft",
    "tpot_s": "tpot",
    "itl_intercept_s": "tpot",
    "output_tokens_per_s": "throughput",
    "requests_per_s": "throughput",
}
"""Inference metrics -> the quantity whose errors they are; other metrics (KV capacity, ITL slope) have none."""

RATE_METRICS = ("tokens_per_s_per_accelerator", "output_tokens_per_s", "requests_per_s")
"""Metrics that are rates (aiinfra.validation.runner.RATE_METRICS)."""


def _int(row: dict[str, str], key: str, default: int | None = None) -> int | None:
    text = (row.get(key) or "").strip()
    try:
        v = float(text)
    except ValueError:
        return default
    return int(v) if math.isfinite(v) else default


def row_regime(
    kind: str, row: dict[str, str], generations: Mapping[str, str | None], rho: float | None = None
) -> Regime | None:
    """The regime of one validation CSV row (None: a metric no answer's band uses); ``generations`` as
    :func:`generation_of`; ``rho``: an inference row's predicted utilisation (analytic.equilibrium.utilisation, from its
    prediction's details)."""
    moe = "moe" if (_int(row, "num_experts", 1) or 1) > 1 else "dense"
    gen = generation_of(row.get("accelerator") or "", generations)
    if kind == "training":
        return Regime(
            kind=kind,
            quantity="step_time",
            scale_band=scale_band(_int(row, "num_accelerators")),
            arch=moe,
            generation=gen,
            parallelism=parallelism_family(
                _int(row, "tp", 1) or 1, _int(row, "pp", 1) or 1, (row.get("sharding") or "none").strip()
            ),
        )
    if kind == "inference":
        quantity = INFERENCE_QUANTITY.get((row.get("metric") or "").strip())
        if quantity is None:
            return None
        mode = (row.get("mode") or "").strip()
        batch = None if mode == "poisson" else _int(row, "batch_or_concurrency")
        level = load_level(batch, mode == "offline", rho, quantity)
        return Regime(
            kind=kind,
            quantity=quantity,
            arch=moe,
            generation=gen,
            engine=(row.get("engine") or "").strip() or ANY,
            load=level,
        )
    if kind == "reliability":
        if row.get("quantity") == "ettr_frac":
            return None
        return Regime(kind=kind, quantity="interruptions", generation=gen)
    return None


_SOURCE_HOSTS = ("github.com", "raw.githubusercontent.com")


# Public copies of a publisher's repository: rows read from a copy belong to the original's publisher.
_MIRRORS = {"Richardyu114/training_results": "mlcommons/training_results"}


def source_key(row: dict[str, str]) -> str:
    """Who published a row, for leave-one-source-out: a GitHub repository (owner/name; the rounds of one benchmark,
    ``mlcommons/training_results_v4.0`` and ``_v5.0``, are one publisher: the same harness and reference recipes,
    and a known public copy counts as the original, ``_MIRRORS``), an arXiv paper, else the host and first path
    part of ``source_url``; the ``source`` text up to its first comma when there is no URL."""
    url = re.sub(r"^https?://(www\.)?", "", (row.get("source_url") or "").strip())
    if not url:
        return (row.get("source") or row.get("id") or "").split(",")[0].split(" (")[0].strip()
    parts = url.split("/")
    if parts[0] in _SOURCE_HOSTS:
        repo = re.sub(r"_v\d+(\.\d+)*$", "", "/".join(parts[1:3]))
        return "github.com/" + _MIRRORS.get(repo, repo)
    if parts[0] == "arxiv.org" and len(parts) > 2:
        return "arxiv:" + re.sub(r"v\d+$", "", parts[2])
    return "/".join(parts[:2])
