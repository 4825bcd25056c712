"""The ``size-class-lagrangian`` certificate (allocation/certificates.py replays it,
allocation/size_classes.py finds its prices): each size class's count of admitted jobs kept in
the range the admitted count and the pooled capacity leave (docs/certificates.md)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import schedopt
from schedopt.allocation.bruteforce import solve_bruteforce
from schedopt.allocation.certificates import (ConfigurationTable, instance_table, remaining_time_grid, resource_names,
                                              size_class_bound, size_classes)
from schedopt.allocation.model import admitted_bound, compile_model, lp_bound
from schedopt.allocation.size_classes import size_class_proof
from schedopt.instance import Instance
from schedopt.testing import random_rigid_typed_instance
from tests.conftest import assert_checked


def _plans(inst: Instance):
    """Every plan of a small rigid typed instance: per job None (paused) or (type index, GPUs), its
    cost; only plans within every type's capacity."""
    kinds = inst.accelerators
    cap = {k: sum(s.count * s.capacity.get("gpu", 0.0) for s in inst.servers if s.accelerator == k) for k in kinds}
    options = []
    for job in inst.jobs:
        role = next(iter(job.roles.values()))
        n = role.min
        opts = [None] + [(t, n) for t, k in enumerate(kinds) if (job.speed_by_accelerator or {}).get(k) is not None]
        options.append(opts)
    for combo in itertools.product(*options):
        used = np.zeros(len(kinds))
        for o in combo:
            if o is not None:
                used[o[0]] += o[1]
        if np.all(used <= np.array([cap[k] for k in kinds]) + 1e-9):
            yield combo


def _table(inst: Instance) -> ConfigurationTable:
    return instance_table(inst, remaining_time_grid)


@pytest.mark.parametrize("seed", range(12))
def test_every_plan_admitting_as_many_keeps_each_class_in_its_range(seed: int) -> None:
    """Brute force: every plan admitting at least k jobs (k the most any plan admits, and one less)
    has each size class's count within [lo, hi]."""
    inst = random_rigid_typed_instance(seed, n_jobs=7)
    plans = list(_plans(inst))
    most = max(sum(o is not None for o in p) for p in plans)
    table = _table(inst)
    for admit in (most, max(0, most - 1)):
        classes = size_classes(inst, table, 0, admit)
        assert np.all(classes.lo <= classes.hi)
        index = {int(s): i for i, s in enumerate(classes.sizes.tolist())}
        for p in plans:
            if sum(o is not None for o in p) < admit:
                continue
            counts = np.zeros(len(classes.sizes), dtype=int)
            for o in p:
                if o is not None:
                    counts[index[o[1]]] += 1
            assert np.all(counts >= classes.lo) and np.all(counts <= classes.hi), (p, classes)


def test_the_ranges_of_a_forced_mix() -> None:
    """12 GPUs (one v100 server, two k80 ones), four 1-GPU jobs and three 4-GPU jobs: the most jobs any
    plan admits is 6 (four 1-GPU, two 4-GPU: 12 GPUs), which forces both classes; 5 leaves a range."""
    jobs = [{"id": f"s{i}", "roles": {"worker": {"demand": {"gpu": 1.0}, "min": 1, "max": 1}},
             "speed_by_accelerator": {"v100": {"form": "table", "points": [[1, 1.0]]}}, "remaining_steps": 10.0 * (i + 1)}
            for i in range(4)]
    jobs += [{"id": f"b{i}", "roles": {"worker": {"demand": {"gpu": 1.0}, "min": 4, "max": 4}},
              "speed_by_accelerator": {k: {"form": "table", "points": [[4, 1.0]]} for k in ("v100", "k80")},
              "remaining_steps": 5.0} for i in range(3)]
    servers = [{"name": k, "accelerator": k, "count": 1 if k == "v100" else 2, "capacity": {"gpu": 4.0}}
               for k in ("v100", "k80")]
    inst = Instance.from_dict({"name": "forced", "resources": ["gpu"], "servers": servers, "jobs": jobs})
    table = _table(inst)
    classes = size_classes(inst, table, 0, 6)
    assert classes.sizes.tolist() == [1, 4] and classes.capacity == 12
    assert classes.lo.tolist() == [4, 2] and classes.hi.tolist() == [4, 2]
    # 5 jobs in 12 GPUs: 3 or 4 1-GPU jobs (2 and three 4-GPU jobs need 14), 1 or 2 4-GPU jobs
    classes = size_classes(inst, table, 0, 5)
    assert classes.lo.tolist() == [3, 1] and classes.hi.tolist() == [4, 2]
    seven = size_classes(inst, table, 0, 7)  # no plan admits 7: an empty range
    assert np.any(seven.lo > seven.hi)


