"""Communication-aware step time for the simulator (Optimus eq. 2-4, §4.2 and the Appendix).

A PS job's step splits into a part placement cannot change (forward and
backward passes, parameter updates, per-task overhead) and the data transfer
between workers and parameter servers. In Optimus' speed forms the transfer is
one fitted term, the S/p term of eq. 2:

- eq. 4 (``optimus-sync``): θ2·w/p seconds per step;
- eq. 3 (``optimus-async``): θ1·w/p per worker step, θ1/p per job step.

That fit was measured with the job's tasks spread (the profile's f(p, w)); we
take it to be the *all-remote* placement, every PS-worker pair across servers,
with parameters spread evenly over the PS (eq. 2's assumption). A placement
scales the term by

- ``φ`` (transfer share), the Appendix's synchronous transfer time of the
  placement over the all-remote one: a PS on server k exchanges S/p with the
  w - w_k workers elsewhere at its bandwidth B, a worker on k with the p - p_k
  PS elsewhere at its bandwidth b; the slowest transfer decides, co-located
  pairs are free. φ = max_k max((w - w_k)/B [k hosts a PS], (p - p_k)/b
  [k hosts a worker]) / max(w/B, p/b): 0 on one server, 1 when no PS shares
  a server with a worker (Fig. 10: placements (a), (b), (c) give 3/4, 3/4, 2/4).
- ``λ`` (PS imbalance), p · (largest PS's parameters) / S, from a
  ``ps-assignment`` of the job's ``param_blocks``: the slowest PS decides a
  synchronous step (§5.3). 1 when the parameters are spread evenly.

Step time = f(p, w)⁻¹ + (φ·λ - 1) · transfer term. Bandwidth is per task
(the Appendix's B_j, b_j): tasks of other jobs on the same server do not
slow the transfer. Forms without a separable transfer term (``table``,
``amdahl``) keep their profile speed.
"""

from __future__ import annotations

from typing import Any, Mapping

from schedopt.instance import Job


def transfer_term_s(job: Job, p: int, w: int) -> float | None:
    """The seconds per step of ``job``'s speed model that are PS-worker data
    transfer (the S/p term of Optimus eq. 2), or None when the form has none."""
    return None if job.speed is None else job.speed.transfer_term_s(p, w)


def communicates(job: Job) -> bool:
    """A PS job that declares its communication (``model_size``, ``bandwidth``)
    and whose speed form separates the transfer term."""
    return (set(job.role_names) == {"ps", "worker"} and job.model_size is not None and job.bandwidth is not None
            and job.speed is not None and job.speed.transfer_term_s(1, 1) is not None)


def transfer_share(where: Mapping[str, Mapping[str, int]], *, ps_bandwidth: float = 1.0,
                   worker_bandwidth: float = 1.0) -> float:
    """φ: the placement's synchronous transfer time over the all-remote one.
    ``where`` is server -> role -> tasks of one job (roles ``ps``, ``worker``)."""
    p = sum(int(r.get("ps", 0)) for r in where.values())
    w = sum(int(r.get("worker", 0)) for r in where.values())
    if p == 0 or w == 0:
        return 0.0
    worst = 0.0
    for roles in where.values():
        pk, wk = int(roles.get("ps", 0)), int(roles.get("worker", 0))
        if pk:
            worst = max(worst, (w - wk) / ps_bandwidth)
        if wk:
            worst = max(worst, (p - pk) / worker_bandwidth)
    return worst / max(w / ps_bandwidth, p / worker_bandwidth)


def ps_imbalance(entries: list[Mapping[str, int]], p: int) -> float:
    """λ: p × the largest PS's parameters / all parameters, for one job's
    ``ps_assignment`` entries ({ps, block, size}); 1 = even."""
    load = [0] * p
    for e in entries:
        load[int(e["ps"])] += int(e["size"])
    total = sum(load)
    return p * max(load) / total if total else 1.0


def job_transfer_share(job: Job, where: Mapping[str, Mapping[str, int]] | None) -> float:
    """φ of ``job`` placed as ``where`` with its bandwidths; None (no placement
    known): 1, the profile's all-remote placement."""
    if where is None:
        return 1.0
    bw: Any = job.bandwidth
    return transfer_share(where, ps_bandwidth=float(bw.ps), worker_bandwidth=float(bw.worker))


def step_time_s(job: Job, counts: Mapping[str, int], phi: float = 1.0, imbalance: float = 1.0) -> float:
    """Seconds per step of ``job`` at ``counts`` with transfer share ``phi`` (φ)
    and PS imbalance ``imbalance`` (λ); φ = λ = 1 is the profile's f(p, w)⁻¹."""
    p, w = int(counts["ps"]), int(counts["worker"])
    base = float(job.speed.step_time_s(p, w))
    term = transfer_term_s(job, p, w)
    return base if term is None else base + (phi * imbalance - 1.0) * term
