"""Run settings of a validation row ("switches") as columns, and the rules that read them from a row's notes.

The shipped validation CSVs state a run's settings in columns (data/REFERENCE_README.md, "Run-setting columns");
the predictors read those columns only. The reference schema (and the evaluation files kept in it) states them in
the free-text ``notes`` instead: a row that lacks a switch column (its file predates the column) gets that setting
from its notes by the rules below, the same rules ``bench/validation_notes_to_columns.py`` applies once to
convert a file. A column present in the row always wins, blank included (blank = not stated).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from aiinfra.specs.engine import EngineProfile

Kind = Literal["training", "inference"]
Engines = Mapping[str, "EngineProfile"]
"""Engine profiles by id (RowTables.engines, the catalog's): the flag spellings the engine switches read."""
RowRule = Callable[[Mapping[str, str], Engines], str]
"""A switch rule that reads more of a row than its notes (its engine's flags, its engine_version cell)."""

#: llm-foundry's ``attn_impl: triton`` (its submit_benchmarks.py default 2023-05 to 2024-01)
TRITON_ATTN = re.compile(r"attn_impl:?\s*triton")
#: llm-foundry's ``attn_impl: flash`` (the flash-attn 2.x package path)
FLASH2_ATTN = re.compile(r"attn_impl:?\s*flash\b")
#: PyTorch SDPA (torchtitan): FlashAttention-2 kernels in the rows' PyTorch versions (training_rows.py)
SDPA_ATTN = re.compile(r"torchtitan|scaled_dot_product_attention|\bSDPA\b", re.IGNORECASE)
TP_OVERLAP = re.compile(r"tp[-_]comm[-_]overlap")
EP_OVERLAP = re.compile(r"1f1b overlap|ep a2a overlap|overlap-moe-expert-parallel-comm|dualpipe", re.IGNORECASE)
DEEPSPEED = re.compile(r"deepspeed", re.IGNORECASE)
HSDP = re.compile(r"hsdp shard (\d+)", re.IGNORECASE)
#: Megatron-Bridge's FP8 output projection (``FP8_OUTPUT_PROJ=True`` / ``fp8_output_proj``): the LM head runs in the
#: run's low-precision format rather than 16-bit (TrainSetup.low_precision_output_layer)
FP8_OUTPUT_PROJ = re.compile(r"fp8[-_]output[-_]proj\s*[=:]\s*(?:true|1)\b", re.IGNORECASE)
#: the routed experts' tensor parallelism (Megatron ``expert_tensor_parallel_size``; TrainSetup.expert_tp)
EXPERT_TP = re.compile(r"expert_tensor_parallel_size[ =:]+(\d+)", re.IGNORECASE)
FIRST_DENSE = re.compile(r"first (\d+) (?:layers )?(?:are )?dense")
ALTERNATING_SLIDING = re.compile(r"alternating sliding.window")
REQUESTS = re.compile(r"(\d+(?:,\d{3})*) requests")
#: the run's first N prompts already in the server's prefix cache (inference.simulation.prefix_cached_requests)
PREFIX_CACHED = re.compile(r"prefix_cached_requests\W{0,3}(\d+(?:,\d{3})*)")
#: an earlier run of the same seeded random-length benchmark at this nominal length left each prompt's first
#: ((L - 1) mod K) + 1 tokens in the server's prefix cache (inference.simulation.prefix_cached_modulo_tokens)
PREFIX_MODULO = re.compile(r"prefix_cached_modulo_tokens\W{0,3}(\d+(?:,\d{3})*)")
#: SGLang's ``random`` dataset with range ratio 0 (and vLLM's before 0.8): each length drawn uniformly up to the
#: requested one
RANDOM_RANGE_RATIO_0 = re.compile(r"random_range_ratio\W{0,3}0(\.0)?\b")
#: vLLM's client logging a draw of one length (vllm/benchmarks/datasets.py ``RandomDataset.get_sampling_params``:
#: "Sampling input_len from [low, high]", low = high at range ratio 0 since its draw lies within ±ratio of the length)
VLLM_FIXED_DRAW = re.compile(r"Sampling input_len from \[(\d+), \1\]")


def _random_lengths(notes: str) -> str:
    """The length draw a row's notes state: "fixed" where vLLM's client logged a one-length range, "uniform" up to
    the requested length where the notes give range ratio 0 (sglang.bench_serving ``sample_random_requests``:
    randint(max(int(len·ratio), 1), len)), else not stated."""
    if VLLM_FIXED_DRAW.search(notes):
        return "fixed"
    return "uniform" if RANDOM_RANGE_RATIO_0.search(notes) else ""


def _setting(name: str, number: str = r"\d+(?:,\d{3})*", gap: int = 4, word: bool = False) -> re.Pattern[str]:
    """``name`` followed within ``gap`` non-digits by its value (``max_num_seqs 128``, ``kv_lora_rank: 512``)."""
    boundary = r"\b" if word else ""
    return re.compile(rf"{boundary}{name}\D{{0,{gap}}}({number})")


def states_attention_dp(notes: str) -> bool:
    """Whether notes state that the run enabled TensorRT-LLM's attention data parallelism: the option named, and
    not negated ("no enable_attention_dp", "enable_attention_dp: false")."""
    for m in re.finditer(r"enable_attention_dp", notes):
        before = notes[max(0, m.start() - 12) : m.start()].lower()
        after = notes[m.end() : m.end() + 10].lower()
        if re.search(r"\b(no|without|not)\s+$", before) or re.match(r"\s*[:=]\s*false", after):
            continue
        return True
    return False


def _attention_kernel(notes: str) -> str:
    if TRITON_ATTN.search(notes):
        return "triton"
    if FLASH2_ATTN.search(notes) or SDPA_ATTN.search(notes):
        return "flash2"
    return ""


def _yes(pattern: re.Pattern[str]) -> Callable[[str], str]:
    return lambda notes: "yes" if pattern.search(notes) else ""


def _number(pattern: re.Pattern[str]) -> Callable[[str], str]:
    def read(notes: str) -> str:
        m = pattern.search(notes)
        return m.group(1).replace(",", "") if m else ""

    return read


#: a median latency that is the median inter-token latency (over every gap between output tokens), not a median over
#: requests (``statistic: median inter-token latency`` / ``statistic: median ITL`` in the notes)
MEDIAN_ITL = re.compile(r"statistic: median (?:inter-token latency|ITL)\b", re.IGNORECASE)


def _statistic(notes: str) -> str:
    """``median_itl`` (the median token gap), ``median`` (the median over requests), or blank (the mean)."""
    if MEDIAN_ITL.search(notes):
        return "median_itl"
    return "median" if "statistic: median" in notes else ""


def _sliding(notes: str) -> str:
    if ALTERNATING_SLIDING.search(notes):
        return "alternating"
    return "yes" if "sliding" in notes.lower() else ""


def _row_engine(row: Mapping[str, str], engines: Engines) -> EngineProfile | None:
    """The profile whose flag spellings a row's command line uses: its ``engine`` (blank: vLLM; one without a
    profile runs with vLLM's, as the predictor does); None when no profiles are given."""
    name = (row.get("engine") or "vllm").strip()
    return engines.get(name) or engines.get("vllm")


def _command_line(row: Mapping[str, str]) -> str:
    """Where a row quotes its server's command line: ``engine_version`` (some rows state the flags there) and
    ``notes``."""
    return f"{row.get('engine_version') or ''} {row.get('notes') or ''}"


def _flag_name(flag: str) -> str:
    """A ``--flag-name`` as a pattern without its dashes, dashes and underscores inside it alike."""
    return re.escape(flag.lstrip("-")).replace(r"\-", "[-_]")


def overlap_scheduling_stated(row: Mapping[str, str], engines: Engines) -> str:
    """The overlap scheduler as the run states it: the engine's off flag (vLLM ``--no-async-scheduling``) -> off,
    its on flag (``--async-scheduling``) -> on; blank when it states neither or the engine has no such flags."""
    profile = _row_engine(row, engines)
    flags = profile.overlap_flags if profile else None
    if flags is None:
        return ""
    on, off = flags
    text = _command_line(row)
    if re.search(re.escape(off) + r"(?![\w-])", text):
        return "off"
    if re.search(r"(?<![\w-])" + re.escape(on) + r"(?![\w-])", text):
        return "on"
    return ""


def chunked_prefill_stated(row: Mapping[str, str], engines: Engines) -> str:
    """Chunked prefill as the run states it: the engine's flag (vLLM ``--enable-chunked-prefill``, dashes or
    underscores) -> on, unless its value is false (``=False``, ``false``, ``0``; vLLM parses the flag as an optional
    boolean) or it is negated (``--no-enable-chunked-prefill``) -> off; blank when it states neither or the engine
    has no such flag."""
    profile = _row_engine(row, engines)
    flag = profile.chunked_prefill_flag if profile else None
    if not flag:
        return ""
    name = _flag_name(flag)
    text = _command_line(row)
    if re.search(rf"--no[-_]{name}(?![\w-])", text):
        return "off"
    m = re.search(rf"--{name}(?![\w-])(?:[ =](true|false|1|0)\b)?", text, re.IGNORECASE)
    if m is None:
        return ""
    return "on" if (m.group(1) or "true").lower() in ("true", "1") else "off"


def scheduler_steps_stated(row: Mapping[str, str], engines: Engines) -> str:
    """Multi-step scheduling as the run states it: the engine's flag (vLLM V0 ``--num-scheduler-steps N``; the
    singular spelling too), at least 1; blank when it states none or the engine has no such flag (another engine's
    flag quoted in the notes is not this run's)."""
    profile = _row_engine(row, engines)
    flag = profile.multi_step_flag if profile else None
    if not flag:
        return ""
    m = re.search(re.escape(flag.rstrip("s")) + r"s?[ =](\d+)", _command_line(row))
    return str(max(1, int(m.group(1)))) if m else ""


def context_tokens_stated(row: Mapping[str, str], engines: Engines) -> str:
    """The context length the run's server was started with: the engine's flag (vLLM ``--max-model-len N``,
    SGLang ``--context-length N``; dashes and underscores alike); blank when it states none (or 0) or the engine
    has no such flag (another engine's flag quoted in the notes is not this run's)."""
    profile = _row_engine(row, engines)
    flag = profile.context_length_flag if profile else None
    if not flag:
        return ""
    m = re.search(rf"--{_flag_name(flag)}[ =](\d+)", _command_line(row))
    return str(int(m.group(1))) if m and int(m.group(1)) > 0 else ""


def cuda_graphs_stated(row: Mapping[str, str], engines: Engines) -> str:
    """CUDA graphs as the run states them: the engine's flag that turns them off (vLLM ``--enforce-eager``, SGLang
    ``--disable-cuda-graph``; dashes and underscores alike) -> off, unless its value is false (``=False``, ``0``);
    blank when it states none or the engine has no such flag."""
    profile = _row_engine(row, engines)
    flag = profile.cuda_graphs_off_flag if profile else None
    if not flag:
        return ""
    m = re.search(rf"--{_flag_name(flag)}(?![\w-])(?:[ =](true|false|1|0)\b)?", _command_line(row), re.IGNORECASE)
    if m is None:
        return ""
    return "off" if (m.group(1) or "true").lower() in ("true", "1") else ""


def legacy_engine_stated(row: Mapping[str, str], engines: Engines) -> str:
    """The engine's previous generation as the run selects it on a release that still carries it (vLLM
    ``VLLM_USE_V1=0``, engines.yaml legacy_engine ``stated_by``) -> on; blank when it states none or the engine has
    no such setting."""
    profile = _row_engine(row, engines)
    table = profile.legacy_engine if profile else None
    setting = str(table.get("stated_by") or "") if table else ""
    if not setting:
        return ""
    name, _, value = setting.partition("=")
    pattern = rf"(?<![\w-]){re.escape(name)}\s*=\s*{re.escape(value)}(?![\w.])"
    return "on" if re.search(pattern, _command_line(row)) else ""


def _on_notes(rule: RowRule) -> Callable[[str], str]:
    return lambda notes: rule({"notes": notes}, {})


@dataclass(frozen=True, slots=True)
class Switch:
    """One run-setting column: the files it belongs to, how a legacy row's notes state it, and (for a setting
    written as ``name value``) the pattern whose value a conversion takes out of the notes, leaving the name.
    ``read_row``: a rule that needs more of the row than its notes (the engine whose flag spellings it reads, the
    ``engine_version`` cell a command line may be quoted in); ``read`` then applies it to a row of notes only."""

    column: str
    kinds: tuple[Kind, ...]
    read: Callable[[str], str]
    valued: re.Pattern[str] | None = None
    read_row: RowRule | None = None

    def stated(self, row: Mapping[str, str], engines: Engines) -> str:
        """The setting as a legacy row states it (blank: not stated); ``engines``: the engine profiles whose flag
        spellings the engine switches read (none given: those switches read blank)."""
        if self.read_row is not None:
            return self.read_row(row, engines)
        return self.read(row.get("notes") or "")


def _engine_switch(column: str, rule: RowRule) -> Switch:
    """An inference switch stated by an engine's command-line flag (engines.yaml, per engine). Not ``valued``: the
    command line stays in the notes as the source quoted it."""
    return Switch(column, ("inference",), _on_notes(rule), read_row=rule)


_BOTH: tuple[Kind, ...] = ("training", "inference")
_MLA = ("kv_lora_rank", "qk_rope_head_dim", "q_lora_rank", "qk_nope_head_dim")
_INTERLEAVE = _setting("interleave_moe_layer_step")
_FREE_FRAC = _setting("kv_cache_free_gpu_mem_fraction", r"0\.\d+", gap=3)
_BUDGET = _setting("max_num_batched_tokens", gap=3, word=True)
_SEQS = _setting("max_num_seqs", gap=3, word=True)
_GPU_UTIL = _setting("gpu_memory_utilization", r"\d+(?:\.\d+)?")
_BLOCK = _setting("block_size")
#: the client's per-request cap on generated tokens (``max_tokens 512``): answers that stop at EOS, truncated there
_MAX_TOKENS = _setting("max_tokens", gap=1, word=True)

#: every switch column, in the order they stand before ``notes``
SWITCHES: tuple[Switch, ...] = (
    *(Switch(k, _BOTH, _number(p), p) for k in _MLA for p in (_setting(k),)),
    Switch("moe_layer_step", _BOTH, _number(_INTERLEAVE), _INTERLEAVE),
    Switch("first_k_dense_layers", _BOTH, _number(FIRST_DENSE)),
    Switch("attention_kernel", ("training",), _attention_kernel),
    Switch("tp_comm_overlap", ("training",), _yes(TP_OVERLAP)),
    Switch("ep_comm_overlap", ("training",), _yes(EP_OVERLAP)),
    Switch("deepspeed", ("training",), _yes(DEEPSPEED)),
    Switch("fsdp_shard_ranks", ("training",), _number(HSDP), HSDP),
    Switch("low_precision_output_layer", ("training",), _yes(FP8_OUTPUT_PROJ)),
    Switch("expert_tp", ("training",), _number(EXPERT_TP), EXPERT_TP),
    Switch("attention_dp", ("inference",), lambda notes: "yes" if states_attention_dp(notes) else ""),
    Switch("kv_cache_free_gpu_mem_fraction", ("inference",), _number(_FREE_FRAC), _FREE_FRAC),
    Switch("max_num_batched_tokens", ("inference",), _number(_BUDGET), _BUDGET),
    Switch("max_num_seqs", ("inference",), _number(_SEQS), _SEQS),
    Switch("gpu_memory_utilization", ("inference",), _number(_GPU_UTIL), _GPU_UTIL),
    Switch("block_size", ("inference",), _number(_BLOCK), _BLOCK),
    Switch("quantizer", ("inference",), lambda notes: "modelopt" if "modelopt" in notes.lower() else ""),
    Switch("sliding_window", ("inference",), _sliding),
    Switch("num_requests", ("inference",), _number(REQUESTS)),
    Switch("length_distribution", ("inference",), _random_lengths),
    Switch("max_output_tokens", ("inference",), _number(_MAX_TOKENS), _MAX_TOKENS),
    Switch("statistic", ("inference",), _statistic),
    Switch("prefix_cached_requests", ("inference",), _number(PREFIX_CACHED), PREFIX_CACHED),
    Switch("prefix_cached_modulo_tokens", ("inference",), _number(PREFIX_MODULO), PREFIX_MODULO),
    _engine_switch("overlap_scheduling", overlap_scheduling_stated),
    _engine_switch("chunked_prefill", chunked_prefill_stated),
    _engine_switch("num_scheduler_steps", scheduler_steps_stated),
    _engine_switch("max_model_len_tokens", context_tokens_stated),
    _engine_switch("cuda_graphs", cuda_graphs_stated),
    _engine_switch("legacy_engine", legacy_engine_stated),
)


def columns_for(kind: Kind) -> tuple[str, ...]:
    """The switch columns a row of this kind may carry."""
    return tuple(s.column for s in SWITCHES if kind in s.kinds)


def kind_of(header: list[str] | tuple[str, ...]) -> Kind | None:
    """The row kind a CSV header belongs to (None: not a training or inference file, e.g. reliability rows)."""
    if "notes" not in header or "metric" not in header:
        return None
    if "global_batch_seqs" in header or "seq_len" in header:
        return "training"
    if "mode" in header or "engine" in header:
        return "inference"
    return None


def from_notes(notes: str, kind: Kind) -> dict[str, str]:
    """The switch columns of ``kind`` as a legacy row's notes state them (blank: not stated); the engine switches
    read blank here, with no engine profile to spell their flags (:func:`from_row` reads them)."""
    return {s.column: s.read(notes) for s in SWITCHES if kind in s.kinds}


def from_row(row: Mapping[str, str], kind: Kind, engines: Engines) -> dict[str, str]:
    """The switch columns of ``kind`` as a legacy row states them (notes, and its engine's flags as ``engines``
    spell them; blank: not stated)."""
    return {s.column: s.stated(row, engines) for s in SWITCHES if kind in s.kinds}


def with_columns(row: dict[str, str], kind: Kind, engines: Engines) -> dict[str, str]:
    """``row`` with every switch column of ``kind``: the row's own where it has the column, else from its notes
    (engine flags as ``engines`` spell them)."""
    missing = [s for s in SWITCHES if kind in s.kinds and s.column not in row]
    if not missing:
        return row
    return {**row, **{s.column: s.stated(row, engines) for s in missing}}


def reduced_notes(notes: str, kind: Kind) -> str:
    """``notes`` with the value of every ``name value`` setting replaced by ``name (column)``: the value lives in
    the column of that name (and no rule reads it from the notes again). The other switches are the source's own
    words (a quoted command line, a paper's description) and stay as provenance; no predictor reads them."""
    for s in SWITCHES:
        if kind in s.kinds and s.valued is not None:
            notes = _drop_values(notes, s.valued)
    return notes


def _drop_values(notes: str, pattern: re.Pattern[str]) -> str:
    def keep_name(m: re.Match[str]) -> str:
        return m.string[m.start() : m.start(1)].rstrip(" :=") + " (column)"

    return pattern.sub(keep_name, notes)


def text(row: dict[str, str], column: str) -> str:
    """A switch cell, stripped ("" when blank)."""
    return (row.get(column) or "").strip()


def flag(row: dict[str, str], column: str) -> bool:
    """Whether a switch cell says yes (yes, true or 1)."""
    return text(row, column).lower() in ("yes", "true", "1")


def convert(
    header: list[str], rows: list[dict[str, str]], engines: Engines
) -> tuple[list[str], list[dict[str, str]]] | None:
    """A training or inference file's (header, rows) with every switch column, each row's settings taken from its
    notes where its column is blank or absent (engine flags as ``engines`` spell them), and the notes reduced
    (:func:`reduced_notes`); None for a file of another kind. Idempotent: converting a converted file changes
    nothing."""
    kind = kind_of(header)
    if kind is None:
        return None
    cols = columns_for(kind)
    added = [c for c in cols if c not in header]
    at = header.index("notes")
    new_header = [*header[:at], *added, *header[at:]]
    out = []
    for row in rows:
        notes = row.get("notes") or ""
        stated = from_row(row, kind, engines)
        new = {k: row.get(k) or "" for k in new_header}
        for c in cols:
            if not new[c].strip():
                new[c] = stated[c]
        new["notes"] = reduced_notes(notes, kind)
        out.append(new)
    return new_header, out
