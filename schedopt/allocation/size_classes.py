"""The ``size-class-lagrangian`` bound (solver side; docs/certificates.md).

Where jobs must be paused, the LP's gap often lies in how many jobs of each size the
count row lets it admit: on 100 rigid `gavel` jobs on 108 GPUs every plan admitting the
most jobs admits every one-GPU job (the sizes of the rest leave no room otherwise), while
the LP admits two thirds of the dearest one and a third of a 4-GPU job in the last GPU.
The range every plan keeps each size class's count in follows from the admitted count and
the capacity pooled over the types alone (:func:`~schedopt.allocation.certificates.size_classes`,
which the checker runs too); the LP with those ranges as rows gives prices on them, and the
Lagrangian bound at its prices (:func:`~schedopt.allocation.certificates.size_class_bound`)
is what the proof states: on that instance the optimum's value.
"""

from __future__ import annotations

import math
import time
from typing import Any, NamedTuple

import numpy as np

from schedopt.allocation.certificates import (ConfigurationTable, SizeClasses, class_ranges, configuration_count,
                                              instance_table, job_arrays, pooled_capacity, pooled_sizes,
                                              price_vector, remaining_time_grid, size_class_bound, size_classes)
from schedopt.allocation.model import AllocationModel
from schedopt.allocation.lagrange import LagrangeResult, LpBasis, segment_min
from schedopt.backends.lp import BASIS_BASIC, solve_lp_colwise
from schedopt.plan import Proof
from schedopt.tolerances import INTEGRAL_TOL, LP_ZERO, capacity_limit

SIZE_CLASS_METHOD = "size-class-lagrangian (the LP with each size class's count in its range)"

#: classes are tried only where the configurations are few enough to enumerate once more (the
#: checker's table; at 48,000, 16,000 rigid typed jobs, 0.2 s, and the class LP 1.0 s from scratch, 0.05 s
#: from the plain LP's basis: the exact driver's limit, where the stage model and its certificate cost
#: more, 16,000 jobs seed 33 10.5 -> 5.1 s before the basis)
MAX_CLASS_CONFIGURATIONS = 200_000
#: the limit where the class LP starts from scratch (no plain LP over listed configurations to start from:
#: jobs priced in closed form). Before the LP's basis was the start, the heuristics' limit too: at 16,000
#: typed jobs the class LP then cost more than the greedy's search it ends (seed 31: 3.4 -> 5.0 s with it);
#: from the basis the greedy takes it at every size (16,000 jobs seed 33: 2.4 -> 1.5 s, and the optimum)
COLD_CLASS_CONFIGURATIONS = 20_000


def tightest_classes(instance: Any, table: ConfigurationTable, admit: int) -> tuple[str, SizeClasses] | None:
    """The resource whose size classes' ranges cut the most (None: no range cuts anything)."""
    best = None
    for r, name in enumerate(instance.resources):
        classes = size_classes(instance, table, r, admit)
        if np.any(classes.lo > classes.hi) or classes.tight == 0:
            continue
        if best is None or classes.tight > best[1].tight:
            best = (name, classes)
    return best


