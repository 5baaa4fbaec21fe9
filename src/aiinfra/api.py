"""The public Python API: every question of the CLI as a function.

Each function takes a scenario as a YAML path, a mapping in the file format or a resolved Scenario, plus
``set=`` overrides (``{"training.plan.tp": 8}``, like the CLI's ``--set``), and returns the application layer's
frozen result: ``.to_dict()`` is exactly the CLI's ``--json`` object, ``.to_frame()`` its main table as a pandas
DataFrame. Bad input raises :class:`aiinfra.errors.SpecError` (``.field``, ``.value``, ``.fix``).

Every function also takes ``catalog=``: a :class:`aiinfra.catalog.Catalog` to answer against, e.g.
``aiinfra.catalog.Catalog.default().with_overlay("my-rows/")`` with your own accelerators or prices (the CLI's
``--catalog-overlay DIR``); None = the active catalog (the shipped one)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiinfra import app
from aiinfra.app import load_scenario
from aiinfra.app.scenario import ScenarioLike, _set_list
from aiinfra.catalog import Catalog, use

if TYPE_CHECKING:
    import pandas  # type: ignore[import-untyped]

Overrides = Mapping[str, Any] | Iterable[str] | None


def _using(catalog: Catalog | None) -> contextlib.AbstractContextManager[object]:
    return contextlib.nullcontext() if catalog is None else use(catalog)


def train(scenario: ScenarioLike, *, set: Overrides = None, catalog: Catalog | None = None) -> app.TrainResult:
    """Training plan: memory, the fastest parallel layout that fits (searched unless given), step time, MFU,
    time-to-train, energy (``aiinfra train``)."""
    with _using(catalog):
        return app.train(load_scenario(scenario, set))


def memory(scenario: ScenarioLike, *, set: Overrides = None, catalog: Catalog | None = None) -> app.MemoryResult:
    """Training memory per accelerator, incl. LoRA / QLoRA and CPU offload (``aiinfra memory``)."""
    with _using(catalog):
        return app.memory(load_scenario(scenario, set))


def infer(scenario: ScenarioLike, *, set: Overrides = None, catalog: Catalog | None = None) -> app.InferResult:
    """Serving latency, throughput, KV capacity and memory per accelerator (``aiinfra infer``)."""
    with _using(catalog):
        return app.infer(load_scenario(scenario, set))


def capacity(
    scenario: ScenarioLike,
    *,
    set: Overrides = None,
    accelerators: Sequence[str] | None = None,
    engines: Sequence[str] | None = None,
    simulate: bool = False,
    seed: int = 0,
    disaggregate: bool = False,
    catalog: Catalog | None = None,
) -> app.CapacityResult:
    """The cheapest deployment meeting the demand and SLOs over engines × accelerators × layouts × weight formats
    (``aiinfra capacity``); ``simulate`` checks it by simulating one replica."""
    with _using(catalog):
        return app.capacity(
            load_scenario(scenario, set),
            list(accelerators) if accelerators else None,
            list(engines) if engines else None,
            simulate,
            seed,
            disaggregate=disaggregate,
        )


def simulate(
    scenario: ScenarioLike, *, set: Overrides = None, seed: int = 0, catalog: Catalog | None = None
) -> app.SimulateResult:
    """Discrete-event serving simulation (``aiinfra simulate``)."""
    with _using(catalog):
        return app.simulate(load_scenario(scenario, set), seed)


def find_max_rate(
    scenario: ScenarioLike, *, set: Overrides = None, seed: int = 0, catalog: Catalog | None = None
) -> app.MaxRateResult:
    """The highest request rate whose simulation meets the SLO (``aiinfra simulate --find-max-rate``)."""
    with _using(catalog):
        return app.find_max_rate(load_scenario(scenario, set), seed)


def cost(scenario: ScenarioLike, *, set: Overrides = None, catalog: Catalog | None = None) -> app.CostResult:
    """Cloud bill per provider and pricing kind, spot losses, itemised bill, energy and CO2 (``aiinfra cost``)."""
    with _using(catalog):
        return app.cost(load_scenario(scenario, set))


def datacenter(
    scenario: ScenarioLike, *, set: Overrides = None, catalog: Catalog | None = None
) -> app.DatacenterResult:
    """Nodes, racks, cooling, facility power, fabric and storage bandwidth (``aiinfra datacenter``)."""
    with _using(catalog):
        return app.datacenter(load_scenario(scenario, set))


def tco(scenario: ScenarioLike, *, set: Overrides = None, catalog: Catalog | None = None) -> app.TcoResult:
    """On-prem vs cloud cumulative cost and the breakeven month (``aiinfra tco``)."""
    with _using(catalog):
        return app.tco(load_scenario(scenario, set))


def check(scenario: ScenarioLike, *, set: Overrides = None, catalog: Catalog | None = None) -> app.CheckResult:
    """A scenario validated and resolved (``aiinfra check``)."""
    with _using(catalog):
        return app.check(load_scenario(scenario, set))


def validate(cases: Sequence[str | Path] | None = None, catalog: Catalog | None = None) -> app.ValidateResult:
    """Predicted vs measured for published runs; default the shipped reference rows (``aiinfra validate``)."""
    with _using(catalog):
        return app.validate(cases)


def model(model: str | dict[str, Any], seq_len: int | None = None, catalog: Catalog | None = None) -> app.ModelFigures:
    """A model's architecture and derived figures (``aiinfra model show``)."""
    with _using(catalog):
        return app.model_show(model, seq_len)


