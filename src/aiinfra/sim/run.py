"""Build and run a simulation from a scenario (the entry point the CLI and the capacity search call)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepTimeModel
from aiinfra.errors import InfeasibleError, SpecError
from aiinfra.inference import engine_defaults, kv_capacity, speculative_tokens_per_step
from aiinfra.sim.arrivals import Requests, interarrival_s, lengths, read_trace
from aiinfra.sim.engine import Records, Simulation
from aiinfra.sim.metrics import SimSummary, summarise
from aiinfra.sim.replica import SchedulerLimits
from aiinfra.specs.scenario import Scenario
from aiinfra.specs.serving_sim import SchedulerConfig, SimulationConfig
from aiinfra.specs.workload import ServingWorkload


@dataclass(frozen=True, slots=True)
class SimResult:
    summary: SimSummary
    records: Records
    limits: SchedulerLimits
    replicas: int


def make_requests(wl: ServingWorkload, sim: SimulationConfig, seed: int, max_context: int | None) -> Requests:
    arrival = wl.arrival
    if arrival is not None and arrival.kind == "trace":
        if not arrival.path:
            raise SpecError(
                "inference.arrival.path", None, "a trace arrival needs a file", "set inference.arrival.path"
            )
        reqs = read_trace(arrival.path)
    else:
        n = wl.num_requests
        rate = wl.request_rate_per_s
        closed = arrival is not None and arrival.kind == "concurrency"
        if n is None and wl.duration_s is not None and rate is not None:
            n = max(1, math.ceil(wl.duration_s * rate))
        if n is None:
            raise SpecError("inference.num_requests", None, "the simulation needs a length",
                            "set inference.num_requests (or duration_s with request_rate_per_s)")  # fmt: skip
        if not closed and rate is None:
            raise SpecError("inference.request_rate_per_s", None, "open-loop arrivals need a rate",
                            "set inference.request_rate_per_s, or arrival: {kind: concurrency}")  # fmt: skip
        arr_rng, in_rng, out_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
        if closed:
            arrivals = np.zeros(n)
        else:
            assert rate is not None
            gaps = interarrival_s(arr_rng, arrival.kind if arrival else "poisson", rate, n,
                                  arrival.cv if arrival else None)  # fmt: skip
            arrivals = np.cumsum(gaps) - gaps[0]
        reqs = Requests(
            arrival_s=arrivals,
            input_tokens=lengths(in_rng, sim.input_lengths, wl.input_tokens, n, "inference.simulation.input_lengths"),
            output_tokens=lengths(
                out_rng, sim.output_lengths, wl.output_tokens, n, "inference.simulation.output_lengths"
            ),
            priority=np.zeros(n, dtype=np.int64),
        )
    if max_context is not None:
        longest = int((reqs.input_tokens + reqs.output_tokens).max())
        if longest > max_context:
            raise SpecError("inference.input_tokens", longest,
                            f"a request needs {longest} tokens of context, more than the model's {max_context}",
                            "shorten the prompts or outputs")  # fmt: skip
    return reqs


def limits_for(scenario: Scenario, wl: ServingWorkload, im: InferenceModel) -> SchedulerLimits:
    sim = wl.simulation or SimulationConfig()
    sched = sim.scheduler or SchedulerConfig()
    eng = engine_defaults("vllm")
    budget = sched.max_num_batched_tokens or int(eng["max_num_batched_tokens"])
    cap = kv_capacity(im, wl.gpu_memory_utilization, wl.block_size_tokens, budget)
    if cap.kv_capacity_tokens <= 0:
        raise InfeasibleError(f"{scenario.model.id} leaves no KV-cache memory on {scenario.cluster.accelerator.id} "
                              f"with tp={im.tp} — raise tp or lower the weight precision")  # fmt: skip
    tps = 1.0
    if wl.speculative is not None:
        tps = speculative_tokens_per_step(wl.speculative.acceptance_rate, wl.speculative.num_draft_tokens)
    return SchedulerLimits(
        static=sched.kind == "static", max_num_seqs=sched.max_num_seqs or int(eng["max_num_seqs"]),
        max_num_batched_tokens=budget, chunked_prefill=sched.chunked_prefill, preemption=sched.preemption,
        kv_capacity_tokens=cap.kv_capacity_tokens, block_tokens=wl.block_size_tokens, tokens_per_step=tps,
        prefix_caching=sched.prefix_caching,
    )  # fmt: skip


class _SpeculativeStep:
    """Prices a speculative iteration: each decoding sequence verifies γ + 1 tokens (Leviathan et al. 2023)."""

    def __init__(self, base: StepTimeModel, gamma: int) -> None:
        self.base = base
        self.gamma = gamma

    def iteration_time_s(self, batch):  # type: ignore[no-untyped-def]
        from aiinfra.analytic.step_time import StepBatch

        k = self.gamma + 1
        return self.base.iteration_time_s(
            StepBatch(
                batch.prefill_tokens,
                batch.prefill_attention_pairs,
                batch.decode_seqs * k,
                batch.decode_context_tokens * k,
            )
        )


def simulate(scenario: Scenario, seed: int = 0, step_model: StepTimeModel | None = None,
             rate_override: float | None = None) -> SimResult:  # fmt: skip
    wl = scenario.inference
    if wl is None:
        raise SpecError("inference", None, "the scenario has no inference section", "add inference: {...}")
    if rate_override is not None:
        wl = replace(wl, request_rate_per_s=rate_override)
    plan = wl.plan
    tp, pp = (plan.tp, plan.pp) if plan else (1, 1)
    im = InferenceModel(model=scenario.model, cluster=scenario.cluster, tp=tp, pp=pp,
                        weight_precision=wl.weight_precision, kv_precision=wl.kv_precision or "bf16")  # fmt: skip
    sim = wl.simulation or SimulationConfig()
    replicas = sim.replicas or max(1, scenario.cluster.count // (tp * pp))
    lim = limits_for(scenario, wl, im)
    model: StepTimeModel = step_model or im
    if wl.speculative is not None and step_model is None:
        model = _SpeculativeStep(im, wl.speculative.num_draft_tokens)
    reqs = make_requests(wl, sim, seed, scenario.model.max_seq_len)
    if int((reqs.input_tokens + reqs.output_tokens).max()) + lim.block_tokens > lim.kv_capacity_tokens:
        raise InfeasibleError("a single request needs more KV cache than a replica has "
                              f"({lim.kv_capacity_tokens:,} tokens) — raise tp or shorten requests")  # fmt: skip
    closed = wl.concurrency if (wl.arrival is not None and wl.arrival.kind == "concurrency") else None
    if wl.arrival is not None and wl.arrival.kind == "concurrency" and not closed:
        raise SpecError("inference.concurrency", None, "closed-loop arrivals need a client count",
                        "set inference.concurrency")  # fmt: skip
    rec = Simulation(model, lim, replicas, sim.router).run(reqs, closed)
    return SimResult(summary=summarise(rec, wl.slo), records=rec, limits=lim, replicas=replicas)
