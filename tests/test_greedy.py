"""The eq. 9 greedy: its stop rules, priority factor, and a property test against the exact model."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.allocation.greedy import greedy_allocate, greedy_allocate_vector
from schedopt.allocation.problem import compile_allocation
from schedopt.allocation.admission import admit_smallest_first
from tests.conftest import assert_checked, make_instance, random_tiny_instance


def _one_role(job_id: str, parallel: float, gpus_max: int = 4, new: bool = False) -> dict:
    return {"id": job_id, "roles": {"worker": {"demand": {"gpu": 1}, "min": 1, "max": gpus_max}},
            "speed": {"form": "amdahl", "serial": 0.0, "parallel": parallel}, "remaining_steps": 1, "new": new}


def test_marginal_gain_order() -> None:
    # 4 GPUs, t_a = 12/n, t_b = 2/n. Start (1,1): gains a: 6/0.25, b: 1/0.25 -> a gets 2; then a: 2/0.25 vs b -> a gets 3
    inst = make_instance([_one_role("a", 12), _one_role("b", 2)], {"gpu": 4})
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-greedy"))
    assert plan.allocation == {"a": {"worker": 3}, "b": {"worker": 1}}


def test_stop_rules_differ_when_an_increment_does_not_fit() -> None:
    # 5 GPUs; a's workers need 2 each, b's and c's 1. The start (1, 1, 1) uses 4 GPUs. a has the
    # largest gain but its next worker does not fit: 'paper' stops there; 'skip' drops a and
    # goes on, so b grows to 2 (5 GPUs) and is then stopped by capacity too.
    a = {"id": "a", "roles": {"worker": {"demand": {"gpu": 2}, "min": 1, "max": 3}},
         "speed": {"form": "amdahl", "serial": 0, "parallel": 100}, "remaining_steps": 1}
    b = {"id": "b", "roles": {"worker": {"demand": {"gpu": 1}, "min": 1, "max": 3}},
         "speed": {"form": "amdahl", "serial": 0, "parallel": 1}, "remaining_steps": 1}
    c = {"id": "c", "roles": {"worker": {"demand": {"gpu": 1, "cpu": 1}, "min": 1, "max": 1}},
         "speed": {"form": "amdahl", "serial": 0, "parallel": 1}, "remaining_steps": 1}
    inst = make_instance([a, b, c], {"gpu": 5, "cpu": 1})
    data = compile_allocation(inst)
    _, start = admit_smallest_first(data)
    paper, _ = greedy_allocate(data, start, stop_rule="paper")
    skip, counters = greedy_allocate(data, start, stop_rule="skip")
    assert paper == start
    assert skip[0] == (1, 0) and skip[1] == (2, 0) and counters["jobs_stopped_by_capacity"] == 2
    for rule in ("paper", "skip"):
        assert_checked(inst, schedopt.solve(inst, "optimus-greedy", stop_rule=rule))


def test_priority_factor_lowers_new_jobs_gain() -> None:
    # equal jobs; the new one's gains are scaled by 0.5 so the old one grows first
    inst = make_instance([_one_role("old", 10), _one_role("fresh", 10, new=True)], {"gpu": 3})
    plan = schedopt.solve(inst, "optimus-greedy", priority_factor=0.5)
    assert plan.allocation == {"old": {"worker": 2}, "fresh": {"worker": 1}}
    plan = schedopt.solve(inst, "optimus-greedy", priority_factor=1.0)
    assert plan.allocation["old"]["worker"] + plan.allocation["fresh"]["worker"] == 3


def test_greedy_reports_a_certified_gap(testbed: schedopt.Instance) -> None:
    plan = assert_checked(testbed, schedopt.solve(testbed, "optimus-greedy"))
    assert plan.status == schedopt.Status.HEURISTIC
    assert plan.objective.bound is not None and 0 <= plan.objective.gap < 1
    assert schedopt.solve(testbed, "optimus-greedy", bound=False).objective.bound is None


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1000, max_value=10_000))
def test_greedy_never_beats_the_exact_optimum(seed: int) -> None:
    inst = random_tiny_instance(seed)
    exact = assert_checked(inst, schedopt.solve(inst, "optimus-milp"))
    greedy = assert_checked(inst, schedopt.solve(inst, "optimus-greedy"))
    assert greedy.objective.admitted <= exact.objective.admitted
    if greedy.objective.admitted == exact.objective.admitted and exact.has_solution:
        assert greedy.objective.value >= exact.objective.value * (1 - 1e-9) - 1e-9


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["skip", "paper"]), st.sampled_from([1.0, 0.95, 0.5]))
def test_vectorised_greedy_equals_the_heap(seed: int, rule: str, factor: float) -> None:
    """The numpy greedy (sort by running-minimum gain) takes the heap's steps exactly."""
    from schedopt.allocation.greedy import greedy_allocate_heap

    inst = random_tiny_instance(seed)
    data = compile_allocation(inst)
    for job in data.jobs[::2]:
        job.new = True
    _, start = admit_smallest_first(data)
    assert greedy_allocate_vector(data, start, stop_rule=rule, priority_factor=factor) == \
        greedy_allocate_heap(data, start, stop_rule=rule, priority_factor=factor)


