"""Tenants' queues and quotas (issue 39 §1; Kueue's ClusterQueue semantics): every
allocation solver respects them, the exact ones equal brute force, `check` verifies
each queue's and cohort's rows and replays the certificates priced per quota row."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import schedopt
from schedopt.allocation.bruteforce import solve_bruteforce_typed
from schedopt.testing import random_typed_instance
from schedopt.testing.instances import random_cohort_tree_instance, random_quota_instance
from tests.conftest import assert_checked


def _kueue_doc(*, lend: float | None = None, borrow: float | None = None) -> schedopt.Instance:
    """docs/concepts/cluster_queue: team-a 9 CPUs, team-b 12, one cohort."""
    def job(i: str, queue: str, steps: float) -> dict:
        return {"id": i, "queue": queue, "roles": {"worker": {"demand": {"cpu": 1}, "min": 1, "max": 6}},
                "speed": {"form": "amdahl", "serial": 0.01, "parallel": 1.0}, "remaining_steps": steps}
    qa: dict = {"nominal": 9} if borrow is None else {"nominal": 9, "borrowing_limit": borrow}
    qb: dict = {"nominal": 12} if lend is None else {"nominal": 12, "lending_limit": lend}
    return schedopt.Instance.from_dict({
        "name": "kueue-doc", "resources": ["cpu"], "servers": [{"name": "s", "count": 4, "capacity": {"cpu": 8}}],
        "jobs": [job("a0", "team-a", 1000), job("a1", "team-a", 2000), job("b0", "team-b", 100)],
        "queues": [{"name": "team-a", "cohort": "team-ab", "quotas": {"default-flavor": {"cpu": qa}}},
                   {"name": "team-b", "cohort": "team-ab", "quotas": {"default-flavor": {"cpu": qb}}}]})


def _team_usage(plan: schedopt.Plan, prefix: str) -> int:
    return sum(c["worker"] for j, c in plan.allocation.items() if j.startswith(prefix))


@pytest.mark.parametrize("kw", [{"lend": 1}, {"borrow": 1}])
@pytest.mark.parametrize("solver", ["optimus-milp", "optimus-cpsat", "optimus-greedy", "optimus-lagrange", "drf", "fifo"])
def test_the_kueue_docs_limits_hold(kw: dict, solver: str) -> None:
    """With team-b lending at most 1 CPU (or team-a borrowing at most 1), team-a uses at most 9 + 1."""
    inst = _kueue_doc(**kw)
    plan = assert_checked(inst, schedopt.solve(inst, solver))
    assert _team_usage(plan, "a") <= 10
    if solver.startswith("optimus"):
        assert _team_usage(plan, "a") == 10 and _team_usage(plan, "b") == 6


def test_without_limits_a_cohort_shares_everything() -> None:
    inst = _kueue_doc()
    plan = assert_checked(inst, schedopt.solve(inst, "optimus-milp"))
    assert _team_usage(plan, "a") == 12 and plan.status == schedopt.Status.OPTIMAL


def _with_queues(seed: int) -> schedopt.Instance:
    return random_quota_instance(seed)  # schedopt.testing's quota kit instance


@pytest.mark.parametrize("kit,seed", [(random_quota_instance, s) for s in range(10)]
                         + [(random_cohort_tree_instance, s) for s in range(6)])
def test_exact_with_quotas_equals_bruteforce_and_check_replays_the_prices(kit: Any, seed: int) -> None:
    """Flat cohorts (the quota kit) and cohort trees (hierarchical cohorts, tests/test_cohort_tree.py)."""
    inst = kit(seed)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    for solver in ["optimus-milp", "optimus-cpsat"]:
        plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0))
        assert plan.objective.admitted == admitted
        if admitted:
            assert plan.objective.value == pytest.approx(total, rel=1e-6, abs=1e-6)
        if plan.certificate and plan.certificate.bound and plan.certificate.bound.kind != "backend":
            assert not schedopt.check(inst, plan, strict=True)
    for heuristic in ["optimus-greedy", "optimus-lagrange"]:
        plan = assert_checked(inst, schedopt.solve(inst, heuristic))
        assert plan.objective.admitted <= admitted
        if plan.objective.admitted == admitted and admitted:
            assert plan.objective.value >= total - 1e-6 * max(1.0, total)
        if plan.objective.bound is not None and admitted:
            assert plan.objective.bound <= total + 1e-6 * max(1.0, total)


def test_an_over_quota_plan_fails_check_naming_the_row() -> None:
    inst = _kueue_doc(lend=1)
    plan = schedopt.solve(inst, "optimus-milp")
    forged = plan.model_copy(deep=True)
    forged.allocation["a0"]["worker"] = 6  # team-a at 12 > 9 + 1
    paths = [v.path for v in schedopt.check(inst, forged)]
    assert "queues.cohort[team-ab]:cpu@default-flavor without team-b" in paths


def test_a_flavor_a_queue_does_not_cover_cannot_be_used() -> None:
    doc = random_typed_instance(4, n_jobs=3).to_dict()
    for job in doc["jobs"]:
        job["queue"] = "only-v100"
        job.pop("speed", None)
        job["speed_by_accelerator"] = {"v100": {"form": "amdahl", "serial": 0.1, "parallel": 1.0},
                                       "k80": {"form": "amdahl", "serial": 0.1, "parallel": 3.0}}
        job["roles"] = {"worker": {"demand": {"cpu": 1.0, "gpu": 1.0}, "min": 1, "max": 2}}
    doc["queues"] = [{"name": "only-v100", "quotas": {"v100": {"gpu": {"nominal": 8}, "cpu": {"nominal": 8}}}}]
    inst = schedopt.Instance.from_dict(doc)
    for solver in ["optimus-milp", "optimus-greedy", "optimus-lagrange", "drf"]:
        plan = assert_checked(inst, schedopt.solve(inst, solver))
        assert set((plan.accelerators or {}).values()) <= {"v100"}


@pytest.mark.parametrize("field,value,message", [
    ("queue", "nope", "unknown queue"),
    ("flavor", "a100", "unknown flavor"),
    ("lending", 20, "exceeds the nominal quota"),
])
def test_bad_queues_are_refused_naming_the_field(field: str, value: object, message: str) -> None:
    doc = _kueue_doc().to_dict()
    if field == "queue":
        doc["jobs"][0]["queue"] = value
    elif field == "flavor":
        doc["queues"][0]["quotas"][value] = {"cpu": {"nominal": 1}}
    else:
        doc["queues"][1]["quotas"]["default-flavor"]["cpu"]["lending_limit"] = value
    with pytest.raises(schedopt.InputError, match=message):
        schedopt.Instance.from_dict(doc)


def test_kueue_admission_follows_the_docs_examples() -> None:
    """Full requests first, the largest partial count that fits after, within quota and borrowing."""
    plan = assert_checked(_kueue_doc(lend=1), schedopt.solve(_kueue_doc(lend=1), "kueue-admission"))
    assert plan.allocation == {"a0": {"worker": 6}, "a1": {"worker": 4}, "b0": {"worker": 6}}
    strict = schedopt.solve(_kueue_doc(lend=1), "kueue-admission", queueing_strategy="StrictFIFO", partial_admission=False)
    assert strict.allocation == {"a0": {"worker": 6}, "b0": {"worker": 6}}  # a1's full 6 does not fit: team-a blocks


def test_strict_fifo_blocks_a_queue_behind_its_head_best_effort_does_not() -> None:
    doc = _kueue_doc().to_dict()
    doc["queues"] = [{"name": "team-a", "quotas": {"default-flavor": {"cpu": {"nominal": 8}}}}]
    doc["jobs"] = [{**doc["jobs"][0], "id": "big", "queue": "team-a", "arrival": 0.0,
                    "roles": {"worker": {"demand": {"cpu": 1}, "min": 10, "max": 10}}},
                   {**doc["jobs"][1], "id": "small", "queue": "team-a", "arrival": 1.0}]
    inst = schedopt.Instance.from_dict(doc)
    best = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    strict = assert_checked(inst, schedopt.solve(inst, "kueue-admission", queueing_strategy="StrictFIFO"))
    assert list(best.allocation) == ["small"] and strict.allocation == {}


def test_kueue_takes_the_first_flavor_that_fits_in_the_queues_order() -> None:
    doc = random_typed_instance(2, n_jobs=2).to_dict()
    for job in doc["jobs"]:
        job.pop("speed_by_accelerator", None)
        job["speed"] = {"form": "amdahl", "serial": 0.1, "parallel": 1.0}
        job["roles"] = {"worker": {"demand": {"gpu": 1.0}, "min": 1, "max": 1}}
        job["queue"] = "q"
    for srv in doc["servers"]:
        srv["capacity"] = {"cpu": 8.0, "gpu": 4.0}
    doc["queues"] = [{"name": "q", "quotas": {"k80": {"gpu": {"nominal": 1}}, "v100": {"gpu": {"nominal": 4}}}}]
    inst = schedopt.Instance.from_dict(doc)
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    assert sorted(plan.accelerators.values()) == ["k80", "v100"]  # k80 listed first: the first job there


@pytest.mark.parametrize("seed", range(8))
def test_kueue_admission_never_beats_the_optimum(seed: int) -> None:
    inst = _with_queues(seed)
    admitted, total, _, _ = solve_bruteforce_typed(inst)
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    assert plan.objective.admitted <= admitted
    if plan.objective.admitted == admitted and admitted:
        assert plan.objective.value >= total - 1e-6 * max(1.0, total)


def test_plans_export_as_workload_admissions_that_validate_against_the_crd() -> None:
    import jsonschema
    import yaml

    from schedopt.allocation.kueue import workload_admissions
    from tests.conftest import SHARED_DATA

    crd_path = SHARED_DATA / "kueue" / "crds" / "kueue.x-k8s.io_workloads.yaml"
    if not crd_path.is_file():
        pytest.skip("needs ../shared/data/kueue (Kueue's CRD schemas, not redistributed)")
    crd = yaml.load(crd_path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (safe)
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta2")["schema"]["openAPIV3Schema"]
    validator = jsonschema.validators.validator_for(schema)(schema)  # built once: jsonschema.validate re-checks the schema each call
    for inst in (_kueue_doc(lend=1), _with_queues(3)):
        plan = schedopt.solve(inst, "optimus-milp")
        workloads = workload_admissions(inst, plan)
        assert len(workloads) == len(plan.allocation)
        for wl in workloads:
            validator.validate(wl)
            job = inst.jobs[inst.job_index[wl["metadata"]["name"]]]
            assert wl["status"]["admission"]["clusterQueue"] == job.queue
            counts = {a["name"]: a["count"] for a in wl["status"]["admission"]["podSetAssignments"]}
            assert counts == plan.allocation[job.id]
        bad = dict(workloads[0], status={"admission": {"clusterQueue": "Not A Name!"}})
        with pytest.raises(jsonschema.ValidationError):
            validator.validate(bad)
        queue = schedopt.solve(inst, "kueue-admission")  # with --pending: every job, the pending ones saying why
        everything = workload_admissions(inst, queue, pending=True)
        assert len(everything) == len(inst.jobs)
        for wl in everything:
            validator.validate(wl)
            if "admission" not in wl["status"]:
                (condition,) = wl["status"]["conditions"]
                assert (condition["type"], condition["status"], condition["reason"]) == ("QuotaReserved", "False", "Pending")
                assert condition["message"] == queue.metrics["pending"][wl["metadata"]["name"]]


def test_quota_what_if_reports_the_plan_before_and_after() -> None:
    from schedopt.whatif import quota_what_if

    inst = _kueue_doc(lend=1)
    report = quota_what_if(inst, queue="team-a", flavor="default-flavor", resource="cpu", nominal=12)
    assert report["nominal_before"] == 9 and report["after"]["queue_usage"]["team-a"]["cpu@default-flavor"] == 12
    assert report["after"]["total_remaining_time_s"] < report["before"]["total_remaining_time_s"]
    with pytest.raises(schedopt.InputError, match="unknown queue"):
        quota_what_if(inst, queue="team-z", flavor="default-flavor", resource="cpu", nominal=1)


def test_what_if_quota_verb_prints_both_plans_and_refuses_bad_options(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from typer.testing import CliRunner

    from schedopt.cli import app
    from schedopt.instance import save_instance

    path = tmp_path / "kd.yaml"
    save_instance(_kueue_doc(lend=1), path)
    runner = CliRunner()
    res = runner.invoke(app, ["what-if", "quota", str(path), "--queue", "team-a", "--resource", "cpu",
                              "--nominal", "12", "--format", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["before"]["queue_usage"]["team-a"]["cpu@default-flavor"] == 10  # 9 + the 1 team-b lends
    assert report["after"]["queue_usage"]["team-a"]["cpu@default-flavor"] == 12
    assert report["after"]["total_remaining_time_s"] < report["before"]["total_remaining_time_s"]
    for args, field in [(["--queue", "team-z"], "--queue"), (["--queue", "team-a", "--flavor", "h100"], "--flavor"),
                        (["--queue", "team-a", "--resource", "tpu"], "--resource"),
                        (["--queue", "team-a", "--solver", "optimus-placement"], "--solver")]:
        res = runner.invoke(app, ["what-if", "quota", str(path), "--nominal", "12", *args])
        assert res.exit_code == 2 and res.output.startswith(f"error: {field}"), res.output
        assert "Traceback" not in res.output
    bare = tmp_path / "bare.yaml"
    doc = _kueue_doc().to_dict()
    doc.pop("queues")
    for job in doc["jobs"]:
        job.pop("queue")
    save_instance(schedopt.Instance.from_dict(doc), bare)
    res = runner.invoke(app, ["what-if", "quota", str(bare), "--queue", "team-a", "--nominal", "1"])
    assert res.exit_code == 2 and "has no queues" in res.output


def test_philly_tenants_family_has_queues_in_a_cohort_and_simulates_within_quotas() -> None:
    from schedopt.generate import generate_instance
    from schedopt.sim import simulate
    from tests.conftest import SHARED_DATA

    try:
        inst = generate_instance("philly-tenants", jobs=16, servers=2, seed=1, data_dir=SHARED_DATA)
    except schedopt.InputError as exc:
        pytest.skip(f"needs ../shared/data (the Philly trace, not redistributed): {str(exc).splitlines()[0]}")
    assert len(inst.queues) == 4 and {q.cohort for q in inst.queues} == {"philly"}
    assert all(job.queue for job in inst.jobs) and inst.accelerators == ["v100", "k80"]
    for solver in ["kueue-admission", "optimus-greedy"]:
        result = simulate(inst, solver, interval_s=3600.0, check_plans=True)
        assert result.check_violations == 0 and result.finished == len(inst.jobs)


def _preemption_doc(*, within: str = "Never", reclaim: str = "Never", low_weight: float = 1.0,
                    low_arrival: float = 0.0) -> schedopt.Instance:
    """21 CPUs; team-a (nominal 9) has a pending 6-CPU job; team-b (nominal 12) runs b1 (12 CPUs)
    and b2 (9, borrowed from team-a); team-a also runs `low` (3 CPUs, its own quota)."""
    def job(i: str, queue: str, cpus: int, *, running: bool, weight: float = 1.0, arrival: float = 0.0) -> dict:
        out = {"id": i, "queue": queue, "weight": weight, "arrival": arrival,
               "roles": {"worker": {"demand": {"cpu": 1}, "min": cpus, "max": cpus}},
               "speed": {"form": "amdahl", "serial": 0.01, "parallel": 1.0}, "remaining_steps": 1000.0}
        if running:
            out["running"] = {"worker": cpus}
        return out
    policy = {"within_cluster_queue": within, "reclaim_within_cohort": reclaim}
    return schedopt.Instance.from_dict({
        "name": "preemption", "resources": ["cpu"], "servers": [{"name": "s", "count": 3, "capacity": {"cpu": 7}}],
        "jobs": [job("b1", "team-b", 12, running=True), job("b2", "team-b", 6, running=True, arrival=5.0),
                 job("low", "team-a", 3, running=True, weight=low_weight, arrival=low_arrival),
                 job("a0", "team-a", 6, running=False, weight=2.0, arrival=1.0)],
        "queues": [{"name": "team-a", "cohort": "ab", "preemption": policy, "quotas": {"default-flavor": {"cpu": {"nominal": 9}}}},
                   {"name": "team-b", "cohort": "ab", "quotas": {"default-flavor": {"cpu": {"nominal": 12}}}}]})


def test_kueue_admission_preempts_only_when_the_queue_enables_it() -> None:
    """Kueue's default (Never) leaves the running workloads; a0 waits."""
    plan = assert_checked(_preemption_doc(), schedopt.solve(_preemption_doc(), "kueue-admission"))
    assert "a0" not in plan.allocation and plan.metrics["preempted"] == []


