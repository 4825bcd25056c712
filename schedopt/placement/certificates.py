"""Replaying placement certificates from the instance alone (checker side; docs/certificates.md).

Both kinds price *items*: a part (a, b) of a job is a PS and b workers of it on one
server, its item the resource vector a·d_ps + b·d_w (keyed by :func:`item_key`).
Prices π >= 0 are given per item; an item not named costs 0. For each server k,
V_k(π) is the most a server of its capacity can hold in priced items (the best
packing; the replay enumerates the maximal packings of the priced items).

Every placement assigns each placed job a *shape*: its parts, one per server it
uses. Splitting a part into two on the same server keeps every server's load and
never lowers the job's cost, so each plan can be rewritten, at no higher cost,
into one where every job's shape is *undominated* (no one-part split costs at
most as much; decided exactly, :func:`~schedopt.placement.classes.undominated`
with no tolerance), its parts still packed per server. Summing over servers,
Σ_j π·parts_j <= Σ_k V_k(π). Hence, with g_j = min over job j's undominated shapes
whose parts each fit some server:

``pattern-lp-dual`` (proves ``objective.admitted_bound``, the most jobs placed):

    placed <= Σ_parts ⌊ Σ_{j in part} max(0, 1 - min_s π·n_s) + Σ_{k in part} V_k(π) ⌋,

floored in each independent part (jobs and servers linked when a task of the job fits
the server: on a typed cluster, each type's jobs and servers);

``pattern-lagrangian`` (proves ``objective.bound`` of Σ T_j or of the cross-node
pairs, over every placement placing at least ``admit`` = k jobs; μ = ``admit_price``):

    Σ_j cost_j >= Σ_j min(0, min_s [cost(s) + π·n_s] - μ) + μ·k - Σ_k V_k(π).

(For a placed set A with |A| >= k: Σ_A cost = Σ_A (cost + π·n - μ) - Σ_A π·n + μ|A|.)
The Optimus Appendix's T(s) and DLTAP's pairs are as in :mod:`schedopt.placement.classes`.

``split-floor`` (proves ``objective.bound`` of ``max`` T_j over every placement placing at
least ``admit`` = k jobs; no numbers): a job of p >= 1 PS and w >= 1 workers that no server
holds whole is split, and then some server holds a PS and fewer than w workers and some
server a worker and fewer than p PS, so (``split_floor``)

    T_j >= m_j = max( (S/p)·max(1, w - W)/B_ps, (S/p)·max(1, p - P)/B_w ),

W (P) the most workers (PS) any server holds beside one PS (worker); m_j = 0 for a job some
server holds whole. A placement of k or more jobs has max T_j >= the k-th smallest m_j.
Its placed count is proven by ``pattern-lp-dual`` as for Σ T_j (a count bound holds for
every placement, whatever its objective: the rewriting into undominated shapes keeps it).

``pattern-branch`` (proves ``objective.bound`` of Σ T_j or the pairs, as ``pattern-lagrangian``,
where the class LP leaves a gap): a ``tree`` whose inner nodes split one job's shapes,
``{job, shape, on, off}`` (the job placed in exactly that undominated shape; and in any other, or
paused), and whose leaves carry ``prices`` and ``admit_price`` (or ``part_admit_price``). Each
placement, rewritten into undominated shapes, lies in one leaf; there the pattern-lagrangian
argument holds over the shapes the path allows, with a job the path places ("on") adding
min_s [cost(s) + π·n_s] − μ rather than its min with 0. The bound is the least leaf's.

``pattern-threshold`` (proves ``objective.bound`` = τ of ``max`` T_j over every placement placing
at least ``admit`` = k jobs; prices π): the rewriting into undominated shapes never raises a
job's T_j, so a placement with every T_j < τ is one whose jobs all take undominated shapes
costing less than τ. The ``pattern-lp-dual`` count over those shapes alone (a job with none
counts 0) bounds how many jobs such a placement places; when it is below k, every placement of
k or more jobs has max T_j >= τ. (A shape counts as below τ when its computed T is below
τ·(1 + THRESHOLD_TOL): a superset of the shapes truly below, so rounding cannot hide one.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from schedopt.claims import Replay, TooLargeToReplay, branch_tree_leaves
from schedopt.instance import Instance
from schedopt.packing import item_key, maximal_patterns
from schedopt.placement.classes import Shape, server_classes, shape_pairs, shape_time, undominated
from schedopt.placement.problem import OBJECTIVE_NAMES, PlacementData, coefficients, compile_placement
from schedopt.tolerances import THRESHOLD_TOL, capacity_limit, floor_count

#: the most maximal packings of priced items enumerated per server capacity
MAX_REPLAY_PATTERNS = 200_000

KIND_OF = {name: kind for kind, (name, _) in OBJECTIVE_NAMES.items()}


def fits_some_server(data: PlacementData, vec: np.ndarray) -> bool:
    return bool(np.any(np.all(vec <= capacity_limit(data.cap), axis=1)))


def job_options(data: PlacementData, j: int, kind: str,
                coefficients_: tuple[np.ndarray, np.ndarray] | None = None) -> list[tuple[Shape, float, list[str]]]:
    """Job j's undominated shapes whose parts each fit some server: (shape, cost, item keys)."""
    p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
    c_ps, c_w = (float(c[j]) for c in (coefficients_ or coefficients(data)))  # (c_ps, c_w), each (J,)
    ratio = c_ps / c_w if c_w > 0 else 1.0
    shapes = undominated(p, w, "cross_pairs" if kind == "cross_pairs" else "time", ratio, 0.0)
    if shapes is None:
        raise TooLargeToReplay(f"job {data.jobs[j]}: more than the enumerated vector partitions of ({p}, {w}) tasks")
    names = data.resources or data.instance.resources
    keys: dict[tuple[int, int], str | None] = {}
    for shape in shapes:
        for part in shape:
            if part not in keys:
                vec = part[0] * data.demand[j, 0] + part[1] * data.demand[j, 1]
                keys[part] = item_key(names, vec) if fits_some_server(data, vec) else None
    out = []
    for shape in shapes:
        parts = [keys[part] for part in shape]
        if any(k is None for k in parts):
            continue  # a part no server holds: no placement has this shape
        cost = float(shape_pairs(shape, p, w)) if kind == "cross_pairs" else shape_time(shape, p, w, c_ps, c_w)
        out.append((shape, cost, parts))  # type: ignore[arg-type]
    return out


