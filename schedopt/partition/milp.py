"""``dorm-milp`` (and the presets ``dorm-1/2/3``): Dorm's P2 as a declarative
Pyomo model, solved by HiGHS (:func:`schedopt.backends.highs.solve_highs`).

    max  Σ_k Σ_i Σ_j x_ij·d_ik / C_k                              (eq. 10)
    s.t. per-server capacity (6), n_min <= Σ_j x_ij <= n_max (7-8),
         l_i >= |s_i - ŝ_i| (11-12), r_i links to any change (13-14),
         Σ l_i <= ceil(θ1·2m) (15), Σ r_i <= ceil(θ2·|A^t ∩ A^(t-1)|) (16),
         x integer (9), l >= 0 (17), r binary (18).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from schedopt.backends.highs import solve_highs
from schedopt.gcpause import paused_gc
from schedopt.instance import Instance
from schedopt.partition.dorm import solve_dorm, thresholds
from schedopt.partition.model import DormModel, DormSolution
from schedopt.results import StageResult
from schedopt.plan import Plan, Termination
from schedopt.registry import register
from schedopt.tolerances import MIP_REL_GAP

if TYPE_CHECKING:
    import pyomo.environ as pyo


def build_model(model: DormModel) -> pyo.ConcreteModel:
    """P2 in the order data, variables, constraints, objective."""
    import pyomo.environ as pyo  # imported when a model is built: `import schedopt` stays light
    d = model.data
    m = pyo.ConcreteModel(name="dorm-p2")
    # -- data
    apps, servers = range(d.A), range(d.S)
    pairs = [(i, j) for i in apps for j in servers if d.ub[i, j] > 0]
    kept = [i for i in apps if d.before[i]]
    down, up = model.big_m()
    fair_share = (model.fair * d.delta).tolist()
    m.I = pyo.Set(initialize=apps, ordered=True)
    m.P = pyo.Set(initialize=pairs, dimen=2, ordered=True)
    m.KEPT = pyo.Set(initialize=kept, ordered=True)
    by_app: dict[int, list[int]] = {i: [] for i in apps}
    by_server: dict[int, list[int]] = {j: [] for j in servers}
    for i, j in pairs:
        by_app[i].append(j)
        by_server[j].append(i)

    # -- variables
    m.x = pyo.Var(m.P, domain=pyo.NonNegativeIntegers, bounds=lambda m, i, j: (0, int(d.ub[i, j])))  # eq. 9
    m.l = pyo.Var(m.I, domain=pyo.NonNegativeReals)  # eq. 17: application i's fairness loss
    m.r = pyo.Var(m.KEPT, domain=pyo.Binary)  # eq. 18: application i is adjusted

    def n(m: pyo.ConcreteModel, i: int) -> Any:
        return sum(m.x[i, j] for j in by_app[i])

    # -- constraints
    # Dorm eq. 6: no server exceeds its capacity of any resource
    def capacity(m: pyo.ConcreteModel, j: int, k: int) -> Any:
        terms = [(d.demand[i, k], m.x[i, j]) for i in by_server[j] if d.demand[i, k] > 0]
        if not terms:
            return pyo.Constraint.Skip
        return sum(a * v for a, v in terms) <= float(d.cap[j, k])
    m.capacity = pyo.Constraint(servers, range(d.R), rule=capacity)
    # Dorm eq. 7: at most n_max containers
    m.n_max = pyo.Constraint(m.I, rule=lambda m, i: n(m, i) <= int(d.n_max[i]))
    # Dorm eq. 8: at least n_min containers
    # (the driver has already answered "infeasible" when some n_min exceeds Σ_j ub_ij)
    m.n_min = pyo.Constraint(m.I, rule=lambda m, i: n(m, i) >= int(d.n_min[i]) if by_app[i] else pyo.Constraint.Skip)
    # Dorm eq. 11: l_i >= s_i - ŝ_i, with s_i = δ_i · n_i
    m.loss_above = pyo.Constraint(m.I, rule=lambda m, i: m.l[i] >= float(d.delta[i]) * n(m, i) - fair_share[i])
    # Dorm eq. 12: l_i >= ŝ_i - s_i
    m.loss_below = pyo.Constraint(m.I, rule=lambda m, i: m.l[i] >= fair_share[i] - float(d.delta[i]) * n(m, i))

    # Dorm eq. 13: r_i links to any container removed from server j (M = x_ij^(t-1))
    def removed(m: pyo.ConcreteModel, i: int, j: int) -> Any:
        if down[i, j] == 0:
            return pyo.Constraint.Skip
        x = m.x[i, j] if (i, j) in m.P else 0
        return int(down[i, j]) * m.r[i] >= int(d.prev[i, j]) - x
    m.removed = pyo.Constraint(m.KEPT, servers, rule=removed)

    # Dorm eq. 14: r_i links to any container added on server j (M = ub_ij - x_ij^(t-1))
    def added(m: pyo.ConcreteModel, i: int, j: int) -> Any:
        if up[i, j] == 0 or (i, j) not in m.P:
            return pyo.Constraint.Skip
        return int(up[i, j]) * m.r[i] >= m.x[i, j] - int(d.prev[i, j])
    m.added = pyo.Constraint(m.KEPT, servers, rule=added)

    # Dorm eq. 15: the fairness-loss budget ceil(θ1·2m)
    m.fairness_budget = pyo.Constraint(expr=sum(m.l[i] for i in m.I) <= model.fairness_budget)
    # Dorm eq. 16: the adjustment budget ceil(θ2·|A^t ∩ A^(t-1)|)
    if kept:
        m.adjustment_budget = pyo.Constraint(expr=sum(m.r[i] for i in m.KEPT) <= model.adjustment_budget)

    # class mode: exact packing of identical servers (Gilmore-Gomory patterns)
    if model.patterns is not None:
        pat = [(c, p) for c in servers for p in range(len(model.patterns[c]))]
        m.z = pyo.Var(pat, domain=pyo.NonNegativeIntegers, bounds=lambda m, c, p: (0, model.class_size[c]))
        # a class has as many servers as it has patterns in use (at most)
        m.servers_used = pyo.Constraint(servers, rule=lambda m, c: sum(m.z[c, p] for p in range(len(model.patterns[c]))) <= model.class_size[c])

        # containers of each shape t in class c fit in the slots of the chosen patterns
        def slots(m: pyo.ConcreteModel, c: int, t: int) -> Any:
            users = [i for i in by_server[c] if model.shape_of[i] == t]
            if not users:
                return pyo.Constraint.Skip
            return sum(m.x[i, c] for i in users) <= sum(int(model.patterns[c][p, t]) * m.z[c, p]
                                                         for p in range(len(model.patterns[c])) if model.patterns[c][p, t] > 0)
        n_shapes = model.patterns[0].shape[1] if model.patterns else 0
        m.slots = pyo.Constraint(servers, range(n_shapes), rule=slots)

    # class mode: bin-packing cuts of dual-feasible functions (dorm.dff_cuts), Σ_i a_i·y_ic <= b
    if model.class_cuts:
        cuts = model.class_cuts
        m.packing_cuts = pyo.Constraint(range(len(cuts)), rule=lambda m, t: sum(
            int(cuts[t][1][i]) * m.x[i, cuts[t][0]] for i in by_server[cuts[t][0]] if cuts[t][1][i]) <= cuts[t][2]
            if any(cuts[t][1][i] for i in by_server[cuts[t][0]]) else pyo.Constraint.Skip)

    # -- objective: Dorm eq. 10, Σ_k u_k = Σ_i n_i · Σ_k d_ik / C_k
    m.utilization = pyo.Objective(expr=sum(float(d.util[i]) * m.x[i, j] for i, j in pairs), sense=pyo.maximize)
    return m


class HighsDorm:
    label = "pyomo+highs"  # who proves a bound by branch and bound (certificates of kind backend)

    def __init__(self, rel_gap: float, threads: int):
        self.rel_gap, self.threads = rel_gap, threads

    def solve_model(self, model: DormModel, *, time_limit: float | None, seed: int | None,
                    rel_gap: float | None = None) -> StageResult[DormSolution]:
        import pyomo.environ as pyo  # imported when a model is built: `import schedopt` stays light
        t0 = time.perf_counter()
        with paused_gc():  # Pyomo's objects, one per variable and term
            m = build_model(model)
        built = time.perf_counter() - t0
        res = solve_highs(m, time_limit=None if time_limit is None else time_limit - built,
                          rel_gap=self.rel_gap if rel_gap is None else max(rel_gap, self.rel_gap),
                          threads=self.threads, seed=seed)
        info: dict[str, Any] = {"build_seconds": built, "solver_seconds": time.perf_counter() - t0 - built}
        term = res.termination
        if term == Termination.ERROR:
            info["backend_status"] = res.backend_status
        x = None
        if res.has_solution:
            d = model.data
            x = np.zeros((d.A, d.S), dtype=np.int64)
            for (i, j), var in m.x.items():
                x[i, j] = int(round(pyo.value(var)))
        z = None
        if x is not None and model.patterns is not None:
            z = [np.array([int(round(pyo.value(m.z[c, p]))) for p in range(len(model.patterns[c]))], dtype=np.int64)
                 for c in range(model.data.S)]
        bound = res.bound
        return StageResult(term, None if x is None else DormSolution(x, z), bound=bound, info=info)


@register("dorm-milp", problem="partition", exact=True, backend="pyomo+highs", supports_time_limit=True)
class DormMilp:
    """Dorm's P2 (eq. 6-18) as a Pyomo MILP solved by HiGHS; θ from the instance's policy."""

    preset: str | None = None

    def __init__(self, *, fairness_threshold: float | None = None, adjustment_threshold: float | None = None,
                 mode: str = "auto", rel_gap: float = MIP_REL_GAP, threads: int = 1):
        self.fairness_threshold, self.adjustment_threshold = fairness_threshold, adjustment_threshold
        self.mode = mode
        self.rel_gap, self.threads = float(rel_gap), int(threads)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        theta = thresholds(instance, self.preset, self.fairness_threshold, self.adjustment_threshold, self.name)
        return solve_dorm(HighsDorm(self.rel_gap, self.threads), self.name, instance, theta=theta,
                          time_limit=time_limit, seed=seed, options={"rel_gap": self.rel_gap, "threads": self.threads},
                          mode=self.mode)


@register("dorm-1", problem="partition", exact=True, backend="pyomo+highs", supports_time_limit=True)
class Dorm1(DormMilp):
    """Dorm-1 preset: P2 with θ1 = 0.2, θ2 = 0.1 (Pyomo + HiGHS)."""

    preset = "dorm-1"


@register("dorm-2", problem="partition", exact=True, backend="pyomo+highs", supports_time_limit=True)
class Dorm2(DormMilp):
    """Dorm-2 preset: P2 with θ1 = 0.1, θ2 = 0.2 (Pyomo + HiGHS)."""

    preset = "dorm-2"


@register("dorm-3", problem="partition", exact=True, backend="pyomo+highs", supports_time_limit=True)
class Dorm3(DormMilp):
    """Dorm-3 preset: P2 with θ1 = 0.1, θ2 = 0.1 (Pyomo + HiGHS)."""

    preset = "dorm-3"
