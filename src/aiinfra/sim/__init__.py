"""Discrete-event serving simulator: continuous batching with a paged KV cache."""
