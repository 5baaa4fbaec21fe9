"""The plain-Python interpolation of the serving path equals numpy.interp to the bit, and the scalar scale-up
collective time it serves equals the array path's (tests/test_startup_path.py: `aiinfra infer` imports no
numpy)."""

from __future__ import annotations

import math
import random
import struct

import numpy as np

from aiinfra.analytic.comms import collective_time, collective_time_array
from aiinfra.analytic.interp import interp
from aiinfra.catalog.resolve import resolve_cluster
from aiinfra.specs.scenario import HardwareInput


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _np(x: float, xp: list[float], fp: list[float]) -> float:
    return float(np.interp(x, np.asarray(xp, dtype=float), np.asarray(fp, dtype=float)))


def test_hand_values() -> None:
    xp, fp = [1.0, 2.0, 4.0], [10.0, 20.0, 0.0]
    assert interp(0.5, xp, fp) == 10.0  # below the first point: its value
    assert interp(5.0, xp, fp) == 0.0  # above the last: its value
    assert interp(2.0, xp, fp) == 20.0  # on a point
    assert interp(1.5, xp, fp) == 15.0  # 10 + (20 − 10)·0.5
    assert interp(3.0, xp, fp) == 10.0  # 20 + (0 − 20)/2·1
    assert interp(3.0, [3.0], [7.0]) == 7.0
    assert math.isnan(interp(float("nan"), xp, fp))


def test_equals_numpy_bit_for_bit_on_random_curves() -> None:
    rng = random.Random(27)
    checked = 0
    for _ in range(400):
        n = rng.randint(1, 40)
        xp = sorted(10 ** rng.uniform(-3, 12) for _ in range(n))
        if rng.random() < 0.2 and n > 2:  # repeated abscissae: numpy takes the last of equal points
            xp[n // 2] = xp[n // 2 - 1]
        fp = [rng.uniform(-1e3, 1e3) * 10 ** rng.randint(-9, 3) for _ in range(n)]
        xs = [10 ** rng.uniform(-4, 13) for _ in range(60)] + xp + [math.nextafter(v, math.inf) for v in xp]
        for x in xs:
            assert _bits(interp(x, xp, fp)) == _bits(_np(x, xp, fp)), (x, xp, fp)
            checked += 1
    assert checked > 30_000


def test_scalar_scale_up_time_equals_the_array_path() -> None:
    # collective_time prices a scale-up collective in plain Python (10^log_x, factor·size / (bw·efficiency),
    # interp); collective_time_array prices the same with numpy: the two must agree exactly at every size
    cluster = resolve_cluster(HardwareInput(accelerator="nvidia-h100-sxm5-80gb", count=8, per_node=8))
    rng = random.Random(8)
    sizes = [10 ** rng.uniform(0, 11) for _ in range(300)]
    for kind in ("allreduce", "allgather", "reducescatter", "p2p"):
        for n in (2, 4, 8):
            arr = collective_time_array(cluster, kind, np.asarray(sizes), np.full(len(sizes), n), np.ones(len(sizes)))
            for size, want in zip(sizes, arr, strict=True):
                got = collective_time(cluster, kind, size, n)
                assert got.tier == "scale-up"
                assert _bits(got.time_s) == _bits(float(want)), (kind, n, size)
