"""Branch certificates: a replayable proof of an optimum the LP's prices do not reach
(issue 48 §5; docs/certificates.md, kind ``branch-lagrangian``).

When the multiple-choice LP (the Lagrangian dual of the capacity rows) stops short
of the optimum, a branch-and-bound tree closes the gap: each node splits one job's
configurations in two (a role's count at most v / at least v + 1, or one accelerator
type / the others), and each leaf carries prices whose Lagrangian over the
configurations its path allows is at least the target. Every plan lies in some leaf,
so the least leaf bound bounds every plan, as VIPR certificates do for MIP. Where jobs
must be paused and the pooled capacity cuts some size class's range (``size_classes.py``),
those ranges are rows of every node's LP and their prices go into the leaves
(``class_prices``, the proof's ``pooled`` resource): the ranges hold for every plan, so in
every leaf, and they close what single-job splits close slowly.

Solver side: each node's prices come from its LP (HiGHS through SciPy's ``linprog``);
whether a node is closed is decided by the checker's own replay
(:func:`schedopt.allocation.certificates.lagrangian_cost_bound`), so what this module
states is exactly what ``check`` recomputes. Plans admitting every job only.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix, hstack, lil_matrix, vstack

from schedopt.allocation.certificates import (MAX_BRANCH_DEPTH, ConfigurationTable, CostGrid, Domain, capacity_of,
                                              configuration_blocks, configuration_count, job_arrays,
                                              lagrangian_cost_bound, pooled_sizes, remaining_time_grid, resource_names,
                                              SizeClasses, size_class_bound)
from schedopt.allocation.rows import quota_rows
from schedopt.claims import TooLargeToReplay
from schedopt.instance import Instance
from schedopt.plan import Proof
from schedopt.tolerances import BOUND_NOISE, BRANCH_TARGET_MARGIN, LP_ZERO, TINY

#: the most allowed configurations (all jobs, all types) a branch certificate is searched over
#: (a node's LP over 100,000 of a `dl2` instance took 0.7 s, but over the 47,828 of a 16,000-job
#: typed `gavel` instance 2-29 s, and no tree was found there in 40 s: larger trees are out of
#: an exact solve's budget), and the most the instance's role bounds may span before any is enumerated
MAX_CONFIGURATIONS = 20_000
MAX_ENUMERATED = 500_000
#: the most leaves a certificate the search builds may have
MAX_LEAVES = 2_000
#: the search's budget in node LPs (strong branching's included), not seconds, so the same instance
#: gets the same certificate on any machine (a plan that passes `check --strict` here passes on CI):
#: NODE_LP_WORK configuration-LPs (node LPs × the allowed configurations each holds), at least
#: MIN_NODE_LPS and at most MAX_NODE_LPS. Calibrated against the seconds budget it replaces (twice
#: the solve): on 1,000 typed `gavel` jobs (about 3,000 configurations, 2-4 ms a warm node LP, 17 a
#: level with strong branching) 1,000 node LPs, 2-4 s; on 40 jobs the cap, under 1 s
NODE_LP_WORK = 3_000_000
MIN_NODE_LPS, MAX_NODE_LPS = 100, 2_000


def node_lp_budget(configurations: int) -> int:
    """Node LPs the search may solve over ``configurations`` allowed configurations."""
    return int(min(MAX_NODE_LPS, max(MIN_NODE_LPS, NODE_LP_WORK // max(1, configurations))))


class _Configurations:
    """Every allowed configuration of every job on every type, flat: ``t``, ``owner``,
    ``c0``, ``c1``, ``cost`` (K,) and ``use`` (K, rows) over :func:`resource_names`."""

    def __init__(self, instance: Instance, cost: CostGrid, blocks: list) -> None:
        data = job_arrays(instance)
        parts = [(np.full(len(o), t), o, a, b, c) for t, o, a, b, c in blocks]
        t, owner, c0, c1, costs = (np.concatenate([p[i] for p in parts]) if parts else np.zeros(0) for i in range(5))
        keep = np.isfinite(costs)
        self.t, self.owner = t[keep].astype(np.int64), owner[keep].astype(np.int64)
        self.c0, self.c1, self.cost = c0[keep].astype(np.int64), c1[keep].astype(np.int64), costs[keep]
        R = len(instance.resources)
        use = self.c0[:, None] * data.demand[self.owner, 0] + self.c1[:, None] * data.demand[self.owner, 1]
        T = len(instance.accelerators)  # the capacity rows: (type, resource) pairs, then the quota rows
        quotas = quota_rows(instance)
        wide = np.zeros((len(self.owner), T * R + quotas.Q))
        for k in range(T):
            on = self.t == k
            wide[on, k * R:(k + 1) * R] = use[on]
            queue = data.queue[self.owner]
            for q in np.unique(queue[on & (queue >= 0)]):
                hit = np.flatnonzero(quotas.member[:, q] & quotas.types[:, k])
                rows_q = np.flatnonzero(on & (queue == q))
                if len(hit):
                    wide[np.ix_(rows_q, T * R + hit)] = use[np.ix_(rows_q, quotas.resource[hit])]
        self.use = wide


class _ClassRows:
    """The size classes a branch search prices (:func:`~schedopt.allocation.size_classes.tightest_classes`):
    the pooled ``resource``, the cut classes' ranges ``lo``/``hi`` (C,), and each configuration's
    class row (``row`` (K,), -1: a class not cut)."""

    def __init__(self, resource: str, classes: SizeClasses, conf: _Configurations, demand: np.ndarray, r: int) -> None:
        cut = classes.cut
        self.resource, self.classes = resource, classes
        self.lo, self.hi = classes.lo[cut].astype(float), classes.hi[cut].astype(float)
        self.row = classes.cut_place(pooled_sizes(demand, conf.owner, conf.c0, conf.c1, r))

    def prices(self, pi: np.ndarray) -> dict[str, float]:
        """A leaf's ``class_prices``: {size: π} of the cut classes."""
        return self.classes.cut_prices(pi)


