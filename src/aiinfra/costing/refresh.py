"""`aiinfra prices refresh`: current offers from the providers (through gpuhunt) written as a price overlay.

The overlay is a catalog overlay folder (``prices/cloud.csv`` + ``REFRESH.md``) in the user's cache folder
(catalog/store.py ``refreshed_prices_dir``), which every command reads beside the shipped rows; the
newer row of the same offer wins (:func:`aiinfra.costing.prices.newest_per_offer`). gpuhunt is an optional extra
(``pip install 'aiinfra[prices]'``) imported only here, inside :func:`gpuhunt_fetcher`: :func:`refresh` takes any
``fetch(provider) -> offers`` (tests pass recorded offers; ``--offers DIR`` reads gpuhunt catalog files).
"""

from __future__ import annotations

import csv
import io
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from aiinfra.costing.offers import (
    CLOUD_CSV_FIELDS,
    Mapped,
    NameTable,
    Offer,
    PriceRow,
    Unmapped,
    fold_unmapped,
    map_offer,
    offer_from_item,
    price_rows,
    read_gpuhunt_csv,
)
from aiinfra.costing.prices import REFRESH_COMMAND, current_date
from aiinfra.errors import AiinfraError, SpecError

#: providers refreshed when none are named: gpuhunt's providers that need no account (published catalogs, and
#: Vast.ai's public offer search)
DEFAULT_PROVIDERS = ("aws", "azure", "gcp", "lambdalabs", "nebius", "oci", "runpod", "vastai")

Fetch = Callable[[str], Sequence[Offer]]


