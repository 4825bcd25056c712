"""Training DL2 (§4.2-4.3, §6.2) in the simulator.

- Supervised warm-up: run an existing scheduler (default ``drf``) on
  workloads, turn each slot's plan into the moves that reach it from the
  admitted minimum (:func:`schedopt.learn.dl2.teacher_actions`), and fit the
  policy by cross-entropy with Adam (learning rate 0.005, mini-batches of 256).
- RL: synchronous advantage actor-critic over rounds. In a round each of
  ``actors`` parallel actors (Ray tasks, or this process) runs one simulated
  episode of a freshly generated training trace with the current policy,
  sampling actions with job-aware ε-exploration. Every action of a slot gets
  the slot's discounted return G_t = Σ_k γ^k r_{t+k}; the advantage G_t - V(s),
  normalised over the round, weights the policy gradient with entropy
  regularisation, and the value network regresses on G_t. The round's samples
  are used once, in shuffled mini-batches.
- Reward per slot (``reward``): ``progress`` is DL2's Σ_i (steps trained in the
  slot / job i's total steps); ``jct`` is -(jobs in the system during the slot)
  / J, whose undiscounted sum is -Σ JCT / (interval · J), the objective itself.

Rollouts are pure functions of (policy weights, trace, seed), so one actor on
Ray and one in this process give the same updates.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from schedopt.allocation.problem import AllocationData, compile_allocation
from schedopt.instance import Instance
from schedopt.learn.dl2 import Dl2, Policy, SlotEnv, run_policy, solver_for, teacher_actions
from schedopt.learn.nets import Adam, policy_gradient
from schedopt.plan import Plan
from schedopt.sim import simulate

REWARDS = ("progress", "jct")


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


def record_teacher(workloads: Instance | Sequence[Instance], pol: Policy, teacher: str = "drf", seed: int = 0,
                   sim_options: dict[str, Any] | None = None) -> Samples:
    """(state, mask, action) samples of ``teacher``'s decisions in the simulator, over ``workloads``."""
    out = Samples()

    def observe(t: float, view: Instance, plan: Plan, reward: float) -> None:
        data = compile_allocation(view)
        env = SlotEnv.start(data, pol)
        index = {job.id: j for j, job in enumerate(data.jobs)}
        target = {}
        for jid, c in plan.allocation.items():
            j = index[jid]
            names = data.jobs[j].role_names
            target[j] = (c.get("ps", 0), c.get("worker", 0)) if len(names) == 2 else (c.get(names[0], 0), 0)
        record: list[tuple[np.ndarray, np.ndarray, int]] = []
        teacher_actions(env, target, record)
        for sample in record:
            out.add(*sample)

    for wl in [workloads] if isinstance(workloads, Instance) else workloads:
        simulate(wl, teacher, seed=seed, observer=observe, **(sim_options or {}))
    return out


def warmup(pol: Policy, samples: Samples, *, epochs: int = 50, lr: float = 0.005, batch: int = 256, seed: int = 0,
           entropy: float = 0.0, progress: Callable[[int, float], None] | None = None) -> float:
    """Cross-entropy training on the teacher's samples, with an ``entropy`` bonus
    that keeps the policy from certainty (RL must still explore); returns the final
    accuracy (share of samples whose argmax action is the teacher's)."""
    rng = np.random.default_rng(seed)
    X, M, A = np.array(samples.states), np.array(samples.masks), np.array(samples.actions)
    opt = Adam(pol.policy, lr)
    for epoch in range(epochs):
        order = rng.permutation(len(A))
        for k in range(0, len(A), batch):
            idx = order[k:k + batch]
            logits, cache = pol.policy.forward(X[idx])
            _, g = policy_gradient(logits, M[idx], A[idx], np.ones(len(idx)), entropy=entropy)
            opt.step(*pol.policy.backward(cache, g))
        if progress is not None:
            progress(epoch + 1, accuracy(pol, samples))
    return accuracy(pol, samples)


def accuracy(pol: Policy, samples: Samples) -> float:
    if not len(samples):
        return 1.0
    X, M, A = np.array(samples.states), np.array(samples.masks), np.array(samples.actions)
    logits, _ = pol.policy.forward(X)
    return float(np.mean(np.argmax(np.where(M, logits, -np.inf), axis=1) == A))


@dataclass(frozen=True)
class RLConfig:
    """Actor-critic settings. Learning rate, γ, β (entropy) and ε (job-aware exploration)."""

    lr: float = 1e-3
    gamma: float = 0.9
    entropy: float = 0.01
    epsilon: float = 0.1
    batch: int = 256
    reward: str = "progress"

    def __post_init__(self) -> None:
        if self.reward not in REWARDS:
            raise ValueError(f"reward {self.reward!r}; known: {', '.join(REWARDS)}")


