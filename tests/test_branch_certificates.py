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
from schedopt.tolerances import BRANCH_TARGET_MARGIN
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
    proven beyond the LP's prices (the size classes' bound, which the exact drivers try first, a branch
    tree, or the knapsack bound) is on the right side of the brute-force optimum."""
    trees = 0
    for inst in _instances():
        plan = get_solver(solver).solve(inst, seed=0)
        assert not check(inst, plan, strict=True), (inst.name, [str(v) for v in check(inst, plan, strict=True)])
        proof = plan.certificate.bound if plan.certificate else None
        if proof is not None and proof.kind in ("branch-lagrangian", "knapsack-lagrangian", "size-class-lagrangian"):
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


def _node_lps(seed: int, admit_less: int):
    """A typed tiny instance's configurations, its warm-started node LP and the from-scratch one."""
    import numpy as np

    from schedopt.allocation.branching import _Configurations, _NodeLp
    from schedopt.allocation.certificates import (capacity_of, configuration_blocks, job_arrays,
                                                  remaining_time_grid)

    inst = random_typed_instance(seed)
    blocks = list(configuration_blocks(inst, remaining_time_grid, job_arrays(inst)))
    conf = _Configurations(inst, remaining_time_grid, blocks)
    J = len(inst.jobs)
    admit = None if admit_less == 0 else max(0, J - admit_less)
    return np, conf, J, capacity_of(inst), admit, _NodeLp(conf, J, capacity_of(inst), admit)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("admit_less", [0, 1, 3])
def test_the_warm_node_lp_solves_each_node_as_from_scratch(seed: int, admit_less: int) -> None:
    """The node LP re-solved from the last node's basis (issue 50 §3) has the value of the LP solved
    from scratch at every node of a random walk over column masks and admitted jobs, and says
    infeasible where it is (a mask leaving fewer jobs than ``admit``, or a job that must run none)."""
    from schedopt.allocation.branching import _lp_prices

    np, conf, J, cap, admit, node_lp = _node_lps(seed, admit_less)
    rng = np.random.default_rng(seed)
    K = len(conf.owner)
    for _ in range(12):
        mask = rng.random(K) < rng.choice([0.5, 0.8, 1.0])
        must = (rng.random(J) < 0.3) if admit is not None else np.ones(J, dtype=bool)
        status, lam, nu, x, value = node_lp.solve(mask, must, 10.0)
        ref = _lp_prices(conf, mask, must, J, cap, admit, 10.0)
        assert status == ref[0], (status, ref[0])
        if status == "optimal":
            scale = 1e-7 * max(1.0, float(conf.cost.max()))  # HiGHS's primal tolerance times a cost
            assert value == pytest.approx(float(conf.cost[mask] @ ref[3]), rel=1e-7, abs=scale)
            assert value == pytest.approx(float(conf.cost[mask] @ x), rel=1e-7, abs=scale)
        if status == "infeasible":
            assert lam is not None and (lam.sum() + nu) > 0  # overflow prices: they price the node out


def test_a_node_short_of_jobs_to_admit_is_priced_out() -> None:
    """A node whose allowed configurations leave fewer jobs than ``admit`` is infeasible by the
    admission row, not capacity: its overflow LP prices that row (it failed as 'a node's LP failed'
    before the row had a slack) and the scaled prices make the replayed bound rise without limit."""
    from schedopt.allocation.branching import _lp_prices
    from schedopt.allocation.certificates import Domain, lagrangian_cost_bound, remaining_time_grid

    np, conf, J, cap, admit, node_lp = _node_lps(3, 1)
    inst = random_typed_instance(3)
    mask = conf.owner >= 2  # jobs 0 and 1 cannot run: at most J - 2 < admit = J - 1 admitted
    must = np.zeros(J, dtype=bool)
    for got in (node_lp.solve(mask, must, 10.0)[:4], _lp_prices(conf, mask, must, J, cap, admit, 10.0)):
        status, lam, nu, _ = got
        assert status == "infeasible" and nu > 0
        dom = Domain.everything(inst)
        dom.types[:2] = False
        low = lagrangian_cost_bound(inst, lam, remaining_time_grid, admit=admit, nu=nu, domain=dom)
        high = lagrangian_cost_bound(inst, 1e6 * lam, remaining_time_grid, admit=admit, nu=1e6 * nu, domain=dom)
        assert high > low + 1e5


