"""What a warm `aiinfra infer` does not import or look at (start-up time, issue 27 item 8): numpy (its answer is
scalar arithmetic), platformdirs and the refreshed-prices folder (it reads no price). The refreshed prices are still
read by every command that reads a price (tests/test_prices_refresh.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aiinfra import catalog
from aiinfra.catalog import store
from aiinfra.catalog.store import Catalog
from aiinfra.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import contextlib, io, sys
from aiinfra.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(["infer", {example!r}])
assert rc == 0, rc
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "platformdirs"))))
"""


def test_infer_on_the_example_imports_neither_numpy_nor_platformdirs() -> None:
    # about imports, so fresh interpreters (this test process has numpy already): the first run may fill the
    # caches, the second reads them, as a user's warm run does
    example = str(ROOT / "examples" / "infer-llama3.1-70b-h100.yaml")
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", _PROBE.format(example=example)], capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == ""


def _broken_refresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refreshed-prices folder whose prices file lacks its source columns."""
    (tmp_path / "prices").mkdir()
    (tmp_path / "prices" / "cloud.csv").write_text("id,usd_per_hour\nx,1\n")
    monkeypatch.setenv(store.PRICES_DIR_ENV, str(tmp_path))
    Catalog.forget_user_default()


def test_the_refreshed_prices_are_looked_for_only_when_a_price_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _broken_refresh(tmp_path, monkeypatch)
    looks: list[int] = []
    real = store.refreshed_prices_dir

    def counted() -> Path | None:
        looks.append(1)
        return real()

    monkeypatch.setattr(store, "refreshed_prices_dir", counted)
    try:
        assert catalog.accelerator("nvidia-h100-sxm5-80gb").id == "nvidia-h100-sxm5-80gb"
        assert catalog.active() is catalog.active()  # the same catalog within the recheck interval
        assert looks == []  # no price read: the folder was not looked for
        with pytest.raises(SpecError, match=r"refreshed prices.*prices refresh"):  # its broken file, when read
            catalog.file_rows("prices/cloud.csv")
        assert looks == [1]
    finally:
        monkeypatch.undo()
        Catalog.forget_user_default()


def test_an_overlay_folder_list_looks_for_the_refreshed_prices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # what a worker process lays over the shipped rows again (app.catalog_overlay_dirs) includes the refreshed folder
    (tmp_path / "prices").mkdir()
    shipped = ROOT / "src" / "aiinfra" / "catalog" / "data" / "prices" / "cloud.csv"
    (tmp_path / "prices" / "cloud.csv").write_text(shipped.read_text())
    monkeypatch.setenv(store.PRICES_DIR_ENV, str(tmp_path))
    Catalog.forget_user_default()
    try:
        assert catalog.active().overlay_dirs == (tmp_path,)
        monkeypatch.setenv(store.PRICES_DIR_ENV, "off")
        Catalog.forget_user_default()
        assert catalog.active().overlay_dirs == ()
    finally:
        monkeypatch.undo()
        Catalog.forget_user_default()


def test_efficiency_curves_from_the_cache_equal_curves_built_from_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a warm start unpickles each shipped efficiency file's curves (Catalog.derived): the same curves, in the same
    # order, as building them from the parsed rows; a second catalog reads them without building
    from aiinfra.analytic import efficiency
    from aiinfra.catalog.tables import domain_tables

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("AIINFRA_NO_CACHE", raising=False)
    shipped = Catalog.default()
    fresh = efficiency._used(efficiency.efficiency_rows(domain_tables(Catalog(shipped.root)), lazy=False))
    assert efficiency.table(domain_tables(Catalog(shipped.root))).curves == fresh  # builds and stores
    built: list[str] = []
    real = efficiency._used

    def counted(rows: Any) -> list[efficiency.Curve]:
        built.append("x")
        return real(rows)

    monkeypatch.setattr(efficiency, "_used", counted)
    again = efficiency.table(domain_tables(Catalog(shipped.root)))
    assert again.curves == fresh and built == []
    # the per-M curves an engine's lookup loads, through the same cache
    assert again.lazy_loader is not None
    assert again.lazy_loader("by_m", "vllm") == real(
        [r for n in shipped.efficiency_files() if n.endswith("_by_m_vllm.yaml") for r in shipped.file_rows(n)]
    )
