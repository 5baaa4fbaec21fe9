"""Failures, checkpoints, restarts and goodput of long training runs: per-component failure rates (rates), checkpoint
size and timing (checkpoint), the expected completion time and spare nodes (goodput), a Monte-Carlo of the run
(montecarlo), and the whole answer for a training scenario (plan)."""