class ClassRows(NamedTuple):
    """The size classes' ranges as rows of a stage model over configurations ``cs``: ``place`` (K,) each
    configuration's cut class (-1: none), and each cut class's range of admitted jobs [``lo``, ``hi``] (C,).
    Every plan admitting at least the count they were computed for keeps them (implied rows)."""

    place: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def class_rows(model: AllocationModel, cs: Any, *, admit: int | None, cap: np.ndarray | None = None,
               max_configurations: int = MAX_CLASS_CONFIGURATIONS) -> ClassRows | None:
    """The size classes' ranges as rows over ``cs`` (configurations of the model's jobs, grouped by
    job: all of them, those reduced-cost fixing keeps, or a neighbourhood's) within the capacity rows
    ``cap`` (the model's layout; default its own), for plans over ``cs`` admitting at least ``admit``
    of its jobs (None: every job of the model); the resource whose ranges cut the most; None where none
    cuts (or past ``max_configurations``). The ranges are :func:`class_ranges`' over ``cs``'s own sizes
    and the capacity ``cap`` pools over the types: every plan the stage model over ``cs`` allows keeps
    them.

    Rows the stage model need not have, but that its relaxation lacks: on 100 typed `gavel` jobs under
    the average-JCT objective the LP's optimum admits thirds of jobs of the dearest sizes, and HiGHS's
    root spends 30-120 ms of cuts closing what these rows close at once (docs/benchmarks.md)."""
    if cs.K == 0 or cs.K > max_configurations:
        return None
    instance = model.instance
    cap = model.rows.cap if cap is None else cap
    R = len(instance.resources)
    types = len(instance.accelerators) if instance.typed else 1
    demand = job_arrays(instance).demand
    k = model.J if admit is None else int(admit)
    best: tuple[SizeClasses, np.ndarray] | None = None
    for r in range(R):
        pooled = math.floor(float(capacity_limit(np.asarray(cap, dtype=float)[[t * R + r for t in range(types)]]).sum()))
        size = pooled_sizes(demand, cs.job, cs.counts[:, 0], cs.counts[:, 1], r)
        sizes, jobs, lo, hi = class_ranges(size, cs.job, model.J, pooled, k)
        classes = SizeClasses(size, sizes, jobs, lo, hi, pooled, k)
        if np.any(lo > hi) or classes.tight == 0:
            continue  # no plan admits that many (the model says so itself), or nothing is cut
        if best is None or classes.tight > best[0].tight:
            best = (classes, size)
    if best is None:
        return None
    classes, size = best
    cut = classes.cut
    return ClassRows(classes.cut_place(size), classes.lo[cut].astype(np.int64), classes.hi[cut].astype(np.int64))


class SizeClassBound(NamedTuple):
    """The bound (the replay's value), its proof, what it did (``info``: metrics) and the LP's
    optimum as a plan {row: (c0, c1)} where it is integral (else None; the caller checks it fits);
    the prices it is the Lagrangian bound at: ``lam`` (R,) on the capacity rows, ``nu`` on the
    admission row, ``class_price`` (K,) π of each listed configuration's cut class (0: none;
    ``model.choices``' order)."""

    bound: float
    proof: Proof
    info: dict[str, Any]
    plan: dict[int, tuple[int, int]] | None
    lam: np.ndarray
    nu: float
    class_price: np.ndarray

    def reduced_costs(self, cs: Any) -> LagrangeResult:
        """This bound with each configuration of ``cs`` (the model's listing, ``model.choices``) at its
        reduced cost, as :func:`~schedopt.allocation.lagrange.fix_by_reduced_cost` reads an LP's:
        rc = c + λ·u − π − ν − min(0, m_j − ν) (every job admitted: rc = c + λ·u − π − m_j), m_j the
        least c + λ·u − π of job j's. A plan admitting at least the bound's count that uses a
        configuration costs at least the bound plus its rc (docs/certificates.md's argument, each
        other term >= 0), so a configuration whose bound + rc exceeds a plan's cost is in no plan
        admitting as many at no more cost. (``x`` zero, ``rounds`` and ``columns`` 0: no LP of its own.)"""
        every = self.proof.admit is None
        priced = cs.cost + cs.use @ self.lam - self.class_price - (0.0 if every else self.nu)
        least = segment_min(priced, cs)
        if not every:
            least = np.minimum(least, 0.0)
        return LagrangeResult(bound=self.bound, lam=self.lam, nu=self.nu, rc=priced - least[cs.job],
                              x=np.zeros(cs.K), rounds=0, columns=0)


