"""Hypothesis strategies for instances of each problem, sized for exact solving
in milliseconds; failures shrink towards fewer jobs, smaller counts and
simpler speed models::

    from hypothesis import given
    from schedopt.testing import assert_gap, strategies

    @given(strategies.allocation_instances(max_jobs=6))
    def test_my_heuristic_within_5_percent(instance):
        assert_gap(instance, MyHeuristic(), max_gap=0.05)
"""

from __future__ import annotations

from typing import Any, Sequence

from hypothesis import strategies as st

from schedopt.instance import Instance
from schedopt.testing.instances import make_instance

FORMS = ("optimus-sync", "optimus-async", "amdahl", "table")


@st.composite
def _speed(draw: Any, form: str, max_tasks: int) -> dict[str, Any]:
    num = st.floats(0.0, 3.0, allow_nan=False).map(lambda v: round(v, 2))
    if form == "optimus-sync":
        theta = draw(st.lists(num, min_size=5, max_size=5).filter(lambda t: sum(t) > 0))
        return {"form": form, "theta": theta, "batch": draw(st.sampled_from([16, 32, 64]))}
    if form == "optimus-async":
        theta = draw(st.lists(num, min_size=4, max_size=4).filter(lambda t: sum(t) > 0))
        return {"form": form, "theta": theta}
    if form == "amdahl":
        return {"form": form, "serial": draw(num), "parallel": draw(st.floats(0.1, 5.0).map(lambda v: round(v, 2)))}
    pts = draw(st.lists(st.tuples(st.integers(1, max_tasks), st.integers(1, max_tasks)), min_size=1, max_size=5, unique=True))
    return {"form": "table", "points": [[p, w, draw(st.floats(0.1, 5.0).map(lambda v: round(v, 3)))] for p, w in sorted(pts)]}


@st.composite
def _demand(draw: Any, gpu: bool) -> dict[str, float]:
    return {"cpu": float(draw(st.integers(1, 4))), "gpu": float(draw(st.integers(0, 1))) if gpu else 0.0}


@st.composite
def allocation_instances(draw: Any, *, max_jobs: int = 6, max_tasks: int = 3, forms: Sequence[str] = FORMS,
                         min_jobs: int = 0) -> Instance:
    """Allocation instances (Optimus eq. 5-8): up to ``max_jobs`` jobs, each
    role 1..``max_tasks`` tasks, speed forms drawn from ``forms``, capacity from
    ample to scarce. PS/worker jobs for eq. 3/4 and table forms, one role for amdahl."""
    n = draw(st.integers(min_jobs, max_jobs))
    jobs = []
    for i in range(n):
        form = draw(st.sampled_from(list(forms)))
        speed = draw(_speed(form, max_tasks))
        steps = float(draw(st.integers(1, 1000)))
        if form == "amdahl":
            roles = {"worker": {"demand": draw(_demand(True)), "min": 1, "max": draw(st.integers(1, max_tasks))}}
        else:
            roles = {"worker": {"demand": draw(_demand(True)), "min": 1, "max": draw(st.integers(1, max_tasks))},
                     "ps": {"demand": draw(_demand(False)), "min": 1, "max": draw(st.integers(1, max_tasks))}}
        jobs.append({"id": f"j{i}", "roles": roles, "speed": speed, "remaining_steps": steps})
    capacity = {"cpu": float(draw(st.integers(1, 6 * max(n, 1)))), "gpu": float(draw(st.integers(0, 2 * max(n, 1))))}
    return make_instance(jobs, capacity, name="hypothesis-allocation")


def _family_instances(family: str, *, max_jobs: int, max_servers: int, max_tasks: int, min_jobs: int = 1) -> Any:
    from schedopt.generate import generate_instance

    return st.builds(lambda jobs, servers, seed: generate_instance(family, jobs=jobs, servers=servers, seed=seed,
                                                                   max_tasks=max_tasks, name=f"hypothesis-{family}"),
                     st.integers(min_jobs, max_jobs), st.integers(1, max_servers), st.integers(0, 2**31 - 1))


def placement_instances(*, max_jobs: int = 3, max_servers: int = 3, max_tasks: int = 2) -> Any:
    """Placement instances (Optimus §4.2, DLTAP): Table 1 jobs with given counts on identical servers."""
    return _family_instances("placement", max_jobs=max_jobs, max_servers=max_servers, max_tasks=max_tasks)


def quality_instances(*, max_jobs: int = 5, max_servers: int = 2, max_tasks: int = 4) -> Any:
    """Quality instances (SLAQ §3): one-core executors, Amdahl speeds, loss curves."""
    return _family_instances("slaq", max_jobs=max_jobs, max_servers=max_servers, max_tasks=max_tasks)


def partition_instances(*, max_jobs: int = 5, max_servers: int = 3, max_tasks: int = 4) -> Any:
    """Partition instances (Dorm §V): Table II's application types on a small testbed."""
    return _family_instances("dorm-table2", max_jobs=max_jobs, max_servers=max_servers, max_tasks=max_tasks)


__all__ = ["FORMS", "allocation_instances", "placement_instances", "quality_instances", "partition_instances"]
