"""The placement certificates (``pattern-lp-dual``, ``pattern-lagrangian``) replayed from the
instance alone: what they prove on hand-made cases, and forged ones refused (issue 51 §2)."""

from __future__ import annotations

import math

import pytest

import schedopt
from schedopt.instance import Instance
from schedopt.placement.certificates import admission_bound, item_key, lagrangian_bound
from schedopt.placement.exact import solve_bruteforce
from schedopt.placement.problem import compile_placement
from tests.conftest import assert_checked
from tests.test_placement import placement_instance, ps_job
from tests.test_placement_price_guided import tiny


def strict(instance: Instance, plan: schedopt.Plan) -> list[str]:
    return [str(v) for v in schedopt.check(instance, plan, strict=True)]


def forged(plan: schedopt.Plan, **proof_changes: object) -> schedopt.Plan:
    cert = plan.certificate
    assert cert is not None and cert.bound is not None
    bound = cert.bound.model_copy(update=proof_changes)
    return plan.model_copy(update={"certificate": cert.model_copy(update={"bound": bound})})


def test_fig10_the_bound_is_the_optimum() -> None:
    """Optimus Fig. 10: 2 PS and 4 workers on 3 servers of 3 slots; the optimum T = 2 (the even
    split on two servers) is proven by item prices alone."""
    inst = placement_instance([ps_job("j", 2, 4)], servers=3, slots=3)
    plan = assert_checked(inst, schedopt.solve(inst, "placement-lagrange"))
    assert plan.objective.value == 2 and plan.objective.bound == pytest.approx(2.0)
    assert plan.certificate.bound.kind == "pattern-lagrangian" and not strict(inst, plan)


def test_zero_prices_prove_each_job_alone() -> None:
    """No prices: every job at its cheapest shape that fits a server, nothing else."""
    inst = placement_instance([ps_job("a", 2, 4), ps_job("b", 1, 1)], servers=3, slots=3)
    data = compile_placement(inst)
    assert lagrangian_bound(data, {}, "sum", admit=None, admit_price=0.0) == pytest.approx(2.0)  # b fits whole: 0
    assert admission_bound(data, {}, "sum") == 2


def test_slot_prices_prove_the_count() -> None:
    """Three 2-task jobs on two servers of 2 slots. Pricing a task at 1/2 and a pair at 1, each job
    costs 1 whichever shape it takes, and a server holds 1: at most 0·3 + 1·2 = 2 placed. Leaving
    the pair unpriced proves nothing useful: a job placed whole costs 0, so 3 + 2·1 = 5."""
    inst = placement_instance([ps_job(f"j{i}", 1, 1) for i in range(3)], servers=2, slots=2)
    data = compile_placement(inst)
    one = item_key(["slot"], data.demand[0, 0])
    two = item_key(["slot"], 2 * data.demand[0, 0])
    assert (one, two) == ("slot=1", "slot=2")
    assert admission_bound(data, {one: 0.5, two: 1.0}, "sum") == 2 == solve_bruteforce(inst, "sum")[0]
    assert admission_bound(data, {one: 0.5}, "sum") == 5
    plan = assert_checked(inst, schedopt.solve(inst, "placement-lagrange"))
    assert plan.objective.admitted == plan.objective.admitted_bound == 2 and not strict(inst, plan)


@pytest.mark.parametrize("seed", range(8))
def test_inflated_prices_are_refused_or_still_true(seed: int) -> None:
    """Prices scaled up, down, or dropped: the replay recomputes; a stated bound above what the
    numbers prove is a violation, and whatever passes is below the brute-force optimum."""
    inst = tiny(seed)
    most, best, _ = solve_bruteforce(inst, "sum")
    plan = schedopt.solve(inst, "placement-lagrange")
    if plan.certificate is None or plan.certificate.bound is None:
        pytest.skip("this plan states no bound (its count is not proven the most)")
    for factor in (0.0, 0.5, 2.0, 10.0):
        prices = {k: v * factor for k, v in (plan.certificate.bound.prices or {}).items()}
        for stated in (plan.objective.bound, best + 1.0):
            bad = forged(plan, prices=prices).model_copy(update={"objective": plan.objective.model_copy(
                update={"bound": stated, "gap": None})})
            if not schedopt.check(inst, bad, strict=True):
                assert stated <= best + 1e-9


