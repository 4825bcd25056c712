"""``slaq-greedy``: SLAQ §2's quality-driven greedy. Every admitted job starts
at its minimum, then the job whose next unit gives the highest predicted loss
reduction (per dominant share of a unit) gets it, until nothing fits. It
carries the LP-relaxation bound."""

from __future__ import annotations

import heapq
import time

import numpy as np

from schedopt.allocation.model import AllocationModel
from schedopt.allocation.plans import heuristic_plan
from schedopt.allocation.admission import DEFAULT_ADMISSION, admit, check_admission
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan
from schedopt.quality.problem import QualityData, StopRule, compile_quality
from schedopt.registry import register
from schedopt.tolerances import FIT_TOL, capacity_limit


def _segment_starts(owner: np.ndarray) -> np.ndarray:
    """Start index of each run of equal ``owner`` values (owner sorted)."""
    return np.flatnonzero(np.concatenate([[True], owner[1:] != owner[:-1]])) if len(owner) else np.zeros(0, dtype=np.int64)


def _moves(data: QualityData, start: dict[int, tuple[int, int]]) -> tuple[np.ndarray, ...]:
    """Every started job's moves, flat and grouped by job in job order:
    (job, count after the move, gain per unit share, units added, running
    minimum of the gain along the job's path, step along the path).

    A move goes to the next allowed count (the next unit; the next measured
    point of a table). A job's path ends at its max, at the most units its
    demand could ever fit beside the start, or before the first move that
    gains nothing."""
    jobs = np.array(sorted(start), dtype=np.int64)
    n0 = np.array([start[j][0] for j in jobs], dtype=np.int64)
    d = data.demand[jobs, 0]  # (S, R)
    free = capacity_limit(data.cap) - (n0[:, None] * d).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(d > 0, free / d, np.inf).min(axis=1) if data.R else np.full(len(jobs), np.inf)
    room = data.hi[jobs, 0] - n0
    room = np.where(np.isfinite(fit), np.minimum(room, np.floor(np.maximum(fit, -1) + FIT_TOL)), room).astype(np.int64)
    keep = room > 0
    jobs, n0, room = jobs[keep], n0[keep], room[keep]
    # candidate counts n0 .. n0 + room of each job, flat
    lengths = room + 1
    owner = np.repeat(np.arange(len(jobs)), lengths)
    offsets = np.cumsum(lengths) - lengths
    counts = n0[owner] + np.arange(int(lengths.sum())) - offsets[owner]
    cost = data.costs(jobs, owner, counts)
    allowed = np.isfinite(cost)
    owner, counts, cost = owner[allowed], counts[allowed], cost[allowed]
    # a move between consecutive allowed counts of the same job
    same = owner[1:] == owner[:-1]
    units = (counts[1:] - counts[:-1])[same]
    gain = ((cost[:-1] - cost[1:])[same]) / units  # per unit: (R(n') - R(n)) / (n' - n)
    m_owner, m_count = owner[1:][same], counts[1:][same]
    # cut each path before its first move that gains nothing
    bad = ~(gain > 0)
    seg = _segment_starts(m_owner)
    seen_bad = np.cumsum(bad)
    before = np.repeat(seen_bad[seg] - bad[seg], np.diff(np.append(seg, len(bad))))
    ok = seen_bad - before == 0
    m_owner, m_count, gain, units = m_owner[ok], m_count[ok], gain[ok], units[ok]
    share = data.share[jobs[m_owner], 0]
    with np.errstate(divide="ignore"):
        per_share = np.where(share > 0, gain / np.where(share > 0, share, 1.0), np.inf)
    seg = _segment_starts(m_owner)
    bounds = np.append(seg, len(m_owner))
    running = np.concatenate([np.minimum.accumulate(per_share[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]) if len(seg) else per_share
    step = np.arange(len(m_owner)) - np.repeat(seg, np.diff(bounds))
    return jobs[m_owner], m_count, per_share, units, running, step


def slaq_greedy(data: QualityData, start: dict[int, tuple[int, int]], *,
                stop_rule: StopRule = "skip") -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """SLAQ's greedy from ``start`` (job -> (a_j, 0)), vectorised; the same plan as
    :func:`slaq_greedy_heap`. The heap's pops visit units in order of each unit's
    running-minimum gain along its job's path (ties by job, then unit), so one
    sort replaces the heap; units are then taken in that order while they fit
    (``skip``: a job whose next unit does not fit stops; ``paper``: all stop)."""
    config = {j: [c[0], c[1]] for j, c in start.items()}
    job, count, _, units, running, step = _moves(data, start)
    added = dropped = 0
    if len(job):
        order = np.lexsort((step, job, -running))
        job, count, units = job[order], count[order], units[order]
        use = data.demand[job, 0] * units[:, None]  # (moves, R)
        limit = data.cap * (1 + FIT_TOL) + FIT_TOL
        used = sum((start[j][0] * data.demand[j, 0] for j in start), np.zeros(data.R))
        # the prefix that fits as a whole is taken at once (a job's moves come in count order)
        over = np.any(used + np.cumsum(use, axis=0) > limit, axis=1)
        first = int(np.argmax(over)) if over.any() else len(job)
        final = np.zeros(data.J, dtype=np.int64)
        np.maximum.at(final, job[:first], count[:first])
        for j in np.flatnonzero(final).tolist():
            config[j][0] = int(final[j])
        added = int(units[:first].sum())
        used = used + use[:first].sum(axis=0)
        stopped: set[int] = set()
        if first < len(job) and stop_rule == "skip":
            smallest = use[first:].min(axis=0)
            for i in range(first, len(job)):
                if np.any(used + smallest > limit):
                    break  # nothing left can fit
                j = int(job[i])
                if j in stopped:
                    continue
                if np.all(used + use[i] <= limit):
                    used += use[i]
                    config[j][0] = int(count[i])
                    added += int(units[i])
                else:
                    stopped.add(j)
        dropped = len(stopped) if stop_rule == "skip" else int(first < len(job))
    return {j: (c[0], c[1]) for j, c in config.items()}, {"units_added": added, "jobs_stopped_by_capacity": dropped}


def slaq_greedy_heap(data: QualityData, start: dict[int, tuple[int, int]], *,
                     stop_rule: StopRule = "skip") -> dict[int, tuple[int, int]]:
    """The literal algorithm with a heap (the reference the vectorised greedy is tested against)."""
    config = {j: c[0] for j, c in start.items()}
    job, count, gain, units, _, _ = _moves(data, start)
    paths: dict[int, list[tuple[int, float, int]]] = {}
    for j, n, g, u in zip(job.tolist(), count.tolist(), gain.tolist(), units.tolist()):
        paths.setdefault(j, []).append((n, g, u))
    used = sum((start[j][0] * data.demand[j, 0] for j in start), np.zeros(data.R))
    limit = data.cap * (1 + FIT_TOL) + FIT_TOL
    heap = [(-path[0][1], j, 0) for j, path in paths.items()]
    heapq.heapify(heap)
    while heap:
        _, j, i = heapq.heappop(heap)
        n, _, u = paths[j][i]
        d = data.demand[j, 0] * u
        if np.any(used + d > limit):
            if stop_rule == "paper":
                break
            continue  # skip: this job takes no more
        used = used + d
        config[j] = n
        if i + 1 < len(paths[j]):
            heapq.heappush(heap, (-paths[j][i + 1][1], j, i + 1))
    return {j: (n, 0) for j, n in config.items()}


@register("slaq-greedy", problem="quality", exact=False, backend="numpy")
class SlaqGreedy:
    """SLAQ §2 quality-driven greedy (one unit at a time to the highest predicted
    loss reduction), with the LP-relaxation bound."""

    def __init__(self, *, stop_rule: StopRule = "skip", bound: bool = True, admission: str = DEFAULT_ADMISSION):
        if stop_rule not in ("skip", "paper"):
            raise InputError("slaq-greedy", f'stop_rule: expected "skip" or "paper", got {stop_rule!r}')
        check_admission("slaq-greedy", admission)
        self.stop_rule = stop_rule
        self.bound = bool(bound)
        self.admission = admission

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_quality(instance)
        admitted, start = admit(data, self.admission)  # the tie-break cost is -R_j at the minimum
        config, counters = slaq_greedy(data, start, stop_rule=self.stop_rule)
        greedy_s = time.perf_counter() - started
        return heuristic_plan(AllocationModel.of_jobs(data), config, solver=self.name, started=started, seed=seed,
                              options={"stop_rule": self.stop_rule, "bound": self.bound, "admission": self.admission},
                              metrics={**counters, "heuristic_seconds": greedy_s}, bound=self.bound)


