"""Numeric formats as objects (specs/precision.py)."""

from __future__ import annotations

from aiinfra.specs.common import DTYPE_BYTES
from aiinfra.specs.hardware import BLOCK_SCALED_BASE
from aiinfra.specs.precision import PRECISIONS


def test_storage_bytes_are_the_formats_bit_widths() -> None:
    # by definition: IEEE fp64/fp32 64/32 bits, tf32 stored in 32, bf16/fp16 16, fp8 (E4M3/E5M2) and int8 8,
    # int4 / fp4 (E2M1) 4 bits; MX and NVFP4 elements are their fp8 / fp4 elements (block scales not counted)
    bits = {"fp64": 64, "fp32": 32, "tf32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "mxfp8": 8, "int8": 8, "int4": 4}
    bits |= {"fp4": 4, "nvfp4": 4}
    expected = {k: v / 8 for k, v in bits.items()}
    assert expected == DTYPE_BYTES


def test_block_scaled_formats_run_at_their_plain_formats_peak() -> None:
    assert BLOCK_SCALED_BASE == {"mxfp8": "fp8", "nvfp4": "fp4"}
    assert all(p.peak_format == p.name for p in PRECISIONS.values() if not p.block_scaled)
