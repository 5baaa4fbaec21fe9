"""Workload facts a benchmark row leaves blank, read from the benchmark's catalog row.

MLPerf Inference LoadGen summaries give samples/s and tokens/s but not the prompt lengths, so an MLPerf row's
``input_tokens`` is blank. The benchmark's dataset is fixed, though: catalog/data/benchmarks.yaml holds its
per-sample statistics (with sources), and they stand in for the blank cells. A row's own value always wins.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from aiinfra.sim.arrivals import quantile_table_mean
from aiinfra.specs.benchmark import BenchmarkSpec, TokenStats, benchmark_named
from aiinfra.specs.engine import EngineProfile
from aiinfra.validation import switches
from aiinfra.validation.rows import RowError, integer, num
from aiinfra.validation.types import RowTables

#: simulated requests of a Poisson row that states no count (num_requests) and whose benchmark has no minimum run
DEFAULT_SIM_REQUESTS = 300


def is_mlperf(row: dict[str, str]) -> bool:
    """Whether the row is an MLPerf result (its id, source, URL or notes say so)."""
    return any("mlperf" in (row.get(k) or "").lower() for k in ("id", "source", "source_url", "notes"))


#: the dataset a serving-benchmark client samples, named in a row's id (catalog/data/benchmarks.yaml)
CLIENT_DATASETS = {"sharegpt": "sharegpt-v3-serving-sampler"}


def benchmark_of(row: dict[str, str], tables: RowTables) -> BenchmarkSpec | None:
    """The catalog benchmark an MLPerf row reports: named by its result path (source, source_url), else by
    its model_name, else by its notes. Another row: the dataset its benchmark client sampled, where its id names
    one the catalog describes (ShareGPT); else None. ``tables``: the catalog's benchmarks."""
    if not is_mlperf(row):
        rid = row.get("id", "").lower()
        for name, bench_id in CLIENT_DATASETS.items():
            if name in rid:
                return tables.benchmark(bench_id)
        return None
    for keys in (("source", "source_url"), ("model_name",), ("notes",)):
        found = benchmark_named(tables.benchmarks.values(), *(row.get(k) or "" for k in keys))
        if found is not None:
            return found
    return None


def _mean(stats: TokenStats, bench: BenchmarkSpec, what: str, flags: list[str]) -> int:
    if stats.mean is None:
        raise RowError(
            f"{what} blank, and {bench.id} has no published mean {what.split('_')[0]} length "
            "(catalog/data/benchmarks.yaml)"
        )
    value = max(1, round(stats.mean))
    flags.append(
        f"{what} blank: {value}, the mean over the {bench.num_samples or '?'} samples of {bench.id} "
        "(catalog/data/benchmarks.yaml)"
    )
    return value


def fill_lengths(
    row: dict[str, str], bench: BenchmarkSpec | None, inp: int | None, out: int | None, flags: list[str]
) -> tuple[int, int]:
    """The row's (input, output) token means, blanks taken from its benchmark; RowError when neither the
    row nor a catalog benchmark gives them."""
    if bench is None:
        if is_mlperf(row):
            raise RowError(
                "input_tokens or output_tokens blank, and no benchmark in catalog/data/benchmarks.yaml "
                "matches the row's source or model_name"
            )
        raise RowError("input_tokens or output_tokens blank (mean prompt length not stated by the source)")
    if inp is None:
        inp = _mean(bench.input_tokens, bench, "input_tokens", flags)
    if out is None:
        out = _mean(bench.output_tokens, bench, "output_tokens", flags)
    return inp, out


def _length_dist(stats: TokenStats | None, what: str, flags: list[str]) -> dict[str, object]:
    """The benchmark's own length distribution where the catalog has its quantile table (empirical, scaled to the
    row's mean); else a lognormal with its σ (moment fit, TokenStats.lognormal_sigma) capped at its longest
    sample; fixed at the row's mean when the benchmark publishes no spread."""
    if stats is not None and stats.quantiles and len(stats.quantiles) >= 2 and stats.mean:
        q = stats.quantiles
        flags.append(
            f"{what}: the dataset's own distribution ({len(q) - 1}-interval quantile table, {q[0]:g} to {q[-1]:g}, "
            f"scaled to the row's mean)"
        )
        return {"kind": "empirical", "quantiles": list(q)}
    sigma = stats.lognormal_sigma if stats is not None else None
    if stats is None or sigma is None or stats.mean is None:
        flags.append(f"{what}: fixed at the row's mean (no published spread)")
        return {"kind": "fixed"}
    dist: dict[str, object] = {"kind": "lognormal", "sigma": round(sigma, 4)}
    cap = ""
    if stats.max is not None:
        dist["high"] = int(stats.max)
        cap = f", capped at the longest sample {int(stats.max)}"
    flags.append(
        f"{what}: lognormal σ={sigma:.3f} (moment fit to the dataset's mean {stats.mean:g} and std {stats.std:g}){cap}"
    )
    return dist


