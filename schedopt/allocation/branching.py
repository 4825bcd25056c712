"""Branch certificates: a replayable proof of an optimum the LP's prices do not reach
(issue 48 §5; docs/certificates.md, kind ``branch-lagrangian``).

When the multiple-choice LP (the Lagrangian dual of the capacity rows) stops short
of the optimum, a branch-and-bound tree closes the gap: each node splits one job's
configurations in two (a role's count at most v / at least v + 1, or one accelerator
type / the others), and each leaf carries prices whose Lagrangian over the
configurations its path allows is at least the target. Every plan lies in some leaf,
so the least leaf bound bounds every plan, as VIPR certificates do for MIP.

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
from scipy.sparse import csr_matrix, hstack, identity, vstack

from schedopt.allocation.certificates import (MAX_BRANCH_DEPTH, CostGrid, Domain, configuration_blocks, capacity_of,
                                              configuration_count, job_arrays, lagrangian_cost_bound,
                                              remaining_time_grid, resource_names)
from schedopt.allocation.rows import quota_rows
from schedopt.claims import TooLargeToReplay
from schedopt.deadline import proof_budget_s
from schedopt.instance import Instance
from schedopt.plan import Proof
from schedopt.tolerances import BRANCH_TARGET_MARGIN, LP_ZERO, TINY

#: the most allowed configurations (all jobs, all types) a branch certificate is searched over
#: (a node's LP over 100,000 of a `dl2` instance took 0.7 s, but over the 47,828 of a 16,000-job
#: typed `gavel` instance 2-29 s, and no tree was found there in 40 s: larger trees are out of
#: an exact solve's budget), and the most the instance's role bounds may span before any is enumerated
MAX_CONFIGURATIONS = 20_000
MAX_ENUMERATED = 500_000
#: the most leaves a certificate the search builds may have
MAX_LEAVES = 2_000


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


def _lp_prices(conf: _Configurations, mask: np.ndarray, must: np.ndarray, J: int, cap: np.ndarray,
               admit: int | None, time_limit_s: float) -> tuple[str, np.ndarray | None, float, np.ndarray | None]:
    """The node's LP: min cost·x, at most one allowed configuration per job (exactly one for
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

    options = {"time_limit": max(1e-3, time_limit_s)}
    res = linprog(conf.cost[idx], A_ub=a_ub, b_ub=b_ub_all, A_eq=a_eq, b_eq=b_eq, bounds=(0, 1), method="highs",
                  options=options)
    if res.status == 0:
        lam, nu = prices(res)
        return "optimal", lam, nu, np.asarray(res.x)
    if res.status == 1:  # its time (or iteration) limit: the search's budget is spent
        return "time", None, 0.0, None
    if res.status != 2:
        return "error", None, 0.0, None
    # infeasible: min Σ overflow s.t. use·x - s <= C (the other rows kept)
    slack = vstack([-identity(R, format="csr"), csr_matrix((a_ub.shape[0] - R, R))], format="csr")
    a_ub2 = hstack([a_ub, slack], format="csr")
    a_eq2 = hstack([a_eq, csr_matrix((a_eq.shape[0], R))], format="csr") if a_eq is not None else None
    obj = np.concatenate([np.zeros(K), np.ones(R)])
    bounds = [(0, 1)] * K + [(0, None)] * R
    res = linprog(obj, A_ub=a_ub2, b_ub=b_ub_all, A_eq=a_eq2, b_eq=b_eq, bounds=bounds, method="highs", options=options)
    if res.status != 0 or res.fun <= 0:
        return "error", None, 0.0, None
    lam, nu = prices(res)
    return "infeasible", lam, nu, None


#: a dive this deep that has closed less than ``depth / PROJECTED_DEPTH_LIMIT`` of the root's gap to
#: the target is taken as hopeless: at that rate the tree would need paths deeper than a plan file
#: holds (MAX_BRANCH_DEPTH, projected linearly; issue 50 §3: the search otherwise spent twice the
#: solve's time on 4,000-job `gavel` optima with a 0.16 % LP gap and found nothing in 20,000 leaves;
#: twice MAX_BRANCH_DEPTH before, which let dives run on past any tree a plan file can hold)
HOPELESS_FROM_DEPTH = 3
PROJECTED_DEPTH_LIMIT = MAX_BRANCH_DEPTH


