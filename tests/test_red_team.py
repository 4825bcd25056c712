"""The permanent red team (issue 48 §7): forged claims and forged certificates.

Every plan here is an honest solver's plan on a tiny instance whose true optimum
brute force knows (allocation, quality; Dorm's partition: the MILP's optimum). Hypothesis mutates its claims (status, bound, gap,
admitted_bound) and its certificate's fields (kind, prices and their keys,
admit, admit_price, NaN and inf, a certificate copied from another instance, the
plan checked against another instance). The property: ``check --strict`` either
refuses the mutated plan, or every claim it still makes is true: "optimal" is
the lexicographic optimum, the bound lies on the right side of the optimum, the
admitted bound is at least the most jobs any plan admits, the gap is at least
the true one. Derandomized in CI (tests/conftest.py).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.allocation.bruteforce import solve_bruteforce
from schedopt.checking import check
from schedopt.errors import InputError
from schedopt.generate import generate_instance
from schedopt.instance import Instance
from schedopt.plan import Plan
from schedopt.quality.problem import predicted_reduction
from schedopt.registry import get_solver
from schedopt.allocation.branching import branch_proof
from schedopt.plan import relative_gap
from schedopt.testing.instances import random_rigid_typed_instance, random_tiny_instance, random_typed_instance

TOL = 1e-6
#: tiny instances whose optimum the LP's prices do not prove (tests/test_branch_certificates.py finds them)
BRANCH_SEEDS = (7, 10, 12)
#: rigid multi-GPU instances whose heuristic plans state a knapsack-lagrangian bound
KNAPSACK_SEEDS = (0, 5, 7)


@dataclass
class Case:
    """An instance, an honest plan of it, and the truth: the most jobs any plan admits
    and the best objective value among plans admitting that many."""

    instance: Instance
    plan: Plan
    sense: str
    most_admitted: int | None  # None: the problem has no admission objective (partition)
    optimum: float


def quality_bruteforce(instance: Instance) -> tuple[int, float]:
    """The quality problem's lexicographic optimum by enumeration (tiny instances only)."""
    jobs = instance.jobs
    cap = instance.capacity_total
    options = []
    for job in jobs:
        role = job.role_names[0]
        r = job.roles[role]
        opts: list[tuple[int, float, Any]] = [(0, 0.0, 0.0 * cap)]
        for n in range(max(r.min, 1), r.max_count + 1):
            red = predicted_reduction(instance, job.id, {role: n})
            if math.isfinite(red):
                opts.append((1, red, n * instance.vector(r.demand)))
        options.append(opts)
    best = (-1, -math.inf)
    for combo in itertools.product(*options):
        use = sum(o[2] for o in combo)
        if (use <= cap + 1e-9 * (1 + abs(cap))).all():
            key = (sum(o[0] for o in combo), sum(o[1] for o in combo))
            best = max(best, key)
    return best


def roomy(instance: Instance) -> Instance:
    """``instance`` with ten times its capacity."""
    doc = instance.to_dict()
    for server in doc["servers"]:
        server["capacity"] = {r: 10 * v for r, v in server["capacity"].items()}
    doc["name"] = instance.name + "-roomy"
    return Instance.from_dict(doc)


def _allocation_cases() -> list[Case]:
    cases = []
    instances = [random_tiny_instance(seed) for seed in range(6)] + [random_typed_instance(seed) for seed in range(3)]
    # seeds whose exact plans carry a branch-lagrangian proof (the LP's prices fall short of the optimum)
    instances += [random_tiny_instance(seed) for seed in BRANCH_SEEDS]
    instances += [roomy(random_tiny_instance(seed)) for seed in (6, 7)]  # every job fits: pausing one is never optimal
    # rigid multi-GPU jobs on small types: the heuristics' bounds are knapsack-lagrangian proofs
    instances += [random_rigid_typed_instance(seed, n_jobs=5) for seed in KNAPSACK_SEEDS]
    for inst in instances:
        admitted, total, _ = solve_bruteforce(inst)
        for solver in ("optimus-greedy", "optimus-milp", "drf"):
            plan = get_solver(solver).solve(inst, seed=0)
            assert not check(inst, plan), solver
            cases.append(Case(inst, plan, "min", admitted, total))
            if solver == "optimus-milp" and inst.name in {random_tiny_instance(s).name for s in BRANCH_SEEDS}:
                cases.append(Case(inst, _with_branch_tree(inst, plan), "min", admitted, total))
    return cases


