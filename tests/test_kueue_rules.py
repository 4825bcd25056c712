"""Kueue as Kueue reads it (issue 52): one small manifest set per rule and the decision Kueue makes
on it (the situations follow Kueue's own scheduler tests; the manifests are ours), and hostile
manifests refused in one line naming the file, the object and the field, with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import schedopt
from schedopt.cli import app
from schedopt.kueue_import import import_kueue
from tests.conftest import assert_checked

SETUP = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  {extra}
  resourceGroups:
  - coveredResources: [{resources}]
    flavors:
    - name: default-flavor
      resources:
{quotas}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""


def setup(quotas: dict[str, object], extra: str = "") -> str:
    lines = "\n".join(f"      - name: {r}\n        nominalQuota: {q}" for r, q in quotas.items())
    return SETUP.replace("{resources}", ", ".join(quotas)).replace("{quotas}", lines).replace("{extra}", extra)


def job(name: str, *, parallelism: int = 1, resources: str = "requests: {cpu: 1}", labels: str = "",
        extra_spec: str = "", pod_extra: str = "") -> str:
    return f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  labels: {{kueue.x-k8s.io/queue-name: lq{labels}}}
spec:
  parallelism: {parallelism}
  {extra_spec}
  template:
    spec:
      {pod_extra}
      containers:
      - name: c
        image: busybox
        resources: {{{resources}}}
      restartPolicy: Never
"""


def load(tmp_path: Path, *docs: str) -> schedopt.Instance:
    path = tmp_path / "manifests.yaml"
    path.write_text("\n---\n".join(d.strip("\n") for d in docs))
    return import_kueue([path])


def admitted(inst: schedopt.Instance) -> dict[str, dict[str, int]]:
    return assert_checked(inst, schedopt.solve(inst, "kueue-admission")).allocation


# ---- pod requests as Kubernetes computes them (issue 52 §1) --------------------------------------

def test_limits_alone_are_the_requests(tmp_path: Path) -> None:
    """Two 4-GPU jobs whose containers state only limits, under a 4-GPU quota: one is admitted."""
    gpu = "limits: {cpu: 1, nvidia.com/gpu: 4}"
    inst = load(tmp_path, setup({"cpu": 10, "nvidia.com/gpu": 4}), job("a", resources=gpu), job("b", resources=gpu))
    assert inst.jobs[0].roles["worker"].demand == {"cpu": 1.0, "nvidia.com/gpu": 4.0}
    assert list(admitted(inst)) == ["a"]


def test_a_request_beside_a_limit_wins(tmp_path: Path) -> None:
    inst = load(tmp_path, setup({"cpu": 10}), job("a", resources="requests: {cpu: 1}, limits: {cpu: 3}"))
    assert inst.jobs[0].roles["worker"].demand == {"cpu": 1.0}


def test_init_containers_and_overhead(tmp_path: Path) -> None:
    """A pod requests max(largest init container, sum of containers) plus its overhead."""
    pod = "overhead: {cpu: 250m}\n      initContainers:\n      - {name: i, image: busybox, resources: {requests: {cpu: 3, memory: 1Gi}}}"
    inst = load(tmp_path, setup({"cpu": 10, "memory": "10Gi"}),
                job("a", resources="requests: {cpu: 1, memory: 2Gi}", pod_extra=pod))
    assert inst.jobs[0].roles["worker"].demand == {"cpu": 3.25, "memory": 2.0}


def test_the_pods_resource_limits_admission(tmp_path: Path) -> None:
    """`pods: 3` in the ClusterQueue: three 2-pod jobs, one admitted (2 + 2 > 3)."""
    inst = load(tmp_path, setup({"cpu": 100, "pods": 3}), *(job(n, parallelism=2) for n in "abc"))
    assert inst.jobs[0].roles["worker"].demand == {"cpu": 1.0, "pods": 1.0}
    assert list(admitted(inst)) == ["a"]


def test_completions_below_parallelism(tmp_path: Path) -> None:
    """parallelism 8, completions 2: Kueue counts 2 pods."""
    inst = load(tmp_path, setup({"cpu": 10}), job("a", parallelism=8, extra_spec="completions: 2"))
    assert inst.jobs[0].roles["worker"].max_count == 2


