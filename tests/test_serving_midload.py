"""A moderately loaded replica as the published runs measured it (issue 29): the statistic a median TPOT row reports
(per request, so the iterations that prefill alone count), the context length a run's server states (vLLM V0's
chunked-prefill default follows it), and a scheduler that states only multi-step scheduling keeping the release's
chunked-prefill default."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from aiinfra import catalog
from aiinfra.app.tables import row_tables
from aiinfra.catalog.resolve import load_scenario
from aiinfra.planning.engine_profile import scheduler_defaults
from aiinfra.sim.metrics import Percentiles
from aiinfra.validation import switches
from aiinfra.validation.inference_rows import _sim_value, on_off, stated_context_tokens
from aiinfra.validation.rows import RowError

from .conftest import EXAMPLES, sim_run

ENGINES = row_tables().engines
"""The catalog's engine profiles: the flag spellings the engine switches read."""

#: notes of the two kinds of median TPOT rows (abridged from the shipped rows)
PER_REQUEST = (
    "Median TPOT 33.07 ms (statistic: median; tpot_s in SI). Median TPOT is the median over requests of "
    "(latency - TTFT) / (output - 1); the README's Median ITL (token gaps) is not used."
)
TOKEN_GAPS = "0.0194 (statistic: median inter-token latency; the file has no mean TPOT) (tpot_s in SI)"


def _pct(mean: float, p50: float) -> Percentiles:
    return Percentiles(mean=mean, p50=p50, p90=2 * p50, p99=3 * p50)


def _summary() -> Any:
    # a run whose prefill-alone iterations (30 ms) stall the 17 ms decode steps: the token gaps' median is a decode
    # step, the requests' TPOT median carries their share of the stalls
    return SimpleNamespace(itl_s=_pct(0.019, 0.017), tpot_exclusive_s=_pct(0.0225, 0.022))


@pytest.mark.parametrize(
    ("notes", "statistic"),
    [(PER_REQUEST, "median"), (TOKEN_GAPS, "median_itl"), ("statistic: median ITL", "median_itl"), ("mean", "")],
)
def test_a_median_tpot_row_names_its_statistic(notes: str, statistic: str) -> None:
    assert switches.from_notes(notes, "inference")["statistic"] == statistic


def test_the_median_tpot_is_over_requests_and_the_median_itl_over_token_gaps() -> None:
    tables = row_tables()
    for statistic, want in (("median", 0.022), ("median_itl", 0.017), ("", 0.0225)):
        row = {"statistic": statistic, "metric": "tpot_s", "notes": ""}
        assert _sim_value(row, _summary(), "tpot_s", "sglang", [], tables) == want


def test_the_shipped_median_itl_rows_say_so_in_their_notes() -> None:
    # the statistic column of the open rows agrees with the rule that reads it from the notes
    import csv
    from pathlib import Path

    data = Path(switches.__file__).parent / "data"
    for path in sorted(data.glob("inference_serving*_open.csv")):
        for row in csv.DictReader(path.open(encoding="utf-8")):
            if row["metric"] == "tpot_s" and row["statistic"]:
                assert row["statistic"] == switches.from_notes(row["notes"], "inference")["statistic"], row["id"]


@pytest.mark.parametrize(
    ("engine", "notes", "tokens"),
    [
        ("vllm", "vLLM: `--disable-log-requests --num-scheduler-steps 10 --max_model_len 4096`", "4096"),
        ("", "vllm serve m --max-model-len=8192", "8192"),  # blank engine: vLLM's flags
        # SGLang's flag is another one: vLLM's quoted in the same notes is not this run's
        ("sglang", "SGLang: `--disable-radix-cache`; vLLM: `--max_model_len 4096`", ""),
        ("sglang", "sglang.launch_server --context-length 32768", "32768"),
        ("vllm", "vllm serve m", ""),
        ("vllm", "vllm serve m --max-model-len 0", ""),
    ],
)
def test_a_row_states_its_context_length(engine: str, notes: str, tokens: str) -> None:
    legacy = {"engine": engine, "notes": notes}
    assert switches.context_tokens_stated(legacy, ENGINES) == tokens
    # a row without the column reads it from its notes; the predictor reads the column only
    row = switches.with_columns(legacy, "inference", ENGINES)
    assert row["max_model_len_tokens"] == tokens
    assert stated_context_tokens(row) == (int(tokens) if tokens else None)
    # a column present wins over the notes, blank included
    assert stated_context_tokens({**legacy, "max_model_len_tokens": ""}) is None
    assert (
        stated_context_tokens(switches.with_columns({**legacy, "max_model_len_tokens": "2048"}, "inference", ENGINES))
        == 2048
    )