class _NodeLp:
    """The nodes' LP on one HiGHS instance, re-solved from the last node's basis (a child
    differs from its parent by a few columns' bounds and rows': about 10× faster than
    solving each node from scratch; issue 50 §3). Columns: every configuration of ``conf``;
    rows: the capacity rows (R), one row per job (Σ x <= 1, or = 1 when admitted), and the
    admission row (Σ x >= admit) when ``admit`` is not None."""

    def __init__(self, conf: _Configurations, J: int, cap: np.ndarray, admit: int | None,
                 classes: "_ClassRows | None" = None) -> None:
        from schedopt.backends.lp import INF, IncrementalLp

        K, R = len(conf.owner), len(cap)
        self.conf, self.J, self.cap, self.admit, self.R = conf, J, cap, admit, R
        self.classes = classes
        self.lp = IncrementalLp(threads=1)
        self.lp.add_rows(np.full(R, -INF), cap)  # capacity rows
        every = admit is None
        self.lp.add_rows(np.full(J, 1.0 if every else 0.0), np.ones(J))  # one configuration per job at most
        if not every:
            self.lp.add_rows(np.array([float(admit)]), np.array([INF]))  # at least ``admit`` jobs
        parts = [csr_matrix(conf.use.T),  # capacity rows
                 csr_matrix((np.ones(K), (conf.owner, np.arange(K))), shape=(J, K))]  # each job's row
        if not every:
            parts.append(csr_matrix(np.ones((1, K))))  # the admission row
        self.class_row0 = R + J + (0 if every else 1)
        if classes is not None:  # each cut size class's count within its range (every plan keeps it there)
            self.lp.add_rows(classes.lo, classes.hi)
            on = classes.row >= 0
            parts.append(csr_matrix((np.ones(int(on.sum())), (classes.row[on], np.flatnonzero(on))),
                                    shape=(len(classes.lo), K)))
        a = vstack(parts, format="csc")
        self.lp.add_cols(conf.cost, np.zeros(K), np.ones(K), a.indptr[:-1], a.indices, a.data)
        # the overflow LP's slacks (fixed at 0 but while an infeasible node's overflow is priced):
        # -1 on each capacity row, +1 on the admission row
        S = R + (0 if every else 1)
        rows = np.r_[np.arange(R), [] if every else [R + J]].astype(np.int32)
        self.lp.add_cols(np.zeros(S), np.zeros(S), np.zeros(S), np.arange(S), rows,
                         np.r_[-np.ones(R), [] if every else [1.0]])
        self.K, self.S = K, S
        self.job_rows = np.arange(R, R + J)
        self.all_cols = np.arange(K)
        self.mask: np.ndarray | None = None
        self.must: np.ndarray | None = None
        self.pi: np.ndarray | None = None  # the class rows' prices at the last optimal solve (None: none)

    def solve(self, mask: np.ndarray, must: np.ndarray, time_limit_s: float, *, prices: bool = True
              ) -> tuple[str, np.ndarray | None, float, np.ndarray | None, float]:
        """As :func:`_lp_prices` (which it falls back on when HiGHS stops otherwise), with the LP's
        value last (+inf when infeasible). ``prices=False``: an infeasible node's overflow is not priced."""
        if self.mask is None or not np.array_equal(mask, self.mask):
            changed = self.all_cols if self.mask is None else np.flatnonzero(mask != self.mask)
            self.lp.set_col_bounds(changed, np.zeros(len(changed)), mask[changed].astype(float))
            self.mask = mask.copy()
        if self.admit is not None and (self.must is None or not np.array_equal(must, self.must)):
            changed = self.job_rows if self.must is None else self.job_rows[must != self.must]
            self.lp.set_row_bounds(changed, must[changed - self.R].astype(float), np.ones(len(changed)))
            self.must = must.copy()
        self.lp.set_time_limit(time_limit_s)
        res = self.lp.solve()
        if res.optimal:
            lam, nu, self.pi = self._prices(res)
            return "optimal", lam, nu, res.x[:self.K][mask], res.objective
        if res.status == "Time limit reached":
            return "time", None, 0.0, None, math.nan
        if res.status != "Infeasible":
            return self._from_scratch(mask, must, time_limit_s)
        if not prices:
            return "infeasible", None, 0.0, None, math.inf
        # infeasible: min Σ overflow (capacity rows, and the admission row's shortfall), the other rows kept
        # (the class rows let go: the overflow's prices are those of the LP without them, as before them)
        K, S = self.K, self.S
        every_col = np.arange(K + S)
        class_rows = np.arange(self.class_row0, self.class_row0 + (0 if self.classes is None else len(self.classes.lo)))
        if len(class_rows):
            self.lp.set_row_bounds(class_rows, np.full(len(class_rows), -np.inf), np.full(len(class_rows), np.inf))
        self.lp.set_costs(every_col, np.r_[np.zeros(K), np.ones(S)])
        self.lp.set_col_bounds(np.arange(K, K + S), np.zeros(S), np.full(S, np.inf))
        res = self.lp.solve()
        self.lp.set_costs(every_col, np.r_[self.conf.cost, np.zeros(S)])
        self.lp.set_col_bounds(np.arange(K, K + S), np.zeros(S), np.zeros(S))
        if len(class_rows):
            self.lp.set_row_bounds(class_rows, self.classes.lo, self.classes.hi)  # type: ignore[union-attr]
        if not res.optimal or res.objective <= 0:
            return self._from_scratch(mask, must, time_limit_s)
        lam, nu, _ = self._prices(res)
        return "infeasible", lam, nu, None, math.inf

    def _prices(self, res: Any) -> tuple[np.ndarray, float, np.ndarray]:
        """λ (capacity rows), ν (the admission row; 0 without it) and π (the class rows, any sign;
        empty without them) from HiGHS's row duals: a binding <= row of a minimisation has a dual
        <= 0, a binding >= row one >= 0."""
        lam = np.maximum(-res.row_dual[:self.R], 0.0)
        nu = max(float(res.row_dual[self.R + self.J]), 0.0) if self.admit is not None else 0.0
        pi = np.asarray(res.row_dual[self.class_row0:], dtype=float).copy() if self.classes is not None else np.zeros(0)
        return lam, nu, pi

    def _from_scratch(self, mask: np.ndarray, must: np.ndarray, time_limit_s: float
                      ) -> tuple[str, np.ndarray | None, float, np.ndarray | None, float]:
        status, lam, nu, x = _lp_prices(self.conf, mask, must, self.J, self.cap, self.admit, time_limit_s)
        self.pi = None  # the LP without the class rows: no class prices
        value = float(self.conf.cost[mask] @ x) if x is not None else (math.inf if status == "infeasible" else math.nan)
        return status, lam, nu, x, value


