"""Error bands for every answer, from the validation data (docs/accuracy.md).

regimes.py  the regime of a validation row or of a scenario's answer (scale band, dense/MoE, hardware generation,
            engine, parallelism family, load level) and the order in which thin regimes are pooled
table.py    the error table: one row per validation measurement with its signed log error, split (open / sealed)
            and source; built by bench/accuracy_table.py into data/error_table.json, read back here
model.py    the central 80 % interval of a regime's error for a publisher not seen (centre, within-publisher scatter,
            between-publisher spread), pooling up the hierarchy, calibrated leave-one-source-out on the open rows
answers.py  ``accuracy_for(kind, inputs, headline)``: the ``accuracy`` object every answer carries
"""

from __future__ import annotations

from typing import Any

__all__ = ["accuracy_for"]


def __getattr__(name: str) -> Any:
    """``accuracy_for`` loads on first use (answers.py imports the catalog)."""
    if name == "accuracy_for":
        from aiinfra.accuracy.answers import accuracy_for

        return accuracy_for
    raise AttributeError(name)
