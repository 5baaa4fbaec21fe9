"""Calibration factors as a typed value: the scales of one calibration.yaml row (catalog/calibration.py reads
the rows; the planners divide their kernel times by them) and the bounds a row may hold."""

from __future__ import annotations

from dataclasses import dataclass

SCALE_FIELDS = ("compute_efficiency_scale", "memory_efficiency_scale", "communication_efficiency_scale")

SCALE_MIN = 0.05
"""Smallest scale a row may hold: a measured time 20× the model's means the scenario does not describe the run
(another GPU count, precision or engine), which no efficiency factor should absorb."""

SCALE_MAX = 20.0
"""Largest scale a row may hold; the fit bounds each factor tighter, so that the achieved efficiency stays at or
below the peak (efficiency × scale ≤ 1); this only rejects rows edited into nonsense."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Factors:
    """Scales of one calibration row (neutral by default)."""

    compute_efficiency_scale: float = 1.0
    memory_efficiency_scale: float = 1.0
    communication_efficiency_scale: float = 1.0
    step_overhead_s: float = 0.0
    source: str | None = None
    """Id of the calibration row, None for the neutral factors."""

    @property
    def neutral(self) -> bool:
        """Whether every factor is at its neutral value (scales 1, no step overhead): the models run uncalibrated."""
        return (
            self.compute_efficiency_scale,
            self.memory_efficiency_scale,
            self.communication_efficiency_scale,
            self.step_overhead_s,
        ) == (1.0, 1.0, 1.0, 0.0)

    @classmethod
    def of(cls, values: dict[str, float], source: str | None = None) -> Factors:
        """Factors from a mapping of factor names (absent ones neutral)."""
        return cls(
            compute_efficiency_scale=values.get("compute_efficiency_scale", 1.0),
            memory_efficiency_scale=values.get("memory_efficiency_scale", 1.0),
            communication_efficiency_scale=values.get("communication_efficiency_scale", 1.0),
            step_overhead_s=values.get("step_overhead_s", 0.0),
            source=source,
        )

    def as_dict(self) -> dict[str, float]:
        """The four factors by name (what calibration.yaml rows hold; the source id left out)."""
        return {
            "compute_efficiency_scale": self.compute_efficiency_scale,
            "memory_efficiency_scale": self.memory_efficiency_scale,
            "communication_efficiency_scale": self.communication_efficiency_scale,
            "step_overhead_s": self.step_overhead_s,
        }


NEUTRAL = Factors()
