"""Build an :class:`~schedopt.instance.Instance` from a scheduler's live state.

A scheduler knows its servers (and what is free on them), its jobs (their
roles, progress and observed speeds) and where their tasks run now. This
module turns that into a validated instance, one call per fact::

    state = ClusterState(["gpu", "cpu"], name="round-17")
    state.add_server("node-0", free={"gpu": 4, "cpu": 32})
    state.add_ps_job("resnet", ps={"cpu": 4}, worker={"gpu": 1, "cpu": 4}, max_ps=4, max_workers=8,
                     speed={"form": "optimus-sync", "theta": [1, 2, 0.3, 0, 0.02], "batch": 128},
                     remaining_steps=20_000)
    state.add_allreduce_job("bert", per_gpu={"gpu": 1, "cpu": 4}, max_gpus=8,
                            speed={"form": "amdahl", "serial": 0.05, "parallel": 1.2}, remaining_steps=5_000)
    state.set_running("resnet", {"node-0": {"ps": 1, "worker": 2}})
    inst = state.instance()        # validated like a file; raises InputError naming the field

On a cluster that mixes accelerator types, each server names its type
(``add_server(..., accelerator="v100")``) and a job may give its speed per type
(``speed_by_accelerator={"v100": ..., "k80": ...}``, forms or callables).

Units: capacities and demands in the units the scheduler declares per
resource; ``remaining_steps`` in training steps; speeds in steps per second.
A speed may also be any Python callable (``f(p, w)`` or ``f(n)`` in steps per
second, e.g. the cluster simulator's own throughput model): it is evaluated on
every count the job's bounds allow, into a ``table`` speed.
Progress may be given as observations instead (``loss_history``: steps and
losses, fitted by Optimus eq. 1 into ``remaining_steps``; ``speed_samples``:
measured speeds, fitted by NNLS) and the instance fits them on validation.
"""

from __future__ import annotations

from typing import Any, Mapping

from schedopt.instance import Instance

Amounts = Mapping[str, float]


def _table(points: list[list[float]]) -> dict[str, Any]:
    """A ``table`` speed from evaluated points; counts whose speed is not > 0 are not allowed."""
    return {"form": "table", "points": [[*pt[:-1], float(pt[-1])] for pt in points if float(pt[-1]) > 0]}


class ClusterState:
    """Accumulates servers, jobs and the running placement; :meth:`instance` validates."""

    def __init__(self, resources: list[str], *, name: str = "cluster-state", policy: Mapping[str, float] | None = None):
        self.resources = list(resources)
        self.name = name
        self.policy = dict(policy) if policy else None
        self._servers: list[dict[str, Any]] = []
        self._jobs: list[dict[str, Any]] = []
        self._previous: dict[str, dict[str, dict[str, int]]] = {}

    # ---- servers ---------------------------------------------------------------------
    def add_server(self, name: str, *, free: Amounts, accelerator: str | None = None) -> "ClusterState":
        """A server and the capacity the scheduler may hand out on it (free, or
        total when the running placement is given and may be reshuffled);
        ``accelerator``: the type of its GPUs (``v100``, ``k80``...), on clusters that mix them."""
        server: dict[str, Any] = {"name": name, "capacity": {k: float(v) for k, v in free.items()}}
        if accelerator is not None:
            server["accelerator"] = accelerator
        self._servers.append(server)
        return self

    # ---- jobs ------------------------------------------------------------------------
    def add_ps_job(self, job_id: str, *, ps: Amounts, worker: Amounts, max_ps: int, max_workers: int,
                   min_ps: int = 1, min_workers: int = 1, **fields: Any) -> "ClusterState":
        """A parameter-server job: per-task demands of a PS and a worker, and the
        task-count bounds. ``fields`` are any other job fields (``speed``,
        ``remaining_steps``, ``loss_history``, ``speed_samples``, ``model_size``,
        ``bandwidth``, ``weight``, ``arrival``, ``new`` ...)."""
        roles = {"ps": {"demand": dict(ps), "min": min_ps, "max": max_ps},
                 "worker": {"demand": dict(worker), "min": min_workers, "max": max_workers}}
        if callable(fields.get("speed")):  # f(p, w) -> steps/s, evaluated on the allowed grid
            f = fields["speed"]
            fields["speed"] = _table([[p, w, f(p, w)] for p in range(min_ps, max_ps + 1)
                                      for w in range(min_workers, max_workers + 1)])
        self._jobs.append({"id": job_id, "roles": roles, **fields})
        return self

    def add_allreduce_job(self, job_id: str, *, per_gpu: Amounts, max_gpus: int, min_gpus: int = 1,
                          **fields: Any) -> "ClusterState":
        """A GPU-only all-reduce job: one role (``worker``), no PS; its speed is
        a one-role form (``amdahl`` or ``table``) of the worker count."""
        roles = {"worker": {"demand": dict(per_gpu), "min": min_gpus, "max": max_gpus}}
        counts = range(min_gpus, max_gpus + 1)
        if callable(fields.get("speed")):  # f(n) -> steps/s, evaluated on the allowed counts
            f = fields["speed"]
            fields["speed"] = _table([[n, f(n)] for n in counts])
        if fields.get("speed_by_accelerator"):  # per type: a speed form, or f(n) -> steps/s on that type
            fields["speed_by_accelerator"] = {
                kind: _table([[n, f(n)] for n in counts]) if callable(f) else f
                for kind, f in fields["speed_by_accelerator"].items()}
        self._jobs.append({"id": job_id, "roles": roles, **fields})
        return self

    def set_running(self, job_id: str, placement: Mapping[str, Mapping[str, int]]) -> "ClusterState":
        """Where ``job_id``'s tasks run now: ``{server: {role: count}}`` (for
        restart-aware decisions: Dorm's adjustment budget, sticky placement)."""
        self._previous[job_id] = {srv: {r: int(n) for r, n in roles.items()} for srv, roles in placement.items()}
        return self

    # ---- result ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The instance document (``schedopt/instance@1``) built so far."""
        doc: dict[str, Any] = {"schema": "schedopt/instance@1", "name": self.name, "resources": self.resources,
                               "servers": self._servers, "jobs": self._jobs}
        if self.policy:
            doc["policy"] = self.policy
        if self._previous:
            doc["previous"] = self._previous
            kinds = {srv["name"]: srv.get("accelerator") for srv in self._servers}
            for job in self._jobs:  # the type a job runs on now, read from where it runs (one type per job)
                on = {kinds.get(name) for name in self._previous.get(job["id"], {})}
                if len(on) == 1 and None not in on and "running_accelerator" not in job:
                    job["running_accelerator"] = on.pop()
        return doc

    def instance(self) -> Instance:
        """The validated instance; raises :class:`~schedopt.errors.InputError`
        naming every bad field (``<name>: jobs[2].roles.worker.demand.gpux: ...``)."""
        return Instance.from_dict(self.to_dict(), source=self.name)
