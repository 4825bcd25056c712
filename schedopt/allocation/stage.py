"""What an exact allocation backend answers, and how both exact drivers end.

``StageResult`` keeps why a solve stopped (``termination``) apart from what it
found (``chosen``, ``value``) and what it proved (``bound``), as Pyomo's
``contrib.solver`` results do; every backend (HiGHS, CP-SAT) and every driver
(exact, typed, the repairs) speaks it. ``settled_bound`` is the one rule for the
bound an exact plan states; the time both drivers keep back is named here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from schedopt.allocation.problem import AllocationData, ChoiceSet
from schedopt.deadline import Deadline
from schedopt.instance import Instance
from schedopt.plan import Proof, Termination, relative_gap
from schedopt.tolerances import REPLAYABLE_GAP

#: what both exact drivers keep back: the measured cost of assembling the plan after the last phase,
#: per job (s; 0.12-0.22 s at 16,000 jobs: objective, metrics, certificate), reserved from the phases'
#: time; and the overrun a certified bound may take when the limit stops a solve before its LP bound
FINISH_SECONDS_PER_JOB = 2.0e-5
BOUND_ALLOWANCE_S = 0.15


@dataclass
class StageResult:
    """One backend solve. ``chosen`` is the list of chosen choice indices (or None)."""

    termination: Termination
    chosen: list[int] | None
    value: float | None = None  # the backend's objective (stage 1: admitted count)
    bound: float | None = None  # the backend's proven bound, in the same units
    info: dict[str, Any] = field(default_factory=dict)


class ExactBackend(Protocol):
    #: who proves a bound by branch and bound (a certificate of kind ``backend`` names it)
    label: str
    #: seconds to build and hand over the model per configuration (measured; 0 if unknown)
    seconds_per_choice: float

    def solve_stage(
        self, data: AllocationData, cs: ChoiceSet, *, stage: str, every_job: bool,
        min_admitted: int, time_limit: float | None, seed: int | None, hint: list[int] | None = None,
    ) -> StageResult:
        """``stage`` is ``"admit"`` (max Σ x) or ``"time"`` (min Σ cost·x).
        ``every_job``: each job with choices takes exactly one; else at most one
        and at least ``min_admitted`` in total. ``hint``: choice indices of a
        feasible plan the backend may start from."""
        ...


def no_plan_message(stage: str, result: StageResult) -> str:
    if result.termination == Termination.ERROR:
        detail = ", ".join(f"{k}={v}" for k, v in result.info.items() if "status" in k)
        return f"{stage}: the backend stopped with an error ({detail or 'no detail'}); no plan"
    return f"{stage} found no plan ({result.termination.value})"


def settled_bound(instance: Instance, value: float, admitted: int, *, lp_bound: float, lp_proof: Proof,
                  stage: StageResult, backend_proof: Proof, proven: bool, clock: Deadline, metrics: dict[str, Any],
                  branch: bool = True) -> tuple[float, Proof]:
    """The bound an exact driver states after stage 2, and its proof, for a plan of ``value``
    admitting ``admitted`` jobs: the larger of the LP's bound (its prices prove it) and the
    backend's (only the backend proves it); the LP's when it is within REPLAYABLE_GAP of the
    value (anyone can replay it); for an optimum only the backend proved, a branch certificate
    when one is found in the search's budget (``branch``; allocation's own cost only)."""
    bound = lp_bound if stage.bound is None else max(lp_bound, stage.bound)
    proof = lp_proof if bound <= lp_bound else backend_proof
    if proof is backend_proof:
        lp_gap = relative_gap(value, lp_bound)
        if lp_gap is not None and lp_gap <= REPLAYABLE_GAP:
            return lp_bound, lp_proof
    if proof is backend_proof and proven and branch:
        from schedopt.allocation.branching import certify_optimum  # the search, imported when an optimum needs it

        left = clock.remaining()
        return certify_optimum(instance, value, admitted, bound, proof, spent_s=clock.spent(),
                               left_s=math.inf if left is None else left, metrics=metrics)
    return bound, proof
