"""Optimus's marginal-gain greedy (Optimus §4.1, eq. 9).

Every admitted job starts at its minimum configuration (one PS and one worker
with the default bounds). The gain of adding a task of role r to job j is

    (Q_j/f_j(c) - Q_j/f_j(c + e_r)) / share_r          (eq. 9)

where share_r = max_res demand_r,res / C_res is the task's dominant share.
Each step takes the job with the largest gain (a max-heap) and adds the better
of its two moves; the job's gain is then recomputed. It stops when every gain
is non-positive, and on an increment that does not fit: ``stop_rule='paper'``
stops there, ``'skip'`` (default) drops that job and goes on. Jobs flagged
``new`` have their gain scaled by ``priority_factor``. For ``table`` speeds a
move goes to the next measured count along that role's axis.
"""

from __future__ import annotations

import heapq
import math
import time
from typing import Literal

import numpy as np

from schedopt.allocation.problem import (
    AllocationData,
    ChoiceSet,
    admit_smallest_first,
    admitted_upper_bound,
    build_plan,
    compile_allocation,
    enumerate_choices,
)
from schedopt.allocation.lagrange import solve_lp
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan, Status, Termination
from schedopt.registry import register
from schedopt.speed import TableSpeed

StopRule = Literal["skip", "paper"]


def _next_count_fn(data: AllocationData, j: int):
    """``next(c0, c1, role) -> new count or None``: the next allowed count of a role."""
    hi0, hi1 = int(data.hi[j, 0]), int(data.hi[j, 1])
    two = data.n_roles[j] == 2
    speed = data.jobs[j].speed
    if not isinstance(speed, TableSpeed):
        def nxt(c0: int, c1: int, role: int) -> int | None:
            if role == 0:
                return c0 + 1 if c0 < hi0 else None
            return c1 + 1 if two and c1 < hi1 else None
        return nxt
    allowed = {c if len(c) == 2 else (c[0], 0) for c in speed.configurations()}
    along0: dict[int, list[int]] = {}
    along1: dict[int, list[int]] = {}
    for c0, c1 in allowed:
        along0.setdefault(c1, []).append(c0)
        along1.setdefault(c0, []).append(c1)

    def nxt_table(c0: int, c1: int, role: int) -> int | None:
        if role == 0:
            bigger = [x for x in along0.get(c1, ()) if c0 < x <= hi0]
        else:
            bigger = [x for x in along1.get(c0, ()) if c1 < x <= hi1] if two else []
        return min(bigger) if bigger else None
    return nxt_table