def pack(
    portfolio: str | Path | Mapping[str, Any], *, set: Overrides = None, catalog: Catalog | None = None
) -> app.PackResult:
    """The fewest (or cheapest) GPUs with a MIG layout each for a portfolio file (``aiinfra pack``)."""
    with _using(catalog):
        return app.pack(portfolio, _set_list(set))


def schedule(
    scenario: str | Path | Mapping[str, Any], *, set: Overrides = None, catalog: Catalog | None = None
) -> app.ScheduleResult:
    """A job trace through a cluster under a scheduling policy (``aiinfra schedule``)."""
    with _using(catalog):
        return app.schedule(scenario, _set_list(set))


def sweep(
    scenario: ScenarioLike,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    zip: Mapping[str, Sequence[Any]] | None = None,
    question: str = "infer",
    options: Mapping[str, Any] | None = None,
    set: Overrides = None,
    out: str | Path | None = None,
    backend: str = "auto",
    workers: int | None = None,
    address: str | None = None,
    progress: bool | None = False,
    catalog: Catalog | None = None,
) -> pandas.DataFrame:
    """One question at every point of ``grid`` (keys crossed) × ``zip`` (keys walked together), one DataFrame row
    per point in grid order: the grid keys, ``scenario_hash``, ``error`` and the flattened result (``aiinfra
    sweep``). ``backend``: ``serial``, ``process`` (local pool), ``ray`` or ``auto``; ``out`` keeps the results
    directory (and resumes it); ``options`` go to the question (capacity: accelerators, engines, simulate, seed).
    ``.attrs["summary"]`` holds points, failures, wall time and points/s. Needs ``pip install 'aiinfra[sweep]'``."""
    from aiinfra.app.sweep import sweep_frame

    with _using(catalog):
        return sweep_frame(
            scenario,
            grid=grid,
            zip=zip,
            question=question,
            options=options,
            set=list(_set_list(set)),
            out=out,
            backend=backend,
            workers=workers,
            address=address,
            progress=progress,
        )


def prices_refresh(
    providers: Sequence[str] | None = None, out: str | Path | None = None, offers: str | Path | None = None
) -> app.PricesRefreshResult:
    """Current cloud offers (through gpuhunt: ``pip install 'aiinfra[prices]'``; or recorded gpuhunt catalog
    files in ``offers``) written as a price overlay into ``out`` (default: the refreshed-prices folder every answer
    reads) (``aiinfra prices refresh``)."""
    return app.prices_refresh(list(providers) if providers else None, out, offers)


def price_diff(
    examples: str | Path | None = None, *, with_examples: bool = True, catalog: Catalog | None = None
) -> app.PriceDiffResult:
    """Per offer, the shipped price row against the one in use (refreshed prices, overlays), and the cheapest
    answer of each shipped example with either (``aiinfra catalog list prices --diff``)."""
    with _using(catalog):
        return app.price_diff(examples, with_examples)


def calibrate(
    scenario: ScenarioLike,
    results: Sequence[str | Path],
    *,
    out: str | Path,
    set: Overrides = None,
    catalog: Catalog | None = None,
) -> app.CalibrateResult:
    """Fit the planner's efficiency factors to benchmark result files (vLLM, GuideLLM, CSV; training CSV and logs)
    of the deployment ``scenario`` describes and write ``out`` as a catalog overlay (``aiinfra calibrate``); answer
    against it with ``catalog=Catalog.default().with_overlay(out)``."""
    with _using(catalog):
        return app.calibrate(load_scenario(scenario, set), [str(r) for r in results], out)


def probe(out: str | Path, *, accelerator: str | None = None) -> app.ProbeResult:
    """Microbenchmark this machine's GPU (GEMM by shape and dtype, attention, HBM copy, NCCL collectives) and write
    ``out/efficiency.yaml`` as a catalog overlay (``aiinfra probe``); needs PyTorch and an NVIDIA or AMD GPU."""
    return app.probe(out, accelerator)
