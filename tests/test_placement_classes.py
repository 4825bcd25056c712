"""The aggregated class model of exact placement (schedopt.placement.classes):
shapes and their dominance, decoding, the choice of model, and agreement with
the per-server model on instances with several server classes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import schedopt
from schedopt.generate import generate_instance
from schedopt.placement.classes import (build_class_model, decode, job_shapes, server_classes, shape_pairs, shape_time,
                                        vector_partitions)
from schedopt.placement.exact import coefficients, solve_bruteforce
from schedopt.placement.problem import compile_placement, transfer_time_s
from tests.conftest import assert_checked
from tests.test_placement import placement_instance, ps_job

EXACT = ["placement-milp", "placement-cpsat"]


def test_vector_partitions_count_and_sum() -> None:
    """(2, 2) has 9 vector partitions (OEIS A002774 for (n, n): 2, 9, 31, 109)."""
    assert [len(vector_partitions(n, n) or ()) for n in (1, 2, 3, 4)] == [2, 9, 31, 109]
    for shape in vector_partitions(3, 2) or ():
        assert tuple(map(sum, zip(*shape))) == (3, 2)


def test_shape_time_is_the_placements_transfer_time() -> None:
    """T(s) equals DESIGN.md's T_j of the placement that puts each part on its own server."""
    for p, w in [(2, 4), (3, 3), (1, 2)]:
        for shape in vector_partitions(p, w) or ():
            pk, wk = np.array([a for a, _ in shape]), np.array([b for _, b in shape])
            assert shape_time(shape, p, w, 2.0 / p, 0.5 / p) == pytest.approx(
                transfer_time_s(2.0, p, w, pk, wk, 1.0, 4.0))
            assert shape_pairs(shape, p, w) == p * w - int(pk @ wk)


def test_merging_two_parts_never_raises_the_cost() -> None:
    """The model's exactness rests on it: parts of one job meeting on a server may merge."""
    for p, w in [(2, 3), (3, 3), (4, 2)]:
        for shape in vector_partitions(p, w) or ():
            for i, k in itertools.combinations(range(len(shape)), 2):
                merged = tuple(x for n, x in enumerate(shape) if n not in (i, k)) + (
                    (shape[i][0] + shape[k][0], shape[i][1] + shape[k][1]),)
                assert shape_time(merged, p, w, 1.0, 0.7) <= shape_time(shape, p, w, 1.0, 0.7) + 1e-12
                assert shape_pairs(merged, p, w) <= shape_pairs(shape, p, w)


@pytest.mark.parametrize("kind", ["sum", "cross_pairs"])
def test_every_shape_is_dominated_by_a_kept_one(kind: str) -> None:
    """Each shape has an undominated refinement (packs whenever it does) of no higher cost."""
    p, w = 3, 4
    kept = job_shapes(p, w, 1.0, 0.6, kind) or ()
    cost = (lambda s: shape_pairs(s, p, w)) if kind == "cross_pairs" else (lambda s: shape_time(s, p, w, 1.0, 0.6))

    def refines(fine: tuple, coarse: tuple) -> bool:
        """Can ``fine``'s parts be grouped into ``coarse``'s? (small cases: try all groupings)"""
        if not coarse:
            return not fine
        target, rest = coarse[0], coarse[1:]
        for r in range(1, len(fine) + 1):
            for idx in itertools.combinations(range(len(fine)), r):
                if tuple(map(sum, zip(*[fine[i] for i in idx]))) == target:
                    left = tuple(x for n, x in enumerate(fine) if n not in idx)
                    if refines(left, rest):
                        return True
        return False

    assert len(kept) < len(vector_partitions(p, w) or ())
    for shape in vector_partitions(p, w) or ():
        assert any(cost(k) <= cost(shape) + 1e-12 and refines(k, shape) for k in kept), shape


def test_one_role_jobs_have_one_shape_of_single_tasks() -> None:
    assert job_shapes(0, 3, 0.0, 0.0, "sum") == (((0, 1), (0, 1), (0, 1)),)


def test_server_classes_group_identical_capacities() -> None:
    cap = np.array([[4.0, 1.0], [2.0, 0.0], [4.0, 1.0], [2.0, 0.0], [8.0, 2.0]])
    assert [c.tolist() for c in server_classes(cap)] == [[0, 2], [1, 3], [4]]