class _Explorer(Dl2):
    """The policy as the simulator's scheduler during RL: samples actions and records them per slot."""

    def __init__(self, pol: Policy, rng: np.random.Generator, epsilon: float):
        super().__init__(bound=False)
        self._policy, self.rng, self.epsilon = pol, rng, epsilon
        self.slot: list[tuple[np.ndarray, np.ndarray, int]] = []

    def infer(self, data: AllocationData, pol: Policy) -> SlotEnv:
        self.slot = []
        return run_policy(data, pol, rng=self.rng, epsilon=self.epsilon, record=self.slot)


@dataclass
class Trajectory:
    """One episode: samples (n, ·) with their slot index, and the reward of each slot."""

    states: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    slot: np.ndarray
    rewards: np.ndarray
    avg_jct_s: float
    seconds: float

    def returns(self, gamma: float) -> np.ndarray:
        """Discounted return of each sample's slot, (n,)."""
        G = np.zeros(len(self.rewards))
        acc = 0.0
        for t in range(len(self.rewards) - 1, -1, -1):
            acc = self.rewards[t] + gamma * acc
            G[t] = acc
        return G[self.slot]


def rollout(arrays: dict[str, np.ndarray], workload: Instance, seed: int, config: RLConfig,
            sim_options: dict[str, Any] | None = None) -> Trajectory:
    """One exploring episode of ``workload`` with the policy ``arrays`` (a pure function of its arguments)."""
    t0 = time.perf_counter()
    pol = Policy.from_arrays(arrays)
    agent = _Explorer(pol, np.random.default_rng(seed), config.epsilon)
    S: list[np.ndarray] = []
    M: list[np.ndarray] = []
    A: list[int] = []
    slot: list[int] = []
    rewards: list[float] = []

    def observe(t: float, view: Instance, plan: Plan, reward: float) -> None:
        k = len(rewards)
        for s, m, a in agent.slot:
            S.append(s)
            M.append(m)
            A.append(a)
            slot.append(k)
        rewards.append(reward if config.reward == "progress" else -len(view.jobs) / pol.J)
        agent.slot = []

    result = simulate(workload, agent, seed=seed, observer=observe, **(sim_options or {}))
    d, n_a = pol.state_size, pol.n_actions
    return Trajectory(states=np.array(S).reshape(-1, d), masks=np.array(M, dtype=bool).reshape(-1, n_a),
                      actions=np.array(A, dtype=np.int64), slot=np.array(slot, dtype=np.int64),
                      rewards=np.array(rewards), avg_jct_s=float(result.avg_jct_s), seconds=time.perf_counter() - t0)


class InProcessActors:
    """Rollouts one after the other in this process."""

    def map(self, jobs: list[tuple[Any, ...]]) -> list[Trajectory]:
        return [rollout(*job) for job in jobs]

    def close(self) -> None:
        pass


class RayActors:
    """Rollouts as Ray tasks (one CPU each): a new local Ray with ``workers`` CPUs, or ``address``."""

    def __init__(self, workers: int | None = None, address: str | None = None):
        from schedopt.sweeps.engine import start_ray

        self.ray, self.started = start_ray(workers, address)
        self.remote = self.ray.remote(num_cpus=1, max_retries=0)(rollout)

    def map(self, jobs: list[tuple[Any, ...]]) -> list[Trajectory]:
        arrays = self.ray.put(jobs[0][0]) if jobs else None
        return self.ray.get([self.remote.remote(arrays, *job[1:]) for job in jobs])

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()
            self.started = False


class Learner:
    """The actor-critic update over one round's trajectories."""

    def __init__(self, pol: Policy, config: RLConfig, seed: int = 0):
        self.pol, self.cfg = pol, config
        self.rng = np.random.default_rng(seed)
        self.opt_pi, self.opt_v = Adam(pol.policy, config.lr), Adam(pol.value, config.lr)
        self.updates = 0

    def update(self, trajectories: list[Trajectory]) -> dict[str, float]:
        S = np.concatenate([t.states for t in trajectories])
        M = np.concatenate([t.masks for t in trajectories])
        A = np.concatenate([t.actions for t in trajectories])
        G = np.concatenate([t.returns(self.cfg.gamma) for t in trajectories])
        if not len(A):
            return {"samples": 0, "value_loss": 0.0}
        V = self.pol.value.forward(S)[0][:, 0]
        adv = G - V
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        order = self.rng.permutation(len(A))
        vloss = 0.0
        for k in range(0, len(A), self.cfg.batch):
            idx = order[k:k + self.cfg.batch]
            logits, cache = self.pol.policy.forward(S[idx])
            _, g = policy_gradient(logits, M[idx], A[idx], adv[idx], entropy=self.cfg.entropy)
            self.opt_pi.step(*self.pol.policy.backward(cache, g))
            v, v_cache = self.pol.value.forward(S[idx])
            vloss += float(np.sum((v[:, 0] - G[idx]) ** 2))
            self.opt_v.step(*self.pol.value.backward(v_cache, (2.0 * (v[:, 0] - G[idx]) / len(idx))[:, None]))
            self.updates += 1
        return {"samples": float(len(A)), "value_loss": vloss / len(A)}