def hopeless(depth: int, closed: float) -> bool:
    """Whether a dive at ``depth`` that has closed the fraction ``closed`` of the root's gap cannot
    reach the target within :data:`PROJECTED_DEPTH_LIMIT` levels at its rate so far."""
    return depth >= HOPELESS_FROM_DEPTH and closed * PROJECTED_DEPTH_LIMIT < depth


def branch_proof(instance: Instance, value: float, *, admit: int | None = None, cost: CostGrid = remaining_time_grid,
                 time_limit_s: float = 10.0, max_leaves: int = MAX_LEAVES,
                 why: dict[str, Any] | None = None) -> tuple[float, Proof, dict[str, Any]] | None:
    """A ``branch-lagrangian`` proof that no plan admitting at least ``admit`` jobs (every
    job: None) costs less than ``value`` (less :data:`BRANCH_TARGET_MARGIN`): (bound, proof,
    diagnostics), or None when none is found within ``time_limit_s`` and ``max_leaves``
    (or the instance is too large); ``why["stopped"]`` then says why, with the seconds spent."""
    started = time.perf_counter()

    def stop(reason: str) -> None:
        if why is not None:
            why.update(stopped=reason, seconds=time.perf_counter() - started)
        return None

    J = len(instance.jobs)
    if J == 0:
        return stop("no jobs")
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
    cap = capacity_of(instance)
    names = resource_names(instance)
    kinds = instance.accelerators
    target = value - BRANCH_TARGET_MARGIN * max(1.0, abs(value))

    every = admit is None or admit >= J
    k_admit = None if every else int(admit)  # type: ignore[arg-type]

    def bound_at(lam: np.ndarray, nu: float, dom: Domain) -> float:
        return lagrangian_cost_bound(instance, lam, cost, admit=k_admit, nu=nu, domain=dom, blocks=blocks)

    root: dict[str, Any] = {}
    stack: list[tuple[dict[str, Any], Domain, int]] = [(root, Domain.everything(instance), 0)]
    leaves, least = 0, math.inf
    root_bound: float | None = None
    while stack:
        if time.perf_counter() - started > time_limit_s:
            return stop(f"time budget ({time_limit_s:.2f} s) spent")
        if leaves >= max_leaves:
            return stop(f"{max_leaves:,} leaves")
        node, dom, depth = stack.pop()
        if depth >= MAX_BRANCH_DEPTH:  # deeper than a plan file holds: give up
            return stop(f"depth {MAX_BRANCH_DEPTH}")
        mask = np.zeros(len(conf.owner), bool)
        for k in range(len(kinds)):  # one type without types
            on = conf.t == k
            mask[on] = dom.allows(k, conf.owner[on], conf.c0[on], conf.c1[on])
        empty = np.bincount(conf.owner[mask], minlength=J) == 0
        if (empty & (dom.admitted | every)).any():  # a job that must run has no configuration here: no plan
            node["prices"] = {}
            leaves += 1
            least = min(least, bound_at(np.zeros(len(names)), 0.0, dom))
            continue
        left = time_limit_s - (time.perf_counter() - started)
        status, lam, nu, x = _lp_prices(conf, mask, dom.admitted, J, cap, k_admit, left)
        if status == "time":
            return stop(f"time budget ({time_limit_s:.2f} s) spent in a node's LP")
        if status == "error" or lam is None:
            return stop("a node's LP failed")
        if status == "infeasible":  # scale the overflow prices until they price the node out
            scale = 1.0
            while scale < 1e30 and bound_at(scale * lam, scale * nu, dom) < target:
                if time.perf_counter() - started > time_limit_s:
                    return stop(f"time budget ({time_limit_s:.2f} s) spent")
                scale *= 10.0
            lam, nu = scale * lam, scale * nu
        found = bound_at(lam, nu, dom)
        if root_bound is None:
            root_bound = found
        elif hopeless(depth, (found - root_bound) / max(target - root_bound, TINY)):
            return stop(f"hopeless: a dive at depth {depth} closed {(found - root_bound) / max(target - root_bound, TINY):.1%} "
                        "of the root's gap")
        if found >= target:
            node["prices"] = {r: float(v) for r, v in zip(names, lam) if v > 0}
            if not every:
                node["admit_price"] = float(nu)
            leaves += 1
            least = min(least, found)
            continue
        if x is None:
            return stop("a node's LP gave no solution")
        idx = np.flatnonzero(mask)
        live = x > LP_ZERO
        owners = conf.owner[idx[live]]
        weights = x[live]
        split = None
        best_share = 1.0
        for j in np.unique(owners):
            mine = np.flatnonzero(owners == j)
            order = mine[np.argsort(-weights[mine])]
            if len(mine) >= 2:
                share = float(weights[order[0]])
                if share < best_share:
                    split, best_share = (int(j), idx[live][order[0]], idx[live][order[1]]), share
            elif not every and not dom.admitted[j] and weights[mine].sum() < 1 - LP_ZERO:
                share = max(float(weights[mine].sum()), 1 - float(weights[mine].sum()))
                if share < best_share:
                    split, best_share = (int(j), -1, -1), share
        if split is None:  # an integral LP optimum below the target: the incumbent is not optimal
            return stop("an integral LP optimum below the target")
        j, a, b = split
        job = instance.jobs[j]
        if a < 0:  # the job runs in part: admitted, or paused
            admitted = dom.admitted.copy()
            admitted[j] = True
            none = dom.types.copy()
            none[j] = False
            node.update(job=job.id, admitted={}, paused={})
            stack += [(node["admitted"], dom.but(admitted=admitted), depth + 1), (node["paused"], dom.but(types=none), depth + 1)]
            continue
        if conf.t[a] != conf.t[b]:
            kind = kinds[int(conf.t[a])]
            on = dom.but(types=dom.types.copy())
            on.types[j] &= np.arange(len(kinds)) == int(conf.t[a])
            off = dom.but(types=dom.types.copy())
            off.types[j, int(conf.t[a])] = False
            node.update(job=job.id, accelerator=kind, on={}, off={})
            stack += [(node["on"], on, depth + 1), (node["off"], off, depth + 1)]
            continue
        k = 0 if conf.c0[a] != conf.c0[b] else 1
        counts = conf.c0 if k == 0 else conf.c1
        at = int(min(counts[a], counts[b]))
        low = dom.but(hi=dom.hi.copy())
        low.hi[j, k] = min(low.hi[j, k], at)
        high = dom.but(lo=dom.lo.copy())
        high.lo[j, k] = max(high.lo[j, k], at + 1)
        node.update(job=job.id, role=job.role_names[k], at=at, low={}, high={})
        stack += [(node["low"], low, depth + 1), (node["high"], high, depth + 1)]
    seconds = time.perf_counter() - started
    proof = Proof(kind="branch-lagrangian", value=least, tree=root, admit=k_admit)
    return least, proof, {"branch_leaves": leaves, "branch_seconds": seconds}


def certify_optimum(instance: Instance, value: float, admitted: int, bound: float, proof: Proof, *,
                    spent_s: float, left_s: float, metrics: dict[str, Any]) -> tuple[float, Proof]:
    """What an exact driver states for an optimum only its backend proved: a branch
    certificate anyone can replay, when :func:`branch_proof` finds one within
    :func:`~schedopt.deadline.proof_budget_s` of a solve that took ``spent_s`` (``left_s``: what its time limit
    leaves); else the backend's ``bound`` and ``proof`` unchanged. ``metrics`` says which."""
    J = len(instance.jobs)
    why: dict[str, Any] = {}
    got = branch_proof(instance, value, admit=admitted if admitted < J else None,
                       time_limit_s=proof_budget_s(spent_s, left_s), why=why)
    if got is None:
        metrics["branch_certificate"] = (f"none found ({why.get('stopped', 'stopped')} after "
                                         f"{why.get('seconds', 0.0):.2f} s): the backend's bound stands")
        return bound, proof
    tree_bound, tree_proof, info = got
    metrics.update(info)
    return min(bound, tree_bound), tree_proof

