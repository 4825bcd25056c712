"""Pyomo + HiGHS: one place that runs a model and reads back why it stopped,
the incumbent and the dual bound.

Thread safety: ``pyomo.contrib.solver``'s HiGHS interface captures output by
redirecting the process's stdout/stderr file descriptors (``pyomo.common.tee``),
which two threads cannot do at once (they deadlock). Solves are therefore
serialised by :data:`PYOMO_SOLVE_LOCK`; a thread's wait for it counts against
its time limit. CP-SAT solves run concurrently. For parallel HiGHS solves use
processes (``schedopt sweep`` on Ray).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from typing import TYPE_CHECKING

from schedopt.logs import backend_logger
from schedopt.plan import Termination

if TYPE_CHECKING:
    import pyomo.environ as pyo

#: pyomo.contrib.solver termination (by name) -> ours. Pyomo is imported only when a
#: model is solved, so `import schedopt` stays light.
HIGHS_TERMINATION = {
    "convergenceCriteriaSatisfied": Termination.OPTIMAL,
    "maxTimeLimit": Termination.TIME_LIMIT,
    "iterationLimit": Termination.TIME_LIMIT,
    "provenInfeasible": Termination.INFEASIBLE,
    "locallyInfeasible": Termination.INFEASIBLE,
    "infeasibleOrUnbounded": Termination.INFEASIBLE,
    "unbounded": Termination.UNBOUNDED,
}


#: one Pyomo HiGHS solve at a time in this process (see the module docstring)
PYOMO_SOLVE_LOCK = threading.Lock()

#: Pyomo's hand-over of a built model to HiGHS (``set_instance``) and the read-back
#: take about this many times the model's build time; HiGHS's own clock does not
#: count them (measured on Dorm's P2 and the placement models: 2.0-2.6x)
HANDOVER_PER_BUILD_SECOND = 2.5
#: a HiGHS run shorter than this is not started: it could not improve on the incumbent
MIN_HIGHS_SECONDS = 0.01


@dataclass
class HighsResult:
    """Why HiGHS stopped, whether the model's variables hold a solution, its
    objective and the proven bound (None when HiGHS has none)."""

    termination: Termination
    has_solution: bool
    incumbent: float | None
    bound: float | None
    backend_status: str


def solve_highs(model: pyo.ConcreteModel, *, time_limit: float | None, rel_gap: float, threads: int,
                seed: int | None, abs_gap: float = 0.0, build_seconds: float = 0.0,
                presolve: bool = True, max_nodes: int | None = None) -> HighsResult:
    """Solve ``model`` with HiGHS; on a feasible or optimal answer the values are
    loaded into the model's variables. Never raises on a non-optimal result.

    ``time_limit`` (s) covers the wait for :data:`PYOMO_SOLVE_LOCK`, Pyomo's
    hand-over (estimated as :data:`HANDOVER_PER_BUILD_SECOND` × ``build_seconds``,
    the time the caller took to build ``model``) and HiGHS's run; when too little
    is left for a run after the hand-over, HiGHS is not started (TIME_LIMIT).
    ``max_nodes``: HiGHS's ``mip_max_nodes``, a work limit that, unlike time, is
    deterministic (the incumbent at the limit comes back as feasible)."""
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus

    from schedopt.backends.lp import usable_threads

    threads = usable_threads(threads)  # loads highspy (its banner kept off stdout); 0: a host's scheduler

    t0 = time.perf_counter()
    handover = HANDOVER_PER_BUILD_SECOND * max(0.0, build_seconds)
    if time_limit is not None and time_limit - handover < MIN_HIGHS_SECONDS:
        return HighsResult(Termination.TIME_LIMIT, False, None, None,
                           f"time limit reached: {time_limit:.3g} s left, the hand-over to HiGHS needs about {handover:.3g} s")
    if not PYOMO_SOLVE_LOCK.acquire(timeout=-1 if time_limit is None else max(0.0, time_limit - handover - MIN_HIGHS_SECONDS)):
        return HighsResult(Termination.TIME_LIMIT, False, None, None, "time limit reached waiting for another HiGHS solve")
    try:
        left = None if time_limit is None else max(1e-3, time_limit - handover - (time.perf_counter() - t0))
        logger = backend_logger("highs")  # progress lines only when the caller asked (log=True)
        res = SolverFactory("highs").solve(
            model, time_limit=left, rel_gap=rel_gap, abs_gap=abs_gap, threads=threads,
            load_solutions=False, raise_exception_on_nonoptimal_result=False,
            tee=logger if logger is not None else False,
            solver_options={"random_seed": int(seed or 0), "output_flag": logger is not None,
                            **({} if presolve else {"presolve": "off"}),
                            **({} if max_nodes is None else {"mip_max_nodes": int(max_nodes)})},
        )
        has = res.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
        if has:
            res.solution_loader.load_vars()
    finally:
        PYOMO_SOLVE_LOCK.release()
    bound = res.objective_bound
    if bound is not None and not math.isfinite(bound):
        bound = None
    return HighsResult(termination=HIGHS_TERMINATION.get(res.termination_condition.name, Termination.ERROR),
                       has_solution=has, incumbent=res.incumbent_objective if has else None, bound=bound,
                       backend_status=str(res.termination_condition))