def _with_branch_tree(inst: Instance, plan: Plan) -> Plan:
    """An exact plan whose bound is a branch tree found for it (the exact drivers try the knapsack
    bound first, which proves these seeds without a tree)."""
    admitted = plan.objective.admitted
    got = branch_proof(inst, plan.objective.value, admit=admitted if admitted < len(inst.jobs) else None)
    assert got is not None
    tree = plan.model_copy(deep=True)
    tree.certificate.bound = got[1]
    tree.objective.bound = got[0]
    tree.objective.gap = relative_gap(tree.objective.value, got[0])
    assert not check(inst, tree), "branch"
    return tree


def _quality_cases() -> list[Case]:
    cases = []
    for seed in range(3):
        inst = generate_instance("slaq", jobs=3, servers=1, seed=seed, max_tasks=3)
        most, best = quality_bruteforce(inst)
        for solver in ("slaq-greedy", "slaq-milp"):
            plan = get_solver(solver).solve(inst, seed=0)
            assert not check(inst, plan), solver
            cases.append(Case(inst, plan, "max", most, best))
    return cases


def _partition_cases() -> list[Case]:
    """Dorm's partition problem on tiny testbeds; the optimum as dorm-milp proves it (HiGHS's
    branch and bound: no brute force for Dorm here)."""
    cases = []
    for seed in range(3):
        inst = generate_instance("dorm-table2", jobs=4, servers=2, seed=seed, max_tasks=4)
        best = get_solver("dorm-milp").solve(inst, seed=0)
        assert best.status.value == "optimal"
        for solver in ("drf-containers", "swarm-static", "dorm-milp"):
            plan = get_solver(solver).solve(inst, seed=0)
            assert not check(inst, plan), solver
            cases.append(Case(inst, plan, "max", None, float(best.objective.value)))
    return cases


CASES: list[Case] = []


def cases() -> list[Case]:
    if not CASES:
        CASES.extend(_allocation_cases() + _quality_cases() + _partition_cases())
    return CASES


# ---- mutations -------------------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.sampled_from([0.0, -1.0, 1e13, -1e13, math.nan, math.inf, -math.inf]),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
)
FACTORS = st.sampled_from([0.0, 0.5, 0.9, 0.99, 1.0, 1.01, 1.1, 2.0, 1e6, -1.0, math.nan, math.inf])


@st.composite
def mutation(draw: Any) -> tuple[str, Any]:
    """One edit of a plan document: (what, argument)."""
    what = draw(st.sampled_from([
        "status-optimal", "bound=value", "bound=number", "bound*factor", "gap=0", "gap=number",
        "admitted_bound=admitted", "admitted_bound=number", "admitted_bound=none", "bound=none",
        "kind", "prices*factor", "prices=zero", "price=number", "price-unknown-key", "prices-drop-key",
        "admit", "admit_price", "swap-proofs", "move-bound-proof", "drop-certificate", "copy-certificate",
        "other-instance", "pause-a-job",
        # the forgeries, whole
        "forge-optimal", "empty-plan", "count-proof-for-bound", "bound-proof-for-count",
        # branch certificates: their leaves' prices, their splits, their shape
        "tree-prices*factor", "tree-to-leaf", "tree-swap-children", "tree-at", "tree-admit",
        # knapsack certificates: their job prices
        "job-prices*factor", "job-price=number", "job-price-unknown-key",
        # size-class certificates: their class prices, the resource they pool
        "class-prices*factor", "class-price=number", "class-price-odd-key", "pooled=other",
        # Dorm's certificates: the budgets' prices
        "budget-prices*factor", "fairness-price=number", "adjustment-price=number",
    ]))
    if what in ("bound=number", "gap=number", "price=number", "admit_price", "job-price=number", "class-price=number",
                "fairness-price=number", "adjustment-price=number"):
        return what, draw(NUMBERS)
    if what in ("bound*factor", "prices*factor", "count-proof-for-bound", "tree-prices*factor", "job-prices*factor",
                "class-prices*factor",
                "budget-prices*factor"):
        return what, draw(FACTORS)
    if what in ("admitted_bound=number", "admit", "tree-at", "tree-admit"):
        return what, draw(st.integers(min_value=-1, max_value=6))
    if what == "kind":
        return what, draw(st.sampled_from(["lagrangian", "lp-dual", "utilization-lagrangian", "backend", "trust-me",
                                           "knapsack-lagrangian", "branch-lagrangian", "dorm-lagrangian",
                                           "size-class-lagrangian"]))
    if what in ("copy-certificate", "other-instance", "pause-a-job"):
        return what, draw(st.integers(min_value=0, max_value=1000))
    return what, None