MPI = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {{name: pi, namespace: default, labels: {{kueue.x-k8s.io/queue-name: lq}}}}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template: {{spec: {{containers: [{{name: l, image: x, resources: {{limits: {{cpu: {launcher}}}}}}}]}}}}
    Worker:
      replicas: 2
      template: {{spec: {{containers: [{{name: w, image: x, resources: {{limits: {{cpu: 1}}}}}}]}}}}
"""


def test_an_mpijobs_launcher_is_a_pod(tmp_path: Path) -> None:
    inst = load(tmp_path, setup({"cpu": 10}), MPI.format(launcher=1))
    assert inst.jobs[0].roles["worker"].max_count == 3  # the launcher and two workers, all alike
    with pytest.raises(schedopt.InputError, match="Launcher, Worker request differently"):
        load(tmp_path, setup({"cpu": 10}), MPI.format(launcher=2))


# ---- Kueue's settings (issue 52 §2) --------------------------------------------------------------

WORKLOAD = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {{name: {name}, namespace: default{created}}}
spec:
  queueName: lq
  {priority}
  podSets:
  - name: main
    count: {count}
    {min_count}
    template: {{spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: 1}}}}}}]}}}}
"""


def workload(name: str, count: int = 1, priority: int | None = None, created: str | None = None,
             min_count: int | None = None) -> str:
    return WORKLOAD.format(name=name, count=count, priority=f"priority: {priority}" if priority is not None else "",
                           created=f", creationTimestamp: '{created}'" if created else "",
                           min_count=f"minCount: {min_count}" if min_count is not None else "")


def test_priority_decides(tmp_path: Path) -> None:
    """Room for one: the priority-1000 Workload is admitted though listed after the priority-1 one."""
    inst = load(tmp_path, setup({"cpu": 1}), workload("low", priority=1), workload("high", priority=1000))
    assert list(admitted(inst)) == ["high"]


def test_priority_classes(tmp_path: Path) -> None:
    """A WorkloadPriorityClass on the job's label, a PriorityClass on its pods."""
    classes = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 10000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 5