def test_decode_puts_every_part_on_a_slot_and_merges_a_jobs_parts() -> None:
    inst = placement_instance([ps_job("a", 2, 2), ps_job("b", 1, 1)], servers=2, slots=4)
    data = compile_placement(inst)
    cm = build_class_model(data, "sum", *coefficients(data))
    assert cm is not None and len(cm.classes) == 1
    one = [s for s, shape in enumerate(cm.shapes[0]) if len(shape) == 1][0]
    split = [s for s, shape in enumerate(cm.shapes[1]) if len(shape) == 2][0]
    # pattern filling a server with the whole of job a; the other server with b's two single parts
    ia, ib = cm.part_item[0][(2, 2)], cm.part_item[1][cm.shapes[1][split][0]]
    q_a = [q for q, row in enumerate(cm.patterns[0]) if row[ia] >= 1][0]
    q_b = [q for q, row in enumerate(cm.patterns[0]) if row[ib] >= 2][0]
    z = np.zeros(len(cm.patterns[0]), dtype=np.int64)
    z[q_a] += 1
    z[q_b] += 1
    P, W = decode(data, cm, [one, split], [z])
    assert P.sum(axis=1).tolist() == [2, 1] and W.sum(axis=1).tolist() == [2, 1]
    assert sorted(np.count_nonzero(P + W, axis=1).tolist()) == [1, 1]  # b's parts met on one server and merged


def mixed_instance(seed: int) -> schedopt.Instance:
    """2-4 jobs of 1-2 PS and 1-3 workers on two classes: CPU-only servers (PS only) and GPU servers."""
    rng = np.random.default_rng(seed)
    jobs, alloc = [], {}
    for i in range(int(rng.integers(2, 5))):
        p, w = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        jobs.append({"id": f"j{i}", "roles": {"ps": {"demand": {"cpu": 1}, "max": p},
                                              "worker": {"demand": {"cpu": 1, "gpu": 1}, "max": w}},
                     "model_size": float(rng.integers(1, 5)), "bandwidth": {"ps": 1.0, "worker": float(rng.integers(1, 3))}})
        alloc[f"j{i}"] = {"ps": p, "worker": w}
    return schedopt.Instance.from_dict({
        "schema": "schedopt/instance@1", "name": "mixed", "resources": ["cpu", "gpu"],
        "servers": [{"name": "c", "count": 1, "capacity": {"cpu": 3, "gpu": 0}},
                    {"name": "g", "count": 2, "capacity": {"cpu": 3, "gpu": 2}}],
        "jobs": jobs, "allocation": alloc})


@pytest.mark.parametrize("objective", ["sum", "max", "cross_pairs"])
@pytest.mark.parametrize("seed", range(5))
def test_two_server_classes_match_brute_force(seed: int, objective: str) -> None:
    inst = mixed_instance(seed)
    placed, best, _ = solve_bruteforce(inst, objective)  # type: ignore[arg-type]
    for solver in EXACT:
        plan = assert_checked(inst, schedopt.solve(inst, solver, objective=objective))
        assert plan.metrics["model"] == "classes" and plan.metrics["class_model"]["classes"] == 2
        assert plan.status == schedopt.Status.OPTIMAL, plan.message
        assert (plan.objective.admitted, plan.objective.value) == (placed, pytest.approx(best, abs=1e-6))


def test_class_model_equals_server_model_on_three_classes() -> None:
    """`generate placement-classes` (GPU, CPU-only, double-size servers): both models, both backends agree."""
    inst = generate_instance("placement-classes", jobs=8, servers=4, seed=2, max_tasks=3)
    plans = {(s, m): assert_checked(inst, schedopt.solve(inst, s, model=m, seed=0)) for s in EXACT for m in ("classes", "servers")}
    values = {(p.objective.admitted, round(p.objective.value, 9)) for p in plans.values()}
    assert len(values) == 1 and all(p.status == schedopt.Status.OPTIMAL for p in plans.values()), values


def test_running_jobs_kept_in_place_use_the_server_model() -> None:
    """With ``previous`` and moves="first", server identity matters: the per-server model runs the
    later stages (the first, the most jobs placed, is the same on the class model and runs there)."""
    inst = placement_instance([ps_job("a", 1, 1), ps_job("b", 1, 1)], servers=2, slots=2)
    inst = schedopt.Instance.from_dict({**inst.to_dict(), "previous": {"a": {"s-1": {"ps": 1, "worker": 1}}}})
    kept = assert_checked(inst, schedopt.solve(inst, "placement-cpsat"))
    assert kept.metrics["model"] == "servers (the count on the class model)"
    assert kept.placement["a"] == {"s-1": {"ps": 1, "worker": 1}}
    fresh = assert_checked(inst, schedopt.solve(inst, "placement-cpsat", moves="ignore"))
    assert fresh.metrics["model"] == "classes" and fresh.objective.value == kept.objective.value == 0


def test_unknown_model_is_an_input_error() -> None:
    inst = placement_instance([ps_job("a", 1, 1)], servers=1, slots=2)
    with pytest.raises(schedopt.InputError, match="model"):
        schedopt.solve(inst, "placement-milp", model="pattern")
