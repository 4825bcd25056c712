"""The exact repair of the one allocation model (``optimus-lagrange``'s last step, on
plain and typed rows alike).

Large-neighbourhood search with an exact step: up to ``rounds`` times, the jobs most
likely misplaced (:func:`~schedopt.allocation.price_guided.repair_neighbourhood`: the
admitted jobs dearest at the prices λ per capacity row, those furthest from their
priced-best configuration on any of their rows, and the paused jobs cheapest at the
prices) are re-chosen, row and counts, by the exact model (HiGHS, node-capped) over
the capacity the other jobs leave: first as many of them admitted as fit, then the
least Σ cost keeping that many. What local search cannot do in one move (pause one
job, admit another at more tasks, shrink two others to make room, move a job to
another type) is one step here. A neighbourhood's model keeps at most
``max_configurations`` configurations (those of least reduced cost at λ, and the
current ones); after a round that finds nothing the next one goes further down the
rankings and fills that budget.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from schedopt.allocation.dual import PricingOracle
from schedopt.allocation.lagrange import LagrangeResult, fix_by_reduced_cost
from schedopt.allocation.milp import HighsBackend
from schedopt.allocation.model import AllocationModel, admitted_bound
from schedopt.allocation.price_guided import (MIN_REPAIR_SOLVE_S, REPAIR_JOBS, REPAIR_MAX_CONFIGURATIONS,
                                              REPAIR_MAX_NODES, REPAIR_MISSES, REPAIR_ROUNDS, least_reduced_cost,
                                              repair_neighbourhood)
from schedopt.allocation.problem import ChoiceSet, enumerate_choices
from schedopt.allocation.size_classes import class_rows
from schedopt.deadline import NO_LIMIT, Deadline
from schedopt.tolerances import REPAIR_REL_GAP, REPAIR_SKIP_GAP, improves

Config = dict[int, tuple[int, int]]

#: where reduced-cost fixing against the plan keeps at most this many configurations in all, the repair's
#: neighbourhood is every job (the exact model over those; the rounds below it end there)
WHOLE_REPAIR_CONFIGURATIONS = 400


def _proven(cost: float, bound: float | None) -> bool:
    """Whether ``bound`` proves a plan of ``cost`` within REPAIR_SKIP_GAP (nothing left to repair)."""
    return bound is not None and cost - bound <= REPAIR_SKIP_GAP * max(1.0, abs(cost))


class _Listing:
    """The configurations of the model's rows as the repair needs them: each job's least
    priced cost (J,) at λ, and a neighbourhood's configurations grouped by job with their
    rows. Plain rows priced in closed form are listed per neighbourhood (``dual.py`` prices
    every job); otherwise the model's listing (``AllocationModel.choices``) is read once."""

    def __init__(self, model: AllocationModel, lam: np.ndarray):
        self.model = model
        if model.priced_in_closed_form:
            self.all = None
            self.best, _, _ = PricingOracle(model.rows).price(lam)
            return
        _, cs, row_of = model.choices
        self.all = (cs, row_of, cs.cost + cs.use @ lam)
        best = np.full(model.J, math.inf)
        nonempty = np.diff(cs.start) > 0
        if cs.K:
            best[nonempty] = np.minimum.reduceat(self.all[2], cs.start[:-1][nonempty])
        self.best = best

    def of(self, jobs: np.ndarray, allowed: np.ndarray | None = None) -> tuple[ChoiceSet, np.ndarray]:
        """The configurations of ``jobs`` (sorted job indices), grouped by job, and their rows; where
        listed, only those ``allowed`` (a mask over the model's listing) among them."""
        model = self.model
        if self.all is None:  # plain rows: row v is job v
            cs = enumerate_choices(model.rows, jobs)
            return cs, cs.job
        cs, row_of, _ = self.all
        inside = np.zeros(model.J, dtype=bool)
        inside[jobs] = True
        mask = inside[cs.job]
        if allowed is not None:
            mask &= allowed
        return cs.subset(mask), row_of[mask]

    def fixed(self, lp: LagrangeResult | None, config: Config) -> np.ndarray | None:
        """Reduced-cost fixing against ``config`` (a mask over the model's listing; None where
        nothing is listed or no ``lp`` is given): the configurations some plan admitting at least the
        LP's count and costing no more than ``config`` may use (:func:`fix_by_reduced_cost`), and
        ``config``'s own."""
        if self.all is None or lp is None:
            return None
        cs, row_of, _ = self.all
        allowed = fix_by_reduced_cost(cs, lp, self.model.rows.total_time_s(config))
        allowed[self.model.indices(config, cs, row_of)] = True
        return allowed