@pytest.mark.parametrize("change,match", [
    ({"prices": {"slot=99": 1.0}}, "no part of any job"),
    ({"prices": {"slot=1": -1.0}}, "finite and >= 0"),
    ({"prices": {"slot=1": math.nan}}, "finite and >= 0"),
    ({"admit_price": -1.0}, "admit_price"),
    ({"admit": 99}, "admit 99"),
])
def test_malformed_certificates_are_violations(change: dict, match: str) -> None:
    inst = placement_instance([ps_job("a", 2, 4), ps_job("b", 2, 2), ps_job("c", 3, 3)], servers=2, slots=4)
    plan = assert_checked(inst, schedopt.solve(inst, "placement-lagrange"))
    assert plan.certificate is not None and plan.certificate.bound is not None
    bad = forged(plan, **change)
    text = "\n".join(strict(inst, bad))
    assert match in text, text


def test_a_kind_proves_only_its_claim() -> None:
    inst = placement_instance([ps_job("a", 2, 4), ps_job("b", 2, 2), ps_job("c", 3, 3)], servers=2, slots=4)
    plan = schedopt.solve(inst, "placement-lagrange")
    cert = plan.certificate
    swapped = cert.model_copy(update={"bound": cert.admitted_bound, "admitted_bound": cert.bound})
    text = "\n".join(strict(inst, plan.model_copy(update={"certificate": swapped})))
    assert "proves objective.admitted_bound, not objective.bound" in text


def test_empty_plan_claimed_optimal_fails() -> None:
    """The issue-48 forgery for placement: nothing placed, value 0, bound 0, "optimal"."""
    inst = placement_instance([ps_job("a", 1, 1)], servers=1, slots=2)
    honest = schedopt.solve(inst, "placement-lagrange")
    empty = honest.model_copy(update={"allocation": {}, "placement": {}, "paused": ["a"], "certificate": None,
                                      "status": schedopt.Status.OPTIMAL, "objective": honest.objective.model_copy(
                                          update={"value": 0.0, "bound": 0.0, "gap": 0.0, "admitted": 0,
                                                  "admitted_bound": None})})
    assert strict(inst, empty)


def test_a_certificate_from_another_instance() -> None:
    """Checked against an instance it was not made for: refused or still a true bound."""
    a = placement_instance([ps_job("j", 2, 4)], servers=3, slots=3)
    b = placement_instance([ps_job("j", 2, 4)], servers=2, slots=3)
    plan_a = schedopt.solve(a, "placement-lagrange")
    plan_b = assert_checked(b, schedopt.solve(b, "placement-lagrange"))
    moved = plan_b.model_copy(update={"certificate": plan_a.certificate,
                                      "objective": plan_b.objective.model_copy(update={"bound": plan_a.objective.bound})})
    _, best, _ = solve_bruteforce(b, "sum")
    if not schedopt.check(b, moved, strict=True):
        assert plan_a.objective.bound <= best + 1e-9


def test_max_objective_has_no_pattern_certificate() -> None:
    inst = placement_instance([ps_job("a", 2, 4), ps_job("b", 2, 2)], servers=3, slots=3)
    plan = schedopt.solve(inst, "placement-lagrange")
    mx = assert_checked(inst, schedopt.solve(inst, "placement-lagrange", objective="max"))
    bad = mx.model_copy(update={"certificate": plan.certificate, "objective": mx.objective.model_copy(
        update={"bound": 0.0, "gap": None})})
    assert "no pattern certificate" in "\n".join(strict(inst, bad))


def test_split_floor_on_fig10() -> None:
    """Fig. 10's job (2 PS, 4 workers; servers of 3 slots) fits no server whole: beside one PS a
    server holds 2 workers, beside one worker 2 PS, so T >= (S/p)·max(1, 4 - 2)/B = 2 (unit
    sizes): the bound is the optimum, and max T_j's plan is proven optimal by it."""
    from schedopt.placement.certificates import split_floor

    inst = placement_instance([ps_job("j", 2, 4)], servers=3, slots=3)
    assert split_floor(compile_placement(inst)).tolist() == [2.0]
    plan = assert_checked(inst, schedopt.solve(inst, "placement-lagrange", objective="max"))
    assert plan.objective.value == 2 and plan.objective.bound == 2 and plan.certificate.bound.kind == "split-floor"
    assert not strict(inst, plan)
    # forged: a higher bound, admit above the placed count, the kind on a Σ T_j plan
    too_high = plan.model_copy(update={"objective": plan.objective.model_copy(update={"bound": 3.0, "gap": None})})
    assert strict(inst, too_high)
    assert strict(inst, forged(plan, admit=2))
    sum_plan = schedopt.solve(inst, "placement-lagrange")
    swapped = sum_plan.model_copy(update={"certificate": plan.certificate})
    assert "split-floor bounds max T_j" in "\n".join(strict(inst, swapped))