"""
    inst = load(tmp_path, setup({"cpu": 1}), classes, job("plain", pod_extra="priorityClassName: batch"),
                job("urgent", labels=", kueue.x-k8s.io/priority-class: urgent"))
    assert list(admitted(inst)) == ["urgent"]
    with pytest.raises(schedopt.InputError, match="no PriorityClass 'nope'"):
        load(tmp_path, setup({"cpu": 1}), job("a", pod_extra="priorityClassName: nope"))


def test_creation_time_decides_among_equals(tmp_path: Path) -> None:
    inst = load(tmp_path, setup({"cpu": 1}), workload("newer", created="2026-11-26T10:00:05Z"),
                workload("older", created="2026-11-26T10:00:00Z"))
    assert {j.id: j.arrival for j in inst.jobs} == {"newer": 5.0, "older": 0.0}
    assert list(admitted(inst)) == ["older"]


def test_min_count_admits_partially(tmp_path: Path) -> None:
    """A 12-pod Workload with minCount 4 under 8 CPUs: Kueue admits 8."""
    inst = load(tmp_path, setup({"cpu": 8}), workload("w", count=12, min_count=4))
    assert admitted(inst) == {"w": {"worker": 8}}


def test_strict_fifo_per_queue(tmp_path: Path) -> None:
    """A head that does not fit blocks a StrictFIFO queue; BestEffortFIFO admits the next one."""
    docs = [workload("big", count=5, created="2026-11-26T10:00:00Z"), workload("small", created="2026-11-26T10:00:01Z")]
    strict = load(tmp_path, setup({"cpu": 2}, extra="queueingStrategy: StrictFIFO"), *docs)
    assert strict.queues[0].queueing_strategy == "StrictFIFO"
    assert admitted(strict) == {}
    best = load(tmp_path, setup({"cpu": 2}), *docs)
    assert list(admitted(best)) == ["small"]


def test_kubectl_list_output(tmp_path: Path) -> None:
    items = "apiVersion: v1\nkind: List\nitems:\n" + "\n".join(
        "- " + "\n  ".join(workload(n).strip("\n").splitlines()) for n in ("a", "b"))
    inst = load(tmp_path, setup({"cpu": 4}), items)
    assert [j.id for j in inst.jobs] == ["a", "b"]


# ---- hostile manifests (issue 52 §6) --------------------------------------------------------------

HOSTILE = {
    "kind: 5": ("apiVersion: v1\nkind: 5\nmetadata: {name: x}", ".kind"),
    "lower-case kind": ("apiVersion: batch/v1\nkind: job\nmetadata: {name: x}", "kind job is not read"),
    "unknown kind": ("apiVersion: x/v1\nkind: Frobnicator\nmetadata: {name: x}", "kind Frobnicator is not read"),
    "RayJob": ("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}", "kind RayJob (Ray) is not read"),
    "parallelism abc": (job("a").replace("parallelism: 1", "parallelism: abc"), "spec.parallelism"),
    "parallelism 0": (job("a", parallelism=0), "spec.parallelism"),
    "parallelism -3": (job("a", parallelism=-3), "spec.parallelism"),
    "spec a list": ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec: [1, 2]", "spec"),
    "metadata a string": ("apiVersion: batch/v1\nkind: Job\nmetadata: hello\nspec: {}", "Job.metadata"),
    "job without spec": ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}", "spec.template"),
    "containers not a list": (job("a").replace("      containers:\n      - name: c\n        image: busybox\n        resources: {requests: {cpu: 1}}",
                                               "      containers: {name: c}"), "containers"),
    "requests a list": (job("a", resources="requests: [1, 2]"), "resources.requests"),
    "gpu 100m": (job("a", resources="requests: {nvidia.com/gpu: 100m}"), "whole number"),
    "replicas: two": (MPI.format(launcher=1).replace("replicas: 2", "replicas: two"), "Worker.replicas"),
    "name missing": ("apiVersion: batch/v1\nkind: Job\nmetadata: {namespace: default}\nspec: {}", "metadata.name"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_manifests_are_refused_in_one_line(case: str, tmp_path: Path) -> None:
    text, field = HOSTILE[case]
    path, out = tmp_path / "bad.yaml", tmp_path / "out.yaml"
    path.write_text(setup({"cpu": 10}) + "\n---\n" + text.strip("\n"))
    res = CliRunner().invoke(app, ["import", "kueue", str(path), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert field in res.output and "Traceback" not in res.output and str(path) in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize("quota,field", [(".nan", "finite"), (".inf", "finite"), ("-4", ">= 0")])
def test_bad_quotas_are_refused(quota: str, field: str, tmp_path: Path) -> None:
    with pytest.raises(schedopt.InputError, match=field):
        load(tmp_path, setup({"cpu": quota}))


def test_queue_structure_refusals(tmp_path: Path) -> None:
    with pytest.raises(schedopt.InputError, match="a second ClusterQueue named 'cq'"):
        load(tmp_path, setup({"cpu": 1}), setup({"cpu": 2}).split("---")[1])
    groups_map = setup({"cpu": 1}).replace("  resourceGroups:\n  - coveredResources", "  resourceGroups:\n    x:\n      coveredResources")
    with pytest.raises(schedopt.InputError, match="resourceGroups"):
        load(tmp_path, groups_map)
    nameless = setup({"cpu": 1}).replace("    - name: default-flavor", "    - nominal: 1")
    with pytest.raises(schedopt.InputError, match=r"flavors\[0\].name"):
        load(tmp_path, nameless)
    borrow = setup({"cpu": 1}).replace("nominalQuota: 1", "nominalQuota: 1\n        borrowingLimit: 1")
    with pytest.raises(schedopt.InputError, match="without a cohort"):
        load(tmp_path, borrow)


def test_a_yaml_error_in_a_later_document_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(setup({"cpu": 1}) + "\n---\nkind: Job\nmetadata: {name: [unclosed\n")
    lines = path.read_text().splitlines()
    with pytest.raises(schedopt.InputError, match=rf"line {len(lines) + 1}|line {len(lines)}"):
        import_kueue([path])


TEAM_B_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: team-b}
spec: {clusterQueue: cq}
"""


