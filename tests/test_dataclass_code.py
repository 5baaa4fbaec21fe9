"""The compiled dataclass methods kept in the on-disk cache: a class defined through the code table behaves as one
defined by plain ``dataclasses``, and a later process (a fresh table) reuses the stored code instead of compiling."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from aiinfra import dataclass_code


def _define() -> type:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Point:
        x_m: float
        y_m: float = 2.0

    return Point


def test_classes_through_the_table_match_plain_dataclasses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("AIINFRA_NO_CACHE", raising=False)
    plain = _define()
    table = dataclass_code._CodeTable()
    monkeypatch.setattr(dataclasses, "exec", table.exec, raising=False)
    cached = _define()
    p, c = plain(1.0), cached(1.0)
    assert (repr(p), hash(p)) == (repr(c), hash(c))  # repr names the class only: both are "Point"
    assert c == cached(1.0, 2.0) and c != cached(1.0, 3.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.x_m = 3.0  # type: ignore[misc]
    assert cached.__init__.__annotations__ == plain.__init__.__annotations__  # no __future__ flag leaked in
    assert table.used[__name__]  # the methods went through the table, filed under this module


def test_a_fresh_table_reuses_the_stored_code(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("AIINFRA_NO_CACHE", raising=False)
    first = dataclass_code._CodeTable()
    monkeypatch.setattr(dataclasses, "exec", first.exec, raising=False)
    _define()
    assert first.added
    first.save()
    second = dataclass_code._CodeTable()
    monkeypatch.setattr(dataclasses, "exec", second.exec, raising=False)
    _define()
    assert not second.added  # every method's code came from the cache
    assert set(second.used[__name__]) == set(first.used[__name__])


def test_with_the_cache_off_nothing_is_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("AIINFRA_NO_CACHE", "1")
    table = dataclass_code._CodeTable()
    monkeypatch.setattr(dataclasses, "exec", table.exec, raising=False)
    assert _define()(1.0).y_m == 2.0
    table.save()
    assert not list(tmp_path.rglob("*.pickle"))


def test_loads_fast_unpickles_what_dataclasses_pickles() -> None:
    import pickle

    from aiinfra.specs.common import Source

    src = Source(title="datasheet", url="https://example.org/d.pdf", read_on="2026-01-02", fields=("tdp_w",))
    assert Source.__setstate__ is not dataclasses._dataclass_setstate  # type: ignore[attr-defined]
    again = pickle.loads(pickle.dumps(src))
    assert again == src and again.fields == ("tdp_w",) and again.url == "https://example.org/d.pdf"
