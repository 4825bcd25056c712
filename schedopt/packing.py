"""Packing identical servers exactly: the maximal ways to fill one server
(Gilmore-Gomory patterns), shared by Dorm's class model and exact placement's."""

from __future__ import annotations

import numpy as np
from schedopt.tolerances import FIT_TOL

#: capacity tolerance, the checkers' (relative and absolute)
TOL = FIT_TOL  # the library's capacity slack (tolerances.py)


def maximal_patterns(shapes: np.ndarray, capacity: np.ndarray, limit: int = 20000) -> np.ndarray | None:
    """Every maximal way to fill one server of ``capacity`` (R,) with containers
    of the given ``shapes`` (T, R): count vectors q (P, T) with Σ_t q_t·shape_t
    <= capacity to which no container can be added. None if more than ``limit``."""
    T = len(shapes)
    room_tol = capacity * (1 + TOL) + TOL
    fits_alone = [bool(np.all(shapes[t] <= room_tol)) for t in range(T)]
    out: list[list[int]] = []
    q = [0] * T

    def rec(t: int, load: np.ndarray) -> bool:
        if len(out) > limit:
            return False
        if t == T:
            left = room_tol - load
            if not any(fits_alone[u] and np.all(shapes[u] <= left) for u in range(T)):
                out.append(list(q))
            return True
        if not fits_alone[t]:
            return rec(t + 1, load)
        pos = shapes[t] > 0
        most = int(np.floor(np.min((room_tol[pos] - load[pos]) / shapes[t][pos]))) if pos.any() else 0
        for k in range(max(most, 0), -1, -1):
            q[t] = k
            if not rec(t + 1, load + k * shapes[t]):
                return False
        q[t] = 0
        return True

    if not rec(0, np.zeros_like(capacity, dtype=float)):
        return None
    return np.array(out, dtype=np.int64).reshape(len(out), T)