def _items(data: PlacementData, prices: dict[str, float] | None) -> dict[str, tuple[np.ndarray, float]]:
    """The priced items: key -> (vector, price); ValueError for a bad price or an item no job has."""
    prices = prices or {}
    for key, value in prices.items():
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError(f"price of item {key!r} must be finite and >= 0, got {value!r}")
    known: dict[str, np.ndarray] = {}
    names = data.resources or data.instance.resources
    for p, w, d in {(int(data.counts[j, 0]), int(data.counts[j, 1]), data.demand[j].tobytes()): j
                    for j in range(data.J)}:
        d_ps, d_w = np.frombuffer(d).reshape(2, -1)
        for a in range(p + 1):
            for b in range(w + 1):
                if a + b:
                    vec = a * d_ps + b * d_w
                    known.setdefault(item_key(names, vec), vec)
    unknown = sorted(set(prices) - set(known))
    if unknown:
        raise ValueError(f"prices name items that are no part of any job: {unknown[:3]}")
    return {k: (known[k], float(v)) for k, v in prices.items() if v > 0}


@lru_cache(maxsize=16)
def _patterns(items: bytes, n: int, capacity: bytes) -> np.ndarray | None:
    """The maximal packings of ``n`` item vectors into one server (cached: a check replays two
    certificates, and a solver states both, over the same items)."""
    cap = np.frombuffer(capacity)
    return maximal_patterns(np.frombuffer(items).reshape(n, len(cap)), cap, limit=MAX_REPLAY_PATTERNS)


