"""Issue 48's forgeries, one test each: what `check --strict` accepted as proof, refused now."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.checking import check, check_report
from schedopt.instance import Instance
from schedopt.plan import Certificate, Plan, Proof, Status
from schedopt.registry import get_solver
from schedopt.testing.instances import random_tiny_instance

ROOT = Path(__file__).resolve().parents[1]


def _paths(violations) -> list[str]:
    return [v.path for v in violations]


def test_a_count_proof_cannot_prove_the_objective_bound(greedy_100) -> None:
    """§1: an lp-dual proof with huge prices "proved" 1e13 for objective.bound."""
    inst, plan = greedy_100
    forged = plan.model_copy(deep=True)
    forged.certificate.bound = Proof(kind="lp-dual", prices={r: 1e9 for r in inst.resources})
    forged.objective.bound, forged.objective.gap, forged.status = plan.objective.value, 0.0, Status.OPTIMAL
    violations = check(inst, forged, strict=True)
    assert "certificate.bound.kind" in _paths(violations)
    assert "lp-dual" in str(violations[_paths(violations).index("certificate.bound.kind")])


def test_a_bound_proof_cannot_prove_the_admitted_count() -> None:
    """§1: a lagrangian with admit 0 and no prices was accepted for admitted_bound."""
    inst = random_tiny_instance(0)  # 3 of its 4 jobs fit
    plan = get_solver("optimus-greedy").solve(inst, seed=0)
    forged = plan.model_copy(deep=True)
    forged.certificate.admitted_bound = Proof(kind="lagrangian", admit=0)
    assert "certificate.admitted_bound.kind" in _paths(check(inst, forged, strict=True))


def _roomy() -> Instance:
    doc = random_tiny_instance(7).to_dict()
    for server in doc["servers"]:
        server["capacity"] = {r: 10 * v for r, v in server["capacity"].items()}
    return Instance.from_dict(doc)


def test_an_empty_plan_is_not_optimal() -> None:
    """§2: 0 admitted, value 0, bound 0 (a true bound on plans admitting >= 0), "optimal"."""
    inst = _roomy()
    empty = Plan(instance=inst.name, solver="forger", status=Status.OPTIMAL, termination="optimal",
                 objective={"name": "total_remaining_time", "value": 0.0, "bound": 0.0, "gap": 0.0, "admitted": 0},
                 solve_seconds=0.0, paused=[j.id for j in inst.jobs],
                 certificate=Certificate(bound=Proof(kind="lagrangian", admit=0, prices={})))
    assert not check(inst, empty)  # its arithmetic holds...
    report = check_report(inst, empty, strict=True)
    assert "status" in _paths(report.unverified)  # ...but nothing proves no plan admits more
    assert "objective.gap" in _paths(report.unverified)


def test_pausing_a_job_that_fits_is_not_optimal() -> None:
    """§2: a plan pausing 1 job of many that all fit passed with gap 0; one stating that more
    may be admitted still passed as optimal."""
    inst = _roomy()
    best = get_solver("optimus-milp").solve(inst, seed=0)
    assert len(best.allocation) == len(inst.jobs) and not check(inst, best, strict=True)
    gone = sorted(best.allocation)[0]
    doc = best.to_dict()
    doc["allocation"].pop(gone)
    doc["paused"] = [gone]
    fewer = Plan.from_dict(doc)
    problem = schedopt.get_problem("allocation")
    fewer.objective.value = problem.objective_value(inst, fewer)
    fewer.objective.admitted = len(fewer.allocation)
    fewer.metrics = problem.metrics(inst, fewer)
    fewer.objective.bound, fewer.objective.gap, fewer.certificate = None, None, None
    fewer.objective.admitted_bound = None
    fewer.status = Status.OPTIMAL
    assert "status" in _paths(check(inst, fewer, strict=True))
    fewer.objective.admitted_bound = len(inst.jobs)  # says more fit: optimal contradicts it
    assert "status" in _paths(check(inst, fewer))


def _queued_untyped_with_running_type() -> Instance:
    """Queues, no accelerator types, a running job that names a type (issue 48 §3)."""
    doc = random_tiny_instance(4).to_dict()
    doc["queues"] = [{"name": "q", "quotas": {"default-flavor": {r: {"nominal": 1e6} for r in doc["resources"]}}}]
    for job in doc["jobs"]:
        job["queue"] = "q"
    job = doc["jobs"][0]
    job["running"] = {r: spec["min"] for r, spec in job["roles"].items()}
    job["running_accelerator"] = "v100"
    job["restart_s"] = 1000.0
    return Instance.from_dict(doc)


def test_one_job_one_time_on_a_queued_untyped_cluster() -> None:
    """§3: the solver and replay charged a restart for a type move the objective did not."""
    inst = _queued_untyped_with_running_type()
    assert inst.typed and not inst.has_types
    job = inst.jobs[0]
    assert not inst.moves_type(job, None)
    for solver in ("optimus-milp", "optimus-greedy"):
        plan = get_solver(solver).solve(inst, seed=0)
        assert not check(inst, plan), solver
    best = get_solver("optimus-milp").solve(inst, seed=0)
    assert best.status == Status.OPTIMAL
    assert not check(inst, best, strict=True)


def test_quality_plans_are_refused_on_typed_instances() -> None:
    """§4: a quality plan on a typed instance was "verified optimal" with a bound below its value."""
    from schedopt.generate import generate_instance

    doc = generate_instance("slaq", jobs=3, servers=1, seed=0, max_tasks=3).to_dict()
    honest = get_solver("slaq-greedy").solve(Instance.from_dict(doc), seed=0)
    for server in doc["servers"]:
        server["accelerator"] = "v100"
    typed = Instance.from_dict(doc)
    assert "problem" in _paths(check(typed, honest))
    with pytest.raises(schedopt.InputError):
        schedopt.solve(typed, "slaq-greedy")


def test_silence_fails_strict_for_a_solver_that_carries_a_bound(greedy_100) -> None:
    """§7: a plan stating no bound passed --strict with nothing verified."""
    inst, plan = greedy_100
    silent = plan.model_copy(deep=True)
    silent.objective.bound = silent.objective.gap = None
    silent.certificate = None
    assert not check(inst, silent)
    report = check_report(inst, silent, strict=True)
    assert "objective.bound" in _paths(report.unverified) and "objective.bound" in report.not_stated


def test_docs_table_of_carriers_matches_the_checker() -> None:
    """§6: docs/certificates.md's "Who carries which" names exactly the solvers the checker holds to a bound."""
    from schedopt.certification import CARRIES_BOUND

    text = (ROOT / "docs" / "certificates.md").read_text()
    section = text.split("## Who carries which", 1)[1].split("\n## ", 1)[0]
    carriers: set[str] = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[1] == "always":
            carriers |= {name.strip("` ") for name in cells[0].split(",") if name.strip().startswith("`")}
    assert carriers == set(CARRIES_BOUND)


