"""Sweep machinery below the application layer: grid axes and points, the Pareto front, the results directory."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra.errors import SpecError
from aiinfra.sweeping.grid import Grid, parse_axis, point_hash, split_values
from aiinfra.sweeping.pareto import front
from aiinfra.sweeping.store import ResultStore, read_table, to_table, unified_schema


def test_values_split_on_commas_outside_brackets_and_quotes() -> None:
    assert split_values("8, 16,[1,2],{a: 1, b: 2},'x,y'") == ["8", "16", "[1,2]", "{a: 1, b: 2}", "'x,y'"]


def test_axis_values_are_read_as_yaml_like_set() -> None:
    assert parse_axis("hardware.count=8,16,32", "--grid") == ("hardware.count", [8, 16, 32])
    assert parse_axis("inference.weight_precision=bf16,fp8", "--grid") == (
        "inference.weight_precision",
        ["bf16", "fp8"],
    )
    assert parse_axis("k=true,1.5,15e12,[1,2]", "--zip") == ("k", [True, 1.5, "15e12", [1, 2]])
    with pytest.raises(SpecError) as exc:
        parse_axis("hardware.count", "--grid")
    assert exc.value.field == "--grid"
    with pytest.raises(SpecError) as empty:
        parse_axis("hardware.count=8,,16", "--grid")
    assert empty.value.field == "--grid hardware.count"


def test_grid_crosses_axes_and_walks_zipped_keys_together() -> None:
    g = Grid.build({"a": [1, 2], "b": ["x", "y", "z"]}, {"c": [10, 20], "d": ["p", "q"]})
    assert len(g) == 2 * 3 * 2
    points = list(g)
    assert len(points) == 12
    # the zipped pair varies fastest, then b, then a
    assert points[0] == (("a", 1), ("b", "x"), ("c", 10), ("d", "p"))
    assert points[1] == (("a", 1), ("b", "x"), ("c", 20), ("d", "q"))
    assert points[2] == (("a", 1), ("b", "y"), ("c", 10), ("d", "p"))
    assert points[-1] == (("a", 2), ("b", "z"), ("c", 20), ("d", "q"))
    assert {dict(p)["c"]: dict(p)["d"] for p in points} == {10: "p", 20: "q"}


def test_grid_refuses_unequal_zips_repeated_keys_and_empty_axes() -> None:
    with pytest.raises(SpecError) as zipped:
        Grid.build({}, {"c": [1, 2], "d": [1]})
    assert zipped.value.field == "--zip c"
    with pytest.raises(SpecError) as twice:
        Grid.build({"a": [1]}, {"a": [2]})
    assert twice.value.field == "--zip a"
    with pytest.raises(SpecError):
        Grid.build({"a": []}, None)
    with pytest.raises(SpecError):
        Grid.build(None, None)


def test_point_identity_is_question_options_and_scenario() -> None:
    sc = {"model": "m", "hardware": {"count": 8, "accelerator": "a"}}
    same = {"hardware": {"accelerator": "a", "count": 8}, "model": "m"}
    assert point_hash("infer", {}, sc) == point_hash("infer", {}, same)
    assert point_hash("infer", {}, sc) != point_hash("train", {}, sc)
    assert point_hash("simulate", {"seed": 0}, sc) != point_hash("simulate", {"seed": 1}, sc)
    assert point_hash("infer", {}, sc) != point_hash("infer", {}, {**sc, "hardware": {"count": 16, "accelerator": "a"}})


def test_pareto_front_by_hand() -> None:
    x = [1.0, 2.0, 3.0, 4.0, 2.0]
    y = [5.0, 3.0, 4.0, 1.0, 3.5]
    assert front(x, y) == [0, 1, 3]  # (3, 4) is beaten by (2, 3); (2, 3.5) by (2, 3)
    assert front(x, y, y_max=True) == [0]  # (1, 5): least x and most y
    assert front(x, y, x_max=True) == [3]  # (4, 1): most x and least y


def _dominated(i: int, pts: list[tuple[float, float]]) -> bool:
    xi, yi = pts[i]
    return any(xj <= xi and yj <= yi and (xj, yj) != (xi, yi) for xj, yj in pts)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=40), st.booleans(), st.booleans()
)
def test_pareto_front_equals_brute_force_dominance(pts: list[tuple[int, int]], x_max: bool, y_max: bool) -> None:
    sx, sy = (-1 if x_max else 1), (-1 if y_max else 1)
    signed = [(float(sx * a), float(sy * b)) for a, b in pts]
    expected = {pts[i] for i in range(len(pts)) if not _dominated(i, signed)}
    got = front([float(a) for a, _ in pts], [float(b) for _, b in pts], x_max, y_max)
    assert {pts[i] for i in got} == expected
    assert len(got) == len(expected)  # one row per distinct non-dominated point


def test_rows_become_one_type_per_column() -> None:
    t = to_table([{"a": 1, "b": "x", "f": True}, {"a": 2.5, "c": "[1, 2]", "f": False}, {"a": None, "b": None}])
    assert t.schema.field("a").type == pa.float64()
    assert t["a"].to_pylist() == [1.0, 2.5, None]
    assert t.schema.field("b").type == pa.string()
    assert t["c"].to_pylist() == [None, "[1, 2]", None]
    assert t.schema.field("f").type == pa.bool_()
    mixed = to_table([{"m": 1}, {"m": "unknown"}])
    assert mixed["m"].to_pylist() == ["1", "unknown"]


def test_parts_of_different_types_read_as_one_table() -> None:
    parts = [
        pa.schema([("n", pa.int64()), ("z", pa.null())]),
        pa.schema([("n", pa.float64()), ("s", pa.string())]),
        pa.schema([("z", pa.bool_()), ("s", pa.int64())]),
    ]
    u = unified_schema(parts)
    assert [(f.name, f.type) for f in u] == [("n", pa.float64()), ("z", pa.bool_()), ("s", pa.string())]


def test_store_resumes_dedupes_and_compacts(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "r", {"question": "infer", "options": {}})
    store.write([{"scenario_hash": "h1", "error": None, "v": 1}, {"scenario_hash": "h2", "error": "error: bad"}])
    store.write([{"scenario_hash": "h3", "error": None, "v": 2.5, "note": "[1]"}])
    store.write([{"scenario_hash": "h1", "error": None, "v": 1}])  # a duplicate (a crash mid-compaction)
    (tmp_path / "r" / ".part-x.parquet.tmp").write_bytes(b"half a file")  # a write cut short by kill -9
    assert store.finished() == {"h1": False, "h2": True, "h3": False}
    rows = read_table(tmp_path / "r").to_pylist()
    assert [r["scenario_hash"] for r in rows] == ["h1", "h2", "h3"]
    assert [r["v"] for r in rows] == [1.0, None, 2.5]
    store.compact()
    parts = list((tmp_path / "r").glob("part-*.parquet"))
    assert len(parts) == 1
    assert pq.read_table(parts[0]).to_pylist() == rows


def test_store_refuses_another_question_and_a_file(tmp_path: Path) -> None:
    ResultStore(tmp_path / "r", {"question": "infer", "options": {}})
    assert json.loads((tmp_path / "r" / "_sweep.json").read_text())["question"] == "infer"
    with pytest.raises(SpecError) as other:
        ResultStore(tmp_path / "r", {"question": "train", "options": {}})
    assert other.value.field == "--out"
    (tmp_path / "f").write_text("x")
    with pytest.raises(SpecError):
        ResultStore(tmp_path / "f", {"question": "infer", "options": {}})
