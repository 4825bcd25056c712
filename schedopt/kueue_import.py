"""Kueue and Kubeflow manifests as an instance (issue 39 §2): ``schedopt import kueue FILE...``.

Reads ResourceFlavor, ClusterQueue, Cohort, LocalQueue and Node objects
(kueue.x-k8s.io v1beta1 and v1beta2) and the jobs users submit: batch/v1 Job
(with ``kueue.x-k8s.io/job-min-parallelism``), Kubeflow TFJob (PS and Worker:
Optimus's job), PyTorchJob, MPIJob, JobSet and Kueue Workload objects.

- **Flavors** are accelerator types: each server's ``accelerator`` is its flavor.
- **Capacity**: from the Node list when there is one (``status.allocatable``; a
  node belongs to the flavor whose ``nodeLabels`` it carries); without nodes,
  one server per flavor holding the sum of the queues' nominal quotas on it.
- **Queues**: each ClusterQueue becomes a queue with its cohort and, per flavor
  and resource, nominalQuota, borrowingLimit and lendingLimit. A job's queue is
  the ClusterQueue of the LocalQueue its ``kueue.x-k8s.io/queue-name`` label names
  (a Workload's ``spec.queueName``), or the ClusterQueue of that name when no
  LocalQueue has it (as ``schedopt export kueue`` writes it). Its ``preemption``
  (``withinClusterQueue``, ``reclaimWithinCohort``) is kept for ``kueue-admission``.
- **Quantities** are parsed exactly (``500m`` = 0.5, ``36Gi``); ``memory`` is in
  GiB, every other resource in its own unit.
- **Speeds**: a job's annotation ``schedopt.io/speed`` (a speed form as JSON) and
  ``schedopt.io/remaining-steps``; without them, linear scaling at one step per
  second per pod and an hour of work at its full request (``DEFAULT_*`` below): the
  manifests say nothing of speed, so every job is equally efficient and quotas,
  flavors and sizes alone decide.

What the model cannot state is refused in one line naming the object and field:
several resource groups (a different flavor per resource), hierarchical cohorts,
``borrowWithinCohort`` preemption,
TFJob roles other than PS and Worker, jobs whose pods request differently.
"""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from typing import Any

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.io import read_documents

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
SPEED_ANNOTATION = "schedopt.io/speed"
STEPS_ANNOTATION = "schedopt.io/remaining-steps"
#: without annotations: steps/s per pod (linear scaling) and seconds of work at the full request
DEFAULT_STEPS_PER_POD_S = 1.0
DEFAULT_WORK_S = 3600.0

_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
           "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$")


def parse_quantity(value: Any, where: str) -> Fraction:
    """A Kubernetes quantity (``500m``, ``36Gi``, ``1e3``, 4) exactly."""
    if isinstance(value, bool):
        raise InputError(where, f"expected a quantity, got {value!r}")
    if isinstance(value, (int, float)):
        return Fraction(value)
    m = _QUANTITY.match(str(value).strip())
    if not m:
        raise InputError(where, f"not a Kubernetes quantity: {value!r}")
    number = Fraction(m.group(1))
    if m.group(2):
        return number * Fraction(10) ** int(m.group(2)[1:])
    return number * _SUFFIX[m.group(3) or ""]


def _amount(resource: str, value: Any, where: str) -> float:
    q = parse_quantity(value, where)
    return float(q / 2**30) if resource == "memory" else float(q)


