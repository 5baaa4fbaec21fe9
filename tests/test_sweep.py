"""Sweeps end to end: every point answered as the CLI answers it, the same rows from every backend, bad input
refused before any work, an interrupted sweep resumed without loss or duplicates, the Pareto report."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import aiinfra
from aiinfra import app
from aiinfra.app.sweep import sweep
from aiinfra.cli import main
from aiinfra.sweeping.pareto import front
from aiinfra.sweeping.store import encode_value, read_table

from .conftest import EXAMPLES

INFER = EXAMPLES / "infer-llama3.1-70b-h100.yaml"
SIMULATE = EXAMPLES / "simulate-llama70b-h100.yaml"
GRID = {"hardware.count": [8, 16], "inference.weight_precision": ["bf16", "fp8"], "inference.plan.tp": [8, 3]}
"""8 infer points: tp 3 divides neither count, so 4 of them fail when answered (recorded, not fatal)."""


def _cli(*args: str) -> tuple[int, str, str]:
    """The CLI in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()


def _rows(out: str | Path) -> dict[str, dict[str, Any]]:
    """Rows by point hash, without the columns that time the run."""
    return {
        r["scenario_hash"]: {k: v for k, v in r.items() if not k.endswith("wall_s")}
        for r in read_table(out).to_pylist()
    }


def test_every_point_is_the_answer_of_the_app_function_or_its_error(tmp_path: Path) -> None:
    res = sweep(INFER, grid=GRID, question="infer", out=tmp_path / "r", backend="serial")
    assert (res.points, res.run, res.skipped, res.failures, res.lost) == (8, 8, 0, 4, 0)
    rows = read_table(tmp_path / "r").to_pylist()
    assert len(rows) == 8
    for row in rows:
        overrides = {k: row[k] for k in GRID}
        if overrides["inference.plan.tp"] == 3:
            # the error is the one the CLI prints for the same point
            rc, _, err = _cli("infer", str(INFER), *[a for k, v in overrides.items() for a in ("--set", f"{k}={v}")])
            assert rc == 2
            assert row["error"] == err.strip()
            continue
        assert row["error"] is None
        expected = app.flatten(aiinfra.infer(INFER, set=overrides).to_dict())
        for name, value in expected.items():
            assert row[name] == encode_value(value), name


def test_process_pool_and_ray_give_the_serial_rows(tmp_path: Path) -> None:
    import ray

    sweep(INFER, grid=GRID, question="infer", out=tmp_path / "serial", backend="serial")
    sweep(INFER, grid=GRID, question="infer", out=tmp_path / "pool", backend="process", workers=2)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        res = sweep(INFER, grid=GRID, question="infer", out=tmp_path / "ray", backend="ray")
    finally:
        ray.shutdown()
    assert res.backend == "ray" and res.run == 8
    serial = _rows(tmp_path / "serial")
    assert len(serial) == 8
    assert _rows(tmp_path / "pool") == serial
    assert _rows(tmp_path / "ray") == serial


def test_a_finished_sweep_runs_nothing_again_and_a_larger_grid_only_its_new_points(tmp_path: Path) -> None:
    small = {"hardware.count": [8, 16]}
    first = sweep(INFER, grid=small, out=tmp_path / "r", backend="serial")
    again = sweep(INFER, grid=small, out=tmp_path / "r", backend="serial")
    assert (first.run, again.run, again.skipped) == (2, 0, 2)
    larger = sweep(INFER, grid={"hardware.count": [8, 16, 24]}, out=tmp_path / "r", backend="serial")
    assert (larger.run, larger.skipped) == (1, 2)
    assert len(read_table(tmp_path / "r")) == 3


def test_the_api_returns_the_points_as_a_dataframe_in_grid_order() -> None:
    frame = aiinfra.sweep(INFER, grid={"hardware.count": [24, 8, 16]}, question="infer", backend="serial")
    assert list(frame["hardware.count"]) == [24, 8, 16]
    assert list(frame["count"]) == [24, 8, 16]
    assert frame.attrs["summary"]["points"] == 3
    # the plan is tp8: one replica per 8 accelerators
    assert list(frame["replicas"]) == [3, 1, 2]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--grid", "hardwre.count=8,16"], "--grid hardwre.count"),
        (["--grid", "hardware.count=8,lots"], "--grid hardware.count"),
        (["--grid", "hardware.accelerator=nvidia-h100-sxm5-80gb,nvidia-h1000"], "--grid hardware.accelerator"),
        (["--zip", "hardware.count=8,16", "--zip", "inference.concurrency=1"], "--zip hardware.count"),
        (["--grid", "hardware.count=8", "--question", "nonsense"], "--question"),
    ],
)
def test_a_bad_key_or_value_exits_2_naming_it_before_any_work(tmp_path: Path, args: list[str], named: str) -> None:
    out = tmp_path / "r"
    rc, _, err = _cli("sweep", str(INFER), *args, "--out", str(out))
    assert rc == 2
    assert err.startswith(f"error: {named}")
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_values_valid_only_together_are_recorded_not_refused(tmp_path: Path) -> None:
    res = sweep(
        INFER,
        grid={
            "hardware.system": ["dgx-h100", "dgx-a100-80gb"],
            "hardware.accelerator": ["nvidia-h100-sxm5-80gb", "nvidia-a100-sxm4-80gb"],
        },
        out=tmp_path / "r",
        backend="serial",
    )
    assert (res.points, res.failures) == (4, 2)
    errors = {(r["hardware.system"], r["hardware.accelerator"]): r["error"] for r in read_table(res.out).to_pylist()}
    assert errors[("dgx-h100", "nvidia-h100-sxm5-80gb")] is None
    assert "not nvidia-a100-sxm4-80gb" in errors[("dgx-h100", "nvidia-a100-sxm4-80gb")]