@pytest.mark.parametrize("trial", range(40))
def test_the_bound_is_below_the_optimum_at_any_prices(trial: int) -> None:
    """L(λ, ν, π) at random prices (λ, ν >= 0, π of any sign) never exceeds the brute-force optimum
    among plans admitting the most jobs."""
    rng = np.random.default_rng(trial)
    inst = random_rigid_typed_instance(trial % 10, n_jobs=6)
    admitted, total, _ = solve_bruteforce(inst)
    lam = rng.exponential(float(rng.choice([1.0, 1e3, 1e5])), len(resource_names(inst)))
    nu = float(rng.exponential(1e5))
    table = _table(inst)
    classes = size_classes(inst, table, 0, admitted)
    pi = {str(int(s)): float(rng.normal(0, 1e5)) for s in classes.sizes}
    admit = None if admitted >= len(inst.jobs) else admitted
    bound = size_class_bound(inst, lam, remaining_time_grid, admit=admit, nu=nu, resource="gpu", class_prices=pi)
    assert bound <= total * (1 + 1e-9) + 1e-6


@pytest.mark.parametrize("seed", range(30))
def test_the_proof_lies_between_the_lp_and_the_optimum(seed: int) -> None:
    """size_class_proof: at least the LP bound, at most the brute-force optimum, the replay's own
    value; its LP's integral optimum, when stated, is a plan of that cost."""
    inst = random_rigid_typed_instance(seed, n_jobs=8)
    admitted, total, _ = solve_bruteforce(inst)
    if admitted == 0:
        return
    model = compile_model(inst)
    admit = None if admitted >= model.J else admitted
    _, cs, _ = model.choices
    lp = lp_bound(model, cs, admit=admit)
    got = size_class_proof(model, admit=admit)
    if got is None:
        return
    assert got.bound >= lp.bound - 1e-6 * max(1.0, abs(lp.bound))
    assert got.bound <= total * (1 + 1e-9) + 1e-6
    assert got.proof.kind == "size-class-lagrangian" and got.proof.pooled == "gpu"
    if got.plan is not None:
        assert len(got.plan) >= admitted
        assert model.rows.total_time_s(got.plan) >= total * (1 - 1e-9) - 1e-6


@pytest.mark.parametrize("objective", [None, "jct_weighted_time"])
def test_the_class_lp_started_from_the_lps_basis_has_the_same_optimum_in_fewer_iterations(objective: str | None) -> None:
    """size_class_proof with ``lp_basis`` (the plain LP's optimal basis: the class LP is that LP with
    rows added) states the bound and plan it states from scratch, its dual simplex started there:
    no more iterations, and fewer in all; a basis of other configurations is not used."""
    cases = 0
    iterations = {True: 0, False: 0}
    for seed in range(40):
        inst = random_rigid_typed_instance(seed, n_jobs=14)
        if objective is not None:
            inst = inst.with_objective(objective)
        got: dict[bool, object] = {}
        for warm in (False, True):
            model = compile_model(inst)
            _, cs, _ = model.choices
            admitted = int(admitted_bound(model)[0])
            if admitted == 0:
                break
            admit = None if admitted >= model.J else admitted
            lp = lp_bound(model, cs, admit=admit)
            assert lp.lp.basis is not None and len(lp.lp.basis.col) == cs.K and len(lp.lp.basis.job) == model.J
            got[warm] = size_class_proof(model, admit=admit, lp_basis=lp.lp.basis if warm else None)
        if not got or got[False] is None:
            continue
        cold, warm_ = got[False], got[True]
        cases += 1
        assert warm_.info["size_class_lp"] == pytest.approx(cold.info["size_class_lp"], rel=1e-9, abs=1e-9)
        assert warm_.bound == pytest.approx(cold.bound, rel=1e-7)
        assert warm_.info["size_class_lp_iterations"] <= cold.info["size_class_lp_iterations"]
        iterations[True] += warm_.info["size_class_lp_iterations"]
        iterations[False] += cold.info["size_class_lp_iterations"]
    assert cases >= 5
    assert iterations[True] < iterations[False]


