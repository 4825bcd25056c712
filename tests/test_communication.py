"""Communication-aware speed in the simulator (schedopt/sim/communication.py):
Optimus Fig. 10, Theorem 1 by brute force, the PS imbalance, and placement and
PS assignment changing completion times."""

from __future__ import annotations

import itertools

import pytest

from schedopt.instance import Instance
from schedopt.placement.paa import mxnet_default, paa
from schedopt.sim import simulate
from schedopt.sim import communication as comm
from tests.conftest import make_instance

SYNC = {"form": "optimus-sync", "theta": [0.0, 1.0, 4.0, 0.0, 0.0], "batch": 1}  # step = 1 + 4·w/p s


def test_fig10_placements() -> None:
    """Optimus Fig. 10: 2 PS, 4 workers, bandwidth 1, one unit per pair; transfer times 3, 3, 2 of the all-remote 4."""
    a = {"s1": {"ps": 1, "worker": 1}, "s2": {"ps": 1, "worker": 1}, "s3": {"worker": 2}}
    b = {"s1": {"ps": 2, "worker": 1}, "s2": {"worker": 3}}
    c = {"s1": {"ps": 1, "worker": 2}, "s2": {"ps": 1, "worker": 2}}
    assert [comm.transfer_share(x) for x in (a, b, c)] == [0.75, 0.75, 0.5]
    assert comm.transfer_share({"s": {"ps": 2, "worker": 4}}) == 0.0  # one server: nothing crosses
    assert comm.transfer_share({"x": {"ps": 2}, "y": {"worker": 4}}) == 1.0  # no pair shares a server


def _placements(p: int, w: int, servers: int, per_server: int):
    for ps in itertools.product(range(p + 1), repeat=servers):
        if sum(ps) != p:
            continue
        for ws in itertools.product(range(w + 1), repeat=servers):
            if sum(ws) == w and all(a + b <= per_server for a, b in zip(ps, ws)):
                yield {f"s{k}": {"ps": ps[k], "worker": ws[k]} for k in range(servers)}


