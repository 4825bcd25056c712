"""DL2 (schedopt.learn): gradient checks, warm-up accuracy, plans that check,
save/load, and RL after warm-up on a small workload."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import schedopt
from schedopt.generate import generate_instance
from schedopt.learn.dl2 import Policy, solver_for
from schedopt.learn.nets import MLP, policy_gradient
from schedopt.learn.train import RLConfig, accuracy, record_teacher, rl_train, warmup
from schedopt.sim import simulate
from tests.conftest import assert_checked


def numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        up = f()
        x[i] = old - eps
        down = f()
        x[i] = old
        g[i] = (up - down) / (2 * eps)
    return g


@pytest.mark.parametrize("entropy", [0.0, 0.1])
def test_policy_network_gradient(entropy: float) -> None:
    rng = np.random.default_rng(0)
    net = MLP.create((6, 5, 4, 7), seed=1)
    net.W[-1] *= 100  # away from the near-zero init, so the check is not trivial
    X = rng.normal(size=(4, 6))
    mask = np.ones((4, 7), dtype=bool)
    mask[:, 3] = False
    acts = np.array([0, 2, 6, 1])
    w = np.array([1.0, -0.5, 2.0, 0.3])

    def loss() -> float:
        logits, _ = net.forward(X)
        return policy_gradient(logits, mask, acts, w, entropy)[0]

    logits, cache = net.forward(X)
    _, g = policy_gradient(logits, mask, acts, w, entropy)
    gW, gb = net.backward(cache, g)
    for k in range(3):
        assert np.allclose(gW[k], numeric_grad(loss, net.W[k]), atol=1e-6)
        assert np.allclose(gb[k], numeric_grad(loss, net.b[k]), atol=1e-6)


def test_value_network_gradient() -> None:
    rng = np.random.default_rng(2)
    net = MLP.create((5, 4, 3, 1), seed=3)
    net.W[-1] *= 100
    X, y = rng.normal(size=(6, 5)), rng.normal(size=6)

    def loss() -> float:
        v, _ = net.forward(X)
        return float(np.mean((v[:, 0] - y) ** 2))

    v, cache = net.forward(X)
    gW, gb = net.backward(cache, (2 * (v[:, 0] - y) / len(y))[:, None])
    for k in range(3):
        assert np.allclose(gW[k], numeric_grad(loss, net.W[k]), atol=1e-6)
        assert np.allclose(gb[k], numeric_grad(loss, net.b[k]), atol=1e-6)


def test_policy_net_gradient_through_shared_rows() -> None:
    """The row network is shared by every job row; its gradient sums over rows."""
    from schedopt.learn.dl2 import Policy

    pol = Policy.create(J=3, types=("a", "b"), hidden=5, seed=4)
    pol.policy.rows.W[-1] *= 100
    pol.policy.stop.W[-1] *= 100
    rng = np.random.default_rng(5)
    S = rng.normal(size=(4, pol.state_size))
    S[:, [pol.F - 1, 2 * pol.F - 1, 3 * pol.F - 1]] = 1.0  # rows hold jobs
    mask = np.ones((4, pol.n_actions), dtype=bool)
    mask[1, 4] = False
    acts, w = np.array([0, 5, 9, 3]), np.array([1.0, -0.5, 2.0, 0.3])

    def loss() -> float:
        return policy_gradient(pol.policy.forward(S)[0], mask, acts, w, 0.1)[0]

    logits, cache = pol.policy.forward(S)
    gW, gb = pol.policy.backward(cache, policy_gradient(logits, mask, acts, w, 0.1)[1])
    for p, g in zip(pol.policy.params(), [*gW, *gb]):
        assert np.allclose(g, numeric_grad(loss, p), atol=1e-6)


ODD_GRID = [[p, w, float(w) * (1 + 0.5 * (p - 1)) / (1 + 0.1 * w)] for p in (1, 3, 5) for w in (1, 3, 5)]


def odd_grid_instance(n: int = 2, gpus: int = 8) -> schedopt.Instance:
    jobs = [{"id": f"j{i}", "model": "m", "roles": {"worker": {"demand": {"cpu": 1, "gpu": 1}, "min": 1, "max": 8},
                                                    "ps": {"demand": {"cpu": 2}, "min": 1, "max": 8}},
             "speed": {"form": "table", "points": ODD_GRID}, "remaining_steps": 1000} for i in range(n)]
    return schedopt.Instance.model_validate({"schema": "schedopt/instance@1", "name": "odd", "resources": ["cpu", "gpu"],
                                             "servers": [{"name": "s", "count": 1, "capacity": {"cpu": 64, "gpu": gpus}}],
                                             "jobs": jobs})


def test_moves_reach_every_measured_configuration_of_an_odd_grid() -> None:
    """DL2's measurements grid odd counts only: the moves go (1,1) -> (1,3), (3,1), (3,3),
    and every measured point is reachable from the minimum."""
    from schedopt.allocation.problem import compile_allocation
    from schedopt.learn.dl2 import SlotEnv, allowed_grid, next_config

    data = compile_allocation(odd_grid_instance())
    grid = allowed_grid(data, 0)
    assert next_config(grid, (1, 1), (0, 1)) == (1, 3)
    assert next_config(grid, (1, 1), (1, 0)) == (3, 1)
    assert next_config(grid, (1, 1), (1, 1)) == (3, 3)
    assert next_config(grid, (5, 5), (1, 1)) is None
    seen, frontier = {(1, 1)}, [(1, 1)]
    while frontier:
        c = frontier.pop()
        for mv in ((0, 1), (1, 0), (1, 1)):
            nxt = next_config(grid, c, mv)
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    assert seen == {(p, w) for p, w, _ in ODD_GRID}
    env = SlotEnv.start(data, Policy.create(J=4, types=("m",), hidden=8))
    assert env.mask()[:6].all()  # both jobs can take all three moves from (1, 1)


def test_gain_features_are_optimus_eq9(tmp_path: Path) -> None:
    """With ``features="gain"`` each move carries Optimus' eq. 9 (remaining time saved per
    dominant share added), computed from the instance's speed; the best feasible move reads 1."""
    from schedopt.allocation.problem import compile_allocation
    from schedopt.learn.dl2 import ROW_FEATURES, SlotEnv, split_state

    inst = odd_grid_instance()
    data = compile_allocation(inst)
    pol = Policy.create(J=4, types=("m",), hidden=8, features="gain")
    assert pol.F == Policy.create(J=4, types=("m",), hidden=8).F + 6
    env = SlotEnv.start(data, pol)
    speed = inst.jobs[0].speed
    T = {c: 1000 * float(speed.step_time_s(*c)) for c in ((1, 1), (1, 3), (3, 1), (3, 3))}
    # (ps, worker): a worker move adds 2 workers (1 CPU + 1 GPU each; dominant: 2 of 8 GPUs),
    # a PS move adds 2 PS (2 CPUs each: 4 of 64 CPUs), both adds both (GPU still dominant)
    expected = [(T[(1, 1)] - T[(1, 3)]) / 0.25, (T[(1, 1)] - T[(3, 1)]) / (4 / 64), (T[(1, 1)] - T[(3, 3)]) / 0.25]
    assert np.allclose(env.gains[0], expected) and np.allclose(env.gains[1], expected)
    R, g = split_state(env.state()[None, :], pol.J, pol.F)
    rel = R[0, :2, 2 + ROW_FEATURES - 1:2 + ROW_FEATURES + 2]
    assert np.isclose(rel.max(), 1.0) and np.allclose(rel, np.array(expected) / max(expected))
    assert g[0, -1] == 1.0  # some feasible move has a positive gain
    pol.save(tmp_path / "gain.npz")
    assert Policy.load(tmp_path / "gain.npz").features == "gain"


