"""schedopt.state.ClusterState and instances built in code: one validated path."""

from __future__ import annotations

import pytest

import schedopt
from schedopt import InputError, Instance
from schedopt.state import ClusterState


def test_instance_from_code_rejects_unknown_resource() -> None:
    with pytest.raises(InputError, match=r'jobs\[0\]\.roles\.worker\.demand\.gpux: unknown resource "gpux"'):
        Instance(name="x", resources=["gpu"], servers=[{"name": "s", "capacity": {"gpu": 4}}],
                 jobs=[{"id": "a", "roles": {"worker": {"demand": {"gpux": 1}}}, "remaining_steps": 10,
                        "speed": {"form": "amdahl", "serial": 0.1, "parallel": 1}}])


def test_instance_from_code_fits_loss_history_and_solves() -> None:
    steps = [100 * i for i in range(1, 21)]
    inst = Instance(name="x", resources=["gpu"], servers=[{"name": "s", "capacity": {"gpu": 4}}],
                    jobs=[{"id": "a", "roles": {"worker": {"demand": {"gpu": 1}, "max": 4}},
                           "speed": {"form": "amdahl", "serial": 0.1, "parallel": 1},
                           "loss_history": {"steps": steps, "loss": [1 / (0.001 * s + 1) + 0.1 for s in steps]}}])
    assert inst.jobs[0].remaining_steps is not None and inst.jobs[0].remaining_steps > 0
    plan = schedopt.solve(inst, "optimus-greedy")
    assert plan.allocation == {"a": {"worker": 4}} and schedopt.check(inst, plan) == []


def test_from_dict_defaults_schema_and_names_misspelt_fields() -> None:
    doc = {"name": "x", "resources": ["gpu"], "jobs": []}
    assert Instance.from_dict(doc).schema_ == "schedopt/instance@1"
    with pytest.raises(InputError, match=r'polcy: unknown field \(did you mean "policy"\?\)'):
        Instance.from_dict({**doc, "polcy": {}}, source="f.yaml")


def _state() -> ClusterState:
    state = ClusterState(["gpu", "cpu"], name="live")
    state.add_server("n0", free={"gpu": 4, "cpu": 16}).add_server("n1", free={"gpu": 2, "cpu": 16})
    state.add_ps_job("ps-job", ps={"cpu": 2}, worker={"gpu": 1, "cpu": 2}, max_ps=2, max_workers=4,
                     speed={"form": "optimus-sync", "theta": [0.02, 0.1, 0.3, 0.0, 0.02], "batch": 32},
                     remaining_steps=1000, model_size=100.0, bandwidth={"ps": 1000.0, "worker": 1000.0})
    state.add_allreduce_job("ar-job", per_gpu={"gpu": 1, "cpu": 1}, max_gpus=4,
                            speed={"form": "amdahl", "serial": 0.01, "parallel": 1.0}, remaining_steps=500)
    state.set_running("ps-job", {"n0": {"ps": 1, "worker": 1}})
    return state


def test_cluster_state_builds_a_valid_instance_with_previous_placement() -> None:
    inst = _state().instance()
    assert inst.source == "live" and [j.id for j in inst.jobs] == ["ps-job", "ar-job"]
    assert inst.jobs[1].role_names == ("worker",) and inst.previous == {"ps-job": {"n0": {"ps": 1, "worker": 1}}}
    plan = schedopt.solve(inst, "optimus-greedy+optimus-placement", seed=0)
    assert schedopt.check(inst, plan) == [] and plan.placement


def test_cluster_state_names_the_bad_fact() -> None:
    state = _state()
    state.set_running("ghost", {"n0": {"worker": 1}})
    with pytest.raises(InputError, match=r'live: previous\.ghost: unknown job "ghost"'):
        state.instance()


def test_a_python_callable_speed_is_evaluated_on_the_allowed_counts() -> None:
    state = ClusterState(["gpu"], name="callable")
    state.add_server("n0", free={"gpu": 8})
    state.add_allreduce_job("a", per_gpu={"gpu": 1}, max_gpus=4, speed=lambda n: n / (1 + 0.1 * n), remaining_steps=100)
    state.add_ps_job("b", ps={"gpu": 0}, worker={"gpu": 1}, max_ps=2, max_workers=3,
                     speed=lambda p, w: w / (1 + w / p), remaining_steps=100)
    inst = state.instance()
    assert inst.jobs[0].speed.configurations() == [(1,), (2,), (3,), (4,)]
    assert len(inst.jobs[1].speed.configurations()) == 6
    plan = schedopt.solve(inst, "optimus-milp")
    assert schedopt.check(inst, plan) == [] and plan.status.value == "optimal"
