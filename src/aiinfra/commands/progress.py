"""Progress on stderr for answers that take a while (validate, capacity --simulate, simulate --find-max-rate).

The application layer takes an optional ``progress(done, total)`` callback (``total`` None while unknown); this
shell turns it into a tqdm bar on stderr, shown only when stderr is a terminal, ``--quiet`` is not given and tqdm
is installed, and only once the work has run for two seconds. stdout (and so ``--json``) never carries it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: seconds before a bar appears: shorter answers print no progress at all
SHOW_AFTER_S = 2.0

ProgressFn = Callable[[int, "int | None"], None]


def add_quiet_arg(p: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress bar on stderr."""
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


@contextmanager
def progress_bar(args: argparse.Namespace, unit: str, desc: str) -> Iterator[ProgressFn | None]:
    """A ``progress(done, total)`` callback drawing a tqdm bar on stderr, or None when no bar is wanted."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        yield None
        return
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is a dependency; a stripped install just shows no bar
        yield None
        return
    bar: Any = tqdm(
        total=None, unit=" " + unit, desc=desc, file=sys.stderr, dynamic_ncols=True, delay=SHOW_AFTER_S, leave=False
    )

    def update(done: int, total: int | None) -> None:
        if total is not None and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    try:
        yield update
    finally:
        bar.close()
