"""``schedopt generate``: instances of any registered family, deterministic in the seed.

Each problem package declares its families (``<package>/families.py``): the
allocation families ``optimus`` and ``optimus-testbed`` and the simulation
workloads ``optimus-workload``, ``poisson``, ``philly``, ``dl2``, ``dl2-fitted``
(:mod:`schedopt.sim.workloads`); quality's ``slaq``; partition's ``dorm-table2``
and ``alibaba-dorm``; placement's ``placement`` and ``optimus-paa``. This module
finds a family by name through the problem registry and validates the result.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.errors import InputError
from schedopt.instance import INSTANCE_SCHEMA, MAX_JOBS, MAX_SERVERS, MAX_TASKS, Instance
from schedopt.problems import families


def family_names() -> list[str]:
    """Every registered instance family, sorted."""
    return sorted(families())


def generate_instance(family: str, *, jobs: int, servers: int, seed: int = 0, max_tasks: int = 32,
                      name: str | None = None, data_dir: Any = None) -> Instance:
    """A validated instance of ``family`` with ``jobs`` jobs on ``servers`` servers."""
    known = families()
    if family not in known:
        raise InputError("FAMILY", f'unknown family "{family}"; known: {", ".join(sorted(known))}')
    if not (0 <= jobs <= MAX_JOBS and 1 <= servers <= MAX_SERVERS and 1 <= max_tasks <= MAX_TASKS):
        raise InputError(family, f"expected 0 <= --jobs <= {MAX_JOBS:,}, 1 <= --servers <= {MAX_SERVERS:,}, "
                                 f"1 <= --max-tasks <= {MAX_TASKS:,} (the instance limits), got {jobs}, {servers}, {max_tasks}")
    rng = np.random.default_rng(seed)
    data = {
        "schema": INSTANCE_SCHEMA,
        "name": name or f"{family}-{jobs}j-{servers}s-seed{seed}",
        **known[family][1].build(jobs, servers, rng, max_tasks, data_dir),
    }
    return Instance.from_dict(data, source=f"generate {family}")