def test_the_knapsack_like_gavel_optimum_gets_a_tree() -> None:
    """`gavel`, 40 jobs on 10 servers, seed 1: a 16 % LP gap over which jobs to pause, the last
    allocation instance of issue 48's survey whose optimum rested on the backend (no tree in 60 s
    choosing the most fractional job). Strong branching on the warm node LP found one (26 leaves,
    0.4 s); with the size classes' rows in the node LPs (every plan admitting as many keeps each
    class's count in its range) the root closes; `check --strict` replays the tree either way."""
    import schedopt
    from schedopt.generate import generate_instance
    from tests.conftest import SHARED_DATA

    try:
        inst = generate_instance("gavel", jobs=40, servers=10, seed=1, data_dir=SHARED_DATA)
    except schedopt.InputError as exc:
        pytest.skip(f"needs ../shared/data (Gavel's throughputs, not redistributed): {str(exc).splitlines()[0]}")
    plan = get_solver("optimus-milp").solve(inst, seed=0, time_limit=60)
    admitted = plan.objective.admitted
    got = branch_proof(inst, plan.objective.value, admit=admitted if admitted < len(inst.jobs) else None,
                       time_limit_s=60.0)
    assert got is not None
    bound, proof, info = got
    assert 1 <= info["branch_leaves"] <= 200
    proven = plan.model_copy(deep=True)
    proven.certificate.bound, proven.objective.bound = proof, bound
    proven.objective.gap = relative_gap(proven.objective.value, bound)
    assert proven.objective.gap <= 1e-5
    report = check_report(inst, proven, strict=True)
    assert report.ok and not report.unverified


def test_the_search_is_budgeted_in_node_lps_so_its_certificate_does_not_depend_on_the_machine() -> None:
    """The same instance gives the same tree, in the same node LPs, within the budget; a budget too
    small for the tree stops the search and says so in node LPs (seconds never decide it, so a plan
    that passes `--strict` on one machine passes on a slower one)."""
    import schedopt
    from schedopt.allocation.branching import MAX_NODE_LPS, MIN_NODE_LPS, node_lp_budget
    from schedopt.generate import generate_instance
    from tests.conftest import SHARED_DATA

    assert node_lp_budget(1) == MAX_NODE_LPS and node_lp_budget(10**9) == MIN_NODE_LPS
    assert node_lp_budget(3_000) == 1_000
    try:
        inst = generate_instance("gavel", jobs=40, servers=10, seed=1, data_dir=SHARED_DATA)
    except schedopt.InputError as exc:
        pytest.skip(f"needs ../shared/data (Gavel's throughputs, not redistributed): {str(exc).splitlines()[0]}")
    plan = schedopt.solve(inst, "optimus-milp", seed=0, branch_proof=False)
    admitted = plan.objective.admitted
    admit = admitted if admitted < len(inst.jobs) else None
    first = branch_proof(inst, plan.objective.value, admit=admit)
    again = branch_proof(inst, plan.objective.value, admit=admit)
    assert first is not None and again is not None
    assert first[1].tree == again[1].tree and first[0] == again[0]
    assert first[2]["branch_node_lps"] == again[2]["branch_node_lps"] <= MAX_NODE_LPS
    why: dict = {}
    short = first[2]["branch_node_lps"] // 2
    assert branch_proof(inst, plan.objective.value, admit=admit, max_node_lps=short, why=why) is None
    assert why["stopped"] == f"{short:,} node LPs" or why["stopped"].startswith("hopeless")
    assert why["node_lps"] <= short