def test_the_same_name_in_two_namespaces_is_two_jobs_and_exports_back(tmp_path: Path) -> None:
    """Issue 52: ids are names, and namespace/name where two namespaces share a name; each resolves
    its own namespace's LocalQueue; the export writes each back into its namespace, and a re-import
    gives the same ids. One name twice in one namespace (two kinds) is still refused."""
    import yaml

    other = workload("w", count=2).replace("namespace: default", "namespace: team-b")
    inst = load(tmp_path, setup({"cpu": 4}), TEAM_B_QUEUE, workload("w"), other, workload("solo"))
    assert sorted(j.id for j in inst.jobs) == ["default/w", "solo", "team-b/w"]
    assert {j.id: j.roles["worker"].max_count for j in inst.jobs}["team-b/w"] == 2
    assert {j.queue for j in inst.jobs} == {"cq"}
    plan = schedopt.solve(inst, "kueue-admission")
    assert set(plan.allocation) == {"default/w", "solo", "team-b/w"}
    inst_path, plan_path, out = tmp_path / "i.yaml", tmp_path / "p.yaml", tmp_path / "w.yaml"
    schedopt.save_instance(inst, inst_path)
    schedopt.save_plan(plan, plan_path)
    res = CliRunner().invoke(app, ["export", "kueue", str(inst_path), str(plan_path), "--out", str(out)])
    assert res.exit_code == 0, res.output
    where = sorted((d["metadata"]["namespace"], d["metadata"]["name"]) for d in yaml.safe_load_all(out.read_text()))
    assert where == [("default", "solo"), ("default", "w"), ("team-b", "w")]
    queues = tmp_path / "queues.yaml"
    queues.write_text(setup({"cpu": 4}) + "\n---\n" + TEAM_B_QUEUE.strip("\n"))
    again = import_kueue([queues, out])  # the exported Workloads alone, now admitted
    assert sorted(j.id for j in again.jobs if j.running) == ["default/w", "solo", "team-b/w"]
    with pytest.raises(schedopt.InputError, match="two workloads named 'default/w'"):  # a Workload and a Job
        load(tmp_path, setup({"cpu": 4}), workload("w"), job("w"))


# ---- export integrity (issue 52 §7) ----------------------------------------------------------------

def test_export_names_quantities_and_conditions() -> None:
    from schedopt.allocation.kueue import k8s_label, quantity, unique_names

    assert unique_names(["Job_1", "job-1", "JOB.1"]) == {"Job_1": "job-1", "job-1": "job-1-2", "JOB.1": "job.1"}
    long = ["a" * 300 + "x", "a" * 300 + "y"]
    names = unique_names(long)
    assert len(set(names.values())) == 2 and all(len(n) <= 253 for n in names.values())
    assert k8s_label("Worker.Main") == "worker-main"
    assert quantity(123456.789, "cpu") == "123456789m" and quantity(0.5, "cpu") == "500m"
    assert quantity(1 / 3, "cpu") == "0.333333333333"


