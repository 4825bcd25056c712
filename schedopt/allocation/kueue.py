"""``kueue-admission``: Kueue's own admission as a baseline (issue 39 §3).

Written from Kueue's concept pages (``../shared/papers/kueue/``: cluster_queue.md,
admission.md), not from its code. One call admits as one quota-reservation pass
over the pending workloads does:

- each queue orders its workloads by priority (the job's ``weight``, higher first),
  then creation (``arrival``), then listing order;
- the heads of the queues are tried in cycles; in each cycle, heads that fit
  without borrowing go first, then by priority and creation;
- a workload gets the first flavor, in its queue's order of ``quotas`` (its
  resource groups' flavor list) among those it may take (``allowed_flavors``:
  taints, tolerations, node selector and affinity), whose quota has room: the queue's unused nominal
  quota, or the cohort's unused quota within the queue's borrowing limit and the
  others' lending limits (``quotas.py``), and the flavor's servers have the
  capacity (the pods must run). ``when_can_borrow``: ``MayStopSearch`` (Kueue's
  default) takes the first flavor that fits even by borrowing; ``TryNextFlavor``
  prefers a later flavor that fits without borrowing;
- the workload asks for its roles' maximum counts (its parallelism); with partial
  admission (a role whose min < max, Kueue's ``job-min-parallelism``) it is
  admitted with the largest smaller count that fits (down to the minimum) when the
  full request fits no flavor, even by preemption (a count is searched whole, as
  above, before the next smaller one);
- ``StrictFIFO``: a head that does not fit blocks its queue; ``BestEffortFIFO``
  (Kueue's default): it is skipped and the next workload of its queue is tried.
- Workloads running now (``running`` with ``running_accelerator``) stay admitted
  where they run, before any pending one.

- Classic preemption (preemption.md), when the queue enables it (``preemption``:
  ``withinClusterQueue``, ``reclaimWithinCohort``): a workload that fits no
  flavor, whose request is within its queue's nominal quota there, may evict
  running workloads. Candidates are its own queue's, of lower priority (or equal
  priority and newer, ``LowerOrNewerEqualPriority``), and, with
  ``reclaimWithinCohort``, other queues' in the cohort that use more than their
  nominal quota of a resource it needs (of lower priority, or ``Any``); ordered
  other queues first, lowest priority, newest (ties: listing order). Targets are taken
  greedily by the first of the preemption page's heuristics that makes room: all
  candidates in its own queue, borrowing allowed; ``borrow_within_cohort``: other
  queues' of lower priority up to ``max_priority_threshold``, borrowing allowed (the
  request may then exceed its nominal quota); its queue under nominal: every
  candidate, without borrowing, skipping a queue once it no longer borrows; its own
  queue's only, borrowing allowed. Then minimised in reverse. Which flavor is chosen is the fungibility rule above; a
  flavor where every target is in another queue (Kueue's Reclaim) ranks above one that
  preempts in the workload's own queue (``MODE_RANK``). The evicted jobs are in
  ``metrics["preempted"]``; the preemptor is admitted in the same pass (Kueue
  admits it once the evicted pods are gone) at its full request.

- Fair sharing (option ``fair_sharing``; Kueue enables it in its Configuration; flat cohorts):
  a queue's share value is the largest, over resources, of what it borrows (usage above its
  nominal quota, summed over flavors) x 1000 / what its cohort can lend, divided by its
  ``fair_sharing_weight``, rounded up. Each cycle admits its heads one at a time, the one whose
  queue's share with it admitted is lowest first (then priority, creation); preemption may take
  place while borrowing (``reclaimWithinCohort`` other than Never) and follows
  :func:`fair_preemption`'s strategies (``preemption_strategies``).

Left out: admission fair sharing, fair sharing over hierarchical cohorts,
admission checks, topology-aware scheduling; jobs without a queue are tried after every queue, in arrival order,
on the cluster's types in order.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from schedopt.allocation.model import AllocationModel, compile_typed
from schedopt.allocation.plans import heuristic_plan
from schedopt.allocation.rows import CohortTree, shared_flavor
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.kueue_import import ACCOUNTED_ANNOTATION, ALLOWED_FLAVORS_ANNOTATION
from schedopt.plan import Plan
from schedopt.registry import register
from schedopt.tolerances import INTEGRAL_TOL, capacity_limit

QUEUEING_STRATEGIES = ("BestEffortFIFO", "StrictFIFO")
WHEN_CAN_BORROW = ("MayStopSearch", "TryNextFlavor")
WHEN_CAN_PREEMPT = ("MayStopSearch", "TryNextFlavor")
PREFERENCES = ("BorrowingOverPreemption", "PreemptionOverBorrowing")
#: Kueue's fairSharing.preemptionStrategies lists it accepts; the first is its default
STRATEGIES = (("LessThanOrEqualToFinalShare", "LessThanInitialShare"), ("LessThanOrEqualToFinalShare",),
              ("LessThanInitialShare",))
DEFAULT_STRATEGIES = STRATEGIES[0]
#: each preference's rank of (mode, borrows) found on a flavor, lower first ((Fit, NoBorrow) is taken at once);
#: modes as Kueue's flavor assigner orders them: fit > reclaim (every target in another queue) > preempt
MODE_RANK = {"BorrowingOverPreemption": {("fit", True): 1, ("reclaim", False): 2, ("reclaim", True): 3,
                                         ("preempt", False): 4, ("preempt", True): 5},
             "PreemptionOverBorrowing": {("reclaim", False): 1, ("preempt", False): 2, ("fit", True): 3,
                                         ("reclaim", True): 4, ("preempt", True): 5}}


def _requests(data: AllocationModel, v: int, partial: bool) -> list[tuple[int, int]]:
    """Row v's counts to try, largest first: the roles' maxima, then (partial admission)
    every smaller count down to the minima (each role clamped to its bounds), so the
    largest count that fits is admitted, as Kueue's search for it finds."""
    lo, hi = data.rows.lo[v], data.rows.hi[v]
    out = [(int(hi[0]), int(hi[1]))]
    if partial:
        for k in range(int(max(hi[0], hi[1])) - 1, 0, -1):
            c = (int(min(max(k, lo[0]), hi[0])), int(min(max(k, lo[1]), hi[1])))
            if c != out[-1]:
                out.append(c)
    return out


