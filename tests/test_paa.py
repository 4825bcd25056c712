"""Parameter assignment (Optimus §5.3, Table 3): PAA and MXNet's default."""

from __future__ import annotations

from typing import Any

import pytest

import schedopt
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.placement.paa import mxnet_default, paa
from tests.conftest import SHARED_DATA, assert_checked


def blocks_instance(jobs: dict[str, tuple[list[int], int]]) -> Instance:
    doc: dict[str, Any] = {
        "schema": "schedopt/instance@1", "name": "blocks", "resources": ["cpu"],
        "jobs": [{"id": j, "roles": {"ps": {"demand": {"cpu": 1}}, "worker": {"demand": {"cpu": 1}}}, "param_blocks": b}
                 for j, (b, _) in jobs.items()],
        "allocation": {j: {"ps": p, "worker": 1} for j, (_, p) in jobs.items()},
    }
    return Instance.from_dict(doc)


def test_paa_hand_cases() -> None:
    # equal medium blocks: best fit fills PS 0 to avg_size, then PS 1
    assert [(e["ps"], e["block"]) for e in paa([10, 10, 10, 10], 2)] == [(0, 0), (0, 1), (1, 2), (1, 3)]
    # a block above avg_size = 55 is sliced into 55 + 45; the small ones best-fit into PS 1
    out = paa([100, 5, 5], 2)
    assert out == [{"ps": 0, "block": 0, "size": 55}, {"ps": 1, "block": 0, "size": 45},
                   {"ps": 1, "block": 1, "size": 5}, {"ps": 1, "block": 2, "size": 5}]
    # tiny blocks (< 1% of avg_size) go to the PS with the fewest requests
    out = paa([1000, 1000, 1, 1], 2)
    assert sorted(e["ps"] for e in out if e["size"] == 1) == [0, 1]


def test_mxnet_default_slices_large_blocks_evenly() -> None:
    out = mxnet_default([3_000_001, 10], 3, seed=1)
    big = [e for e in out if e["block"] == 0]
    assert [e["ps"] for e in big] == [0, 1, 2] and [e["size"] for e in big] == [1_000_001, 1_000_000, 1_000_000]
    assert mxnet_default([5, 6, 7], 4, seed=3) == mxnet_default([5, 6, 7], 4, seed=3)


def test_missing_ps_count_is_named() -> None:
    doc = {"schema": "schedopt/instance@1", "name": "x", "resources": ["cpu"],
           "jobs": [{"id": "a", "roles": {"ps": {"demand": {"cpu": 1}}, "worker": {"demand": {"cpu": 1}}}, "param_blocks": [5]}]}
    with pytest.raises(InputError, match=r"allocation\.a\.ps: jobs\[0\] has param_blocks"):
        schedopt.solve(Instance.from_dict(doc), "paa")
    doc["jobs"].append({"id": "b", "roles": {"ps": {"demand": {"cpu": 1}}, "worker": {"demand": {"cpu": 1}}},
                        "param_blocks": [5]})
    doc["allocation"] = {"b": {"ps": 1, "worker": 1}, "a": {"worker": 1}}
    with pytest.raises(InputError, match=r"allocation\.a\.ps: jobs\[0\] has param_blocks"):
        schedopt.solve(Instance.from_dict(doc), "paa")


@pytest.mark.skipif(not (SHARED_DATA / "measured" / "mxnet_param_blocks.json").is_file(),
                    reason="needs ../shared/data/measured/mxnet_param_blocks.json (MXNet block lists; not redistributed)")
def test_table3_resnet50() -> None:
    """Optimus Table 3 (ResNet-50, 157 blocks, 10 PS): PAA 0.1M / 1 / 157; MXNet 3.6M / 43 / 247."""
    from schedopt.generate import generate_instance

    inst = generate_instance("optimus-paa", jobs=1, servers=13, max_tasks=10, data_dir=SHARED_DATA)
    p = assert_checked(inst, schedopt.solve(inst, "paa"))
    assert p.metrics["total_requests"] == 157  # no block sliced: the minimum
    assert p.metrics["max_request_difference"] == 1
    assert p.metrics["max_size_difference"] < 150_000  # Table 3: 0.1M
    for seed in range(5):
        m = assert_checked(inst, schedopt.solve(inst, "mxnet-default", seed=seed))
        assert m.metrics["total_requests"] == 247  # 10 blocks >= 10^6 sliced in 10: as Table 3
        assert m.metrics["max_size_difference"] > p.metrics["max_size_difference"]
        assert m.metrics["max_request_difference"] > p.metrics["max_request_difference"]


# ---- the closed-form bound (certificate kind ps-divisibility) ----------------------------------

def _brute_force_min_difference(blocks: list[int], p: int) -> int:
    """The least max-min parameters over p PS, every block sliced into integer parts any way:
    enumerate how many parameters each PS gets (compositions of the total into p parts >= 0)."""
    total = sum(blocks)
    best = total

    def rec(left: int, k: int, lo: int, hi: int) -> None:
        nonlocal best
        if k == 1:
            best = min(best, max(hi, left) - min(lo, left))
            return
        for x in range(left + 1):
            rec(left - x, k - 1, min(lo, x), max(hi, x))

    rec(total, p, total, 0)
    return best


@pytest.mark.parametrize("blocks,p", [([3, 4], 2), ([4, 4], 2), ([5], 3), ([6], 3), ([1, 1, 1], 4), ([7, 2], 3), ([9], 1)])
def test_divisibility_bound_is_the_brute_force_optimum(blocks: list[int], p: int) -> None:
    from schedopt.placement.assignment import divisibility_bound

    inst = blocks_instance({"j": (blocks, p)})
    assert divisibility_bound(inst) == _brute_force_min_difference(blocks, p)


@pytest.mark.parametrize("solver", ["paa", "mxnet-default"])
def test_plans_carry_a_bound_check_strict_replays(solver: str) -> None:
    inst = blocks_instance({"even": ([10, 10, 10, 10], 2), "odd": ([100, 5, 6], 2)})
    options = {"bound": True} if solver == "mxnet-default" else {}
    plan = assert_checked(inst, schedopt.solve(inst, solver, seed=0, **options))
    assert plan.objective.bound == 1 and plan.certificate.bound.kind == "ps-divisibility"
    assert plan.objective.value >= plan.objective.bound
    report = schedopt.checking.check_report(inst, plan, strict=True)
    assert report.ok and any(v.startswith("objective.bound") for v in report.verified)


def test_mxnet_default_states_no_bound_by_default_as_mxnet() -> None:
    inst = blocks_instance({"j": ([10, 3], 2)})
    plan = schedopt.solve(inst, "mxnet-default", seed=0)
    assert plan.objective.bound is None and plan.certificate is None


def test_a_forged_ps_bound_fails_strict() -> None:
    inst = blocks_instance({"j": ([10, 3, 2], 2)})  # 15 over 2 PS: at least 1 apart; unsliced blocks are further
    plan = schedopt.solve(inst, "mxnet-default", seed=0, bound=True)
    assert plan.objective.value > 1
    forged = plan.model_copy(update={"objective": plan.objective.model_copy(update={"bound": float(plan.objective.value),
                                                                                   "gap": 0.0})})
    report = schedopt.checking.check_report(inst, forged, strict=True)
    assert not report.ok and any("objective.bound" in v.path for v in report.violations + report.unverified)
    with pytest.raises(InputError, match="bound"):
        schedopt.get_solver("paa", bound="yes")
