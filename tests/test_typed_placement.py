"""Typed placement (issue 51 §3): servers name accelerator types, each job's counts come with the
type they run on (``allocation_accelerators``, an allocation plan's ``accelerators``), and every
task runs on a server of that type. A reduction: one capacity column per type."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.errors import InputError
from schedopt.generate import generate_instance
from schedopt.instance import Instance
from schedopt.placement.exact import solve_bruteforce
from schedopt.placement.problem import compile_placement
from tests.conftest import assert_checked

PLACEMENT = [s.name for s in schedopt.solvers("placement")]


def typed(seed: int, given: dict[str, str | None] | None = None) -> Instance:
    """2-3 PS/worker jobs on one v100 and one or two k80 servers of 3-4 slots."""
    rng = np.random.default_rng(seed)
    jobs, alloc, kinds = [], {}, {}
    for i in range(int(rng.integers(2, 4))):
        p, w = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        jobs.append({"id": f"j{i}", "model_size": float(rng.integers(1, 5)), "bandwidth": {"ps": 1.0, "worker": 1.0},
                     "roles": {"ps": {"demand": {"slot": 1}, "max": p}, "worker": {"demand": {"slot": 1}, "max": w}}})
        alloc[f"j{i}"] = {"ps": p, "worker": w}
        kinds[f"j{i}"] = "v100" if rng.random() < 0.5 else "k80"
    return Instance.from_dict({"schema": "schedopt/instance@1", "name": f"typed-{seed}", "resources": ["slot"],
                               "servers": [{"name": "v", "count": 1, "capacity": {"slot": float(rng.integers(3, 5))},
                                            "accelerator": "v100"},
                                           {"name": "k", "count": int(rng.integers(1, 3)),
                                            "capacity": {"slot": float(rng.integers(3, 5))}, "accelerator": "k80"}],
                               "jobs": jobs, "allocation": alloc,
                               "allocation_accelerators": kinds if given is None else given})


def test_the_type_is_a_capacity_column() -> None:
    inst = typed(0)
    data = compile_placement(inst)
    assert data.resources == ["slot", "type:v100", "type:k80"]
    assert data.cap[0, 1] > 0 and data.cap[0, 2] == 0 and data.cap[1, 1] == 0
    j = data.jobs.index("j0")
    col = 1 if inst.allocation_accelerators["j0"] == "v100" else 2
    assert data.demand[j, 0, col] == data.demand[j, 1, col] == 1


@pytest.mark.parametrize("seed", range(8))
def test_every_solver_keeps_tasks_on_their_type(seed: int) -> None:
    """Every placement solver's plan checks (types included); exact ones equal brute force, and
    placement-lagrange is never better than it."""
    inst = typed(seed)
    most, best, _ = solve_bruteforce(inst, "sum")
    kind = [srv.accelerator for srv in inst.servers for _ in range(srv.count)]
    of = dict(zip(inst.server_names, kind))
    for solver in PLACEMENT:
        plan = assert_checked(inst, schedopt.solve(inst, solver))
        for job, per_server in (plan.placement or {}).items():
            assert {of[s] for s in per_server} == {inst.allocation_accelerators[job]}, (solver, job)
        if schedopt.solver_info(solver).exact:
            assert plan.objective.admitted == most and plan.objective.value == pytest.approx(best, abs=1e-9)
        elif plan.objective.admitted == most:
            assert plan.objective.value >= best - 1e-9


def test_a_task_on_another_type_is_a_violation() -> None:
    inst, plan = next((i, p) for i in map(typed, range(20)) if (p := schedopt.solve(i, "placement-lagrange")).placement)
    assert_checked(inst, plan)
    job = next(iter(plan.placement))
    wrong = next(n for n, k in zip(inst.server_names, [s.accelerator for s in inst.servers for _ in range(s.count)])
                 if k != inst.allocation_accelerators[job])
    moved = {**plan.placement, job: {wrong: {r: sum(c.get(r, 0) for c in plan.placement[job].values())
                                             for r in ("ps", "worker")}}}
    text = "\n".join(map(str, schedopt.check(inst, plan.model_copy(update={"placement": moved}))))
    assert f"placement.{job}.{wrong}" in text and "type" in text


def test_types_are_required_on_a_typed_cluster() -> None:
    with pytest.raises(InputError, match="allocation_accelerators.j0"):
        typed(0, given={})
    with pytest.raises(InputError, match="no server has type 'a100'"):
        typed(0, given={"j0": "a100", "j1": "v100", "j2": "v100"})


def test_the_family_solved_and_certified() -> None:
    """``placement-typed``: placement-lagrange reaches the exact optimum, its count and Σ T_j proven
    by bounds floored per type (pattern certificates with part_admit), --strict passes."""
    inst = generate_instance("placement-typed", jobs=400, servers=200, seed=5, max_tasks=4)
    exact = assert_checked(inst, schedopt.solve(inst, "placement-milp"))
    plan = assert_checked(inst, schedopt.solve(inst, "placement-lagrange"))
    assert not schedopt.check(inst, plan, strict=True)
    assert plan.objective.admitted == exact.objective.admitted == plan.objective.admitted_bound
    assert plan.objective.bound <= exact.objective.value + 1e-6
    assert plan.objective.value <= exact.objective.value * 1.02 + 1e-9
    proof = plan.certificate.bound
    assert proof.part_admit is not None and len(proof.part_admit) == 3


@pytest.mark.parametrize("change,match", [
    (lambda p: {"part_admit": [k + 1 for k in p.part_admit]}, "exceeds the plan's jobs placed per part"),
    (lambda p: {"part_admit": p.part_admit[:-1]}, "parts; the instance has"),
    (lambda p: {"part_admit_price": [-1.0] * len(p.part_admit)}, "finite and >= 0"),
    (lambda p: {"admit": 3}, "part_admit replaces admit"),
])
def test_part_admits_forged(change, match) -> None:  # type: ignore[no-untyped-def]
    inst = generate_instance("placement-typed", jobs=60, servers=30, seed=2, max_tasks=4)
    plan = schedopt.solve(inst, "placement-lagrange")
    proof = plan.certificate.bound
    bad = plan.model_copy(update={"certificate": plan.certificate.model_copy(
        update={"bound": proof.model_copy(update=change(proof))})})
    text = "\n".join(map(str, schedopt.check(inst, bad, strict=True)))
    assert match in text, text


def typed_workload(jobs: int, servers: int, seed: int) -> Instance:
    """A typed allocation instance of PS/worker jobs (Table 1 profiles, no data folder needed): the
    ``placement-typed`` family without its given counts and types."""
    doc = generate_instance("placement-typed", jobs=jobs, servers=servers, seed=seed, max_tasks=4).to_dict()
    doc.pop("allocation", None)
    doc.pop("allocation_accelerators", None)
    return Instance.from_dict(doc)


def test_joint_typed_allocation_then_placement() -> None:
    """An allocation plan's types carry into placement: optimus-greedy then placement-lagrange on
    a typed PS/worker instance."""
    inst = typed_workload(30, 10, 4)
    for name in ("optimus-greedy+placement-lagrange", "optimus-greedy+optimus-placement"):
        plan = assert_checked(inst, schedopt.solve(inst, name))
        assert plan.accelerators is not None and set(plan.accelerators) == set(plan.allocation)
