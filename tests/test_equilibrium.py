"""Open-loop steady state of bench/loaded_step.py's diagnostic: hand-solved linear steps."""

from __future__ import annotations

import pytest

from tests.conftest import bench_script

_LOADED_STEP = bench_script("loaded_step")
open_loop_equilibrium = _LOADED_STEP.open_loop_equilibrium
self_consistent_step_s = _LOADED_STEP.self_consistent_step_s


def test_linear_step_fixed_point_and_amplification() -> None:
    # f(n) = a + b·n with a = 10 ms, b = 0.15 ms; λ·L = 16.5 req/s × 294 tokens = 4,851 tokens/s.
    # n* = λL·a / (1 − λL·b) = 48.51 / (1 − 0.72765) = 178.12; f(n*) = 0.01 + 0.15e-3 · 178.12 = 36.72 ms;
    # ε = b·n*/f(n*) = 0.72765 (= λL·b for a linear step), so TPOT moves 1 / (1 − 0.72765) = 3.672 % per % of step.
    eq = open_loop_equilibrium(16.5, 294.0, lambda n: 0.010 + 0.15e-3 * n, 1024)
    assert eq is not None
    assert eq.in_flight_seqs == pytest.approx(178.12, rel=1e-4)
    assert eq.step_s == pytest.approx(0.036718, rel=1e-4)
    assert eq.elasticity_ratio == pytest.approx(0.72765, rel=1e-4)
    assert eq.tpot_amplification == pytest.approx(3.6717, rel=1e-4)


def test_amplification_predicts_a_scaled_step() -> None:
    # the same step 2 % longer: n* = 4,851 · 0.0102 / (1 − 4,851 · 0.153e-3) = 49.48 / 0.25780 = 191.93,
    # TPOT 0.0102 + 0.153e-3 · 191.93 = 39.57 ms: +7.8 %, the linearised 3.67 × 2 % = +7.3 % to first order
    base = open_loop_equilibrium(16.5, 294.0, lambda n: 0.010 + 0.15e-3 * n, 1024)
    longer = open_loop_equilibrium(16.5, 294.0, lambda n: 1.02 * (0.010 + 0.15e-3 * n), 1024)
    assert base is not None and longer is not None
    assert longer.step_s == pytest.approx(0.039566, rel=1e-3)
    assert longer.step_s / base.step_s - 1 == pytest.approx(0.02 * base.tpot_amplification, rel=0.1)


def test_overload_has_no_steady_state() -> None:
    # λL·b = 4,851 · 0.25e-3 = 1.21 > 1: every step adds more sequences than it retires
    assert open_loop_equilibrium(16.5, 294.0, lambda n: 0.010 + 0.25e-3 * n, 1024) is None
    with pytest.raises(ValueError):
        open_loop_equilibrium(0.0, 294.0, lambda n: 0.01, 1024)


def test_step_carrying_its_arriving_prompts() -> None:
    # s = 40 ms + 20 µs per prompt token, 3,663 prompt tokens/s (16.5 req/s × 222): s = 0.04 / (1 − 0.07326) = 43.16 ms
    s = self_consistent_step_s(lambda p: 0.040 + 20e-6 * p, 16.5 * 222)
    assert s == pytest.approx(0.04 / (1 - 20e-6 * 16.5 * 222), rel=1e-9)
