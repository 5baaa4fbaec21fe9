"""Imported once by the worker processes' fork server (web/lanes.py): loads the catalog and runs a small inference
and training question, so that every worker forked from it starts with the modules imported and the catalog's caches
filled (a cold worker would spend a second or more on them before each heavy answer)."""

from __future__ import annotations

import contextlib

from aiinfra import app

#: a scenario in the docs' example (docs/web.md): catalog ids only, so it needs no file
_SCENARIO = {
    "model": "meta-llama-3.1-8b",
    "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 8},
    "inference": {"input_tokens": 1024, "output_tokens": 256, "request_rate_per_s": 4},
    "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_seqs": 512},
}


def warm() -> None:
    """Load every catalog kind and the cloud prices, and answer infer, train, capacity and cost on a small example
    scenario, so forked workers start with the modules imported and the caches filled; a failure is ignored."""
    for kind in ("accelerators", "systems", "interconnects", "models", "benchmarks"):
        with contextlib.suppress(Exception):  # a warm-up never stops the server
            app.catalog_list(kind)
    with contextlib.suppress(Exception):  # a warm-up never stops the server
        app.price_list(None)
    for question in ("infer", "train", "capacity", "cost"):
        with contextlib.suppress(Exception):  # a warm-up never stops the server
            app.QUESTIONS[question](app.load_scenario(_SCENARIO))


warm()