@pytest.mark.parametrize("family_seed", range(3))
def test_vectorised_greedy_equals_the_heap_on_generated_instances(family_seed: int) -> None:
    from schedopt.allocation.greedy import greedy_allocate_heap
    from schedopt.generate import generate_instance

    for servers in (40, 110, 400):
        inst = generate_instance("optimus", jobs=60, servers=servers, seed=family_seed)
        data = compile_allocation(inst)
        _, start = admit_smallest_first(data)
        for rule in ("skip", "paper"):
            assert greedy_allocate_vector(data, start, stop_rule=rule) == greedy_allocate_heap(data, start, stop_rule=rule)


def test_the_greedy_runs_the_heap_on_small_or_full_clusters_and_the_sequences_on_roomy_large_ones(monkeypatch) -> None:
    """greedy_allocate picks the cheaper of two implementations of the same plan (issue 36 §6):
    the heap, which stops where the capacity does, on up to HEAP_UP_TO_JOBS jobs or when
    little room is left; the numpy move sequences otherwise."""
    from schedopt.allocation import greedy as g
    from schedopt.generate import generate_instance

    called: list[str] = []
    heap, vector = g.greedy_allocate_heap, g.greedy_allocate_vector
    monkeypatch.setattr(g, "greedy_allocate_heap", lambda *a, **k: called.append("heap") or heap(*a, **k))
    monkeypatch.setattr(g, "greedy_allocate_vector", lambda *a, **k: called.append("vector") or vector(*a, **k))
    for jobs, servers, expected in ((40, 160, "heap"), (600, 2400, "vector"), (600, 60, "heap")):
        data = compile_allocation(generate_instance("optimus", jobs=jobs, servers=servers, seed=1))
        _, start = admit_smallest_first(data)
        called.clear()
        plan = g.greedy_allocate(data, start)
        assert called[0] == expected, (jobs, servers, called)
        assert plan == (heap if expected == "vector" else vector)(data, start)  # the other one agrees


@pytest.mark.parametrize("steps,share,block", [(1, 0.25, 7), (4, 1.0, 1 << 15), (2, 0.05, 64)])
def test_vectorised_greedy_equals_the_heap_however_the_sequences_are_grown(monkeypatch, steps: int, share: float,
                                                                           block: int) -> None:
    """The sequences grown a few steps at a time for the jobs of largest running minimum, the
    moves released in sorted chunks and summed in blocks (issue 36 §1): the heap's plan whatever
    those sizes, with tables and restart costs (the Python-path jobs) among the formula jobs."""
    from schedopt.allocation import greedy as g
    from schedopt.generate import generate_instance

    monkeypatch.setattr(g, "SEQUENCE_STEPS", steps)
    monkeypatch.setattr(g, "GROW_SHARE", share)
    monkeypatch.setattr(g, "APPLY_BLOCK", block)
    for family, jobs, servers in (("optimus", 300, 120), ("optimus", 300, 1200), ("optimus", 120, 40)):
        inst = generate_instance(family, jobs=jobs, servers=servers, seed=3)
        # a third of the jobs run now and would lose 30 s to a restart: Python-path jobs among the rest
        updated = [job.model_copy(update={"running": {r: job.roles[r].min for r in job.roles}, "restart_s": 30.0})
                   if k % 3 == 0 else job for k, job in enumerate(inst.jobs)]
        for variant in (inst, inst.model_copy(update={"jobs": updated})):
            data = compile_allocation(variant)
            _, start = admit_smallest_first(data)
            for rule in ("skip", "paper"):
                assert g.greedy_allocate_vector(data, start, stop_rule=rule) == \
                    g.greedy_allocate_heap(data, start, stop_rule=rule), (family, servers, rule)


def test_the_per_job_numbers_are_read_once_per_greedy_run(monkeypatch) -> None:
    """The greedy reads Q, shares and bounds into lists once per run, not once per job (which made
    the vectorised path quadratic on measured-table jobs: 7.7 s for 4,000 `dl2` jobs, then 0.47 s)."""
    from schedopt.allocation import greedy as g
    from schedopt.generate import generate_instance

    made: list[int] = []
    original = g._Rows.__init__

    def counted(self, data):  # type: ignore[no-untyped-def]
        made.append(1)
        original(self, data)

    monkeypatch.setattr(g._Rows, "__init__", counted)
    inst = generate_instance("optimus", jobs=60, servers=600, seed=2)
    updated = [job.model_copy(update={"running": {r: job.roles[r].min for r in job.roles}, "restart_s": 30.0})
               for job in inst.jobs]  # every job on the Python path
    data = compile_allocation(inst.model_copy(update={"jobs": updated}))
    _, start = admit_smallest_first(data)
    for run in (g.greedy_allocate_vector, g.greedy_allocate_heap):
        made.clear()
        run(data, start, keep_running=False)
        assert len(made) == 1, run.__name__