#: cap on simulated requests for a benchmark-length run (validation speed; see sim_settings)
MAX_BENCHMARK_SIM_REQUESTS = 100_000


def sim_settings(
    row: dict[str, str],
    engine: EngineProfile,
    budget_tokens: int | None,
    stated: dict[str, int | bool | str],
    bench: BenchmarkSpec | None,
    rate_per_s: float | None,
    flags: list[str],
) -> dict[str, object]:
    """The ``inference.simulation`` block (plus ``num_requests``) for a Poisson row.

    * scheduler: the settings the row states; the rest, for vLLM, the simulator's own V1 defaults for the
      device; for another engine, its defaults (catalog/data/engines.yaml) and the analytic path's budget;
    * requests: the count the row states (num_requests); else, for a benchmark with a minimum run length (MLPerf LoadGen
      600 s), rate × that duration, so the run reaches the steady state the measured run reports; else 300;
    * lengths: the benchmark's distributions where published (lognormal moment fit), else fixed at the means.
    """
    sched: dict[str, int | bool | str] = dict(stated)
    limits = ""
    eng = engine
    if not eng.device_dependent_defaults and eng.max_num_seqs is not None and eng.max_num_batched_tokens is not None:
        sched.setdefault("max_num_seqs", eng.max_num_seqs)
        sched.setdefault("max_num_batched_tokens", budget_tokens or eng.max_num_batched_tokens)
        # the engine's own chunked-prefill default (a stated budget is no chunked prefill: TensorRT-LLM schedules
        # whole prompts unless told otherwise), not the simulator's vLLM-style default
        sched.setdefault("chunked_prefill", eng.chunked_prefill)
        limits = (
            f"; {eng.id} scheduler limits {sched['max_num_seqs']} seqs / "
            f"{sched['max_num_batched_tokens']} tokens per iteration"
        )
    stated_requests = integer(row, "num_requests")
    if stated_requests:
        n_req = stated_requests
        why = "as the notes state"
    elif bench is not None and bench.min_duration_s and rate_per_s:
        n_req = math.ceil(rate_per_s * bench.min_duration_s)
        why = f"rate x the {bench.min_duration_s:g} s minimum run of {bench.id}"
        if n_req > MAX_BENCHMARK_SIM_REQUESTS:
            # a stable queue reaches its steady state long before: on the MLPerf v4.1 H100 Mixtral Server run
            # 100,000 of the full 208,800 requests give the same TTFT/TPOT means within 0.2 % and throughput
            # 2 % lower (the final drain weighs more in a shorter run), in 60 % of the time; an overloaded
            # queue grows either way (the reason string says so)
            n_req = MAX_BENCHMARK_SIM_REQUESTS
            why += f", capped at {MAX_BENCHMARK_SIM_REQUESTS:,} (steady state)"
    else:
        n_req = DEFAULT_SIM_REQUESTS
        why = "default"
    flags.append(f"simulated: {n_req} Poisson requests ({why}){limits}")
    out: dict[str, object] = {"num_requests": n_req, "scheduler": sched}
    out.update(length_dists(row, bench, flags))
    out.update(prefix_cache(row, flags))
    return out


def prefix_cache(row: dict[str, str], flags: list[str]) -> dict[str, object]:
    """The ``inference.simulation`` settings of a row whose prompts the server's prefix cache already held, served
    before by the same server: the first requests' whole prompts (``prefix_cached_requests``: an earlier run of a
    seeded benchmark client, or its warm-up) or every prompt's first ((L - 1) mod K) + 1 tokens
    (``prefix_cached_modulo_tokens`` K: an earlier run of the same seeded random-length benchmark at nominal K,
    SimulationConfig.prefix_cached_modulo_tokens); nothing for a cold cache."""
    out: dict[str, object] = {}
    n = integer(row, "prefix_cached_requests")
    if n:
        flags.append(
            f"the first {n} prompts already in the server's prefix cache (served earlier by the same server): "
            "their prefill computes the last token only"
        )
        out["prefix_cached_requests"] = n
    k = integer(row, "prefix_cached_modulo_tokens")
    if k:
        flags.append(
            f"each prompt's first ((L - 1) mod {k}) + 1 tokens already in the server's prefix cache (an earlier run "
            f"of the same seeded benchmark at nominal {k} tokens on the same server)"
        )
        out["prefix_cached_modulo_tokens"] = k
    return out


