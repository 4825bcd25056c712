"""The registered allocation solvers of Optimus's model (eq. 5-8): each a class
whose options are its ``__init__`` arguments and whose ``solve`` calls the
kernels below it (``greedy.py``, ``price_guided.py``, ``typed.py``) or the
lexicographic drivers (``exact.py``, ``typed.py``) with a backend (``milp.py``,
``cpsat.py``). Nothing imports this module but the problem's discovery.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from schedopt.allocation.admission import DEFAULT_ADMISSION, admit, check_admission
from schedopt.allocation.cpsat import CpSatBackend
from schedopt.allocation.exact import solve_exact, warm_backend
from schedopt.allocation.greedy import StopRule, greedy_allocate
from schedopt.allocation.objectives import OBJECTIVES
from schedopt.allocation.milp import HighsBackend
from schedopt.allocation.plans import heuristic_plan
from schedopt.allocation.price_guided import PricedAllocation, allocate_at_prices, dual_admission, minimum_counts
from schedopt.allocation.relaxation import relax_in_price_space
from schedopt.allocation.repair import exact_repair
from schedopt.allocation.model import AllocationModel, admitted_bound, compile_typed
from schedopt.allocation.problem import compile_allocation
from schedopt.allocation.typed import TYPE_CHOICES, typed_greedy
from schedopt.deadline import Deadline
from schedopt.gcpause import paused_gc
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.plan import Plan
from schedopt.registry import register
from schedopt.tolerances import MIP_REL_GAP, REPAIR_SKIP_GAP


def _objective(solver: str, objective: str | None) -> str | None:
    """The ``objective`` option checked: None (the instance's ``policy.objective``) or one of OBJECTIVES."""
    if objective is not None and objective not in OBJECTIVES:
        raise InputError(solver, f"objective: expected one of {', '.join(OBJECTIVES)}, got {objective!r}")
    return objective


def _branch_proof(solver: str, value: Any) -> bool:
    """The ``branch_proof`` option checked: whether an optimum only the backend proves gets a search
    for a branch certificate (within its node-LP budget, branching.node_lp_budget; False: the backend's word is stated)."""
    if not isinstance(value, bool):
        raise InputError(solver, f"branch_proof: expected true or false, got {value!r}")
    return value


def _branch_budget(search: bool, started: float, time_limit: float | None) -> float | None:
    """Seconds a heuristic's plan may spend on a branch certificate (None: no search): what its time
    limit leaves (inf without one); the search's own budget is counted in node LPs, as an exact solve's."""
    if not search:
        return None
    left = Deadline(time_limit, started).remaining()
    return math.inf if left is None else max(0.0, left)


def _posed(instance: Instance, objective: str | None) -> Instance:
    """The instance with the objective the solver was asked for (None: its own)."""
    return instance if objective is None else instance.with_objective(objective)


def _with_objective(options: dict[str, Any], objective: str | None) -> dict[str, Any]:
    return options if objective is None else {**options, "objective": objective}


@register("optimus-greedy", problem="allocation", exact=False, backend="numpy", accelerator_types=True, quotas=True,
          restarts=True, objectives=True)
class OptimusGreedy:
    """Optimus §4.1 marginal-gain greedy (eq. 9), with the LP-relaxation bound."""

    def __init__(self, *, stop_rule: StopRule = "skip", priority_factor: float = 0.95, bound: bool = True,
                 admission: str = DEFAULT_ADMISSION, accelerator_choice: str = "aware", objective: str | None = None,
                 branch_proof: bool = False):
        self.objective = _objective("optimus-greedy", objective)
        self.branch_proof = _branch_proof("optimus-greedy", branch_proof)
        if accelerator_choice not in TYPE_CHOICES:
            raise InputError("optimus-greedy", f"accelerator_choice: expected one of {', '.join(TYPE_CHOICES)}, got {accelerator_choice!r}")
        self.accelerator_choice = accelerator_choice
        if stop_rule not in ("skip", "paper"):
            raise InputError("optimus-greedy", f'stop_rule: expected "skip" or "paper", got {stop_rule!r}')
        check_admission("optimus-greedy", admission)
        self.admission = admission
        if not (isinstance(priority_factor, (int, float)) and 0 < priority_factor <= 1):
            raise InputError("optimus-greedy", f"priority_factor: expected a number in (0, 1], got {priority_factor!r}")
        self.stop_rule = stop_rule
        self.priority_factor = float(priority_factor)
        self.bound = bool(bound)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        instance = _posed(instance, self.objective)
        options = {"stop_rule": self.stop_rule, "priority_factor": self.priority_factor, "bound": self.bound}
        if instance.typed:  # accelerator types, queues or spread (typed.py): a type per job, then eq. 9 on it
            # arrays, dicts and HiGHS runs, no cycles: the collector waits until the plan is made (a full
            # pass inside the call walks the host's whole heap: 80 ms of a 20 ms call at 144 jobs)
            with paused_gc():
                model = compile_typed(instance)
                config, counters, lp = typed_greedy(model, self.accelerator_choice, stop_rule=self.stop_rule,
                                                    priority_factor=self.priority_factor)
                counters.update({"heuristic_seconds": time.perf_counter() - started,
                                 "accelerator_choice": self.accelerator_choice})
                return heuristic_plan(model, config, solver=self.name, started=started, seed=seed, bound=self.bound,
                                      lp=lp, options=_with_objective({**options, "accelerator_choice": self.accelerator_choice,
                                                                      "branch_proof": self.branch_proof}, self.objective),
                                      metrics=counters, branch_budget_s=_branch_budget(self.branch_proof, started, time_limit),
                                      quick_tree=True,  # a tree within 1 % where the LP leaves more (plans.QUICK_TREE_LPS)
                                      adopt=self.accelerator_choice != "blind")  # the type-blind baseline keeps its plan
        data = compile_allocation(instance)
        _, start = admit(data, self.admission)
        config, counters = greedy_allocate(data, start, stop_rule=self.stop_rule, priority_factor=self.priority_factor)
        greedy_s = time.perf_counter() - started
        return heuristic_plan(AllocationModel.of_jobs(data), config, solver=self.name, started=started, seed=seed,
                              options=_with_objective({**options, "admission": self.admission,
                                                       "branch_proof": self.branch_proof}, self.objective),
                              metrics={**counters, "heuristic_seconds": greedy_s}, bound=self.bound,
                              branch_budget_s=_branch_budget(self.branch_proof, started, time_limit))

    def warm_up(self) -> None:
        """Import and run the branch search once (a typed plan's quick tree)."""
        from schedopt.allocation.branching import warm_up_search  # imported when a plan first needs a tree

        warm_up_search()


@register("optimus-milp", problem="allocation", exact=True, backend="pyomo+highs", supports_time_limit=True,
          accelerator_types=True, quotas=True, restarts=True, objectives=True)
class OptimusMilp:
    """Exact multiple-choice model of Optimus eq. 5-8 (Pyomo + HiGHS)."""

    def __init__(self, *, rel_gap: float = MIP_REL_GAP, threads: int = 1, presolve: bool = False,
                 objective: str | None = None, branch_proof: bool = True):
        self.objective = _objective("optimus-milp", objective)
        self.rel_gap = float(rel_gap)
        self.threads = int(threads)
        self.presolve = bool(presolve)
        self.branch_proof = _branch_proof("optimus-milp", branch_proof)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        instance = _posed(instance, self.objective)
        backend = HighsBackend(self.rel_gap, self.threads, self.presolve)
        options = _with_objective({"rel_gap": self.rel_gap, "threads": self.threads, "presolve": self.presolve,
                                   "branch_proof": self.branch_proof}, self.objective)
        return solve_exact(backend, self.name, instance, time_limit=time_limit, seed=seed, options=options,
                           branch_proof=self.branch_proof)

    def warm_up(self) -> None:
        """Import and run the backend once (:func:`~schedopt.allocation.exact.warm_backend`)."""
        warm_backend(HighsBackend(self.rel_gap, self.threads, self.presolve))


@register("optimus-cpsat", problem="allocation", exact=True, backend="cp-sat", supports_time_limit=True, requires=("ortools",),
          accelerator_types=True, quotas=True, restarts=True, objectives=True)
class OptimusCpSat:
    """Exact multiple-choice model of Optimus eq. 5-8 (OR-Tools CP-SAT, integer-scaled)."""

    def __init__(self, *, workers: int = 1, objective: str | None = None, branch_proof: bool = True):
        self.objective = _objective("optimus-cpsat", objective)
        self.workers = int(workers)
        self.branch_proof = _branch_proof("optimus-cpsat", branch_proof)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        instance = _posed(instance, self.objective)
        return solve_exact(CpSatBackend(self.workers), self.name, instance, time_limit=time_limit, seed=seed,
                           options=_with_objective({"workers": self.workers, "branch_proof": self.branch_proof},
                                                   self.objective),
                           branch_proof=self.branch_proof)

    def warm_up(self) -> None:
        """Import and run the backend once (:func:`~schedopt.allocation.exact.warm_backend`)."""
        warm_backend(CpSatBackend(self.workers))


@register("optimus-lagrange", problem="allocation", exact=False, backend="numpy", supports_time_limit=True,
          accelerator_types=True, quotas=True, restarts=True, objectives=True)
class OptimusLagrange:
    """Dual-price rounding, eq. 9 filling and local search (shift and trade moves), with the certified bound."""

    def __init__(self, *, admission: str = DEFAULT_ADMISSION, max_moves: int = 2000, bound: bool = True,
                 repair: bool = True, objective: str | None = None, branch_proof: bool = True):
        self.objective = _objective("optimus-lagrange", objective)
        self.branch_proof = _branch_proof("optimus-lagrange", branch_proof)
        check_admission("optimus-lagrange", admission)
        if max_moves < 0:
            raise InputError("optimus-lagrange", f"max_moves: expected an integer >= 0, got {max_moves!r}")
        self.admission, self.max_moves, self.bound, self.repair = admission, int(max_moves), bool(bound), bool(repair)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        clock = Deadline(time_limit, started)
        instance = _posed(instance, self.objective)
        if instance.typed:
            return self._solve_typed(instance, clock=clock, seed=seed)
        data = compile_allocation(instance)
        admitted, _ = admit(data, self.admission)
        minimums = minimum_counts(data)
        metrics: dict[str, Any] = {}
        config: dict[int, tuple[int, int]] = {}
        dual = None
        if admitted:
            candidates = [np.array(admitted, dtype=np.int64)]
            if len(admitted) < data.J:  # the dual with an admission row proposes its own set
                proposed = dual_admission(data, len(admitted), minimums)
                if proposed is not None and set(proposed.tolist()) != set(admitted):
                    candidates.append(proposed)
            results = [allocate_at_prices(data, members, minimums, max_moves=self.max_moves, clock=clock)
                       for members in candidates]
            best = max(results, key=lambda r: (len(r.members), -r.total_s))  # the first among equals
            if self.repair and self.max_moves:  # the exact repair, on the better plan only
                dual_now = best.dual
                if len(best.members) < int((minimums[:, 0] >= 0).sum()):  # jobs paused: the dual with the admission row
                    dual_now = relax_in_price_space(data, admit=len(best.members)).result
                repaired, repairs = exact_repair(AllocationModel.of_jobs(data), best.config(), dual_now.lam,
                                                 bound=dual_now.bound, clock=clock)
                total = data.total_time_s(repaired)
                if repairs and (len(repaired), -total) > (len(best.members), -best.total_s):  # more jobs, or as many in less Σ t
                    counts = np.zeros_like(best.counts)
                    for j, c in repaired.items():
                        counts[j] = c
                    best = PricedAllocation(members=np.array(sorted(repaired), dtype=np.int64), total_s=total,
                                            counts=counts, dual=best.dual, metrics={**best.metrics, "repairs": repairs})
            dual = best.dual if len(best.members) == data.J else None  # the plan's bound when it covers every job
            config = best.config()
            metrics = {**best.metrics, "admission_candidates": len(candidates)}
        metrics["heuristic_seconds"] = time.perf_counter() - started
        if clock.expired():
            metrics["stopped_in"] = "local search (time limit)"  # the clock, not max_moves, ended the search
        return heuristic_plan(AllocationModel.of_jobs(data), config, solver=self.name, started=started, seed=seed,  # type: ignore[attr-defined]
                              options=self._options(), metrics=metrics, bound=self.bound, dual=dual,
                              branch_budget_s=_branch_budget(self.branch_proof, started, time_limit))

    def _options(self) -> dict[str, Any]:
        return _with_objective({"admission": self.admission, "max_moves": self.max_moves, "bound": self.bound,
                                "repair": self.repair, "branch_proof": self.branch_proof}, self.objective)

    def _solve_typed(self, instance: Instance, *, clock: Deadline, seed: int | None) -> Plan:
        """Accelerator types and quotas (typed.py): the type-aware greedy's types and
        admitted jobs (LP-guided), then steps 2-5 over those rows with the types fixed
        (prices per (type, resource) and quota row); the search's replacements keep one
        type per job. The better of the two plans is kept. A greedy plan the LP proves
        optimal within the exact backends' gap (MIP_REL_GAP) is kept as it is."""
        with paused_gc():  # as in optimus-greedy (the exact repair below builds Pyomo models: not paused)
            data = compile_typed(instance)
            config, counters, lp = typed_greedy(data, "aware")
        metrics: dict[str, Any] = {"accelerator_plan": counters.get("accelerator_plan"), "accelerator_choice": "aware"}
        if config and self.admission != DEFAULT_ADMISSION:
            metrics["admission_note"] = "typed instances admit by the type-aware greedy's rule"
        if config and "proven_at" in counters:  # the LP proves it within the exact backends' gap: nothing to search
            metrics["started_from"] = "typed greedy (proven optimal by the LP within the exact backends' gap)"
        elif config:
            rows = data.rows
            members = np.array(sorted(config), dtype=np.int64)
            total = data.rows.total_time_s(config)
            if rows.rigid[members].all():  # one configuration per row: the prices could only keep the plan
                metrics["started_from"] = "typed greedy (rigid rows: no counts to price)"
            else:
                priced = allocate_at_prices(rows, members, minimum_counts(rows), max_moves=self.max_moves,
                                            clock=clock, groups=data.job)
                if len(priced.members) >= len(config) and priced.total_s < total:
                    config, total = priced.config(), priced.total_s
                    metrics.update(priced.metrics)
                    metrics["started_from"] = "typed greedy, then prices over its rows"
                else:
                    metrics["started_from"] = "typed greedy (the priced allocation was not better)"
            # (proven by the LP's bound: the size classes' proves more plans within 1e-4, but on 1,000-job
            # snapshots the repair still finds 1e-5 there)
            proven = lp is None or ((lp.proof.admit or data.J) == len(config)  # Σ t proven among as many admitted,
                                    and total - lp.bound <= REPAIR_SKIP_GAP * max(1.0, total)
                                    and _admits_most(data, config))  # and no plan admits more
            if self.repair and self.max_moves and lp is not None and not proven:  # the exact repair
                # its fixing at the tighter bound's prices (where jobs are paused and a class is cut, the
                # size classes'): it keeps fewer of each neighbourhood's configurations
                config, metrics["repairs"] = exact_repair(data, config, lp.lp.lam, lp=_tighter_fixing(data, lp),
                                                          clock=clock)
        metrics["heuristic_seconds"] = clock.spent()
        if clock.expired():
            metrics["stopped_in"] = "local search (time limit)"
        return heuristic_plan(data, config, solver=self.name, started=clock.started, seed=seed,  # type: ignore[attr-defined]
                              options=self._options(), metrics=metrics, bound=self.bound, lp=lp,
                              branch_budget_s=_branch_budget(self.branch_proof, clock.started, clock.limit_s))

    def warm_up(self) -> None:
        """Import and run the branch search once (a typed plan's tree)."""
        from schedopt.allocation.branching import warm_up_search  # imported when a plan first needs a tree

        warm_up_search()


def _tighter_fixing(data: Any, lp: Any) -> Any:
    """What reduced-cost fixing reads (a bound and each listed configuration's reduced cost): the LP's
    (``lp.lp``), or the size classes' at its count where their bound is the higher
    (:meth:`~schedopt.allocation.size_classes.SizeClassBound.reduced_costs`; the class LP is the typed
    greedy's, kept on the model, or solved here from the LP's basis): on 100 typed `gavel` jobs the LP
    leaves 2-4 % where the classes leave 1e-4."""
    if lp.proof.admit is None:
        return lp.lp
    from schedopt.allocation.size_classes import size_class_proof

    classes = size_class_proof(data, admit=lp.proof.admit, lp_x=lp.lp.x, lp_basis=lp.lp.basis)
    if classes is None or not classes.bound > lp.lp.bound:
        return lp.lp
    return classes.reduced_costs(data.choices[1])


def _admits_most(data: Any, config: dict[int, tuple[int, int]]) -> bool:
    """Whether the typed admission LP proves no plan admits more jobs than ``config``."""
    return len(config) == data.J or admitted_bound(data)[0] <= len(config)
