"""A job's time in one place (schedopt/allocation/jobtime.py, issue 49 §1): the solvers' arrays,
the checker's objective, the certificates' replays and DL2's grids agree, restart cost included."""

from __future__ import annotations

import math

import numpy as np
import pytest

from schedopt.allocation.certificates import remaining_time_grid
from schedopt.allocation.jobtime import job_time_s, training_s
from schedopt.allocation.metrics import remaining_time_s
from schedopt.allocation.problem import compile_allocation
from schedopt.learn.dl2 import remaining_time_grid as dl2_grid
from schedopt.testing.instances import random_restart_instance


def test_the_formula() -> None:
    assert training_s(10.0, 2.0) == 20.0 and training_s(10.0, math.inf) == math.inf
    assert job_time_s(10.0, 2.0, 5.0, True) == 25.0 and job_time_s(10.0, 2.0, 5.0, False) == 20.0
    got = job_time_s(10.0, np.array([1.0, np.inf, 3.0]), 5.0, np.array([True, True, False]))
    assert got.tolist() == [15.0, math.inf, 30.0]


@pytest.mark.parametrize("seed", range(8))
def test_every_site_computes_the_same_time(seed: int) -> None:
    inst = random_restart_instance(seed)
    data = compile_allocation(inst)
    for j, job in enumerate(inst.jobs):
        grid = dl2_grid(data, j)
        for c0 in range(int(data.lo[j, 0]), int(data.hi[j, 0]) + 1):
            for c1 in range(int(data.lo[j, 1]), int(data.hi[j, 1]) + 1):
                solver = float(data.time_s(j, c0, c1))
                counts = data.counts_dict(j, c0, c1)
                checker = remaining_time_s(inst, job.id, counts)
                replay = float(remaining_time_grid(inst, job, np.array([c0]), np.array([c1]))[0])
                assert solver == checker == replay == float(grid[c0, c1]), (job.id, c0, c1)