def length_dists(row: dict[str, str], bench: BenchmarkSpec | None, flags: list[str]) -> dict[str, object]:
    """The ``inference.simulation`` length distributions of a simulated row (means: the row's own):

    * a benchmark or dataset the catalog describes: lognormal with its σ (moment fit), capped at its longest sample;
    * SGLang's ``random`` dataset (and vLLM's before 0.8) with range ratio 0 (``length_distribution`` column
      "uniform"): uniform on [1, 2·mean - 1], as those clients draw each length uniformly up to the requested one
      (sglang.bench_serving sample_random_requests: randint(max(int(len·ratio), 1), len)); "uniform:R" the same
      client's range ratio R;
      "uniform_about:R" vLLM's own random dataset (from its benchmarks/datasets.py), uniform within ±R of the mean;
    * a client that sends the requested lengths (``length_distribution`` "fixed": vLLM's random dataset with range ratio
      0), or a row that states no draw: fixed at the means (flagged); any other cell is refused.

    A row that states its client's cap on generated tokens (``max_output_tokens``: answers stop at EOS or at the cap)
    truncates the benchmark's output distribution there (:func:`_capped`). A draw the row states wins over the dataset
    its id names (a client told of a dataset it did not sample: vllm bench serve's ``--hf-name`` without
    ``--dataset-name hf`` samples its default random dataset)."""
    stated = switches.text(row, "length_distribution")
    if bench is not None and not stated:
        inputs = _length_dist(bench.input_tokens, "input lengths", flags)
        outputs = _length_dist(bench.output_tokens, "output lengths", flags)
        cap = integer(row, "max_output_tokens")
        if cap is not None:
            outputs = _capped(outputs, num(row, "output_tokens"), cap, flags)
        return {"input_lengths": inputs, "output_lengths": outputs}
    if stated == "fixed":
        flags.append("lengths fixed at the row's means (the client sends the requested lengths)")
        return {}
    if stated == "uniform":
        flags.append("lengths uniform on [1, 2·mean - 1] (random dataset, range ratio 0)")
        return {"input_lengths": {"kind": "uniform"}, "output_lengths": {"kind": "uniform"}}
    kind, sep, _ = stated.partition(":")
    if sep and kind in _RANGED_DRAWS:
        draw, span, client = _RANGED_DRAWS[kind]
        ratio = _range_ratio(stated)
        flags.append(
            f"lengths uniform on {span.format(r=ratio)} about the row's means ({client}, range ratio {ratio:g})"
        )
        return {col.replace("tokens", "lengths"): draw(_stated_mean(row, col, kind), ratio) for col in _LENGTH_COLUMNS}
    if stated:
        raise RowError(
            f"column length_distribution={stated!r}: not a length draw the predictor knows; give fixed, uniform, "
            f"{', '.join(f'{k}:R' for k in _RANGED_DRAWS)} or leave it blank"
        )
    flags.append("lengths fixed at the row's means")
    return {}


def _capped(dist: dict[str, object], mean: float | None, cap: int, flags: list[str]) -> dict[str, object]:
    """A benchmark's output distribution truncated at the client's cap ``cap`` (its max_tokens), keeping the row's
    measured ``mean``: the answers a model ends at EOS keep the dataset's shape, the longer ones stop at the cap. For
    a quantile table, the scale s with mean(min(s·q, cap)) = mean (SciPy's Brent root finder; the mean of the table
    the simulator draws from, so its draws keep the row's mean); a lognormal is cut at the cap (its mean falls by the
    clipped tail); a mean at or above the cap: every answer at the cap."""
    if mean is None or mean >= cap:
        flags.append(f"output lengths: every answer at the client's cap max_output_tokens {cap}")
        return {"kind": "fixed"}
    if dist.get("kind") == "lognormal":
        high = dist.get("high")
        dist = {**dist, "high": min(cap, high) if isinstance(high, int) else cap}
        flags.append(f"output lengths: cut at the client's cap max_output_tokens {cap}")
        return dist
    quantiles = dist.get("quantiles")
    if dist.get("kind") != "empirical" or not isinstance(quantiles, list):
        return dist
    q = [float(x) for x in quantiles]

    def table(scale: float) -> list[float]:
        return [min(max(1.0, scale * x), float(cap)) for x in q]

    # mean(table(s)) rises with s from 1 (every length at its 1-token floor, specs.serving_sim.LengthDist) at s = 0
    # to the cap at s = cap / q[0]; the row's mean lies between
    from scipy.optimize import brentq  # type: ignore[import-untyped,unused-ignore]

    scale = float(brentq(lambda s: quantile_table_mean(table(s)) - mean, 0.0, cap / q[0], xtol=1e-12))
    stretch = scale * quantile_table_mean(q) / mean
    flags.append(
        f"output lengths: truncated at the client's cap max_output_tokens {cap}, the dataset's shape scaled "
        f"×{stretch:.2f} of its plain scaling so that the truncated answers keep the row's mean"
    )
    return {"kind": "empirical", "quantiles": table(scale), "high": cap}


