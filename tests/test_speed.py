"""Speed forms evaluate Optimus eq. 3 and 4 (and Amdahl, tables) as printed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from schedopt.speed import Amdahl, OptimusAsync, OptimusSync, TableSpeed, steps_per_s


def test_optimus_sync_eq4_table2() -> None:
    s = OptimusSync(theta=[1.02, 2.78, 4.92, 0.0, 0.02], batch=256)
    p, w = 2, 4
    expected = 1 / (1.02 * 256 / w + 2.78 + 4.92 * w / p + 0.0 * w + 0.02 * p)
    assert steps_per_s(s, p, w) == pytest.approx(expected)
    grid = steps_per_s(s, np.array([1, 2]), np.array([4, 4]))
    assert grid[1] == pytest.approx(expected)


def test_optimus_async_eq3_table2() -> None:
    s = OptimusAsync(theta=[2.83, 3.92, 0.0, 0.11])
    p, w = 3, 6
    assert steps_per_s(s, p, w) == pytest.approx(w / (2.83 + 3.92 * w / p + 0.0 * w + 0.11 * p))


def test_amdahl_and_table() -> None:
    assert steps_per_s(Amdahl(serial=1, parallel=3), 3) == pytest.approx(0.5)
    t = TableSpeed(points=[[1, 1, 2.0], [2, 4, 5.0]])
    assert t.step_time_s(2, 4) == pytest.approx(0.2)
    assert math.isinf(t.step_time_s(1, 2))
    arr = t.step_time_s(np.array([1, 2, 3]), np.array([1, 4, 4]))
    assert arr[0] == pytest.approx(0.5) and arr[1] == pytest.approx(0.2) and math.isinf(arr[2])


def test_degenerate_forms_rejected() -> None:
    with pytest.raises(ValueError):
        OptimusSync(theta=[0, 0, 0, 0, 0], batch=32)
    with pytest.raises(ValueError):
        TableSpeed(points=[[1, 1, 1.0], [1, 1, 2.0]])
    with pytest.raises(ValueError):
        Amdahl(serial=0, parallel=0)
