"""Numeric formats as objects: what each precision name means to the planners (a definition of the format, not a
measurement). Code asks a format (``PRECISIONS[name]``) for its storage bytes and the tensor-core peak it runs at,
instead of comparing names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Precision:
    """One numeric format."""

    name: str
    element_bytes: float
    """Storage bytes per element (block scales of the microscaling formats not counted)."""
    peak_format: str
    """The format whose dense tensor-core peak (``AcceleratorSpec.dense_flop_per_s`` key) its matmuls run at."""
    block_scaled: bool = False
    """A microscaling format (OCP MX / NVFP4: a shared scale per block of 32 or 16 elements): its matmuls run at
    the ``peak_format`` rate only on accelerators whose tensor cores apply the block scales natively."""


#: every format a spec may name
PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in (
        Precision("fp64", 8.0, "fp64"),
        Precision("fp32", 4.0, "fp32"),
        Precision("tf32", 4.0, "tf32"),
        Precision("bf16", 2.0, "bf16"),
        Precision("fp16", 2.0, "fp16"),
        Precision("fp8", 1.0, "fp8"),
        Precision("mxfp8", 1.0, "fp8", block_scaled=True),
        Precision("int8", 1.0, "int8"),
        Precision("int4", 0.5, "int4"),
        Precision("fp4", 0.5, "fp4"),
        Precision("nvfp4", 0.5, "fp4", block_scaled=True),
    )
}

#: storage bytes per element of each format
DTYPE_BYTES: dict[str, float] = {name: p.element_bytes for name, p in PRECISIONS.items()}

#: block-scaled training formats and the plain format whose dense peak they run at
BLOCK_SCALED_BASE: dict[str, str] = {name: p.peak_format for name, p in PRECISIONS.items() if p.block_scaled}
