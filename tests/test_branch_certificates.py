"""Branch certificates (issue 48 §5; docs/certificates.md, kind ``branch-lagrangian``): an
exact plan whose optimum the LP's prices do not prove carries a tree whose leaves' prices
prove it, and ``check --strict`` replays it from the instance alone."""

from __future__ import annotations

import copy

import pytest

from schedopt.allocation.branching import branch_proof
from schedopt.allocation.bruteforce import solve_bruteforce
from schedopt.allocation.certificates import branch_leaves
from schedopt.checking import check, check_report
from schedopt.plan import Plan, relative_gap
from schedopt.registry import get_solver
from schedopt.testing.instances import random_tiny_instance, random_typed_instance

#: tiny instances with an LP gap (found by the sweep in the last test)
GAPPED = (0, 3, 7, 10, 12, 13, 15, 21, 22, 34)


def _instances():
    for seed in range(40):
        yield random_tiny_instance(seed)
        yield random_typed_instance(seed)


@pytest.mark.parametrize("solver", ["optimus-milp", "optimus-cpsat"])
def test_every_tiny_optimum_carries_a_replayable_proof(solver: str) -> None:
    """80 tiny instances, untyped and typed: every optimal plan passes --strict, and every bound
    proven beyond the LP's prices (a branch tree, or the knapsack bound, which the exact drivers try
    first) is on the right side of the brute-force optimum."""
    trees = 0
    for inst in _instances():
        plan = get_solver(solver).solve(inst, seed=0)
        assert not check(inst, plan, strict=True), (inst.name, [str(v) for v in check(inst, plan, strict=True)])
        proof = plan.certificate.bound if plan.certificate else None
        if proof is not None and proof.kind in ("branch-lagrangian", "knapsack-lagrangian"):
            trees += 1
            admitted, optimum, _ = solve_bruteforce(inst)
            assert len(plan.allocation) == admitted
            assert plan.objective.bound <= optimum + 1e-6 * max(1.0, abs(optimum))
            assert plan.objective.gap <= 1e-6
    assert trees >= 10


def _branch_plan(seed: int = 7) -> tuple:
    """An exact plan whose bound is a branch tree found for it (the exact drivers now try the
    knapsack bound first, which proves this seed's optimum without a tree)."""
    inst = random_tiny_instance(seed)
    plan = get_solver("optimus-milp").solve(inst, seed=0)
    admitted = plan.objective.admitted
    got = branch_proof(inst, plan.objective.value, admit=admitted if admitted < len(inst.jobs) else None)
    assert got is not None
    bound, proof, _ = got
    plan = plan.model_copy(deep=True)
    plan.certificate.bound = proof
    plan.objective.bound = bound
    plan.objective.gap = relative_gap(plan.objective.value, bound)
    assert not check(inst, plan, strict=True)
    return inst, plan


def test_branch_proof_is_what_check_recomputes() -> None:
    inst, plan = _branch_plan()
    report = check_report(inst, plan, strict=True)
    assert report.ok and not report.unverified
    assert any(line.startswith("objective.bound") and "branch-lagrangian" in line for line in report.verified)
    leaves = branch_leaves(inst, plan.certificate.bound.tree)
    assert len(leaves) >= 2


def test_a_tree_cut_to_its_root_proves_too_little() -> None:
    inst, plan = _branch_plan()
    cut = plan.model_copy(deep=True)
    root = cut.certificate.bound.tree
    leaf = root
    while "prices" not in leaf:  # any one leaf's prices, over the whole domain
        leaf = next(v for k, v in leaf.items() if isinstance(v, dict))
    cut.certificate.bound.tree = {"prices": leaf["prices"], **({"admit_price": leaf["admit_price"]} if "admit_price" in leaf else {})}
    assert "objective.bound" in [v.path for v in check(inst, cut)]


@pytest.mark.parametrize("bad, says", [
    ({"job": "nobody", "role": "worker", "at": 1, "low": {"prices": {}}, "high": {"prices": {}}}, "unknown job"),
    ({"job": "j0", "role": "nothing", "at": 1, "low": {"prices": {}}, "high": {"prices": {}}}, "no role"),
    ({"job": "j0", "role": "worker", "at": 1.5, "low": {"prices": {}}, "high": {"prices": {}}}, "integer"),
    ({"job": "j0", "role": "worker", "at": 1, "low": {"prices": {}}}, "a node is a leaf"),
    ({"prices": {"cpu": -1.0}}, ">= 0"),
    ([1, 2], "expected a mapping"),
])
def test_malformed_trees_are_refused_naming_the_fault(bad, says: str) -> None:
    inst, plan = _branch_plan()
    doc = plan.to_dict()
    doc["certificate"]["bound"]["tree"] = bad
    try:
        forged = Plan.from_dict(doc)
    except Exception:
        return  # refused at the door
    violations = check(inst, forged)
    assert any(v.path == "certificate.bound" and says in v.message for v in violations), [str(v) for v in violations]


def test_a_deep_tree_is_refused() -> None:
    inst, plan = _branch_plan()
    node: dict = {"prices": {}}
    for _ in range(55):
        node = {"job": "j0", "role": "worker", "at": 1, "low": node, "high": {"prices": {}}}
    forged = plan.model_copy(deep=True)
    forged.certificate.bound.tree = node
    assert any("deeper" in v.message for v in check(inst, forged))


def test_branch_proof_bounds_the_optimum_of_plans_admitting_every_job() -> None:
    for seed in GAPPED[:5]:
        inst = random_tiny_instance(seed)
        admitted, optimum, _ = solve_bruteforce(inst)
        got = branch_proof(inst, optimum, admit=admitted if admitted < len(inst.jobs) else None)
        assert got is not None
        bound, proof, info = got
        assert bound <= optimum + 1e-6 * max(1.0, abs(optimum)) and info["branch_leaves"] >= 1
        # the claim the search makes is what the checker's replay recomputes
        from schedopt.allocation.certificates import branch_replay, remaining_time_grid

        fake = Plan(instance=inst.name, solver="t", status="heuristic", termination="completed",
                    objective={"name": "total_remaining_time"}, solve_seconds=0.0,
                    allocation={j.id: {r: 1 for r in j.roles} for j in inst.jobs[:admitted]})
        assert branch_replay(remaining_time_grid, "min")(inst, fake, proof) == pytest.approx(bound, rel=1e-12)


def test_a_branch_plan_survives_its_file(tmp_path) -> None:
    """Written and read back (YAML), the tree still replays: the search keeps it within the
    nesting a plan file may have."""
    from schedopt.plan import load_plan, save_plan

    inst, plan = _branch_plan()
    save_plan(plan, tmp_path / "plan.yaml")
    loaded = load_plan(tmp_path / "plan.yaml")
    leaves = branch_leaves(inst, loaded.certificate.bound.tree)  # the file's numbers are rounded (tidy)
    assert len(leaves) == len(branch_leaves(inst, plan.certificate.bound.tree))
    assert not check(inst, loaded, strict=True)