def _proofs(doc: dict) -> list[dict]:
    cert = doc.get("certificate") or {}
    return [p for p in (cert.get("bound"), cert.get("admitted_bound")) if p]


def mutate(case: Case, doc: dict, what: str, arg: Any) -> tuple[dict, Instance]:
    """``doc`` edited by one mutation, and the instance it is then checked against."""
    instance = case.instance
    obj = doc["objective"]
    if what == "status-optimal":
        doc["status"] = "optimal"
    elif what == "bound=value":
        obj["bound"] = obj.get("value")
    elif what == "bound=number":
        obj["bound"] = arg
    elif what == "bound*factor" and obj.get("bound") is not None:
        obj["bound"] = obj["bound"] * arg
    elif what == "gap=0":
        obj["gap"] = 0.0
    elif what == "gap=number":
        obj["gap"] = arg
    elif what == "admitted_bound=admitted":
        obj["admitted_bound"] = len(doc.get("allocation", {}))
    elif what == "admitted_bound=number":
        obj["admitted_bound"] = arg
    elif what == "admitted_bound=none":
        obj.pop("admitted_bound", None)
    elif what == "bound=none":
        obj.pop("bound", None)
        obj.pop("gap", None)
    elif what == "kind":
        for proof in _proofs(doc):
            proof["kind"] = arg
    elif what == "prices*factor":
        for proof in _proofs(doc):
            proof["prices"] = {k: v * arg for k, v in (proof.get("prices") or {}).items()}
    elif what == "prices=zero":
        for proof in _proofs(doc):
            proof["prices"] = {}
    elif what == "price=number":
        for proof in _proofs(doc):
            prices = proof.setdefault("prices", {})
            prices[sorted(prices)[0] if prices else "gpu"] = arg
    elif what == "price-unknown-key":
        for proof in _proofs(doc):
            proof.setdefault("prices", {})["unobtainium"] = 1.0
    elif what == "prices-drop-key":
        for proof in _proofs(doc):
            prices = proof.get("prices") or {}
            if prices:
                prices.pop(max(prices, key=lambda k: prices[k]))
    elif what == "admit":
        for proof in _proofs(doc):
            proof["admit"] = arg
    elif what == "admit_price":
        for proof in _proofs(doc):
            proof["admit_price"] = arg
    elif what == "budget-prices*factor":
        for proof in _proofs(doc):
            for key in ("fairness_price", "adjustment_price"):
                if proof.get(key) is not None:
                    proof[key] = proof[key] * arg
    elif what in ("fairness-price=number", "adjustment-price=number"):
        for proof in _proofs(doc):
            proof[what.split("=")[0].replace("-", "_")] = arg
    elif what == "swap-proofs":
        cert = doc.get("certificate") or {}
        cert["bound"], cert["admitted_bound"] = cert.get("admitted_bound"), cert.get("bound")
        doc["certificate"] = {k: v for k, v in cert.items() if v is not None}
    elif what == "move-bound-proof":
        cert = doc.setdefault("certificate", {})
        if cert.get("bound"):
            cert["admitted_bound"] = dict(cert["bound"])
            obj["admitted_bound"] = obj.get("admitted_bound", 0)
    elif what == "drop-certificate":
        doc.pop("certificate", None)
    elif what == "copy-certificate":
        donor = [c for c in cases() if c.instance.name != instance.name and c.plan.certificate is not None]
        if donor:
            other = donor[arg % len(donor)]
            doc["certificate"] = other.plan.to_dict()["certificate"]
    elif what == "other-instance":
        others = [c.instance for c in cases() if c.instance.name != instance.name and c.sense == case.sense]
        instance = others[arg % len(others)]
        doc["instance"] = instance.name
    elif what == "forge-optimal":
        obj["bound"], obj["gap"], doc["status"] = obj.get("value"), 0.0, "optimal"
    elif what == "empty-plan":
        doc.update(allocation={}, paused=[j.id for j in instance.jobs], status="optimal")
        doc.pop("accelerators", None)
        doc["metrics"] = {}
        obj.update(value=0.0, bound=0.0, gap=0.0, admitted=0)
        obj.pop("admitted_bound", None)
        doc["certificate"] = {"bound": {"kind": "lagrangian", "admit": 0, "prices": {}}}
    elif what == "count-proof-for-bound":
        cert = doc.get("certificate") or {}
        if cert.get("admitted_bound"):
            proof = dict(cert["admitted_bound"])
            proof["prices"] = {k: v * arg for k, v in (proof.get("prices") or {}).items()}
            cert["bound"] = proof
            obj["bound"], obj["gap"], doc["status"] = obj.get("value"), 0.0, "optimal"
    elif what == "bound-proof-for-count":
        cert = doc.setdefault("certificate", {})
        cert["admitted_bound"] = {"kind": "lagrangian", "admit": 0}
        obj["admitted_bound"] = len(doc.get("allocation", {}))
        doc["status"] = "optimal"
    elif what.startswith("tree-"):
        trees = [p for p in _proofs(doc) if p.get("tree")]
        for proof in trees:
            tree = proof["tree"]
            if what == "tree-prices*factor":
                stack = [tree]
                while stack:
                    node = stack.pop()
                    if "prices" in node:
                        node["prices"] = {k: v * arg for k, v in node["prices"].items()}
                    stack += [v for v in node.values() if isinstance(v, dict) and v is not node.get("prices")]
            elif what == "tree-to-leaf":
                proof["tree"] = {"prices": {}}
            elif what == "tree-swap-children":
                for a, b in (("low", "high"), ("on", "off"), ("admitted", "paused")):
                    if a in tree:
                        tree[a], tree[b] = tree[b], tree[a]
            elif what == "tree-at" and "at" in tree:
                tree["at"] = arg
            elif what == "tree-admit":
                proof["admit"] = arg
    elif what.startswith("job-price"):
        for proof in _proofs(doc):
            prices = proof.get("job_prices") or {}
            if what == "job-prices*factor":
                proof["job_prices"] = {k: v * arg for k, v in prices.items()}
            elif what == "job-price=number":
                prices[sorted(prices)[0] if prices else instance.jobs[0].id] = arg
                proof["job_prices"] = prices
            else:
                proof["job_prices"] = {**prices, "nobody": 1.0}
    elif what.startswith("class-price") or what == "pooled=other":
        for proof in _proofs(doc):
            prices = proof.get("class_prices") or {}
            if what == "class-prices*factor":
                proof["class_prices"] = {k: v * arg for k, v in prices.items()}
            elif what == "class-price=number":
                prices[sorted(prices)[0] if prices else "1"] = arg
                proof["class_prices"] = prices
            elif what == "class-price-odd-key":
                proof["class_prices"] = {**prices, "1.5": 1e6}
            else:
                proof["pooled"] = "cpu" if proof.get("pooled") == "gpu" else "gpu"
    elif what == "pause-a-job" and doc.get("allocation"):
        # an honest recomputation of the objective for a plan with one job fewer, claims kept
        jobs = sorted(doc["allocation"])
        gone = jobs[arg % len(jobs)]
        alloc = {j: c for j, c in doc["allocation"].items() if j != gone}
        from schedopt.checking import check_report  # noqa: F401 (the problem's value below)
        from schedopt.problems import get_problem

        fewer = Plan.from_dict({**doc, "allocation": alloc, "paused": sorted(set(doc.get("paused", [])) | {gone}),
                                "accelerators": {j: t for j, t in (doc.get("accelerators") or {}).items() if j != gone}
                                if doc.get("accelerators") is not None else None})
        fewer.objective.value = get_problem(fewer.problem).objective_value(instance, fewer)
        fewer.objective.admitted = len(alloc) if fewer.objective.admitted is not None else None
        fewer.metrics = get_problem(fewer.problem).metrics(instance, fewer)
        doc = fewer.to_dict()
    return doc, instance