def test_export_keeps_the_request_and_refuses_a_failing_plan(tmp_path: Path) -> None:
    import yaml

    inst = load(tmp_path, setup({"cpu": 8}), workload("w", count=12, min_count=4))
    inst_path, plan_path, out = tmp_path / "i.yaml", tmp_path / "p.yaml", tmp_path / "w.yaml"
    schedopt.save_instance(inst, inst_path)
    plan = schedopt.solve(inst, "kueue-admission")
    schedopt.save_plan(plan, plan_path)
    res = CliRunner().invoke(app, ["export", "kueue", str(inst_path), str(plan_path), "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = next(yaml.safe_load_all(out.read_text()))
    assert doc["spec"]["podSets"][0]["count"] == 12  # the request
    assert doc["status"]["admission"]["podSetAssignments"][0]["count"] == 8  # what was admitted
    assert [c["type"] for c in doc["status"]["conditions"]] == ["QuotaReserved", "Admitted"]
    over = plan.model_copy(update={"allocation": {"w": {"worker": 12}}})
    schedopt.save_plan(over, plan_path)
    out.unlink()
    res = CliRunner().invoke(app, ["export", "kueue", str(inst_path), str(plan_path), "--out", str(out)])
    assert res.exit_code == 2 and "fails check" in res.output and not out.exists()


# ---- what-if on an imported cluster (issue 52 §8) ---------------------------------------------------

def test_what_if_on_a_cluster_made_of_quotas(tmp_path: Path) -> None:
    """No Node objects: the capacity is the quotas'. Raising the quota 1 -> 2 CPUs admits the second
    job only when the capacity grows with it (--grow-capacity); lowering a lending queue to 0 works."""
    from schedopt.whatif import quota_what_if

    cohort = "cohort: c"
    inst = load(tmp_path, setup({"cpu": 1}, extra=cohort), workload("a"), workload("b"))
    same = quota_what_if(inst, queue="cq", flavor="default-flavor", resource="cpu", nominal=2, solver="kueue-admission")
    assert same["after"]["admitted"] == 1
    grown = quota_what_if(inst, queue="cq", flavor="default-flavor", resource="cpu", nominal=2, solver="kueue-admission",
                          grow_capacity=True)
    assert grown["before"]["admitted"] == 1 and grown["after"]["admitted"] == 2
    lending = load(tmp_path, setup({"cpu": 1}, extra=cohort).replace("nominalQuota: 1", "nominalQuota: 1\n        lendingLimit: 1"),
                   workload("a"))
    zero = quota_what_if(lending, queue="cq", flavor="default-flavor", resource="cpu", nominal=0, solver="kueue-admission")
    assert zero["after"]["admitted"] == 0


# ---- which flavors a workload may take: taints, tolerations, node selector, affinity (issue 52 §2) ----
# The situations follow Kueue's flavor assigner tests ("skips flavor with untolerated taint", "flavor's
# own tolerations", "node affinity / selector skips a flavor"); the manifests are ours.

def two_flavors(*, spot_taints: str = "[{key: spot, value: 'true', effect: NoSchedule}]", spot_tolerations: str = "[]",
                only_spot: bool = False) -> str:
    """Flavors ``spot`` (tainted, labelled instance-type: spot) listed first and ``on-demand``; one queue
    with 4 CPUs of each (``only_spot``: spot only)."""
    flavors = [("spot", 4)] + ([] if only_spot else [("on-demand", 4)])
    rows = "\n".join(f"    - name: {f}\n      resources:\n      - {{name: cpu, nominalQuota: {n}}}" for f, n in flavors)
    return f"""
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {{name: spot}}
spec:
  nodeLabels: {{instance-type: spot, zone: a}}
  nodeTaints: {spot_taints}
  tolerations: {spot_tolerations}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {{name: on-demand}}
spec: {{nodeLabels: {{instance-type: on-demand}}}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
{rows}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: lq, namespace: default}}
spec: {{clusterQueue: cq}}
"""


def flavor_of(inst: schedopt.Instance, name: str) -> str | None:
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    return (plan.accelerators or {}).get(name) if name in plan.allocation else None


@pytest.mark.parametrize("pod_extra,flavor", [
    ("", "on-demand"),  # no toleration: the tainted first flavor is skipped
    ("tolerations: [{key: spot, operator: Exists}]", "spot"),
    ("tolerations: [{key: spot, operator: Equal, value: 'true', effect: NoSchedule}]", "spot"),
    ("tolerations: [{key: spot, value: 'false'}]", "on-demand"),  # Equal with another value
    ("tolerations: [{key: spot, operator: Exists, effect: NoExecute}]", "on-demand"),  # another effect
    ("tolerations: [{operator: Exists}]", "spot"),  # an empty key with Exists tolerates every taint
])
def test_flavor_taints_need_a_toleration(pod_extra: str, flavor: str, tmp_path: Path) -> None:
    inst = load(tmp_path, two_flavors(), job("a", pod_extra=pod_extra))
    assert flavor_of(inst, "a") == flavor


def test_a_flavors_own_tolerations_and_soft_taints(tmp_path: Path) -> None:
    """Taints the flavor's own tolerations cover are not considered; PreferNoSchedule is ignored."""
    covered = load(tmp_path, two_flavors(spot_tolerations="[{key: spot, operator: Exists}]"), job("a"))
    assert flavor_of(covered, "a") == "spot" and covered.jobs[0].allowed_flavors is None
    soft = load(tmp_path, two_flavors(spot_taints="[{key: spot, effect: PreferNoSchedule}]"), job("a"))
    assert flavor_of(soft, "a") == "spot"


@pytest.mark.parametrize("pod_extra,flavor", [
    ("nodeSelector: {instance-type: on-demand}", "on-demand"),
    ("nodeSelector: {instance-type: spot}", "spot"),
    ("nodeSelector: {kubernetes.io/arch: amd64}", "spot"),  # a key no flavor labels: ignored
    ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
     "[{matchExpressions: [{key: instance-type, operator: In, values: [on-demand]}]}]}}}", "on-demand"),
    ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
     "[{matchExpressions: [{key: instance-type, operator: NotIn, values: [spot]}]}]}}}", "on-demand"),
    ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
     "[{matchExpressions: [{key: zone, operator: Exists}]}]}}}", "spot"),  # on-demand has no zone label: ignored there
    # two terms are ORed; a term left with no expression on the flavor's keys matches it
    ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
     "[{matchExpressions: [{key: instance-type, operator: In, values: [on-demand]}]}, "
     "{matchExpressions: [{key: gpu, operator: Exists}]}]}}}", "spot"),
])
def test_node_selector_and_affinity_choose_flavors(pod_extra: str, flavor: str, tmp_path: Path) -> None:
    tolerant = "tolerations: [{key: spot, operator: Exists}]\n      " + pod_extra
    inst = load(tmp_path, two_flavors(), job("a", pod_extra=tolerant))
    assert flavor_of(inst, "a") == flavor


