"""Run settings of validation rows as columns (validation/switches.py, data/REFERENCE_README.md)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from aiinfra.app.tables import row_tables
from aiinfra.validation import switches
from aiinfra.validation.switches import columns_for, convert, from_notes, kind_of, reduced_notes, with_columns
from tests.conftest import bench_script

ENGINES = row_tables().engines
"""The catalog's engine profiles: the flag spellings the engine switches read."""

DATA = Path(switches.__file__).parent / "data"
SHIPPED = (
    "training.csv",
    "inference.csv",
    "training_scale_open.csv",
    "training_scale_sealed.csv",
    *(
        seal.name.replace("_seal", split)
        for seal in sorted(DATA.glob("inference_serving*_seal.csv"))
        for split in ("_open", "_sealed")
    ),
)


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    text = "".join(ln for ln in path.read_text(encoding="utf-8").splitlines(keepends=True) if not ln.startswith("#"))
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return list(reader.fieldnames or []), list(reader)


def test_legacy_notes_state_the_inference_settings() -> None:
    notes = (
        "trtllm-bench, kv_cache_free_gpu_mem_fraction 0.95; ModelOpt FP8 checkpoints. MoE run with "
        "enable_attention_dp. max_num_batched_tokens 2,048, max_num_seqs 128. 300 requests at 10 req/s. "
        "24 layers alternating sliding-window(128)/full attention. interleave_moe_layer_step 2 -> 24 MoE layers"
    )
    got = from_notes(notes, "inference")
    assert got["kv_cache_free_gpu_mem_fraction"] == "0.95"
    assert got["attention_dp"] == "yes"
    assert got["quantizer"] == "modelopt"
    assert (got["max_num_batched_tokens"], got["max_num_seqs"]) == ("2048", "128")
    assert got["num_requests"] == "300"
    assert got["sliding_window"] == "alternating"
    assert got["moe_layer_step"] == "2"
    assert got["gpu_memory_utilization"] == got["block_size"] == got["kv_lora_rank"] == ""
    # negated: not stated
    assert from_notes("enable_attention_dp: false", "inference")["attention_dp"] == ""


def test_legacy_notes_state_the_training_settings() -> None:
    notes = "attn_impl triton/flash; --tp-comm-overlap; DualPipe; hsdp shard 256; MLA kv_lora_rank 512, first 3 dense"
    got = from_notes(notes, "training")
    assert got["attention_kernel"] == "triton"
    assert got["tp_comm_overlap"] == got["ep_comm_overlap"] == "yes"
    assert got["fsdp_shard_ranks"] == "256"
    assert (got["kv_lora_rank"], got["first_k_dense_layers"]) == ("512", "3")
    assert got["deepspeed"] == ""
    assert from_notes("torchtitan FSDP", "training")["attention_kernel"] == "flash2"


def test_a_column_wins_over_the_notes_and_a_legacy_row_reads_its_notes() -> None:
    assert with_columns({"notes": "max_num_seqs 64", "max_num_seqs": ""}, "inference", ENGINES)["max_num_seqs"] == ""
    assert with_columns({"notes": "max_num_seqs 64"}, "inference", ENGINES)["max_num_seqs"] == "64"


def test_conversion_moves_values_out_of_the_notes_and_is_idempotent() -> None:
    header = ["id", "engine", "mode", "metric", "value", "notes"]
    row = {"id": "a", "engine": "vllm", "mode": "offline", "metric": "m", "value": "1"}
    rows = [{**row, "notes": "TP1, max_num_seqs 128."}]
    once = convert(header, rows, ENGINES)
    assert once is not None
    new_header, new_rows = once
    assert new_header[-1] == "notes" and set(columns_for("inference")) <= set(new_header)
    assert new_rows[0]["max_num_seqs"] == "128"
    assert new_rows[0]["notes"] == "TP1, max_num_seqs (column)."
    assert convert(new_header, new_rows, ENGINES) == once
    # the reduced note states nothing any more, even where a number follows the name
    assert (
        from_notes(reduced_notes("interleave_moe_layer_step 2 -> 24 MoE layers", "inference"), "inference")[
            "moe_layer_step"
        ]
        == ""
    )