class RefreshError(AiinfraError):
    """No provider could be read (no network, or every provider failed): nothing was written. CLI exit 2."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RefreshReport:
    """What a refresh read, wrote and left out."""

    out_dir: Path
    """The overlay folder written (holding prices/cloud.csv and REFRESH.md)."""
    read_on: str
    """ISO date of the refresh: every row written is dated so."""
    providers: tuple[str, ...]
    """Providers read."""
    failed: dict[str, str]
    """Provider -> why it could not be read (nothing of it written)."""
    offers_read: int
    """Offers with an accelerator, over all providers read."""
    rows: tuple[PriceRow, ...]
    """The de-duplicated price rows written."""
    unmapped: tuple[Unmapped, ...]
    """Offers left out (GPU not in the catalog, form or MIG slice not stated, pricing kind unknown)."""
    source: str
    """Where offers were read: gpuhunt, or recorded gpuhunt catalog files."""


def gpuhunt_fetcher() -> Fetch:
    """A fetch function reading current offers through gpuhunt (its published catalogs for the providers it
    collects offline, the provider's public API for online ones). Needs the ``prices`` extra."""
    try:
        import gpuhunt  # type: ignore[import-untyped,import-not-found,unused-ignore]
        from gpuhunt._internal import catalog as gh_catalog  # type: ignore[import-untyped,import-not-found,unused-ignore]
        from gpuhunt._internal.default import ONLINE_PROVIDER_MODULES  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise SpecError(
            "prices refresh",
            "gpuhunt",
            "the gpuhunt package is not installed",
            "pip install 'aiinfra[prices]' (or give --offers DIR with recorded gpuhunt catalog files)",
        ) from None
    state: dict[str, Any] = {}

    def offline() -> Any:
        if "catalog" not in state:
            cat = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
            try:
                cat.load()
            except Exception as exc:  # gpuhunt raises when no provider's catalog could be downloaded
                cause = f" ({exc.__cause__})" if exc.__cause__ is not None else ""
                state["error"] = f"{exc}{cause}"
            state["catalog"] = cat
        return state["catalog"]

    def fetch(provider: str) -> Sequence[Offer]:
        with _quiet("gpuhunt"):
            return fetch_one(provider)

    def fetch_one(provider: str) -> Sequence[Offer]:
        if provider in gh_catalog.OFFLINE_PROVIDERS:
            cat = offline()
            if provider not in cat.catalog:
                raise RefreshError(state.get("error") or "its published catalog could not be downloaded")
            return [offer_from_item(i) for i in cat.query(provider=provider)]
        if provider in gh_catalog.ONLINE_PROVIDERS:
            import importlib

            module, cls = next((m, c) for m, c in ONLINE_PROVIDER_MODULES if m.rsplit(".", 1)[-1] == provider)
            cat = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
            cat.add_provider(getattr(importlib.import_module(module), cls).from_env())
            return [offer_from_item(i) for i in cat.query(provider=provider)]
        known = sorted([*gh_catalog.OFFLINE_PROVIDERS, *gh_catalog.ONLINE_PROVIDERS])
        raise SpecError("--providers", provider, "gpuhunt has no such provider", f"use some of {', '.join(known)}")

    return fetch


@contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """A library's log records dropped inside the block: its failures become our messages, not tracebacks on
    stderr (a NullHandler keeps logging's last-resort handler out)."""
    log = logging.getLogger(logger)
    handler, propagate = logging.NullHandler(), log.propagate
    log.addHandler(handler)
    log.propagate = False
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.propagate = propagate


def files_fetcher(folder: Path) -> Fetch:
    """A fetch function reading recorded offers: ``<provider>.csv`` files in gpuhunt's catalog format."""
    if not folder.is_dir():
        raise SpecError(
            "--offers", str(folder), "not a folder", "give a folder of <provider>.csv gpuhunt catalog files"
        )

    def fetch(provider: str) -> Sequence[Offer]:
        path = folder / f"{provider}.csv"
        if not path.is_file():
            raise RefreshError(f"no {path.name} in {folder}")
        return read_gpuhunt_csv(path, provider)

    return fetch


def refresh(
    providers: Sequence[str],
    out_dir: Path,
    fetch: Fetch,
    today: date | None = None,
    source: str = "gpuhunt",
    *,
    name_table: NameTable,
) -> RefreshReport:
    """Read each provider's offers with ``fetch``, map and de-duplicate them, and write the overlay into
    ``out_dir`` (replacing the previous one). A provider whose fetch raises is named in ``failed`` and the others
    are written; when every provider fails nothing is written and :class:`RefreshError` says why. ``name_table``: the
    catalog's accelerator names (:class:`aiinfra.costing.offers.NameTable`)."""
    if not providers:
        raise SpecError("--providers", "", "no provider named", f"name some, e.g. {','.join(DEFAULT_PROVIDERS)}")
    read_on = (today or current_date()).isoformat()
    failed: dict[str, str] = {}
    mapped: list[Mapped] = []
    unmapped: list[Unmapped] = []
    read: list[str] = []
    offers_read = 0
    for provider in providers:
        try:
            offers = list(fetch(provider))
        except SpecError:
            raise
        except Exception as exc:  # network, HTTP, the provider's format: named, the others go on
            failed[provider] = str(exc) or type(exc).__name__
            continue
        read.append(provider)
        for offer in offers:
            m = map_offer(offer, name_table)
            if m is None:
                continue
            offers_read += 1
            (mapped if isinstance(m, Mapped) else unmapped).append(m)  # type: ignore[arg-type]
    if not read:
        why = "; ".join(f"{p}: {e}" for p, e in failed.items())
        raise RefreshError(
            f"no provider could be read, nothing written ({why}) — check the network connection, "
            "or give --offers DIR with recorded gpuhunt catalog files"
        )
    title = f"{source} offers ({', '.join(read)}), read {read_on}"
    rows = price_rows(mapped, read_on, title)
    report = RefreshReport(
        out_dir=out_dir,
        read_on=read_on,
        providers=tuple(read),
        failed=failed,
        offers_read=offers_read,
        rows=tuple(rows),
        unmapped=tuple(fold_unmapped(unmapped)),
        source=source,
    )
    write_overlay(report)
    return report


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_overlay(report: RefreshReport) -> None:
    """prices/cloud.csv (the rows) and REFRESH.md (what was read, failed and left out) into the overlay."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(CLOUD_CSV_FIELDS), lineterminator="\n")
    writer.writeheader()
    for r in report.rows:
        writer.writerow(r.csv_row())
    _atomic_write(report.out_dir / "prices" / "cloud.csv", buf.getvalue())
    _atomic_write(report.out_dir / "REFRESH.md", refresh_markdown(report))


def refresh_markdown(report: RefreshReport) -> str:
    """REFRESH.md of a refresh: when and from where the prices were read, providers that failed, offers left out and
    why."""
    lines = [
        f"# Prices refreshed {report.read_on}",
        "",
        f"Written by `{REFRESH_COMMAND}` from {report.source}: {len(report.rows)} price rows from "
        f"{report.offers_read} offers of {', '.join(report.providers)}.",
        "",
    ]
    if report.failed:
        lines += ["## Providers that could not be read", ""]
        lines += [f"- {p}: {why}" for p, why in report.failed.items()]
        lines.append("")
    lines += ["## Offers left out (accelerator not mapped)", ""]
    lines += [
        f"- {u.provider} {u.instance} ({u.gpu}){f' × {u.count} offers' if u.count > 1 else ''}: {u.reason}"
        for u in report.unmapped
    ] or ["- none"]
    return "\n".join(lines) + "\n"