def test_a_workload_no_flavor_admits_stays_pending_and_checks_refuse_it_there(tmp_path: Path) -> None:
    """Only the tainted flavor in the queue: an intolerant job stays pending (every solver), and a
    plan that puts it there fails `check`, naming the job."""
    inst = load(tmp_path, two_flavors(only_spot=True), job("a"), job("b", pod_extra="tolerations: [{key: spot, operator: Exists}]"))
    assert inst.jobs[0].allowed_flavors == ["on-demand"]  # no ClusterQueue lists it: the queue's quotas refuse it there
    for solver in ("kueue-admission", "optimus-greedy", "optimus-milp"):
        plan = assert_checked(inst, schedopt.solve(inst, solver))
        assert "a" not in plan.allocation and plan.allocation["b"] == {"worker": 1}
    forged = plan.model_copy(update={"allocation": {**plan.allocation, "a": {"worker": 1}},
                                     "accelerators": {**(plan.accelerators or {}), "a": "spot"}})
    assert any("allocation.a" in str(v) for v in schedopt.check(inst, forged)), schedopt.check(inst, forged)


@pytest.mark.parametrize("bad,field", [
    ("tolerations: [{key: spot, operator: Maybe}]", "tolerations[0].operator"),
    ("tolerations: [{key: spot, operator: Exists, value: x}]", "tolerations[0].value"),
    ("tolerations: [{value: x}]", "tolerations[0].key"),
    ("tolerations: {key: spot}", "spec.tolerations"),
    ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
     "[{matchExpressions: [{key: a, operator: Near, values: [b]}]}]}}}", "matchExpressions[0].operator"),
    ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
     "[{matchExpressions: [{key: a, operator: Gt, values: [b]}]}]}}}", "matchExpressions[0].values"),
])
def test_bad_scheduling_fields_are_refused(bad: str, field: str, tmp_path: Path) -> None:
    with pytest.raises(schedopt.InputError, match=field.replace("[", r"\[").replace("]", r"\]")):
        load(tmp_path, two_flavors(), job("a", pod_extra=bad))
    with pytest.raises(schedopt.InputError, match=r"nodeTaints\[0\].effect"):
        load(tmp_path, two_flavors(spot_taints="[{key: spot, effect: Sometimes}]"))


def test_allowed_flavors_survive_the_export_round_trip(tmp_path: Path) -> None:
    """An intolerant job admitted on on-demand exports with its allowed flavors (an annotation) and
    re-imports with the same ones, still kept off spot."""
    from schedopt.allocation.kueue import workload_admissions

    inst = load(tmp_path, two_flavors(), job("a"), job("b", pod_extra="tolerations: [{key: spot, operator: Exists}]"))
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    assert plan.accelerators == {"a": "on-demand", "b": "spot"}
    import yaml
    flavors_cq = two_flavors().split("---")[:3]
    again = load(tmp_path, *flavors_cq, yaml.safe_dump_all(workload_admissions(inst, plan)))
    assert {j.id: j.allowed_flavors for j in again.jobs} == {"a": ["on-demand"], "b": None}
    assert {j.id: j.running_accelerator for j in again.jobs} == {"a": "on-demand", "b": "spot"}


def test_export_with_pending_round_trips_the_whole_queue(tmp_path: Path) -> None:
    """`schedopt export kueue --pending`: the admitted Workloads and the pending ones (QuotaReserved
    False, with why); a re-import gives every job back, the admitted running and the others pending."""
    inst_path, plan_path, out = tmp_path / "i.yaml", tmp_path / "p.yaml", tmp_path / "w.yaml"
    manifests = tmp_path / "m.yaml"
    manifests.write_text("\n---\n".join([setup({"cpu": 2}).strip("\n"), workload("a", count=2).strip("\n"),
                                          workload("b").strip("\n")]))
    assert CliRunner().invoke(app, ["import", "kueue", str(manifests), "--out", str(inst_path)]).exit_code == 0
    assert CliRunner().invoke(app, ["solve", str(inst_path), "--solver", "kueue-admission", "--out", str(plan_path)]).exit_code == 0
    res = CliRunner().invoke(app, ["export", "kueue", str(inst_path), str(plan_path), "--out", str(out), "--pending"])
    assert res.exit_code == 0 and "2 Workloads (1 pending)" in res.output, res.output
    again = load(tmp_path, setup({"cpu": 2}), out.read_text())
    assert {j.id: j.running for j in again.jobs} == {"a": {"worker": 2}, "b": None}