def test_split_floor_takes_the_kth_smallest_when_jobs_pause() -> None:
    """Two jobs that fit no server whole and room for one: a plan placing one job may state the
    smaller floor (admit 1), never the larger."""
    from schedopt.placement.certificates import split_floor

    inst = placement_instance([ps_job("big", 2, 5), ps_job("small", 2, 4)], servers=3, slots=3)
    floors = sorted(split_floor(compile_placement(inst)).tolist())
    plan = assert_checked(inst, schedopt.solve(inst, "placement-milp", objective="max"))
    placed, best, _ = solve_bruteforce(inst, "max")
    assert plan.objective.admitted == placed
    if plan.certificate is not None and plan.certificate.bound is not None and plan.certificate.bound.kind == "split-floor":
        assert plan.objective.bound == floors[placed - 1] <= best


def _threshold_plans() -> list[tuple[Instance, schedopt.Plan, float]]:
    """Tiny instances whose max T_j optimum a ``pattern-threshold`` proof carries, with the
    brute-force optimum."""
    out = []
    for seed in range(16):
        inst = tiny(seed)
        plan = schedopt.solve(inst, "placement-milp", objective="max")
        if plan.certificate is not None and plan.certificate.bound is not None and \
                plan.certificate.bound.kind == "pattern-threshold":
            out.append((inst, plan, solve_bruteforce(inst, "max")[1]))
    return out


def test_threshold_proves_optima_split_floor_cannot() -> None:
    """On the tiny instances whose max T_j optimum split-floor leaves unproven, the threshold
    certificate proves it: the replay gives τ within THRESHOLD_TOL below the brute-force optimum,
    and --strict verifies the plan's `optimal`."""
    from schedopt.placement.certificates import replay_threshold

    plans = _threshold_plans()
    assert len(plans) == 3
    for inst, plan, best in plans:
        tau = replay_threshold(inst, plan, plan.certificate.bound)
        assert best * (1 - 3e-9) <= tau <= best
        assert plan.status == "optimal" and not strict(inst, plan)


def test_forged_thresholds_are_refused_or_still_true() -> None:
    """Every forgery of a threshold proof (τ raised, prices scaled or dropped, admit changed, the
    kind on a Σ T_j plan, another instance's proof) is refused by --strict, or what it still
    claims is true against brute force."""
    plans = _threshold_plans()
    for inst, plan, best in plans:
        proof = plan.certificate.bound
        forgeries = [forged(plan, value=proof.value * f) for f in (1.0 + 1e-6, 1.01, 2.0, math.inf, math.nan)]
        forgeries += [forged(plan, prices={k: v * f for k, v in proof.prices.items()}) for f in (0.0, 0.5, 0.99, 1.5)]
        forgeries += [forged(plan, prices=dict(list(proof.prices.items())[1:]))]
        forgeries += [forged(plan, admit=a) for a in (0, plan.objective.admitted + 1, -1)]
        for bad in forgeries:
            bad = bad.model_copy(update={"objective": bad.objective.model_copy(
                update={"bound": bad.certificate.bound.value, "gap": None})})
            if not strict(inst, bad):
                assert bad.objective.bound <= best, (inst.name, bad.certificate.bound)
        sum_plan = schedopt.solve(inst, "placement-milp")
        swapped = sum_plan.model_copy(update={"certificate": plan.certificate})
        assert "pattern-threshold bounds max T_j" in "\n".join(strict(inst, swapped))
    # another instance's proof on the first plan: refused (its items or its count)
    (inst_a, plan_a, _), (inst_b, plan_b, _) = plans[:2]
    moved = plan_a.model_copy(update={"certificate": plan_b.certificate,
                                      "objective": plan_a.objective.model_copy(update={"bound": plan_b.objective.bound})})
    assert strict(inst_a, moved) or plan_b.objective.bound <= solve_bruteforce(inst_a, "max")[1]


def test_threshold_is_below_the_optimum_for_any_prices() -> None:
    """Soundness: for random prices on the items a proof names and thresholds around each shape
    cost, whatever τ the replay accepts is at most the brute-force optimum."""
    import numpy as np

    from schedopt.placement.certificates import admission_bound, job_options

    rng = np.random.default_rng(7)
    accepted = 0
    for inst, plan, best in _threshold_plans():
        data = compile_placement(inst)
        k = plan.objective.admitted
        costs = sorted({c for j in range(data.J) for _, c, _ in job_options(data, j, "sum")})
        keys = list(plan.certificate.bound.prices)
        for _ in range(40):
            prices = {key: float(rng.uniform(0, 2)) for key in keys}
            tau = float(rng.choice(costs)) * float(rng.choice([0.5, 1 - 1e-6, 1.0, 1 + 1e-6, 1.5]))
            if admission_bound(data, prices, "sum", below=tau) < k:
                accepted += 1
                assert tau <= best, (inst.name, tau, best, prices)
    assert accepted > 0