def _requests(pod_template: dict, where: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for i, c in enumerate(((pod_template or {}).get("spec") or {}).get("containers") or []):
        for r, v in (((c or {}).get("resources") or {}).get("requests") or {}).items():
            out[r] = out.get(r, 0.0) + _amount(r, v, f"{where}.containers[{i}].resources.requests.{r}")
    return out


class _Reader:
    def __init__(self) -> None:
        self.flavors: dict[str, dict[str, str]] = {}  # name -> nodeLabels
        self.queues: dict[str, dict[str, Any]] = {}
        self.local: dict[tuple[str, str], str] = {}  # (namespace, name) -> ClusterQueue
        self.nodes: list[dict[str, Any]] = []
        self.jobs: list[dict[str, Any]] = []

    def read(self, doc: Any, where: str) -> None:
        if not isinstance(doc, dict) or "kind" not in doc:
            raise InputError(where, "expected a Kubernetes object with apiVersion and kind")
        kind, meta = doc["kind"], dict(doc.get("metadata") or {})
        if "name" not in meta and meta.get("generateName"):  # kubectl create names it generateName + a suffix
            meta["name"] = f"{str(meta['generateName']).rstrip('-')}-{len(self.jobs)}"
        name = str(meta.get("name", ""))
        where = f"{where}: {kind} {name}"
        spec = doc.get("spec") or {}
        handler = getattr(self, f"_{kind.lower()}", None)
        if handler is None:
            raise InputError(where, f"kind {kind} is not read (Kueue's ResourceFlavor, ClusterQueue, Cohort, LocalQueue, "
                                    "Node; Job, TFJob, PyTorchJob, MPIJob, JobSet, Workload)")
        handler(doc, meta, spec, name, where)

    def _resourceflavor(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        self.flavors[name] = dict(spec.get("nodeLabels") or {})

    def _clusterqueue(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        groups = spec.get("resourceGroups") or []
        if len(groups) > 1:
            raise InputError(where, "spec.resourceGroups: more than one resource group (a different flavor per "
                                    "resource) is not modelled: a job runs on one flavor")
        quotas: dict[str, dict[str, dict[str, float]]] = {}
        for fi, fl in enumerate((groups[0].get("flavors") or []) if groups else []):
            per = quotas.setdefault(str(fl["name"]), {})
            for ri, res in enumerate(fl.get("resources") or []):
                r = str(res["name"])
                path = f"{where}: spec.resourceGroups[0].flavors[{fi}].resources[{ri}]"
                q = {"nominal": _amount(r, res.get("nominalQuota", 0), f"{path}.nominalQuota")}
                for key, out in (("borrowingLimit", "borrowing_limit"), ("lendingLimit", "lending_limit")):
                    if res.get(key) is not None:
                        q[out] = _amount(r, res[key], f"{path}.{key}")
                per[r] = q
        cohort = spec.get("cohortName", spec.get("cohort"))
        self.queues[name] = {"name": name, "cohort": cohort, "quotas": quotas}
        preemption = spec.get("preemption") or {}
        if preemption.get("borrowWithinCohort") and (preemption["borrowWithinCohort"].get("policy") or "Never") != "Never":
            raise InputError(where, "spec.preemption.borrowWithinCohort: preemption while borrowing is not modelled")
        rules = {out: preemption[key] for key, out in (("withinClusterQueue", "within_cluster_queue"),
                                                       ("reclaimWithinCohort", "reclaim_within_cohort")) if preemption.get(key)}
        if rules:
            self.queues[name]["preemption"] = rules  # values checked by the instance model

    def _cohort(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        for key in ("parentName", "parent", "resourceGroups"):
            if spec.get(key):
                raise InputError(where, f"spec.{key}: hierarchical cohorts and cohort quotas are not modelled")

    def _localqueue(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        self.local[(str(meta.get("namespace", "default")), name)] = str(spec.get("clusterQueue", ""))

    def _node(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        alloc = ((doc.get("status") or {}).get("allocatable") or {})
        self.nodes.append({"name": name, "labels": dict(meta.get("labels") or {}),
                           "capacity": {r: _amount(r, v, f"{where}: status.allocatable.{r}") for r, v in alloc.items()}})

    # ---- jobs: (pods, requests per pod, min pods) ---------------------------------------------
    def _add_job(self, meta: dict, where: str, roles: dict[str, dict[str, Any]]) -> None:
        labels, notes = meta.get("labels") or {}, meta.get("annotations") or {}
        job: dict[str, Any] = {"id": str(meta.get("name")), "roles": roles,
                               "queue_local": (str(meta.get("namespace", "default")), labels.get(QUEUE_LABEL))}
        pods = sum(r["max"] for r in roles.values())
        if SPEED_ANNOTATION in notes:
            try:
                job["speed"] = json.loads(notes[SPEED_ANNOTATION])
            except ValueError as exc:
                raise InputError(where, f"metadata.annotations.{SPEED_ANNOTATION}: not JSON ({exc})") from None
        elif len(roles) == 2:
            p, w = roles["ps"]["max"], roles["worker"]["max"]
            job["speed"] = {"form": "table", "points": [[p, w, DEFAULT_STEPS_PER_POD_S * w]]}
        else:
            job["speed"] = {"form": "amdahl", "serial": 0.0, "parallel": 1.0 / DEFAULT_STEPS_PER_POD_S}
        steps = notes.get(STEPS_ANNOTATION)
        job["remaining_steps"] = float(steps) if steps is not None else DEFAULT_WORK_S * DEFAULT_STEPS_PER_POD_S * pods
        self.jobs.append(job)

    def _job(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        n = int(spec.get("parallelism", 1))
        low = int((meta.get("annotations") or {}).get(MIN_PARALLELISM, n))
        demand = _requests((spec.get("template") or {}), f"{where}: spec.template.spec")
        self._add_job(meta, where, {"worker": {"demand": demand, "min": max(1, min(low, n)), "max": max(1, n)}})

    def _replicas(self, specs: dict, where: str, field: str) -> dict[str, tuple[int, dict[str, float]]]:
        return {role: (int(s.get("replicas", 1)), _requests(s.get("template") or {}, f"{where}: spec.{field}.{role}.template.spec"))
                for role, s in (specs or {}).items()}

    def _tfjob(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        reps = self._replicas(spec.get("tfReplicaSpecs"), where, "tfReplicaSpecs")
        other = sorted(set(reps) - {"PS", "Worker"})
        if other or "Worker" not in reps:
            raise InputError(where, f"spec.tfReplicaSpecs: roles {other or ['(no Worker)']} are not modelled (PS and Worker)")
        roles = {"worker": {"demand": reps["Worker"][1], "min": reps["Worker"][0], "max": reps["Worker"][0]}}
        if "PS" in reps:
            roles["ps"] = {"demand": reps["PS"][1], "min": reps["PS"][0], "max": reps["PS"][0]}
        self._add_job(meta, where, roles)

    def _one_role(self, meta: dict, where: str, reps: dict[str, tuple[int, dict[str, float]]], field: str,
                  pods_of: list[str]) -> None:
        used = [r for r in pods_of if r in reps]
        demands = {json.dumps(reps[r][1], sort_keys=True) for r in used}
        if len(demands) > 1:
            raise InputError(where, f"spec.{field}: {', '.join(used)} request differently; a one-role job's pods are alike")
        n = sum(reps[r][0] for r in used)
        self._add_job(meta, where, {"worker": {"demand": reps[used[0]][1] if used else {}, "min": max(1, n), "max": max(1, n)}})

    def _pytorchjob(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        reps = self._replicas(spec.get("pytorchReplicaSpecs"), where, "pytorchReplicaSpecs")
        self._one_role(meta, where, reps, "pytorchReplicaSpecs", ["Master", "Worker"])

    def _mpijob(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        reps = self._replicas(spec.get("mpiReplicaSpecs"), where, "mpiReplicaSpecs")
        self._one_role(meta, where, reps, "mpiReplicaSpecs", ["Worker"])  # the launcher does not train

    def _jobset(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        reps = {}
        for i, rj in enumerate(spec.get("replicatedJobs") or []):
            job_spec = ((rj.get("template") or {}).get("spec") or {})
            pods = int(rj.get("replicas", 1)) * int(job_spec.get("parallelism", 1))
            reps[str(rj.get("name", i))] = (pods, _requests(job_spec.get("template") or {}, f"{where}: spec.replicatedJobs[{i}]"))
        self._one_role(meta, where, reps, "replicatedJobs", list(reps))

    def _workload(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        reps = {str(ps.get("name", i)): (int(ps.get("count", 1)), _requests(ps.get("template") or {}, f"{where}: spec.podSets[{i}].template.spec"))
                for i, ps in enumerate(spec.get("podSets") or [])}
        meta = {**meta, "labels": {**(meta.get("labels") or {}), QUEUE_LABEL: spec.get("queueName")}}
        self._one_role(meta, where, reps, "podSets", list(reps))

    # ---- the instance ---------------------------------------------------------------------------
    def instance(self, name: str, source: str) -> Instance:
        flavors = list(self.flavors) or sorted({f for q in self.queues.values() for f in q["quotas"]})
        resources = sorted({r for q in self.queues.values() for per in q["quotas"].values() for r in per}
                           | {r for j in self.jobs for role in j["roles"].values() for r in role["demand"]}
                           | {r for n in self.nodes for r in n["capacity"]})
        if self.nodes:
            servers = []
            for n in self.nodes:
                match = [f for f in flavors if self.flavors.get(f) and all(n["labels"].get(k) == v for k, v in self.flavors[f].items())]
                flavor = match[0] if match else (flavors[0] if len(flavors) == 1 else None)
                if flavor is None:
                    raise InputError(source, f"Node {n['name']}: its labels match no ResourceFlavor's nodeLabels")
                servers.append({"name": n["name"], "accelerator": flavor, "capacity": n["capacity"]})
        else:  # capacity from the quotas: one server per flavor
            servers = []
            for f in flavors:
                cap = {r: sum(q["quotas"].get(f, {}).get(r, {}).get("nominal", 0.0) for q in self.queues.values()) for r in resources}
                servers.append({"name": f, "accelerator": f, "capacity": cap})
        jobs = []
        for j in self.jobs:
            ns, lq = j.pop("queue_local")
            if lq is not None:
                if (ns, lq) in self.local:
                    j["queue"] = self.local[(ns, lq)]
                elif lq in self.queues:  # a ClusterQueue named directly, as `schedopt export kueue` writes queueName
                    j["queue"] = lq
                else:
                    raise InputError(source, f"job {j['id']}: metadata.labels.{QUEUE_LABEL}: no LocalQueue {ns}/{lq} "
                                             "(nor ClusterQueue) in the files")
            jobs.append(j)
        doc = {"name": name, "resources": resources or ["cpu"], "servers": servers, "jobs": jobs,
               "queues": list(self.queues.values()) or None}
        if doc["queues"] is None:
            doc.pop("queues")
        return Instance.from_dict(doc, source=source)


def import_kueue(paths: list[str | os.PathLike[str]], *, name: str = "kueue") -> Instance:
    """One instance from Kueue/Kubeflow manifest files (module docstring); :class:`InputError` naming the file and field."""
    reader = _Reader()
    for path in paths:
        for i, doc in enumerate(read_documents(path)):
            reader.read(doc, f"{path}[{i}]")
    return reader.instance(name, ", ".join(map(str, paths)))