@pytest.mark.parametrize("seed", [18, 30, 34, 39, 2])
def test_every_plan_costs_at_least_the_class_bound_plus_its_reduced_costs(seed: int) -> None:
    """Brute force: SizeClassBound.reduced_costs (what optimus-lagrange's repair fixes by): every plan
    admitting at least the bound's count costs at least the bound plus the reduced costs of the
    configurations it uses (so fixing against a plan never drops a configuration of a cheaper one).
    Seeds 18, 30, 34 and 39 are those of 0-39 where the classes lift the LP's bound (class prices
    not 0); seed 2's classes cut nothing the LP does not keep."""
    inst = random_rigid_typed_instance(seed, n_jobs=8)
    plans = list(_plans(inst))
    most = max(sum(o is not None for o in p) for p in plans)
    if most == 0:
        return
    model = compile_model(inst)
    _, cs, row_of = model.choices
    admit = None if most >= model.J else most
    lp = lp_bound(model, cs, admit=admit)
    got = size_class_proof(model, admit=admit, lp_basis=lp.lp.basis)  # solved even where the LP keeps the ranges
    assert got is not None
    if seed != 2:
        assert got.bound > lp.bound + 1e-6 and np.any(got.class_price != 0)
    fixing = got.reduced_costs(cs)
    assert np.all(fixing.rc >= -1e-9 * max(1.0, abs(got.bound)))
    kind = model.kind[row_of]
    where = {(int(cs.job[k]), int(kind[k]), int(cs.counts[k, 0])): k for k in range(cs.K)}
    checked = 0
    for p in plans:
        if sum(o is not None for o in p) < most:
            continue
        used = [where[(j, t, n)] for j, o in enumerate(p) if o is not None for t, n in [o]]
        total = float(np.sum(cs.cost[used]))
        assert total >= got.bound + float(fixing.rc[used].sum()) - 1e-7 * max(1.0, abs(total)), (p, total)
        checked += 1
    assert checked


def test_a_basis_of_other_configurations_is_not_used() -> None:
    """An LpBasis whose sizes are not the class LP's leaves it to start from scratch (no error)."""
    from schedopt.allocation.lagrange import LpBasis
    from schedopt.allocation.size_classes import _start_basis

    basis = LpBasis(np.zeros(3, dtype=np.int8), np.zeros(1, dtype=np.int8), np.ones(2, dtype=np.int8), 1)
    assert _start_basis(basis, 4, 2, 1, False, 1) is None
    rows = _start_basis(basis, 3, 2, 1, False, 2)[1]
    assert rows.tolist() == [1, 1, 0, 1, 1, 1]  # jobs', capacity, admission, two class rows basic


def _solved_by_classes() -> list[Instance]:
    out = []
    for seed in range(60):
        inst = random_rigid_typed_instance(seed, n_jobs=8)
        plan = schedopt.solve(inst, "optimus-milp", seed=0)
        if plan.certificate.bound.kind == "size-class-lagrangian":
            out.append(inst)
        if len(out) == 4:
            break
    return out


