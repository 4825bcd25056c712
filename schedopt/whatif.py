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
                  solver: str = "optimus-milp", time_limit: float | None = None, seed: int | None = 0,
                  grow_capacity: bool = False) -> dict:
    """What setting ``queue``'s nominal quota of ``resource`` on ``flavor`` to ``nominal``
    would change: the plan before and after (both solved by ``solver``), as admitted jobs,
    Σ remaining time and each queue's usage. A lending limit above the new nominal quota is
    lowered to it (Kueue's validation: lendingLimit <= nominalQuota). ``grow_capacity``: the
    flavor's servers grow (or shrink) by the same change, spread over them in proportion to what
    they hold (for a cluster whose capacity was made up from the quotas, as ``schedopt import
    kueue`` does without Node objects). Raises :class:`InputError` naming an unknown queue,
    flavor or resource."""
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
    quota = per.setdefault(resource, {})
    quota["nominal"] = float(nominal)
    if quota.get("lending_limit") is not None and quota["lending_limit"] > nominal:
        quota["lending_limit"] = float(nominal)
    if grow_capacity:
        kind = instance.accelerators[instance.flavors.index(flavor)]
        mine = [srv for srv in doc["servers"] if srv.get("accelerator") == kind]
        held = sum(float(srv["capacity"].get(resource, 0.0)) * int(srv.get("count", 1)) for srv in mine)
        delta = float(nominal) - before_nominal
        for srv in mine:
            count = int(srv.get("count", 1))
            share = (float(srv["capacity"].get(resource, 0.0)) * count / held) if held > 0 else 1.0 / len(mine)
            srv["capacity"][resource] = max(0.0, float(srv["capacity"].get(resource, 0.0)) + delta * share / count)
    changed = Instance.from_dict(doc, source=f"{instance.source} (what-if)")

    def summary(inst: Instance) -> dict:
        plan = solve(inst, solver, time_limit=time_limit, seed=seed)
        return {"status": plan.status.value, "admitted": plan.objective.admitted, "total_remaining_time_s": plan.objective.value,
                "gap": plan.objective.gap, "queue_usage": plan.metrics.get("queue_usage", {}), "plan": plan}

    return {"queue": queue, "flavor": flavor, "resource": resource, "nominal_before": before_nominal,
            "nominal_after": float(nominal), "before": summary(instance), "after": summary(changed)}
