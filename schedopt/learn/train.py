"""Training DL2 (§4.2-4.3, §6.2) in the simulator.

- Supervised warm-up: run an existing scheduler (default ``drf``) on a workload,
  turn each slot's plan into the action sequence that reaches it from the
  admitted minimum (:func:`teacher_actions`), and fit the policy by
  cross-entropy with Adam (learning rate 0.005, mini-batches of 256).
- Online RL: actor-critic. Every slot's samples share the slot's reward
  Σ_i epochs trained / total epochs, and bootstrap from the next slot's
  first state: y = r + γ·V(s'), γ = 0.9. The advantage y - V(s) weights the
  policy gradient, with entropy regularisation (β = 0.1) and job-aware
  ε-greedy exploration (ε = 0.4). The value network regresses on y. Updates
  draw a mini-batch of 256 from a replay buffer of the latest 8192 samples,
  once per slot, with learning rate 0.0001 (DL2 §6.2).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from schedopt.allocation.problem import AllocationData, compile_allocation
from schedopt.instance import Instance
from schedopt.learn.dl2 import Dl2, Policy, SlotEnv, run_policy, solver_for, teacher_actions
from schedopt.learn.nets import Adam, policy_gradient
from schedopt.plan import Plan
from schedopt.sim import simulate


@dataclass
class Samples:
    states: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)

    def add(self, s: np.ndarray, m: np.ndarray, a: int) -> None:
        self.states.append(s)
        self.masks.append(m)
        self.actions.append(a)

    def __len__(self) -> int:
        return len(self.actions)


def record_teacher(workload: Instance, pol: Policy, teacher: str = "drf", seed: int = 0) -> Samples:
    """(state, mask, action) samples of ``teacher``'s decisions in the simulator."""
    out = Samples()

    def observe(t: float, view: Instance, plan: Plan, reward: float) -> None:
        data = compile_allocation(view)
        env = SlotEnv.start(data, pol)
        index = {job.id: j for j, job in enumerate(data.jobs)}
        target = {index[jid]: (c.get("ps", c.get(data.jobs[index[jid]].role_names[0], 0)), c.get("worker", 0))
                  for jid, c in plan.allocation.items()}
        for a in teacher_actions(env, target):
            m = env.mask()
            if not m[a]:
                continue  # a step the teacher took that this action set cannot express here
            out.add(env.state(), m, a)
            if not env.apply(a):
                break

    simulate(workload, teacher, seed=seed, observer=observe)
    return out


def warmup(pol: Policy, samples: Samples, *, epochs: int = 50, lr: float = 0.005, batch: int = 256, seed: int = 0,
           progress: Callable[[int, float], None] | None = None) -> float:
    """Cross-entropy training on the teacher's samples; returns the final accuracy
    (share of samples whose argmax action is the teacher's)."""
    rng = np.random.default_rng(seed)
    X, M, A = np.array(samples.states), np.array(samples.masks), np.array(samples.actions)
    opt = Adam(pol.policy, lr)
    for epoch in range(epochs):
        order = rng.permutation(len(A))
        for k in range(0, len(A), batch):
            idx = order[k:k + batch]
            logits, acts = pol.policy.forward(X[idx])
            _, g = policy_gradient(logits, M[idx], A[idx], np.ones(len(idx)))
            opt.step(*pol.policy.backward(acts, g))
        if progress is not None:
            progress(epoch + 1, accuracy(pol, samples))
    return accuracy(pol, samples)


def accuracy(pol: Policy, samples: Samples) -> float:
    if not len(samples):
        return 1.0
    X, M, A = np.array(samples.states), np.array(samples.masks), np.array(samples.actions)
    logits, _ = pol.policy.forward(X)
    return float(np.mean(np.argmax(np.where(M, logits, -np.inf), axis=1) == A))