def _tight_tenants(seed: int) -> Instance:
    """Gavel's jobs on two types with two queues whose GPU quotas hold a fraction of the cluster."""
    from schedopt.testing.instances import random_typed_instance

    doc = random_typed_instance(seed, n_jobs=6).to_dict()
    for server in doc["servers"]:
        server["capacity"]["gpu"] = 8.0
        server["capacity"]["cpu"] = 16.0
    doc["queues"] = [{"name": name, "quotas": {kind: {"gpu": {"nominal": 1.0}, "cpu": {"nominal": 16.0}}
                                               for kind in ("v100", "k80")}} for name in ("a", "b")]
    for i, job in enumerate(doc["jobs"]):
        job["queue"] = "ab"[i % 2]
    return Instance.from_dict(doc)


@pytest.mark.parametrize("solver", ["gavel-las", "gavel-max-sum-throughput", "gavel-finish-time-fairness"])
def test_gavel_rounds_keep_the_queues_quotas(solver: str) -> None:
    """§8: gavel-las exceeded a queue's quota on a tight tenants instance."""
    for seed in range(6):
        inst = _tight_tenants(seed)
        plan = schedopt.solve(inst, solver, seed=0)
        assert not check(inst, plan), (seed, [str(v) for v in check(inst, plan)])
        used = {q: 0 for q in "ab"}
        for job_id, counts in plan.allocation.items():
            job = inst.jobs[inst.job_index[job_id]]
            used[job.queue] += sum(n * job.roles[r].demand.get("gpu", 0.0) for r, n in counts.items())
        assert all(u <= 2.0 for u in used.values()), used  # 1 GPU per type and queue


@pytest.mark.parametrize("solver", ["gavel-las", "gavel-max-sum-throughput", "gavel-finish-time-fairness"])
def test_gavel_claims_only_what_holds_and_certifies_on_request(solver: str) -> None:
    """Gavel's policies state no bound by default (as Gavel); ``bound=true`` adds the certified
    bounds, on the right side of the brute-force optimum; "infeasible" only when no job can run
    (a round that places nothing is not a proof that nothing fits)."""
    from schedopt.allocation.bruteforce import solve_bruteforce
    from schedopt.registry import solver_info
    from schedopt.testing.instances import random_typed_instance

    carried = 0
    for seed in range(12):
        inst = random_typed_instance(seed)
        admitted, optimum, _ = solve_bruteforce(inst)
        plain = solver_info(solver).make().solve(inst, seed=0)
        assert plain.objective.bound is None and not check(inst, plain, strict=True)
        certified = solver_info(solver).make(bound=True).solve(inst, seed=0)
        assert certified.allocation == plain.allocation  # the option certifies, it does not change the round
        assert not check(inst, certified, strict=True), [str(v) for v in check(inst, certified, strict=True)]
        if certified.objective.bound is not None:
            carried += 1
            assert len(certified.allocation) == admitted
            assert certified.objective.bound <= optimum + 1e-6 * max(1.0, abs(optimum))
    assert carried >= 3
