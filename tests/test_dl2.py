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
from schedopt.learn.train import accuracy, evaluate, record_teacher, rl_train, warmup
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


@pytest.fixture(scope="module")
def warm() -> tuple[Policy, object]:
    train = generate_instance("optimus-workload", jobs=15, servers=13, seed=1, max_tasks=8)
    pol = Policy.create(J=16, hidden=64, seed=0)
    samples = record_teacher(train, pol, "drf")
    warmup(pol, samples, epochs=200, seed=0)
    return pol, samples


def test_warmup_reproduces_the_teacher(warm) -> None:
    """Above 95% of the teacher's (drf) decisions on its training states."""
    pol, samples = warm
    assert len(samples) > 50 and accuracy(pol, samples) >= 0.95


def test_trained_policy_plans_check(warm) -> None:
    pol, _ = warm
    wl = generate_instance("optimus-workload", jobs=12, servers=13, seed=7, max_tasks=8)
    from schedopt.sim import simulate

    r = simulate(wl, solver_for(pol), check_plans=True)
    assert r.check_violations == 0, r.first_violation and r.finished == 12
    inst = schedopt.load_instance(Path(__file__).resolve().parent.parent / "instances" / "optimus-testbed.yaml")
    assert_checked(inst, solver_for(pol).solve(inst))


def test_save_load_same_decisions(warm, tmp_path: Path) -> None:
    pol, _ = warm
    path = tmp_path / "p.npz"
    pol.save(path)
    inst = schedopt.load_instance(Path(__file__).resolve().parent.parent / "instances" / "optimus-testbed.yaml")
    a = solver_for(pol).solve(inst)
    b = assert_checked(inst, schedopt.solve(inst, "dl2", policy=str(path)))
    assert a.allocation == b.allocation and b.metrics["trained"] is True


def test_bad_policy_file_is_an_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.npz"
    bad.write_text("not a policy")
    with pytest.raises(schedopt.InputError, match="x.npz"):
        schedopt.solve(schedopt.load_instance(Path(__file__).resolve().parent.parent / "instances" / "small-hand.yaml"),
                       "dl2", policy=str(bad))


def test_rl_after_warmup_runs_and_stays_near_the_warmup_policy(warm) -> None:
    """A few RL episodes after warm-up: the plans keep checking, and average JCT on a
    held-out workload stays within 25% of the warm-up policy's (small-sample noise)."""
    pol, _ = warm
    import copy

    rl = copy.deepcopy(pol)
    held_out = generate_instance("optimus-workload", jobs=12, servers=13, seed=99, max_tasks=8)
    before = evaluate(pol, held_out).avg_jct_s
    curve = rl_train(rl, [generate_instance("optimus-workload", jobs=12, servers=13, seed=20 + k, max_tasks=8)
                          for k in range(2)], seed=0)
    assert len(curve) == 2 and all(c["updates"] > 0 for c in curve)
    after = evaluate(rl, held_out).avg_jct_s
    assert after <= 1.25 * before


def test_cli_learn_writes_policy_and_curve(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from schedopt.cli import app

    runner = CliRunner()
    tr, ev = tmp_path / "tr.yaml", tmp_path / "ev.yaml"
    for seed, path in ((1, tr), (2, ev)):
        assert runner.invoke(app, ["generate", "optimus-workload", "--jobs", "8", "--servers", "6", "--max-tasks", "6",
                                   "--seed", str(seed), "--out", str(path)]).exit_code == 0
    pol, png = tmp_path / "p.npz", tmp_path / "curve.png"
    r = runner.invoke(app, ["learn", str(tr), "--eval", str(ev), "--out", str(pol), "--episodes", "1", "--hidden", "16",
                            "--warmup-epochs", "20", "--plot", str(png)])
    assert r.exit_code == 0, r.output
    assert pol.exists() and png.stat().st_size > 0
    r = runner.invoke(app, ["learn", str(tr), "--eval", str(ev), "--out", str(tmp_path / "p.txt")])
    assert r.exit_code == 2 and "Traceback" not in r.output