def truly_proven(case: Case, instance: Instance, plan: Plan) -> list[str]:
    """What the accepted plan claims that is false, given the brute-force truth."""
    if instance.name != case.instance.name:
        return ["accepted against another instance"]
    false = []
    obj = plan.objective
    sign = 1.0 if case.sense == "min" else -1.0
    admitted = len(plan.allocation)
    tol = TOL * max(1.0, abs(case.optimum))
    if case.most_admitted is None:  # no admission objective: the value alone
        if obj.bound is not None and sign * (obj.bound - case.optimum) > tol:
            false.append(f"bound {obj.bound} on the wrong side of the optimum {case.optimum}")
        if plan.status.value == "optimal" and obj.value is not None and abs(obj.value - case.optimum) > tol:
            false.append(f"optimal with value {obj.value} != optimum {case.optimum}")
        if obj.gap is not None and obj.value:
            true_gap = sign * (obj.value - case.optimum) / abs(obj.value)
            if obj.gap < true_gap - 1e-6:
                false.append(f"gap {obj.gap} below the true gap {true_gap}")
        return false
    if obj.admitted_bound is not None and obj.admitted_bound < case.most_admitted:
        false.append(f"admitted_bound {obj.admitted_bound} < {case.most_admitted} admitted by the optimum")
    if obj.bound is not None and sign * (obj.bound - case.optimum) > tol:
        false.append(f"bound {obj.bound} on the wrong side of the optimum {case.optimum}")
    if plan.status.value == "optimal":
        if admitted != case.most_admitted:
            false.append(f"optimal admitting {admitted} where {case.most_admitted} fit")
        elif obj.value is not None and abs(obj.value - case.optimum) > tol:
            false.append(f"optimal with value {obj.value} != optimum {case.optimum}")
    if obj.gap is not None and obj.value:
        if admitted != case.most_admitted:
            false.append(f"a gap ({obj.gap}) with {admitted} admitted where {case.most_admitted} fit")
        else:
            true_gap = sign * (obj.value - case.optimum) / abs(obj.value)
            if obj.gap < true_gap - 1e-6:
                false.append(f"gap {obj.gap} below the true gap {true_gap}")
    return false


@settings(max_examples=300)
@given(index=st.integers(min_value=0, max_value=10_000), edits=st.lists(mutation(), min_size=1, max_size=4))
def test_every_forgery_is_refused_or_true(index: int, edits: list[tuple[str, Any]]) -> None:
    case = cases()[index % len(cases())]
    doc, instance = case.plan.to_dict(), case.instance
    for what, arg in edits:
        doc, instance = mutate(case, doc, what, arg)
    try:
        plan = Plan.from_dict(doc)
    except InputError:
        return  # refused at the door
    if check(instance, plan, strict=True):
        return  # refused by the checker
    assert not truly_proven(case, instance, plan), (edits, truly_proven(case, instance, plan))


def test_honest_plans_pass_and_claim_only_truths() -> None:
    kinds = {c.plan.certificate.bound.kind for c in cases() if c.plan.certificate and c.plan.certificate.bound}
    assert {"branch-lagrangian", "knapsack-lagrangian", "dorm-lagrangian", "size-class-lagrangian"} <= kinds  # forged too
    for case in cases():
        assert not check(case.instance, case.plan), case.plan.solver
        assert not truly_proven(case, case.instance, case.plan), case.plan.solver
