"""Speed forms evaluate Optimus eq. 3 and 4 (and Amdahl, tables) as printed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import schedopt
from schedopt.speed import Amdahl, OptimusAsync, OptimusSync, StepTable, TableSpeed, steps_per_s
from tests.conftest import make_instance


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


# ---- tables: interpolation and dense lookup (issue 15 §4) -------------------------------------

def test_table_interpolates_between_measured_counts_only_when_asked() -> None:
    from schedopt.speed import TableSpeed

    strict = TableSpeed(points=[[1, 1.0], [4, 3.0]])
    assert strict.configurations() == [(1,), (4,)] and strict.step_time_s(3, 0) == float("inf")
    loose = TableSpeed(points=[[1, 1.0], [4, 3.0]], interpolate=True)
    assert loose.configurations() == [(1,), (2,), (3,), (4,)]
    assert abs(1 / loose.step_time_s(3, 0) - 7 / 3) < 1e-12  # 1 + (3 - 1)·(3 - 1)/(4 - 1)
    assert loose.step_time_s(5, 0) == float("inf")  # nothing beyond the largest measured count
    grid = TableSpeed(points=[[1, 1, 1.0], [1, 3, 2.0], [2, 1, 1.5], [2, 3, 3.0]], interpolate=True)
    assert abs(1 / grid.step_time_s(2, 2) - 2.25) < 1e-12 and abs(1 / grid.step_time_s(1, 2) - 1.5) < 1e-12


def test_table_interpolation_needs_a_full_grid_and_tables_have_a_size_limit() -> None:
    from schedopt.speed import TableSpeed

    with pytest.raises(ValueError, match="full p × w grid"):
        TableSpeed(points=[[1, 1, 1.0], [2, 3, 3.0]], interpolate=True)
    with pytest.raises(ValueError, match="MAX_TABLE_CELLS"):
        TableSpeed(points=[[5000, 5000, 1.0]])


def test_interpolated_table_in_an_instance_allows_the_counts_between() -> None:
    inst = make_instance([{"id": "a", "roles": {"worker": {"demand": {"gpu": 1}, "max": 3}}, "remaining_steps": 100,
                           "speed": {"form": "table", "points": [[1, 1.0], [4, 3.0]], "interpolate": True}}],
                         {"gpu": 3})
    plan = schedopt.solve(inst, "optimus-milp")
    assert plan.allocation == {"a": {"worker": 3}} and schedopt.check(inst, plan) == []
    assert schedopt.solve(inst, "optimus-greedy").allocation == {"a": {"worker": 3}}


def test_table_vector_lookup_matches_scalar_lookup() -> None:
    from schedopt.speed import TableSpeed

    pts = [[p, w, 1.0 + p + 0.5 * w] for p in range(1, 5) for w in range(1, 7) if (p + w) % 3]
    t = TableSpeed(points=pts)
    c0, c1 = np.meshgrid(np.arange(0, 7), np.arange(0, 9), indexing="ij")
    vec = t.step_time_s(c0, c1)
    assert all(vec[i, k] == t.step_time_s(int(c0[i, k]), int(c1[i, k])) for i in range(7) for k in range(9))


def test_every_form_answers_the_interface() -> None:
    """Issue 49 §4: what the solvers and the simulator ask a form, each form answers itself."""
    from schedopt.speed import Amdahl, OptimusAsync, OptimusSync, TableSpeed

    sync = OptimusSync(theta=[1.0, 0.5, 2.0, 0.1, 0.1], batch=32)
    asyn = OptimusAsync(theta=[1.0, 2.0, 0.1, 0.1])
    amdahl = Amdahl(serial=0.5, parallel=2.0)
    table = TableSpeed(points=[[1, 1, 2.0], [1, 2, 3.0]])
    for form, measured, kind, fit in ((sync, False, 0, "optimus-sync"), (asyn, False, 1, "optimus-async"),
                                      (amdahl, False, 2, "optimus-sync"), (table, True, -1, "optimus-sync")):
        assert (form.measured, form.price_kind, form.fit_form, form.closed_form) == (measured, kind, fit, not measured)
        faster = form.scaled(2.0)
        assert type(faster) is type(form)
        c = (1, 2) if form.n_roles == 2 else (2, 0)
        assert float(faster.step_time_s(*c)) == pytest.approx(float(form.step_time_s(*c)) / 2)
    assert sync.transfer_term_s(2, 4) == 2.0 * 4 / 2 and asyn.transfer_term_s(2, 4) == 2.0 / 2
    assert amdahl.transfer_term_s(1, 1) is None and table.transfer_term_s(1, 1) is None


def test_step_table_reads_many_speeds_as_each_reads_itself() -> None:
    """StepTable.at gives each entry's own step time: a table's scalar lookup (inside and
    outside its grid, one role reading c1 as 0, grids shared between equal tables), a
    formula's step_time_s, inf for no speed."""
    two = TableSpeed(points=[[1, 1, 2.0], [1, 2, 3.5], [2, 2, 5.0]])
    one = TableSpeed(points=[[1, 1.0], [4, 3.0]], interpolate=True)
    same = TableSpeed(points=[[1, 1, 2.0], [1, 2, 3.5], [2, 2, 5.0]])
    sync = OptimusSync(theta=[0.1, 0.2, 0.3, 0.01, 0.02], batch=64)
    amdahl = Amdahl(serial=0.5, parallel=2.0)
    speeds = [two, one, same, sync, amdahl, None]
    table = StepTable(speeds)
    rng = np.random.default_rng(0)
    k = np.repeat(np.arange(len(speeds)), 40)
    c0 = rng.integers(-1, 7, len(k))
    c1 = rng.integers(-1, 5, len(k))
    c0 = np.where(k >= 3, np.maximum(c0, 1), c0)  # formulas: counts they are defined at
    c1 = np.where(k == 3, np.maximum(c1, 1), c1)
    got = table.at(k, c0, c1)
    for kk, a, b, t in zip(k.tolist(), c0.tolist(), c1.tolist(), got.tolist()):
        speed = speeds[kk]
        if speed is None:
            want = math.inf
        elif speed.measured:
            want = speed.scalar_step_time()(a, b)
        else:
            want = float(speed.step_time_s(a, b))
        assert t == want, (kk, a, b)
    assert table.flat.size == two._grid().size + one._grid().size  # the equal tables share one grid
    assert np.isinf(got).any() and np.isfinite(got).any()


def test_small_tables_build_the_grid_the_general_path_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """One-role tables of a few listed counts build their grid point by point: the same step times
    (inf where a count is not listed or its speed is 0) as the array path."""
    import numpy as np

    from schedopt import speed as speed_module
    from schedopt.speed import TableSpeed

    tables = [[[1, 8.6]], [[4, 2.0]], [[1, 3.0], [2, 5.5], [8, 0.0]], [[3, 0.0]], [[2, 1.5], [1, 1.0]]]
    for points in tables:
        fast = TableSpeed(points=points)._build_grid()
        monkeypatch.setattr(speed_module, "SMALL_TABLE_POINTS", 0)
        general = TableSpeed(points=points)._build_grid()
        monkeypatch.undo()
        assert fast.shape == general.shape
        assert np.array_equal(fast, general)
