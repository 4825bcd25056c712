"""``placement-cpsat``: exact placement in OR-Tools CP-SAT.

The same model as ``placement-milp`` (:mod:`schedopt.placement.exact`), with
CP-SAT's own constructs: T_j's bounds are enforced only on servers hosting a
task of that role (``only_enforce_if``), and the cross-node pairs' products
P_jk·W_jk are multiplication equalities.

CP-SAT needs integers. Demands and capacities are scaled by the smallest
10^e (e <= 6) that makes them integral (else rounded safely: demands up,
capacities down). The coefficients c_ps, c_w are scaled the same way when a
power of ten makes them integral; otherwise to a resolution of 10^9 of the
largest and rounded, and the reported bound subtracts the largest error that
rounding can make, so it stays a proven bound on the true optimum.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from schedopt.backends.cpsat import cpsat_termination, has_solution, integer_scale, load_cp_model, make_solver
from schedopt.instance import Instance
from schedopt.placement.classes import ClassModel, decode
from schedopt.placement.exact import Counts, Objective, coefficients, dense_previous, solve_placement_exact
from schedopt.results import StageResult
from schedopt.placement.problem import PlacementData
from schedopt.plan import Plan, Termination
from schedopt.registry import register

COST_RESOLUTION = 1e9


class CpSatPlacement:
    label = "cp-sat"

    def __init__(self, workers: int):
        self.workers = workers

    def _run(self, model: Any, stage: str, t0: float, time_limit: float | None, seed: int | None,
             linearization_level: int | None = None) -> tuple[Any, Any, Termination, dict[str, Any]]:
        """Solve a built model in what is left of ``time_limit`` since ``t0``: (solver, status code, termination, info).
        ``linearization_level=2`` for the class model, whose LP (bin-packing bounds) is its strength."""
        built = time.perf_counter() - t0
        solver = make_solver(self.workers, seed, None if time_limit is None else max(1e-3, time_limit - built),
                             variables=len(model.proto.variables))
        if linearization_level is not None:
            solver.parameters.linearization_level = linearization_level
        code = solver.solve(model)
        term = cpsat_termination(solver, code)
        info: dict[str, Any] = {f"{stage}_build_seconds": built, f"{stage}_solver_seconds": time.perf_counter() - t0 - built}
        if term == Termination.ERROR:
            info[f"{stage}_backend_status"] = solver.status_name(code)
        return solver, code, term, info

    def solve_stage(self, data: PlacementData, *, stage: str, objective: Objective, min_placed: int,
                    time_limit: float | None, seed: int | None, max_moved: int | None = None) -> StageResult[Counts]:
        cp_model = load_cp_model()  # imported when a model is built: `import schedopt` stays light
        t0 = time.perf_counter()
        # -- data, scaled to integers
        c_ps, c_w = coefficients(data)
        unit, _ = integer_scale(np.concatenate([data.demand.ravel(), data.cap.ravel()]))
        dem = np.ceil(np.round(data.demand * unit, 9)).astype(np.int64)
        cap = np.floor(np.round(data.cap * unit, 9)).astype(np.int64)
        coef = np.concatenate([c_ps, c_w])
        scale, exact = integer_scale(coef)
        if not exact:
            top = float(coef.max()) if len(coef) else 0.0
            scale = COST_RESOLUTION / top if top > 0 else 1.0
        k_ps, k_w = np.round(c_ps * scale).astype(np.int64), np.round(c_w * scale).astype(np.int64)
        p, w = data.counts[:, 0].tolist(), data.counts[:, 1].tolist()
        two = [j for j in range(data.J) if p[j] > 0 and w[j] > 0]

        model = cp_model.CpModel()
        # -- variables
        x = [model.new_bool_var(f"x[{data.jobs[j]}]") for j in range(data.J)]
        P = [[model.new_int_var(0, p[j], f"P[{data.jobs[j]},{k}]") for k in range(data.S)] for j in range(data.J)]
        W = [[model.new_int_var(0, w[j], f"W[{data.jobs[j]},{k}]") for k in range(data.S)] for j in range(data.J)]
        # -- constraints
        # every task of a placed job is placed, none of a paused one
        for j in range(data.J):
            model.add(sum(P[j]) == p[j] * x[j])
            model.add(sum(W[j]) == w[j] * x[j])
        # server capacity: Σ_j (P_jk·d_ps + W_jk·d_w) <= C_kr
        for k in range(data.S):
            for r in range(data.cap.shape[1]):
                terms = [(P[j][k], int(dem[j, 0, r])) for j in range(data.J) if dem[j, 0, r]] + \
                        [(W[j][k], int(dem[j, 1, r])) for j in range(data.J) if dem[j, 1, r]]
                if terms:
                    model.add(cp_model.LinearExpr.weighted_sum([v for v, _ in terms], [c for _, c in terms]) <= int(cap[k, r]))
        if stage in ("moves", "cost"):
            # DESIGN.md lexicographic objective: keep the most placed jobs found in stage 1
            model.add(sum(x) >= min_placed)
        old = dense_previous(data) if stage == "moves" or max_moved is not None else None
        moved: Any = 0
        if old is not None:
            P0, W0, base = old
            kept = []
            for j, k in zip(*np.nonzero(P0 + W0)):
                j, k = int(j), int(k)
                # a kept task is one of the job's tasks on that server now
                kp = model.new_int_var(0, int(P0[j, k]), f"KP[{data.jobs[j]},{k}]")
                kw = model.new_int_var(0, int(W0[j, k]), f"KW[{data.jobs[j]},{k}]")
                model.add(kp <= P[j][k])
                model.add(kw <= W[j][k])
                kept += [kp, kw]
            running = sorted({int(j) for j in np.flatnonzero((P0 + W0).sum(axis=1))})
            # M: tasks of placed running jobs that could have stayed and did not
            moved = sum(int(base[j]) * x[j] for j in running) - sum(kept)
            if max_moved is not None and stage == "cost":
                model.add(moved <= max_moved)  # the fewest moved tasks found by the moves stage
        T: list[Any] = []
        t_tops: list[int] = []
        pairs: list[Any] = []
        if stage == "cost" and objective in ("sum", "max"):
            for j in two:
                t_max = max(int(k_ps[j]) * w[j], int(k_w[j]) * p[j])
                t = model.new_int_var(0, t_max, f"T[{data.jobs[j]}]")
                for k in range(data.S):
                    a = model.new_bool_var(f"a[{data.jobs[j]},{k}]")  # k hosts a PS of j
                    b = model.new_bool_var(f"b[{data.jobs[j]},{k}]")  # k hosts a worker of j
                    model.add(P[j][k] >= 1).only_enforce_if(a)
                    model.add(P[j][k] == 0).only_enforce_if(~a)
                    model.add(W[j][k] >= 1).only_enforce_if(b)
                    model.add(W[j][k] == 0).only_enforce_if(~b)
                    # DESIGN T_j, PS side: T_j >= c_ps·(w - W_jk) on servers hosting a PS
                    model.add(t >= int(k_ps[j]) * (w[j] - W[j][k])).only_enforce_if(a)
                    # DESIGN T_j, worker side: T_j >= c_w·(p - P_jk) on servers hosting a worker
                    model.add(t >= int(k_w[j]) * (p[j] - P[j][k])).only_enforce_if(b)
                T.append(t)
                t_tops.append(t_max)
        if stage == "cost" and objective == "cross_pairs":
            for j in two:
                for k in range(data.S):
                    z = model.new_int_var(0, p[j] * w[j], f"z[{data.jobs[j]},{k}]")
                    model.add_multiplication_equality(z, [P[j][k], W[j][k]])  # z_jk = P_jk·W_jk
                    pairs.append(z)
        # -- objective
        if stage == "place":
            model.maximize(sum(x))
        elif stage == "moves":
            model.minimize(moved)
        elif objective == "sum":
            model.minimize(sum(T))
        elif objective == "max":
            t_all = model.new_int_var(0, max(t_tops, default=0), "Tmax")
            model.add_max_equality(t_all, T or [0])
            model.minimize(t_all)
        else:
            model.minimize(sum(p[j] * w[j] * x[j] for j in two) - sum(pairs))

        solver, code, term, info = self._run(model, stage, t0, time_limit, seed)
        if not has_solution(solver, code):
            return StageResult(term, info=info)
        raw = float(solver.best_objective_bound)
        if stage in ("place", "moves") or objective == "cross_pairs":
            bound = raw
        else:
            # rounding c·scale moves each T_j by at most 0.5·max(p, w) units
            err = [0.5 * max(p[j], w[j]) for j in two] if not exact else [0.0]
            slack = sum(err) if objective == "sum" else max(err, default=0.0)
            bound = max(0.0, (raw - slack) / scale)
            if not exact:
                info["scaling_error_s"] = slack / scale
        Pv = np.array([[solver.value(v) for v in row] for row in P], dtype=np.int64).reshape(data.J, data.S)
        Wv = np.array([[solver.value(v) for v in row] for row in W], dtype=np.int64).reshape(data.J, data.S)
        return StageResult(term, (Pv, Wv), float(solver.objective_value), bound, info)

    def solve_classes(self, data: PlacementData, cm: ClassModel, *, stage: str, objective: Objective, min_placed: int,
                      time_limit: float | None, seed: int | None) -> StageResult[Counts]:
        """The aggregated class model (:mod:`schedopt.placement.classes`): shapes per job, patterns per class."""
        cp_model = load_cp_model()
        t0 = time.perf_counter()
        # -- data: each shape's cost as an integer (exact by a power of ten, else 10^9 of the largest, rounded)
        costs = np.concatenate(cm.cost) if cm.cost else np.zeros(0)
        scale, exact = integer_scale(costs)
        if not exact:
            top = float(costs.max()) if len(costs) else 0.0
            scale = COST_RESOLUTION / top if top > 0 else 1.0
        icost = [np.round(c * scale).astype(np.int64) for c in cm.cost]
        model = cp_model.CpModel()
        # -- variables
        x = [[model.new_bool_var(f"x[{data.jobs[j]},{s}]") for s in range(len(cm.shapes[j]))] for j in range(data.J)]
        z = [[model.new_int_var(0, len(cm.classes[c]), f"z[{c},{q}]") for q in range(len(cm.patterns[c]))]
             for c in range(len(cm.classes))]
        # -- constraints
        for j in range(data.J):
            model.add_at_most_one(x[j])  # a job takes one shape, or is paused
        for c in range(len(cm.classes)):
            model.add(sum(z[c]) <= len(cm.classes[c]))  # a class fills at most its servers with patterns
        for i in range(len(cm.items)):
            # the patterns offer a slot for every part: Σ_js n_si·x_js <= Σ_cq n_cqi·z_cq
            need = [(x[j][s], int(cm.uses[j][s, i])) for j in range(data.J) for s in np.flatnonzero(cm.uses[j][:, i]).tolist()]
            offer = [(z[c][q], int(cm.patterns[c][q, i])) for c in range(len(cm.classes))
                     for q in np.flatnonzero(cm.patterns[c][:, i]).tolist()]
            if need:
                model.add(cp_model.LinearExpr.weighted_sum([v for v, _ in need], [k for _, k in need])
                          <= cp_model.LinearExpr.weighted_sum([v for v, _ in offer], [k for _, k in offer]))
        flat = [v for row in x for v in row]
        if stage == "cost":
            model.add(sum(flat) >= min_placed)  # DESIGN.md lexicographic objective: keep the most placed jobs
        # -- objective
        job_cost = [cp_model.LinearExpr.weighted_sum(x[j], icost[j].tolist()) for j in range(data.J)]
        if stage == "place":
            model.maximize(sum(flat))
        elif objective == "max":
            t_all = model.new_int_var(0, int(max((c.max(initial=0) for c in icost), default=0)), "Tmax")
            for e in job_cost:
                model.add(t_all >= e)
            model.minimize(t_all)
        else:
            model.minimize(sum(job_cost))
        solver, code, term, info = self._run(model, stage, t0, time_limit, seed, linearization_level=2)
        if not has_solution(solver, code):
            return StageResult(term, info=info)
        raw = float(solver.best_objective_bound)
        if stage == "place" or exact:
            bound = raw / (1 if stage == "place" else scale)
        else:  # each job's cost moved by at most half a unit in rounding
            slack = 0.5 * (sum(bool(c.any()) for c in icost) if objective == "sum" else 1)
            bound = max(0.0, (raw - slack) / scale)
            info["scaling_error_s"] = slack / scale
        chosen = [next((s for s, v in enumerate(x[j]) if solver.boolean_value(v)), None) for j in range(data.J)]
        zv = [np.array([solver.value(v) for v in row], dtype=np.int64) for row in z]
        P, W = decode(data, cm, chosen, zv)
        value = float(solver.objective_value) / (1 if stage == "place" else scale)
        return StageResult(term, (P, W), value, bound, info)


@register("placement-cpsat", problem="placement", exact=True, backend="cp-sat", supports_time_limit=True, requires=("ortools",), accelerator_types=True)
class PlacementCpSat:
    """Exact placement (max placed jobs, then fewest moved running tasks with ``moves="first"``, then
    min Σ T_j / max T_j / cross-node pairs), OR-Tools CP-SAT."""

    def __init__(self, *, objective: str = "sum", workers: int = 1, moves: str = "first", model: str = "auto"):
        self.objective = objective
        self.workers = int(workers)
        self.moves = moves
        self.model = model

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        return solve_placement_exact(CpSatPlacement(self.workers), self.name, instance, objective=self.objective,  # type: ignore[arg-type]
                                     time_limit=time_limit, seed=seed, moves=self.moves, model=self.model,
                                     options={"objective": self.objective, "workers": self.workers, "moves": self.moves, "model": self.model})