@pytest.mark.skipif(not Path("../shared/data/measured/dl2_config_speed.txt").is_file() and not __import__("os").environ.get("SCHEDOPT_DATA_DIR"),
                    reason="needs ../shared/data (DL2's measured speeds, not redistributed with schedopt)")
def test_every_dl2_model_has_its_own_type_and_can_grow() -> None:
    """The encoding names each of the eight DL2 models (none falls into "other"), and
    every job of the dl2 workload can leave its minimum under the policy's moves."""
    from schedopt.allocation.problem import compile_allocation
    from schedopt.learn.dl2 import DEFAULT_TYPES, SlotEnv

    wl = generate_instance("dl2", jobs=40, servers=40, seed=3, max_tasks=16)
    assert {j.model for j in wl.jobs} <= set(DEFAULT_TYPES) and len({j.model for j in wl.jobs}) == 8
    pol = Policy.create(J=40, hidden=8)
    env = SlotEnv.start(compile_allocation(wl.model_copy(update={"jobs": wl.jobs})), pol)
    m = env.mask()
    assert all(m[3 * r:3 * r + 3].any() for r in range(len(env.rows)))
    assert (env.onehot[:len(env.rows), -1] == 0).all()  # no job is "other"


@pytest.fixture(scope="module")
def warm() -> tuple[Policy, object]:
    train = [generate_instance("optimus-workload", jobs=15, servers=13, seed=s, max_tasks=8) for s in (1, 2)]
    pol = Policy.create(J=16, hidden=32, seed=0)
    samples = record_teacher(train, pol, "drf")
    warmup(pol, samples, epochs=60, seed=0)
    return pol, samples


