"""The ps-assignment problem's data and metrics (Optimus §5.3, Table 3; checker side, no solver).

A job gives ``param_blocks`` (parameters per block, in MXNet's order) and the
instance's ``allocation`` gives its PS count p. A plan assigns every block, or
slices of it, to PS 0..p-1: ``ps_assignment: {job: [{ps, block, size}, ...]}``,
one entry per parameter update request. Table 3's metrics, per job and over
all jobs (max of the differences, sum of the requests):

- ``max_size_difference``: largest minus smallest parameters on a PS;
- ``max_request_difference``: most minus fewest requests on a PS;
- ``total_requests``: entries (a block sliced in k gives k requests).

The objective (``max_size_difference``) has a closed-form optimum, replayed as the
certificate kind ``ps-divisibility``: a job's S parameters (the sum of its blocks) on p
PS, integer slices of any size, differ by at least 1 exactly when p does not divide S,
and slicing into near-equal parts reaches that; so no plan goes below
max_j [S_j mod p_j != 0] (:func:`divisibility_bound`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.claims import Replay
from schedopt.errors import FieldProblem, InputError
from schedopt.instance import Instance

Entry = dict[str, int]


def ps_counts(instance: Instance) -> dict[str, int]:
    """p for every job with ``param_blocks``, from ``allocation.<job>.ps``."""
    out, problems = {}, []
    for i, job in enumerate(instance.jobs):
        if not job.param_blocks:
            continue
        p = (instance.allocation or {}).get(job.id, {}).get("ps")
        if p is None or p < 1:
            problems.append(FieldProblem(f"allocation.{job.id}.ps", f"jobs[{i}] has param_blocks: its PS count (>= 1) is required"))
            continue
        out[job.id] = int(p)
    if problems:
        raise InputError(instance.source, problems)
    return out


def job_metrics(entries: list[Entry], p: int) -> dict[str, int]:
    size = np.zeros(p, dtype=np.int64)
    requests = np.zeros(p, dtype=np.int64)
    for e in entries:
        size[e["ps"]] += e["size"]
        requests[e["ps"]] += 1
    return {"max_size_difference": int(size.max() - size.min()),
            "max_request_difference": int(requests.max() - requests.min()),
            "total_requests": len(entries)}


def assignment_metrics(instance: Instance, assignment: dict[str, list[Entry]]) -> dict[str, Any]:
    counts = ps_counts(instance)
    per_job = {j: job_metrics(assignment.get(j, []), p) for j, p in counts.items()}
    return {
        "max_size_difference": max((m["max_size_difference"] for m in per_job.values()), default=0),
        "max_request_difference": max((m["max_request_difference"] for m in per_job.values()), default=0),
        "total_requests": sum(m["total_requests"] for m in per_job.values()),
        "per_job": per_job,
    }


def divisibility_bound(instance: Instance) -> int:
    """The least ``max_size_difference`` any plan reaches: 1 when some job's parameters
    (the sum of its blocks) do not divide evenly over its PS, else 0."""
    counts = ps_counts(instance)
    return max((int(sum(job.param_blocks or []) % counts[job.id] != 0) for job in instance.jobs if job.id in counts),
               default=0)


def replay_divisibility(instance: Instance, plan: Any, proof: Any) -> float:
    """``ps-divisibility``: the bound the instance alone proves (the proof carries no numbers)."""
    return float(divisibility_bound(instance))


CERTIFICATES = {"ps-divisibility": Replay("bound", replay_divisibility)}