@pytest.mark.parametrize("solver", ["optimus-milp", "optimus-cpsat"])
def test_branch_proof_false_states_the_backends_word(solver: str) -> None:
    """``branch_proof=false`` skips the search (a latency-bound caller's choice): the same plan, its
    optimum stated on the backend's word, which plain ``check`` accepts and ``--strict`` names
    (`gavel` 40 × 10 seed 0, whose optimum the default proves by a tree: on seed 1 the size classes'
    bound proves it before any search)."""
    import schedopt
    from schedopt.generate import generate_instance
    from tests.conftest import SHARED_DATA

    with pytest.raises(schedopt.InputError, match="branch_proof"):
        schedopt.solve(random_tiny_instance(0), solver, branch_proof="no")
    try:
        inst = generate_instance("gavel", jobs=40, servers=10, seed=0, data_dir=SHARED_DATA)
    except schedopt.InputError as exc:
        pytest.skip(f"needs ../shared/data (Gavel's throughputs, not redistributed): {str(exc).splitlines()[0]}")
    plan = schedopt.solve(inst, solver, seed=0, time_limit=60)
    assert plan.options["branch_proof"] is True
    assert plan.certificate.bound.kind == "branch-lagrangian"  # within the search's node-LP budget, on any machine
    assert not check(inst, plan, strict=True)
    quick = schedopt.solve(inst, solver, seed=0, time_limit=60, branch_proof=False)
    assert quick.allocation == plan.allocation and quick.status == plan.status
    assert quick.certificate.bound.kind == "backend" and quick.options["branch_proof"] is False
    assert not check(inst, quick)
    report = check_report(inst, quick, strict=True)
    assert any("branch and bound" in str(v) for v in report.unverified + report.violations)


@pytest.mark.parametrize("solver, option", [("optimus-lagrange", {}), ("optimus-greedy", {"branch_proof": True})])
def test_heuristic_plans_carry_branch_certificates_below_the_optimum(solver: str, option: dict) -> None:
    """Issue 50 §4: where the LP splits rigid jobs and leaves a gap, `optimus-lagrange` (by default)
    and `optimus-greedy` (``branch_proof=true``) search a branch certificate of the plan's value (or
    of 0.99 of it): the same plan as without the search, a bound `check --strict` replays, never above
    the optimum (brute force, or `optimus-milp`'s proven one where brute force is too large)."""
    import schedopt
    from schedopt.testing.instances import random_rigid_typed_instance

    trees = adopted = 0
    for seed in range(40):
        inst = random_rigid_typed_instance(seed)
        plan = schedopt.solve(inst, solver, seed=0, **option)
        assert not check(inst, plan, strict=True), [str(v) for v in check(inst, plan, strict=True)]
        plain = schedopt.solve(inst, solver, seed=0, branch_proof=False)
        assert plain.allocation == plan.allocation
        # never weaker, but for the tree's own margin: a tree proves the plan's value less
        # BRANCH_TARGET_MARGIN, and stands where the knapsack alone would have reached the value itself
        assert plan.objective.bound >= plain.objective.bound - BRANCH_TARGET_MARGIN * max(1.0, abs(plain.objective.bound))
        if plan.certificate.bound.kind == "branch-lagrangian":
            trees += 1
            try:
                admitted, optimum, _ = solve_bruteforce(inst)
            except ValueError:  # too many combinations: the exact solver's proven optimum
                exact = get_solver("optimus-milp").solve(inst, seed=0)
                assert exact.status.value == "optimal"
                admitted, optimum = exact.objective.admitted, exact.objective.value
            assert plan.objective.admitted == admitted
            assert plan.objective.bound <= optimum + 1e-6 * max(1.0, abs(optimum))
    assert trees >= 5