# ---- why a workload is pending (issue 52: explain-style output) -------------------------------------

def test_pending_workloads_say_which_flavor_quota_and_rule(tmp_path: Path) -> None:
    """Each pending workload's reason names the flavor tried and the row that stops it (the queue's
    quota with its numbers, or the servers), the allowed_flavors that keep it off a flavor, or the
    StrictFIFO head it waits behind; `schedopt solve` prints them with each queue's usage."""
    inst = load(tmp_path, two_flavors(only_spot=True), job("a"),
                job("b", parallelism=5, pod_extra="tolerations: [{key: spot, operator: Exists}]"))
    pending = schedopt.solve(inst, "kueue-admission").metrics["pending"]
    assert pending["a"] == "flavor spot: not among the job's allowed_flavors ['on-demand']"
    assert pending["b"] == "flavor spot: servers: cpu@spot: needs 5, 4 of 4 free"
    strict = load(tmp_path, setup({"cpu": 2}, extra="queueingStrategy: StrictFIFO"),
                  workload("head", count=3, created="2026-01-01T00:00:00Z"), workload("next", created="2026-01-01T00:00:01Z"))
    pending = schedopt.solve(strict, "kueue-admission").metrics["pending"]
    assert pending == {"head": "flavor default-flavor: servers: cpu@default-flavor: needs 3, 2 of 2 free",
                       "next": "StrictFIFO: queue cq's head head does not fit, and blocks it"}
    partial = load(tmp_path, setup({"cpu": 2}), workload("a", count=3, min_count=1, created="2026-01-01T00:00:00Z"),
                   workload("b", count=2, min_count=1, created="2026-01-01T00:00:01Z"))
    plan = schedopt.solve(partial, "kueue-admission")
    assert plan.allocation == {"a": {"worker": 2}}
    assert plan.metrics["pending"] == {"b": "flavor default-flavor: servers: cpu@default-flavor: needs 2, 0 of 2 free "
                                            "(nor any count down to its minimum 1 worker)"}
    cohort = setup({"cpu": 4}, extra="cohort: org").replace("nominalQuota: 4", "nominalQuota: 4\n        borrowingLimit: 1")
    path = tmp_path / "cohort.yaml"
    path.write_text("\n---\n".join([cohort.strip("\n"), workload("big", count=6).strip("\n")]))
    instance = tmp_path / "cohort-instance.yaml"
    assert CliRunner().invoke(app, ["import", "kueue", str(path), "--out", str(instance)]).exit_code == 0
    res = CliRunner().invoke(app, ["solve", str(instance), "--solver", "kueue-admission"])
    assert res.exit_code == 1, res.output  # no job fits alone: infeasible
    assert "queue cq uses nothing" in res.output
    assert "pending big: flavor default-flavor: servers: cpu@default-flavor: needs 6, 4 of 4 free" in res.output


# ---- several resource groups, Kueue's Configuration (issue 52 §4) ---------------------------------