def test_a_sweep_killed_midway_resumes_with_every_point_once_and_the_same_values(tmp_path: Path) -> None:
    rates = ",".join(str(r) for r in range(4, 14))  # 10 simulations of 300 requests, ~0.3 s each
    args = [
        "sweep",
        str(SIMULATE),
        "--question",
        "simulate",
        "--grid",
        f"inference.request_rate_per_s={rates}",
        "--set",
        "inference.num_requests=300",
        "--backend",
        "serial",
        "--flush-s",
        "0",
        "--no-progress",
    ]
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "aiinfra.cli", *args, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while len(list(out.glob("part-*.parquet"))) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    parts = list(out.glob("part-*.parquet"))
    written = sum(pq.read_metadata(p).num_rows for p in parts)  # every part is a whole file
    assert 3 <= written < 10, "the sweep was not killed midway"

    rc, stdout, err = _cli(*args, "--out", str(out), "--json")
    assert rc == 0, err
    summary = json.loads(stdout)
    assert summary["skipped"] == written and summary["run"] == 10 - written
    table = read_table(out)
    hashes = table["scenario_hash"].to_pylist()
    assert len(hashes) == len(set(hashes)) == 10
    assert len(list(out.glob("part-*.parquet"))) == 1  # compacted

    rc, _, err = _cli(*args, "--out", str(tmp_path / "whole"))
    assert rc == 0, err
    assert _rows(out) == _rows(tmp_path / "whole")


def test_report_prints_the_pareto_front_and_plots_it(tmp_path: Path) -> None:
    out = tmp_path / "r"
    sweep(
        INFER,
        grid={"hardware.count": [8, 16, 32], "inference.weight_precision": ["bf16", "fp8"]},
        out=out,
        backend="serial",
    )
    rc, stdout, err = _cli(
        "sweep", "--report", str(out), "--x", "count", "--y", "ttft", "--plot", str(tmp_path / "plots"), "--json"
    )
    assert rc == 0, err
    rep = json.loads(stdout)
    assert (rep["x"], rep["y"], rep["points"]) == ("count", "ttft_s", 6)
    rows = read_table(out).to_pylist()
    xs, ys = [r["count"] for r in rows], [r["ttft_s"] for r in rows]
    expected = [rows[i]["scenario_hash"] for i in front(xs, ys)]
    assert [r["scenario_hash"] for r in rep["front"]] == expected
    assert [r["hardware.count"] for r in rep["front"]] == [8, 16, 32]  # more accelerators, lower TTFT
    assert rep["plots"] == [str(tmp_path / "plots" / f"pareto-count-ttft_s.{f}") for f in ("png", "svg")]
    for path in rep["plots"]:
        assert Path(path).stat().st_size > 1000
    rc, _, err = _cli("sweep", "--report", str(out), "--x", "bytes", "--y", "ttft_s")
    assert rc == 2 and err.startswith("error: --x")


def test_a_catalog_overlay_reaches_the_workers_and_the_point_identity(tmp_path: Path) -> None:
    import copy as copy_

    import yaml

    from aiinfra.catalog import Catalog

    h100 = "nvidia-h100-sxm5-80gb"
    row = copy_.deepcopy(next(r for r in Catalog.default().raw_rows("accelerators") if r["id"] == h100))
    source = {"title": "test fixture: a copy of the shipped H100 SXM5 row", "url": None, "read_on": "2026-11-23"}
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "accelerators.yaml").write_text(yaml.safe_dump([{**row, "id": "acme-h100-clone", "sources": [source]}]))
    args = [
        "sweep",
        str(INFER),
        "--grid",
        f"hardware.accelerator={h100},acme-h100-clone",
        "--backend",
        "process",
        "--workers",
        "2",
        "--no-progress",
        "--catalog-overlay",
        str(overlay),
    ]
    rc, _, err = _cli(*args, "--out", str(tmp_path / "r"))
    assert rc == 0, err
    rows = {r["hardware.accelerator"]: r for r in read_table(tmp_path / "r").to_pylist()}
    assert rows["acme-h100-clone"]["error"] is None  # the workers read the overlay, not only the parent
    # a copy of the H100 row answers as the H100 does
    assert rows["acme-h100-clone"]["ttft_s"] == rows[h100]["ttft_s"]
    assert rows["acme-h100-clone"]["output_tokens_per_s"] == rows[h100]["output_tokens_per_s"]
    # the same grid without the overlay is other points (its clone is unknown: refused before any work)
    plain = sweep(INFER, grid={"hardware.accelerator": [h100]}, out=tmp_path / "r", backend="serial")
    assert plain.skipped == 0 and plain.run == 1