def exact_repair(model: AllocationModel, config: Config, lam: np.ndarray, *, bound: float | None = None,
                 lp: LagrangeResult | None = None,
                 jobs: int = REPAIR_JOBS, rounds: int = REPAIR_ROUNDS, misses: int = REPAIR_MISSES,
                 max_configurations: int = REPAIR_MAX_CONFIGURATIONS, clock: Deadline = NO_LIMIT) -> tuple[Config, int]:
    """Repair ``config`` ({row: (c0, c1)}, a feasible plan) at the prices ``lam`` (one per
    capacity row, >= 0: the dual's or the LP's over the plan's admitted count). ``bound``:
    a lower bound on Σ cost among plans admitting as many (nothing is tried when it proves
    the plan within REPAIR_SKIP_GAP). ``lp``: the LP over the model's listed configurations
    whose prices those are (``lam``, its admission row's count at most the plan's); each round's
    neighbourhood then holds only the configurations reduced-cost fixing against the current plan
    keeps (no plan admitting as many and costing less uses the others): at 40 typed `gavel` jobs 47-68
    of 120. A repair never admits fewer jobs, nor raises Σ cost among as many.
    Returns (the plan {row: counts}, repairs made)."""
    rows = model.rows
    if not config or model.J == 0 or _proven(rows.total_time_s(config), bound):
        return config, 0
    listing = _Listing(model, lam)
    can_run = np.isfinite(listing.best)
    backend = HighsBackend(rel_gap=REPAIR_REL_GAP, threads=1, presolve=True, max_nodes=REPAIR_MAX_NODES)
    view = model.by_job
    repairs = offset = 0  # offset: how far down the rankings this round's neighbourhood starts
    size = jobs
    tried: set[bytes] = set()  # neighbourhoods solved already (sorted job indices)
    admits_most: bool | None = None  # whether the admission LP proves no plan admits more than ``config``
    for _ in range(rounds):
        if clock.expired():
            break
        member = np.zeros(model.J, dtype=bool)
        mine = np.full(model.J, math.inf)  # each admitted job's priced cost t + λ·u at its row and counts
        used = np.zeros(rows.R)
        for v, (c0, c1) in config.items():
            u = c0 * rows.demand[v, 0] + c1 * rows.demand[v, 1]
            j = int(model.job[v])
            member[j] = True
            mine[j] = float(rows.time_s(v, c0, c1)) + float(u @ lam)
            used += u
        paused = np.flatnonzero(~member & can_run)
        paused = paused[np.argsort(listing.best[paused], kind="stable")]  # cheapest at the prices first
        allowed = listing.fixed(lp, config)
        if allowed is not None and int(allowed.sum()) <= WHOLE_REPAIR_CONFIGURATIONS:
            # so few configurations can be in a better plan that the exact model over all of them is
            # small: one neighbourhood of every job (a tight bound's fixing, the size classes': 100-160 of
            # 300 at 100 typed `gavel` jobs, where 32-job neighbourhoods took 2-3 models)
            hood = np.flatnonzero(can_run)
        else:
            hood = repair_neighbourhood(member, mine, listing.best, paused, offset, size)
        if not len(hood):
            break
        if hood.tobytes() in tried:  # solved already (the rankings moved little): widen, or stop
            offset += 1
            if offset >= misses:
                break
            continue
        tried.add(hood.tobytes())
        cs, cs_rows = listing.of(hood, allowed)
        if cs.K == 0:
            break
        # after a miss, the next neighbourhood fills the configuration budget: jobs with few
        # configurations (after dominance pruning) are re-chosen many at a time
        fill = max(jobs, min(model.J, int(max_configurations * len(hood) / cs.K)))
        in_hood = np.zeros(model.J, dtype=bool)
        in_hood[hood] = True
        current = {v: c for v, c in config.items() if in_hood[int(model.job[v])]}

        def trim(cs: ChoiceSet, cs_rows: np.ndarray) -> tuple[ChoiceSet, np.ndarray, bool]:
            """At most ``max_configurations`` of ``cs``: the least reduced cost at λ, and ``current``'s."""
            if cs.K <= max_configurations:
                return cs, cs_rows, False
            rc = cs.cost + cs.use @ lam - listing.best[cs.job]
            keep_mask = least_reduced_cost(rc, model.indices(current, cs, cs_rows), max_configurations)
            return cs.subset(keep_mask), cs_rows[keep_mask], True

        cs, cs_rows, trimmed = trim(cs, cs_rows)
        held = sum((c0 * rows.demand[v, 0] + c1 * rows.demand[v, 1] for v, (c0, c1) in current.items()),
                   np.zeros(rows.R))
        sub = replace(view, cap=np.maximum(view.cap - (used - held), 0.0))
        keep, gained = len(current), False
        left = clock.remaining()
        if left is not None and left < MIN_REPAIR_SOLVE_S:
            break
        if keep < len(hood) and admits_most is None:  # (asked once: at 100 typed jobs a count stage costs 8-15 ms)
            admits_most = admitted_bound(model)[0] <= len(config)
        if keep < len(hood) and not admits_most:  # paused jobs in the neighbourhood: can it admit more of them?
            # over every configuration: the fixing holds only among plans admitting no more than ``config``
            wide, wide_rows, wide_trimmed = (cs, cs_rows, trimmed) if allowed is None else trim(*listing.of(hood))
            most = backend.solve_stage(sub, wide, stage="admit", every_job=False, min_admitted=0, time_limit=left,
                                       seed=0)
            if most.solution is not None and len(most.solution) > keep:
                keep, gained = len(most.solution), True
                current = {}  # any plan admitting more is better, whatever its Σ cost
                cs, cs_rows, trimmed = wide, wide_rows, wide_trimmed
            left = clock.remaining()
        # the size classes' ranges of the neighbourhood's jobs in the capacity left them, as rows
        result = backend.solve_stage(sub, cs, stage="time", every_job=False, min_admitted=keep, time_limit=left,
                                     seed=0, hint=model.indices(current, cs, cs_rows) or None,
                                     classes=class_rows(model, cs, admit=keep, cap=sub.cap))
        if (result.solution is not None and len(result.solution) >= keep
                and (gained or improves(float(cs.cost[result.solution].sum()), rows.total_time_s(current)))):
            # (``gained``: the count stage admits more, which any Σ cost repays)
            config = {v: c for v, c in config.items() if not in_hood[int(model.job[v])]}
            config.update({int(cs_rows[k]): (int(cs.counts[k, 0]), int(cs.counts[k, 1])) for k in result.solution})
            repairs += 1
            if gained:
                admits_most = None  # asked again of the larger plan
            if _proven(rows.total_time_s(config), bound):
                break
            if len(hood) == int(can_run.sum()) and not trimmed:
                break  # every job and every configuration: that solve was the exact model's
        else:
            offset, size = offset + 1, fill  # nothing better here: wider, down the rankings
            if offset >= misses:
                break
    return dict(sorted(config.items())), repairs
