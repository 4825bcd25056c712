"""What an exact allocation backend is asked, and how the exact driver ends.

Every backend (HiGHS, CP-SAT) answers a stage with the one ``StageResult``
(``schedopt/results.py``, every problem's: why it stopped apart from what it found,
the chosen configuration indices, and what it proved); the driver and the repair
read it. ``settled_bound`` is the one rule for the bound an exact plan states; the
time the driver keeps back is named here too.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

from schedopt.allocation.problem import AllocationData, ChoiceSet
from schedopt.deadline import Deadline
from schedopt.instance import Instance
from schedopt.plan import Proof, Termination, relative_gap
from schedopt.results import StageResult
from schedopt.tolerances import BOUND_NOISE, REPLAYABLE_GAP

if TYPE_CHECKING:
    from schedopt.allocation.size_classes import ClassRows

#: what the exact driver keeps back: the measured cost of assembling the plan after the last phase,
#: per job (s; 0.12-0.22 s at 16,000 jobs: objective, metrics, certificate), reserved from the phases'
#: time; and the overrun a certified bound may take when the limit stops a solve before its LP bound
FINISH_SECONDS_PER_JOB = 2.0e-5
BOUND_ALLOWANCE_S = 0.15


class ExactBackend(Protocol):
    #: who proves a bound by branch and bound (a certificate of kind ``backend`` names it)
    label: str
    #: seconds to build and hand over the model per configuration (measured; 0 if unknown)
    seconds_per_choice: float

    def solve_stage(
        self, data: AllocationData, cs: ChoiceSet, *, stage: str, every_job: bool,
        min_admitted: int, time_limit: float | None, seed: int | None, hint: list[int] | None = None,
        max_admitted: int | None = None, classes: ClassRows | None = None,
    ) -> StageResult:
        """``stage`` is ``"admit"`` (max Σ x) or ``"time"`` (min Σ cost·x).
        ``every_job``: each job with choices takes exactly one; else at most one
        and at least ``min_admitted`` in total. ``hint``: choice indices of a
        feasible plan the backend may start from. ``max_admitted``: a proven ceiling
        on stage 1's count (Σ x <= it), which ends its search once met. ``classes``: the size
        classes' ranges (``size_classes.class_rows``), rows every plan admitting at least
        ``min_admitted`` keeps: added to tighten the relaxation."""
        ...


def no_plan_message(stage: str, result: StageResult) -> str:
    if result.termination == Termination.ERROR:
        detail = ", ".join(f"{k}={v}" for k, v in result.info.items() if "status" in k)
        return f"{stage}: the backend stopped with an error ({detail or 'no detail'}); no plan"
    return f"{stage} found no plan ({result.termination.value})"


def settled_bound(instance: Instance, value: float, admitted: int, *, lp_bound: float, lp_proof: Proof,
                  stage: StageResult, backend_proof: Proof, proven: bool, clock: Deadline, metrics: dict[str, Any],
                  branch: bool = True, allowed_at_least: int = 0, model: Any = None) -> tuple[float, Proof]:
    """The bound an exact driver states after stage 2, and its proof, for a plan of ``value``
    admitting ``admitted`` jobs: the LP's (its prices prove it; anyone can replay it) unless the
    backend proved the plan optimal and the LP leaves more than REPLAYABLE_GAP (a tighter
    backend bound the plan does not state is kept in ``metrics.backend_bound``). For an
    optimum only the backend proved, a branch certificate when one is found in the search's budget
    (``branch``; allocation's own cost only; ``allowed_at_least``: the allowed configurations the
    driver counted, which may rule the search out at once; first, with the driver's ``model``, the
    size classes' bound (``size_classes.py``) when it is within REPLAYABLE_GAP), else the knapsack bound
    (``knapsack.py``) when it is within REPLAYABLE_GAP, else the backend's word."""
    bound = lp_bound if stage.bound is None else max(lp_bound, stage.bound)
    proof = lp_proof if bound <= lp_bound else backend_proof
    if proof is backend_proof:
        lp_gap = relative_gap(value, lp_bound)
        if not proven or (lp_gap is not None and lp_gap <= REPLAYABLE_GAP):
            # a plan the backend did not prove optimal states the LP's bound (anyone can replay it),
            # as does one the LP already proves; the backend's tighter word is kept beside it
            metrics["backend_bound"] = stage.bound
            return lp_bound, lp_proof
    if proof is backend_proof and proven and branch:
        from schedopt.allocation.branching import certify_optimum  # the search, imported when an optimum needs it
        from schedopt.allocation.knapsack import KNAPSACK_METHOD, knapsack_proof

        # the tree first, as for a heuristic's plan (plans.plan_bounds): at 80-100 typed jobs the knapsack's
        # subgradient search costs as much as a tree and closed none of the gaps a tree did
        if model is not None:
            from schedopt.allocation.size_classes import (COLD_CLASS_CONFIGURATIONS, MAX_CLASS_CONFIGURATIONS,
                                                          size_class_proof)

            # priced in closed form, the configurations were never listed: small instances only
            most = COLD_CLASS_CONFIGURATIONS if model.priced_in_closed_form else MAX_CLASS_CONFIGURATIONS
            classes = size_class_proof(model, admit=admitted if admitted < model.J else None, max_configurations=most)
            gap = None if classes is None else relative_gap(value, classes[0])
            if classes is not None and gap is not None and gap <= REPLAYABLE_GAP and classes[0] <= value + BOUND_NOISE * max(1.0, abs(value)):
                metrics.update(classes[2])
                metrics["backend_bound"] = stage.bound
                return classes[0], classes[1]
        left = clock.remaining()
        got = certify_optimum(instance, value, admitted, bound, proof, left_s=math.inf if left is None else left,
                              metrics=metrics, allowed_at_least=allowed_at_least)
        if got[1] is not proof:
            return got
        knapsack = knapsack_proof(instance, lp_proof, lp_bound=lp_bound, target=value)  # capacity kept whole
        if knapsack is not None:
            gap = relative_gap(value, knapsack[0])
            if gap is not None and gap <= REPLAYABLE_GAP:
                metrics["bound_method"] = KNAPSACK_METHOD
                metrics["backend_bound"] = stage.bound
                metrics.pop("branch_certificate", None)
                return knapsack
        return got
    return bound, proof
