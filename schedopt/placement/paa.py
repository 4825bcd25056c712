"""PAA and MXNet's default: parameter blocks to parameter servers (problem ``ps-assignment``; Optimus §5.3, Table 3).

The problem's data (each job's PS count) and Table 3's metrics live in
:mod:`schedopt.placement.assignment`; this module holds the two solvers.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.assignment import Entry, assignment_metrics, divisibility_bound, ps_counts
from schedopt.plan import Certificate, Objective, Plan, Proof, Status, Termination, relative_gap
from schedopt.registry import register

def _slices(size: int, parts: int) -> list[int]:
    """``size`` split into ``parts`` slices differing by at most one."""
    base, extra = divmod(size, parts)
    return [base + (1 if k < extra else 0) for k in range(parts) if base + (1 if k < extra else 0) > 0]


def paa(blocks: list[int], p: int, *, small_fraction: float = 0.01) -> list[Entry]:
    """Optimus §5.3. Blocks in decreasing size; avg_size = total / p.
    size < small_fraction·avg: to the PS with the fewest requests;
    size <= avg: best fit, the PS with the least remaining capacity (avg minus
    assigned) that still holds it (if none does: the least-loaded PS);
    size > avg: sliced into avg-sized partitions (the last smaller), each to the
    PS with the fewest parameters. Ties go to the lowest PS index."""
    total = sum(blocks)
    avg = total / p
    size = np.zeros(p)
    requests = np.zeros(p, dtype=np.int64)
    out: list[Entry] = []

    def put(k: int, block: int, n: int) -> None:
        size[k] += n
        requests[k] += 1
        out.append({"ps": int(k), "block": int(block), "size": int(n)})

    for b in sorted(range(len(blocks)), key=lambda i: (-blocks[i], i)):
        n = blocks[b]
        if n < small_fraction * avg:
            put(int(np.argmin(requests)), b, n)
        elif n <= avg:
            remaining = avg - size
            ok = np.flatnonzero(remaining >= n)
            k = int(ok[np.argmin(remaining[ok])]) if len(ok) else int(np.argmin(size))
            put(k, b, n)
        else:
            part = int(np.floor(avg))
            left = n
            while left > 0:
                piece = min(part, left)
                put(int(np.argmin(size)), b, piece)
                left -= piece
    return out


def mxnet_default(blocks: list[int], p: int, *, threshold: int = 1_000_000, seed: int | None = None) -> list[Entry]:
    """MXNet's default (Optimus §5.3): a block under ``threshold`` parameters goes
    to a random PS; a larger one is sliced evenly over all p PS."""
    rng = np.random.default_rng(0 if seed is None else seed)  # no seed: still deterministic
    out: list[Entry] = []
    for b, n in enumerate(blocks):
        if n < threshold:
            out.append({"ps": int(rng.integers(p)), "block": b, "size": int(n)})
        else:
            for k, piece in enumerate(_slices(n, p)):
                out.append({"ps": k, "block": b, "size": piece})
    return out


def _plan(instance: Instance, solver: str, assignment: dict[str, list[Entry]], started: float, seed: int | None,
          options: dict[str, Any], *, bound: bool) -> Plan:
    """The plan; with ``bound``, the closed-form optimum as its bound (kind ``ps-divisibility``)
    and the gap to it."""
    metrics = assignment_metrics(instance, assignment)
    value = metrics["max_size_difference"]
    lower = divisibility_bound(instance) if bound else None
    objective = Objective(name="max_size_difference", sense="min", value=value, bound=lower,
                          gap=None if lower is None else relative_gap(value, lower))
    certificate = None if lower is None else Certificate(bound=Proof(kind="ps-divisibility", value=lower))
    return Plan(instance=instance.name, problem="ps-assignment", solver=solver, status=Status.HEURISTIC,
                termination=Termination.COMPLETED, objective=objective, certificate=certificate,
                solve_seconds=time.perf_counter() - started, ps_assignment=assignment, metrics=metrics, seed=seed,
                options=options)


def _check_bound(solver: str, bound: Any) -> bool:
    if not isinstance(bound, bool):
        raise InputError(solver, f"bound: expected true or false, got {bound!r}")
    return bound


@register("paa", problem="ps-assignment", exact=False, backend="python")
class Paa:
    """Optimus §5.3 parameter assignment: small blocks by requests, medium best-fit, large sliced at avg_size."""

    def __init__(self, *, small_fraction: float = 0.01, bound: bool = True):
        if not (isinstance(small_fraction, (int, float)) and 0 <= small_fraction <= 1):
            raise InputError("paa", f"small_fraction: expected a number in [0, 1], got {small_fraction!r}")
        self.small_fraction = float(small_fraction)
        self.bound = _check_bound("paa", bound)  # ours, on by default (as for optimus-placement)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        counts = ps_counts(instance)
        blocks = {j.id: j.param_blocks for j in instance.jobs if j.id in counts}
        assignment = {j: paa(list(blocks[j]), p, small_fraction=self.small_fraction) for j, p in counts.items()}
        return _plan(instance, self.name, assignment, started, seed,
                     {"small_fraction": self.small_fraction, "bound": self.bound}, bound=self.bound)


@register("mxnet-default", problem="ps-assignment", exact=False, backend="python")
class MxnetDefault:
    """MXNet's default: blocks under 10^6 parameters to a random PS (seeded), larger ones sliced over all PS."""

    def __init__(self, *, threshold: int = 1_000_000, bound: bool = False):
        if not (isinstance(threshold, int) and not isinstance(threshold, bool) and threshold >= 1):
            raise InputError("mxnet-default", f"threshold: expected an integer >= 1, got {threshold!r}")
        self.threshold = threshold
        self.bound = _check_bound("mxnet-default", bound)  # off by default: MXNet states none

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        counts = ps_counts(instance)
        blocks = {j.id: j.param_blocks for j in instance.jobs if j.id in counts}
        assignment = {j: mxnet_default(list(blocks[j]), p, threshold=self.threshold, seed=seed)
                      for j, p in counts.items()}
        return _plan(instance, self.name, assignment, started, seed, {"threshold": self.threshold, "bound": self.bound},
                     bound=self.bound)
