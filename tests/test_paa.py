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