def kueue_admit(data: AllocationModel, *, strategy: str, when_can_borrow: str, partial: bool,
                preempted: list[int] | None = None, when_can_preempt: str = "TryNextFlavor",
                preference: str = "BorrowingOverPreemption",
                reasons: dict[int, str] | None = None, fair_sharing: bool = False,
                strategies: tuple[str, ...] = DEFAULT_STRATEGIES,
                shares: dict[str, float] | None = None) -> dict[int, tuple[int, int]]:
    """The admitted rows {row: (c0, c1)} (module docstring); the jobs evicted by
    preemption are appended to ``preempted``; ``reasons`` receives, per job left out, why
    (:func:`pending_reason`'s words: each flavor tried and the quota or capacity row that
    stops it, or the StrictFIFO head it waits behind). ``fair_sharing``: Kueue's fair sharing
    (module docstring) with its ``preemptionStrategies`` ``strategies``; ``shares`` receives each
    queue's share value at the end (Kueue's ``status.fairSharing.weightedShare``)."""
    inst = data.instance
    rows = data.rows
    limit = capacity_limit(rows.cap)
    used = np.zeros(len(rows.cap))
    T, R = len(inst.accelerators), len(inst.resources)
    flavor_index = {f: t for t, f in enumerate(inst.flavors)}
    queue_of = {q.name: q for q in inst.queues or []}
    #: per queue, the resources it holds under a shared flavor (R,)
    shared_mask = {q.name: np.array([shared_flavor(inst, q, name) is not None for name in inst.resources], dtype=bool)
                   for q in inst.queues or []}

    #: each queue's cohort tree by its root (hierarchical cohorts: reclaimWithinCohort reaches the whole tree)
    tree_of: dict[str, str | None] = {q.name: (inst.cohort_chain(q.cohort) or [None])[-1] for q in inst.queues or []}

    if fair_sharing and any(c.parent is not None for c in inst.cohorts or []):
        raise InputError("kueue-admission", "fair_sharing: fair sharing over hierarchical cohorts is not modelled "
                                            "(flat cohorts only)")
    tree = CohortTree(inst)
    lendable = {root: np.array([sum(tree.subtree(("cohort", root), f, res)[0] for f in inst.flavors)
                                for res in inst.resources]) for root in tree.parent if tree.parent[root] is None}

    def share(queue: str | None, extra: np.ndarray | None = None, t: int = -1) -> float:
        """Kueue's share value of a queue (fair_sharing.go): per resource, what it borrows (usage above
        its nominal quota, summed over flavors; ``extra`` (R,) added on type t) x 1000 / what its
        cohort can lend of it; the largest, divided by its weight (0 with borrowing: infinite)."""
        q = queue_of.get(queue) if queue is not None else None
        root = tree_of[q.name] if q is not None else None
        if root is None:
            return 0.0
        borrowed = np.zeros(R)
        sharing = shared_mask[queue]
        for tt in range(T):  # per type's flavor; a shared flavor's resources once (every type's use in it)
            mine = used_by(queue, tt)
            if extra is not None:
                mine = mine + (extra if tt == t else np.where(sharing, extra, 0.0))
            over = np.maximum(0.0, mine - nominal(queue, tt))
            covered = np.array([name in q.quotas.get(inst.flavors[tt], {}) for name in inst.resources], dtype=bool)
            borrowed += np.where(covered & ~sharing, over, 0.0) + (np.where(sharing, over, 0.0) if tt == 0 else 0.0)
        if not np.any(borrowed > INTEGRAL_TOL):
            return 0.0
        weight = 1.0 if q.fair_sharing_weight is None else q.fair_sharing_weight
        if weight == 0:
            return math.inf
        ratios = [borrowed[r] * 1000.0 / lendable[root][r] for r in range(R) if lendable[root][r] > 0]
        return max(ratios, default=0.0) / weight

    def share_value(queue: str | None, extra: np.ndarray | None = None, t: int = -1) -> float:
        """The share value as Kueue reports and compares it (``weightedShare``): rounded up."""
        value = share(queue, extra, t)
        return value if math.isinf(value) else float(math.ceil(value - INTEGRAL_TOL))
    config: dict[int, tuple[int, int]] = {}
    queue_used: dict[tuple[str, int], np.ndarray] = {}  # (queue, type) -> what its admitted jobs use (R,)

    def use(v: int, c: tuple[int, int]) -> np.ndarray:
        return c[0] * rows.demand[v, 0] + c[1] * rows.demand[v, 1]

    def setting(j: int, field: str, default: str) -> str:
        """The job's queue's setting ``field``, else the solver's ``default``."""
        q = queue_of.get(inst.jobs[j].queue) if inst.jobs[j].queue is not None else None
        return (getattr(q, field) if q is not None else None) or default

    def queue_strategy(name: str | None) -> str:
        q = queue_of.get(name) if name is not None else None
        return (q.queueing_strategy if q is not None else None) or strategy

    def nominal(queue: str, t: int) -> np.ndarray:
        """The queue's nominal quota of each resource on type t (R,), 0 where it has none (a
        resource it holds under a shared flavor: that quota, on every type)."""
        q = queue_of[queue]
        per = q.quotas.get(inst.flavors[t], {})
        return np.array([q.quotas[g][name].nominal if (g := shared_flavor(inst, q, name)) is not None
                         else per[name].nominal if name in per else 0.0 for name in inst.resources])

    def used_by(queue: str, t: int) -> np.ndarray:
        """What the queue's admitted jobs use on type t (R,), counting under a shared flavor what
        they use on every type."""
        mine = queue_used.get((queue, t), np.zeros(R))
        if not shared_mask[queue].any():
            return mine
        total = sum((u_ for (name, _), u_ in queue_used.items() if name == queue), np.zeros(R))
        return np.where(shared_mask[queue], total, mine)

    def nominal_room(j: int, v: int, u: np.ndarray) -> bool:
        """Whether the job's queue stays within its nominal quota on row v's flavor (no borrowing)."""
        job = inst.jobs[j]
        if job.queue is None:
            return True
        t = int(data.kind[v])
        mine = used_by(job.queue, t)
        need = u[t * R:(t + 1) * R]
        return bool(np.all((need <= 0) | (mine + need <= capacity_limit(nominal(job.queue, t)))))

    def borrowing(queue: str, t: int, need: np.ndarray) -> bool:
        """Whether the queue uses more than its nominal quota on type t of a resource in ``need``."""
        mine = used_by(queue, t)
        return bool(np.any((need > 0) & (mine > capacity_limit(nominal(queue, t)))))

    admitted: dict[int, tuple[int, tuple[int, int]]] = {}  # job -> (row, counts)

    def admit(j: int, v: int, c: tuple[int, int], sign: float = 1.0) -> None:
        """Count job j in (sign 1) or out (sign -1, an eviction) of the usage."""
        nonlocal used
        u = sign * use(v, c)
        used = used + u
        if sign > 0:
            config[v] = c
            admitted[j] = (v, c)
        else:
            config.pop(v)
            admitted.pop(j)
        queue = inst.jobs[j].queue
        if queue is not None:
            t = int(data.kind[v])
            queue_used[queue, t] = queue_used.get((queue, t), np.zeros(R)) + u[t * R:(t + 1) * R]

    def preemption(j: int, v: int, c: tuple[int, int]) -> tuple[list[int], bool] | None:
        """Classic preemption for job j on row v at counts c (module docstring): the targets whose
        eviction makes room, and whether j then borrows; None when its queue cannot preempt there.
        Changes nothing (the targets are evicted and given back)."""
        job = inst.jobs[j]
        policy = queue_of[job.queue].preemption if job.queue is not None else None
        if policy is None or (policy.within_cluster_queue == "Never" and policy.reclaim_within_cohort == "Never"):
            return None
        tree = tree_of[job.queue]

        def eligible(k: int) -> bool:
            other = inst.jobs[k]
            if other.queue == job.queue:
                rule = policy.within_cluster_queue
                return rule != "Never" and (other.weight < job.weight or (
                    rule == "LowerOrNewerEqualPriority" and other.weight == job.weight and other.arrival > job.arrival))
            rule = policy.reclaim_within_cohort
            return (rule != "Never" and tree is not None and other.queue is not None
                    and tree_of[other.queue] == tree and (rule == "Any" or other.weight < job.weight))

        t = int(data.kind[v])
        u = use(v, c)
        need = u[t * R:(t + 1) * R]
        bwc = not fair_sharing and policy.borrow_within_cohort != "Never" and policy.reclaim_within_cohort != "Never"
        while_borrowing = bwc or (fair_sharing and policy.reclaim_within_cohort != "Never")  # Kueue: may preempt
        if not math.isfinite(float(rows.time_s(v, *c))) or (  # while borrowing
                not while_borrowing and np.any(need > capacity_limit(nominal(job.queue, t)))):
            return None  # classic preemption: the request must be within the queue's nominal quota
        candidates = [k for k, (w, _) in admitted.items() if int(data.kind[w]) == t and eligible(k)
                      and (inst.jobs[k].queue == job.queue or borrowing(inst.jobs[k].queue, t, need))]
        candidates.sort(key=lambda k: (inst.jobs[k].queue == job.queue, inst.jobs[k].weight, -inst.jobs[k].arrival, k))
        if fair_sharing:
            return fair_preemption(j, v, u, t, need, candidates)
        own = [k for k in candidates if inst.jobs[k].queue == job.queue]
        # the preemption page's heuristics, tried in turn: (candidates, borrowing allowed)
        if len(own) == len(candidates):
            heuristics = [(candidates, True)]  # 1: all in the preemptor's queue
        else:
            heuristics = []
            if bwc:  # 2: borrowWithinCohort: other queues' of lower priority, up to the threshold
                limit_w = policy.max_priority_threshold
                heuristics.append(([k for k in candidates if inst.jobs[k].queue == job.queue or (
                    inst.jobs[k].weight < job.weight and (limit_w is None or inst.jobs[k].weight <= limit_w))], True))
            if not borrowing(job.queue, t, need):  # 3: its queue under nominal: without borrowing
                heuristics.append((candidates, False))
            heuristics.append((own, True))  # 4: its own queue's only
        for pool, may_borrow in heuristics:
            found = greedy_targets(j, v, u, t, need, pool, may_borrow)
            if found is not None:
                return found
        return None

    def settle(j: int, v: int, u: np.ndarray, taken: dict[int, tuple[int, tuple[int, int]]],
               fits: Any) -> tuple[list[int], bool] | None:
        """The end of a preemption's dry run: when job j fits with ``taken`` evicted, give back in
        reverse each target it can do without (Kueue's minimisation); then every target back. The
        targets and whether j borrows, or None."""
        found = None
        if fits():
            for k in reversed(list(taken)):
                admit(k, *taken[k])
                if fits():
                    del taken[k]
                else:
                    admit(k, *taken[k], sign=-1.0)
            found = (sorted(taken), not nominal_room(j, v, u))
        for k, (w, ck) in taken.items():
            admit(k, w, ck)
        return found if found is not None and found[0] else None

    def greedy_targets(j: int, v: int, u: np.ndarray, t: int, need: np.ndarray, pool: list[int],
                       may_borrow: bool) -> tuple[list[int], bool] | None:
        """One heuristic of classic preemption: take ``pool``'s workloads in order until job j fits
        (without borrowing unless ``may_borrow``; then skipping a queue that no longer borrows), then
        give back in reverse each it can do without. Changes nothing; None when j does not fit."""
        job = inst.jobs[j]

        def fits() -> bool:
            return bool(np.all(used + u <= limit)) and (may_borrow or nominal_room(j, v, u))

        taken: dict[int, tuple[int, tuple[int, int]]] = {}  # the targets, in the order taken
        for k in pool:
            if fits():
                break
            if not may_borrow and inst.jobs[k].queue != job.queue and not borrowing(inst.jobs[k].queue, t, need):
                continue  # that queue no longer borrows
            taken[k] = admitted[k]
            admit(k, *taken[k], sign=-1.0)
        return settle(j, v, u, taken, fits)

    def fair_preemption(j: int, v: int, u: np.ndarray, t: int, need: np.ndarray,
                        candidates: list[int]) -> tuple[list[int], bool] | None:
        """Fair-sharing preemption (preemption.md, "Fair Sharing"; Kueue's fair_strategy.go) for job j
        on row v using u: while j does not fit, the queue with the highest share value among those
        with candidates (the preemptor's own share counting j; a queue at share 0 other than j's
        is passed over; ties: the later queue) gives a target: j's own queue its first candidate;
        another queue its first candidate that passes the first strategy (LessThanOrEqualToFinalShare:
        j's share with it <= that queue's share without the candidate; LessThanInitialShare: < its
        share now), the others kept for the second strategy, which takes one candidate per queue
        whose share now is above j's. Then minimised in reverse. Changes nothing."""
        job = inst.jobs[j]
        by_queue: dict[str, list[int]] = {}
        for k in candidates:
            by_queue.setdefault(inst.jobs[k].queue, []).append(k)
        order = [q.name for q in inst.queues or []]
        taken: dict[int, tuple[int, tuple[int, int]]] = {}

        def fits() -> bool:
            return bool(np.all(used + u <= limit))

        def take(k: int) -> None:
            taken[k] = admitted[k]
            admit(k, *taken[k], sign=-1.0)

        def share_without(name: str, k: int) -> float:
            """Queue ``name``'s share value once k is evicted."""
            w, ck = admitted[k]
            admit(k, w, ck, sign=-1.0)
            value = share_value(name)
            admit(k, w, ck)
            return value

        def next_queue(lists: dict[str, list[int]], pruned: set[str]) -> str | None:
            best, best_share = None, -1.0
            for name in order:
                if name in pruned:
                    continue
                value = share_value(name, need, t) if name == job.queue else share_value(name)
                if (value == 0 and name != job.queue) or not lists.get(name):
                    pruned.add(name)
                elif value >= best_share:
                    best, best_share = name, value
            return best

        lists = {name: list(ks) for name, ks in by_queue.items()}
        retry: dict[str, list[int]] = {}
        pruned: set[str] = set()
        while not fits():
            name = next_queue(lists, pruned)
            if name is None:
                break
            if name == job.queue:
                take(lists[name].pop(0))
                continue
            mine, theirs = share_value(job.queue, need, t), share_value(name)
            while lists[name]:
                k = lists[name].pop(0)
                after = share_without(name, k)
                if mine <= after if strategies[0] == "LessThanOrEqualToFinalShare" else mine < theirs:
                    take(k)
                    break
                retry.setdefault(name, []).append(k)
        if not fits() and len(strategies) > 1:  # the second strategy, LessThanInitialShare, once per queue
            pruned = set()
            while not fits():
                name = next_queue(retry, pruned)
                if name is None:
                    break
                k = retry[name].pop(0)
                if share_value(job.queue, need, t) < share_value(name):
                    take(k)
                pruned.add(name)
        return settle(j, v, u, taken, fits)

    row_names = data.resource_names

    def short(v: int, c: tuple[int, int], u: np.ndarray) -> str:
        """The rows job's row v at counts c does not fit, with what it needs and what is free."""
        over = np.flatnonzero(used + u > limit)
        return "; ".join(f"{'' if row_names[k].startswith(('quota[', 'cohort[')) else 'servers: '}{row_names[k]}: needs {u[k]:g}, "
                         f"{max(0.0, rows.cap[k] - used[k]):g} of {rows.cap[k]:g} free" for k in over.tolist())

    def assign(j: int, *, preempt: bool = True, why: list[str] | None = None) -> tuple[int, tuple[int, int], list[int]] | None:
        """Kueue's flavor assignment for job j now (module docstring): the row, its counts and the
        jobs to evict first, or None. ``preempt=False``: what fits without preemption (the cycle's
        ordering of its heads; jobs without a queue). ``why``: receives, for the full request, each
        flavor's reason for not taking it."""
        job = inst.jobs[j]
        by_type = {int(data.kind[v]): v for v in range(int(data.job_start[j]), int(data.job_start[j + 1]))}
        order = ([flavor_index[f] for f in queue_of[job.queue].quotas if f in flavor_index] if job.queue is not None
                 else list(range(T)))
        stop_borrow = setting(j, "when_can_borrow", when_can_borrow) == "MayStopSearch"
        stop_preempt = setting(j, "when_can_preempt", when_can_preempt) == "MayStopSearch"
        rank = MODE_RANK[setting(j, "fungibility_preference", preference)]
        levels = max((len(_requests(data, v, partial)) for v in by_type.values()), default=0)
        for c_idx in range(levels):
            best: tuple[int, int, tuple[int, int], list[int]] | None = None  # (rank, row, counts, targets)
            for t in order:
                v = by_type.get(t)
                tell = why is not None and c_idx == 0
                if v is None:
                    if tell:
                        why.append(f"flavor {inst.flavors[t]}: " + (
                            f"not among the job's allowed_flavors {job.allowed_flavors}" if job.allowed_flavors is not None
                            and inst.flavors[t] not in job.allowed_flavors else "the job has no speed there"))
                    continue
                reqs = _requests(data, v, partial)
                c = reqs[min(c_idx, len(reqs) - 1)]
                if not math.isfinite(float(rows.time_s(v, *c))):
                    continue
                u = use(v, c)
                if np.all(used + u <= limit):
                    if nominal_room(j, v, u):
                        return v, c, []  # (Fit, NoBorrow): taken at once
                    mode, targets, stop = ("fit", True), [], stop_borrow
                else:
                    pre = preemption(j, v, c) if preempt else None
                    if pre is None:
                        if tell:
                            why.append(f"flavor {inst.flavors[t]}: {short(v, c, u)}"
                                       + ("" if not preempt or queue_of.get(job.queue or "") is None
                                          or queue_of[job.queue].preemption is None else "; preemption finds no room"))
                        continue
                    reclaim = all(inst.jobs[k].queue != job.queue for k in pre[0])
                    mode, targets, stop = ("reclaim" if reclaim else "preempt", pre[1]), pre[0], stop_preempt
                if best is None or rank[mode] < best[0]:
                    best = (rank[mode], v, c, targets)
                if stop:
                    break
            if best is not None:
                return best[1], best[2], best[3]
        return None

    # running workloads stay where they run
    pending = []
    for j, job in enumerate(inst.jobs):
        running = inst.running_counts(job)
        rows_j = {int(data.kind[v]): v for v in range(int(data.job_start[j]), int(data.job_start[j + 1]))}
        t = flavor_index.get(job.running_accelerator or "", 0 if not inst.has_types else None)
        if running is not None and t is not None and t in rows_j:
            names = job.role_names
            c = (running[names[0]], running[names[1]] if len(names) == 2 else 0)
            u = use(rows_j[t], c)
            if math.isfinite(float(rows.time_s(rows_j[t], *c))) and np.all(used + u <= limit):
                admit(j, rows_j[t], c)
                continue
        pending.append(j)
    # the queues, each ordered by priority, then creation
    queues: dict[str | None, list[int]] = {}
    for j in sorted(pending, key=lambda j: (-inst.jobs[j].weight, inst.jobs[j].arrival, j)):
        queues.setdefault(inst.jobs[j].queue, []).append(j)
    blocked: set[str | None] = set()
    while True:
        heads = [(name, js[0]) for name, js in queues.items() if js and name not in blocked and name is not None]
        if not heads:
            break
        def fair_key(head: tuple[str, int]) -> tuple[float, float, float, int]:
            """Kueue's fair-sharing tournament: the head whose queue's share value with it admitted is
            lowest, then priority, then creation."""
            name, j = head
            found = assign(j, preempt=False)
            t = int(data.kind[found[0]]) if found is not None else -1
            extra = use(found[0], found[1])[t * R:(t + 1) * R] if found is not None else None
            return share_value(name, extra, t), -inst.jobs[j].weight, inst.jobs[j].arrival, j

        def cycle_order() -> Iterator[tuple[int, str]]:
            """The cycle's heads in Kueue's order: those that fit without borrowing first, then by
            priority and creation; with fair sharing, one at a time by :func:`fair_key` (the share
            values change with each admission)."""
            if fair_sharing:
                left = list(heads)
                while left:
                    best = min(left, key=fair_key)
                    left.remove(best)
                    yield best[1], best[0]
                return
            scored = []
            for name, j in heads:
                found = assign(j, preempt=False)
                fits_nominal = found is not None and nominal_room(j, found[0], use(found[0], found[1]))
                scored.append((not fits_nominal, -inst.jobs[j].weight, inst.jobs[j].arrival, j, name))
            for *_, j, name in sorted(scored, key=lambda s: s[:4]):
                yield j, name

        for j, name in cycle_order():
            why: list[str] = []
            chosen = assign(j, why=why)  # now: earlier heads of this cycle may have taken the room
            queues[name].pop(0)
            if reasons is not None:
                reasons.pop(j, None)
                if chosen is None:
                    reasons[j] = pending_reason(inst, j, why, partial)
            if chosen is not None:
                v, c, targets = chosen
                for k in targets:  # evicted; Kueue admits j once their pods are gone
                    admit(k, *admitted[k], sign=-1.0)
                    if reasons is not None:
                        reasons[k] = f"preempted to admit {inst.jobs[j].id}"
                admit(j, v, c)
                if preempted is not None:
                    preempted.extend(targets)
            elif queue_strategy(name) == "StrictFIFO":
                blocked.add(name)
                if reasons is not None:
                    for k in queues[name]:
                        reasons[k] = f"StrictFIFO: queue {name}'s head {inst.jobs[j].id} does not fit, and blocks it"
    for j in queues.get(None, []):  # jobs without a queue: after every queue, arrival order
        why = []
        found = assign(j, preempt=False, why=why)
        if found is not None:
            admit(j, found[0], found[1])
        elif reasons is not None:
            reasons[j] = pending_reason(inst, j, why, partial)
    if reasons is not None:
        for j in list(reasons):
            if j in admitted:
                reasons.pop(j)  # admitted in a later cycle
    if shares is not None:
        shares.update({q.name: share_value(q.name) for q in inst.queues or []})
    return config