def _lp_prices(conf: _Configurations, mask: np.ndarray, must: np.ndarray, J: int, cap: np.ndarray,
               admit: int | None, time_limit_s: float) -> tuple[str, np.ndarray | None, float, np.ndarray | None]:
    """The node's LP solved from scratch: min cost·x, at most one allowed configuration per job (exactly one for
    every job when ``admit`` is None, and for the jobs ``must`` admit), at least ``admit``
    jobs, within capacity. ("optimal", λ, ν, x), ("infeasible", λ, ν, None) with the row
    prices of the least-overflow LP (they price every plan of the node out when scaled),
    ("time", None, 0, None) when the LP hits ``time_limit_s``, or ("error", None, 0, None)."""
    idx = np.flatnonzero(mask)
    K = len(idx)
    owner = conf.owner[idx]
    assign = csr_matrix((np.ones(K), (owner, np.arange(K))), shape=(J, K))
    use_t = csr_matrix(conf.use[idx].T)
    exact = np.ones(J, dtype=bool) if admit is None else must
    rows_ub = [use_t]
    b_ub = [cap]
    if admit is not None:
        rows_ub += [assign[~exact], csr_matrix(-np.ones((1, K)))]
        b_ub += [np.ones(int((~exact).sum())), np.array([-float(admit)])]
    a_ub = vstack(rows_ub, format="csr")
    b_ub_all = np.concatenate(b_ub)
    a_eq, b_eq = (assign[exact], np.ones(int(exact.sum()))) if exact.any() else (None, None)
    R = use_t.shape[0]

    def prices(res: Any) -> tuple[np.ndarray, float]:
        marg = -np.asarray(res.ineqlin.marginals)
        return np.maximum(marg[:R], 0.0), (max(float(marg[-1]), 0.0) if admit is not None else 0.0)

    options = {"time_limit": max(1e-3, time_limit_s)} if math.isfinite(time_limit_s) else {}
    res = linprog(conf.cost[idx], A_ub=a_ub, b_ub=b_ub_all, A_eq=a_eq, b_eq=b_eq, bounds=(0, 1), method="highs",
                  options=options)
    if res.status == 0:
        lam, nu = prices(res)
        return "optimal", lam, nu, np.asarray(res.x)
    if res.status == 1:  # its time (or iteration) limit: the search's budget is spent
        return "time", None, 0.0, None
    if res.status != 2:
        return "error", None, 0.0, None
    # infeasible: min Σ overflow s.t. use·x - s <= C and Σx + s_a >= admit (the other rows kept): the
    # admission row takes a slack too, else a node whose allowed jobs are too few to admit ``admit``
    # has no overflow LP either (a capacity slack cannot make up the count)
    S = R + (1 if admit is not None else 0)
    slack = lil_matrix((a_ub.shape[0], S))
    for r in range(R):
        slack[r, r] = -1.0
    if admit is not None:
        slack[a_ub.shape[0] - 1, R] = -1.0
    a_ub2 = hstack([a_ub, slack.tocsr()], format="csr")
    a_eq2 = hstack([a_eq, csr_matrix((a_eq.shape[0], S))], format="csr") if a_eq is not None else None
    obj = np.concatenate([np.zeros(K), np.ones(S)])
    bounds = [(0, 1)] * K + [(0, None)] * S
    res = linprog(obj, A_ub=a_ub2, b_ub=b_ub_all, A_eq=a_eq2, b_eq=b_eq, bounds=bounds, method="highs", options=options)
    if res.status != 0 or res.fun <= 0:
        return "error", None, 0.0, None
    lam, nu = prices(res)
    return "infeasible", lam, nu, None


