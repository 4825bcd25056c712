"""Quota what-ifs (issue 39): what a change of one queue's nominal quota changes in the plan.

The API layer (it solves through :func:`schedopt.solve`; ``schedopt what-if quota`` prints
it). The quota rows themselves (Kueue's ClusterQueue semantics) are capacity rows of the
one allocation model: :mod:`schedopt.allocation.rows`.
"""

from __future__ import annotations

from schedopt.api import solve
from schedopt.errors import InputError
from schedopt.instance import Instance


def quota_what_if(instance: Instance, *, queue: str, flavor: str, resource: str, nominal: float,
                  solver: str = "optimus-milp", time_limit: float | None = None, seed: int | None = 0) -> dict:
    """What setting ``queue``'s nominal quota of ``resource`` on ``flavor`` to ``nominal``
    would change: the plan before and after (both solved by ``solver``), as admitted jobs,
    Σ remaining time and each queue's usage. Raises :class:`InputError` naming an unknown
    queue, flavor or resource."""
    doc = instance.to_dict()
    queues = {q["name"]: q for q in doc.get("queues") or []}
    if queue not in queues:
        raise InputError("queue", f'unknown queue "{queue}"; queues: {", ".join(queues) or "none"}')
    if flavor not in instance.flavors:
        raise InputError("flavor", f'unknown flavor "{flavor}"; the cluster has {instance.flavors}')
    if resource not in instance.resources:
        raise InputError("resource", f'unknown resource "{resource}"; the instance declares {instance.resources}')
    per = queues[queue]["quotas"].setdefault(flavor, {})
    before_nominal = float(per.get(resource, {}).get("nominal", 0.0))
    per.setdefault(resource, {})["nominal"] = float(nominal)
    changed = Instance.from_dict(doc, source=f"{instance.source} (what-if)")

    def summary(inst: Instance) -> dict:
        plan = solve(inst, solver, time_limit=time_limit, seed=seed)
        return {"status": plan.status.value, "admitted": plan.objective.admitted, "total_remaining_time_s": plan.objective.value,
                "gap": plan.objective.gap, "queue_usage": plan.metrics.get("queue_usage", {}), "plan": plan}

    return {"queue": queue, "flavor": flavor, "resource": resource, "nominal_before": before_nominal,
            "nominal_after": float(nominal), "before": summary(instance), "after": summary(changed)}
