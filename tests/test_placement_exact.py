"""Exact placement (placement-milp, placement-cpsat) against brute force and
each other; the heuristics never beat the optimum; the placement contract suite."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.placement.exact import solve_bruteforce
from tests.conftest import assert_checked
from tests.test_placement import placement_instance, ps_job

PLACEMENT_SOLVERS = [s.name for s in schedopt.solvers("placement")]
EXACT = ["placement-milp", "placement-cpsat"]
HEURISTICS = [s for s in PLACEMENT_SOLVERS if s not in EXACT]
OBJECTIVES = ["sum", "max", "cross_pairs"]


def test_registry_has_the_design_placement_solvers() -> None:
    # DESIGN.md's five, and ours: placement-lagrange (issue 51)
    assert set(PLACEMENT_SOLVERS) == {"optimus-placement", "dltap", "kube-default", "placement-milp", "placement-cpsat",
                                      "placement-lagrange"}
    info = {s.name: s for s in schedopt.solvers("placement")}
    assert info["placement-milp"].exact and info["placement-cpsat"].exact and not info["dltap"].exact


@pytest.mark.parametrize("solver", EXACT)
def test_fig10_exact_finds_2(solver: str) -> None:
    """Optimus Fig. 10: the exact solvers find T = 2 (placement (c))."""
    inst = placement_instance([ps_job("j", 2, 4)], servers=3, slots=3)
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.status == schedopt.Status.OPTIMAL and plan.objective.value == pytest.approx(2.0)
    assert plan.objective.bound == pytest.approx(2.0)


@pytest.mark.parametrize("solver", EXACT)
def test_dltap_fig1_exact_min_cross_pairs_is_4(solver: str) -> None:
    """DLTAP Fig. 1 (3 servers of 2 slots, 2 PS and 3 workers): at best 4 cross-node transfers."""
    inst = placement_instance([ps_job("j", 2, 3)], servers=3, slots=2)
    plan = assert_checked(inst, schedopt.solve(inst, solver, objective="cross_pairs"))
    assert plan.objective.name == "cross_node_pairs" and plan.objective.value == 4


def random_placement_instance(seed: int) -> schedopt.Instance:
    """2-3 jobs of 1-2 PS and 1-3 workers (sizes 1-4 MB, bandwidths 1-2 MB/s) on 2-3 servers of 3-5 slots."""
    rng = np.random.default_rng(seed)
    jobs = [ps_job(f"j{i}", int(rng.integers(1, 3)), int(rng.integers(1, 4)), size=float(rng.integers(1, 5)),
                   bw=float(rng.integers(1, 3))) for i in range(int(rng.integers(2, 4)))]
    return placement_instance(jobs, servers=int(rng.integers(2, 4)), slots=float(rng.integers(3, 6)))


@pytest.mark.parametrize("model", ["classes", "servers"])
@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("seed", range(6))
def test_brute_force_equals_both_exact(seed: int, objective: str, model: str) -> None:
    """Both backends, in the class model and the per-server model, find the brute-force optimum."""
    inst = random_placement_instance(seed)
    placed, best, _ = solve_bruteforce(inst, objective)  # type: ignore[arg-type]
    for solver in EXACT:
        plan = assert_checked(inst, schedopt.solve(inst, solver, objective=objective, model=model))
        assert plan.metrics["model"] == model
        assert plan.status == schedopt.Status.OPTIMAL, (solver, plan.message)
        assert plan.objective.admitted == placed
        assert plan.objective.value == pytest.approx(best, abs=1e-6), solver


@pytest.mark.parametrize("seed", range(6))
def test_heuristics_never_beat_the_optimum(seed: int) -> None:
    inst = random_placement_instance(seed)
    placed, best, _ = solve_bruteforce(inst, "sum")
    _, best_pairs, _ = solve_bruteforce(inst, "cross_pairs")
    for solver in HEURISTICS:
        plan = assert_checked(inst, schedopt.solve(inst, solver, seed=seed))
        assert plan.objective.admitted <= placed
        if plan.objective.admitted == placed:
            assert plan.objective.value >= best - 1e-9, solver
            assert plan.metrics["cross_node_pairs"] >= best_pairs, solver


def test_time_limit_is_a_status() -> None:
    jobs = [ps_job(f"j{i}", 3, 6, size=float(i + 1)) for i in range(6)]
    inst = placement_instance(jobs, servers=8, slots=7)
    plan = assert_checked(inst, schedopt.solve(inst, "placement-milp", time_limit=0.05))
    assert plan.termination in (schedopt.Termination.TIME_LIMIT, schedopt.Termination.OPTIMAL)


# ---- the placement contract suite: every registered placement solver -----------------------------

@pytest.fixture(params=PLACEMENT_SOLVERS)
def solver(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.mark.parametrize("seed", range(3))
def test_contract_feasible_integer_plans(solver: str, seed: int) -> None:
    inst = random_placement_instance(50 + seed)
    plan = assert_checked(inst, schedopt.solve(inst, solver, seed=seed))
    for per_server in (plan.placement or {}).values():
        assert all(isinstance(n, int) and n >= 1 for counts in per_server.values() for n in counts.values())
    assert sorted(plan.paused + list(plan.allocation)) == sorted(j.id for j in inst.jobs)


def test_contract_deterministic(solver: str) -> None:
    inst = random_placement_instance(7)
    a, b = schedopt.solve(inst, solver, seed=3), schedopt.solve(inst, solver, seed=3)
    assert a.placement == b.placement and a.objective.value == b.objective.value
    c, d = schedopt.solve(inst, solver), schedopt.solve(inst, solver)  # no seed: deterministic too
    assert c.placement == d.placement


def test_contract_empty_instance(solver: str) -> None:
    inst = placement_instance([], servers=2, slots=3)
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.placement == {} and plan.paused == [] and plan.objective.value == 0.0 and plan.has_solution


def test_contract_oversubscribed(solver: str) -> None:
    """Four jobs of 4 tasks on 2 servers of 5 slots: two can be placed."""
    inst = placement_instance([ps_job(f"j{i}", 1, 3) for i in range(4)], servers=2, slots=5)
    plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
    assert plan.objective.admitted == 2 and len(plan.paused) == 2


def test_contract_job_too_big_for_the_cluster(solver: str) -> None:
    inst = placement_instance([ps_job("huge", 4, 8)], servers=2, slots=3)
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert plan.paused == ["huge"] and plan.objective.admitted == 0