def test_conversion_reads_engine_flags_with_the_rows_engine_spellings() -> None:
    # the run's command line, in engine_version or notes, with the flags engines.yaml gives its engine; the
    # command line stays in the notes as quoted (these switches are not ``name value`` settings)
    header = ["id", "engine", "engine_version", "mode", "metric", "value", "notes"]
    base = {"id": "a", "mode": "poisson", "metric": "m", "value": "1"}
    vllm = "--num-scheduler-steps 10 --max-model-len 4096 --enable-chunked-prefill=False --no-async-scheduling"
    rows = [
        {**base, "engine": "vllm", "engine_version": "0.6.0", "notes": vllm},
        {**base, "engine": "sglang", "engine_version": "0.3.0", "notes": f"vLLM ran {vllm}; --context-length 8192"},
        {**base, "engine": "vllm", "engine_version": "0.11.0 --async-scheduling", "notes": ""},
    ]
    done = convert(header, rows, ENGINES)
    assert done is not None
    cols = ("overlap_scheduling", "chunked_prefill", "num_scheduler_steps", "max_model_len_tokens")
    assert [tuple(r[c] for c in cols) for r in done[1]] == [
        ("off", "off", "10", "4096"),
        # SGLang (engines.yaml) has none of vLLM's flags, only --context-length
        ("", "", "", "8192"),
        ("on", "", "", ""),  # the flag quoted in engine_version
    ]
    assert [r["notes"] for r in done[1]] == [r["notes"] for r in rows]
    # a notes-only reading has no engine profile to take the spellings from: the engine switches read blank
    assert from_notes(vllm, "inference")["num_scheduler_steps"] == ""


def test_other_files_are_left_alone() -> None:
    assert kind_of(["id", "quantity", "value", "notes"]) is None
    assert convert(["id", "quantity", "value", "notes"], [], ENGINES) is None


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_files_carry_the_columns(name: str) -> None:
    header, rows = _read(DATA / name)
    kind = kind_of(header)
    assert kind is not None
    assert set(columns_for(kind)) <= set(header)
    assert convert(header, rows, ENGINES) == (header, rows), f"run bench/validation_notes_to_columns.py on {name}"


def test_predictors_do_not_read_the_notes() -> None:
    for module in ("rows.py", "training_rows.py", "inference_rows.py", "benchmark_rows.py"):
        text = (DATA.parent / module).read_text(encoding="utf-8")
        for read in ('get("notes")', "get('notes')", '["notes"]', "['notes']"):
            assert read not in text, (module, read)


def test_the_conversion_script_keeps_comments_and_line_endings(tmp_path: Path) -> None:
    module = bench_script("validation_notes_to_columns")
    legacy = (
        "# a comment line\r\n"
        "id,seq_len,global_batch_seqs,metric,value,notes\r\n"
        "r1,2048,64,step_time_s,1.0,FSDP. --tp-comm-overlap; hsdp shard 8\r\n"
    )
    path = tmp_path / "new_rows.csv"
    path.write_bytes(legacy.encode())
    assert module.main([str(path)]) == 0
    text = path.read_bytes().decode()
    assert text.startswith("# a comment line\r\n") and text.count("\r\n") == 3
    header, rows = _read(path)
    assert header[-1] == "notes" and set(columns_for("training")) <= set(header)
    assert (rows[0]["tp_comm_overlap"], rows[0]["fsdp_shard_ranks"]) == ("yes", "8")
    assert rows[0]["notes"] == "FSDP. --tp-comm-overlap; hsdp shard (column)"
    assert module.main(["--check", str(path)]) == 0  # idempotent: nothing would change
