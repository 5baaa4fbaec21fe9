"""Closed-form models: pure functions of specs, each citing its source."""