class _Explorer(Dl2):
    """The policy as the simulator's scheduler during RL: samples actions and records them."""

    def __init__(self, pol: Policy, rng: np.random.Generator, epsilon: float):
        super().__init__(bound=False)
        self._policy, self.rng, self.epsilon = pol, rng, epsilon
        self.slot: list[tuple[np.ndarray, np.ndarray, int]] = []

    def infer(self, data: AllocationData) -> SlotEnv:
        self.slot = []
        return run_policy(data, self.policy, rng=self.rng, epsilon=self.epsilon, record=self.slot)


@dataclass
class RLConfig:
    lr: float = 1e-4
    gamma: float = 0.9
    entropy: float = 0.1
    epsilon: float = 0.4
    batch: int = 256
    buffer: int = 8192


def rl_train(pol: Policy, workloads: list[Instance], *, config: RLConfig | None = None, seed: int = 0,
             progress: Callable[[int, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Actor-critic over ``workloads`` (one simulated episode each). Returns one
    record per episode: average JCT, total reward, updates, seconds."""
    cfg = config or RLConfig()
    rng = np.random.default_rng(seed)
    opt_pi, opt_v = Adam(pol.policy, cfg.lr), Adam(pol.value, cfg.lr)
    d = pol.policy.sizes[0]
    S = np.zeros((cfg.buffer, d))
    M = np.zeros((cfg.buffer, pol.n_actions), dtype=bool)
    A = np.zeros(cfg.buffer, dtype=np.int64)
    Rw = np.zeros(cfg.buffer)
    S2 = np.zeros((cfg.buffer, d))
    T = np.zeros(cfg.buffer, dtype=bool)  # terminal: no bootstrap
    size = head = 0
    curve = []

    def push(samples: list[tuple[np.ndarray, np.ndarray, int]], r: float, s_next: np.ndarray | None) -> None:
        nonlocal size, head
        for s, m, a in samples:
            S[head], M[head], A[head], Rw[head] = s, m, a, r
            S2[head] = s_next if s_next is not None else 0.0
            T[head] = s_next is None
            head = (head + 1) % cfg.buffer
            size = min(size + 1, cfg.buffer)

    def update() -> None:
        idx = rng.integers(0, size, min(cfg.batch, size))
        v, v_acts = pol.value.forward(S[idx])
        v2, _ = pol.value.forward(S2[idx])
        y = Rw[idx] + cfg.gamma * np.where(T[idx], 0.0, v2[:, 0])
        adv = y - v[:, 0]
        logits, acts = pol.policy.forward(S[idx])
        _, g = policy_gradient(logits, M[idx], A[idx], adv, entropy=cfg.entropy)
        opt_pi.step(*pol.policy.backward(acts, g))
        opt_v.step(*pol.value.backward(v_acts, (2.0 * (v[:, 0] - y) / len(idx))[:, None]))  # TD regression

    for ep, wl in enumerate(workloads):
        t0 = time.perf_counter()
        agent = _Explorer(pol, rng, cfg.epsilon)
        pending: list[Any] = []  # [(samples, reward)] waiting for the next slot's first state
        total_r, updates = 0.0, 0

        def observe(t: float, view: Instance, plan: Plan, reward: float) -> None:
            nonlocal total_r, updates
            if pending and agent.slot:
                push(pending[0][0], pending[0][1], agent.slot[0][0])
                pending.clear()
            pending.append((list(agent.slot), reward))
            total_r += reward
            if size:
                update()
                updates += 1

        result = simulate(wl, agent, seed=seed + ep, observer=observe)
        if pending:
            push(pending[0][0], pending[0][1], None)
        rec = {"episode": ep + 1, "avg_jct_s": result.avg_jct_s, "reward": total_r, "updates": updates,
               "seconds": time.perf_counter() - t0}
        curve.append(rec)
        if progress is not None:
            progress(ep + 1, rec)
    return curve


def evaluate(pol: Policy, workload: Instance, seed: int = 0) -> Any:
    """The greedy (argmax) policy in the simulator."""
    return simulate(workload, solver_for(pol), seed=seed)