def test_reclaim_within_cohort_evicts_the_borrowing_queues_newest_workload() -> None:
    """a0 (6 CPUs, within team-a's nominal 9) reclaims: b2 borrows team-a's quota and is evicted;
    b1 (team-b's own nominal) and team-a's `low` stay."""
    inst = _preemption_doc(reclaim="Any")
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    assert plan.metrics["preempted"] == ["b2"]
    assert set(plan.allocation) == {"b1", "low", "a0"}
    # LowerPriority: b2's priority (1) is below a0's (2), so the same; at equal priority nothing moves
    assert schedopt.solve(_preemption_doc(reclaim="LowerPriority"), "kueue-admission").metrics["preempted"] == ["b2"]
    doc = _preemption_doc(reclaim="LowerPriority").to_dict()
    doc["jobs"][3]["weight"] = 1.0
    inst = schedopt.Instance.from_dict(doc)
    assert assert_checked(inst, schedopt.solve(inst, "kueue-admission")).metrics["preempted"] == []


@pytest.mark.parametrize(("policy", "low_weight", "low_arrival", "evicted"), [
    ("LowerPriority", 1.0, 0.0, True),
    ("LowerPriority", 2.0, 9.0, False),  # equal priority: never under LowerPriority
    ("LowerOrNewerEqualPriority", 2.0, 9.0, True),  # equal priority, newer than a0: evicted
    ("LowerOrNewerEqualPriority", 2.0, 0.0, False),  # equal priority, older: kept
])
def test_within_cluster_queue_evicts_lower_priority_or_newer(policy: str, low_weight: float, low_arrival: float,
                                                             evicted: bool) -> None:
    """team-b runs 15 CPUs (3 borrowed), team-a's `low` 5 of its nominal 9: a0 (6) fits only once
    `low` goes (12 + 3 + 6 = 21), and reclaiming is off, so `low` is the one candidate."""
    doc = _preemption_doc(within=policy, low_weight=low_weight, low_arrival=low_arrival).to_dict()
    doc["jobs"][1]["roles"]["worker"].update(min=3, max=3)
    doc["jobs"][1]["running"] = {"worker": 3}
    doc["jobs"][2]["roles"]["worker"].update(min=5, max=5)
    doc["jobs"][2]["running"] = {"worker": 5}
    inst = schedopt.Instance.from_dict(doc)
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    assert plan.metrics["preempted"] == (["low"] if evicted else [])
    assert ("a0" in plan.allocation) == evicted