#: strong branching: a node tries the splits of its this many most fractional jobs (each child's LP
#: from the node's basis) and takes the one whose children's LPs rise the most (the product of the
#: two rises, each as a fraction of the node's gap to the target and at least RISE_FLOOR). Choosing
#: the most fractional job alone left dives ten levels deep without any rise on 1,000-job typed `gavel`
#: optima (issue 50 §3). A kind of split (a job's admission, its type, a role's count) is tried once
#: per search: a later node scores it by the rises it had then (pseudocosts of reliability 1), which
#: halved the node LPs of 100-job typed optima (2,116 -> 1,122 over seeds 0-19) and lost no tree
#: found before on 355 typed solves (11-1,000 jobs; several greedy trees closed nearer the plan's value)
STRONG_CANDIDATES = 8
RISE_FLOOR = 1e-3


def _fractional(conf: _Configurations, idx: np.ndarray, x: np.ndarray, admitted: np.ndarray,
                every: bool) -> list[tuple[int, int, int]]:
    """The node's splits, most fractional first: (job, a, b) for a job the LP ``x`` (over the
    configurations ``idx``) spreads over two or more configurations (a: its heaviest, b: the
    next), (job, -1, -1) for a job that may pause and runs in part."""
    live = x > LP_ZERO
    at, weights = idx[live], x[live]
    owners = conf.owner[at]
    order = np.lexsort((-weights, owners))  # by job, heaviest first
    at, weights, owners = at[order], weights[order], owners[order]
    first = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    count = np.diff(np.r_[first, len(owners)])
    total = np.add.reduceat(weights, first) if len(first) else np.zeros(0)
    out: list[tuple[float, int, tuple[int, int, int]]] = []
    for f, n, tot in zip(first.tolist(), count.tolist(), total.tolist()):
        j = int(owners[f])
        if n >= 2:
            out.append((float(weights[f]), j, (j, int(at[f]), int(at[f + 1]))))
        elif not every and not admitted[j] and tot < 1 - LP_ZERO:
            out.append((max(tot, 1 - tot), j, (j, -1, -1)))
    out.sort(key=lambda item: (item[0], item[1]))
    return [split for _, _, split in out]


