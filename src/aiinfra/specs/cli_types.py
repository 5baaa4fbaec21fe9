"""argparse ``type=`` functions for numeric flags, so a bad flag is refused like a bad scenario key (exit 2)."""

from __future__ import annotations

import argparse

from aiinfra.specs.bounds import MAX_SEQ_TOKENS

MAX_SEED = 2**64 - 1
"""Seeds are non-negative (numpy's SeedSequence refuses negative entropy); 64 bits name more streams than any
study runs."""


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None


def seed(text: str) -> int:
    """A random seed: an integer in [0, 2**64 − 1]."""
    value = _int(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{text} is out of range: give a seed from 0 to 2**64 − 1")
    return value


def seq_len(text: str) -> int:
    """A sequence length in tokens: 1 to MAX_SEQ_TOKENS."""
    value = _int(text)
    if not 1 <= value <= MAX_SEQ_TOKENS:
        raise argparse.ArgumentTypeError(f"{text} is out of range: give a length from 1 to {MAX_SEQ_TOKENS:,} tokens")
    return value
