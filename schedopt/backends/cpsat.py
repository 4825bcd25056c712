"""OR-Tools CP-SAT: solver set-up with our determinism settings, the status
map, and the integer scaling every CP-SAT model needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from schedopt.logs import backend_logger
from schedopt.plan import Termination
from schedopt.tolerances import INTEGRAL_TOL

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

#: CP-SAT status name -> ours (FEASIBLE means stopped early with a solution). OR-Tools is
#: imported only when a CP-SAT model is built, so `import schedopt` stays light.
CPSAT_TERMINATION = {
    "OPTIMAL": Termination.OPTIMAL,
    "FEASIBLE": Termination.TIME_LIMIT,
    "INFEASIBLE": Termination.INFEASIBLE,
    "UNKNOWN": Termination.TIME_LIMIT,
    "MODEL_INVALID": Termination.ERROR,
}


def load_cp_model(who: str = "CP-SAT") -> Any:
    """``ortools.sat.python.cp_model``, imported on first use; when OR-Tools is
    missing or cannot load here, one :class:`~schedopt.backends.deps.MissingDependencyError`
    line naming the extra (``schedopt[cpsat]``)."""
    from schedopt.backends.deps import load

    return load("ortools.sat.python.cp_model", "ortools", who)


def cpsat_termination(solver: "cp_model.CpSolver", code: Any) -> Termination:
    """Our termination for CP-SAT's status ``code``."""
    return CPSAT_TERMINATION.get(solver.status_name(code), Termination.ERROR)


def has_solution(solver: "cp_model.CpSolver", code: Any) -> bool:
    """Whether CP-SAT stopped with a solution (OPTIMAL or FEASIBLE)."""
    return solver.status_name(code) in ("OPTIMAL", "FEASIBLE")


#: CP-SAT's presolve does not check the time limit inside its fix-point loop: on the
#: 3,000-job allocation model (481,935 Booleans) it ran 13.2 s under a 4 s limit
#: (about 2.7e-5 s per variable). Presolve is switched off when it could take more than
#: PRESOLVE_SHARE of the limit: with half, 1,000 jobs in 4 queues without borrowing (265,936
#: Booleans, 17 s left) ran 26.6 s on a loaded machine; presolve off, 20.5 s.
PRESOLVE_SECONDS_PER_VARIABLE = 2.7e-5
PRESOLVE_SHARE = 0.25
#: loading the model into the C++ solver and reading the response back sit outside
#: CP-SAT's clock (0.7 s for the same 481,935 variables); they are charged to the limit
LOAD_SECONDS_PER_VARIABLE = 1.5e-6


def make_solver(workers: int, seed: int | None, time_limit: float | None, *, variables: int = 0) -> cp_model.CpSolver:
    """A CP-SAT solver with our determinism settings (threads, seed) and the time
    limit; presolve is off when ``variables`` make it likely to take more than a quarter of it."""
    cp_model = load_cp_model()
    solver = cp_model.CpSolver()
    logger = backend_logger("cpsat")  # progress lines only when the caller asked (log=True)
    if logger is not None:
        solver.parameters.log_search_progress = True
        solver.parameters.log_to_stdout = False
        solver.log_callback = lambda line: logger.info(line.rstrip())
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = int(seed or 0)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(1e-3, float(time_limit) - LOAD_SECONDS_PER_VARIABLE * variables)
        if PRESOLVE_SECONDS_PER_VARIABLE * variables > PRESOLVE_SHARE * time_limit:
            solver.parameters.cp_model_presolve = False
    return solver


def integer_scale(values: np.ndarray) -> tuple[int, bool]:
    """Smallest power of ten (<= 10^6) making ``values`` integral, and whether it is exact."""
    for e in range(7):
        scaled = values * 10**e
        if np.all(np.abs(scaled - np.round(scaled)) <= INTEGRAL_TOL * np.maximum(1.0, np.abs(scaled))):
            return 10**e, True
    return 10**6, False