def _split_kind(conf: _Configurations, split: tuple[int, int, int]) -> tuple[int, ...]:
    """What a split decides, whatever the node: (job,) its admission, (job, -1, type) its type,
    (job, role) a count of its role."""
    j, a, b = split
    if a < 0:
        return (j,)
    if conf.t[a] != conf.t[b]:
        return (j, -1, int(conf.t[a]))
    return (j, 0 if conf.c0[a] != conf.c0[b] else 1)


def _children(instance: Instance, conf: _Configurations, split: tuple[int, int, int], dom: Domain
              ) -> tuple[dict[str, Any], list[tuple[str, Domain]]]:
    """A node's fields for ``split`` (see :func:`_fractional`) and its two children, (key, domain) each,
    in the order the search pushes them (the second is searched first)."""
    j, a, b = split
    job = instance.jobs[j]
    if a < 0:  # the job runs in part: admitted, or paused
        admitted = dom.admitted.copy()
        admitted[j] = True
        none = dom.types.copy()
        none[j] = False
        return {"job": job.id}, [("admitted", dom.but(admitted=admitted)), ("paused", dom.but(types=none))]
    if conf.t[a] != conf.t[b]:
        t = int(conf.t[a])
        on = dom.but(types=dom.types.copy())
        on.types[j] &= np.arange(on.types.shape[1]) == t
        off = dom.but(types=dom.types.copy())
        off.types[j, t] = False
        return {"job": job.id, "accelerator": instance.accelerators[t]}, [("on", on), ("off", off)]
    k = 0 if conf.c0[a] != conf.c0[b] else 1
    counts = conf.c0 if k == 0 else conf.c1
    at = int(min(counts[a], counts[b]))
    low = dom.but(hi=dom.hi.copy())
    low.hi[j, k] = min(low.hi[j, k], at)
    high = dom.but(lo=dom.lo.copy())
    high.lo[j, k] = max(high.lo[j, k], at + 1)
    return {"job": job.id, "role": job.role_names[k], "at": at}, [("low", low), ("high", high)]


#: a dive this deep that has closed less than ``depth / PROJECTED_DEPTH_LIMIT`` of the root's gap to
#: the target is taken as hopeless: at that rate the tree would need paths deeper than a plan file
#: holds (MAX_BRANCH_DEPTH, projected linearly; issue 50 §3: the search otherwise spent twice the
#: solve's time on 4,000-job `gavel` optima with a 0.16 % LP gap and found nothing in 20,000 leaves;
#: twice MAX_BRANCH_DEPTH before, which let dives run on past any tree a plan file can hold)
HOPELESS_FROM_DEPTH = 3
PROJECTED_DEPTH_LIMIT = MAX_BRANCH_DEPTH


#: ... and a dive whose last RATE_WINDOW levels closed too little of the gap to reach the target
#: within PROJECTED_DEPTH_LIMIT levels at that recent rate is given up too: on 1,000-job typed `gavel`
#: optima the first split closes a third of the gap and the next ones under 1 % a level each, so the
#: rate since the root alone let dives run to depth 30-44 (1-3 s) before they were found hopeless
RATE_WINDOW = 6


def hopeless(depth: int, closed: float, earlier: float | None = None) -> bool:
    """Whether a dive at ``depth`` that has closed the fraction ``closed`` of the root's gap cannot
    reach the target within :data:`PROJECTED_DEPTH_LIMIT` levels at its rate so far, or (``earlier``:
    the fraction its ancestor :data:`RATE_WINDOW` levels up had closed) at its recent rate. (Whether
    those levels fit the node LPs left is not projected: strong branching scores a kind of split
    once per search, so a dive's levels cost fewer node LPs as it deepens, and the projection at
    its first levels' cost gave up a tree that closes in 41 node LPs: 80 × 27 multi-GPU seed 117.
    The search's node-LP budget still ends it.)"""
    if depth < HOPELESS_FROM_DEPTH or closed >= 1.0:
        return False
    if closed * PROJECTED_DEPTH_LIMIT < depth:
        return True
    rates = [closed / depth]
    if earlier is not None:
        rates.append((closed - earlier) / RATE_WINDOW)
    rate = min(rates)
    if rate <= 0.0:
        return True
    levels = (1.0 - closed) / rate
    return depth + levels > PROJECTED_DEPTH_LIMIT