def test_a_context_length_column_below_one_token_is_refused() -> None:
    with pytest.raises(RowError, match="max_model_len_tokens"):
        stated_context_tokens({"max_model_len_tokens": "0"})


def test_the_engines_name_their_context_length_flags() -> None:
    assert catalog.engine("vllm").context_length_flag == "--max-model-len"
    assert catalog.engine("sglang").context_length_flag == "--context-length"


def test_a_multi_step_scheduler_keeps_the_release_chunked_prefill_default() -> None:
    # vLLM 0.6.0 serving Llama 2 70B (4,096-token context, not above 32,768): whole prompts, budget
    # max(4096, 2048) = 4096 (engines.yaml legacy_scheduler), also when the scenario states only
    # --num-scheduler-steps; a scenario that states chunked_prefill keeps it
    sets = [
        "model=meta-llama-2-70b",
        "inference.engine_version=0.6.0",
        "inference.num_requests=4",
        "inference.simulation.output_lengths=null",
        "inference.simulation.scheduler={num_scheduler_steps: 10}",
    ]
    ex = EXAMPLES / "simulate-llama70b-h100.yaml"
    lim = sim_run(load_scenario(ex, sets), seed=0).limits
    assert (lim.chunked_prefill, lim.max_num_batched_tokens, lim.max_num_seqs) == (False, 4096, 256)
    both = "inference.simulation.scheduler={num_scheduler_steps: 10, chunked_prefill: true}"
    stated = sim_run(load_scenario(ex, [*sets[:-1], both]), seed=0).limits
    assert stated.chunked_prefill is True


@pytest.mark.parametrize(
    ("notes", "chunked"),
    [
        # the dstack MI300X runs (vLLM 0.6-era ROCm build): the optional boolean set false
        ("Server settings: chunked prefill off (--enable-chunked-prefill=False), multi-step", "off"),
        ("vllm serve m --enable-chunked-prefill", "on"),
        ("--enable_chunked_prefill true", "on"),
        ("--enable-chunked-prefill 0", "off"),
        ("vllm serve m --no-enable-chunked-prefill", "off"),
        # prose about the default is no flag
        ("chunked prefill on (the V0 default for max-model-len 91680 > 32K)", ""),
    ],
)
def test_a_row_states_its_chunked_prefill(notes: str, chunked: str) -> None:
    assert catalog.engine("vllm").chunked_prefill_flag == "--enable-chunked-prefill"
    row = switches.with_columns({"engine": "vllm", "notes": notes}, "inference", ENGINES)
    assert row["chunked_prefill"] == chunked
    assert on_off(row, "chunked_prefill") is {"on": True, "off": False, "": None}[chunked]
    # an engine without the flag (TensorRT-LLM) reads none
    assert catalog.engine("trtllm").chunked_prefill_flag is None
    assert switches.chunked_prefill_stated({"engine": "trtllm", "notes": notes}, ENGINES) == ""


def test_an_on_off_column_takes_on_or_off_only() -> None:
    assert on_off({"chunked_prefill": " off "}, "chunked_prefill") is False
    # the column wins over notes that state the flag
    assert on_off({"chunked_prefill": "", "notes": "--enable-chunked-prefill"}, "chunked_prefill") is None
    with pytest.raises(RowError, match="chunked_prefill='maybe'"):
        on_off({"chunked_prefill": "maybe"}, "chunked_prefill")


def test_a_v0_run_that_sets_chunked_prefill_gets_that_budget() -> None:
    # vLLM V0 SchedulerConfig: chunked prefill (single-step) budgets 512 tokens a step; without it the budget is
    # max(max_model_len, 2048): 131,072 for Llama 3.1's context with chunked prefill turned off, whatever the
    # long-context default would have been (engines.yaml legacy_scheduler)
    vllm, mi300x = catalog.engine("vllm"), catalog.accelerator("amd-mi300x")
    off = scheduler_defaults(vllm, mi300x, "server", release="0.7.3", max_model_len=131_072, chunked_prefill=False)
    assert (off.max_num_batched_tokens, off.max_num_seqs, off.chunked_prefill) == (131_072, 256, False)
    on = scheduler_defaults(vllm, mi300x, "server", release="0.7.3", max_model_len=8192, chunked_prefill=True)
    assert (on.max_num_batched_tokens, on.chunked_prefill) == (512, True)
    # V1 keeps its device table
    v1 = scheduler_defaults(vllm, mi300x, "server", release="0.11.0", max_model_len=8192, chunked_prefill=False)
    assert v1.max_num_batched_tokens == 8192