def pending_reason(inst: Instance, j: int, why: list[str], partial: bool) -> str:
    """Why job j is left out: per flavor tried (its queue's order), the rows its full request does
    not fit, with what it needs and what is free."""
    job = inst.jobs[j]
    least = "" if not partial or all(r.min == r.max_count for r in job.roles.values()) else \
        f" (nor any count down to its minimum {', '.join(f'{n} {r}' for r, n in ((r, job.roles[r].min) for r in job.role_names))})"
    if not why:
        return "no flavor of its queue fits" + least
    return f"{'; '.join(why) if len(why) == 1 else ' | '.join(why)}{least}"


@register("kueue-admission", problem="allocation", exact=False, backend="python", accelerator_types=True, quotas=True)
class KueueAdmission:
    """Kueue's admission: queue heads by priority and creation, the first flavor that fits its quota, borrowing within limits."""

    #: contract checks it fails as Kueue does (schedopt.testing.checks.known_deviations)
    contract_deviations = {
        "oversubscribed": "Kueue admits a workload's full request when it fits (partial admission only when it "
                          "does not), so the first job takes every slot it asks for",
    }

    def __init__(self, *, queueing_strategy: str = "BestEffortFIFO", when_can_borrow: str = "MayStopSearch",
                 when_can_preempt: str = "TryNextFlavor", fungibility_preference: str = "BorrowingOverPreemption",
                 partial_admission: bool = True, bound: bool = True, fair_sharing: bool = False,
                 preemption_strategies: str = ",".join(DEFAULT_STRATEGIES)):
        strategies = tuple(x.strip() for x in str(preemption_strategies).split(",") if x.strip())
        if strategies not in STRATEGIES:
            raise InputError("kueue-admission", "preemption_strategies: Kueue accepts "
                             + " or ".join(",".join(x) for x in STRATEGIES) + f", got {preemption_strategies!r}")
        self.fair_sharing, self.strategies = bool(fair_sharing), strategies
        for option, value, known in (("queueing_strategy", queueing_strategy, QUEUEING_STRATEGIES),
                                     ("when_can_borrow", when_can_borrow, WHEN_CAN_BORROW),
                                     ("when_can_preempt", when_can_preempt, WHEN_CAN_PREEMPT),
                                     ("fungibility_preference", fungibility_preference, PREFERENCES)):
            if value not in known:
                raise InputError("kueue-admission", f"{option}: expected one of {', '.join(known)}, got {value!r}")
        self.strategy, self.when_can_borrow = queueing_strategy, when_can_borrow
        self.when_can_preempt, self.preference = when_can_preempt, fungibility_preference
        self.partial, self.bound = bool(partial_admission), bool(bound)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_typed(instance)
        preempted: list[int] = []
        pending: dict[int, str] = {}
        shares: dict[str, float] = {}
        config = kueue_admit(data, strategy=self.strategy, when_can_borrow=self.when_can_borrow, partial=self.partial,
                             preempted=preempted, when_can_preempt=self.when_can_preempt, preference=self.preference,
                             reasons=pending, fair_sharing=self.fair_sharing, strategies=self.strategies, shares=shares)
        options: dict[str, Any] = {"queueing_strategy": self.strategy, "when_can_borrow": self.when_can_borrow,
                                   "when_can_preempt": self.when_can_preempt, "fungibility_preference": self.preference,
                                   "partial_admission": self.partial, "bound": self.bound, "fair_sharing": self.fair_sharing,
                                   "preemption_strategies": ",".join(self.strategies)}
        return heuristic_plan(data, config, solver=self.name, started=started, seed=seed, options=options,  # type: ignore[attr-defined]
                                 metrics={"heuristic_seconds": time.perf_counter() - started,
                                          "preempted": [instance.jobs[j].id for j in preempted],
                                          "pending": {instance.jobs[j].id: pending[j] for j in sorted(pending)},
                                          **({"share_values": shares} if self.fair_sharing else {})},
                                 bound=self.bound)