def branch_proof(instance: Instance, value: float, *, admit: int | None = None, cost: CostGrid = remaining_time_grid,
                 max_node_lps: int | None = None, time_limit_s: float = math.inf, max_leaves: int = MAX_LEAVES,
                 allowed_at_least: int = 0, why: dict[str, Any] | None = None, dive_for_plan: bool = False
                 ) -> tuple[float, Proof, dict[str, Any]] | None:
    """A ``branch-lagrangian`` proof that no plan admitting at least ``admit`` jobs (every
    job: None) costs less than ``value`` (less :data:`BRANCH_TARGET_MARGIN`): (bound, proof,
    diagnostics), or None when none is found within ``max_node_lps`` node LPs (None:
    :func:`node_lp_budget` of the instance's allowed configurations), ``max_leaves`` and
    ``time_limit_s`` (a caller's time limit: only then may the outcome depend on the machine),
    or the instance is too large (``allowed_at_least``, the allowed configurations the caller
    has counted already, spares the enumeration then); ``why["stopped"]`` then says why, with
    the seconds and node LPs spent, and ``why["better_plan"]``, when a node's LP optimum is an
    integral plan below the target, that plan: (job index, type index, c0, c1) per admitted job.
    ``dive_for_plan``: a search found :func:`hopeless` dives on, without strong branching (one node
    LP a level), until it meets such a plan, a closed node or the end of its budget."""
    started = time.perf_counter()
    lps = 0  # node LPs solved so far
    budget = max_node_lps  # set from the configurations once they are enumerated, when None

    def stop(reason: str) -> None:
        if why is not None:
            why.update(stopped=reason, seconds=time.perf_counter() - started, node_lps=lps, node_lp_budget=budget)
        return None

    J = len(instance.jobs)
    if J == 0:
        return stop("no jobs")
    if allowed_at_least > MAX_CONFIGURATIONS:
        return stop(f"at least {allowed_at_least:,} allowed configurations (at most {MAX_CONFIGURATIONS:,})")
    if configuration_count(instance) > MAX_ENUMERATED:
        return stop(f"more than {MAX_ENUMERATED:,} configurations to enumerate")
    data = job_arrays(instance)
    try:
        blocks = list(configuration_blocks(instance, cost, data))
    except TooLargeToReplay:
        return stop("too large to replay")
    conf = _Configurations(instance, cost, blocks)
    if len(conf.owner) == 0 or len(conf.owner) > MAX_CONFIGURATIONS:
        return stop(f"{len(conf.owner):,} allowed configurations (at most {MAX_CONFIGURATIONS:,})")
    budget = node_lp_budget(len(conf.owner)) if budget is None else int(budget)
    cap = capacity_of(instance)
    names = resource_names(instance)
    target = value - BRANCH_TARGET_MARGIN * max(1.0, abs(value))

    every = admit is None or admit >= J
    k_admit = None if every else int(admit)  # type: ignore[arg-type]

    table = ConfigurationTable(blocks)  # the replay's configurations, grouped by job once
    # where jobs must be paused, the size classes' ranges (every plan admitting as many keeps them, so
    # every node does): rows of the node LPs, their prices in the leaves (size_classes.py)
    class_rows = None
    if not every:
        from schedopt.allocation.size_classes import tightest_classes

        got = tightest_classes(instance, table, k_admit)
        if got is not None:
            class_rows = _ClassRows(got[0], got[1], conf, data.demand, instance.resources.index(got[0]))

    def bound_at(lam: np.ndarray, nu: float, dom: Domain, pi: np.ndarray | None = None) -> float:
        if pi is None or class_rows is None:
            return lagrangian_cost_bound(instance, lam, cost, admit=k_admit, nu=nu, domain=dom, blocks=table)
        return size_class_bound(instance, lam, cost, admit=k_admit, nu=nu, resource=class_rows.resource,
                                class_prices=class_rows.prices(pi), table=table, classes=class_rows.classes,
                                domain=dom)

    by_owner = np.argsort(conf.owner, kind="stable")  # the configurations grouped by job, for one reduceat
    grouped = conf.owner[by_owner]
    runs = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]]) if len(grouped) else by_owner
    run_job = grouped[runs]
    cap_value = cap.astype(float)

    def quick_bound(lam: np.ndarray, nu: float, mask: np.ndarray, admitted: np.ndarray,
                    pi: np.ndarray | None = None) -> float:
        """L(λ, ν) (and π on the class rows) over the configurations ``mask`` allows (jobs ``admitted``
        must run), from the search's own arrays (cost + use·λ − π, one matrix product): what
        :func:`bound_at` replays, up to rounding. It steers the search; a node is closed only by
        :func:`bound_at`'s value, the checker's own."""
        own = conf.cost + conf.use @ lam
        ranges = 0.0
        if pi is not None and class_rows is not None and len(pi):
            own = own - np.where(class_rows.row >= 0, pi[np.maximum(class_rows.row, 0)], 0.0)
            ranges = float(pi @ np.where(pi >= 0, class_rows.lo, class_rows.hi))
        priced = np.where(mask, own, np.inf)[by_owner]
        m = np.full(J, np.inf)
        if len(runs):
            m[run_job] = np.minimum.reduceat(priced, runs)
        if every:
            total = float(m.sum())
        else:
            with np.errstate(invalid="ignore"):
                terms = np.where(admitted, m - nu, np.minimum(0.0, m - nu))
            total = float(terms.sum()) + nu * float(k_admit)  # type: ignore[arg-type]
        return total - float(lam @ cap_value) + ranges

    def node_bound(lam: np.ndarray, nu: float, mask: np.ndarray, dom: Domain, pi: np.ndarray | None = None) -> float:
        """L(λ, ν, π) at a node: :func:`quick_bound`'s value where it is clearly below the target (it
        decides nothing there), else the replay's (:func:`bound_at`), which alone closes a node."""
        found = quick_bound(lam, nu, mask, dom.admitted, pi)
        if found >= target - BOUND_NOISE * max(1.0, abs(target)):  # near or past the target: the replay's value decides
            found = bound_at(lam, nu, dom, pi)
        return found

    node_lp = _NodeLp(conf, J, cap, k_admit, class_rows)

    def mask_of(dom: Domain) -> np.ndarray:
        """The configurations ``dom`` allows, (K,) bool."""
        return dom.allows(conf.t, conf.owner, conf.c0, conf.c1)

    root: dict[str, Any] = {}
    # each node: its place in the tree, its domain, its depth and the fractions of the root's gap its
    # ancestors closed (the last RATE_WINDOW of them, nearest last)
    stack: list[tuple[dict[str, Any], Domain, int, tuple[float, ...]]] = [(root, Domain.everything(instance), 0, ())]
    leaves, least = 0, math.inf
    root_bound: float | None = None
    root_lps = 0
    diving = ""  # why the search gave up proving and dives for a plan (``dive_for_plan``)
    scores: dict[tuple[int, ...], list[float]] = {}  # a split's kind -> its children's rises / the node's gap when tried
    while stack:
        if time.perf_counter() - started > time_limit_s:
            return stop(f"time limit ({time_limit_s:.2f} s) reached")
        if lps >= budget:
            return stop(f"{budget:,} node LPs" + (f" (then diving for a plan after {diving})" if diving else ""))
        if leaves >= max_leaves:
            return stop(f"{max_leaves:,} leaves")
        node, dom, depth, closures = stack.pop()
        if depth >= MAX_BRANCH_DEPTH:  # deeper than a plan file holds: give up
            return stop(f"depth {MAX_BRANCH_DEPTH}")
        mask = mask_of(dom)
        empty = np.bincount(conf.owner[mask], minlength=J) == 0
        if (empty & (dom.admitted | every)).any():  # a job that must run has no configuration here: no plan
            if diving:
                return stop(f"{diving}; then a dive for a plan, {depth} levels, met none")
            node["prices"] = {}
            leaves += 1
            least = min(least, bound_at(np.zeros(len(names)), 0.0, dom))
            continue
        left = time_limit_s - (time.perf_counter() - started)
        status, lam, nu, x, lp_value = node_lp.solve(mask, dom.admitted, left)
        pi = node_lp.pi if status == "optimal" else None  # the class rows' prices (None: not priced)
        lps += 1
        if status == "time":
            return stop(f"time limit ({time_limit_s:.2f} s) reached in a node's LP")
        if status == "error" or lam is None:
            return stop("a node's LP failed")
        if status == "infeasible":  # scale the overflow prices until they price the node out
            # L(sλ, sν) is concave in s, at least L(0) + s·(overflow) for large s: the first try is
            # where the line through L(0) and L(λ, ν) reaches the target, then ×4 until it does
            at_one = bound_at(lam, nu, dom)
            scale = 1.0
            if at_one < target:
                at_zero = bound_at(0.0 * lam, 0.0, dom)
                slope = at_one - at_zero
                scale = max(2.0, 1.05 * (target - at_zero) / slope) if slope > 0 else 10.0
            while scale > 1.0 and scale < 1e30 and node_bound(scale * lam, scale * nu, mask, dom) < target:
                if time.perf_counter() - started > time_limit_s:
                    return stop(f"time limit ({time_limit_s:.2f} s) reached")
                scale *= 4.0
            lam, nu = scale * lam, scale * nu
        found = node_bound(lam, nu, mask, dom, pi)
        if root_bound is None:
            root_bound, root_lps = found, lps  # the dives' levels are counted from the root's bound
        closed = (found - root_bound) / max(target - root_bound, TINY)
        earlier = closures[0] if len(closures) == RATE_WINDOW else None
        per_level = (lps - root_lps) / max(depth, 1)
        if depth and not diving and hopeless(depth, closed, earlier):
            diving = (f"hopeless: a dive at depth {depth} closed {closed:.1%} of the root's gap"
                      + (f" ({closed - earlier:.1%} in its last {RATE_WINDOW} levels)" if earlier is not None else "")
                      + f", {per_level:.0f} node LPs a level, {budget - lps:,} left")
            if not dive_for_plan:
                return stop(diving)
        if found >= target and diving:  # the dive ends at a closed node: no plan below the target on its path
            return stop(f"{diving}; then a dive for a plan, {depth} levels, met none")
        if found >= target:
            node["prices"] = {r: float(v) for r, v in zip(names, lam) if v > 0}
            if not every:
                node["admit_price"] = float(nu)
            if pi is not None and class_rows is not None:
                node["class_prices"] = class_rows.prices(pi)
            leaves += 1
            least = min(least, found)
            continue
        if x is None:
            return stop("a node's LP gave no solution")
        candidates = _fractional(conf, np.flatnonzero(mask), x, dom.admitted, every)
        if not candidates:  # an integral LP optimum below the target: the incumbent is not optimal
            if why is not None:  # that plan, for the caller to adopt: (job, type, c0, c1) each
                on = np.flatnonzero(mask)[x > 0.5]
                why["better_plan"] = [(int(conf.owner[i]), int(conf.t[i]), int(conf.c0[i]), int(conf.c1[i]))
                                      for i in on.tolist()]
            return stop("an integral LP optimum below the target")
        best, best_score = candidates[0], -math.inf
        gap = max(target - lp_value, TINY)  # the node's LP value to the target (a feasible node: finite)
        if len(candidates) > 1 and not diving:  # strong branching: the split whose two children's LPs rise the most
            for split in candidates[:STRONG_CANDIDATES]:
                kind = _split_kind(conf, split)
                rises = scores.get(kind)
                if rises is None:
                    rises = []
                    for _, child in _children(instance, conf, split, dom)[1]:
                        if time.perf_counter() - started > time_limit_s:
                            return stop(f"time limit ({time_limit_s:.2f} s) reached")
                        left = time_limit_s - (time.perf_counter() - started)
                        got = node_lp.solve(mask_of(child), child.admitted, left, prices=False)
                        lps += 1
                        if got[0] == "time":
                            return stop(f"time limit ({time_limit_s:.2f} s) reached in a node's LP")
                        rises.append(max(got[4] - lp_value, 0.0) / gap)
                    scores[kind] = rises
                score = max(rises[0], RISE_FLOOR) * max(rises[1], RISE_FLOOR)
                if score > best_score:
                    best, best_score = split, score
        fields, kids = _children(instance, conf, best, dom)
        node.update(fields)
        below = (closures + (closed,))[-RATE_WINDOW:]
        stack += [(node.setdefault(key, {}), child, depth + 1, below) for key, child in kids]
    seconds = time.perf_counter() - started
    proof = Proof(kind="branch-lagrangian", value=least, tree=root, admit=k_admit,
                  pooled=None if class_rows is None else class_rows.resource)
    return least, proof, {"branch_leaves": leaves, "branch_seconds": seconds, "branch_node_lps": lps}