def size_class_proof(model: AllocationModel, *, admit: int | None, max_configurations: int = MAX_CLASS_CONFIGURATIONS,
                     lp_x: np.ndarray | None = None, lp_basis: LpBasis | None = None) -> SizeClassBound | None:
    """The ``size-class-lagrangian`` bound on Σ t over plans admitting at least ``admit`` jobs
    (None: every job) and its proof, or None where no size class's range cuts (or the LP fails).
    The LP is the model's over its listed configurations plus one row per cut class; the bound stated
    is the replay's own value at its prices. Solved once per model and count (the exact driver asks
    again as it ends); None, not solved, above ``max_configurations`` configurations, or where the
    LP's own optimum ``lp_x`` (over ``model.choices``) keeps every class in its range already (its
    bound would be the LP's: at 40 typed jobs, all admitted, or 400 on 108 GPUs, 108 1-GPU ones).
    ``lp_basis``: that LP's optimal basis (:class:`~schedopt.allocation.lagrange.LpBasis`), where the
    class LP starts: the same LP with rows added, re-solved by the dual simplex from there (16,000 typed
    jobs, seed 33: 1.0 s from scratch; docs/benchmarks.md)."""
    if configuration_count(model.instance) > max_configurations:
        return None
    held = model.__dict__.setdefault("size_class_bounds", {})
    if admit not in held:
        held[admit] = None if lp_x is not None and _lp_within_ranges(model, admit, lp_x) else \
            _size_class_proof(model, admit, lp_basis)
    return held[admit]


def _lp_within_ranges(model: AllocationModel, admit: int | None, lp_x: np.ndarray) -> bool:
    """Whether the LP's optimum ``lp_x`` keeps each size class of every resource within its range,
    the ranges computed from the model's listed configurations (no looser than the checker's, which
    may list more: within these, within those), so that the class rows would not move the LP."""
    instance = model.instance
    _, cs, _ = model.choices
    if len(lp_x) != cs.K:
        return False
    J = model.J
    k = J if admit is None else int(admit)
    data = job_arrays(instance)
    for r in range(len(instance.resources)):
        size = pooled_sizes(data.demand, cs.job, cs.counts[:, 0], cs.counts[:, 1], r)
        sizes, _, lo, hi = class_ranges(size, cs.job, J, math.floor(pooled_capacity(instance, r)), k)
        held = np.bincount(np.searchsorted(sizes, size), weights=lp_x, minlength=len(sizes))
        if np.any(held < lo - LP_ZERO) or np.any(held > hi + LP_ZERO):
            return False
    return True


def model_table(model: AllocationModel) -> ConfigurationTable:
    """The allowed configurations of ``model``'s instance as a :class:`ConfigurationTable`, the
    classes and the bound read (their values are the replay's: the checker builds its own,
    :func:`instance_table`). Where every row is rigid (one allowed count per role) the model lists
    each job's one allowed configuration on each type it runs on at its time there, the checker's
    allowed set (its other entries cost inf and count nowhere; the times the same, within rounding under a
    weighted objective): read from the model's choices
    (0.05 ms at 100 typed jobs, where the checker's enumeration takes 1 ms); else the checker's."""
    rows = model.rows
    if not model.own_cost or not rows.rigid.all():
        return instance_table(model.instance, remaining_time_grid)
    _, cs, row_of = model.choices
    kind = model.kind[row_of]
    cost = np.asarray(cs.cost, dtype=float)
    return ConfigurationTable([(int(t), cs.job[kind == t], cs.counts[kind == t, 0], cs.counts[kind == t, 1],
                                cost[kind == t]) for t in np.unique(kind).tolist()])