def test_hopeless_reads_the_rate_since_the_root_and_the_recent_rate() -> None:
    """A dive is given up when, at its rate since the root or over its last RATE_WINDOW levels, it
    would need more than PROJECTED_DEPTH_LIMIT levels to close the root's gap (issue 50 §3: dives
    that closed a third of the gap at the first split and under 1 % a level after it ran 1-3 s)."""
    from schedopt.allocation.branching import HOPELESS_FROM_DEPTH, PROJECTED_DEPTH_LIMIT, RATE_WINDOW, hopeless

    assert not hopeless(HOPELESS_FROM_DEPTH - 1, 0.0)  # too shallow to judge
    assert hopeless(10, 10 / PROJECTED_DEPTH_LIMIT - 0.01)  # the rate since the root is too slow
    assert not hopeless(10, 10 / PROJECTED_DEPTH_LIMIT + 0.01)
    # 40 % closed, 0.5 % a level lately: 120 levels more
    assert hopeless(RATE_WINDOW + 1, 0.40, 0.40 - 0.005 * RATE_WINDOW)
    # 40 % closed, 5 % a level lately: 12 more levels
    assert not hopeless(RATE_WINDOW + 1, 0.40, 0.40 - 0.05 * RATE_WINDOW)
    assert hopeless(RATE_WINDOW + 1, 0.40, 0.40)  # no progress at all lately
    assert not hopeless(RATE_WINDOW + 1, 1.0, 0.95)  # closed: a leaf, whatever the rate


