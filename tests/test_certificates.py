"""Certificates (docs/certificates.md): every stated bound is proven by numbers
that schedopt.check replays from the instance alone; forged plans fail."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from schedopt.checking import check, check_report
from schedopt.cli import app
from schedopt.generate import generate_instance
from schedopt.instance import Instance, load_instance
from schedopt.plan import Plan, Status, load_plan, save_plan
from schedopt.registry import get_solver
from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]


def two_resource_quality(seed: int) -> Instance:
    """Issue 33's reproduction: SLAQ's 12 jobs on one server, plus a resource
    ``mem`` (capacity 20, every role's demand a random integer 1-4)."""
    data = generate_instance("slaq", jobs=12, servers=1, seed=seed, max_tasks=8).to_dict()
    rng = np.random.default_rng(seed)
    data["resources"] = list(data["resources"]) + ["mem"]
    for server in data["servers"]:
        server["capacity"]["mem"] = 20
    for job in data["jobs"]:
        for role in job["roles"].values():
            role.setdefault("demand", {})["mem"] = int(rng.integers(1, 5))
    return Instance.from_dict(data)


@pytest.mark.parametrize("seed", range(12))
def test_two_resource_quality_bound_is_never_below_the_optimum(seed: int) -> None:
    inst = two_resource_quality(seed)
    greedy = get_solver("slaq-greedy").solve(inst, seed=0)
    milp = get_solver("slaq-milp").solve(inst, seed=0)
    assert milp.status == Status.OPTIMAL
    assert greedy.objective.bound is not None
    assert greedy.objective.bound >= milp.objective.value - 1e-9  # an upper bound on the maximum
    report = check_report(inst, greedy)
    assert report.ok, report.violations
    assert any(line.startswith("objective.bound") for line in report.verified)
    assert greedy.certificate is not None and greedy.certificate.bound.kind == "lagrangian"


def test_minimal_two_job_case_from_the_issue() -> None:
    """2 jobs, resources cpu and mem: the greedy's bound is >= the proven optimum."""
    for seed in range(40):
        inst = two_resource_quality(seed)
        data = inst.to_dict()
        data["jobs"] = data["jobs"][:2]
        small = Instance.from_dict(data)
        greedy = get_solver("slaq-greedy").solve(small, seed=0)
        exact = get_solver("slaq-cpsat").solve(small, seed=0)
        if greedy.objective.bound is not None and exact.status == Status.OPTIMAL:
            assert greedy.objective.bound >= exact.objective.value - 1e-9
        assert not check(small, greedy)


@pytest.mark.parametrize("solver", ["optimus-greedy", "optimus-lagrange", "drf", "optimus-milp"])
def test_allocation_plans_carry_certificates_that_replay(solver: str) -> None:
    inst = load_instance(ROOT / "instances" / "optimus-100.yaml")
    plan = get_solver(solver).solve(inst, seed=0)
    report = check_report(inst, plan)
    assert report.ok and not report.unverified, (report.violations, report.unverified)
    assert plan.certificate is not None and plan.certificate.bound is not None
    assert plan.certificate.bound.kind == "lagrangian"


@pytest.mark.parametrize("solver", ["drf-containers", "swarm-static"])
def test_partition_heuristics_carry_a_replayable_bound(solver: str) -> None:
    inst = load_instance(ROOT / "instances" / "dorm-table2.yaml")
    plan = get_solver(solver).solve(inst, seed=0)
    assert plan.objective.bound is not None and plan.objective.bound >= plan.objective.value
    assert plan.certificate.bound.kind == "utilization-lagrangian"
    report = check_report(inst, plan)
    assert report.ok and report.verified and not report.unverified
    optimum = get_solver("dorm-milp").solve(inst, seed=0)
    assert plan.objective.bound >= optimum.objective.value - 1e-9


def test_admission_count_is_certified_when_jobs_are_paused() -> None:
    from schedopt.testing import random_packing_instance

    inst = random_packing_instance(3, n_jobs=60, servers=6)
    plan = get_solver("optimus-greedy").solve(inst, seed=0)
    assert plan.objective.admitted < len(inst.jobs)
    assert plan.certificate.admitted_bound.kind == "lp-dual"
    report = check_report(inst, plan)
    assert report.ok
    assert any(line.startswith("objective.admitted_bound") for line in report.verified)
    forged = plan.model_copy(deep=True)
    forged.objective.admitted_bound = plan.objective.admitted  # claim the count is proven maximal
    if math.floor(forged.certificate.admitted_bound.value + 1e-9) > plan.objective.admitted:
        assert any(v.path == "objective.admitted_bound" for v in check(inst, forged))


def _forge(plan: Plan, **objective) -> Plan:
    out = plan.model_copy(deep=True)
    for key, value in objective.items():
        setattr(out.objective, key, value)
    return out


def test_forged_bound_gap_and_status_fail(greedy_100) -> None:
    inst, plan = greedy_100
    assert not check(inst, plan)
    value = plan.objective.value
    forged = _forge(plan, bound=value, gap=0.0)
    forged.status = Status.OPTIMAL
    violations = check(inst, forged)
    assert [v.path for v in violations] == ["objective.bound"]
    # the gap shrunk alone: the gap formula fails
    assert any(v.path == "objective.gap" for v in check(inst, _forge(plan, gap=0.0)))
    # status raised alone: optimal with an open gap
    raised = plan.model_copy(deep=True)
    raised.status = Status.OPTIMAL
    assert any(v.path == "status" for v in check(inst, raised))


def test_edited_certificate_fails(greedy_100) -> None:
    inst, plan = greedy_100
    edited = plan.model_copy(deep=True)
    edited.certificate.bound.prices = {r: 1.5 * p for r, p in edited.certificate.bound.prices.items()}
    assert any(v.path == "objective.bound" for v in check(inst, edited))
    negative = plan.model_copy(deep=True)
    negative.certificate.bound.prices = {r: -1.0 for r in negative.certificate.bound.prices}
    assert any(v.path == "certificate.bound" for v in check(inst, negative))
    unknown = plan.model_copy(deep=True)
    unknown.certificate.bound.kind = "trust-me"
    assert any(v.path == "certificate.bound.kind" for v in check(inst, unknown))


def test_missing_certificate_is_not_verified_and_strict_fails(greedy_100) -> None:
    inst, plan = greedy_100
    bare = plan.model_copy(deep=True)
    bare.certificate = None
    assert check(inst, bare) == []
    report = check_report(inst, bare)
    assert [v.path for v in report.unverified] == ["objective.bound"]
    assert [v.path for v in check(inst, bare, strict=True)] == ["objective.bound"]


def test_backend_certificate_is_reported_as_not_verified(greedy_100) -> None:
    from schedopt.plan import Certificate, Proof

    inst, plan = greedy_100
    claimed = plan.model_copy(deep=True)
    claimed.certificate = Certificate(bound=Proof(kind="backend", backend="pyomo+highs"))
    report = check_report(inst, claimed)
    assert report.ok
    assert "pyomo+highs" in report.unverified[0].message


def test_plan_without_certificate_still_loads(tmp_path: Path, greedy_100) -> None:
    inst, plan = greedy_100
    data = plan.to_dict()
    data.pop("certificate")
    old = Plan.from_dict(data)
    assert old.certificate is None
    save_plan(plan, tmp_path / "p.yaml")
    loaded = load_plan(tmp_path / "p.yaml")
    assert loaded.certificate.bound.kind == plan.certificate.bound.kind
    assert loaded.certificate.bound.prices == pytest.approx(plan.certificate.bound.prices, rel=1e-9)
    assert check(inst, loaded) == []  # the written plan still replays


def test_cli_check_names_the_forged_field(tmp_path: Path, greedy_100) -> None:
    inst, plan = greedy_100
    forged = _forge(plan, bound=plan.objective.value, gap=0.0)
    forged.status = Status.OPTIMAL
    save_plan(forged, tmp_path / "forged.yaml")
    save_plan(plan, tmp_path / "plan.yaml")
    runner = CliRunner()
    instance_file = str(ROOT / "instances" / "optimus-100.yaml")
    bad = runner.invoke(app, ["check", instance_file, str(tmp_path / "forged.yaml")])
    assert bad.exit_code == 1
    lines = [line for line in bad.output.splitlines() if line.startswith("violation")]
    assert len(lines) == 1 and "objective.bound" in lines[0]
    good = runner.invoke(app, ["check", instance_file, str(tmp_path / "plan.yaml")])
    assert good.exit_code == 0 and "verified objective.bound" in good.output
    bare = plan.model_copy(deep=True)
    bare.certificate = None
    save_plan(bare, tmp_path / "bare.yaml")
    assert runner.invoke(app, ["check", instance_file, str(tmp_path / "bare.yaml")]).exit_code == 0
    strict = runner.invoke(app, ["check", "--strict", instance_file, str(tmp_path / "bare.yaml")])
    assert strict.exit_code == 1 and "not verified" in strict.output


def test_optimus_lagrange_declares_its_time_limit() -> None:
    from schedopt.registry import solver_info

    assert solver_info("optimus-lagrange").supports_time_limit


def test_assert_gap_when_nothing_fits() -> None:
    from schedopt.testing import assert_gap, make_instance, two_role_job

    job = two_role_job("big", {"form": "optimus-sync", "theta": [1, 1, 1, 1, 1], "batch": 32}, 1000,
                       worker={"cpu": 100, "gpu": 1}, ps={"cpu": 100, "gpu": 0})
    inst = make_instance([job], {"cpu": 8, "gpu": 2}, name="nothing-fits")
    report = assert_gap(inst, "optimus-milp", max_gap=0.0)
    assert report.gap == 0.0


def test_large_price_on_a_resource_of_capacity_zero_still_replays() -> None:
    """Found by the hypothesis property: a job needing a GPU on a cluster without
    one drives the GPU's price up; the stated bound accounts for the checker's
    capacity tolerance, so the replay proves it."""
    from schedopt.testing import make_instance, two_role_job

    jobs = [two_role_job("j0", {"form": "optimus-sync", "theta": [0, 0, 0, 0, 3.0], "batch": 16}, 128, pmax=1, wmax=1,
                         worker={"cpu": 1, "gpu": 1}, ps={"cpu": 2, "gpu": 0}),
            two_role_job("j1", {"form": "optimus-sync", "theta": [0, 0, 0, 0, 1.0], "batch": 16}, 1, pmax=1, wmax=1,
                         worker={"cpu": 1, "gpu": 0}, ps={"cpu": 1, "gpu": 0})]
    inst = make_instance(jobs, {"cpu": 2, "gpu": 0}, name="no-gpu")
    for solver in ("optimus-greedy", "optimus-lagrange", "drf", "optimus-milp", "optimus-cpsat"):
        plan = get_solver(solver).solve(inst, seed=0)
        assert check(inst, plan) == [], solver


@pytest.mark.skipif(not (SHARED_DATA / "measured").is_dir(),
                    reason="the dl2 family reads measured speeds from ../shared/data/measured (not in the repository)")
def test_exact_optimum_near_its_lp_bound_states_the_replayable_bound() -> None:
    """dl2, 1,000 jobs: the optimum sits 3.2e-6 above the LP bound (over a million configurations,
    too many for a branch certificate). Within REPLAYABLE_GAP (1e-5) the plan states the LP's bound,
    which check replays, so --strict verifies `optimal`; the backend's tighter bound stays a metric."""
    from schedopt.plan import relative_gap
    from schedopt.tolerances import OPTIMAL_GAP, REPLAYABLE_GAP

    inst = generate_instance("dl2", jobs=1000, servers=250, seed=31, data_dir=str(SHARED_DATA))
    plan = get_solver("optimus-milp").solve(inst)
    assert plan.status == Status.OPTIMAL
    assert plan.certificate.bound.kind == "lagrangian"
    gap = relative_gap(plan.objective.value, plan.objective.bound)
    assert 1e-6 < gap <= REPLAYABLE_GAP < OPTIMAL_GAP
    assert plan.objective.bound <= plan.metrics["backend_bound"] <= plan.objective.value
    report = check_report(inst, plan, strict=True)
    assert report.ok and not report.unverified


def _typed_running_instance(seed: int) -> Instance:
    """random_typed_instance's jobs, some running now (some on another type than the one priced),
    some with a restart cost; by seed, under the average-JCT objective."""
    from schedopt.testing.instances import random_typed_instance

    rng = np.random.default_rng(700 + seed)
    doc = random_typed_instance(seed, max_tasks=4).to_dict()
    for job in doc["jobs"]:
        if rng.random() < 0.7:
            job["running"] = {name: int(rng.integers(role["min"], role["max"] + 1)) for name, role in job["roles"].items()}
            job["running_accelerator"] = str(rng.choice(["v100", "k80"]))
            job["restart_s"] = float(rng.integers(0, 401))
    if seed % 2:
        doc["policy"] = {**(doc.get("policy") or {}), "objective": "jct_weighted_time"}
    return Instance.from_dict(doc)


@pytest.mark.parametrize("family", ["typed-running", "restart", "objective", "quota", "tiny"])
@pytest.mark.parametrize("seed", range(8))
def test_remaining_time_block_is_one_call_per_job(family: str, seed: int) -> None:
    """configuration_blocks prices the allocation objective of every job at once
    (remaining_time_block): the very floats one remaining_time_grid call per job (as it runs on
    the type) gives, restarts, moves between types and objective weights included."""
    from schedopt.allocation import certificates as C
    from schedopt.testing import instances as I

    make = {"typed-running": _typed_running_instance, "restart": I.random_restart_instance,
            "objective": I.random_objective_instance, "quota": I.random_quota_instance,
            "tiny": I.random_tiny_instance}[family]
    instance = make(seed)
    data = C.job_arrays(instance)
    kinds = instance.accelerators if instance.typed else [None]
    for t, owner, c0, c1, costs in C.configuration_blocks(instance, C.remaining_time_grid, data):
        want = np.full(len(owner), np.inf)
        for j in np.unique(owner).tolist():
            seg = owner == j
            job = instance.jobs[j]
            if instance.typed:
                if instance.speed_on(job, kinds[t]) is None:
                    continue
                job = instance.job_on(job, kinds[t])
            want[seg] = C.remaining_time_grid(instance, job, c0[seg], c1[seg])
        assert np.array_equal(costs, want), (family, seed, kinds[t])
