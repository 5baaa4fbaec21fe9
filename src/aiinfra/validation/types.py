"""The interface between the validation runner and the per-kind row predictors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class RowPrediction:
    """The prediction for one reference row, made from the row's specs only (never its ``value``)."""

    predicted: float | None
    """Predicted value of the row's ``metric`` in SI units; None = not modelled (see ``reason``)."""
    reason: str = ""
    """Why no prediction was made, or caveats (assumptions filled for blank cells)."""
    details: dict[str, Any] = field(default_factory=dict)
    """Plan, breakdown and efficiency sources used (for the report)."""


#: a predictor takes one CSV row (column -> text) and predicts its metric
RowPredictor = Callable[[dict[str, str]], RowPrediction]