def test_exact_solvers_proven_by_the_classes_are_brute_force() -> None:
    """Where the size classes prove `optimus-milp`'s optimum, both exact solvers give brute force's value
    and `check --strict` replays the bound; the greedy's bound is the same kind there, never above."""
    found = _solved_by_classes()
    assert found, "no rigid typed instance of 8 jobs proven by the size classes in 60 seeds"
    for inst in found:
        admitted, total, _ = solve_bruteforce(inst)
        for solver in ("optimus-milp", "optimus-cpsat", "optimus-greedy"):
            plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
            assert not schedopt.check(inst, plan, strict=True), solver
            assert plan.objective.admitted == admitted
            assert plan.objective.bound <= total * (1 + 1e-9) + 1e-6
            if solver != "optimus-greedy":
                assert plan.status == schedopt.Status.OPTIMAL
                assert math.isclose(plan.objective.value, total, rel_tol=1e-9, abs_tol=1e-6), solver


def test_a_forged_class_bound_is_refused() -> None:
    """The checker recomputes the ranges and the bound from the instance: a plan stating more than the
    replay at its prices, a class that is no size, or a resource that is not one, is refused."""
    inst = _solved_by_classes()[0]
    plan = schedopt.solve(inst, "optimus-milp", seed=0)
    assert not schedopt.check(inst, plan, strict=True)
    for edit in ("prices", "pooled", "key"):
        forged = plan.model_copy(deep=True)
        proof = forged.certificate.bound
        if edit == "prices":  # any prices prove some bound: these prove less than the plan states
            proof.class_prices, proof.prices = {}, {}
        elif edit == "pooled":
            proof.pooled = "cpu"
        else:
            proof.class_prices = {**proof.class_prices, "1.5": 1e9}
        assert schedopt.check(inst, forged, strict=True), edit


def test_at_100_typed_jobs_the_classes_replace_the_tree() -> None:
    """`gavel` 100 jobs on 27 servers (108 GPUs), seed 0: the LP leaves 2.7 % (it admits two thirds of
    the dearest 1-GPU job and a third of a 4-GPU job in the last GPU); every plan admitting 87 jobs
    admits all 73 1-GPU jobs, 11 2-GPU jobs and three 4-GPU jobs, and the LP with those counts proves
    the optimum: both the greedy's and the exact solver's bound, no tree searched."""
    from schedopt.generate import generate_instance
    from tests.conftest import SHARED_DATA

    try:
        inst = generate_instance("gavel", jobs=100, servers=27, seed=0, data_dir=SHARED_DATA)
    except schedopt.InputError as exc:
        pytest.skip(f"needs ../shared/data (Gavel's throughputs, not redistributed): {str(exc).splitlines()[0]}")
    exact = assert_checked(inst, schedopt.solve(inst, "optimus-milp", seed=0))
    greedy = assert_checked(inst, schedopt.solve(inst, "optimus-greedy", seed=0))
    for plan in (exact, greedy):
        assert plan.certificate.bound.kind == "size-class-lagrangian"
        assert plan.metrics["size_classes"] == {"1": [73, 73], "2": [11, 11], "4": [3, 3], "8": [0, 0]}
        assert "branch_node_lps" not in plan.metrics
        assert not schedopt.check(inst, plan, strict=True)
    assert exact.status == schedopt.Status.OPTIMAL and exact.objective.gap <= 1e-6
    assert greedy.objective.gap <= 0.01
    assert greedy.objective.value >= exact.objective.value * (1 - 1e-9)


def _allowed(table: ConfigurationTable) -> list[tuple]:
    keep = np.isfinite(table.costs)
    return sorted(zip(table.t[keep].tolist(), table.owner[keep].tolist(), table.c0[keep].tolist(),
                      table.c1[keep].tolist(), table.costs[keep].tolist()))