SHARED_QUOTA = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
spec: {nodeLabels: {node-type: on-demand}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
spec: {nodeLabels: {node-type: spot}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: credits}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: on-demand
      resources: [{name: cpu, nominalQuota: 9}]
    - name: spot
      resources: [{name: cpu, nominalQuota: 9}]
  - coveredResources: [cpu_credits]
    flavors:
    - name: credits
      resources: [{name: cpu_credits, nominalQuota: 14}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""
TRANSFORM = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  transformations:
  - {input: cpu, strategy: Retain, outputs: {cpu_credits: 1}}
"""


def test_a_second_resource_group_is_a_shared_flavor_and_transformations_feed_it(tmp_path: Path) -> None:
    """Kueue's shared-quota example, as ours: cpu per flavor (on-demand, spot: 9 each) and a second
    group holding 14 cpu_credits, which Kueue's Configuration makes every CPU request also ask for.
    Four 4-CPU jobs: two on on-demand, one on spot, the fourth pending on the credits (16 > 14);
    without the Configuration the credits are never asked for and it runs on spot."""
    jobs = [job(f"j{i}", resources="requests: {cpu: 4}") for i in range(4)]
    with_credits = load(tmp_path, SHARED_QUOTA, TRANSFORM, *jobs)
    assert with_credits.shared_flavors == ["credits"] and with_credits.flavors == ["on-demand", "spot"]
    assert with_credits.jobs[0].roles["worker"].demand == {"cpu": 4.0, "cpu_credits": 4.0}
    for solver in ("kueue-admission", "optimus-milp", "optimus-greedy"):
        plan = assert_checked(with_credits, schedopt.solve(with_credits, solver))
        assert len(plan.allocation) == 3, (solver, plan.allocation)
    plan = schedopt.solve(with_credits, "kueue-admission")
    assert plan.accelerators == {"j0": "on-demand", "j1": "on-demand", "j2": "spot"}
    assert plan.metrics["pending"]["j3"].startswith("flavor on-demand: ")
    assert "quota[cq]:cpu_credits@credits: needs 4, 2 of 14 free" in plan.metrics["pending"]["j3"]
    assert plan.metrics["queue_usage"]["cq"] == {"cpu@on-demand": 8.0, "cpu_credits@credits": 12.0, "cpu@spot": 4.0}
    from schedopt.allocation.kueue import workload_admissions
    exported = workload_admissions(with_credits, plan)
    assert exported[2]["status"]["admission"]["podSetAssignments"][0]["flavors"] == {"cpu": "spot", "cpu_credits": "credits"}
    without = load(tmp_path, SHARED_QUOTA, *jobs)
    assert len(assert_checked(without, schedopt.solve(without, "kueue-admission")).allocation) == 4
    import yaml  # the export round-trips, with the Configuration read again: not transformed twice
    again = load(tmp_path, SHARED_QUOTA, TRANSFORM, yaml.safe_dump_all(exported))
    assert {j.id: (j.roles["worker"].demand, j.running_accelerator) for j in again.jobs} == {
        "j0": ({"cpu": 4.0, "cpu_credits": 4.0}, "on-demand"), "j1": ({"cpu": 4.0, "cpu_credits": 4.0}, "on-demand"),
        "j2": ({"cpu": 4.0, "cpu_credits": 4.0}, "spot")}


def test_resource_group_and_configuration_refusals(tmp_path: Path) -> None:
    two_choices = SHARED_QUOTA.replace("    - name: credits\n      resources: [{name: cpu_credits, nominalQuota: 14}]",
                                       "    - name: credits\n      resources: [{name: cpu_credits, nominalQuota: 14}]\n"
                                       "    - name: more\n      resources: [{name: cpu_credits, nominalQuota: 1}]")
    with pytest.raises(schedopt.InputError, match=r"resourceGroups\[1\].*choosing among flavors"):
        load(tmp_path, two_choices)
    overlap = SHARED_QUOTA.replace("coveredResources: [cpu_credits]", "coveredResources: [cpu]")
    with pytest.raises(schedopt.InputError, match="covered by resourceGroups"):
        load(tmp_path, overlap)
    with pytest.raises(schedopt.InputError, match="strategy"):
        load(tmp_path, SHARED_QUOTA, TRANSFORM.replace("Retain", "Keep"))
    with pytest.raises(schedopt.InputError, match="fair_sharing=true"):
        load(tmp_path, SHARED_QUOTA, "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {enable: true}")


def test_borrow_within_cohort_is_read_with_its_threshold_in_weights(tmp_path: Path) -> None:
    """borrowWithinCohort's maxPriorityThreshold is a priority: imported in the jobs' weights
    (priority - the least + 1); without reclaimWithinCohort Kueue's validation refuses it."""
    bwc = "preemption: {reclaimWithinCohort: Any, borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 5}}"
    inst = load(tmp_path, setup({"cpu": 4}, extra=f"cohort: c\n  {bwc}"), workload("low", priority=-10),
                workload("high", priority=10))
    policy = inst.queues[0].preemption
    assert policy.borrow_within_cohort == "LowerPriority" and policy.max_priority_threshold == 5 - (-10) + 1
    with pytest.raises(schedopt.InputError, match="needs reclaimWithinCohort"):
        load(tmp_path, setup({"cpu": 4}, extra="cohort: c\n  preemption: {borrowWithinCohort: {policy: LowerPriority}}"))