def server_values(data: PlacementData, items: dict[str, tuple[np.ndarray, float]]) -> np.ndarray:
    """(S,) V_k(π): the most priced items one server holds, by value (maximal packings enumerated)."""
    out = np.zeros(data.S)
    if not items:
        return out
    vecs = np.array([v for v, _ in items.values()], dtype=float)
    price = np.array([p for _, p in items.values()], dtype=float)
    for members in server_classes(data.cap):
        patterns = _patterns(vecs.tobytes(), len(vecs), data.cap[members[0]].tobytes())
        if patterns is None:
            raise TooLargeToReplay(f"more than {MAX_REPLAY_PATTERNS:,} packings of the priced items on one server")
        out[members] = float((patterns @ price).max(initial=0.0))
    return out


def _signature(data: PlacementData, j: int, c_ps: np.ndarray, c_w: np.ndarray) -> tuple:
    return (int(data.counts[j, 0]), int(data.counts[j, 1]), data.demand[j].tobytes(), float(c_ps[j]), float(c_w[j]))


def job_bests(data: PlacementData, price: dict[str, float], kind: str,
              below: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(J,) min_s π·n_s and (J,) min_s [cost(s) + π·n_s] over each job's undominated shapes
    whose parts fit some server (+inf for a job no placement holds); with ``below`` = τ, only the
    shapes costing less than τ (as the ``pattern-threshold`` replay counts them). Jobs alike are
    priced once."""
    c_ps, c_w = coefficients(data)
    seen: dict[tuple, tuple[float, float]] = {}
    price_only, with_cost = np.full(data.J, np.inf), np.full(data.J, np.inf)
    limit = None if below is None else below * (1 + THRESHOLD_TOL)
    for j in range(data.J):
        sig = _signature(data, j, c_ps, c_w)
        if sig not in seen:
            options = job_options(data, j, kind, (c_ps, c_w))
            if limit is not None:
                options = [o for o in options if o[1] < limit]
            sums = [sum(price.get(k, 0.0) for k in keys) for _, _, keys in options]
            seen[sig] = (min(sums, default=np.inf), min((c + v for (_, c, _), v in zip(options, sums)), default=np.inf))
        price_only[j], with_cost[j] = seen[sig]
    return price_only, with_cost


def components(data: PlacementData) -> tuple[np.ndarray, np.ndarray, int]:
    """Independent parts of the placement: jobs and servers linked when one task of the job fits
    the server (on a typed cluster, a type's jobs and servers). (J,) and (S,) part labels, and
    their number; parts are numbered in the order of their first job, then those without jobs in
    the order of their first server. No placement puts a job's task outside its part. Computed
    over distinct server capacities and distinct job demands, once per compiled instance."""
    cached = data.__dict__.get("_components")
    if cached is not None:
        return cached
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    room = capacity_limit(data.cap)
    caps, server_class = np.unique(room, axis=0, return_inverse=True)
    server_class = np.asarray(server_class).reshape(-1)
    has = data.counts > 0  # (J, 2): the roles the job places tasks of
    keys = np.concatenate([np.where(has[:, :, None], data.demand, np.nan).reshape(data.J, -1), has], axis=1)
    groups, job_group = np.unique(np.nan_to_num(keys, nan=-1.0), axis=0, return_inverse=True) if data.J else \
        (np.zeros((0, keys.shape[1])), np.zeros(0, dtype=np.int64))
    job_group = np.asarray(job_group).reshape(-1)
    R = data.cap.shape[1]
    G, C = len(groups), len(caps)
    fits = np.zeros((G, C), dtype=bool)
    for slot in (0, 1):
        on = groups[:, 2 * R + slot] > 0
        d = groups[on][:, slot * R:(slot + 1) * R]
        fits[on] |= np.all(d[:, None, :] <= caps[None, :, :], axis=2)
    gi, ci = np.nonzero(fits)
    graph = coo_matrix((np.ones(len(gi)), (gi, G + ci)), shape=(G + C,) * 2)
    _, labels = connected_components(graph, directed=False)
    job_label, server_label = labels[job_group], labels[G + server_class]
    # number the parts by their first job, then their first server
    first: dict[int, tuple[int, int]] = {}
    for j, lab in enumerate(job_label.tolist()):
        first.setdefault(lab, (0, j))
    for k, lab in enumerate(server_label.tolist()):
        first.setdefault(lab, (1, k))
    order = {lab: n for n, lab in enumerate(sorted(first, key=first.__getitem__))}
    out = (np.array([order[x] for x in job_label.tolist()], dtype=np.int64),
           np.array([order[x] for x in server_label.tolist()], dtype=np.int64), len(order))
    data.__dict__["_components"] = out
    return out


def admission_bound(data: PlacementData, prices: dict[str, float] | None, kind: str,
                    below: float | None = None) -> int:
    """At most this many jobs are placed by any placement (with ``below`` = τ: by any placement
    whose every job's cost is below τ): the prices' LP-dual value, floored in each independent
    part (:func:`components`: no job's task leaves its part, so the count of each part is bounded
    by its own share of the value)."""
    items = _items(data, prices)
    price = {k: p for k, (_, p) in items.items()}
    price_only, _ = job_bests(data, price, kind, below)
    job_part, server_part, n = components(data)
    share = np.bincount(job_part, weights=np.maximum(0.0, 1.0 - price_only), minlength=n) + \
        np.bincount(server_part, weights=server_values(data, items), minlength=n)
    return int(sum(floor_count(float(v)) for v in share))


@dataclass
class ShapeDomain:
    """One branch leaf's restriction of some jobs' shapes: ``only[j]`` the one shape job j takes
    (placed), ``without[j]`` shapes job j may not take (it may still be paused)."""

    only: dict[int, Shape] = field(default_factory=dict)
    without: dict[int, frozenset] = field(default_factory=dict)

    def allows(self, j: int, shape: Shape) -> bool:
        if j in self.only and shape != self.only[j]:
            return False
        return shape not in self.without.get(j, ())

    def split(self, j: int, shape: Shape) -> tuple["ShapeDomain", "ShapeDomain"]:
        """The two children of a split on job j's ``shape``: placed in it ("on"); in any other
        shape, or paused ("off")."""
        return (ShapeDomain(only={**self.only, j: shape}, without=dict(self.without)),
                ShapeDomain(only=dict(self.only), without={**self.without, j: self.without.get(j, frozenset()) | {shape}}))


def _restricted_bests(data: PlacementData, price: dict[str, float], kind: str, domain: ShapeDomain,
                      best: np.ndarray) -> np.ndarray:
    """``best`` (J,) with the jobs ``domain`` restricts priced over the shapes it allows."""
    out = best.copy()
    c_ps, c_w = coefficients(data)
    for j in sorted(set(domain.only) | set(domain.without)):
        options = [o for o in job_options(data, j, kind, (c_ps, c_w)) if domain.allows(j, o[0])]
        out[j] = min((c + sum(price.get(k, 0.0) for k in keys) for _, c, keys in options), default=np.inf)
    return out


def lagrangian_bound(data: PlacementData, prices: dict[str, float] | None, kind: str, *, admit: int | None,
                     admit_price: float, part_admit: list[int] | None = None,
                     part_admit_price: list[float] | None = None, domain: ShapeDomain | None = None) -> float:
    """The least cost of any placement placing at least ``admit`` jobs (None: all of them), or,
    with ``part_admit``, at least ``part_admit[c]`` in each independent part c (:func:`components`,
    parts in their labels' order) with that part's row priced ``part_admit_price[c]``; with
    ``domain``, over the placements whose jobs take the shapes it allows (+inf when a job it
    places has none)."""
    items = _items(data, prices)
    price = {k: p for k, (_, p) in items.items()}
    _, best = job_bests(data, price, kind)
    placed = np.zeros(data.J, dtype=bool)  # jobs the domain places
    if domain is not None:
        best = _restricted_bests(data, price, kind, domain, best)
        placed[list(domain.only)] = True
        if np.isinf(best[placed]).any():
            return math.inf  # a job it places has no shape that fits: no placement lies here
    values = float(server_values(data, items).sum())
    if part_admit is not None:
        job_part, _, n = components(data)
        mus = np.asarray(part_admit_price if part_admit_price is not None else [], dtype=float)
        ks = np.asarray(part_admit, dtype=float)
        if len(ks) != n or len(mus) != n:
            raise ValueError(f"part_admit and part_admit_price name {len(ks)} and {len(mus)} parts; the instance has {n}")
        if not np.all(np.isfinite(mus)) or np.any(mus < 0) or np.any(ks < 0):
            raise ValueError("part_admit must be >= 0 and part_admit_price finite and >= 0")
        mu_j = mus[job_part]
        terms = np.where(placed, best - mu_j, np.minimum(0.0, np.where(np.isinf(best), 0.0, best - mu_j)))
        return max(float(terms.sum()) + float(mus @ ks) - values, 0.0)
    if not math.isfinite(admit_price) or admit_price < 0:
        raise ValueError(f"admit_price must be finite and >= 0, got {admit_price!r}")
    if admit is None or admit >= data.J:
        if np.isinf(best).any():
            if domain is not None:
                return math.inf  # no placement of every job lies in this leaf
            raise ValueError("some job fits no server: no placement places every job")
        return max(float(best.sum()) - values, 0.0)
    if admit < 0:
        raise ValueError(f"admit must be >= 0, got {admit}")
    terms = np.where(placed, best - admit_price, np.minimum(0.0, np.where(np.isinf(best), 0.0, best - admit_price)))
    return max(float(terms.sum()) + admit_price * admit - values, 0.0)


def _kind(plan: Any) -> str:
    kind = KIND_OF.get(plan.objective.name)
    if kind is None or kind == "max":
        raise ValueError(f'objective "{plan.objective.name}" has no pattern certificate (Σ T_j and cross-node pairs have; '
                         f"max T_j has split-floor)")
    return kind


def replay_admission(instance: Instance, plan: Any, proof: Any) -> float:
    """``pattern-lp-dual``: the most jobs any placement places, as the prices prove it (for a
    ``max`` T_j plan, priced on Σ T_j's shapes: the count does not depend on the objective)."""
    kind = "sum" if KIND_OF.get(plan.objective.name) == "max" else _kind(plan)
    return float(admission_bound(compile_placement(instance), proof.prices, kind))


def split_floor(data: PlacementData) -> np.ndarray:
    """(J,) m_j: the least T_j job j can have anywhere (module docstring); 0 for a job some
    server holds whole (or without PS or workers)."""
    cap = capacity_limit(data.cap)  # (S, R)
    out = np.zeros(data.J)
    shapes: dict[tuple, tuple[int, int] | None] = {}  # (p, w, demands) -> (W, P), None when whole fits
    for j in range(data.J):
        p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
        if p == 0 or w == 0:
            continue
        d_ps, d_w = data.demand[j]
        key = (p, w, d_ps.tobytes(), d_w.tobytes())
        if key not in shapes:  # jobs of one shape share it: the servers are scanned once per shape
            whole = bool(np.any(np.all(p * d_ps + w * d_w <= cap, axis=1)))
            shapes[key] = None if whole else (_most_beside(cap, d_ps, d_w), _most_beside(cap, d_w, d_ps))
        if shapes[key] is None:
            continue  # some server holds the whole job
        most_w, most_p = shapes[key]  # workers beside one PS, PS beside one worker
        unit = float(data.size_mb[j]) / p
        b_ps, b_w = (float(b) for b in data.bw[j])
        out[j] = max(unit * max(1, w - most_w) / b_ps, unit * max(1, p - most_p) / b_w)
    return out


def _most_beside(cap: np.ndarray, one: np.ndarray, each: np.ndarray) -> int:
    """The most tasks of demand ``each`` any server (S, R) holds beside one task of ``one``
    (-1 when no server holds ``one``; a large number when ``each`` demands nothing)."""
    room = cap - one  # (S, R)
    ok = np.all(room >= 0, axis=1)
    if not ok.any():
        return -1
    need = each > 0
    if not need.any():
        return 1 << 30
    return int(np.floor((room[ok][:, need] / each[need]).min(axis=1)).max())


def split_floor_bound(data: PlacementData, admit: int | None) -> float:
    """The least max T_j of any placement placing at least ``admit`` jobs (None: every job):
    the ``admit``-th smallest :func:`split_floor` (the largest; 0 for no job)."""
    floor = np.sort(split_floor(data))
    k = data.J if admit is None else admit
    return float(floor[k - 1]) if k > 0 else 0.0


def replay_split_floor(instance: Instance, plan: Any, proof: Any) -> float:
    """``split-floor``: the least max T_j of any placement placing at least ``admit`` jobs
    (None: every job); ``admit`` may not exceed the plan's placed jobs."""
    if KIND_OF.get(plan.objective.name) != "max":
        raise ValueError(f'split-floor bounds max T_j, not objective "{plan.objective.name}"')
    data = compile_placement(instance)
    if proof.admit is None and len(plan.allocation) < data.J:
        raise ValueError("no admit: the bound covers placements placing every job, and the plan pauses some")
    if proof.admit is not None and proof.admit > len(plan.allocation):
        raise ValueError(f"admit {proof.admit} > the {len(plan.allocation)} jobs the plan places (the bound covers "
                         f"placements placing at least {proof.admit}, which need not include the optimum)")
    return split_floor_bound(data, proof.admit)


def replay_threshold(instance: Instance, plan: Any, proof: Any) -> float:
    """``pattern-threshold``: max T_j >= ``value`` = τ over every placement placing at least
    ``admit`` jobs (None: every job), when the prices prove fewer than that many jobs placed with
    every T_j below τ; ``admit`` may not exceed the plan's placed jobs."""
    if KIND_OF.get(plan.objective.name) != "max":
        raise ValueError(f'pattern-threshold bounds max T_j, not objective "{plan.objective.name}"')
    data = compile_placement(instance)
    tau = proof.value
    if tau is None or not isinstance(tau, (int, float)) or not math.isfinite(tau):
        raise ValueError(f"value (the threshold τ) must be a finite number, got {tau!r}")
    if proof.admit is None and len(plan.allocation) < data.J:
        raise ValueError("no admit: the bound covers placements placing every job, and the plan pauses some")
    if proof.admit is not None and not 0 <= proof.admit <= len(plan.allocation):
        raise ValueError(f"admit {proof.admit} is not within 0..{len(plan.allocation)}, the jobs the plan places (the "
                         f"bound covers placements placing at least admit, which need not include the optimum)")
    need = data.J if proof.admit is None else int(proof.admit)
    if tau <= 0 or need == 0:
        return min(float(tau), 0.0)  # max T_j >= 0 holds; a placement of no job proves no more
    most = admission_bound(data, proof.prices, "sum", below=float(tau))
    if most >= need:
        raise ValueError(f"the prices allow {most} jobs placed with every T_j below {tau:.9g}; proving max T_j >= it "
                         f"for placements of {need} needs fewer")
    return float(tau)


#: the most leaves and the deepest path a pattern-branch tree may have (a replay's work is bounded)
MAX_BRANCH_LEAVES = 2_000
MAX_BRANCH_DEPTH = 50


def branch_leaves(data: PlacementData, tree: Any, kind: str) -> list[tuple[ShapeDomain, dict]]:
    """The leaves of a ``pattern-branch`` tree with the shapes each path allows. A node is a leaf
    (keys among ``prices``, ``admit_price``, ``part_admit_price``) or ``{job, shape, on, off}``,
    ``shape`` a list of parts ``[PS, workers]`` (one per server) of one of the job's undominated
    shapes. ValueError names what is malformed."""
    index = {job: j for j, job in enumerate(data.jobs)}
    c_ps, c_w = coefficients(data)

    def split(node: dict, dom: ShapeDomain, path: str) -> list | None:
        if set(node) != {"job", "shape", "on", "off"}:
            return None
        if node["job"] not in index:
            raise ValueError(f"{path}.job: unknown job {node['job']!r}")
        j = index[node["job"]]
        try:
            shape = tuple(sorted(((int(a), int(b)) for a, b in node["shape"]), reverse=True))
        except (TypeError, ValueError):
            raise ValueError(f"{path}.shape: expected a list of [PS, workers] parts, got {node['shape']!r}") from None
        if shape not in {o[0] for o in job_options(data, j, kind, (c_ps, c_w))}:
            raise ValueError(f"{path}.shape: {[list(p) for p in shape]} is not an undominated shape of job "
                             f"{node['job']!r} that fits")
        on, off = dom.split(j, shape)
        return [(node["on"], on, f"{path}.on"), (node["off"], off, f"{path}.off")]

    return branch_tree_leaves(tree, ShapeDomain(), {"prices", "admit_price", "part_admit_price"}, split,
                              max_leaves=MAX_BRANCH_LEAVES, max_depth=MAX_BRANCH_DEPTH,
                              shapes="a leaf {prices, admit_price | part_admit_price} or splits {job, shape, on, off}")


def _check_admit(data: PlacementData, plan: Any, proof: Any) -> None:
    """``admit`` / ``part_admit`` within what the plan places (the bound covers placements placing
    at least that many, which need not include the optimum otherwise)."""
    if proof.part_admit is not None:
        if proof.admit is not None or proof.admit_price is not None:
            raise ValueError("part_admit replaces admit and admit_price: give one or the other")
        job_part, _, n = components(data)
        placed = np.array([job in plan.allocation for job in data.jobs], dtype=bool)
        per_part = np.bincount(job_part[placed], minlength=n)
        if len(proof.part_admit) == n and any(k > int(per_part[c]) for c, k in enumerate(proof.part_admit)):
            raise ValueError(f"part_admit {proof.part_admit} exceeds the plan's jobs placed per part "
                             f"{per_part.tolist()} (the bound covers placements placing at least that many in each)")
        return
    if proof.admit is not None and proof.admit > len(plan.allocation):
        raise ValueError(f"admit {proof.admit} > the {len(plan.allocation)} jobs the plan places (the bound covers "
                         f"placements placing at least {proof.admit}, which need not include the optimum)")
    if proof.admit is None and len(plan.allocation) < data.J:
        raise ValueError("no admit: the bound covers placements placing every job, and the plan pauses some")


def replay_branch(instance: Instance, plan: Any, proof: Any) -> float:
    """``pattern-branch``: the least of its leaves' pattern-lagrangian bounds, each over the shapes
    its path allows."""
    kind = _kind(plan)
    if proof.tree is None:
        raise ValueError("a pattern-branch proof needs its tree")
    if proof.prices or proof.admit_price is not None:
        raise ValueError("a pattern-branch proof carries its prices in its leaves")
    data = compile_placement(instance)
    _check_admit(data, plan, proof)
    least = math.inf
    for dom, leaf in branch_leaves(data, proof.tree, kind):
        if proof.part_admit is not None:
            bound = lagrangian_bound(data, leaf.get("prices"), kind, admit=None, admit_price=0.0,
                                     part_admit=proof.part_admit, part_admit_price=leaf.get("part_admit_price"),
                                     domain=dom)
        else:
            bound = lagrangian_bound(data, leaf.get("prices"), kind, admit=proof.admit,
                                     admit_price=float(leaf.get("admit_price") or 0.0), domain=dom)
        least = min(least, bound)
    return least


def replay_lagrangian(instance: Instance, plan: Any, proof: Any) -> float:
    """``pattern-lagrangian``: the least Σ T_j (or cross-node pairs) of any placement placing at
    least ``admit`` jobs (None: every job); ``admit`` may not exceed the plan's placed jobs."""
    data = compile_placement(instance)
    _check_admit(data, plan, proof)
    if proof.part_admit is not None:
        return lagrangian_bound(data, proof.prices, _kind(plan), admit=None, admit_price=0.0,
                                part_admit=proof.part_admit, part_admit_price=proof.part_admit_price)
    return lagrangian_bound(data, proof.prices, _kind(plan), admit=proof.admit,
                            admit_price=float(proof.admit_price or 0.0))


CERTIFICATES = {"pattern-lagrangian": Replay("bound", replay_lagrangian),
                "pattern-lp-dual": Replay("admitted_bound", replay_admission),
                "split-floor": Replay("bound", replay_split_floor),
                "pattern-threshold": Replay("bound", replay_threshold),
                "pattern-branch": Replay("bound", replay_branch)}