@pytest.mark.parametrize("seed", range(10))
def test_the_models_table_is_the_checkers_where_every_job_is_rigid(seed: int) -> None:
    """``model_table`` reads a rigid model's choices instead of enumerating the instance again: the
    very configurations the checker's table allows at the same times (within rounding under the
    weighted objective), with jobs running (on their type or
    another: a move pays its restart) and the JCT-weighted objective; a job with a range of counts
    sends it to the checker's own table."""
    from schedopt.allocation.size_classes import model_table

    rng = np.random.default_rng(seed)
    doc = random_rigid_typed_instance(seed, n_jobs=9).to_dict()
    for job in doc["jobs"]:
        if rng.random() < 0.5:
            n = job["roles"]["worker"]["min"]
            job["running"] = {"worker": n}
            job["running_accelerator"] = str(rng.choice(list(job["speed_by_accelerator"])))
            job["restart_s"] = float(rng.integers(0, 400))
    if seed % 2:
        doc["policy"] = {"objective": "jct_weighted_time"}
    inst = Instance.from_dict(doc)
    model = compile_model(inst)
    mine, theirs = _allowed(model_table(model)), _allowed(_table(inst))
    assert [m[:4] for m in mine] == [t[:4] for t in theirs]
    # the same floats under Σ time; the weighted objective's products may round in another order
    assert np.allclose([m[4] for m in mine], [t[4] for t in theirs], rtol=1e-13, atol=0)
    if not seed % 2:
        assert mine == theirs
    doc["jobs"][0]["roles"]["worker"]["max"] = doc["jobs"][0]["roles"]["worker"]["min"] + 1
    elastic = compile_model(Instance.from_dict(doc))
    assert _allowed(model_table(elastic)) == _allowed(_table(elastic.instance))


def _paused_instances(count: int):
    """Small rigid typed instances where some job must be paused, with their brute-force optimum."""
    found = 0
    for seed in range(200):
        inst = random_rigid_typed_instance(seed, n_jobs=7)
        admitted, total, _ = solve_bruteforce(inst)
        if 0 < admitted < len(inst.jobs):
            yield seed, inst, admitted, total
            found += 1
            if found == count:
                return


@pytest.mark.parametrize("case", range(12))
def test_a_tree_with_class_priced_leaves_bounds_the_optimum_at_any_prices(case: int) -> None:
    """Where jobs must be paused, a branch search prices the size classes' ranges in its node LPs
    (every plan admitting as many keeps them, in every leaf): the tree it finds for the brute-force
    optimum replays at or below it, and so does the same tree with every leaf's class prices (and
    capacity and admission prices) replaced by random ones of any sign."""
    from schedopt.allocation.branching import branch_proof
    from schedopt.allocation.certificates import branch_replay

    seed, inst, admitted, total = list(_paused_instances(12))[case]
    plan = schedopt.solve(inst, "optimus-milp", seed=0)
    assert plan.objective.admitted == admitted and plan.objective.value == pytest.approx(total, rel=1e-9)
    got = branch_proof(inst, total, admit=admitted)
    if got is None:
        pytest.skip(f"seed {seed}: no tree within the budget")
    bound, proof, _ = got
    replay = branch_replay(remaining_time_grid, "min")
    assert replay(inst, plan, proof) == pytest.approx(bound, rel=1e-9, abs=1e-6)
    assert bound <= total * (1 + 1e-9) + 1e-6
    rng = np.random.default_rng(case)

    def shuffle(node: dict) -> None:
        if "prices" in node or not node:
            node["prices"] = {"gpu@" + k: float(rng.exponential(1e3)) for k in inst.accelerators}
            node["admit_price"] = float(rng.exponential(1e5))
            if proof.pooled is not None:
                node["class_prices"] = {str(s): float(rng.normal(0, 1e5)) for s in (1, 2, 4, 8)}
            return
        for key, child in node.items():
            if isinstance(child, dict):
                shuffle(child)

    forged = proof.model_copy(deep=True)
    shuffle(forged.tree)
    assert replay(inst, plan, forged) <= total * (1 + 1e-9) + 1e-6