def test_warmup_reproduces_the_teacher(warm) -> None:
    """Above 90% of the teacher's (drf) decisions on its training states."""
    pol, samples = warm
    assert len(samples) > 50 and accuracy(pol, samples) >= 0.9


def test_trained_policy_plans_check(warm) -> None:
    pol, _ = warm
    wl = generate_instance("optimus-workload", jobs=12, servers=13, seed=7, max_tasks=8)
    from schedopt.sim import simulate

    r = simulate(wl, solver_for(pol), check_plans=True)
    assert r.check_violations == 0, r.first_violation and r.finished == 12
    inst = schedopt.load_instance(Path(__file__).resolve().parent.parent / "instances" / "optimus-testbed.yaml")
    assert_checked(inst, solver_for(pol).solve(inst))
    assert_checked(inst, solver_for(pol.with_rows(3)).solve(inst))  # fewer rows than jobs: the rest stay at their minimum


def test_save_load_same_decisions(warm, tmp_path: Path) -> None:
    pol, _ = warm
    path = tmp_path / "p.npz"
    pol.save(path)
    inst = schedopt.load_instance(Path(__file__).resolve().parent.parent / "instances" / "optimus-testbed.yaml")
    a = solver_for(pol).solve(inst)
    b = assert_checked(inst, schedopt.solve(inst, "dl2", policy=str(path)))
    assert a.allocation == b.allocation and b.metrics["trained"] is True and b.metrics["policy_source"] == "file"


def test_bad_policy_file_is_an_input_error(tmp_path: Path) -> None:
    inst = schedopt.load_instance(Path(__file__).resolve().parent.parent / "instances" / "small-hand.yaml")
    bad = tmp_path / "x.npz"
    bad.write_text("not a policy")
    with pytest.raises(schedopt.InputError, match="x.npz"):
        schedopt.solve(inst, "dl2", policy=str(bad))
    old = tmp_path / "old.npz"
    np.savez(old, J=np.array(3), types=np.array(["a"]))  # an earlier layout
    with pytest.raises(schedopt.InputError, match="layout"):
        schedopt.solve(inst, "dl2", policy=str(old))