# ---- plans as Kueue's records (issue 39 §4) -----------------------------------------------------

WORKLOAD_API = "kueue.x-k8s.io/v1beta2"
_DNS = re.compile(r"[^a-z0-9.-]+")


def k8s_name(text: str, limit: int = 63) -> str:
    """``text`` as a Kubernetes object name: lower case, [a-z0-9.-], alphanumeric at both ends."""
    name = _DNS.sub("-", text.lower()).strip("-.")[:limit].strip("-.")
    return name or "x"


def k8s_label(text: str) -> str:
    """``text`` as a DNS label (a pod set's name): lower case, [a-z0-9-], at most 63 characters."""
    return k8s_name(text.replace(".", "-"), 63)


def namespace_of(job_id: str) -> tuple[str, str]:
    """(namespace, name) of a job id: ``namespace/name``, else ``default`` and the id."""
    space, sep, name = job_id.partition("/")
    return (space, name) if sep and space and name else ("default", job_id)


def unique_names(names: list[str], limit: int = 253, *, ids: list[str] | None = None) -> dict[str, str]:
    """Each name's object name, distinct: names that map to one (``Job_1``, ``job-1``; long names cut
    to the limit) get ``-2``, ``-3`` ... in their listing order. Keyed by ``ids`` (one per name) when given."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for job_id, given in zip(ids or names, names):
        base = k8s_name(given, limit)
        name, k = base, 1
        while name in taken:
            k += 1
            tail = f"-{k}"
            name = base[: limit - len(tail)].rstrip("-.") + tail
        taken.add(name)
        out[job_id] = name
    return out


def quantity(value: float, resource: str = "") -> str:
    """A Kubernetes quantity, exact to 12 significant digits: ``memory`` (GiB in instances, as
    ``schedopt import kueue`` reads it) in whole Gi, Mi, Ki or bytes; any other resource an
    integer, whole milli-units (``500m``, ``123456789m``), else a decimal."""
    if resource == "memory":
        size = round(float(value) * 2**30)
        for suffix, unit in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if size % unit == 0 and size:
                return f"{size // unit}{suffix}"
        return str(size)
    value = float(value)
    if value.is_integer():
        return str(int(value))
    milli = round(value * 1000)
    if abs(milli - value * 1000) <= INTEGRAL_TOL * max(1.0, abs(value * 1000)):
        return f"{milli}m"
    return f"{value:.12g}"


#: the conditions Kueue sets on an admitted Workload (their time: the epoch; a plan keeps none)
ADMITTED_CONDITIONS = ("QuotaReserved", "Admitted")


def workload_admissions(instance: Instance, plan: Plan, *, pending: bool = False) -> list[dict[str, Any]]:
    """Each admitted job as a Kueue ``Workload`` (v1beta2) with the ``status.admission``
    Kueue would record: the job's queue as the cluster queue, and per role (pod set) its
    requested count in ``spec.podSets`` and its admitted count in the admission's
    ``podSetAssignments`` with the flavor of each resource it requests (the job's accelerator
    type, or ``default-flavor``) and its resource usage; conditions QuotaReserved and Admitted;
    the flavors the job may take (``allowed_flavors``, else every flavor) as the annotation
    ``schedopt.io/allowed-flavors``, which a re-import reads in place of the pods' tolerations and
    selectors (the exported pod sets carry their requests only), and ``schedopt.io/requests-accounted``:
    the requests are as Kueue accounts them (a re-import applies no Configuration transformation again).
    Names are distinct DNS names within each namespace (:func:`unique_names`); a job whose id is
    ``namespace/name`` (``schedopt import kueue`` where namespaces share a name) is written into that
    namespace, every other job into ``default``. ``spec.queueName`` is the cluster queue's name (an
    instance keeps no LocalQueue names). ``pending``: every job the plan does not admit too, without
    an admission, its condition QuotaReserved False (reason ``Pending``) carrying why
    (``metrics.pending``, as ``kueue-admission`` states it), so the export holds the whole queue.
    Validates against the Workload CRD's schema (``tests/test_quotas.py`` checks it with ``jsonschema``)."""
    flavors = dict(zip(instance.accelerators, instance.flavors))
    queue_of = {q.name: q for q in instance.queues or []}
    exported = [j.id for j in instance.jobs if j.id in plan.allocation or pending]
    spaces: dict[str, list[str]] = {}
    for job_id in exported:
        spaces.setdefault(namespace_of(job_id)[0], []).append(job_id)
    names = {job_id: name for space, ids in spaces.items()
             for job_id, name in unique_names([namespace_of(i)[1] for i in ids], ids=ids).items()}
    why = plan.metrics.get("pending") or {}
    out = []
    for job_id in exported:
        job = instance.jobs[instance.job_index[job_id]]
        counts = plan.allocation.get(job_id)
        flavor = flavors.get((plan.accelerators or {}).get(job_id), instance.flavors[0])
        pod_sets, assignments = [], []
        for role in job.role_names:
            n = int(counts[role]) if counts is not None else 0
            demand = {r: float(v) for r, v in job.roles[role].demand.items() if v > 0}
            pod_sets.append({"name": k8s_label(role), "count": int(job.roles[role].max_count),
                             "minCount": int(job.roles[role].min),
                             "template": {"spec": {"containers": [{"name": k8s_label(role), "resources": {
                                 "requests": {r: quantity(v, r) for r, v in demand.items()}}}]}}})
            assignments.append({"name": k8s_label(role), "count": n,
                                "flavors": {r: k8s_name(shared_flavor(instance, queue_of[job.queue], r) or flavor
                                                        if job.queue is not None else flavor) for r in demand},
                                "resourceUsage": {r: quantity(v * n, r) for r, v in demand.items()}})
        queue = k8s_name(job.queue or "default", 253)
        if counts is not None:
            conditions = [{"type": kind, "status": "True", "reason": kind, "message": f"admitted by {plan.solver}",
                           "lastTransitionTime": "1970-01-01T00:00:00Z"} for kind in ADMITTED_CONDITIONS]
        else:
            conditions = [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                           "message": why.get(job_id, f"not admitted by {plan.solver}"),
                           "lastTransitionTime": "1970-01-01T00:00:00Z"}]
        allowed = job.allowed_flavors if job.allowed_flavors is not None else instance.flavors
        metadata: dict[str, Any] = {"name": names[job_id], "namespace": k8s_name(namespace_of(job_id)[0], 63),
                                    "annotations": {ALLOWED_FLAVORS_ANNOTATION: ",".join(allowed),
                                                    ACCOUNTED_ANNOTATION: "true"}}
        status: dict[str, Any] = {"conditions": conditions}
        if counts is not None:
            status = {"admission": {"clusterQueue": queue, "podSetAssignments": assignments}, **status}
        out.append({"apiVersion": WORKLOAD_API, "kind": "Workload", "metadata": metadata,
                    "spec": {"queueName": queue, "podSets": pod_sets, "priority": int(round(job.weight))},
                    "status": status})
    return out