@dataclass
class CurvePoint:
    """One point of the learning curve: held-out mean average JCT after ``updates`` updates."""

    round: int
    episodes: int
    updates: int
    seconds: float
    heldout_jct_s: float
    train_jct_s: float | None
    reward_per_slot: float | None
    validation_jct_s: float | None = None
    kept: bool = False  # the weights returned (best on the validation traces)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def mean_jct_s(pol: Policy, workloads: Iterable[Instance], seed: int = 0, sim_options: dict[str, Any] | None = None) -> float:
    """Mean over ``workloads`` of the greedy policy's average JCT (s)."""
    return float(np.mean([evaluate(pol, w, seed=seed, sim_options=sim_options).avg_jct_s for w in workloads]))


def rl_train(pol: Policy, traces: Callable[[int], Instance] | Sequence[Instance], *, rounds: int, actors: int = 1,
             config: RLConfig | None = None, seed: int = 0, heldout: Sequence[Instance] = (), eval_every: int = 0,
             validation: Sequence[Instance] = (),
             runner: Any = None, time_budget_s: float | None = None, sim_options: dict[str, Any] | None = None,
             progress: Callable[[int, dict[str, Any]], None] | None = None) -> list[CurvePoint]:
    """Actor-critic for ``rounds`` rounds of ``actors`` episodes. ``traces(k)``
    gives the k-th training trace (or a list, cycled). Every ``eval_every``
    rounds (and at the start and end) the greedy policy's mean average JCT on
    ``heldout`` is a curve point. ``time_budget_s`` stops after the round that
    passes it. With ``validation`` traces, the weights with the lowest mean
    average JCT on them at an evaluation point (the warm-up's included) are kept
    at the end: checkpoint selection on traces apart from ``heldout``, so the
    held-out figures stay unbiased. Returns the learning curve."""
    cfg = config or RLConfig()
    runner = runner or InProcessActors()
    learner = Learner(pol, cfg, seed=seed)
    get = traces if callable(traces) else (lambda k: traces[k % len(traces)])
    curve: list[CurvePoint] = []
    started = time.perf_counter()

    best: tuple[float, dict[str, np.ndarray]] | None = None

    def point(r: int, trajs: list[Trajectory] | None) -> None:
        nonlocal best
        jct = mean_jct_s(pol, heldout, seed=seed, sim_options=sim_options) if heldout else float("nan")
        val = mean_jct_s(pol, validation, seed=seed, sim_options=sim_options) if validation else None
        if val is not None and (best is None or val < best[0]):
            best = (val, {k: np.array(v) for k, v in pol.arrays().items()})
        rp = train = None
        if trajs:
            train = float(np.mean([t.avg_jct_s for t in trajs]))
            rp = float(np.mean(np.concatenate([t.rewards for t in trajs])))
        curve.append(CurvePoint(round=r, episodes=r * actors, updates=learner.updates,
                                seconds=time.perf_counter() - started, heldout_jct_s=jct, train_jct_s=train,
                                reward_per_slot=rp, validation_jct_s=val))

    point(0, None)
    trajs: list[Trajectory] = []
    r = 0
    for r in range(1, rounds + 1):
        weights = pol.arrays()
        jobs = [(weights, get((r - 1) * actors + a), seed * 1_000_003 + (r - 1) * actors + a, cfg, sim_options)
                for a in range(actors)]
        trajs = runner.map(jobs)
        stats = learner.update(trajs)
        last = r == rounds or (time_budget_s is not None and time.perf_counter() - started >= time_budget_s)
        if (eval_every and r % eval_every == 0) or last:
            point(r, trajs)
        if progress is not None:
            progress(r, {"updates": learner.updates, **stats,
                         "train_jct_s": float(np.mean([t.avg_jct_s for t in trajs])),
                         "heldout_jct_s": curve[-1].heldout_jct_s if curve[-1].round == r else None})
        if last:
            break
    if best is not None:
        kept = Policy.from_arrays(best[1])
        for dst, src in ((pol.policy, kept.policy), (pol.value, kept.value)):
            for p, q in zip(dst.params(), src.params()):
                p[...] = q
        next(c for c in curve if c.validation_jct_s == best[0]).kept = True
    return curve


def evaluate(pol: Policy, workload: Instance, seed: int = 0, sim_options: dict[str, Any] | None = None) -> Any:
    """The greedy (argmax) policy in the simulator."""
    return simulate(workload, solver_for(pol), seed=seed, **(sim_options or {}))
