"""``optimus-cpsat``: the same multiple-choice model in OR-Tools CP-SAT.

CP-SAT needs integers. Demands and capacities are scaled by the smallest
10^e (e <= 6) that makes them integral; if none does, demands are rounded up
and capacities down (the plan stays feasible, but the bound is dropped). Times
are scaled so the largest configuration time maps to ``COST_RESOLUTION`` and
rounded; each admitted job's rounding moves the objective by at most 0.5, so
the reported bound is (CP-SAT bound - 0.5·n) / scale, a proven bound on the
true optimum, and ``scaling_error_s`` says what the rounding can cost.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from schedopt.deadline import Deadline
from schedopt.backends.cpsat import cpsat_termination, has_solution, integer_scale, load_cp_model, make_solver
from schedopt.results import StageResult
from schedopt.allocation.problem import AllocationData, ChoiceSet
from schedopt.plan import Termination

if TYPE_CHECKING:
    from schedopt.allocation.size_classes import ClassRows

COST_RESOLUTION = 1e9
NAMED_VARIABLES = 20_000

#: Boolean variables created between two reads of the clock while a large model is built
BUILD_CHUNK = 100_000


class CpSatBackend:
    """One lexicographic stage of the multiple-choice model in CP-SAT (shared with the quality problem)."""

    label = "cp-sat"
    # CP-SAT model build in Python, hint included: about 1e-5 s per configuration on a quiet machine
    # (docs/benchmarks.md), 2.4e-5 measured with 3 processes on 2 cores (16,000 jobs: 3.4 M configurations
    # left after fixing, 82 s). The driver skips the stage when this much does not fit in the time left.
    seconds_per_choice = 2.5e-5

    def __init__(self, workers: int):
        self.workers = workers

    def solve_stage(self, data: AllocationData, cs: ChoiceSet, *, stage: str, every_job: bool,
                    min_admitted: int, time_limit: float | None, seed: int | None,
                    hint: list[int] | None = None, max_admitted: int | None = None,
                    classes: ClassRows | None = None) -> StageResult:
        cp_model = load_cp_model()  # imported when a model is built: `import schedopt` stays light
        t0 = time.perf_counter()
        # -- data, scaled to integers
        unit, exact_units = integer_scale(np.concatenate([data.demand.ravel(), data.cap]))
        use = np.ceil(np.round(cs.use * unit, 9)).astype(np.int64)
        cap = np.floor(np.round(data.cap * unit, 9)).astype(np.int64)
        max_cost = float(np.abs(cs.cost).max()) if cs.K else 0.0
        scale = COST_RESOLUTION / max_cost if max_cost > 0 else 1.0
        cost = np.round(cs.cost * scale).astype(np.int64)
        owners = sorted({int(j) for j in cs.job})

        clock = Deadline(time_limit, t0)  # building counts against the limit

        def out_of_time(phase: str) -> StageResult | None:
            """The limit passed while building (a loaded machine builds slower than measured)."""
            if not clock.expired():
                return None
            return StageResult(termination=Termination.TIME_LIMIT, solution=None,
                               info={f"{stage}_build_seconds": time.perf_counter() - t0, f"{stage}_stopped_in": phase})

        model = cp_model.CpModel()
        # -- variables: x[k] = 1 if its job runs in configuration k
        # (named x[job,c0,c1] up to NAMED_VARIABLES configurations; beyond, naming costs more than it helps)
        if cs.K <= NAMED_VARIABLES:
            x = [model.new_bool_var(f"x[{data.jobs[int(cs.job[k])].id},{cs.counts[k, 0]},{cs.counts[k, 1]}]") for k in range(cs.K)]
        else:
            x = []
            for lo in range(0, cs.K, BUILD_CHUNK):  # the clock is read between chunks
                x.extend(model.new_bool_var("") for _ in range(lo, min(cs.K, lo + BUILD_CHUNK)))
                if (late := out_of_time("variables")) is not None:
                    return late
        # -- constraints
        # Optimus eq. 8 as a multiple choice: one configuration per job (at most one if it may be paused)
        for j in owners:
            group = x[int(cs.start[j]):int(cs.start[j + 1])]
            if every_job:
                model.add_exactly_one(group)
            else:
                model.add_at_most_one(group)
        if (late := out_of_time("one configuration per job")) is not None:
            return late
        # Optimus eq. 7: capacity of every resource type r
        for r in range(data.R):
            nz = np.nonzero(use[:, r])[0]
            if len(nz):
                model.add(cp_model.LinearExpr.weighted_sum([x[k] for k in nz], use[nz, r].tolist()) <= int(cap[r]))
        # DESIGN.md admission: admit at least the most jobs found in stage 1
        if not every_job and stage == "time":
            model.add(sum(x) >= min_admitted)
        # stage 1's ceiling, the count the admission LP's prices prove: a plan meeting it ends the search
        if stage == "admit" and max_admitted is not None:
            model.add(sum(x) <= max_admitted)
        # size classes (size_classes.py): every plan admitting at least min_admitted jobs within the
        # capacity pooled over the types keeps each cut class's count of admitted jobs in its range
        if classes is not None:
            for c, (lo, hi) in enumerate(zip(classes.lo.tolist(), classes.hi.tolist())):
                model.add_linear_constraint(sum(x[k] for k in np.flatnonzero(classes.place == c).tolist()), lo, hi)
        # -- objective
        if stage == "admit":
            model.maximize(sum(x))  # DESIGN.md: first, maximise admitted jobs
        else:
            model.minimize(cp_model.LinearExpr.weighted_sum(x, cost.tolist()))  # Optimus eq. 5-6

        if (late := out_of_time("capacity and objective")) is not None:
            return late
        # -- the incumbent as a complete solution hint (anytime: CP-SAT starts from it);
        # written to the proto in bulk (x are variables 0..K-1; add_hint per variable costs 3 µs each)
        if hint:
            values = np.zeros(cs.K, dtype=np.int64)
            values[np.asarray(hint, dtype=np.int64)] = 1
            model.proto.solution_hint.vars.extend(range(cs.K))
            model.proto.solution_hint.values.extend(values.tolist())

        solver = make_solver(self.workers, seed, clock.left(),
                             variables=cs.K)
        # the full LP relaxation in the search: at 4,000 jobs it proves the optimum in about 15 s,
        # where the default level stalls at a 1e-6 gap for minutes (docs/benchmarks.md)
        solver.parameters.linearization_level = 2
        # every row in that LP from the start, not added once violated: the model is a row per job and a
        # few capacity rows, and its LP bound is what closes the multi-type knapsacks (1,000 typed `gavel`
        # jobs on 250 servers, seed 1: 61,751 -> 25,559 branches, 1.3 -> 0.3 s; 4,000 typed jobs on 1,000
        # servers: 59 s unproven -> 0.7 s proven). And no CP-SAT presolve: the driver has pruned dominated
        # configurations and fixed by reduced cost already, and it cost 0.13 s of an untyped 1,000-job
        # stage that then takes 0.006 s, and most of the 60 s limit on 1,000 jobs in 4 queues without
        # borrowing (266,000 Booleans; proven in 6.6 s without it). Both together, on 84 stage models
        # captured from 11-1,000-job solves (typed, multi-GPU, untyped): the same optima, one solve slower
        # (7.7 -> 9.4 ms), the rest as fast or faster (docs/benchmarks.md, typed snapshots)
        solver.parameters.add_lp_constraints_lazily = False
        solver.parameters.cp_model_presolve = False
        built = time.perf_counter() - t0
        code = solver.solve(model)
        term = cpsat_termination(solver, code)
        chosen = None
        if has_solution(solver, code):
            solution = np.asarray(list(solver.response_proto.solution), dtype=np.int64)
            chosen = np.flatnonzero(solution[:cs.K] > 0).tolist()  # x are variables 0..K-1
        bound: float | None = None
        info: dict[str, Any] = {f"{stage}_build_seconds": built, f"{stage}_solver_seconds": time.perf_counter() - t0 - built}
        if has_solution(solver, code):
            raw = float(solver.best_objective_bound)
            if stage == "admit":
                bound = raw
            elif exact_units:
                n = len(owners)
                bound = (raw - 0.5 * n) / scale  # each chosen cost rounded by at most 1/2
                if cs.K and cs.cost.min() >= 0:
                    bound = max(0.0, bound)
                info["scaling_error_s"] = 0.5 * n / scale
            else:
                info["scaling_note"] = "demands not integral at 10^6: rounded up, bound dropped"
        info[f"{stage}_demand_unit"] = unit
        if term == Termination.ERROR:
            info[f"{stage}_backend_status"] = solver.status_name(code)
        return StageResult(termination=term, solution=chosen, value=solver.objective_value if chosen else None,
                           bound=bound, info=info)
