"""``optimus-milp``: the exact multiple-choice model in Pyomo, solved by HiGHS
through :func:`schedopt.backends.highs.solve_highs` (Pyomo's standard-form compiler,
then ``highspy``).

Data: the dominance-pruned configurations k of each job j, their time
t_k = Q_j / f_j(p_k, w_k) and resource use u_kr. Variables: x_k = 1 when job
j runs in configuration k. The model is exact for every speed form, because
the non-linear f is evaluated before the model is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from schedopt.backends.highs import linear_sum, solve_highs
from schedopt.gcpause import paused_gc
from schedopt.results import StageResult
from schedopt.allocation.problem import AllocationData, ChoiceSet
from schedopt.plan import Termination
from schedopt.tolerances import capacity_limit

if TYPE_CHECKING:
    import pyomo.environ as pyo

    from schedopt.allocation.size_classes import ClassRows


def build_model(data: AllocationData, cs: ChoiceSet, *, stage: str, every_job: bool, min_admitted: int,
                max_admitted: int | None = None, classes: ClassRows | None = None) -> pyo.ConcreteModel:
    """The multiple-choice model of Optimus eq. 5-8, built in the order data,
    variables, constraints, objective. ``classes``: the size classes' ranges, implied rows
    (:func:`~schedopt.allocation.size_classes.class_rows`) that tighten the relaxation."""
    import pyomo.environ as pyo  # imported when a model is built: `import schedopt` stays light
    m = pyo.ConcreteModel(name=f"optimus-allocation-{stage}")
    # -- data
    owners = sorted({int(j) for j in cs.job})
    m.K = pyo.Set(initialize=range(cs.K), ordered=True)
    m.J = pyo.Set(initialize=owners, ordered=True)
    m.R = pyo.Set(initialize=range(data.R), ordered=True)
    cost = cs.cost.tolist()
    start = cs.start.tolist()
    cap = data.cap.tolist()
    # -- variables: x[k] = 1 if its job runs in configuration k
    m.x = pyo.Var(m.K, domain=pyo.Binary)
    x = list(m.x.values())  # in K's order

    # -- constraints
    # Optimus eq. 8 as a multiple choice: a job runs in one configuration (at most one if it may be paused)
    def one_config(m: pyo.ConcreteModel, j: int) -> Any:
        picked = linear_sum(x[start[j]:start[j + 1]])
        return picked == 1 if every_job else picked <= 1
    m.one_config = pyo.Constraint(m.J, rule=one_config)

    # Optimus eq. 7: capacity of every resource type r
    def capacity(m: pyo.ConcreteModel, r: int) -> Any:
        uses = np.flatnonzero(cs.use[:, r])
        if not len(uses):
            return pyo.Constraint.Skip
        return linear_sum([x[k] for k in uses.tolist()], cs.use[uses, r].tolist()) <= capacity_limit(cap[r])
    m.capacity = pyo.Constraint(m.R, rule=capacity)

    # DESIGN.md admission: admit at least the most jobs found in stage 1
    if not every_job and stage == "time":
        m.admitted = pyo.Constraint(expr=linear_sum(x) >= min_admitted)
    # stage 1's ceiling, the count the admission LP's prices prove: a plan meeting it ends the search
    if stage == "admit" and max_admitted is not None:
        m.ceiling = pyo.Constraint(expr=linear_sum(x) <= max_admitted)
    # size classes (size_classes.py): every plan admitting at least min_admitted jobs within the
    # capacity pooled over the types keeps each cut class's count of admitted jobs in its range
    if classes is not None:
        members = [np.flatnonzero(classes.place == c).tolist() for c in range(len(classes.lo))]
        lo, hi = classes.lo.tolist(), classes.hi.tolist()

        def size_class(m: pyo.ConcreteModel, c: int) -> Any:
            return pyo.inequality(lo[c], linear_sum([x[k] for k in members[c]]), hi[c])
        m.C = pyo.Set(initialize=range(len(lo)), ordered=True)
        m.size_class = pyo.Constraint(m.C, rule=size_class)

    # -- objective
    if stage == "admit":
        # DESIGN.md: first, maximise the number of admitted jobs
        m.objective = pyo.Objective(expr=linear_sum(x), sense=pyo.maximize)
    else:
        # Optimus eq. 5-6: minimise Σ_j t_j, t_j = Q_j / f_j(p_j, w_j)
        m.objective = pyo.Objective(expr=linear_sum(x, cost), sense=pyo.minimize)
    return m


class HighsBackend:
    """One lexicographic stage of the multiple-choice model in Pyomo + HiGHS (shared with the quality problem)."""

    label = "pyomo+highs"
    # Pyomo's model build and its compilation for HiGHS, per configuration: 1.0-1.1e-5 s measured on
    # typed stage models of 2,967, 11,908 and 44,718 configurations (the build with the collector paused,
    # the compiler's hand-over), twice that kept for a slow phase of the machine. (With
    # pyomo.contrib.solver's hand-over the build alone took 3.5-4.8e-5 s, its hand-over 2.5x more, and a
    # 10-s solve of 141,955 configurations overran to 11.7-13.9 s.) The driver skips the stage when this
    # much does not fit
    seconds_per_choice = 2.0e-5

    def __init__(self, rel_gap: float, threads: int, presolve: bool = False, max_nodes: int | None = None):
        self.rel_gap = rel_gap
        self.threads = threads
        self.max_nodes = max_nodes  # HiGHS's branch-and-bound node limit: a deterministic work cap (None: none)
        # HiGHS's presolve is off by default: reduced-cost fixing has already done the useful part,
        # and presolve does not check the time limit. Measured (one process, 60 s limit): optimus
        # 4,000 jobs x 16,000 servers 11.6 -> 5.4 s (seed 3), 16.6 -> 7.2 s (seed 5); dl2 1,000 jobs
        # 4.0 -> 3.3 s; philly 4,000 jobs at a 20 s limit: 133 s overrun -> proven optimal in 14.6 s
        self.presolve = presolve

    def solve_stage(self, data: AllocationData, cs: ChoiceSet, *, stage: str, every_job: bool,
                    min_admitted: int, time_limit: float | None, seed: int | None,
                    hint: list[int] | None = None, max_admitted: int | None = None,
                    classes: ClassRows | None = None) -> StageResult:
        import pyomo.environ as pyo  # imported when a model is built: `import schedopt` stays light
        import time as _time

        t0 = _time.perf_counter()
        with paused_gc():  # Pyomo's objects, one per variable and term (16,000 typed jobs: 1.1 -> 0.2 s)
            model = build_model(data, cs, stage=stage, every_job=every_job, min_admitted=min_admitted,
                                max_admitted=max_admitted, classes=classes)
        built = _time.perf_counter() - t0
        left = None if time_limit is None else max(1e-3, time_limit - built)
        # HiGHS's feasibility jump (its first primal heuristic) is not run: the callers hold a feasible
        # plan already (the driver's incumbent, the repair's current plan: kept when a stage finds none), and on
        # 33 stage and repair models of 40-400 typed `gavel` jobs (both objectives) it took half of
        # HiGHS's time, 276 -> 123 ms in all, the same optima (docs/benchmarks.md)
        res = solve_highs(model, time_limit=left, rel_gap=self.rel_gap, threads=self.threads, seed=seed,
                          presolve=self.presolve, max_nodes=self.max_nodes, feasibility_jump=False)
        info = {f"{stage}_build_seconds": built, f"{stage}_solver_seconds": _time.perf_counter() - t0 - built}
        term = res.termination
        chosen = [k for k in range(cs.K) if pyo.value(model.x[k]) > 0.5] if res.has_solution else None
        if term == Termination.ERROR:
            info[f"{stage}_backend_status"] = res.backend_status
        return StageResult(termination=term, solution=chosen, value=res.incumbent, bound=res.bound, info=info)