def test_the_100_job_optimum_the_classes_leave_9e_5_short_of_gets_a_small_tree() -> None:
    """`gavel`, 100 jobs on 27 servers, seed 1: the size classes' bound stops 9e-5 below the optimum;
    the exact solver's branch certificate, its node LPs holding the class rows and its leaves their
    prices, needs a few node LPs (47 without them) and `check --strict` replays it."""
    from tests.conftest import SHARED_DATA
    from schedopt.generate import generate_instance

    try:
        inst = generate_instance("gavel", jobs=100, servers=27, seed=1, data_dir=SHARED_DATA)
    except schedopt.InputError as exc:
        pytest.skip(f"needs ../shared/data (Gavel's throughputs, not redistributed): {str(exc).splitlines()[0]}")
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-milp", seed=0))
    proof = plan.certificate.bound
    assert plan.status.value == "optimal" and proof.kind == "branch-lagrangian" and proof.pooled == "gpu"
    assert plan.metrics["branch_node_lps"] <= 10 and plan.objective.gap <= 1e-5


def test_forged_class_prices_in_a_tree_are_refused() -> None:
    """A tree's leaf carrying class prices without the proof naming its pooled resource, or class
    prices that are no map, is a violation (not a crash); so is a pooled resource that is not one."""
    from schedopt.allocation.branching import branch_proof

    for seed, inst, admitted, total in _paused_instances(40):  # the first whose tree prices the classes
        got = branch_proof(inst, total, admit=admitted)
        if got is not None and got[1].pooled is not None:
            break
    else:
        raise AssertionError("no small instance's tree priced the size classes")
    plan = schedopt.solve(inst, "optimus-milp", seed=0)
    honest = plan.model_copy(deep=True)
    honest.certificate.bound, honest.objective.bound = got[1], got[0]
    honest.objective.gap = None if plan.objective.value is None else max(0.0, (plan.objective.value - got[0]) / plan.objective.value)
    assert not schedopt.check(inst, honest, strict=True)
    for edit in ("no pooled", "not a map", "unknown pooled"):
        forged = honest.model_copy(deep=True)
        proof = forged.certificate.bound
        leaf = proof.tree
        while "prices" not in leaf:
            leaf = next(v for v in leaf.values() if isinstance(v, dict))
        leaf["class_prices"] = leaf.get("class_prices") or {"1": 1.0}
        if edit == "no pooled":
            proof.pooled = None
        elif edit == "not a map":
            leaf["class_prices"] = [1.0]
        else:
            proof.pooled = "tpu"
        assert schedopt.check(inst, forged, strict=True), edit


@pytest.mark.parametrize("case", range(10))
@pytest.mark.parametrize("objective", [None, "jct_weighted_time"])
def test_stage_models_with_the_class_rows_keep_the_optimum(case: int, objective: str | None) -> None:
    """The size classes' ranges as rows of the stage model (class_rows; every plan admitting the most
    keeps them): HiGHS and CP-SAT over the model's configurations with those rows find brute force's
    optimum, as they do without them; the rows cut something on these instances."""
    from schedopt.allocation.cpsat import CpSatBackend
    from schedopt.allocation.milp import HighsBackend
    from schedopt.allocation.size_classes import class_rows

    seed, inst, admitted, _ = list(_paused_instances(10))[case]
    if objective is not None:
        inst = inst.with_objective(objective)
        admitted, total, _ = solve_bruteforce(inst)
    else:
        _, total, _ = solve_bruteforce(inst)
    model = compile_model(inst)
    _, cs, _ = model.choices
    rows = class_rows(model, cs, admit=admitted)
    if rows is None:
        pytest.skip(f"seed {seed}: no size class is cut")
    assert len(rows.place) == cs.K and np.all(rows.lo <= rows.hi)
    for backend in (HighsBackend(rel_gap=1e-9, threads=1), CpSatBackend(1)):
        values = []
        for extra in (None, rows):
            res = backend.solve_stage(model.by_job, cs, stage="time", every_job=False, min_admitted=admitted,
                                      time_limit=None, seed=0, classes=extra)
            assert res.solution is not None and len(res.solution) == admitted
            values.append(float(cs.cost[res.solution].sum()))
            held = np.bincount(rows.place[res.solution][rows.place[res.solution] >= 0], minlength=len(rows.lo))
            if extra is not None:
                assert np.all(held >= rows.lo) and np.all(held <= rows.hi)
        for v in values:
            assert math.isclose(v, total, rel_tol=1e-6, abs_tol=1e-6), (type(backend).__name__, values, total)