@pytest.mark.parametrize("p,w,per_server", [(2, 4, 3), (3, 3, 2), (2, 6, 4), (1, 5, 3)])
def test_theorem1_even_on_fewest_servers_is_optimal(p: int, w: int, per_server: int) -> None:
    """Theorem 1: PS and workers spread evenly over the fewest servers that hold
    them gives the least transfer time; checked against every placement."""
    servers = 4
    best = min(comm.transfer_share(x) for x in _placements(p, w, servers, per_server))
    k = -(-(p + w) // per_server)  # fewest servers
    even = {f"s{i}": {"ps": p // k + (i < p % k), "worker": w // k + (i < w % k)} for i in range(k)}
    if all(r["ps"] + r["worker"] <= per_server for r in even.values()):
        assert comm.transfer_share(even) == pytest.approx(best)


def _ps_job(speed: dict) -> dict:
    return {"id": "j", "roles": {"ps": {"demand": {"cpu": 1}, "max": 4}, "worker": {"demand": {"cpu": 1}, "max": 4}},
            "speed": speed, "remaining_steps": 10, "model_size": 100, "bandwidth": {"ps": 125, "worker": 125}}


def test_step_time_terms() -> None:
    job = make_instance([_ps_job(SYNC)], {"cpu": 8}).jobs[0]
    counts = {"ps": 2, "worker": 4}
    assert comm.communicates(job)
    assert comm.transfer_term_s(job, 2, 4) == pytest.approx(8.0)
    assert comm.step_time_s(job, counts) == pytest.approx(9.0)  # φ = λ = 1: the profile
    assert comm.step_time_s(job, counts, phi=0.0) == pytest.approx(1.0)  # co-located: transfer free
    assert comm.step_time_s(job, counts, phi=0.5, imbalance=1.5) == pytest.approx(1.0 + 8.0 * 0.75)
    table = make_instance([_ps_job({"form": "table", "points": [[2, 4, 0.5]]})], {"cpu": 8}).jobs[0]
    assert not comm.communicates(table)  # no separable transfer term: the profile speed stays


def test_ps_imbalance() -> None:
    assert comm.ps_imbalance([{"ps": 0, "block": 0, "size": 5}, {"ps": 1, "block": 1, "size": 5}], 2) == 1.0
    assert comm.ps_imbalance([{"ps": 0, "block": 0, "size": 9}, {"ps": 1, "block": 1, "size": 1}], 2) == pytest.approx(1.8)
    blocks = [2_400_000, 1_000, 800_000, 600_000, 500_000, 300_000, 200_000, 64, 64, 128] * 4
    lam_paa = comm.ps_imbalance(paa(blocks, 5), 5)
    lam_mx = comm.ps_imbalance(mxnet_default(blocks, 5, seed=0), 5)
    assert 1.0 <= lam_paa < lam_mx  # PAA spreads the parameters more evenly than MXNet's default


def _colocation_instance() -> Instance:
    """One sync job, 1 PS + 2 workers, on two servers of 3 slots: all on one server (φ = 0) or spread."""
    job = {"id": "j", "roles": {"ps": {"demand": {"cpu": 1}, "min": 1, "max": 1},
                                "worker": {"demand": {"cpu": 1}, "min": 2, "max": 2}},
           "speed": SYNC, "remaining_steps": 100.0, "model_size": 100, "bandwidth": {"ps": 125, "worker": 125}}
    return make_instance([job], {"cpu": 6}, servers=2)


def test_colocated_job_runs_without_transfer() -> None:
    inst = _colocation_instance()
    aware = simulate(inst, "optimus-greedy", placement="optimus-placement", restart_overhead_s=0.0, check_plans=True)
    blind = simulate(inst, "optimus-greedy", placement="optimus-placement", restart_overhead_s=0.0,
                     communication_aware=False)
    assert aware.check_violations == 0 and aware.communication_aware and not blind.communication_aware
    assert aware.mean_transfer_share == 0.0  # Theorem 1: all three tasks on one server
    assert aware.jobs["j"].completion_s == pytest.approx(100 * 1.0)  # step 1 s: no transfer
    assert blind.jobs["j"].completion_s == pytest.approx(100 * (1.0 + 4.0 * 2 / 1))  # the profile's 9 s


def test_spread_placement_is_slower_than_packed() -> None:
    """kube-default spreads (least-allocated); optimus-placement packs: the same allocation runs slower spread."""
    inst = _colocation_instance()
    packed = simulate(inst, "optimus-greedy", placement="optimus-placement", restart_overhead_s=0.0)
    spread = simulate(inst, "optimus-greedy", placement="kube-default", restart_overhead_s=0.0)
    assert spread.mean_transfer_share > packed.mean_transfer_share
    assert spread.jobs["j"].completion_s > packed.jobs["j"].completion_s


def test_ps_assignment_moves_completion() -> None:
    blocks = [2_400_000, 1_000, 800_000, 600_000, 500_000, 300_000, 200_000, 64, 64, 128] * 4
    job = {"id": "j", "roles": {"ps": {"demand": {"cpu": 1}, "min": 5, "max": 5},
                                "worker": {"demand": {"cpu": 1}, "min": 5, "max": 5}},
           "speed": SYNC, "remaining_steps": 100.0, "model_size": 100, "bandwidth": {"ps": 125, "worker": 125},
           "param_blocks": blocks}
    inst = make_instance([job], {"cpu": 10})
    even = simulate(inst, "optimus-greedy", restart_overhead_s=0.0)
    results = {name: simulate(inst, "optimus-greedy", restart_overhead_s=0.0, ps_assignment=name)
               for name in ("paa", "mxnet-default")}
    lam = {"paa": comm.ps_imbalance(paa(blocks, 5), 5), "mxnet-default": comm.ps_imbalance(mxnet_default(blocks, 5, seed=0), 5)}
    assert even.jobs["j"].completion_s == pytest.approx(100 * 5.0)  # 1 + 4·5/5
    for name, r in results.items():
        assert r.ps_assignment == name
        assert r.jobs["j"].completion_s == pytest.approx(100 * (1.0 + 4.0 * lam[name]))
    assert results["paa"].jobs["j"].completion_s < results["mxnet-default"].jobs["j"].completion_s


def test_ps_assignment_must_name_a_ps_assignment_solver() -> None:
    from schedopt.errors import InputError

    with pytest.raises(InputError, match="ps-assignment"):
        simulate(_colocation_instance(), "optimus-greedy", ps_assignment="drf")