def test_cli_learn_writes_policy_and_curve(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from schedopt.cli import app

    runner = CliRunner()
    tr, ev = tmp_path / "tr.yaml", tmp_path / "ev.yaml"
    for seed, path in ((1, tr), (2, ev)):
        assert runner.invoke(app, ["generate", "optimus-workload", "--jobs", "8", "--servers", "6", "--max-tasks", "6",
                                   "--seed", str(seed), "--out", str(path)]).exit_code == 0
    pol, png = tmp_path / "p.npz", tmp_path / "curve.png"
    curve = tmp_path / "curve.csv"
    r = runner.invoke(app, ["learn", str(tr), "--eval", str(ev), "--out", str(pol), "--rounds", "2", "--actors", "1",
                            "--hidden", "16", "--warmup-traces", "1", "--warmup-epochs", "5", "--eval-every", "1",
                            "--plot", str(png), "--curve", str(curve)])
    assert r.exit_code == 0, r.output
    assert pol.exists() and png.stat().st_size > 0 and "held-out mean average JCT" in r.output
    assert len(curve.read_text().splitlines()) == 1 + 3  # header, after warm-up, after rounds 1 and 2
    for bad in (["--reward", "nope"], ["--actors", "0"], ["--workload", "optimus-workload"]):
        r = runner.invoke(app, ["learn", str(tr), "--eval", str(ev), "--out", str(pol), *bad])
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    r = runner.invoke(app, ["learn", str(tr), "--eval", str(ev), "--out", str(tmp_path / "p.txt")])
    assert r.exit_code == 2 and "Traceback" not in r.output
def tiny_trace(seed: int, n: int = 8) -> schedopt.Instance:
    """Eight jobs of two types on 4 GPUs: type "a" speeds up 1.8x per two more PS, "b" hardly;
    PS cost only CPU. DRF gives every job 1 PS; Optimus' greedy gives "a" jobs more."""
    rng = np.random.default_rng(seed)
    jobs = []
    for i in range(n):
        kind = ("a", "b")[int(rng.integers(2))]
        gain = 0.8 if kind == "a" else 0.1
        pts = [[p, w, round(w ** 0.8 * (1 + gain * (p - 1)) / (1 + 0.1 * w), 6)] for p in (1, 3, 5) for w in (1, 3)]
        jobs.append({"id": f"{kind}-{i}", "model": kind, "arrival": round(float(rng.uniform(0, 1800)), 1),
                     "roles": {"worker": {"demand": {"cpu": 2, "gpu": 1}, "min": 1, "max": 5},
                               "ps": {"demand": {"cpu": 4}, "min": 1, "max": 5}},
                     "speed": {"form": "table", "points": pts},
                     "remaining_steps": round(float(rng.uniform(600, 3600)), 1), "new": True})
    return schedopt.Instance.model_validate({"schema": "schedopt/instance@1", "name": f"tiny-{seed}", "resources": ["cpu", "gpu"],
                                             "servers": [{"name": "g", "count": 1, "capacity": {"cpu": 32, "gpu": 4}}],
                                             "jobs": jobs})


TINY_RL = RLConfig(lr=3e-3, gamma=0.5, entropy=0.05)


def warm_tiny(seed: int = 0) -> Policy:
    pol = Policy.create(J=8, types=("a", "b"), hidden=32, seed=seed)
    warmup(pol, record_teacher([tiny_trace(k) for k in range(2)], pol, "drf"), epochs=30, entropy=0.5, seed=seed)
    return pol


def test_rl_improves_the_heldout_jct_over_the_warmup() -> None:
    """A few seconds of actor-critic after the DRF warm-up lowers the held-out average JCT (fixed seeds)."""
    pol = warm_tiny()
    held = [tiny_trace(100 + k) for k in range(4)]
    curve = rl_train(pol, lambda k: tiny_trace(10 + k), rounds=100, config=TINY_RL, heldout=held, eval_every=50)
    assert curve[0].updates == 0 and curve[-1].updates >= 100
    assert curve[-1].heldout_jct_s < curve[0].heldout_jct_s, [c.heldout_jct_s for c in curve]
    for w in held:  # and the learned plans are feasible
        r = simulate(w, solver_for(pol), check_plans=True)
        assert r.check_violations == 0 and r.finished == len(w.jobs)


def test_warmup_from_optimus_greedy_beats_drf_on_heldout_traces() -> None:
    """The teacher sets the warm-up's level: imitating optimus-greedy (with the gain
    features) gives a held-out average JCT below DRF's, within 10% of the teacher's."""
    held = [tiny_trace(100 + k) for k in range(4)]
    pol = Policy.create(J=8, types=("a", "b"), hidden=32, seed=0, features="gain")
    warmup(pol, record_teacher([tiny_trace(k) for k in range(3)], pol, "optimus-greedy"), epochs=30, seed=0)
    jct = {name: np.mean([simulate(w, name).avg_jct_s for w in held]) for name in ("drf", "optimus-greedy")}
    dl2 = np.mean([simulate(w, solver_for(pol), check_plans=True).avg_jct_s for w in held])
    assert dl2 < jct["drf"] and dl2 <= 1.1 * jct["optimus-greedy"], (dl2, jct)


def test_same_seed_same_updates_and_ray_matches_in_process() -> None:
    """Rollouts are pure functions of (weights, trace, seed): two in-process runs and
    one actor on Ray give the same weights after the same rounds."""
    import importlib.util

    from schedopt.learn.train import RayActors

    runs = []
    kinds = ["in-process", "in-process"] + (["ray"] if importlib.util.find_spec("ray") else [])
    for kind in kinds:
        pol = warm_tiny()
        runner = RayActors(1) if kind == "ray" else None
        try:
            rl_train(pol, lambda k: tiny_trace(10 + k), rounds=3, config=TINY_RL, runner=runner)
        finally:
            if runner is not None:
                runner.close()
        runs.append(pol.arrays())
    for other in runs[1:]:
        for key in runs[0]:
            assert np.array_equal(runs[0][key], other[key]), key


def test_shipped_policy_is_the_default_where_it_knows_every_model() -> None:
    """models/dl2/dl2-policy.npz runs when no policy is given and every job's model is one of
    its types (the dl2 workload's); other instances get the untrained policy, and say so."""
    from schedopt.learn.dl2 import SHIPPED

    assert SHIPPED.is_file() and Policy.load(SHIPPED).types
    known = odd_grid_instance()
    known = known.model_copy(update={"jobs": [j.model_copy(update={"model": "vgg-16"}) for j in known.jobs]})
    plan = assert_checked(known, schedopt.solve(known, "dl2"))
    assert plan.metrics["policy_source"] == "shipped" and plan.metrics["trained"] is True
    plan = assert_checked(odd_grid_instance(), schedopt.solve(odd_grid_instance(), "dl2"))  # model "m": unknown
    assert plan.metrics["policy_source"] == "untrained" and plan.metrics["trained"] is False
