"""A loaded mixed step, term by term, and the Poisson steady state it sets (issue 29; a diagnostic, not a calibration).

For each OPEN Poisson row whose id contains one of the given substrings (default: the MLPerf v4.x Server TPOT rows),
prints:

* the step the measurement implies: by Little's law n = λ · L · TPOT sequences in flight per replica (λ the row's rate
  per replica, L its mean output), decoding at a context of I + L/2, with the prompt tokens that arrive during one
  measured step (λ · I · TPOT) prefilled in it as whole prompts; the model's time for that step and its parts (GEMMs and
  element-wise kernels, output head, attention compute and KV read, tensor-parallel all-reduce, the engine's fixed
  costs), the GEMMs' achieved fraction of the dense peak and the KV read against the HBM roofline;
* the model's own steady state (:func:`open_loop_equilibrium`: n* = λ · L · f(n*)), its elasticity ε and the TPOT
  amplification 1 / (1 − ε), and the elasticity the measurement implies if the step is linear in n through the
  model's own intercept (its step as a line through n* and the measured load).

Where the engine runs prompt iterations alone (SGLang's prefill batches, vLLM V0's whole prompts: the simulator's
SchedulerLimits.prefill_alone / not whole_prompts_with_decodes), the decodes do not carry the prompts: the time per
output token is the decode-only step D(n) plus the prompt iterations that stall it, λ · TPOT of them per token, each
one prompt of I tokens priced alone (P): TPOT = D(n) + λ · TPOT · P, so TPOT = D(n) / (1 − λ · P) at a given n.

Reads only ``inference_serving*_open.csv``. Run: ``PYTHONPATH=src python bench/loaded_step.py [substring ...]``.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.model_figures import param_breakdown
from aiinfra.analytic.step_time import StepBatch
from aiinfra.app.tables import row_tables
from aiinfra.errors import AiinfraError
from aiinfra.planning.inference import model_for
from aiinfra.sim.replica import SchedulerLimits
from aiinfra.sim.run import limits_for
from aiinfra.validation import inference_rows
from aiinfra.validation.rows import integer
from aiinfra.validation.types import RowTables

# The open-loop steady state. At a steady rate λ whose requests produce L output tokens each, a sequence stays in the
# decode set for L steps, so by Little's law (Little 1961, Operations Research 9(3)) n = λ · L · s sequences are in
# flight, and the step grows with what it carries, s = f(n). The steady state is the fixed point n* = λ · L · f(n*);
# with the step's elasticity there, ε = n · f'(n) / f(n) (< 1 for a stable queue), scaling every step by k moves it:
# d ln TPOT / d ln k = 1 / (1 − ε). So near capacity (ε → 1) a small step error becomes a large TPOT error: at
# ε = 0.9 a 2 % longer step gives a 20 % longer TPOT; MLPerf's Server scenario runs close to ε = 1 by construction.
# (aiinfra.planning.loaded solves the same fixed point on the planner's response time for the product.)

_BISECTIONS = 80
_STEP_ITERATIONS = 60


@dataclass(frozen=True, slots=True)
class OpenLoopEquilibrium:
    """The fixed point n* = λ · L · f(n*) of a replica under Poisson arrivals."""

    in_flight_seqs: float
    """n*: sequences decoding at once."""
    step_s: float
    """f(n*): the step time there (the model's TPOT in the steady state, fixed costs of the step included)."""
    elasticity_ratio: float
    """ε = n · f'(n) / f(n) at n* (central difference over n* ± 2 %)."""

    @property
    def tpot_amplification(self) -> float:
        """d ln TPOT / d ln k: how many percent TPOT moves per percent of step time (1 / (1 − ε))."""
        return 1.0 / (1.0 - self.elasticity_ratio)


def open_loop_equilibrium(
    rate_per_s: float, output_tokens: float, step_s: Callable[[float], float], max_seqs: float
) -> OpenLoopEquilibrium | None:
    """The steady state of ``rate_per_s`` requests/s of ``output_tokens`` each on a replica whose step lasts
    ``step_s(n)`` with n sequences in flight (non-decreasing in n); None when no fixed point exists below ``max_seqs``
    (the rate exceeds what the replica serves: the queue grows without bound)."""
    if rate_per_s <= 0 or output_tokens <= 0:
        raise ValueError("rate_per_s and output_tokens must be positive")
    work = rate_per_s * output_tokens

    def excess(n: float) -> float:
        return work * step_s(n) - n

    if excess(max_seqs) > 0:
        return None
    lo, hi = 0.0, float(max_seqs)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    n = 0.5 * (lo + hi)
    s = step_s(n)
    h = max(0.02 * n, 1e-6)  # a step model may round n to whole sequences: a difference over 4 % of n
    slope = (step_s(n + h) - step_s(max(n - h, 0.0))) / (n + h - max(n - h, 0.0))
    return OpenLoopEquilibrium(n, s, n * slope / s if s > 0 else 0.0)


def self_consistent_step_s(step_of: Callable[[float], float], prompt_tokens_per_s: float) -> float:
    """The step time s of a step that carries the prompt tokens arriving while it runs: s = step_of(λ · I · s)
    (``step_of(prefill_tokens)``, non-decreasing; ``prompt_tokens_per_s`` = λ · I), by fixed-point iteration from
    the step without prompts (it converges while a prompt token costs less than its arrival gap)."""
    s = step_of(0.0)
    for _ in range(_STEP_ITERATIONS):
        nxt = step_of(prompt_tokens_per_s * s)
        if abs(nxt - s) <= 1e-12 * max(s, 1e-12):
            return nxt
        s = nxt
    return s


DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data"
DEFAULT = ["mlperf4", "server-tpot"]


def mixed_step(n: float, prompt_tokens: float, inp: int, out: int) -> StepBatch:
    """n decodes at context I + L/2 plus ``prompt_tokens`` of whole prompts of I tokens."""
    prompts = max(round(prompt_tokens / inp), 1 if prompt_tokens > 0 else 0)
    decode = StepBatch.decode(round(n), inp + out // 2)
    if prompt_tokens <= 0:
        return decode
    return decode + StepBatch(
        prefill_tokens=round(prompt_tokens),
        prefill_attention_pairs=prompt_tokens * (inp + 1) / 2.0,
        prefill_seqs=prompts,
    )


def measured_load(rate: float, inp: int, out: int, tpot_s: float, requests: int | None) -> tuple[float, float]:
    """Sequences in flight and prompt tokens per step that a measured TPOT implies. Little's law n = λ · L · TPOT
    holds in a steady state; a finite run of N requests (benchmark_serving --num-prompts N) never has more than N in
    flight, and once λ · L · TPOT exceeds N (every request arrives before the first finishes) its mean step holds the
    N sequences and the run's N · I prompt tokens spread over the L steps each request decodes: N · I / L per step."""
    n = rate * out * tpot_s
    if requests is not None and n > requests:
        return float(requests), requests * inp / out
    return n, rate * inp * tpot_s


class _Captured(Exception):
    """Raised in place of the row's simulation: carries the scenario the validation would simulate."""

    def __init__(self, scenario_json: str) -> None:
        super().__init__("captured")
        self.scenario_json = scenario_json


def _capture(scenario_json: str, tables: RowTables) -> None:
    raise _Captured(scenario_json)


def prompts_alone(lim: SchedulerLimits) -> bool:
    """Whether the replica's prompt iterations run without the decodes (module docstring)."""
    return lim.prefill_alone if lim.chunked_prefill else not lim.whole_prompts_with_decodes


def row_replica(row: dict[str, str], tables: RowTables) -> tuple[InferenceModel, float, int, int, SchedulerLimits]:
    """The step model the validation's simulation of ``row`` uses (planning.inference.model_for over the scenario
    predict_row builds), the rate per replica, the mean lengths and the scheduler's limits."""
    simulate = inference_rows._simulate
    inference_rows._simulate = _capture  # type: ignore[assignment]
    try:
        inference_rows.predict_row(row, tables)
    except _Captured as got:
        sc = tables.scenario_of(json.loads(got.scenario_json))
    else:
        raise SystemExit(f"{row['id']}: not a simulated row")
    finally:
        inference_rows._simulate = simulate
    wl = sc.inference
    assert wl is not None
    im = model_for(sc.model, sc.cluster, wl)
    lim = limits_for(sc, wl, im, "mixed", engine=tables.serving_tables(sc).engine)
    replicas = max(sc.cluster.count // (im.tp * im.pp), 1)
    rate = (wl.request_rate_per_s or 0.0) / replicas
    return im, rate, wl.input_tokens, wl.output_tokens, lim


def main(patterns: list[str]) -> None:
    tables = row_tables()
    rows = [r for path in sorted(DATA.glob("inference_serving*_open.csv")) for r in csv.DictReader(path.open())]
    for row in rows:
        rid = row["id"]
        if row["mode"].strip() != "poisson" or row["metric"].strip() != "tpot_s":
            continue
        if not all(p in rid for p in patterns):
            continue
        try:
            im, rate, inp, out, lim = row_replica(row, tables)
        except AiinfraError as err:
            print(f"{rid}: not predicted ({err})")
            continue
        model, cluster, wp = im.model, im.cluster, im.weight_precision
        tp = im.tp

        max_seqs = lim.max_num_seqs
        alone = prompts_alone(lim)
        # one prompt of I tokens prefilled alone (the iterations that stall the decodes where prompts run alone)
        prompt_s = im.iteration_time_s(mixed_step(0, inp, inp, out)) if alone else 0.0

        def step(
            n: float,
            im: InferenceModel = im,
            rate: float = rate,
            inp: int = inp,
            out: int = out,
            alone: bool = alone,
            prompt_s: float = prompt_s,
        ) -> float:
            if alone:  # TPOT = D(n) / (1 - λ P) (module docstring); no steady state once λ P reaches 1
                stalled = 1.0 - rate * prompt_s
                decode_s = im.iteration_time_s(mixed_step(n, 0, inp, out))
                return decode_s / stalled if stalled > 0 else float("inf")
            return self_consistent_step_s(lambda pt: im.iteration_time_s(mixed_step(n, pt, inp, out)), rate * inp)

        tpot = float(row["value"])
        n_meas, prompt_per_step = measured_load(rate, inp, out, tpot, integer(row, "num_requests"))
        # the step the measurement implies: n_meas decodes and the prompts arriving during one measured step
        batch = mixed_step(n_meas, prompt_per_step, inp, out)
        bd = im.breakdown(batch)
        s_meas = bd.time_s
        acc = cluster.accelerator
        pb = param_breakdown(model)
        rank_params = (pb.total - pb.embedding - pb.output) / tp
        cd = "fp8" if wp == "fp8" and "fp8" in acc.dense_flop_per_s else "bf16"
        gemm_frac = 2.0 * batch.tokens * rank_params / bd.linear_s / acc.peak_flop_per_s(cd)
        gemm = f"GEMMs at <= {gemm_frac:.2f} of the {cd} peak" if not model.is_moe else "MoE: experts inside"
        kv_read = im.decode_kv_read_bytes_per_accelerator(batch)
        engine_s = bd.time_s - bd.linear_s - bd.attention_s - bd.communication_s
        eq = open_loop_equilibrium(rate, out, step, max_seqs)
        # the model's step as a line through its steady state and the measured load: intercept a, slope b
        n_eq = eq.in_flight_seqs if eq is not None else 0.0
        s_line = step(n_meas)
        slope = (s_line - step(n_eq)) / (n_meas - n_eq) if n_meas != n_eq else 0.0
        a = s_line - slope * n_meas
        implied_eps = (tpot - a) / tpot
        print(f"{rid}: {rate:.2f} req/s per replica, I {inp}, L {out}, measured TPOT {tpot * 1e3:.1f} ms")
        print(
            f"  measured load: n = {n_meas:.0f} in flight, step of {batch.decode_seqs} decodes + {batch.prefill_tokens}"
            f" prompt tokens ({batch.tokens} tokens): model {s_meas * 1e3:.1f} ms ({100 * (s_meas / tpot - 1):+.0f} %)"
        )
        print(
            f"    linear+element-wise+head {bd.linear_s * 1e3:.1f} ms ({gemm})"
            f" | attention {bd.attention_s * 1e3:.1f} ms (KV read {kv_read / 1e9:.1f} GB/GPU, roofline"
            f" {kv_read / acc.memory_bw_bytes_per_s * 1e3:.1f} ms) | all-reduce {bd.communication_s * 1e3:.1f} ms"
            f" | engine fixed {engine_s * 1e3:.2f} ms"
        )
        if alone:
            d_meas = im.iteration_time_s(mixed_step(n_meas, 0, inp, out))
            per_token = d_meas + rate * tpot * prompt_s
            print(
                f"  prompts run alone: decode step of {round(n_meas)} {d_meas * 1e3:.1f} ms + {rate * tpot:.2f} prompt"
                f" iterations of {prompt_s * 1e3:.1f} ms per token = {per_token * 1e3:.1f} ms per output token"
                f" ({100 * (per_token / tpot - 1):+.0f} %)"
            )
        if eq is None:
            print("  model: no steady state below max_num_seqs (overloaded)")
        else:
            print(
                f"  model steady state: n* {eq.in_flight_seqs:.0f}, TPOT {eq.step_s * 1e3:.1f} ms"
                f" ({100 * (eq.step_s / tpot - 1):+.0f} %), ε {eq.elasticity_ratio:.2f}, amplification"
                f" {eq.tpot_amplification:.1f}; measured ε with the model's intercept {a * 1e3:.1f} ms:"
                f" {implied_eps:.2f} (amplification {1 / (1 - implied_eps):.0f})"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
