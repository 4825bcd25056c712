"""``placement-milp``: exact placement in Pyomo, solved by HiGHS.

The model (see :mod:`schedopt.placement.exact` for the data and the two
stages) is linear: T_j's "only servers that host a task of that role" is an
indicator link, and the cross-node pairs' products P_jk·W_jk are linearised
through a one-hot expansion of P_jk.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from schedopt.backends.highs import solve_highs
from schedopt.gcpause import paused_gc
from schedopt.instance import Instance
from schedopt.placement.classes import ClassModel, decode
from schedopt.placement.exact import Counts, Objective, coefficients, dense_previous, solve_placement_exact
from schedopt.results import StageResult
from schedopt.placement.problem import PlacementData
from schedopt.plan import Plan, Termination
from schedopt.registry import register
from schedopt.tolerances import COUNT_ABS_GAP, MIP_REL_GAP

if TYPE_CHECKING:
    import pyomo.environ as pyo


def build_model(data: PlacementData, *, stage: str, objective: Objective, min_placed: int,
                max_moved: int | None = None) -> pyo.ConcreteModel:
    import pyomo.environ as pyo  # imported when a model is built: `import schedopt` stays light
    # -- data
    c_ps, c_w = coefficients(data)
    p = data.counts[:, 0].tolist()
    w = data.counts[:, 1].tolist()
    R = data.cap.shape[1]
    m = pyo.ConcreteModel(name=f"placement-{stage}")
    m.J = pyo.RangeSet(0, data.J - 1)
    m.K = pyo.RangeSet(0, data.S - 1)
    m.R = pyo.RangeSet(0, R - 1)
    two = [j for j in range(data.J) if c_ps[j] > 0 or c_w[j] > 0]
    moving = stage == "moves" or max_moved is not None  # the running placement matters
    old = dense_previous(data) if moving else None
    kept_at = [] if old is None else [(int(j), int(k)) for j, k in zip(*np.nonzero(old[0] + old[1]))]

    # -- variables
    m.x = pyo.Var(m.J, domain=pyo.Binary, doc="job j is placed")
    m.P = pyo.Var(m.J, m.K, domain=pyo.NonNegativeIntegers, bounds=lambda _, j, k: (0, p[j]), doc="PS of j on k")
    m.W = pyo.Var(m.J, m.K, domain=pyo.NonNegativeIntegers, bounds=lambda _, j, k: (0, w[j]), doc="workers of j on k")
    m.a = pyo.Var(two, m.K, domain=pyo.Binary, doc="k hosts a PS of j")
    m.b = pyo.Var(two, m.K, domain=pyo.Binary, doc="k hosts a worker of j")
    m.T = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="T_j, seconds per step on transfers")
    if old is not None:
        P0, W0, base = old
        m.KP = pyo.Var(kept_at, domain=pyo.NonNegativeIntegers, bounds=lambda _, j, k: (0, int(P0[j, k])), doc="PS of j kept on k")
        m.KW = pyo.Var(kept_at, domain=pyo.NonNegativeIntegers, bounds=lambda _, j, k: (0, int(W0[j, k])), doc="workers of j kept on k")

    # -- constraints
    # every task of a placed job is placed, none of a paused one (counts from the instance's allocation)
    m.all_ps = pyo.Constraint(m.J, rule=lambda m, j: sum(m.P[j, k] for k in m.K) == p[j] * m.x[j])
    m.all_workers = pyo.Constraint(m.J, rule=lambda m, j: sum(m.W[j, k] for k in m.K) == w[j] * m.x[j])

    # server capacity: Σ_j (P_jk·d_ps + W_jk·d_w) <= C_kr
    def capacity(m: pyo.ConcreteModel, k: int, r: int) -> Any:
        terms = [data.demand[j, 0, r] * m.P[j, k] + data.demand[j, 1, r] * m.W[j, k] for j in range(data.J)
                 if data.demand[j, 0, r] or data.demand[j, 1, r]]
        return sum(terms) <= float(data.cap[k, r]) if terms else pyo.Constraint.Skip
    m.capacity = pyo.Constraint(m.K, m.R, rule=capacity)
    if stage == "cost" and objective != "cross_pairs":
        # indicator links: a_jk = 1 whenever k hosts a PS of j, b_jk whenever it hosts a worker
        m.link_ps = pyo.Constraint(two, m.K, rule=lambda m, j, k: m.P[j, k] <= p[j] * m.a[j, k])
        m.link_worker = pyo.Constraint(two, m.K, rule=lambda m, j, k: m.W[j, k] <= w[j] * m.b[j, k])
        # DESIGN T_j, PS side: T_j >= c_ps·(w - W_jk) on servers hosting a PS (a_jk = 0 makes it vacuous)
        m.t_ps = pyo.Constraint(two, m.K, rule=lambda m, j, k: m.T[j] >= float(c_ps[j]) * (w[j] * m.a[j, k] - m.W[j, k]))
        # DESIGN T_j, worker side: T_j >= c_w·(p - P_jk) on servers hosting a worker
        m.t_worker = pyo.Constraint(two, m.K, rule=lambda m, j, k: m.T[j] >= float(c_w[j]) * (p[j] * m.b[j, k] - m.P[j, k]))
    if stage in ("moves", "cost"):
        # DESIGN.md lexicographic objective: keep the most placed jobs found in stage 1
        m.keep_placed = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= min_placed)
    if old is not None:
        # a kept task is one of the job's tasks on that server now (KP <= P°, KW <= W° are bounds)
        m.kept_ps = pyo.Constraint(kept_at, rule=lambda m, j, k: m.KP[j, k] <= m.P[j, k])
        m.kept_worker = pyo.Constraint(kept_at, rule=lambda m, j, k: m.KW[j, k] <= m.W[j, k])
        # M: tasks of placed running jobs that could have stayed and did not
        running = sorted({j for j, _ in kept_at})
        m.M = pyo.Expression(expr=sum(int(base[j]) * m.x[j] for j in running) - sum(m.KP[jk] + m.KW[jk] for jk in kept_at))
        if max_moved is not None and stage == "cost":
            # the fewest moved tasks found by the moves stage
            m.keep_moves = pyo.Constraint(expr=m.M <= max_moved)

    # -- objective
    if stage == "place":
        m.obj = pyo.Objective(expr=sum(m.x[j] for j in m.J), sense=pyo.maximize)
    elif stage == "moves":
        m.obj = pyo.Objective(expr=m.M, sense=pyo.minimize)
    elif objective == "sum":
        m.obj = pyo.Objective(expr=sum(m.T[j] for j in m.J), sense=pyo.minimize)
    elif objective == "max":
        m.Tmax = pyo.Var(domain=pyo.NonNegativeReals, doc="max_j T_j")
        m.t_max = pyo.Constraint(m.J, rule=lambda m, j: m.Tmax >= m.T[j])
        m.obj = pyo.Objective(expr=m.Tmax, sense=pyo.minimize)
    else:
        # DLTAP's cross-node pairs: Σ_j p·w·x_j - Σ_jk P_jk·W_jk, with P_jk = Σ_v v·y_jkv (one-hot)
        # and u_jkv = y_jkv·W_jk (only upper bounds are needed: the products are maximised)
        m.V = pyo.Set(initialize=[(j, k, v) for j in two for k in range(data.S) for v in range(1, p[j] + 1)])
        m.y = pyo.Var(m.V, domain=pyo.Binary, doc="P_jk == v")
        m.u = pyo.Var(m.V, domain=pyo.NonNegativeReals, doc="y_jkv·W_jk")
        m.one_hot = pyo.Constraint(two, m.K, rule=lambda m, j, k: sum(m.y[j, k, v] for v in range(1, p[j] + 1)) <= 1)
        m.expand = pyo.Constraint(two, m.K, rule=lambda m, j, k: m.P[j, k] == sum(v * m.y[j, k, v] for v in range(1, p[j] + 1)))
        m.u_y = pyo.Constraint(m.V, rule=lambda m, j, k, v: m.u[j, k, v] <= w[j] * m.y[j, k, v])
        m.u_w = pyo.Constraint(m.V, rule=lambda m, j, k, v: m.u[j, k, v] <= m.W[j, k])
        m.obj = pyo.Objective(
            expr=sum(p[j] * w[j] * m.x[j] for j in two) - sum(v * m.u[j, k, v] for (j, k, v) in m.V), sense=pyo.minimize)
    return m


def build_class_model(data: PlacementData, cm: ClassModel, *, stage: str, objective: Objective,
                      min_placed: int) -> pyo.ConcreteModel:
    """The aggregated class model (:mod:`schedopt.placement.classes`): shapes per job, patterns per class."""
    import pyomo.environ as pyo
    # -- data
    JS = [(j, s) for j in range(data.J) for s in range(len(cm.shapes[j]))]
    CQ = [(c, q) for c in range(len(cm.classes)) for q in range(len(cm.patterns[c]))]
    m = pyo.ConcreteModel(name=f"placement-classes-{stage}")
    m.J = pyo.RangeSet(0, data.J - 1)
    m.C = pyo.RangeSet(0, len(cm.classes) - 1)
    m.I = pyo.RangeSet(0, len(cm.items) - 1)
    # -- variables
    m.x = pyo.Var(JS, domain=pyo.Binary, doc="job j takes shape s")
    m.z = pyo.Var(CQ, domain=pyo.NonNegativeIntegers, bounds=lambda _, c, q: (0, len(cm.classes[c])),
                  doc="servers of class c filled by pattern q")
    # -- constraints
    # a job takes one shape, or is paused
    m.one_shape = pyo.Constraint(m.J, rule=lambda m, j: sum(m.x[j, s] for s in range(len(cm.shapes[j]))) <= 1)
    # a class has as many servers as it fills with patterns, at most
    m.class_size = pyo.Constraint(m.C, rule=lambda m, c: sum(m.z[c, q] for q in range(len(cm.patterns[c])))
                                  <= len(cm.classes[c]))

    # the patterns offer a slot for every part: Σ_js n_si·x_js <= Σ_cq n_cqi·z_cq
    def cover(m: pyo.ConcreteModel, i: int) -> Any:
        need = [int(cm.uses[j][s, i]) * m.x[j, s] for (j, s) in JS if cm.uses[j][s, i]]
        if not need:
            return pyo.Constraint.Skip
        return sum(need) <= sum(int(cm.patterns[c][q, i]) * m.z[c, q] for (c, q) in CQ if cm.patterns[c][q, i])
    m.cover = pyo.Constraint(m.I, rule=cover)
    if stage == "cost":
        # DESIGN.md lexicographic objective: keep the most placed jobs found in stage 1
        m.keep_placed = pyo.Constraint(expr=sum(m.x[js] for js in JS) >= min_placed)
    # -- objective
    cost = {(j, s): float(cm.cost[j][s]) for (j, s) in JS}
    if stage == "place":
        m.obj = pyo.Objective(expr=sum(m.x[js] for js in JS), sense=pyo.maximize)
    elif objective == "max":
        m.Tmax = pyo.Var(domain=pyo.NonNegativeReals, doc="max_j T_j")
        m.t_max = pyo.Constraint(m.J, rule=lambda m, j: m.Tmax >= sum(cost[j, s] * m.x[j, s]
                                                                       for s in range(len(cm.shapes[j]))))
        m.obj = pyo.Objective(expr=m.Tmax, sense=pyo.minimize)
    else:  # Σ_j T_j or Σ_j pairs_j, each a shape's cost
        m.obj = pyo.Objective(expr=sum(cost[js] * m.x[js] for js in JS if cost[js]), sense=pyo.minimize)
    m.JS, m.CQ = JS, CQ
    return m


class HighsPlacement:
    label = "pyomo+highs"

    def __init__(self, rel_gap: float, threads: int):
        self.rel_gap = rel_gap
        self.threads = threads

    def solve_stage(self, data: PlacementData, *, stage: str, objective: Objective, min_placed: int,
                    time_limit: float | None, seed: int | None, max_moved: int | None = None) -> StageResult[Counts]:
        import pyomo.environ as pyo  # imported when a model is built: `import schedopt` stays light
        t0 = time.perf_counter()
        with paused_gc():  # Pyomo's objects, one per variable and term
            model = build_model(data, stage=stage, objective=objective, min_placed=min_placed, max_moved=max_moved)
        built = time.perf_counter() - t0
        res = solve_highs(model, time_limit=None if time_limit is None else time_limit - built, rel_gap=self.rel_gap,
                          threads=self.threads, seed=seed, abs_gap=COUNT_ABS_GAP)
        info: dict[str, Any] = {f"{stage}_build_seconds": built, f"{stage}_solver_seconds": time.perf_counter() - t0 - built}
        term = res.termination
        if term == Termination.ERROR:
            info[f"{stage}_backend_status"] = res.backend_status
        bound = res.bound
        if not res.has_solution:
            return StageResult(term, bound=bound, info=info)
        P = np.array([[round(pyo.value(model.P[j, k])) for k in range(data.S)] for j in range(data.J)], dtype=np.int64)
        W = np.array([[round(pyo.value(model.W[j, k])) for k in range(data.S)] for j in range(data.J)], dtype=np.int64)
        return StageResult(term, (P.reshape(data.J, data.S), W.reshape(data.J, data.S)), res.incumbent, bound, info)

    def solve_classes(self, data: PlacementData, cm: ClassModel, *, stage: str, objective: Objective, min_placed: int,
                      time_limit: float | None, seed: int | None) -> StageResult[Counts]:
        import pyomo.environ as pyo
        t0 = time.perf_counter()
        with paused_gc():
            model = build_class_model(data, cm, stage=stage, objective=objective, min_placed=min_placed)
        built = time.perf_counter() - t0
        res = solve_highs(model, time_limit=None if time_limit is None else time_limit - built, rel_gap=self.rel_gap,
                          threads=self.threads, seed=seed, abs_gap=COUNT_ABS_GAP)
        info: dict[str, Any] = {f"{stage}_build_seconds": built, f"{stage}_solver_seconds": time.perf_counter() - t0 - built}
        if res.termination == Termination.ERROR:
            info[f"{stage}_backend_status"] = res.backend_status
        if not res.has_solution:
            return StageResult(res.termination, bound=res.bound, info=info)
        x = {js: pyo.value(model.x[js]) for js in model.JS}
        chosen = [next((s for s in range(len(cm.shapes[j])) if x[j, s] > 0.5), None) for j in range(data.J)]
        z = [np.array([round(pyo.value(model.z[c, q])) for q in range(len(cm.patterns[c]))], dtype=np.int64)
             for c in range(len(cm.classes))]
        P, W = decode(data, cm, chosen, z)
        return StageResult(res.termination, (P, W), res.incumbent, res.bound, info)


@register("placement-milp", problem="placement", exact=True, backend="pyomo+highs", supports_time_limit=True, accelerator_types=True)
class PlacementMilp:
    """Exact placement (max placed jobs, then fewest moved running tasks with ``moves="first"``, then
    min Σ T_j / max T_j / cross-node pairs), Pyomo + HiGHS."""

    def __init__(self, *, objective: str = "sum", rel_gap: float = MIP_REL_GAP, threads: int = 1, moves: str = "first",
                 model: str = "auto"):
        self.objective = objective
        self.rel_gap = float(rel_gap)
        self.threads = int(threads)
        self.moves = moves
        self.model = model

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        return solve_placement_exact(HighsPlacement(self.rel_gap, self.threads), self.name, instance,
                                     objective=self.objective, time_limit=time_limit, seed=seed,  # type: ignore[arg-type]
                                     moves=self.moves, model=self.model,
                                     options={"objective": self.objective, "rel_gap": self.rel_gap, "threads": self.threads,
                                              "moves": self.moves, "model": self.model})
