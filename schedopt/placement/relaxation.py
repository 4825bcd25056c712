"""The class model's relaxation (:mod:`schedopt.placement.classes`), solver side: its LP
(HiGHS through SciPy's ``linprog``), its MILP for small neighbourhoods (``milp``), and the
certificates its duals give (replayed by :mod:`schedopt.placement.certificates`).

Rows over v = (x_js for every job's shapes, z_cq for every class's patterns):

    Σ_s x_js <= 1                                  one shape per job (or paused)
    Σ_q z_cq <= |c|                                a class fills at most its servers
    Σ_js n_si·x_js - Σ_cq n_cqi·z_cq <= 0           every part has a slot (one row per item i)

The LP's duals on the cover rows are the item prices π >= 0 of the ``pattern-lp-dual``
and ``pattern-lagrangian`` certificates; the placed-count row's dual is μ. Items that
only dominated shapes use get no LP row: they are priced by the cheapest way to cut them
into priced items (:func:`certificate_prices`), which keeps every packing's value within
the LP's (a packing holding an item holds its pieces too).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from schedopt.deadline import Deadline
from schedopt.placement.certificates import (admission_bound, components, fits_some_server, item_key, lagrangian_bound,
                                             split_floor_bound)
from schedopt.placement.classes import ClassModel, restrict
from schedopt.placement.problem import PlacementData, objective_value
from schedopt.plan import Certificate, Proof
from schedopt.tolerances import LP_ZERO, THRESHOLD_TOL, floor_count


@dataclass
class ClassLp:
    """One LP solve of the class model: ``value``; ``x[j]`` (n_j,) shape weights;
    ``z[c]`` (P_c,) servers per pattern; ``pi`` (I,) item prices >= 0; ``mu`` the
    placed-count row's price >= 0 (0 in the placing stage)."""

    value: float
    x: list[np.ndarray]
    z: list[np.ndarray]
    pi: np.ndarray
    mu: float
    min_placed: int = 0
    part_mu: np.ndarray | None = None  # each part's count row price (solved by parts)
    part_min: list[int] | None = None


def class_rows(cm: ClassModel) -> tuple[sp.csr_matrix, np.ndarray]:
    """The class model's rows A·v <= b over v = (x_js for every job's shapes, z_cq for every
    class's patterns): J one-shape rows, C class-size rows, I cover rows."""
    J, C, I = len(cm.shapes), len(cm.classes), len(cm.items)
    nx = np.array([len(s) for s in cm.shapes], dtype=np.int64)
    npat = np.array([len(q) for q in cm.patterns], dtype=np.int64)
    n_x = int(nx.sum())
    n = n_x + int(npat.sum())
    rows, cols, vals = [], [], []
    # one shape per job: Σ_s x_js <= 1
    rows.append(np.repeat(np.arange(J), nx)), cols.append(np.arange(n_x)), vals.append(np.ones(n_x))
    # class size: Σ_q z_cq <= |c|
    rows.append(J + np.repeat(np.arange(C), npat)), cols.append(np.arange(n_x, n)), vals.append(np.ones(n - n_x))
    # cover: Σ_js n_si·x_js - Σ_cq n_cqi·z_cq <= 0, one row per item
    if J and I:
        uses = sp.coo_matrix(np.vstack(cm.uses))
        rows.append(J + C + uses.col), cols.append(uses.row), vals.append(uses.data.astype(float))
    if C and I:
        pats = sp.coo_matrix(np.vstack(cm.patterns))
        rows.append(J + C + pats.col), cols.append(n_x + pats.row), vals.append(-pats.data.astype(float))
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(J + C + I, n))
    b = np.concatenate([np.ones(J), np.array([len(c) for c in cm.classes], dtype=float), np.zeros(I)])
    return A, b


