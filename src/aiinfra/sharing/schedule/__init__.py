"""Cluster scheduler simulation: schedule file format, traces, the event-driven simulator."""