def warm_up_search() -> None:
    """Run the search once on a tiny typed instance, for :func:`schedopt.warm_up`: this module's import
    (it is imported when a plan first needs a tree; compiled from source where no bytecode is cached,
    12 ms of a first 40-job typed call) and its node LPs' first runs. Nothing is kept."""
    from schedopt.testing.instances import random_rigid_typed_instance

    branch_proof(random_rigid_typed_instance(0), 1e18, max_node_lps=20)  # a target no plan meets: it branches


def certify_optimum(instance: Instance, value: float, admitted: int, bound: float, proof: Proof, *,
                    left_s: float, metrics: dict[str, Any], allowed_at_least: int = 0) -> tuple[float, Proof]:
    """What an exact driver states for an optimum only its backend proved: a branch
    certificate anyone can replay, when :func:`branch_proof` finds one within its node-LP budget
    (and the ``left_s`` seconds the solve's time limit leaves); else the backend's ``bound`` and
    ``proof`` unchanged. ``metrics`` says which."""
    J = len(instance.jobs)
    why: dict[str, Any] = {}
    got = branch_proof(instance, value, admit=admitted if admitted < J else None,
                       time_limit_s=left_s, allowed_at_least=allowed_at_least, why=why)
    if got is None:
        metrics["branch_certificate"] = (f"none found ({why.get('stopped', 'stopped')} after "
                                         f"{why.get('seconds', 0.0):.2f} s): the backend's bound stands")
        return bound, proof
    tree_bound, tree_proof, info = got
    metrics.update(info)
    return min(bound, tree_bound), tree_proof