@pytest.mark.parametrize("case", range(10))
def test_class_rows_of_a_neighbourhood_hold_for_each_of_its_plans(case: int) -> None:
    """class_rows over some jobs' configurations within a residual capacity (what the exact repair's
    neighbourhood models get): every plan of those jobs within that capacity admitting at least the
    stated count keeps each cut class's count in its range (brute force over their configurations)."""

    from schedopt.allocation.size_classes import class_rows
    from schedopt.tolerances import capacity_limit

    seed, inst, admitted, _ = list(_paused_instances(10))[case]
    rng = np.random.default_rng(case)
    model = compile_model(inst)
    _, cs_all, _ = model.choices
    hood = np.sort(rng.choice(model.J, size=max(2, model.J - 2), replace=False))
    inside = np.isin(cs_all.job, hood)
    cs = cs_all.subset(inside)
    others = np.setdiff1d(np.arange(model.J), hood)
    used = np.zeros(model.rows.R)
    for j in others.tolist():  # the jobs outside the neighbourhood each take their first configuration, if it fits
        k = int(cs_all.start[j])
        if k < cs_all.start[j + 1] and np.all(used + cs_all.use[k] <= model.rows.cap):
            used += cs_all.use[k]
    cap = model.rows.cap - used
    groups = [np.flatnonzero(cs.job == j) for j in hood.tolist()]
    checked = 0
    for admit in range(1, len(hood) + 1):
        rows = class_rows(model, cs, admit=admit, cap=cap)
        if rows is None:
            continue
        for pick in itertools.product(*[[-1, *g.tolist()] for g in groups]):
            chosen = [k for k in pick if k >= 0]
            if len(chosen) < admit or np.any(cs.use[chosen].sum(axis=0) > capacity_limit(cap)):
                continue
            place = rows.place[chosen]
            held = np.bincount(place[place >= 0], minlength=len(rows.lo))
            assert np.all(held >= rows.lo) and np.all(held <= rows.hi), (seed, admit, chosen)
            checked += 1
    if not checked:
        pytest.skip(f"seed {seed}: no class cut in any neighbourhood count")


@pytest.mark.parametrize("make", ["random_typed_instance", "random_quota_instance", "random_objective_instance",
                                  "random_tiny_instance"])
def test_class_rows_hold_for_every_plan_of_elastic_and_quota_instances(make: str) -> None:
    """class_rows where jobs have configurations of several sizes (elastic roles) or quota rows: every
    plan over the model's configurations within its capacity, admitting at least the stated count, keeps
    each cut class's count in its range (brute force over 25 seeds and every count)."""
    import schedopt.testing as testing
    from schedopt.allocation.size_classes import class_rows
    from schedopt.tolerances import capacity_limit

    checked = 0
    for seed in range(25):
        model = compile_model(getattr(testing, make)(seed))
        _, cs, _ = model.choices
        assert cs.K <= 40 and model.J <= 7, "the brute force below is sized for these generators"
        groups = [np.flatnonzero(cs.job == j) for j in range(model.J)]
        for admit in range(1, model.J + 1):
            rows = class_rows(model, cs, admit=admit)
            if rows is None:
                continue
            for pick in itertools.product(*[[-1, *g.tolist()] for g in groups]):
                chosen = [k for k in pick if k >= 0]
                if len(chosen) < admit or np.any(cs.use[chosen].sum(axis=0) > capacity_limit(model.by_job.cap)):
                    continue
                place = rows.place[chosen]
                held = np.bincount(place[place >= 0], minlength=len(rows.lo))
                assert np.all(held >= rows.lo) and np.all(held <= rows.hi), (seed, admit, chosen)
                checked += 1
    assert checked, f"{make}: no class cut on 25 seeds"