def _range_ratio(stated: str) -> float:
    """R of a ``length_distribution`` cell ``uniform:R`` or ``uniform_about:R`` (0 < R < 1); a RowError naming the
    cell otherwise."""
    try:
        ratio = float(stated.split(":", 1)[1])
    except ValueError:
        ratio = math.nan
    if not 0.0 < ratio < 1.0:
        raise RowError(f"column length_distribution={stated!r}: its range ratio R must lie between 0 and 1")
    return ratio


def _stated_mean(row: dict[str, str], column: str, kind: str) -> float:
    """The row's mean length in ``column``; a RowError naming it where it is blank (a ranged draw needs it)."""
    mean = num(row, column)
    if mean is None or mean < 1:
        raise RowError(f"column {column} is blank: a {kind}:R length distribution needs the mean")
    return mean


def _ratio_uniform(mean: float, ratio: float) -> dict[str, object]:
    """The client's draw of a random dataset with range ratio R (InferenceX's utils/bench_serving
    benchmark_serving.py sample_uniform: randint(int(L·R), L + 1)) as a uniform distribution whose mean is the row's
    ``mean``: L = 2·mean / (1 + R) (rounded), low = int(L·R)."""
    high = round(2.0 * mean / (1.0 + ratio))
    return {"kind": "uniform", "low": max(int(high * ratio), 1), "high": high}


def _symmetric_uniform(mean: float, ratio: float) -> dict[str, object]:
    """vLLM's draw of its random dataset with range ratio R, uniform on [floor(L·(1 - R)), ceil(L·(1 + R))] about the
    requested length L (vllm 0.19.0 vllm/benchmarks/datasets.py RandomDataset.get_sampling_params), L the row's
    ``mean``."""
    return {"kind": "uniform", "low": max(math.floor(mean * (1.0 - ratio)), 1), "high": math.ceil(mean * (1.0 + ratio))}


_LENGTH_COLUMNS = ("input_tokens", "output_tokens")
_RANGED_DRAWS: dict[str, tuple[Callable[[float, float], dict[str, object]], str, str]] = {
    "uniform": (_ratio_uniform, "[{r:g}·L, L]", "random dataset"),
    "uniform_about": (_symmetric_uniform, "[(1 - {r:g})·L, (1 + {r:g})·L]", "vLLM's random dataset"),
}
"""``length_distribution`` cells ``<kind>:R``: the client's draw of each length, its range (for the flag) and the
client."""


def latency_limit_flags(row: dict[str, str], bench: BenchmarkSpec, ttft_p99_s: float, tpot_p99_s: float) -> list[str]:
    """A published MLPerf Server/Interactive result met its p99 limits; a simulation that breaks them says the
    modelled capacity is below the submitted rate (its latencies then grow with the run length)."""
    text = " ".join(row.get(k) or "" for k in ("id", "source", "source_url")).lower()
    scenario = "interactive" if "interactive" in text else "server"
    lim = bench.latency_constraints.get(scenario)
    if lim is None:
        return []
    broken = []
    if lim.ttft_p99_s is not None and ttft_p99_s > lim.ttft_p99_s:
        broken.append(f"p99 TTFT {ttft_p99_s:.3g} s > {lim.ttft_p99_s:g} s")
    if lim.tpot_p99_s is not None and tpot_p99_s > lim.tpot_p99_s:
        broken.append(f"p99 TPOT {tpot_p99_s:.3g} s > {lim.tpot_p99_s:g} s")
    if not broken:
        return []
    return [
        f"simulated {', '.join(broken)}, the {scenario} limits every valid {bench.id} result meets: the "
        "modelled capacity is below the submitted rate, so the simulated queue grows and latencies are "
        "over-predicted"
    ]
