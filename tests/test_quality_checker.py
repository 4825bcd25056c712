"""The quality problem's checker (schedopt/quality/checker.py): SLAQ's term and sense."""

from __future__ import annotations

import schedopt
from tests.test_slaq import random_quality_instance

def test_checker_recomputes_the_reduction() -> None:
    inst = random_quality_instance(3)
    plan = schedopt.solve(inst, "slaq-greedy")
    bad = plan.model_copy(update={"objective": plan.objective.model_copy(update={"value": plan.objective.value + 0.1, "gap": None, "bound": None})})
    assert any(v.path == "objective.value" for v in schedopt.check(inst, bad))
    flipped = plan.model_copy(update={"objective": plan.objective.model_copy(update={"sense": "min"})})
    assert any(v.path == "objective.sense" for v in schedopt.check(inst, flipped))
