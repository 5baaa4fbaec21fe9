"""Reading a user's text file (scenario, config.json, trace, cases CSV): every way it can fail is a SpecError
naming the file, never an exception from the codec or the operating system."""

from __future__ import annotations

from pathlib import Path

from aiinfra.errors import SpecError

MAX_INPUT_BYTES = 64 * 2**20
"""Largest input file read: 64 MiB, above the largest trace a user would hand the simulator in one file
(10⁶ requests of ~40 bytes a row) and thousands of times the largest scenario."""


def read_text(path: str | Path, field: str, kind: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of ``path``; ``kind`` says what the file should be (for the fix)."""
    p = Path(path)
    if p.is_dir():
        raise SpecError(field, str(path), "is a directory", f"give the path of {kind}")
    if not p.is_file():
        raise SpecError(field, str(path), "file not found", f"give the path of {kind}")
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise SpecError(
                field,
                str(path),
                f"file is {size:,} bytes, above the {max_bytes:,}-byte limit",
                f"give {kind} under {max_bytes // 2**20} MiB",
            )
        data = p.read_bytes()
    except OSError as exc:
        raise SpecError(
            field, str(path), f"cannot be read ({exc.strerror})", "check the path and permissions"
        ) from None
    if b"\x00" in data:
        raise SpecError(field, str(path), "is a binary file (contains NUL bytes)", f"give {kind} as UTF-8 text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(
            field,
            str(path),
            f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            "save the file as UTF-8",
        ) from None
    if not text.strip():
        raise SpecError(field, str(path), "file is empty", f"give {kind}")
    return text


def beside_scenario(raw: str, scenario_path: str = "") -> str:
    """The one rule for a path a scenario names (a model's config.json, a trace): relative to the scenario file's
    folder; without a scenario file (a mapping given in code), or where nothing is there but the path exists from
    the working directory (scenarios written before this rule), as given."""
    from pathlib import Path

    p = Path(raw)
    if p.is_absolute() or not scenario_path:
        return raw
    beside = Path(scenario_path).parent / p
    return str(beside) if beside.exists() or not p.exists() else raw
