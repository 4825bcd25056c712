"""The aggregated class model of exact placement: identical servers grouped
into classes, jobs choosing a *shape*, servers filled by packing patterns.

Per job j with p PS and w workers, a shape is a multiset of parts (a, b),
a PS and b workers sharing one server, Σ a = p, Σ b = w. The objective of a
job depends on its shape only (DESIGN.md's T_j; ``c_ps``, ``c_w`` from
:func:`~schedopt.placement.exact.coefficients`):

    T(s) = max( max_{(a,b)∈s, a>0} c_ps·(w - b),  max_{(a,b)∈s, b>0} c_w·(p - a) ),
    pairs(s) = p·w - Σ_{(a,b)∈s} a·b.

Two facts make the model exact:

* Merging two parts of a job onto one server never raises T_j or the pairs
  (the merged server's b and a only grow; no server starts hosting a role).
  So two parts of a job may share a server in the model: the decoded
  placement merges them, at no higher cost. Conversely, splitting a part
  never lowers the cost, so a shape is *dominated* when a one-part split of
  it costs the same (the split packs whenever the shape does); only the
  undominated shapes are kept (:func:`job_shapes`).
* Each part is an item of resource vector a·d_ps + b·d_w. On a class of
  identical servers, a multiset of items fits exactly when it is covered by
  maximal packing patterns (:func:`~schedopt.packing.maximal_patterns`), one per
  server: the Gilmore-Gomory model, with no symmetry between the servers.

Variables: x_js (job j takes shape s), z_cq (servers of class c filled by
pattern q). Constraints: Σ_s x_js <= 1; Σ_q z_cq <= |c|; for each item i,
Σ_js n_si·x_js <= Σ_cq n_cqi·z_cq. Objectives as the server model's:
max Σ x, then min Σ T, max T or Σ pairs. :func:`decode` gives every server
its pattern and fills the slots with parts, exactly.

The model applies when no job runs (``previous`` is empty, or ``moves="ignore"``)
and shapes and patterns stay few (:data:`MAX_PARTITIONS`, :data:`MAX_PATTERNS`);
otherwise the exact solvers use the per-server model.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from schedopt.packing import maximal_patterns
from schedopt.placement.problem import PlacementData
from schedopt.tolerances import THRESHOLD_TOL, TINY

#: the most vector partitions of (p, w) enumerated per job; more: no class model
MAX_PARTITIONS = 20_000
#: the most maximal packing patterns per server class; more: no class model
MAX_PATTERNS = 20_000

Part = tuple[int, int]
Shape = tuple[Part, ...]


@lru_cache(maxsize=4096)
def vector_partitions(p: int, w: int) -> tuple[Shape, ...] | None:
    """Every multiset of nonzero parts (a, b) summing to (p, w), parts in
    non-increasing order; None when there are more than :data:`MAX_PARTITIONS`."""
    parts = sorted(((a, b) for a in range(p + 1) for b in range(w + 1) if a + b > 0), reverse=True)
    out: list[Shape] = []
    cur: list[Part] = []

    def rec(rp: int, rw: int, start: int) -> bool:
        if rp == 0 and rw == 0:
            out.append(tuple(cur))
            return len(out) <= MAX_PARTITIONS
        for i in range(start, len(parts)):
            a, b = parts[i]
            if a <= rp and b <= rw:
                cur.append(parts[i])
                ok = rec(rp - a, rw - b, i)
                cur.pop()
                if not ok:
                    return False
        return True

    return tuple(out) if rec(p, w, 0) else None


def shape_time(shape: Shape, p: int, w: int, c_ps: float, c_w: float) -> float:
    """T(s) in seconds per step (0 for a job on one server)."""
    t = 0.0
    for a, b in shape:
        if a:
            t = max(t, c_ps * (w - b))
        if b:
            t = max(t, c_w * (p - a))
    return t


def shape_pairs(shape: Shape, p: int, w: int) -> int:
    """Cross-node PS-worker pairs of a shape: p·w - Σ a·b."""
    return p * w - sum(a * b for a, b in shape)


def _splits(part: Part) -> list[tuple[Part, Part]]:
    a, b = part
    return [((a1, b1), (a - a1, b - b1)) for a1 in range(a + 1) for b1 in range(b + 1)
            if 0 < a1 + b1 < a + b and (a1, b1) >= (a - a1, b - b1)]


@lru_cache(maxsize=4096)
def undominated(p: int, w: int, kind: str, ratio: float, tol: float = TINY) -> tuple[Shape, ...] | None:
    """Undominated shapes for costs with c_ps/c_w = ``ratio`` (``kind`` "time": T, scaled by
    1/c_w) or cross-node pairs (``kind`` "cross_pairs"): those no one-part split of which costs
    at most as much, within ``tol`` relative (0: exactly, as the certificate replay decides).
    None when the vector partitions are too many to enumerate."""
    if p == 0 or w == 0:  # one role: every shape costs 0, single tasks pack best
        return (((1, 0),) * p + ((0, 1),) * w,) if p + w else ((),)
    shapes = vector_partitions(p, w)
    if shapes is None:
        return None

    def cost(s: Shape) -> float:
        return float(shape_pairs(s, p, w)) if kind == "cross_pairs" else shape_time(s, p, w, ratio, 1.0)

    keep = []
    for s in shapes:
        c = cost(s)
        dominated = any(cost(tuple(sorted(s[:i] + s[i + 1:] + pair, reverse=True))) <= c + tol * max(1.0, c)
                        for i, part in enumerate(s) for pair in _splits(part))
        if not dominated:
            keep.append(s)
    return tuple(keep)


def job_shapes(p: int, w: int, c_ps: float, c_w: float, kind: str) -> tuple[Shape, ...] | None:
    """The undominated shapes of a job (see the module docstring); None when too many to enumerate."""
    ratio = round(c_ps / c_w, 12) if c_w > 0 else 1.0
    return undominated(int(p), int(w), "cross_pairs" if kind == "cross_pairs" else "time", ratio)


@dataclass
class ClassModel:
    """The class model's data. ``classes`` server indices per class; ``class_cap``
    (C, R); ``shapes[j]`` job j's shapes; ``cost[j]`` (n_j,) each shape's
    objective (seconds, or pairs); ``uses[j]`` (n_j, I) items per shape;
    ``items`` (I, R) item vectors, ``item_part[i]`` nothing but documentation;
    ``patterns[c]`` (P_c, I) slots per pattern."""

    classes: list[np.ndarray]
    class_cap: np.ndarray
    shapes: list[tuple[Shape, ...]]
    cost: list[np.ndarray]
    uses: list[np.ndarray]
    items: np.ndarray
    part_item: list[dict[Part, int]]
    patterns: list[np.ndarray]

    @property
    def size(self) -> dict[str, int]:
        return {"classes": len(self.classes), "shapes": int(sum(len(s) for s in self.shapes)),
                "items": int(len(self.items)), "patterns": int(sum(len(q) for q in self.patterns))}


def restrict(cm: ClassModel, most: float) -> ClassModel:
    """``cm`` with only the shapes costing at most ``most`` (within THRESHOLD_TOL relative): a
    job left without shapes is never placed. Items and patterns stay (a ``max`` T_j threshold)."""
    keep = [c <= most * (1 + THRESHOLD_TOL) for c in cm.cost]
    return replace(cm, shapes=[tuple(s for s, k in zip(shapes, mask) if k) for shapes, mask in zip(cm.shapes, keep)],
                   cost=[c[mask] for c, mask in zip(cm.cost, keep)], uses=[u[mask] for u, mask in zip(cm.uses, keep)])


def server_classes(cap: np.ndarray) -> list[np.ndarray]:
    """Indices of identical servers (equal capacity rows), in first-seen order."""
    _, first, inverse = np.unique(cap, axis=0, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    return [np.flatnonzero(inverse == g) for g in np.argsort(first)]


def build_class_model(data: PlacementData, objective: str, c_ps: np.ndarray, c_w: np.ndarray) -> ClassModel | None:
    """The class model of ``data``, or None when shapes or patterns are too many. The
    caller leaves running jobs (``data.prev``) out of account: servers are interchangeable here."""
    classes = server_classes(data.cap)
    shapes, costs = [], []
    item_index: dict[tuple[float, ...], int] = {}
    items: list[np.ndarray] = []
    part_item: list[dict[Part, int]] = []
    for j in range(data.J):
        p, w = int(data.counts[j, 0]), int(data.counts[j, 1])
        s_j = job_shapes(p, w, float(c_ps[j]), float(c_w[j]), objective)
        if s_j is None:
            return None
        shapes.append(s_j)
        costs.append(np.array([float(shape_pairs(s, p, w)) if objective == "cross_pairs"
                               else shape_time(s, p, w, float(c_ps[j]), float(c_w[j])) for s in s_j]))
        index: dict[Part, int] = {}
        for part in sorted({part for s in s_j for part in s}):
            vec = part[0] * data.demand[j, 0] + part[1] * data.demand[j, 1]
            key = tuple(np.round(vec, 9).tolist())
            if key not in item_index:
                item_index[key] = len(items)
                items.append(vec)
            index[part] = item_index[key]
        part_item.append(index)
    R = data.cap.shape[1]
    item_arr = np.array(items, dtype=float).reshape(len(items), R)
    uses = []
    for j in range(data.J):
        u = np.zeros((len(shapes[j]), len(items)), dtype=np.int64)
        for k, s in enumerate(shapes[j]):
            for part in s:
                u[k, part_item[j][part]] += 1
        uses.append(u)
    patterns = []
    for members in classes:
        q = maximal_patterns(item_arr, data.cap[members[0]], limit=MAX_PATTERNS) if len(items) else np.zeros((0, 0), dtype=np.int64)
        if q is None:
            return None
        patterns.append(q)
    return ClassModel(classes=classes, class_cap=data.cap[[c[0] for c in classes]] if classes else data.cap[:0],
                      shapes=shapes, cost=costs, uses=uses, items=item_arr, part_item=part_item, patterns=patterns)


def decode(data: PlacementData, cm: ClassModel, chosen: list[int | None], z: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Dense (J, S) PS and worker counts from each job's chosen shape index
    (None: paused) and each class's servers per pattern ``z[c]`` (P_c,).
    Every server of class c takes a pattern; each slot of item i takes a part
    of that vector. Parts of one job that meet on a server add up (merging
    never raises the cost). Raises ValueError if the patterns do not cover the parts."""
    slots: list[list[int]] = [[] for _ in range(len(cm.items))]  # servers offering each item, one entry per slot
    for c, members in enumerate(cm.classes):
        k = 0
        for q, n in enumerate(np.asarray(z[c]).tolist()):
            for _ in range(int(round(n))):
                if k >= len(members):
                    raise ValueError(f"class {c}: more patterns than servers")
                for i in np.flatnonzero(cm.patterns[c][q]).tolist():
                    slots[i] += [int(members[k])] * int(cm.patterns[c][q][i])
                k += 1
    P = np.zeros((data.J, data.S), dtype=np.int64)
    W = np.zeros((data.J, data.S), dtype=np.int64)
    taken = [0] * len(cm.items)
    for j, s in enumerate(chosen):
        if s is None:
            continue
        for a, b in cm.shapes[j][s]:
            i = cm.part_item[j][(a, b)]
            if taken[i] >= len(slots[i]):
                raise ValueError(f"the patterns cover too few slots of item {i}")
            server = slots[i][taken[i]]
            taken[i] += 1
            P[j, server] += a
            W[j, server] += b
    return P, W