def greedy_allocate(
    data: AllocationData,
    start: dict[int, tuple[int, int]],
    *,
    stop_rule: StopRule = "skip",
    priority_factor: float = 0.95,
) -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """Run eq. 9's greedy from ``start`` (job -> configuration) under the
    cluster capacity. Returns the final configurations and step counters."""
    cap = [float(c) * (1 + 1e-12) + 1e-12 for c in data.cap]
    R = len(cap)
    used = [0.0] * R
    for j, c in start.items():
        for r in range(R):
            used[r] += c[0] * data.demand[j, 0, r] + c[1] * data.demand[j, 1, r]
    config = dict(start)
    dem = {j: (tuple(float(x) for x in data.demand[j, 0]), tuple(float(x) for x in data.demand[j, 1])) for j in start}
    share = {j: (float(data.share[j, 0]), float(data.share[j, 1])) for j in start}
    factor = {j: (priority_factor if data.jobs[j].new else 1.0) for j in start}
    nxt = {j: _next_count_fn(data, j) for j in start}
    tfun = {j: data.jobs[j].speed.step_time_s for j in start}
    Q = {j: float(data.Q[j]) for j in start}
    cur_t = {j: Q[j] * tfun[j](*start[j]) if Q[j] > 0 else 0.0 for j in start}

    def best_move(j: int) -> tuple[float, int, int] | None:
        """(gain, role, new count) of j's better move (worker wins ties), or None."""
        c0, c1 = config[j]
        best = None
        for role in (1, 0):  # worker first: on equal gains the worker is added
            n = nxt[j](c0, c1, role)
            if n is None:
                continue
            t_new = tfun[j](n, c1) if role == 0 else tfun[j](c0, n)
            if not math.isfinite(t_new):
                continue
            delta = cur_t[j] - Q[j] * t_new
            steps = n - (c0 if role == 0 else c1)
            s = share[j][role] * steps
            gain = (delta / s if s > 0 else (math.inf if delta > 0 else 0.0)) * factor[j]
            if best is None or gain > best[0]:
                best = (gain, role, n)
        return best

    heap: list[tuple[float, int, int, int]] = []
    for j in start:
        mv = best_move(j)
        if mv is not None:
            heap.append((-mv[0], j, mv[1], mv[2]))
    heapq.heapify(heap)
    added = dropped = 0
    while heap:
        neg_gain, j, role, n = heapq.heappop(heap)
        if -neg_gain <= 0:
            break  # the largest gain is non-positive: every gain is (eq. 9 stop)
        c0, c1 = config[j]
        k = n - (c0 if role == 0 else c1)
        d = dem[j][role]
        if all(used[r] + k * d[r] <= cap[r] for r in range(R)):
            for r in range(R):
                used[r] += k * d[r]
            config[j] = (n, c1) if role == 0 else (c0, n)
            cur_t[j] = Q[j] * tfun[j](*config[j]) if Q[j] > 0 else 0.0
            added += k
            mv = best_move(j)
            if mv is not None:
                heapq.heappush(heap, (-mv[0], j, mv[1], mv[2]))
        elif stop_rule == "paper":
            break  # "until some resource in the cluster is used up"
        else:
            dropped += 1  # skip: this job grows no further; the others go on
    return config, {"tasks_added": added, "jobs_stopped_by_capacity": dropped}


@register("optimus-greedy", problem="allocation", exact=False, backend="python-heap")
class OptimusGreedy:
    """Optimus §4.1 marginal-gain greedy (eq. 9), with the LP-relaxation bound."""

    def __init__(self, *, stop_rule: StopRule = "skip", priority_factor: float = 0.95, bound: bool = True):
        if stop_rule not in ("skip", "paper"):
            raise InputError("optimus-greedy", f'stop_rule: expected "skip" or "paper", got {stop_rule!r}')
        if not (isinstance(priority_factor, (int, float)) and 0 < priority_factor <= 1):
            raise InputError("optimus-greedy", f"priority_factor: expected a number in (0, 1], got {priority_factor!r}")
        self.stop_rule = stop_rule
        self.priority_factor = float(priority_factor)
        self.bound = bool(bound)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_allocation(instance)
        admitted, start = admit_smallest_first(data)
        config, counters = greedy_allocate(data, start, stop_rule=self.stop_rule, priority_factor=self.priority_factor)
        greedy_s = time.perf_counter() - started
        bound = admitted_bound = None
        if self.bound:
            admitted_bound = admitted_upper_bound(data) if len(admitted) < data.J else data.J
            if admitted_bound == len(admitted):
                cs: ChoiceSet = enumerate_choices(data)
                # the LP bound by column generation (with an admission row when some jobs are paused)
                bound = solve_lp(data, cs, admit=None if len(admitted) == data.J else len(admitted)).bound if admitted else 0.0
        status = Status.HEURISTIC if admitted or data.J == 0 else Status.INFEASIBLE
        return build_plan(
            data, solver=self.name, config=config, status=status,
            termination=Termination.COMPLETED if status == Status.HEURISTIC else Termination.INFEASIBLE,
            started=started, bound=bound, admitted_bound=admitted_bound, seed=seed,
            options={"stop_rule": self.stop_rule, "priority_factor": self.priority_factor, "bound": self.bound},
            metrics={**counters, "heuristic_seconds": greedy_s},
        )
