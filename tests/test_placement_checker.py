"""The placement checkers (schedopt/placement/checker.py): T_j recomputed, joint plans' placement metrics."""

from __future__ import annotations

import schedopt
from tests.test_pipeline import TESTBED
from tests.test_placement import placement_instance, ps_job

def test_checker_recomputes_transfer_time() -> None:
    inst = placement_instance([ps_job("j", 2, 4)], servers=3, slots=3)
    plan = schedopt.solve(inst, "optimus-placement")
    bad = plan.model_copy(update={"objective": plan.objective.model_copy(update={"value": 1.0})})
    assert any(v.path == "objective.value" for v in schedopt.check(inst, bad))


def test_tampered_joint_placement_metric_fails_check() -> None:
    inst = schedopt.load_instance(TESTBED)
    plan = schedopt.solve(inst, "optimus-greedy+optimus-placement")
    bad = plan.model_copy(update={"metrics": {**plan.metrics, "placement": {**plan.metrics["placement"], "cross_node_pairs": -1}}})
    assert any(v.path == "metrics.placement.cross_node_pairs" for v in schedopt.check(inst, bad))


def test_placement_on_an_unknown_server_is_named() -> None:
    inst = placement_instance([ps_job("j", 1, 2)], servers=2, slots=4)
    plan = schedopt.solve(inst, "optimus-placement")
    bad = plan.model_copy(update={"placement": {"j": {"nowhere": {"ps": 1, "worker": 2}}}})
    assert any(v.path == "placement.j.nowhere" for v in schedopt.check(inst, bad))
