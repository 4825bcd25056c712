"""Heuristic plans with their certified bounds: :func:`heuristic_plan`, which
every allocation and quality heuristic returns through, and
:func:`allocation_plan`, what an outside heuristic returns to be compared,
checked and certified like the built-in solvers."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from schedopt.allocation.admission import admitted_upper_bound_priced
from schedopt.allocation.typed import compile_typed, typed_config_plan
from schedopt.allocation.problem import (AllocationData, admission_proof, build_plan, compile_allocation,
                                         lagrangian_proof)
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan, Status, Termination


def allocation_plan(instance: Instance, allocation: dict[str, dict[str, int]], *, solver: str,
                    started: float | None = None, seed: int | None = None, options: dict[str, Any] | None = None,
                    metrics: dict[str, Any] | None = None, bound: bool = True,
                    accelerators: dict[str, str] | None = None) -> Plan:
    """A heuristic allocation plan for ``allocation`` (job id -> role -> count; jobs
    left out are paused), with the objective recomputed and, when ``bound``,
    the certified LP bounds on the admitted count and on Σ Q_j/f_j.
    ``started`` is the solve's ``time.perf_counter()`` start (now by default).
    On a cluster with accelerator types ``accelerators`` names each admitted job's
    type (job id -> type); queues' quotas and spread are rows of the same model."""
    t0 = time.perf_counter() if started is None else started
    config: dict[int, tuple[int, int]] = {}
    typed = compile_typed(instance) if instance.typed else None
    for job_id, counts in allocation.items():
        if job_id not in instance.job_index:
            raise InputError(solver, f'allocation names unknown job "{job_id}"')
        j = instance.job_index[job_id]
        names = instance.jobs[j].role_names
        if set(counts) != set(names):
            raise InputError(solver, f"allocation.{job_id}: roles {sorted(counts)} != the job's roles {sorted(names)}")
        c = (int(counts[names[0]]), int(counts[names[1]]) if len(names) == 2 else 0)
        if typed is None:
            config[j] = c
            continue
        kind = (accelerators or {}).get(job_id)
        if instance.has_types and kind is None:
            raise InputError(solver, f"accelerators.{job_id}: the cluster has accelerator types; name the job's "
                                     f"(accelerators={{job id: type}})")
        row = next((v for v in range(int(typed.job_start[j]), int(typed.job_start[j + 1])) if typed.accelerator(v) == kind),
                   None)
        if row is None:
            raise InputError(solver, f'accelerators.{job_id}: the job has no speed on "{kind}"')
        config[row] = c
    if typed is not None:
        return typed_config_plan(typed, config, solver=solver, started=t0, seed=seed, options=options or {},
                                 metrics=metrics or {}, bound=bound)
    data = compile_allocation(instance)
    return heuristic_plan(data, config, sorted(config), solver=solver, started=t0, seed=seed, options=options or {},
                          metrics=metrics or {}, bound=bound)


def heuristic_plan(data: AllocationData, config: dict[int, tuple[int, int]], admitted: list[int], *, solver: str,
                   started: float, seed: int | None, options: dict[str, Any], metrics: dict[str, Any],
                   bound: bool = True, dual: Any = None) -> Plan:
    """A heuristic's Plan, with the certified bounds when ``bound``: the LP bound
    on the admitted count, and the Lagrangian dual bound on the objective (the
    LP relaxation's value, found in the space of prices without enumerating
    configurations; an admission row when some jobs are paused) when the
    heuristic admitted as many jobs as that bound allows. Both carry their
    certificate (the prices) for ``schedopt check`` to replay. ``bound_lp_gap``
    in the metrics certifies how far it may be below the LP bound. ``dual``: a
    :class:`~schedopt.allocation.dual.DualResult` already solved over every job
    with no admission row, reused when every job is admitted."""
    from schedopt.allocation.relaxation import from_dual, relax_in_price_space

    lp_bound = admitted_bound = proof = admitted_proof = None
    if bound:
        if len(admitted) < data.J:
            admitted_bound, mu = admitted_upper_bound_priced(data)
            admitted_proof = admission_proof(data, mu)
        else:
            admitted_bound = data.J
        if admitted_bound == len(admitted) and admitted:
            every = len(admitted) == data.J
            admit = None if every else len(admitted)
            relaxed = from_dual(data, dual, admit) if dual is not None and every else relax_in_price_space(data, admit=admit)
            dual = relaxed.result
            lp_bound, proof = relaxed.bound, relaxed.proof
            metrics = {**metrics, "bound_method": "lagrangian-dual", "bound_iterations": dual.iterations,
                       "bound_seconds": dual.seconds, "bound_lp_gap": dual.lp_gap}
        elif admitted_bound == len(admitted) and data.J == 0:
            lp_bound, proof = 0.0, lagrangian_proof(data, np.zeros(data.R))
    status = Status.HEURISTIC if admitted or data.J == 0 else Status.INFEASIBLE
    return build_plan(
        data, solver=solver, config=config, status=status,
        termination=Termination.COMPLETED if status == Status.HEURISTIC else Termination.INFEASIBLE,
        started=started, bound=lp_bound, admitted_bound=admitted_bound, seed=seed, options=options, metrics=metrics,
        proof=proof, admitted_proof=admitted_proof,
    )