def test_the_greedys_quick_tree_is_not_given_up_for_its_first_levels_cost() -> None:
    """`gavel --max-tasks 8`, 80 jobs on 27 servers, seed 117: the greedy's plan is optimal and its
    quick tree (within 0.99 of the plan's value, at most 100 node LPs) closes in 41 node LPs; a rule
    that projected the dive's levels at its first levels' node LPs (17 a level with strong branching,
    later ones reuse the scores) gave it up at depth 3 and the plan stated the knapsack's 7.75 %.
    (The size classes' bound now proves that plan before any tree: the quick tree is searched here
    as the greedy would without it.)"""
    import math

    import schedopt
    from schedopt.allocation.certificates import configuration_count
    from schedopt.allocation.plans import QUICK_TREE_LPS, QUICK_TREE_WORK, _branch_bound
    from schedopt.generate import generate_instance
    from tests.conftest import SHARED_DATA

    try:
        inst = generate_instance("gavel", jobs=80, servers=27, seed=117, max_tasks=8, data_dir=SHARED_DATA)
    except schedopt.InputError as exc:
        pytest.skip(f"needs ../shared/data (Gavel's throughputs, not redistributed): {str(exc).splitlines()[0]}")
    plan = schedopt.solve(inst, "optimus-greedy", seed=0)
    assert plan.certificate.bound.kind in ("size-class-lagrangian", "branch-lagrangian")
    assert plan.objective.gap <= 0.01
    exact = schedopt.solve(inst, "optimus-milp", seed=0, time_limit=60)
    assert exact.status == schedopt.Status.OPTIMAL
    assert plan.objective.bound <= exact.objective.value * (1 + 1e-9)
    assert not check(inst, plan, strict=True)
    value, admit = plan.objective.value, plan.objective.admitted
    lps = min(QUICK_TREE_LPS, QUICK_TREE_WORK // configuration_count(inst))
    metrics: dict = {}
    tree = _branch_bound(inst, value, admit if admit < len(inst.jobs) else None, 0.05, math.inf, metrics,
                         max_node_lps=lps, within_only=True)
    assert tree is not None, metrics
    assert tree[0] <= exact.objective.value * (1 + 1e-9)
    assert tree[1].kind == "branch-lagrangian"


def test_a_counted_configuration_total_spares_the_enumeration() -> None:
    """A caller that has counted more allowed configurations than the search takes (the exact
    driver's pruned ones) gets its answer at once, without enumerating the instance."""
    from schedopt.allocation.branching import MAX_CONFIGURATIONS

    inst = random_typed_instance(0)
    why: dict = {}
    assert branch_proof(inst, 1.0, allowed_at_least=MAX_CONFIGURATIONS + 1, why=why) is None
    assert "allowed configurations" in why["stopped"] and why["seconds"] < 0.05


def test_the_model_knows_its_allowed_configurations_once_enumerated() -> None:
    """AllocationModel.allowed_at_least: 0 before the choices are enumerated, then their count (each
    pruned configuration is an allowed one: never more than the search's own count)."""
    from schedopt.allocation.model import compile_model

    model = compile_model(random_typed_instance(3))
    assert model.allowed_at_least == 0
    rows_cs, cs, _ = model.choices
    assert model.allowed_at_least == cs.K == rows_cs.K > 0
    assert model.allowed_at_least <= rows_cs.enumerated


def test_the_greedy_searches_a_small_tree_within_one_percent_by_default() -> None:
    """Where the LP leaves more than 1 %, the typed greedy (``branch_proof`` false, the default) searches
    a tree of 0.99 of its plan's value within plans.QUICK_TREE_LPS node LPs: a bound `check --strict`
    replays, within 1 % of the plan, never above the optimum; the plan is the one without any bound,
    but where the tree met an integral plan at least 0.99 % below it, which is adopted."""
    import schedopt
    from schedopt.allocation.plans import BRANCH_WITHIN, QUICK_TREE_LPS
    from schedopt.testing.instances import random_rigid_typed_instance

    trees = adopted = 0
    for seed in range(40):
        inst = random_rigid_typed_instance(seed)
        plan = schedopt.solve(inst, "optimus-greedy", seed=0)
        assert not check(inst, plan, strict=True), [str(v) for v in check(inst, plan, strict=True)]
        alone = schedopt.solve(inst, "optimus-greedy", seed=0, bound=False)
        tree = bool(plan.certificate and plan.certificate.bound and plan.certificate.bound.kind == "branch-lagrangian")
        better = "plan_from_tree" in plan.metrics
        if not (tree or better):
            assert alone.allocation == plan.allocation
            continue
        try:
            admitted, optimum, _ = solve_bruteforce(inst)
        except ValueError:  # too many combinations: the exact solver's proven optimum
            exact = get_solver("optimus-milp").solve(inst, seed=0)
            assert exact.status.value == "optimal"
            optimum = exact.objective.value
        if better:  # the tree met a better plan: adopted, as many jobs, lower Σ t, never below the optimum
            adopted += 1
            assert plan.objective.admitted == alone.objective.admitted
            assert plan.objective.value < alone.objective.value * (1 - BRANCH_WITHIN) + 1e-6
            assert plan.metrics["plan_from_tree"]["value_of_the_plan_given"] == pytest.approx(alone.objective.value)
            assert plan.objective.value >= optimum - 1e-6 * max(1.0, abs(optimum))
        else:
            assert alone.allocation == plan.allocation
        if tree:
            trees += 1
            assert plan.metrics["branch_node_lps"] <= QUICK_TREE_LPS
            assert plan.objective.gap <= BRANCH_WITHIN + 1e-6
            assert plan.objective.bound <= optimum + 1e-6 * max(1.0, abs(optimum))
    assert trees >= 3 and adopted >= 2, (trees, adopted)


def test_a_plan_the_search_meets_is_a_plan_below_its_target() -> None:
    """``why["better_plan"]``: an integral node-LP optimum the search meets below its target (with
    ``dive_for_plan``, also after the search is found hopeless) is a feasible plan of the instance,
    admitting at least as many jobs, whose value is below the target: `check --strict` passes it."""
    import schedopt
    from schedopt.allocation.plans import allocation_plan
    from schedopt.testing.instances import random_rigid_typed_instance

    met = 0
    for seed in range(40):
        inst = random_rigid_typed_instance(seed)
        alone = schedopt.solve(inst, "optimus-greedy", seed=0, bound=False)
        admitted, value = alone.objective.admitted, alone.objective.value
        if not admitted:
            continue
        target = 0.99 * value
        why: dict = {}
        got = branch_proof(inst, target, admit=admitted if admitted < len(inst.jobs) else None, max_node_lps=100,
                           why=why, dive_for_plan=True)
        if got is not None or "better_plan" not in why:
            continue
        met += 1
        found = why["better_plan"]
        assert len(found) >= admitted
        plan = allocation_plan(inst, {inst.jobs[j].id: {inst.jobs[j].role_names[0]: c0} for j, _, c0, _ in found},
                               solver="tree", accelerators={inst.jobs[j].id: inst.accelerators[t] for j, t, _, _ in found})
        assert not check(inst, plan, strict=True), [str(v) for v in check(inst, plan, strict=True)]
        assert plan.objective.value < target
    assert met >= 2
