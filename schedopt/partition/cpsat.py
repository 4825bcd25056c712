"""``dorm-cpsat``: Dorm's P2 in OR-Tools CP-SAT, the same model as ``dorm-milp``.

CP-SAT needs integers. Demands and capacities are scaled by the smallest power
of ten that makes them integral (U), and shares by L = lcm of the integral
cluster totals C_k: then δ_i·L = max_k D_ik·(L/C_k), ŝ_i·L, the utilization
Σ_k D_ik·(L/C_k) per container and the budget ceil(θ1·2m)·L are all integers,
and the model is exactly P2. When L would overflow, shares and utilizations
are rounded at L = 10^9 instead (dominant shares rounded up and the fairness
budget down, so every plan meets the true budget); the plan then says so and
carries no bound.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from schedopt.backends.cpsat import cpsat_termination, has_solution, integer_scale, load_cp_model, make_solver
from schedopt.instance import Instance
from schedopt.partition.dorm import solve_dorm, thresholds
from schedopt.partition.model import DormModel, DormSolution
from schedopt.results import StageResult
from schedopt.plan import Plan, Termination
from schedopt.registry import register
from schedopt.tolerances import COUNT_TOL, INTEGRAL_TOL

MAX_SCALE = 2**40
#: L when the exact scaling would overflow: shares and utilizations are rounded at 1/L of the cluster
ROUNDED_SCALE = 10**9


def _integer_shares(model: DormModel) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
    """(D (A,R), Cap (S,R), per-resource multiplier L/C_k (R,), L, exact)."""
    d = model.data
    unit, exact = integer_scale(np.concatenate([d.demand.ravel(), d.cap.ravel()]))
    D = np.ceil(np.round(d.demand * unit, 9)).astype(np.int64)
    cap = np.floor(np.round(d.cap * unit, 9)).astype(np.int64)
    totals = [int(c) for c in cap.sum(axis=0)]
    live = [c for c in totals if c > 0]
    L = 1
    for c in live:
        L = L * c // math.gcd(L, c)
        if L > MAX_SCALE:
            break
    if exact and L <= MAX_SCALE:
        mult = np.array([L // c if c > 0 else 0 for c in totals], dtype=np.int64)
        return D, cap, mult, L, True
    return D, cap, np.zeros(len(totals), dtype=np.int64), ROUNDED_SCALE, False


class CpSatDorm:
    label = "cp-sat"  # who proves a bound by branch and bound (certificates of kind backend)

    def __init__(self, workers: int):
        self.workers = workers

    def solve_model(self, model: DormModel, *, time_limit: float | None, seed: int | None,
                    rel_gap: float | None = None) -> StageResult[DormSolution]:
        cp_model = load_cp_model()  # imported when a model is built: `import schedopt` stays light
        t0 = time.perf_counter()
        d = model.data
        # -- data, as integers
        D, cap, mult, L, exact = _integer_shares(model)
        if exact:
            share = (D * mult[None, :]).max(axis=1) if d.R else np.zeros(d.A, dtype=np.int64)  # δ_i·L
            util = (D * mult[None, :]).sum(axis=1) if d.R else np.zeros(d.A, dtype=np.int64)  # Σ_k d_ik/C_k · L
        else:  # rounded from the floats: δ_i·L up, so the scaled fairness loss never understates the true one
            share = np.ceil(d.delta * L - COUNT_TOL).astype(np.int64)
            util = np.round(d.util * L).astype(np.int64)
        fair = model.fair.astype(np.int64) * share  # ŝ_i·L
        down, up = model.big_m()
        cm = cp_model.CpModel()
        # -- variables
        x = {(i, j): cm.new_int_var(0, int(d.ub[i, j]), f"x[{d.apps[i]},{d.servers[j]}]")  # eq. 9
             for i in range(d.A) for j in range(d.S) if d.ub[i, j] > 0}
        hi_loss = int(max(share[i] * d.n_max[i] + fair[i] for i in range(d.A))) if d.A else 0
        loss = [cm.new_int_var(0, hi_loss, f"l[{a}]") for a in d.apps]  # eq. 17 (scaled by L)
        kept = [i for i in range(d.A) if d.before[i]]
        r = {i: cm.new_bool_var(f"r[{d.apps[i]}]") for i in kept}  # eq. 18
        n = [sum(x[i, j] for j in range(d.S) if (i, j) in x) for i in range(d.A)]
        # -- constraints
        for j in range(d.S):  # Dorm eq. 6: server capacity
            for k in range(d.R):
                terms = [(int(D[i, k]), x[i, j]) for i in range(d.A) if (i, j) in x and D[i, k] > 0]
                if terms:
                    cm.add(sum(a * v for a, v in terms) <= int(cap[j, k]))
        for i in range(d.A):
            cm.add(n[i] <= int(d.n_max[i]))  # Dorm eq. 7
            cm.add(n[i] >= int(d.n_min[i]))  # Dorm eq. 8
            cm.add(loss[i] >= int(share[i]) * n[i] - int(fair[i]))  # Dorm eq. 11
            cm.add(loss[i] >= int(fair[i]) - int(share[i]) * n[i])  # Dorm eq. 12
        for i in kept:
            for j in range(d.S):
                xij = x.get((i, j), 0)
                if down[i, j] > 0:
                    cm.add(int(down[i, j]) * r[i] >= int(d.prev[i, j]) - xij)  # Dorm eq. 13
                if up[i, j] > 0 and (i, j) in x:
                    cm.add(int(up[i, j]) * r[i] >= xij - int(d.prev[i, j]))  # Dorm eq. 14
        # Dorm eq. 15 (rounded shares: the budget rounded down, so the plan meets the true budget)
        cm.add(sum(loss) <= (int(round(model.fairness_budget * L)) if exact else math.floor(model.fairness_budget * L + INTEGRAL_TOL)))
        if kept:
            cm.add(sum(r.values()) <= model.adjustment_budget)  # Dorm eq. 16
        # class mode: exact packing of identical servers (Gilmore-Gomory patterns)
        z: list[list[Any]] = []
        if model.patterns is not None:
            for c in range(d.S):
                zc = [cm.new_int_var(0, model.class_size[c], f"z[{c},{p}]") for p in range(len(model.patterns[c]))]
                z.append(zc)
                cm.add(sum(zc) <= model.class_size[c])  # at most the class's servers use patterns
                for t in range(model.patterns[c].shape[1]):  # shape t's containers fit the chosen slots
                    users = [x[i, c] for i in range(d.A) if (i, c) in x and model.shape_of[i] == t]
                    if users:
                        cm.add(sum(users) <= sum(int(model.patterns[c][p, t]) * zc[p]
                                                 for p in range(len(zc)) if model.patterns[c][p, t] > 0))
        # class mode: bin-packing cuts of dual-feasible functions (dorm.dff_cuts), Σ_i a_i·y_ic <= b
        for c, a, b in model.class_cuts or []:
            terms = [(int(a[i]), x[i, c]) for i in range(d.A) if a[i] and (i, c) in x]
            if terms:
                cm.add(sum(coef * v for coef, v in terms) <= int(b))
        # -- objective: Dorm eq. 10 (scaled by L)
        cm.maximize(sum(int(util[i]) * v for (i, _), v in x.items()))

        built = time.perf_counter() - t0
        solver = make_solver(self.workers, seed, None if time_limit is None else max(1e-3, time_limit - built),
                             variables=len(cm.proto.variables))
        if rel_gap is not None:
            solver.parameters.relative_gap_limit = float(rel_gap)
        code = solver.solve(cm)
        term = cpsat_termination(solver, code)
        info: dict[str, Any] = {"build_seconds": built, "solver_seconds": time.perf_counter() - t0 - built,
                                "share_scale": L, "exact_scaling": exact}
        if term == Termination.ERROR:
            info["backend_status"] = solver.status_name(code)
        if not has_solution(solver, code):
            return StageResult(term, info=info)
        xs = np.zeros((d.A, d.S), dtype=np.int64)
        for (i, j), v in x.items():
            xs[i, j] = solver.value(v)
        bound = float(solver.best_objective_bound) / L if exact else None
        zs = [np.array([solver.value(v) for v in zc], dtype=np.int64) for zc in z] if z else None
        return StageResult(term, DormSolution(xs, zs), bound=bound, info=info, proven=exact,
                             note=None if exact else "shares rounded for CP-SAT: optimality is not proven")


@register("dorm-cpsat", problem="partition", exact=True, backend="cp-sat", supports_time_limit=True, requires=("ortools",))
class DormCpSat:
    """Dorm's P2 (eq. 6-18) in OR-Tools CP-SAT, exactly integer-scaled; θ from the instance's policy."""

    def __init__(self, *, fairness_threshold: float | None = None, adjustment_threshold: float | None = None,
                 mode: str = "auto", workers: int = 1):
        self.fairness_threshold, self.adjustment_threshold = fairness_threshold, adjustment_threshold
        self.mode = mode
        self.workers = int(workers)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        theta = thresholds(instance, None, self.fairness_threshold, self.adjustment_threshold, self.name)
        return solve_dorm(CpSatDorm(self.workers), self.name, instance, theta=theta, time_limit=time_limit,
                          seed=seed, options={"workers": self.workers}, mode=self.mode)
