"""The shared input layer: frozen, keyword-only, slotted dataclasses validated once at the boundary."""
