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
- **Job ids** are the objects' names; where two namespaces hold a workload of the same
  name, each of those jobs' id is ``namespace/name`` (``schedopt export kueue`` writes
  such a job back into its namespace).
- **Quantities** are parsed exactly (``500m`` = 0.5, ``36Gi``); ``memory`` is in
  GiB, every other resource in its own unit.
- **Which flavors a job may take** (``allowed_flavors``): those whose NoSchedule and
  NoExecute taints its pods (or the flavor itself) tolerate and whose node labels match
  its pods' node selector and required node affinity, as Kueue's flavor assigner decides.
- **Speeds**: a job's annotation ``schedopt.io/speed`` (a speed form as JSON) and
  ``schedopt.io/remaining-steps``; without them, linear scaling at one step per
  second per pod and an hour of work at its full request (``DEFAULT_*`` below): the
  manifests say nothing of speed, so every job is equally efficient and quotas,
  flavors and sizes alone decide.

- **Cohorts**: a Cohort object's ``parentName`` and its own quotas (hierarchical cohorts).
- **Fair sharing**: a ClusterQueue's ``fairSharing.weight`` (Kueue enables fair sharing in its
  Configuration, not in these objects: ``kueue-admission``'s option ``fair_sharing``).

- **Several resource groups** in a ClusterQueue: one group may choose among flavors (the
  accelerator types); each other group holds one flavor without node labels or taints, a
  shared flavor (``shared_flavors``) whose quota a job draws on whatever type it runs on.

What the model cannot state is refused in one line naming the object and field:
a second resource group choosing among flavors, a Cohort's fair-sharing
weight, admission fair sharing,
TFJob roles other than PS and Worker, jobs whose pods request differently.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from fractions import Fraction
from typing import Any

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.io import read_documents

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
SPEED_ANNOTATION = "schedopt.io/speed"
#: a Workload's annotation naming the flavors the job may take (``Job.allowed_flavors``), comma-separated:
#: written by ``schedopt export kueue``, read back here
ALLOWED_FLAVORS_ANNOTATION = "schedopt.io/allowed-flavors"
#: a Workload's annotation saying its pod sets' requests are already as Kueue accounts them (Configuration's
#: transformations applied): written by ``schedopt export kueue``, so a re-import does not apply them twice
ACCOUNTED_ANNOTATION = "schedopt.io/requests-accounted"
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
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(where, f"a quantity is a finite number, got {value!r}")
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
    if q < 0:
        raise InputError(where, f"a quantity is >= 0, got {value!r}")
    if "/" in resource and q.denominator != 1:  # Kubernetes: extended resources (nvidia.com/gpu) are whole
        raise InputError(where, f"{resource} is an extended resource: its quantity is a whole number, got {value!r}")
    return float(q / 2**30) if resource == "memory" else float(q)


def _map(value: Any, where: str, *, required: bool = False) -> dict:
    """``value`` as a mapping (absent: empty unless ``required``); InputError naming the field otherwise."""
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise InputError(where, f"expected a mapping, got {type(value).__name__}" if value is not None else "required")
    return value


def _list(value: Any, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(where, f"expected a list, got {type(value).__name__}")
    return value


def _count(value: Any, where: str, default: int, least: int = 1) -> int:
    """A pod count: a whole number >= ``least`` (Kubernetes refuses ``abc``, ``2.5`` and negatives)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(where, f"expected a whole number, got {value!r}")
    if value < least:
        raise InputError(where, f"must be >= {least}, got {value}")
    return value


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(where, f"a name (text) is required, got {value!r}")
    return value


def _container_requests(c: Any, where: str) -> dict[str, float]:
    """One container's requests; a resource with only a limit requests its limit (Kubernetes' default)."""
    res = _map(_map(c, where).get("resources"), f"{where}.resources")
    requests = _map(res.get("requests"), f"{where}.resources.requests")
    limits = _map(res.get("limits"), f"{where}.resources.limits")
    out = {r: _amount(r, v, f"{where}.resources.requests.{r}") for r, v in requests.items()}
    for r, v in limits.items():
        if r not in out:
            out[r] = _amount(r, v, f"{where}.resources.limits.{r}")
    return out


def _requests(pod_template: Any, where: str) -> dict[str, float]:
    """A pod's requests as Kubernetes and Kueue compute them: per resource, the larger of the sum over
    its containers and the largest init container, plus the pod's ``overhead``."""
    spec = _map(_map(pod_template, where).get("spec"), f"{where}.spec", required=True)
    containers = _list(spec.get("containers"), f"{where}.spec.containers")
    if not containers:
        raise InputError(f"{where}.spec.containers", "a pod has at least one container")
    out: dict[str, float] = {}
    for i, c in enumerate(containers):
        for r, v in _container_requests(c, f"{where}.spec.containers[{i}]").items():
            out[r] = out.get(r, 0.0) + v
    for i, c in enumerate(_list(spec.get("initContainers"), f"{where}.spec.initContainers")):
        for r, v in _container_requests(c, f"{where}.spec.initContainers[{i}]").items():
            out[r] = max(out.get(r, 0.0), v)
    for r, v in _map(spec.get("overhead"), f"{where}.spec.overhead").items():
        out[r] = out.get(r, 0.0) + _amount(r, v, f"{where}.spec.overhead.{r}")
    return out


