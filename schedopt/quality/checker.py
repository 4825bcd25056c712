"""The checker of quality plans: the count checks of the allocation problem
with SLAQ's term (the predicted loss reduction over T) and a maximisation."""

from __future__ import annotations

from schedopt.allocation.checker import check_counts
from schedopt.checking import Violation
from schedopt.instance import Instance
from schedopt.plan import Plan
from schedopt.allocation.certificates import loss_reduction_cost_grid
from schedopt.quality.problem import predicted_reduction, untyped_only


def check_quality(instance: Instance, plan: Plan) -> list[Violation]:
    """SLAQ §2: bounds, allowed counts, Σ_j a_j·d_j <= C, Σ predicted reduction. An instance
    with accelerator types, queues or spread poses no quality problem (the solvers refuse it)."""
    why = untyped_only(instance)
    if why is not None:
        return [Violation("problem", f"a quality plan cannot answer this instance: {why}")]
    return check_counts(instance, plan, term=predicted_reduction, formula="Σ predicted loss reduction",
                        capacity_ref="SLAQ: Σ_j a_j <= C", sense="max", cost=loss_reduction_cost_grid)


def quality_value(instance: Instance, plan: Plan) -> float:
    """Σ_j predicted loss reduction over the horizon, admitted jobs only."""
    return float(sum(predicted_reduction(instance, j, c) for j, c in plan.allocation.items()))