def test_preemption_is_read_from_a_cluster_queue(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from schedopt.kueue_import import import_kueue

    path = tmp_path / "cq.yaml"
    path.write_text("""apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: ab
  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 9}]}]
""")
    inst = import_kueue([path])
    assert inst.queues[0].preemption.within_cluster_queue == "LowerPriority"
    assert inst.queues[0].preemption.reclaim_within_cohort == "Any"
    path.write_text(path.read_text().replace("reclaimWithinCohort: Any", "reclaimWithinCohort: Sometimes"))
    with pytest.raises(schedopt.InputError, match="reclaim_within_cohort"):
        import_kueue([path])


def test_queue_share_is_what_a_queue_got_of_min_demand_and_nominal() -> None:
    from schedopt.sim import simulate
    from schedopt.sim.result import SimulationResult
    from schedopt.sim.simulator import queue_shares

    inst = _kueue_doc(lend=1)
    demand, used, nominal = np.array([[12.0], [6.0], [0.0]]), np.array([[10.0], [3.0], [0.0]]), np.array([[9.0], [12.0], [5.0]])
    assert queue_shares(inst, demand, used, nominal) == [1.0, 0.5, None]  # over nominal counts as 1; no demand: None
    # Kueue admits a1 partially (4 of 6 CPUs) and never grows an admitted workload: once a0 is done
    # (4 intervals in), team-a asks 6 and gets 4 for the last 6 of 10 intervals: 0.4 + 0.6 * 4/6 = 0.8
    result = simulate(inst, "kueue-admission", interval_s=60.0, check_plans=True)
    assert result.check_violations == 0 and result.plans == 10
    assert result.queue_share == pytest.approx({"team-a": 0.8, "team-b": 1.0})
    assert result.queue_below_share == pytest.approx({"team-a": 0.6, "team-b": 0.0})
    assert SimulationResult.from_dict(result.to_dict()).queue_share == result.queue_share
    exact = simulate(inst, "optimus-milp", interval_s=60.0)  # re-sizes a1 to 6 each round
    assert exact.queue_share == {"team-a": 1.0, "team-b": 1.0}


# ---- flavor fungibility (cluster_queue.md, "FlavorFungibility"; issue 52 §2) -------------------

def _fungibility_doc(**team_a: str) -> schedopt.Instance:
    """Two flavors in team-a's order: `reserved` (team-a nominal 4 CPUs, where it runs `low`,
    priority 1) and `spot` (team-a nominal 0, team-b's 8 idle CPUs to borrow). The pending a0
    (4 CPUs, priority 2) can preempt `low` on `reserved` without borrowing, or fit on `spot` by
    borrowing."""
    def job(i: str, *, running: str | None, weight: float) -> dict:
        out = {"id": i, "queue": "team-a", "weight": weight,
               "roles": {"worker": {"demand": {"cpu": 1}, "min": 4, "max": 4}},
               "speed": {"form": "amdahl", "serial": 0.01, "parallel": 1.0}, "remaining_steps": 1000.0}
        if running:
            out["running"], out["running_accelerator"] = {"worker": 4}, running
        return out
    return schedopt.Instance.from_dict({
        "name": "fungibility", "resources": ["cpu"],
        "servers": [{"name": "r", "capacity": {"cpu": 4}, "accelerator": "reserved"},
                    {"name": "s", "capacity": {"cpu": 8}, "accelerator": "spot"}],
        "jobs": [job("low", running="reserved", weight=1.0), job("a0", running=None, weight=2.0)],
        "queues": [{"name": "team-a", "cohort": "ab", "preemption": {"within_cluster_queue": "LowerPriority"},
                    "quotas": {"reserved": {"cpu": {"nominal": 4}}, "spot": {"cpu": {"nominal": 0}}}, **team_a},
                   {"name": "team-b", "cohort": "ab", "quotas": {"spot": {"cpu": {"nominal": 8}}}}]})


@pytest.mark.parametrize(("settings", "a0_on", "evicted"), [
    ({}, "spot", []),  # Kueue's defaults: borrowing is preferred to preemption
    ({"when_can_borrow": "TryNextFlavor", "when_can_preempt": "TryNextFlavor"}, "spot", []),
    ({"when_can_borrow": "TryNextFlavor", "when_can_preempt": "TryNextFlavor",
      "fungibility_preference": "PreemptionOverBorrowing"}, "reserved", ["low"]),
    ({"when_can_preempt": "MayStopSearch"}, "reserved", ["low"]),  # the search stops at the first flavor
])
def test_flavor_fungibility_chooses_between_borrowing_and_preemption(settings: dict, a0_on: str,
                                                                    evicted: list[str]) -> None:
    inst = _fungibility_doc(**settings)
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    assert plan.accelerators["a0"] == a0_on and plan.metrics["preempted"] == evicted
    # the same settings as the solver's options, for queues that state none
    again = schedopt.solve(_fungibility_doc(), "kueue-admission", **settings)
    assert again.accelerators["a0"] == a0_on and again.metrics["preempted"] == evicted


def test_preemption_for_the_full_count_before_partial_admission() -> None:
    """Kueue searches a count whole, preemption included, before trying a smaller one: a0 asks
    4 CPUs (at least 2) where `low` (priority 1) runs 2 of 4: `low` is evicted and a0 gets 4."""
    doc = _fungibility_doc().to_dict()
    doc["servers"] = [{"name": "r", "capacity": {"cpu": 4}, "accelerator": "reserved"}]
    doc["queues"] = [{"name": "team-a", "preemption": {"within_cluster_queue": "LowerPriority"},
                      "quotas": {"reserved": {"cpu": {"nominal": 4}}}}]
    doc["jobs"][0]["roles"]["worker"].update(min=2, max=2)
    doc["jobs"][0]["running"] = {"worker": 2}
    doc["jobs"][1]["roles"]["worker"]["min"] = 2
    inst = schedopt.Instance.from_dict(doc)
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    assert plan.allocation["a0"] == {"worker": 4} and plan.metrics["preempted"] == ["low"]


def test_fungibility_is_read_from_a_cluster_queue(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from schedopt.kueue_import import import_kueue

    from tests.test_kueue_rules import setup

    path = tmp_path / "cq.yaml"
    path.write_text(setup({"cpu": 4}, extra="flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: Preempt, "
                                            "preference: PreemptionOverBorrowing}"))
    queue = import_kueue([path]).queues[0]
    assert (queue.when_can_borrow, queue.when_can_preempt, queue.fungibility_preference) == (
        "TryNextFlavor", "MayStopSearch", "PreemptionOverBorrowing")
    path.write_text(path.read_text().replace("preference: PreemptionOverBorrowing", "preference: Sometimes"))
    with pytest.raises(schedopt.InputError, match="flavorFungibility.preference"):
        import_kueue([path])
    with pytest.raises(schedopt.InputError, match="when_can_preempt"):
        schedopt.get_solver("kueue-admission", when_can_preempt="Always")