def split_solution(cm: ClassModel, v: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A solution vector cut into per-job shape weights and per-class pattern counts."""
    x_off = np.concatenate([[0], np.cumsum([len(s) for s in cm.shapes])]).astype(np.int64)
    z_off = x_off[-1] + np.concatenate([[0], np.cumsum([len(q) for q in cm.patterns])]).astype(np.int64)
    return ([v[x_off[j]:x_off[j + 1]] for j in range(len(cm.shapes))],
            [v[z_off[c]:z_off[c + 1]] for c in range(len(cm.patterns))])


def solve_class_lp(cm: ClassModel, *, stage: str, min_placed: int = 0, part_of: np.ndarray | None = None,
                   part_min: list[int] | None = None, x_lower: np.ndarray | None = None) -> ClassLp | None:
    """The class model's LP: ``stage`` "place" maximises Σ x; "cost" minimises the shapes'
    cost with Σ x >= ``min_placed``, or, given each job's part (``part_of`` (J,)), with
    Σ_{j in part c} x_j >= ``part_min[c]`` for every part. ``x_lower`` (shape columns,): lower
    bounds on the shapes' x (a branch placing a job in one shape). None when HiGHS finds no optimum."""
    from scipy.optimize import linprog  # loaded when a placement LP is solved: `import schedopt` stays light

    J, C = len(cm.shapes), len(cm.classes)
    A, b = class_rows(cm)
    nx = np.array([len(s) for s in cm.shapes], dtype=np.int64)
    n_x = int(nx.sum())
    c = np.zeros(A.shape[1])
    n_rows = 0
    if stage == "place":
        c[:n_x] = -1.0
    else:
        c[:n_x] = np.concatenate(cm.cost) if J else 0.0
        # the placed-count rows: -Σ_{j in part} x <= -min (one part: every job)
        label = np.zeros(J, dtype=np.int64) if part_of is None else np.asarray(part_of, dtype=np.int64)
        mins = [min_placed] if part_of is None else list(part_min or [])
        n_rows = len(mins)
        count = sp.csr_matrix((-np.ones(n_x), (np.repeat(label, nx), np.arange(n_x))), shape=(n_rows, A.shape[1]))
        A, b = sp.vstack([A, count], format="csr"), np.concatenate([b, -np.asarray(mins, dtype=float)])
    bounds: Any = (0, None)
    if x_lower is not None:
        bounds = np.zeros((A.shape[1], 2))
        bounds[:, 1] = np.inf
        bounds[:n_x, 0] = x_lower
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    if res.status != 0:
        return None
    duals = -np.asarray(res.ineqlin.marginals)  # >= 0 for <= rows of a minimisation
    x, z = split_solution(cm, np.asarray(res.x))
    mus = np.maximum(duals[len(duals) - n_rows:], 0.0) if n_rows else np.zeros(0)
    return ClassLp(value=float(-res.fun if stage == "place" else res.fun), x=x, z=z,
                   pi=np.maximum(duals[J + C: J + C + len(cm.items)], 0.0),
                   mu=float(mus[0]) if part_of is None and n_rows else 0.0, min_placed=min_placed,
                   part_mu=mus if part_of is not None else None, part_min=part_min)


#: branch-and-bound nodes a neighbourhood's MILP may take
MILP_NODES = 2_000


def class_milp(cm: ClassModel, clock: Deadline, nodes: int = 0) -> tuple[list[int | None] | None, list[np.ndarray]]:
    """The class model as one MILP: the most jobs placed, then the least cost (a placed job is worth
    more than every cost together). (chosen shape per job, servers per pattern), or (None, [])."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    n_x = int(sum(len(s) for s in cm.shapes))
    npat = np.array([len(q) for q in cm.patterns], dtype=np.int64)
    n = n_x + int(npat.sum())
    worth = 1.0 + float(sum(c.max() for c in cm.cost if len(c)))
    c = np.concatenate([np.concatenate(cm.cost) - worth, np.zeros(n - n_x)])
    A, b = class_rows(cm)
    # the node limit bounds the work and keeps the result deterministic (a time limit would make it
    # depend on the machine's load); only the caller's own time limit, when it gave one, also applies
    options: dict[str, Any] = {"node_limit": nodes or MILP_NODES}
    time_left = clock.left()
    if time_left is not None:
        options["time_limit"] = time_left
    ub = np.concatenate([np.ones(n_x), np.repeat([float(len(m)) for m in cm.classes], npat)])
    res = milp(c, constraints=LinearConstraint(A, -np.inf, b), integrality=np.ones(n), bounds=Bounds(0, ub), options=options)
    if res.x is None:
        return None, []
    xs, zs = split_solution(cm, np.round(res.x).astype(np.int64))
    return [int(np.argmax(v)) if v.max(initial=0) > 0 else None for v in xs], zs


def certificate_prices(data: PlacementData, cm: ClassModel, pi: np.ndarray) -> dict[str, float]:
    """Item prices for a certificate: the LP's π on its items; every other part a job has that
    fits some server priced at the cheapest cut of it into two priced parts of the same job."""
    names = data.resources or data.instance.resources
    price = {item_key(names, cm.items[i]): float(v) for i, v in enumerate(pi.tolist()) if v > 0}
    lp_items = {item_key(names, v) for v in cm.items}
    done: set[tuple] = set()
    for j in range(data.J):
        p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
        sig = (p, w, data.demand[j].tobytes())
        if sig in done:
            continue
        done.add(sig)
        value: dict[tuple[int, int], float] = {}
        for size in range(1, p + w + 1):
            for a in range(max(0, size - w), min(p, size) + 1):
                b = size - a
                vec = a * data.demand[j, 0] + b * data.demand[j, 1]
                key = item_key(names, vec)
                if key in lp_items:
                    value[a, b] = price.get(key, 0.0)
                    continue
                cuts = [value[a1, b1] + value[a - a1, b - b1] for a1 in range(a + 1) for b1 in range(b + 1)
                        if 0 < a1 + b1 < size]
                value[a, b] = min(cuts, default=0.0)
                if value[a, b] > 0 and fits_some_server(data, vec):
                    price[key] = min(price.get(key, np.inf), value[a, b])
    return price


def pattern_certificates(data: PlacementData, cm: ClassModel, objective: str, placed_jobs: np.ndarray, first: ClassLp,
                         second: ClassLp | None = None) -> tuple[int | None, float | None, Certificate | None, dict[str, Any]]:
    """(admitted bound, objective bound, their certificate, timings) for a placement placing the
    jobs ``placed_jobs`` (J,) bool: the count's bound from ``first`` (the placing LP) always, the
    objective's when that count is the placement's. The objective's LP is solved with the
    placement's count in each independent part (``second`` is reused when it was solved so). Each
    value is what the replay proves, not the LP's word. TooLargeToReplay when the replay cannot
    enumerate what the prices need."""
    import time
    kind = objective
    if kind not in ("sum", "cross_pairs"):
        return None, None, None, {}
    t0 = time.perf_counter()
    placed = int(np.count_nonzero(placed_jobs))
    every = placed >= data.J
    count_prices = certificate_prices(data, cm, first.pi)
    most = data.J if every else admission_bound(data, count_prices, kind)
    admitted_proof = None if every else Proof(kind="pattern-lp-dual", value=float(most), prices=count_prices)
    bound = proof = None
    if most == placed:
        job_part, server_part, n = components(data)
        per_part = np.bincount(job_part[placed_jobs], minlength=n).astype(int).tolist()
        by_parts = not every and len(set(server_part.tolist())) > 1
        if by_parts:
            if second is None or second.part_min != per_part:
                second = solve_class_lp(cm, stage="cost", part_of=job_part, part_min=per_part)
        elif second is None or second.part_min is not None or second.min_placed != placed:
            second = solve_class_lp(cm, stage="cost", min_placed=placed)
        if second is not None:
            prices = certificate_prices(data, cm, second.pi)
            if every:
                bound = lagrangian_bound(data, prices, kind, admit=None, admit_price=0.0)
                proof = Proof(kind="pattern-lagrangian", value=bound, prices=prices)
            elif by_parts:
                mus = [float(m) for m in second.part_mu]  # type: ignore[union-attr]
                bound = lagrangian_bound(data, prices, kind, admit=None, admit_price=0.0, part_admit=per_part,
                                         part_admit_price=mus)
                proof = Proof(kind="pattern-lagrangian", value=bound, prices=prices, part_admit=per_part,
                              part_admit_price=mus)
            else:
                bound = lagrangian_bound(data, prices, kind, admit=placed, admit_price=second.mu)
                proof = Proof(kind="pattern-lagrangian", value=bound, prices=prices, admit=placed, admit_price=second.mu)
    cert = Certificate(bound=proof, admitted_bound=admitted_proof) if (proof or admitted_proof) else None
    return (None if every else most), bound, cert, {"certificate_seconds": time.perf_counter() - t0}


#: a pattern-branch search solves at most this many node LPs (counted, not timed: deterministic),
#: fewer on larger instances (BRANCH_NODE_WORK / jobs, at least BRANCH_MIN_NODES): a node's LP and
#: replay take about 0.1 s at 400 typed jobs (a 28-leaf tree in 5.7 s), more as jobs grow
BRANCH_NODES = 200
BRANCH_NODE_WORK, BRANCH_MIN_NODES = 80_000, 20


def branch_nodes(jobs: int) -> int:
    """Node LPs a pattern-branch search may solve on an instance of ``jobs`` jobs."""
    return int(min(BRANCH_NODES, max(BRANCH_MIN_NODES, BRANCH_NODE_WORK // max(1, jobs))))


def branch_certificate(data: PlacementData, cm: ClassModel, kind: str, placed_jobs: np.ndarray, target: float,
                       clock: Deadline, nodes: int | None = None) -> tuple[float, Proof] | None:
    """A ``pattern-branch`` proof that every placement placing as many jobs as ``placed_jobs`` (J,)
    bool (per independent part on a split cluster) costs at least ``target``: depth first, each node
    the class LP over the shapes its path allows (a job placed in one shape: that column at 1; a
    shape ruled out: its column dropped), closed when the checker's own bound of its prices reaches
    ``target``, else split on its most fractional job's heaviest shape. None when a node's LP is
    integral in the shapes and still short (the gap is the patterns'), or past ``nodes`` LPs (None:
    :func:`branch_nodes`) or the clock (a caller's time limit). Returns (the tree's replayed bound, proof)."""
    from schedopt.placement.certificates import MAX_BRANCH_DEPTH, ShapeDomain

    job_part, server_part, n = components(data)
    placed = int(np.count_nonzero(placed_jobs))
    every = placed >= data.J
    by_parts = not every and len(set(server_part.tolist())) > 1
    per_part = np.bincount(job_part[placed_jobs], minlength=n).astype(int).tolist()
    spent = [0]
    nodes = branch_nodes(data.J) if nodes is None else nodes

    def restricted(dom: ShapeDomain) -> tuple[ClassModel, np.ndarray]:
        keep = [np.array([dom.allows(j, sh) for sh in cm.shapes[j]], dtype=bool) for j in range(len(cm.shapes))]
        sub = replace(cm, shapes=[tuple(sh for sh, k in zip(cm.shapes[j], keep[j]) if k) for j in range(len(keep))],
                      cost=[cm.cost[j][keep[j]] for j in range(len(keep))],
                      uses=[cm.uses[j][keep[j]] for j in range(len(keep))])
        lower = np.zeros(sum(len(sh) for sh in sub.shapes))
        start = np.concatenate([[0], np.cumsum([len(sh) for sh in sub.shapes])]).astype(np.int64)
        for j in dom.only:
            lower[start[j]:start[j + 1]] = 1.0  # its one shape left
        return sub, lower

    def leaf(dom: ShapeDomain) -> tuple[float, dict, ClassLp | None, ClassModel]:
        sub, lower = restricted(dom)
        if by_parts:
            lp = solve_class_lp(sub, stage="cost", part_of=job_part, part_min=per_part, x_lower=lower)
        else:
            lp = solve_class_lp(sub, stage="cost", min_placed=placed, x_lower=lower)
        spent[0] += 1
        # no LP optimum: no placement here when a job the path places has no shape that fits, which
        # zero prices prove (a leaf whose bound is +inf); anything else stays open
        prices = {} if lp is None else certificate_prices(data, sub, lp.pi)
        if by_parts:
            mus = [0.0] * n if lp is None else [float(m) for m in lp.part_mu]  # type: ignore[union-attr]
            node = {"prices": prices, "part_admit_price": mus}
            bound = lagrangian_bound(data, prices, kind, admit=None, admit_price=0.0, part_admit=per_part,
                                     part_admit_price=mus, domain=dom)
        else:
            mu = 0.0 if lp is None or every else float(lp.mu)
            node = {"prices": prices} if every else {"prices": prices, "admit_price": mu}
            bound = lagrangian_bound(data, prices, kind, admit=None if every else placed, admit_price=mu, domain=dom)
        return bound, node, lp, sub

    def grow(dom: ShapeDomain, depth: int) -> tuple[float, dict] | None:
        bound, node, lp, sub = leaf(dom)
        if bound >= target:
            return bound, node
        if lp is None or depth >= MAX_BRANCH_DEPTH or spent[0] >= nodes or clock.expired():
            return None
        # the most fractional job's heaviest shape (jobs the path places are integral already)
        best_j, best_f = -1, LP_ZERO
        for j, x in enumerate(lp.x):
            if not len(x):
                continue
            f = float(np.minimum(x, 1 - x).max())
            if f > best_f:
                best_j, best_f = j, f
        if best_j < 0:
            return None  # the shapes are integral: the gap is the patterns', which no shape split closes
        shape = sub.shapes[best_j][int(np.argmax(lp.x[best_j]))]
        on, off = dom.split(best_j, shape)
        left = grow(on, depth + 1)
        if left is None:
            return None
        right = grow(off, depth + 1)
        if right is None:
            return None
        return min(left[0], right[0]), {"job": data.jobs[best_j], "shape": [list(p) for p in shape],
                                        "on": left[1], "off": right[1]}

    got = grow(ShapeDomain(), 0)
    if got is None:
        return None
    bound, tree = got
    proof = Proof(kind="pattern-branch", value=bound, tree=tree,
                  admit=None if (every or by_parts) else placed, part_admit=per_part if by_parts else None)
    return bound, proof


#: above this many server classes (distinct capacities, e.g. what incremental placement leaves
#: free) the class model is not built
MAX_CLASSES = 64


def certified_bounds(data: PlacementData, where: list, objective: str = "sum"
                     ) -> tuple[int | None, float | None, Certificate | None, dict[str, Any]]:
    """Any placement's (admitted bound, objective bound, certificate, info) from the class model's
    LPs over the whole instance (running tasks free to move): what a heuristic's plan states with
    its option ``bound``. Nothing when the objective has no certificate, the class model does not
    apply, or the replay could not enumerate what the prices need."""
    import time

    from schedopt.claims import TooLargeToReplay
    from schedopt.placement.classes import build_class_model
    from schedopt.placement.problem import coefficients

    if objective == "max" and data.J and data.S:
        try:
            return minmax_bounds(data, np.array([pl is not None for pl in where], dtype=bool),
                                 objective_value(data, where, "max"))
        except TooLargeToReplay as exc:
            return None, None, None, {"certificate": f"none: too large to replay ({exc})"}
    if objective not in ("sum", "cross_pairs") or not data.J or not data.S:
        return None, None, None, {}
    t0 = time.perf_counter()
    cm = build_class_model(data, objective, *coefficients(data))
    first = solve_class_lp(cm, stage="place") if cm is not None and len(cm.classes) <= MAX_CLASSES else None
    if first is None:
        return None, None, None, {"certificate": "none: the class model does not apply"}
    placed = np.array([pl is not None for pl in where], dtype=bool)
    try:
        out = pattern_certificates(data, cm, objective, placed, first)  # type: ignore[arg-type]
    except TooLargeToReplay as exc:
        return None, None, None, {"certificate": f"none: too large to replay ({exc})"}
    return out[0], out[1], out[2], {**out[3], "certificate_seconds": time.perf_counter() - t0}


@dataclass
class Threshold:
    """What :func:`threshold_search` found for placements of at least ``k`` jobs: ``costs`` (n,) the distinct
    shape costs up to the plan's max T_j, ascending; ``first`` the least index whose restricted LP
    (shapes costing at most ``costs[first]``) places k jobs (n: none does); ``bound`` the max T_j
    its ``proof`` (``pattern-threshold``, replayed) proves, 0 and None when none is proven."""

    k: int
    costs: np.ndarray
    first: int
    bound: float = 0.0
    proof: Proof | None = None
    lps: int = 0


def _lp_places(data: PlacementData, cm: ClassModel, k: int) -> bool:
    """Whether the placing LP of ``cm`` places ``k`` jobs, its count floored in each independent part."""
    lp = solve_class_lp(cm, stage="place")
    if lp is None:
        return False
    job_part, _, n = components(data)
    share = np.bincount(job_part, weights=np.array([float(x.sum()) for x in lp.x]), minlength=n)
    return sum(floor_count(float(v)) for v in share) >= k


def threshold_search(data: PlacementData, cm: ClassModel, k: int, upper: float) -> Threshold:
    """The largest τ that a ``pattern-threshold`` certificate proves for max T_j over placements of
    at least ``k`` jobs, searched among the shape costs up to ``upper`` (the plan's max T_j): the
    class model's placing LP restricted to the shapes costing at most c is monotone in c, so a
    bisection finds the least cost c_i whose LP still places k jobs; the LP at c_{i-1} gives the
    prices proving max T_j >= c_i (as τ = c_i·(1 − 2·THRESHOLD_TOL); the replay decides)."""
    raw = np.unique(np.concatenate([c for c in cm.cost if len(c)] or [np.zeros(0)]))
    raw = raw[(raw > 0) & (raw <= upper * (1 + THRESHOLD_TOL))]
    keep = np.ones(len(raw), dtype=bool)  # costs within 4·THRESHOLD_TOL of the one below are one
    if len(raw) > 1:
        keep[1:] = raw[1:] > raw[:-1] * (1 + 4 * THRESHOLD_TOL)
    costs = raw[keep]
    out = Threshold(k=k, costs=costs, first=len(costs))
    if k <= 0 or not len(costs):
        return out

    def level(i: int) -> float:
        return float(costs[i]) if i >= 0 else 0.0  # -1: only the shapes costing nothing

    out.lps += 1
    if _lp_places(data, restrict(cm, 0.0), k):
        out.first = -1
        return out
    lo, hi = -1, len(costs)  # the LP at level(lo) places fewer than k; at level(hi) (the plan's) k
    while hi - lo > 1:
        mid = (lo + hi) // 2
        out.lps += 1
        if _lp_places(data, restrict(cm, level(mid)), k):
            hi = mid
        else:
            lo = mid
    out.first = hi
    if hi == len(costs):  # not even the plan's own costs place k in the LP: nothing to prove from here
        return out
    below = solve_class_lp(restrict(cm, level(hi - 1)), stage="place")
    out.lps += 1
    if below is None:
        return out
    tau = float(costs[hi]) * (1 - 2 * THRESHOLD_TOL)
    prices = certificate_prices(data, cm, below.pi)
    if admission_bound(data, prices, "sum", below=tau) < k:
        out.bound = tau
        out.proof = Proof(kind="pattern-threshold", value=tau, prices=prices, admit=None if k >= data.J else k)
    return out


def minmax_bounds(data: PlacementData, placed_jobs: np.ndarray, value: float | None = None,
                  threshold: Threshold | None = None, cm: ClassModel | None = None
                  ) -> tuple[int | None, float | None, Certificate | None, dict[str, Any]]:
    """(admitted bound, bound, certificate, info) of a ``max`` T_j placement placing ``placed_jobs``
    (J,) bool with max T_j ``value``: the placed count's ``pattern-lp-dual`` from the placing LP
    (Σ T_j's class model: a count bound does not depend on the objective) when some job is paused,
    and, when that count is proven the most, the larger of the ``split-floor`` bound and the
    ``pattern-threshold`` bound (searched up to ``value``, or ``threshold`` when the caller
    searched; docs/certificates.md). TooLargeToReplay when a replay cannot enumerate what its
    prices need."""
    import time

    from schedopt.placement.classes import build_class_model
    from schedopt.placement.problem import coefficients

    t0 = time.perf_counter()
    placed = int(np.count_nonzero(placed_jobs))
    count_proof = None
    most = data.J
    if cm is None:
        cm = build_class_model(data, "sum", *coefficients(data))
        if cm is not None and len(cm.classes) > MAX_CLASSES:
            cm = None
    if placed < data.J:
        first = solve_class_lp(cm, stage="place") if cm is not None else None
        if first is None:
            return None, None, None, {"certificate": "none: the class model does not apply"}
        prices = certificate_prices(data, cm, first.pi)  # type: ignore[arg-type]
        most = admission_bound(data, prices, "sum")
        count_proof = Proof(kind="pattern-lp-dual", value=float(most), prices=prices)
    info: dict[str, Any] = {"certificate_seconds": time.perf_counter() - t0}
    if most != placed:  # the count is not proven the most: no bound on max T_j is claimed
        return most, None, Certificate(admitted_bound=count_proof), info
    every = placed >= data.J
    bound = split_floor_bound(data, None if every else placed)
    proof = Proof(kind="split-floor", value=bound, admit=None if every else placed)
    if threshold is None and cm is not None and value is not None and value > bound:
        threshold = threshold_search(data, cm, placed, value)
    if threshold is not None:
        info["threshold_lps"] = threshold.lps
        if threshold.proof is not None and threshold.bound > bound:
            bound, proof = threshold.bound, threshold.proof
    info["certificate_seconds"] = time.perf_counter() - t0
    return (None if every else most), bound, Certificate(bound=proof, admitted_bound=count_proof), info
