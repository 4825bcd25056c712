"""One cell of a sweep, run in the calling process (a Ray task calls the same
function): builds the workload, runs the simulation or the solve, returns one
row of the tidy table. Deterministic in the cell; only the columns listed in
``TIMING_COLUMNS`` depend on the machine."""

from __future__ import annotations

import time
import traceback
from typing import Any

import numpy as np

from schedopt.instance import Instance

#: columns that measure time on this machine: the only ones that differ between two runs of a cell
TIMING_COLUMNS = ("cell_seconds", "scheduler_seconds", "solve_seconds")
#: parameter columns every row has, first
PARAM_COLUMNS = ("workload", "seed", "load", "scheduler", "time_limit")


def build_workload(cell: dict[str, Any]) -> Instance:
    """The cell's instance: generated from its family and seed, or read from its file; arrivals ÷ load."""
    from schedopt.generate import generate_instance
    from schedopt.instance import load_instance

    wl = cell["workload"]
    if "file" in wl:
        inst = load_instance(wl["file"])
    else:
        inst = generate_instance(wl["family"], jobs=wl["jobs"], servers=wl["servers"], seed=cell["seed"],
                                 max_tasks=wl["max_tasks"], data_dir=wl.get("data_dir"))
    load = float(cell["load"])
    if load != 1.0:
        jobs = [j.model_copy(update={"arrival": j.arrival / load}) for j in inst.jobs]
        inst = inst.model_copy(update={"jobs": jobs, "name": f"{inst.name}@load{load:g}"})
    return inst


def contention(instance: Instance) -> float:
    """Σ_j (minimum demand of job j) / capacity, on the scarcest resource: > 1 means not every job fits."""
    if not instance.jobs:
        return 0.0
    need = sum(sum(r.min * instance.vector(r.demand) for r in j.roles.values()) for j in instance.jobs)
    cap = instance.capacity_total
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(cap > 0, need / np.where(cap > 0, cap, 1.0), np.where(need > 0, np.inf, 0.0))
    return float(ratio.max())


def cell_params(cell: dict[str, Any]) -> dict[str, Any]:
    return {"workload": cell["workload_label"], "seed": cell["seed"], "load": cell["load"], "scheduler": cell["label"],
            "time_limit": cell["time_limit"]}


def _simulate(cell: dict[str, Any], inst: Instance) -> dict[str, Any]:
    from schedopt.sim import simulate

    s = cell["simulator"]
    r = simulate(inst, cell["scheduler"], placement=cell["placement"], options=cell["options"] or None, seed=cell["seed"],
                 interval_s=s["interval_s"], restart_overhead_s=s["restart_overhead_s"], restart_aware=s["restart_aware"],
                 communication_aware=s["communication_aware"], ps_assignment=s["ps_assignment"],
                 error_steps=s["error_steps"], error_speed=s["error_speed"], estimation=s.get("estimation", "truth"),
                 horizon_s=s["horizon_s"])
    pct = r.jct_percentiles_s
    return {"jobs": len(r.jobs), "finished": r.finished, "unfinished": r.unfinished, "avg_jct_s": r.avg_jct_s,
            "p50_jct_s": pct.get("p50"), "p90_jct_s": pct.get("p90"), "p99_jct_s": pct.get("p99"),
            "makespan_s": r.makespan_s, "restarts": r.restarts, "scaling_overhead_share": r.scaling_overhead_share,
            "mean_transfer_share": r.mean_transfer_share, "plans": r.plans, "scheduler_seconds": r.scheduler_seconds}


def _solve(cell: dict[str, Any], inst: Instance) -> dict[str, Any]:
    import schedopt

    name = cell["scheduler"] if cell["placement"] is None else f"{cell['scheduler']}+{cell['placement']}"
    plan = schedopt.solve(inst, name, time_limit=cell["time_limit"], seed=cell["seed"], **(cell["options"] or {}))
    o = plan.objective
    return {"jobs": len(inst.jobs), "contention": contention(inst), "status": plan.status.value,
            "termination": plan.termination.value, "admitted": o.admitted, "objective": o.value, "bound": o.bound,
            "gap": o.gap, "violations": len(schedopt.check(inst, plan)), "solve_seconds": plan.solve_seconds}


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """The row of ``cell``: its parameters, ``ok`` and its metrics, or ``ok`` false and the error."""
    t0 = time.perf_counter()
    row: dict[str, Any] = {**cell_params(cell), "key": cell["key"]}
    try:
        inst = build_workload(cell)
        row.update(_simulate(cell, inst) if cell["kind"] == "simulate" else _solve(cell, inst))
        row.update(ok=True, error=None)
    except Exception as exc:  # a failing cell records its error; the sweep goes on
        last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
        row.update(ok=False, error=f"{type(exc).__name__}: {exc}{where}")
    row["cell_seconds"] = time.perf_counter() - t0
    return row