#: the taint effects Kueue's flavor assignment honours (PreferNoSchedule is ignored)
HARD_TAINT_EFFECTS = ("NoSchedule", "NoExecute")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_AFFINITY_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _text_field(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(where, f"expected text, got {value!r}")
    return value


def _taints(value: Any, where: str) -> list[dict[str, str]]:
    """A flavor's ``nodeTaints`` as Kubernetes validates them: a key and one of its three effects."""
    out = []
    for i, t in enumerate(_list(value, where)):
        t = _map(t, f"{where}[{i}]")
        key = _name(t.get("key"), f"{where}[{i}].key")
        effect = _text_field(t.get("effect"), f"{where}[{i}].effect")
        if effect not in _TAINT_EFFECTS:
            raise InputError(f"{where}[{i}].effect", f"expected one of {', '.join(_TAINT_EFFECTS)}, got {effect!r}")
        out.append({"key": key, "value": _text_field(t.get("value"), f"{where}[{i}].value"), "effect": effect})
    return out


def _tolerations(value: Any, where: str) -> list[dict[str, str]]:
    """Tolerations as Kubernetes validates them: operator Equal (the default) or Exists; Exists
    carries no value; an empty key only with Exists (it tolerates every taint)."""
    out = []
    for i, t in enumerate(_list(value, where)):
        t = _map(t, f"{where}[{i}]")
        key = _text_field(t.get("key"), f"{where}[{i}].key")
        op = _text_field(t.get("operator"), f"{where}[{i}].operator") or "Equal"
        if op not in ("Equal", "Exists"):
            raise InputError(f"{where}[{i}].operator", f"expected Equal or Exists, got {op!r}")
        val = _text_field(t.get("value"), f"{where}[{i}].value")
        if op == "Exists" and val:
            raise InputError(f"{where}[{i}].value", "a toleration with operator Exists has no value")
        if not key and op != "Exists":
            raise InputError(f"{where}[{i}].key", "an empty key needs operator Exists")
        effect = _text_field(t.get("effect"), f"{where}[{i}].effect")
        if effect and effect not in _TAINT_EFFECTS:
            raise InputError(f"{where}[{i}].effect", f"expected one of {', '.join(_TAINT_EFFECTS)}, got {effect!r}")
        out.append({"key": key, "operator": op, "value": val, "effect": effect})
    return out


def _tolerates(toleration: dict[str, str], taint: dict[str, str]) -> bool:
    """Kubernetes' rule: the effect (empty: every effect) and key (empty: every key) match, and
    Exists, or Equal with the same value."""
    if toleration["effect"] and toleration["effect"] != taint["effect"]:
        return False
    if toleration["key"] and toleration["key"] != taint["key"]:
        return False
    return toleration["operator"] == "Exists" or toleration["value"] == taint["value"]


def _pod_scheduling(pod_template: Any, where: str) -> dict[str, Any]:
    """What of a pod's spec decides which flavors Kueue may assign it: ``tolerations``,
    ``nodeSelector`` and ``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``'s
    terms (their ``matchExpressions``: Kueue matches flavors' labels only)."""
    spec = _map(_map(pod_template, where).get("spec"), f"{where}.spec", required=True)
    selector = {str(k): _text_field(v, f"{where}.spec.nodeSelector.{k}")
                for k, v in _map(spec.get("nodeSelector"), f"{where}.spec.nodeSelector").items()}
    path = f"{where}.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    node_affinity = _map(_map(spec.get("affinity"), f"{where}.spec.affinity").get("nodeAffinity"),
                         f"{where}.spec.affinity.nodeAffinity")
    required = _map(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"), path)
    terms = []
    for i, term in enumerate(_list(required.get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms")):
        tpath = f"{path}.nodeSelectorTerms[{i}]"
        exprs = []
        for k, e in enumerate(_list(_map(term, tpath).get("matchExpressions"), f"{tpath}.matchExpressions")):
            epath = f"{tpath}.matchExpressions[{k}]"
            e = _map(e, epath)
            op = e.get("operator")
            if op not in _AFFINITY_OPERATORS:
                raise InputError(f"{epath}.operator", f"expected one of {', '.join(_AFFINITY_OPERATORS)}, got {op!r}")
            values = [_text_field(v, f"{epath}.values") for v in _list(e.get("values"), f"{epath}.values")]
            if op in ("In", "NotIn") and not values or op in ("Exists", "DoesNotExist") and values \
                    or op in ("Gt", "Lt") and (len(values) != 1 or not re.fullmatch(r"-?\d+", values[0])):
                raise InputError(f"{epath}.values", f"operator {op}: Kubernetes' validation refuses values {values!r}")
            exprs.append({"key": _name(e.get("key"), f"{epath}.key"), "operator": op, "values": values})
        terms.append(exprs)
    return {"tolerations": _tolerations(spec.get("tolerations"), f"{where}.spec.tolerations"),
            "node_selector": selector, "terms": terms}


def _expression_holds(e: dict[str, Any], labels: dict[str, str]) -> bool:
    value = labels.get(e["key"])
    op = e["operator"]
    if op == "In":
        return value is not None and value in e["values"]
    if op == "NotIn":
        return value is None or value not in e["values"]
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if value is None or not re.fullmatch(r"-?\d+", value):
        return False
    return int(value) > int(e["values"][0]) if op == "Gt" else int(value) < int(e["values"][0])


def flavor_refusal(flavor: str, labels: dict[str, str], taints: list[dict[str, str]],
                   flavor_tolerations: list[dict[str, str]], pod: dict[str, Any]) -> str | None:
    """Why Kueue cannot assign ``flavor`` to a pod set (None: it can), as its flavor assigner decides
    (resource_flavor.md): a NoSchedule or NoExecute taint that neither the pod's tolerations nor the
    flavor's own tolerate; or the pod's node selector and required node affinity, restricted to the
    keys the flavor labels, not matching the flavor's labels (a term left with no expression
    matches every flavor)."""
    tolerations = pod["tolerations"] + flavor_tolerations
    for taint in taints:
        if taint["effect"] in HARD_TAINT_EFFECTS and not any(_tolerates(t, taint) for t in tolerations):
            shown = f"{taint['key']}={taint['value']}:{taint['effect']}" if taint["value"] else f"{taint['key']}:{taint['effect']}"
            return f"untolerated taint {shown} in flavor {flavor}"
    if any(labels[k] != v for k, v in pod["node_selector"].items() if k in labels):
        return f"flavor {flavor} doesn't match the node selector"
    terms = [[e for e in term if e["key"] in labels] for term in pod["terms"]]
    if terms and all(terms) and not any(all(_expression_holds(e, labels) for e in term) for term in terms):
        return f"flavor {flavor} doesn't match node affinity"
    return None


def _priority(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not -2**31 <= value < 2**31:
        raise InputError(where, f"a priority is a 32-bit whole number, got {value!r}")
    return value


def _timestamp(value: Any, where: str) -> float | None:
    """Seconds since the epoch of an RFC 3339 time (``2026-11-26T10:00:00Z``); None when absent."""
    if value is None:
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise InputError(where, f"not an RFC 3339 time: {value!r}") from None


#: the kinds read, by their exact (case-sensitive) Kubernetes name
KINDS = ("ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue", "Node", "PriorityClass", "WorkloadPriorityClass",
         "Job", "TFJob", "PyTorchJob", "MPIJob", "JobSet", "Workload")
#: kinds Kueue integrates that this model does not read: refused in one line naming the kind
NOT_READ = {"RayJob": "Ray", "RayCluster": "Ray", "JAXJob": "Kubeflow JAX", "LeaderWorkerSet": "LeaderWorkerSet",
            "Deployment": "a serving Deployment", "StatefulSet": "a StatefulSet", "Pod": "plain Pods and pod groups",
            "AppWrapper": "AppWrapper", "PaddleJob": "Kubeflow Paddle", "XGBoostJob": "Kubeflow XGBoost",
            "TrainJob": "Kubeflow Trainer v2", "SparkApplication": "Spark"}
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"


class _Reader:
    def __init__(self) -> None:
        self.flavors: dict[str, dict[str, str]] = {}  # name -> nodeLabels
        self.flavor_taints: dict[str, list[dict[str, str]]] = {}  # name -> nodeTaints
        self.flavor_tolerations: dict[str, list[dict[str, str]]] = {}  # name -> tolerations (Kueue adds them to pods)
        self.queues: dict[str, dict[str, Any]] = {}
        self.cohorts: dict[str, dict[str, Any]] = {}  # Cohort objects: name -> {name, parent, quotas}
        self.groups: dict[str, list[list[str]]] = {}  # where a ClusterQueue or Cohort was read -> its groups' flavors
        self.local: dict[tuple[str, str], str] = {}  # (namespace, name) -> ClusterQueue
        self.nodes: list[dict[str, Any]] = []
        self.jobs: list[dict[str, Any]] = []
        self.priority_classes: dict[str, int] = {}  # PriorityClass name -> value
        self.workload_priority_classes: dict[str, int] = {}
        self.seen: dict[tuple[str, str, str], str] = {}  # (kind, namespace, name) -> where first read
        #: Kueue's Configuration: resources.transformations (input, Retain/Replace, outputs per unit) and
        #: resources.excludeResourcePrefixes
        self.transformations: list[tuple[str, str, dict[str, float]]] = []
        self.thresholds: dict[str, int] = {}  # ClusterQueue -> borrowWithinCohort.maxPriorityThreshold (a priority)
        self.excluded_prefixes: list[str] = []

    def _configuration(self, doc: dict, where: str) -> None:
        """Kueue's Configuration: the resource transformations and excluded resource prefixes Kueue
        applies to every pod's requests before quota accounting; fair sharing is the option of
        ``kueue-admission`` (an instance keeps no solver settings)."""
        res = _map(doc.get("resources"), f"{where}.resources")
        for i, t in enumerate(_list(res.get("transformations"), f"{where}.resources.transformations")):
            path = f"{where}.resources.transformations[{i}]"
            t = _map(t, path)
            given = _name(t.get("input"), f"{path}.input")
            strategy = t.get("strategy") or "Retain"
            if strategy not in ("Retain", "Replace"):
                raise InputError(f"{path}.strategy", f"expected Retain or Replace, got {strategy!r}")
            outputs = {str(k): float(parse_quantity(v, f"{path}.outputs.{k}"))
                       for k, v in _map(t.get("outputs"), f"{path}.outputs").items()}
            if any(v < 0 for v in outputs.values()):
                raise InputError(f"{path}.outputs", "an output per unit of the input is >= 0")
            self.transformations.append((given, strategy, outputs))
        self.excluded_prefixes += [_name(p, f"{where}.resources.excludeResourcePrefixes")
                                   for p in _list(res.get("excludeResourcePrefixes"), f"{where}.resources.excludeResourcePrefixes")]
        if _map(doc.get("fairSharing"), f"{where}.fairSharing").get("enable"):
            raise InputError(f"{where}.fairSharing", "fair sharing is kueue-admission's option (-o fair_sharing=true, "
                                                     "-o preemption_strategies=...): an instance keeps no solver settings; "
                                                     "drop it from the files")

    def transformed(self, demand: dict[str, float]) -> dict[str, float]:
        """A pod's requests as Kueue accounts them: excluded prefixes dropped, then each transformation
        (an input's amount times each output's per-unit quantity; Replace drops the input)."""
        out = {r: v for r, v in demand.items() if not any(r.startswith(p) for p in self.excluded_prefixes)}
        for given, strategy, outputs in self.transformations:
            if given in out:
                amount = out[given] if strategy == "Retain" else out.pop(given)
                for r, per_unit in outputs.items():
                    out[r] = out.get(r, 0.0) + amount * per_unit
        return out

    def read(self, doc: Any, where: str) -> None:
        if not isinstance(doc, dict) or "kind" not in doc:
            raise InputError(where, "expected a Kubernetes object with apiVersion and kind")
        kind = doc["kind"]
        if not isinstance(kind, str):
            raise InputError(f"{where}.kind", f"expected the kind's name (text), got {kind!r}")
        if kind == "Configuration":  # Kueue's own configuration (config.kueue.x-k8s.io): no name needed
            self._configuration(doc, f"{where}: Configuration")
            return
        if kind == "List":  # `kubectl get ... -o yaml`: the objects are its items
            for i, item in enumerate(_list(doc.get("items"), f"{where}.items")):
                self.read(item, f"{where}.items[{i}]")
            return
        meta = dict(_map(doc.get("metadata"), f"{where}: {kind}.metadata"))
        if "name" not in meta and meta.get("generateName"):  # kubectl create names it generateName + a suffix
            meta["name"] = f"{str(meta['generateName']).rstrip('-')}-{len(self.jobs)}"
        if kind in NOT_READ:
            raise InputError(f"{where}: {kind} {meta.get('name', '')}".rstrip(),
                             f"kind {kind} ({NOT_READ[kind]}) is not read: its pod sets are not modelled; submit it as a "
                             "Job, TFJob, PyTorchJob, MPIJob, JobSet or Workload")
        if kind not in KINDS:
            raise InputError(f"{where}.kind", f"kind {kind} is not read (kinds read: {', '.join(KINDS)})")
        name = _name(meta.get("name"), f"{where}: {kind}.metadata.name")
        namespace = str(meta.get("namespace") or "default")
        where = f"{where}: {kind} {name}"
        key = (kind, namespace if kind not in ("ResourceFlavor", "ClusterQueue", "Cohort", "Node", "PriorityClass",
                                               "WorkloadPriorityClass") else "", name)
        if key in self.seen:
            raise InputError(where, f"a second {kind} named {name!r}" + (f" in namespace {namespace}" if key[1] else "")
                             + f" (the first at {self.seen[key]}): names are unique")
        self.seen[key] = where
        spec = _map(doc.get("spec"), f"{where}: spec")
        getattr(self, f"_{kind.lower()}")(doc, meta, spec, name, where)

    def _resourceflavor(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        labels = _map(spec.get("nodeLabels"), f"{where}: spec.nodeLabels")
        self.flavors[name] = {str(k): str(v) for k, v in labels.items()}
        self.flavor_taints[name] = _taints(spec.get("nodeTaints"), f"{where}: spec.nodeTaints")
        self.flavor_tolerations[name] = _tolerations(spec.get("tolerations"), f"{where}: spec.tolerations")

    def _quotas(self, spec: dict, where: str, above: str | None, kind: str) -> dict[str, dict[str, dict[str, float]]]:
        """A ClusterQueue's or Cohort's ``resourceGroups`` as flavor -> resource -> quota; ``above``:
        the cohort (parent) its limits are toward. Each group's flavors are recorded
        (``self.groups[where]``) to tell the accelerator types from the shared flavors."""
        groups = _list(spec.get("resourceGroups"), f"{where}: spec.resourceGroups")
        quotas: dict[str, dict[str, dict[str, float]]] = {}
        covered_by: dict[str, int] = {}
        self.groups[where] = []
        for gi, group in enumerate(groups):
            gpath = f"{where}: spec.resourceGroups[{gi}]"
            group = _map(group, gpath)
            covered = [_name(r, f"{gpath}.coveredResources") for r in _list(group.get("coveredResources"), f"{gpath}.coveredResources")]
            for r in covered:
                if r in covered_by:
                    raise InputError(f"{gpath}.coveredResources", f"{r} is covered by resourceGroups[{covered_by[r]}] too "
                                                                  "(Kueue's validation: a resource is in one group)")
                covered_by[r] = gi
            names = self._group_quotas(group, gpath, above, kind, quotas)
            self.groups[where].append(names)
        return quotas

    def _group_quotas(self, group: dict, gpath: str, above: str | None, kind: str,
                      quotas: dict[str, dict[str, dict[str, float]]]) -> list[str]:
        """One resource group's flavors into ``quotas``; returns their names in order."""
        names = []
        for fi, fl in enumerate(_list(group.get("flavors"), f"{gpath}.flavors")):
            fpath = f"{gpath}.flavors[{fi}]"
            flavor = _name(_map(fl, fpath).get("name"), f"{fpath}.name")
            if flavor in quotas:
                raise InputError(f"{fpath}.name", f"flavor {flavor} listed twice (Kueue's validation: a flavor is in one "
                                                  "resource group)")
            names.append(flavor)
            per = quotas.setdefault(flavor, {})
            for ri, res in enumerate(_list(fl.get("resources"), f"{fpath}.resources")):
                path = f"{fpath}.resources[{ri}]"
                r = _name(_map(res, path).get("name"), f"{path}.name")
                q = {"nominal": _amount(r, res.get("nominalQuota", 0), f"{path}.nominalQuota")}
                for key_, out in (("borrowingLimit", "borrowing_limit"), ("lendingLimit", "lending_limit")):
                    if res.get(key_) is not None:
                        if above is None:  # Kueue's validation: limits only within a cohort
                            raise InputError(f"{path}.{key_}", f"a {kind} without a {'cohort' if kind == 'ClusterQueue' else 'parent'} "
                                                               "has nobody to borrow from or lend to: set spec."
                                                               f"{'cohort' if kind == 'ClusterQueue' else 'parentName'} or drop the limit")
                        q[out] = _amount(r, res[key_], f"{path}.{key_}")
                if kind == "ClusterQueue" and q.get("lending_limit", 0.0) > q["nominal"]:
                    raise InputError(f"{path}.lendingLimit", "Kueue's validation: lendingLimit <= nominalQuota")
                per[r] = q
        return names

    def _clusterqueue(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        cohort = spec.get("cohortName", spec.get("cohort"))
        if cohort is not None and not isinstance(cohort, str):
            raise InputError(f"{where}: spec.cohort", f"a cohort's name (text), got {cohort!r}")
        self.queues[name] = {"name": name, "cohort": cohort, "quotas": self._quotas(spec, where, cohort, "ClusterQueue")}
        preemption = _map(spec.get("preemption"), f"{where}: spec.preemption")
        bwc = _map(preemption.get("borrowWithinCohort"), f"{where}: spec.preemption.borrowWithinCohort")
        rules = {out: preemption[key_] for key_, out in (("withinClusterQueue", "within_cluster_queue"),
                                                         ("reclaimWithinCohort", "reclaim_within_cohort")) if preemption.get(key_)}
        if bwc.get("policy") not in (None, "Never", "LowerPriority"):
            raise InputError(f"{where}: spec.preemption.borrowWithinCohort.policy",
                             f"expected Never or LowerPriority, got {bwc.get('policy')!r}")
        if (bwc.get("policy") or "Never") != "Never":
            if rules.get("reclaim_within_cohort", "Never") == "Never":
                raise InputError(f"{where}: spec.preemption.borrowWithinCohort", "Kueue's validation: borrowWithinCohort "
                                                                                "needs reclaimWithinCohort other than Never")
            rules["borrow_within_cohort"] = bwc["policy"]  # values checked by the instance model
            if bwc.get("maxPriorityThreshold") is not None:  # a priority: a weight once every priority is known
                self.thresholds[name] = (_priority(bwc["maxPriorityThreshold"], f"{where}: spec.preemption.borrowWithinCohort"
                                                                                ".maxPriorityThreshold"))
        if rules:
            self.queues[name]["preemption"] = rules  # values checked by the instance model
        strategy = spec.get("queueingStrategy")
        if strategy is not None:
            if strategy not in ("BestEffortFIFO", "StrictFIFO"):
                raise InputError(f"{where}: spec.queueingStrategy", f"expected BestEffortFIFO or StrictFIFO, got {strategy!r}")
            self.queues[name]["queueing_strategy"] = strategy
        fung = _map(spec.get("flavorFungibility"), f"{where}: spec.flavorFungibility")
        # Kueue's deprecated names of MayStopSearch: Borrow and Preempt (cluster_queue.md)
        for key_, old_name, field in (("whenCanBorrow", "Borrow", "when_can_borrow"),
                                      ("whenCanPreempt", "Preempt", "when_can_preempt")):
            value = fung.get(key_)
            if value is None:
                continue
            rule = {old_name: "MayStopSearch", "MayStopSearch": "MayStopSearch", "TryNextFlavor": "TryNextFlavor"}.get(value)
            if rule is None:
                raise InputError(f"{where}: spec.flavorFungibility.{key_}", f"expected {old_name}, MayStopSearch or "
                                                                           f"TryNextFlavor, got {value!r}")
            self.queues[name][field] = rule
        preference = fung.get("preference")
        if preference is not None:
            if preference not in ("BorrowingOverPreemption", "PreemptionOverBorrowing"):
                raise InputError(f"{where}: spec.flavorFungibility.preference", "expected BorrowingOverPreemption or "
                                                                               f"PreemptionOverBorrowing, got {preference!r}")
            self.queues[name]["fungibility_preference"] = preference
        if spec.get("admissionScope"):
            raise InputError(f"{where}: spec.admissionScope", "admission fair sharing (usage history of local queues) is "
                                                            "not modelled")
        fair = _map(spec.get("fairSharing"), f"{where}: spec.fairSharing")
        if fair.get("weight") is not None:  # Kueue's fair sharing itself is enabled in its Configuration: our option
            weight = parse_quantity(fair["weight"], f"{where}: spec.fairSharing.weight")
            if weight < 0:
                raise InputError(f"{where}: spec.fairSharing.weight", f"a weight is >= 0, got {fair['weight']!r}")
            self.queues[name]["fair_sharing_weight"] = float(weight)

    def _cohort(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        """A Cohort object (hierarchical cohorts): its parent (``parentName``; v1alpha1 ``parent``) and
        its own quotas (a pool for its subtree, limits toward its parent)."""
        if spec.get("fairSharing"):
            raise InputError(f"{where}: spec.fairSharing", "fair sharing between cohorts (a Cohort's weight) is not modelled")
        parent = spec.get("parentName", spec.get("parent"))
        if parent is not None and not isinstance(parent, str):
            raise InputError(f"{where}: spec.parentName", f"a cohort's name (text), got {parent!r}")
        self.cohorts[name] = {"name": name, "parent": parent, "quotas": self._quotas(spec, where, parent, "Cohort")}

    def _localqueue(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        self.local[(str(meta.get("namespace") or "default"), name)] = _name(spec.get("clusterQueue"),
                                                                          f"{where}: spec.clusterQueue")

    def _node(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        alloc = _map(_map(doc.get("status"), f"{where}: status").get("allocatable"), f"{where}: status.allocatable")
        self.nodes.append({"name": name, "labels": dict(_map(meta.get("labels"), f"{where}: metadata.labels")),
                           "capacity": {r: _amount(r, v, f"{where}: status.allocatable.{r}") for r, v in alloc.items()}})

    def _priorityclass(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        self.priority_classes[name] = _priority(doc.get("value"), f"{where}: value")
        if doc.get("globalDefault") is True:
            self._global_default = self.priority_classes[name]

    def _workloadpriorityclass(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        self.workload_priority_classes[name] = _priority(doc.get("value"), f"{where}: value")

    # ---- jobs: (pods, requests per pod, min pods) ---------------------------------------------
    def _add_job(self, meta: dict, where: str, roles: dict[str, dict[str, Any]], *, priority: Any = None,
                 priority_class: str | None = None, scheduling: list[dict[str, Any]] | None = None) -> None:
        """``scheduling``: each pod set's :func:`_pod_scheduling` (which flavors it may take)."""
        labels = _map(meta.get("labels"), f"{where}: metadata.labels")
        notes = _map(meta.get("annotations"), f"{where}: metadata.annotations")
        queue = labels.get(QUEUE_LABEL)
        job: dict[str, Any] = {"id": str(meta.get("name")), "roles": roles,
                               "queue_local": (str(meta.get("namespace") or "default"), queue),
                               "priority": (priority, priority_class, labels.get(PRIORITY_CLASS_LABEL), where),
                               "created": _timestamp(meta.get("creationTimestamp"), f"{where}: metadata.creationTimestamp"),
                               "scheduling": list(scheduling or [])}
        if str(notes.get(ACCOUNTED_ANNOTATION, "")).lower() == "true":
            job["accounted"] = True
        if ALLOWED_FLAVORS_ANNOTATION in notes:  # as `schedopt export kueue` writes a job's allowed_flavors
            job["annotated_flavors"] = [f for f in str(notes[ALLOWED_FLAVORS_ANNOTATION]).split(",") if f]
        pods = sum(r["max"] for r in roles.values())
        if SPEED_ANNOTATION in notes:
            try:
                job["speed"] = json.loads(notes[SPEED_ANNOTATION])
            except (TypeError, ValueError) as exc:
                raise InputError(where, f"metadata.annotations.{SPEED_ANNOTATION}: not JSON ({exc})") from None
        elif len(roles) == 2:
            p, w = roles["ps"]["max"], roles["worker"]["max"]
            job["speed"] = {"form": "table", "points": [[p, w, DEFAULT_STEPS_PER_POD_S * w]]}
        else:
            job["speed"] = {"form": "amdahl", "serial": 0.0, "parallel": 1.0 / DEFAULT_STEPS_PER_POD_S}
        steps = notes.get(STEPS_ANNOTATION)
        try:
            job["remaining_steps"] = float(steps) if steps is not None else DEFAULT_WORK_S * DEFAULT_STEPS_PER_POD_S * pods
        except ValueError:
            raise InputError(where, f"metadata.annotations.{STEPS_ANNOTATION}: not a number ({steps!r})") from None
        self.jobs.append(job)

    def _job(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        n = _count(spec.get("parallelism"), f"{where}: spec.parallelism", 1)
        completions = _count(spec.get("completions"), f"{where}: spec.completions", n)
        n = min(n, completions)  # Kueue counts min(parallelism, completions) pods
        note = _map(meta.get("annotations"), f"{where}: metadata.annotations").get(MIN_PARALLELISM)
        try:
            low = int(note) if note is not None else n
        except (TypeError, ValueError):
            raise InputError(f"{where}: metadata.annotations.{MIN_PARALLELISM}", f"not a whole number: {note!r}") from None
        if not 0 < low <= n:
            raise InputError(f"{where}: metadata.annotations.{MIN_PARALLELISM}", f"must be in [1, {n}], got {low}")
        template = _map(spec.get("template"), f"{where}: spec.template", required=True)
        demand = _requests(template, f"{where}: spec.template")
        self._add_job(meta, where, {"worker": {"demand": demand, "min": low, "max": n}},
                      priority_class=_map(template.get("spec"), where).get("priorityClassName"),
                      scheduling=[_pod_scheduling(template, f"{where}: spec.template")])

    def _replicas(self, specs: Any, where: str, field: str) -> dict[str, tuple[int, dict[str, float], Any, dict[str, Any]]]:
        out = {}
        for role, rs in _map(specs, f"{where}: spec.{field}", required=True).items():
            path = f"{where}: spec.{field}.{role}"
            rs = _map(rs, path)
            template = _map(rs.get("template"), f"{path}.template", required=True)
            out[str(role)] = (_count(rs.get("replicas"), f"{path}.replicas", 1, least=0),
                              _requests(template, f"{path}.template"),
                              _map(template.get("spec"), path).get("priorityClassName"),
                              _pod_scheduling(template, f"{path}.template"))
        return out

    def _tfjob(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        reps = self._replicas(spec.get("tfReplicaSpecs"), where, "tfReplicaSpecs")
        other = sorted(set(reps) - {"PS", "Worker"})
        if other or "Worker" not in reps:
            raise InputError(where, f"spec.tfReplicaSpecs: roles {other or ['(no Worker)']} are not modelled (PS and Worker)")
        roles = {"worker": {"demand": reps["Worker"][1], "min": reps["Worker"][0], "max": reps["Worker"][0]}}
        if "PS" in reps:
            roles["ps"] = {"demand": reps["PS"][1], "min": reps["PS"][0], "max": reps["PS"][0]}
        self._add_job(meta, where, roles, priority_class=reps["Worker"][2],
                      scheduling=[reps[r][3] for r in ("PS", "Worker") if r in reps and reps[r][0] > 0])

    def _one_role(self, meta: dict, where: str, reps: dict[str, tuple[int, dict[str, float], Any, dict[str, Any]]], field: str,
                  pods_of: list[str], *, priority: Any = None, low: int | None = None) -> None:
        used = [r for r in pods_of if r in reps and reps[r][0] > 0]
        demands = {json.dumps(reps[r][1], sort_keys=True) for r in used}
        if len(demands) > 1:
            raise InputError(where, f"spec.{field}: {', '.join(used)} request differently; a one-role job's pods are alike")
        n = sum(reps[r][0] for r in used)
        if n < 1:
            raise InputError(f"{where}: spec.{field}", "no pods to admit")
        low = n if low is None else low
        self._add_job(meta, where, {"worker": {"demand": reps[used[0]][1], "min": low, "max": n}}, priority=priority,
                      priority_class=next((reps[r][2] for r in used if reps[r][2]), None),
                      scheduling=[reps[r][3] for r in used])

    def _pytorchjob(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        reps = self._replicas(spec.get("pytorchReplicaSpecs"), where, "pytorchReplicaSpecs")
        self._one_role(meta, where, reps, "pytorchReplicaSpecs", ["Master", "Worker"])

    def _mpijob(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        # Kueue admits the launcher with the workers: it counts as one more pod when it requests alike
        # (otherwise the job's pods differ, which a one-role job cannot state: refused in one line)
        reps = self._replicas(spec.get("mpiReplicaSpecs"), where, "mpiReplicaSpecs")
        self._one_role(meta, where, reps, "mpiReplicaSpecs", ["Launcher", "Worker"])

    def _jobset(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        reps = {}
        for i, rj in enumerate(_list(spec.get("replicatedJobs"), f"{where}: spec.replicatedJobs")):
            path = f"{where}: spec.replicatedJobs[{i}]"
            rj = _map(rj, path)
            job_spec = _map(_map(rj.get("template"), f"{path}.template", required=True).get("spec"), f"{path}.template.spec")
            par = _count(job_spec.get("parallelism"), f"{path}.template.spec.parallelism", 1)
            par = min(par, _count(job_spec.get("completions"), f"{path}.template.spec.completions", par))
            pods = _count(rj.get("replicas"), f"{path}.replicas", 1, least=0) * par
            template = _map(job_spec.get("template"), f"{path}.template.spec.template", required=True)
            reps[str(rj.get("name", i))] = (pods, _requests(template, f"{path}.template.spec.template"),
                                            _map(template.get("spec"), path).get("priorityClassName"),
                                            _pod_scheduling(template, f"{path}.template.spec.template"))
        self._one_role(meta, where, reps, "replicatedJobs", list(reps))

    def _workload(self, doc: dict, meta: dict, spec: dict, name: str, where: str) -> None:
        reps, low = {}, 0
        for i, ps in enumerate(_list(spec.get("podSets"), f"{where}: spec.podSets")):
            path = f"{where}: spec.podSets[{i}]"
            ps = _map(ps, path)
            count = _count(ps.get("count"), f"{path}.count", 1, least=0)
            least = _count(ps.get("minCount"), f"{path}.minCount", count, least=0)
            if least > count:
                raise InputError(f"{path}.minCount", f"must be <= count ({count}), got {least}")
            template = _map(ps.get("template"), f"{path}.template", required=True)
            reps[str(ps.get("name", i))] = (count, _requests(template, f"{path}.template"),
                                            _map(template.get("spec"), path).get("priorityClassName"),
                                            _pod_scheduling(template, f"{path}.template"))
            low += least
        queue = spec.get("queueName")
        meta = {**meta, "labels": {**_map(meta.get("labels"), f"{where}: metadata.labels"), QUEUE_LABEL: queue}}
        if spec.get("priorityClassName"):
            meta["labels"][PRIORITY_CLASS_LABEL] = spec["priorityClassName"]
        if set(reps) == {"ps", "worker"}:  # a PS/worker job (as `schedopt export kueue` writes one)
            roles = {r: {"demand": reps[r][1], "min": reps[r][0], "max": reps[r][0]} for r in ("ps", "worker")}
            self._add_job(meta, where, roles, priority=spec.get("priority"), scheduling=[reps[r][3] for r in ("ps", "worker")])
        else:
            self._one_role(meta, where, reps, "podSets", list(reps), priority=spec.get("priority"), low=max(1, low))
        admission = _map(_map(doc.get("status"), f"{where}: status").get("admission"), f"{where}: status.admission")
        if admission:
            self._admitted(self.jobs[-1], admission, reps, f"{where}: status.admission")

    def _admitted(self, job: dict, admission: dict, reps: dict, where: str) -> None:
        """A Workload Kueue admitted runs: its pod sets' admitted counts are the job's running counts
        and the flavor of its assignments the type it runs on (what a later admission may keep,
        preempt or reclaim)."""
        counts, flavors = {}, set()
        for i, a in enumerate(_list(admission.get("podSetAssignments"), f"{where}.podSetAssignments")):
            a = _map(a, f"{where}.podSetAssignments[{i}]")
            pod_set = _name(a.get("name"), f"{where}.podSetAssignments[{i}].name")
            if pod_set not in reps:
                raise InputError(f"{where}.podSetAssignments[{i}].name", f"no pod set {pod_set!r} in spec.podSets")
            counts[pod_set] = _count(a.get("count"), f"{where}.podSetAssignments[{i}].count", reps[pod_set][0], least=0)
            flavors |= {str(f) for f in _map(a.get("flavors"), f"{where}.podSetAssignments[{i}].flavors").values()}
        roles = job["roles"]
        if set(roles) == {"ps", "worker"}:
            job["running"] = {r: counts.get(r, 0) for r in roles}
        else:
            job["running"] = {"worker": sum(counts.values())}
        if flavors:
            job["running_flavor"] = (sorted(flavors), f"{where}.podSetAssignments")  # the shared ones set aside later

    def _priorities_and_times(self, source: str) -> None:
        """Each job's priority (Workload ``spec.priority``; else its WorkloadPriorityClass label; else
        its pods' PriorityClass; else the PriorityClass marked ``globalDefault``, or 0) as a weight
        >= 1 keeping the order (weight = priority - the least + 1), and its creation time as its
        arrival (seconds after the earliest; a job without one is created last, in listing order)."""
        values = []
        for j in self.jobs:
            given, pod_class, wl_class, where = j.pop("priority")
            if given is not None:
                value = _priority(given, f"{where}: spec.priority")
            elif wl_class is not None:
                if wl_class not in self.workload_priority_classes:
                    raise InputError(f"{where}: metadata.labels.{PRIORITY_CLASS_LABEL}",
                                     f"no WorkloadPriorityClass {wl_class!r} in the files")
                value = self.workload_priority_classes[wl_class]
            elif pod_class is not None:
                if pod_class not in self.priority_classes:
                    raise InputError(f"{where}: priorityClassName", f"no PriorityClass {pod_class!r} in the files")
                value = self.priority_classes[pod_class]
            else:
                value = self.default_priority
            values.append(value)
            j["where"] = where
        least = min(values, default=0)
        for j, value in zip(self.jobs, values):
            j["weight"] = float(value - least + 1)
        for queue, threshold in self.thresholds.items():  # in the same weights as the jobs'
            self.queues[queue]["preemption"]["max_priority_threshold"] = float(threshold - least + 1)
        times = [j["created"] for j in self.jobs if j["created"] is not None]
        first, last = min(times, default=0.0), max(times, default=0.0)
        for j in self.jobs:
            created = j.pop("created")
            j["arrival"] = (created if created is not None else last) - first

    @property
    def default_priority(self) -> int:
        return self._global_default if hasattr(self, "_global_default") else 0

    # ---- the instance ---------------------------------------------------------------------------
    def shared_flavors(self) -> set[str]:
        """The flavors of further resource groups: in a ClusterQueue (or Cohort) with several groups,
        one group may choose among flavors (several, or with node labels or taints: the accelerator
        types); every other group holds one flavor without node labels or taints, whose quota a job
        draws on whatever type it runs on. Anything else is refused in one line."""
        chosen: set[str] = set()
        shared: dict[str, str] = {}
        for where, groups in self.groups.items():
            groups = [g for g in groups if g]
            if len(groups) <= 1:
                chosen |= set(groups[0]) if groups else set()
                continue
            bound = [i for i, g in enumerate(groups)
                     if len(g) > 1 or any(self.flavors.get(f) or self.flavor_taints.get(f) for f in g)]
            if len(bound) > 1:
                raise InputError(f"{where}: spec.resourceGroups[{bound[1]}]", "a second resource group choosing among "
                                 "flavors (several, or with node labels or taints) is not modelled: one group may choose "
                                 "a flavor; every other holds one flavor without node labels, shared by every type")
            main = bound[0] if bound else 0
            for i, g in enumerate(groups):
                if i == main:
                    chosen |= set(g)
                else:
                    shared.setdefault(g[0], f"{where}: spec.resourceGroups[{i}]")
        for f in sorted(set(shared) & chosen):
            raise InputError(shared[f], f"flavor {f} holds a further resource group's quota here and is a flavor to "
                                        "choose elsewhere: not modelled")
        return set(shared)

    def instance(self, name: str, source: str) -> Instance:
        holders = [*self.queues.values(), *self.cohorts.values()]  # what holds quotas: queues and cohorts
        shared = self.shared_flavors()
        for j in self.jobs:
            if j.pop("accounted", False):
                continue  # written by `schedopt export kueue`: transformed already
            for role in j["roles"].values():
                role["demand"] = self.transformed(role["demand"])
        flavors = [f for f in self.flavors if f not in shared] or sorted({f for q in holders for f in q["quotas"]} - shared)
        resources = sorted({r for q in holders for per in q["quotas"].values() for r in per}
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
                cap = {r: sum(q["quotas"].get(g, {}).get(r, {}).get("nominal", 0.0) for q in holders for g in (f, *sorted(shared)))
                       for r in resources}  # a shared flavor's quota: on every type's server
                servers.append({"name": f, "accelerator": f, "capacity": cap})
        self._priorities_and_times(source)
        if any(r == "pods" for q in holders for per in q["quotas"].values() for r in per) or \
                any("pods" in n["capacity"] for n in self.nodes):
            for j in self.jobs:  # Kueue counts the pods resource as one per pod
                for role in j["roles"].values():
                    role["demand"] = {**role["demand"], "pods": 1.0}
            resources = sorted(set(resources) | {"pods"})
        cluster_flavors = list(dict.fromkeys(srv["accelerator"] for srv in servers))
        ids: dict[str, str] = {}
        jobs = []
        named = Counter(j["id"] for j in self.jobs)
        for j in self.jobs:  # a name two namespaces share: each job's id is namespace/name
            if named[j["id"]] > 1:
                j["id"] = f"{j['queue_local'][0]}/{j['id']}"
        for j in self.jobs:
            if j["id"] in ids:
                raise InputError(source, f"two workloads named {j['id']!r} ({ids[j['id']]} and {j['where']}): a job's "
                                         "id is its name, or namespace/name where namespaces share the name; rename one")
            ids[j["id"]] = j.pop("where")
            allowed = [f for f in cluster_flavors if all(
                flavor_refusal(f, self.flavors.get(f, {}), self.flavor_taints.get(f, []), self.flavor_tolerations.get(f, []), pod)
                is None for pod in j["scheduling"])]
            j.pop("scheduling")
            annotated = j.pop("annotated_flavors", None)
            if annotated is not None:
                unknown = sorted(set(annotated) - set(flavors))
                if unknown:
                    raise InputError(source, f"job {j['id']}: metadata.annotations.{ALLOWED_FLAVORS_ANNOTATION}: "
                                             f"no ResourceFlavor {unknown[0]!r} in the files")
                allowed = [f for f in cluster_flavors if f in annotated]  # schedopt's record of the pods' rules
            if allowed != cluster_flavors:  # Kueue may assign some flavors only
                j["allowed_flavors"] = allowed
            running = j.pop("running_flavor", None)
            flavor = None
            if running is not None:
                kinds = [f for f in running[0] if f not in shared]
                if len(kinds) > 1:
                    raise InputError(running[1], f"flavors {kinds}: a job runs on one flavor (type)")
                flavor = kinds[0] if kinds else (cluster_flavors[0] if len(cluster_flavors) == 1 else None)
                if flavor is None:
                    raise InputError(running[1], f"flavors {running[0]} are all shared: the type the job runs on is unknown")
            if flavor is not None:
                if flavor not in flavors:
                    raise InputError(source, f"job {j['id']}: status.admission: flavor {flavor!r} is no ResourceFlavor "
                                             "in the files")
                j["running_accelerator"] = flavor  # every server's type is its flavor
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
               "queues": list(self.queues.values()) or None, "cohorts": list(self.cohorts.values()) or None,
               "shared_flavors": sorted(shared) or None}
        for key_ in ("queues", "cohorts", "shared_flavors"):
            if doc[key_] is None:
                doc.pop(key_)
        return Instance.from_dict(doc, source=source)


def import_kueue(paths: list[str | os.PathLike[str]], *, name: str = "kueue") -> Instance:
    """One instance from Kueue/Kubeflow manifest files (module docstring); :class:`InputError` naming the file and field."""
    reader = _Reader()
    for path in paths:
        for i, doc in enumerate(read_documents(path)):
            reader.read(doc, f"{path}[{i}]")
    return reader.instance(name, ", ".join(map(str, paths)))