def _start_basis(lp_basis: LpBasis | None, K: int, J: int, R: int, every: bool,
                 classes: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The class LP's starting basis from the plain LP's (rows: the jobs', the capacities', the
    admission row, the cut classes'): the added rows basic, so the plain LP's optimum is where the dual
    simplex starts. None where ``lp_basis`` is not of this LP's configurations and rows."""
    if lp_basis is None or len(lp_basis.col) != K or len(lp_basis.job) != J or len(lp_basis.cap) != R:
        return None
    admit_row = BASIS_BASIC if every else lp_basis.admit_row  # every job: a free row
    rows = np.concatenate([lp_basis.job, lp_basis.cap, [admit_row], np.full(classes, BASIS_BASIC)]).astype(np.int8)
    return lp_basis.col, rows


def _size_class_proof(model: AllocationModel, admit: int | None, lp_basis: LpBasis | None = None) -> SizeClassBound | None:
    started = time.perf_counter()
    instance = model.instance
    if not model.own_cost:
        return None
    J = model.J
    k = J if admit is None else int(admit)
    table = model_table(model)
    got = tightest_classes(instance, table, k)
    if got is None:
        return None
    resource, classes = got
    r = instance.resources.index(resource)
    _, cs, row_of = model.choices
    size = pooled_sizes(job_arrays(instance).demand, cs.job, cs.counts[:, 0], cs.counts[:, 1], r)
    cut = classes.cut
    K, R = cs.K, cs.use.shape[1]
    # rows: each job at most one configuration (J), the capacity rows (R), the admission row, the cut classes
    place = classes.cut_place(size)
    in_cut = place >= 0
    use = np.asarray(cs.use, dtype=float)
    nz_r, nz_k = np.nonzero(use.T)  # (row, column) pairs of the capacity block
    rows = [cs.job.astype(np.int64), J + nz_r, np.full(K, J + R), J + R + 1 + place[in_cut]]
    cols = [np.arange(K), nz_k, np.arange(K), np.flatnonzero(in_cut)]
    vals = [np.ones(K), use.T[nz_r, nz_k], np.ones(K), np.ones(int(in_cut.sum()))]
    row, col, val = (np.concatenate(a) for a in (rows, cols, vals))
    order = np.lexsort((row, col))
    row, col, val = row[order], col[order], val[order]
    start = np.searchsorted(col, np.arange(K + 1))
    every = k >= J
    lower = np.concatenate([np.ones(J) if every else np.full(J, -np.inf), np.full(R, -np.inf),
                            [-np.inf if every else float(k)], classes.lo[cut].astype(float)])
    upper = np.concatenate([np.ones(J), model.rows.cap.astype(float), [np.inf], classes.hi[cut].astype(float)])
    res = solve_lp_colwise(np.asarray(cs.cost, dtype=float), start, row, val, row_lower=lower, row_upper=upper,
                           col_lower=np.zeros(K), col_upper=np.ones(K), presolve=False,
                           basis=_start_basis(lp_basis, K, J, R, every, len(cut)))
    if not res.optimal:
        return None
    lam = np.maximum(0.0, -res.row_dual[J:J + R])
    nu = 0.0 if every else max(0.0, float(res.row_dual[J + R]))
    prices = classes.cut_prices(res.row_dual[J + R + 1:J + R + 1 + len(cut)])
    proof = Proof(kind="size-class-lagrangian", prices={n: float(v) for n, v in zip(model.resource_names, lam)},
                  admit=None if every else k, admit_price=None if every else nu, pooled=resource,
                  class_prices=prices)
    lam_vec = price_vector(instance, proof.prices)
    bound = size_class_bound(instance, lam_vec, remaining_time_grid, admit=None if every else k, nu=nu,
                             resource=resource, class_prices=prices, table=table, classes=classes)
    proof.value = bound
    info = {"bound_method": SIZE_CLASS_METHOD, "size_class_lp": float(res.objective),
            "size_class_lp_iterations": res.iterations,
            "size_classes": {str(int(classes.sizes[i])): [int(classes.lo[i]), int(classes.hi[i])] for i in cut.tolist()},
            "size_class_seconds": time.perf_counter() - started}
    x = res.x
    plan = None
    if np.all(np.minimum(np.abs(x), np.abs(1.0 - x)) <= INTEGRAL_TOL):  # an integral optimum: a plan itself
        at = np.flatnonzero(x > 0.5)
        plan = {int(row_of[i]): (int(cs.counts[i, 0]), int(cs.counts[i, 1])) for i in at.tolist()}
        if len(plan) != len(at):
            plan = None
    duals = np.asarray(res.row_dual[J + R + 1:J + R + 1 + len(cut)], dtype=float)
    class_price = np.where(in_cut, duals[np.maximum(place, 0)], 0.0)
    return SizeClassBound(bound, proof, info, plan, lam, nu, class_price)