#: tiny instances whose Σ T_j optimum the class LP's prices leave unproven (an integrality gap):
#: their exact plans carry a pattern-branch tree
BRANCH_CASES = [("tiny", 33), ("tiny", 56), ("mixed", 12), ("mixed", 28), ("mixed", 32), ("mixed", 33)]


def _branch_plans() -> list[tuple[Instance, schedopt.Plan, float]]:
    from tests.test_placement_price_guided import mixed_instance

    out = []
    for maker, seed in BRANCH_CASES:
        inst = (tiny if maker == "tiny" else mixed_instance)(seed)
        out.append((inst, schedopt.solve(inst, "placement-milp"), solve_bruteforce(inst, "sum")[1]))
    return out


def test_branch_trees_prove_optima_the_lp_leaves_open() -> None:
    """Where the class LP's prices fall short of the optimum, the exact solver's plan carries a
    pattern-branch tree (more than one leaf) whose replayed bound is within the optimum's
    tolerance below the brute-force optimum, and --strict verifies `optimal`."""
    for inst, plan, best in _branch_plans():
        proof = plan.certificate.bound
        assert plan.status == "optimal" and proof.kind == "pattern-branch" and "job" in proof.tree, inst.name
        assert not strict(inst, plan), inst.name
        assert best * (1 - 2e-6) - 1e-12 <= plan.objective.bound <= best + 1e-12


def _nodes(tree: dict) -> list[dict]:
    return [tree] + (_nodes(tree["on"]) + _nodes(tree["off"]) if "job" in tree else [])


def test_forged_branch_trees_are_refused_or_still_true() -> None:
    """Swapped children, a subtree cut to one of its leaves, scaled or dropped leaf prices, a shape
    that is not the job's, an unknown job, a leaf with a stray key, admit above the placed count,
    the tree on a max T_j plan: each refused by --strict, or its claim still true."""
    import copy

    for inst, plan, best in _branch_plans():
        tree = plan.certificate.bound.tree
        forgeries = []
        swapped = copy.deepcopy(tree)
        swapped["on"], swapped["off"] = swapped["off"], swapped["on"]
        forgeries.append(swapped)
        forgeries.append(copy.deepcopy(tree["on"] if "job" not in tree["on"] else _nodes(tree["on"])[-1]))
        for f in (0.0, 0.5, 1.5, 10.0):
            scaled = copy.deepcopy(tree)
            for node in _nodes(scaled):
                if "prices" in node:
                    node["prices"] = {k: v * f for k, v in node["prices"].items()}
            forgeries.append(scaled)
        stray = copy.deepcopy(tree)
        _nodes(stray)[-1]["trust"] = "me"
        forgeries.append(stray)
        other = copy.deepcopy(tree)
        other["shape"] = [[9, 9]]
        forgeries.append(other)
        unknown = copy.deepcopy(tree)
        unknown["job"] = "nobody"
        forgeries.append(unknown)
        for bad_tree in forgeries:
            bad = forged(plan, tree=bad_tree)
            if not strict(inst, bad):
                assert bad.objective.bound <= best + 1e-9, (inst.name, bad_tree)
        assert strict(inst, forged(plan, admit=plan.objective.admitted + 1, part_admit=None))
        max_plan = schedopt.solve(inst, "placement-milp", objective="max")
        assert strict(inst, max_plan.model_copy(update={"certificate": plan.certificate}))


def test_branch_leaves_bound_every_placement_for_any_prices() -> None:
    """Soundness: the tree's splits with random leaf prices (and admit prices) never replay above
    the brute-force optimum."""
    import copy

    import numpy as np

    from schedopt.placement.certificates import replay_branch

    rng = np.random.default_rng(11)
    replayed = 0
    for inst, plan, best in _branch_plans():
        for _ in range(15):
            tree = copy.deepcopy(plan.certificate.bound.tree)
            for node in _nodes(tree):
                if "prices" in node:
                    node["prices"] = {k: float(rng.uniform(0, 3)) for k in node["prices"]}
                    if "admit_price" in node:
                        node["admit_price"] = float(rng.uniform(0, 3))
                    if "part_admit_price" in node:
                        node["part_admit_price"] = [float(rng.uniform(0, 3)) for _ in node["part_admit_price"]]
            proof = plan.certificate.bound.model_copy(update={"tree": tree})
            assert replay_branch(inst, plan, proof) <= best + 1e-9
            replayed += 1
    assert replayed == 15 * len(BRANCH_CASES)
