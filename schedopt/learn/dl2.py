"""DL2 (§4): a learned allocation policy, trained by supervised warm-up from an
existing scheduler's decisions and then by actor-critic RL in the simulator.

State (§4.1), a J × (L + 5) matrix flattened, jobs in arrival order (at most
J; later ones get only their admitted minimum): job-type one-hot (L types, the
last is "other"), log10(1 + estimated remaining steps)/10, whether the job has
not run yet (``new``; a scheduler sees an instance, not a job's history, so this
stands for "time slots run"), the dominant share already allocated in this
slot, and the workers and PS allocated so far (/ 32).

Actions (§4.1): 3J + 1 — add a worker, a PS, or both to job i, or stop. They are
applied by repeated inference until stop or no action fits; actions that do not
fit (capacity, role maximum, one-role jobs' PS) are masked out. Admission is
DESIGN.md's, as for every allocation heuristic here: the most jobs are admitted,
smallest first, at their minimum, and the policy adds resources from there.

Networks: policy and value MLPs with two hidden layers of 256 ReLU units
(:mod:`schedopt.learn.nets`), softmax and linear outputs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from schedopt.allocation.lagrange import heuristic_plan
from schedopt.allocation.problem import FIT_TOL, AllocationData, admit_smallest_first, compile_allocation, inverse_capacity
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.learn.nets import MLP, softmax
from schedopt.plan import Plan
from schedopt.registry import register

DEFAULT_TYPES = ("cnn-rand", "deepspeech2", "dssm", "inception-bn", "kaggle", "resnet50", "resnext110",
                 "rnn-lstm-dropout", "seq2seq")
FEATURES = 5
COUNT_SCALE = 32.0


@dataclass
class Policy:
    """A DL2 policy: the networks and the state layout (J jobs, job ``types``)."""

    J: int
    types: tuple[str, ...]
    policy: MLP
    value: MLP

    @classmethod
    def create(cls, J: int = 20, types: tuple[str, ...] = DEFAULT_TYPES, hidden: int = 256, seed: int = 0) -> "Policy":
        d = J * (len(types) + 1 + FEATURES)
        return cls(J=J, types=tuple(types), policy=MLP.create((d, hidden, hidden, 3 * J + 1), seed=seed),
                   value=MLP.create((d, hidden, hidden, 1), seed=seed + 1))

    @property
    def n_actions(self) -> int:
        return 3 * self.J + 1

    def save(self, path: str | Path) -> None:
        np.savez(path, J=np.array(self.J), types=np.array(self.types), **self.policy.to_arrays("pi"),
                 **self.value.to_arrays("v"))

    @classmethod
    def load(cls, path: str | Path) -> "Policy":
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:
            raise InputError(str(path), f"cannot read a DL2 policy (.npz): {exc}") from None
        return cls(J=int(arrays["J"]), types=tuple(str(t) for t in arrays["types"]),
                   policy=MLP.from_arrays(arrays, "pi"), value=MLP.from_arrays(arrays, "v"))


@dataclass
class SlotEnv:
    """One slot's allocation in progress: the admitted jobs at their minimum, grown by actions."""

    data: AllocationData
    pol: Policy
    rows: list[int]  # job index per state row (arrival order, at most J)
    counts: np.ndarray  # (J_all, 2) current (ps-slot, worker-slot) counts
    used: np.ndarray  # (R,)
    admitted: list[int]
    type_onehot: np.ndarray = field(init=False)
    static: np.ndarray = field(init=False)
    inv_cap: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.inv_cap = inverse_capacity(self.data.cap)
        L = len(self.pol.types) + 1
        self.type_onehot = np.zeros((self.pol.J, L))
        self.static = np.zeros((self.pol.J, 2))
        for r, j in enumerate(self.rows):
            job = self.data.jobs[j]
            t = self.pol.types.index(job.model) if job.model in self.pol.types else L - 1
            self.type_onehot[r, t] = 1.0
            self.static[r] = (np.log10(1.0 + float(self.data.Q[j])) / 10.0, 1.0 if job.new else 0.0)

    @classmethod
    def start(cls, data: AllocationData, pol: Policy) -> "SlotEnv":
        admitted, start = admit_smallest_first(data)
        counts = np.zeros((data.J, 2), dtype=np.int64)
        for j, c in start.items():
            counts[j] = c
        used = (counts[:, :, None] * data.demand).sum(axis=(0, 1)) if data.J else np.zeros(data.R)
        order = sorted(admitted, key=lambda j: (data.arrival[j], j))[:pol.J]
        return cls(data=data, pol=pol, rows=order, counts=counts, used=used, admitted=admitted)

    def state(self) -> np.ndarray:
        dyn = np.zeros((self.pol.J, 3))
        for r, j in enumerate(self.rows):
            use = self.counts[j, 0] * self.data.demand[j, 0] + self.counts[j, 1] * self.data.demand[j, 1]
            dyn[r] = (float((use * self.inv_cap).max()) if self.data.R else 0.0, self.counts[j, 1] / COUNT_SCALE,
                      self.counts[j, 0] / COUNT_SCALE)
        return np.concatenate([self.type_onehot, self.static, dyn], axis=1).ravel()

    def _delta(self, a: int) -> tuple[int, np.ndarray] | None:
        """Action a as (job, (d_ps, d_worker)); None for stop."""
        if a == 3 * self.pol.J:
            return None
        r, kind = divmod(a, 3)
        return self.rows[r], np.array([(0, 1), (1, 0), (1, 1)][kind])  # worker, PS, both

    def mask(self) -> np.ndarray:
        m = np.zeros(self.pol.n_actions, dtype=bool)
        m[-1] = True
        limit = self.data.cap + FIT_TOL * np.maximum(1.0, self.data.cap)
        for r, j in enumerate(self.rows):
            two = int(self.data.n_roles[j]) == 2
            for kind, d in enumerate(((0, 1), (1, 0), (1, 1))):
                if not two:  # one-role jobs: the "worker" action grows their only role (slot 0)
                    if kind != 0:
                        continue
                    d = (1, 0)
                new = self.counts[j] + d
                if np.any(new > self.data.hi[j]):
                    continue
                extra = d[0] * self.data.demand[j, 0] + d[1] * self.data.demand[j, 1]
                if np.all(self.used + extra <= limit) and np.isfinite(self.data.time_s(j, *new)):
                    m[3 * r + kind] = True
        return m

    def apply(self, a: int) -> bool:
        """Apply action a; False when it is stop."""
        mv = self._delta(a)
        if mv is None:
            return False
        j, d = mv
        if int(self.data.n_roles[j]) != 2:
            d = np.array([1, 0])
        self.counts[j] += d
        self.used = self.used + d[0] * self.data.demand[j, 0] + d[1] * self.data.demand[j, 1]
        return True

    def poor_action(self) -> int | None:
        """DL2 §4.3 job-aware exploration: the specified action for a poor state, if any."""
        for r, j in enumerate(self.rows):
            if int(self.data.n_roles[j]) != 2:
                continue
            p, w = int(self.counts[j, 0]), int(self.counts[j, 1])
            if w > 1 and p == 0:
                return 3 * r + 1
            if p > 1 and w == 0:
                return 3 * r
            if (w and p) and (w / p > 10 or p / w > 10):
                return 3 * r + (1 if w > p else 0)
        return None

    def config(self) -> dict[int, tuple[int, int]]:
        return {j: (int(self.counts[j, 0]), int(self.counts[j, 1])) for j in self.admitted}


MAX_STEPS_PER_SLOT = 10_000


def run_policy(data: AllocationData, pol: Policy, *, rng: np.random.Generator | None = None, epsilon: float = 0.0,
               record: list | None = None) -> SlotEnv:
    """Grow the admitted minimum by repeated inference. Greedy (argmax) without
    ``rng``; sampled with job-aware ε-exploration with it. ``record`` collects
    (state, mask, action)."""
    env = SlotEnv.start(data, pol)
    for _ in range(MAX_STEPS_PER_SLOT):
        m = env.mask()
        if not m[:-1].any():
            break
        s = env.state()
        logits, _ = pol.policy.forward(s[None, :])
        probs = softmax(logits, m[None, :])[0]
        if rng is None:
            a = int(np.argmax(probs))
        else:
            a = int(rng.choice(len(probs), p=probs))
            poor = env.poor_action()
            if poor is not None and m[poor] and rng.random() < epsilon:
                a = poor
        if record is not None:
            record.append((s, m, a))
        if not env.apply(a):
            break
    return env


def teacher_actions(env: SlotEnv, target: dict[int, tuple[int, int]]) -> list[int]:
    """The action sequence that grows ``env`` to the teacher's counts: per job in
    arrival order, both while both fall short, then the rest, then stop."""
    out = []
    for r, j in enumerate(env.rows):
        if j not in target:
            continue
        p, w = target[j]
        cp, cw = int(env.counts[j, 0]), int(env.counts[j, 1])
        both = min(max(p - cp, 0), max(w - cw, 0)) if int(env.data.n_roles[j]) == 2 else 0
        out += [3 * r + 2] * both
        if int(env.data.n_roles[j]) == 2:
            out += [3 * r + 1] * max(p - cp - both, 0) + [3 * r] * max(w - cw - both, 0)
        else:
            out += [3 * r] * max(p - cp, 0)
    return out + [3 * env.pol.J]


@register("dl2", problem="allocation", exact=False, backend="numpy")
class Dl2:
    """DL2 learned policy (numpy MLPs): greedy inference of a trained policy (.npz; untrained if none)."""

    def __init__(self, *, policy: str | None = None, bound: bool = True):
        self.policy_path = policy
        self.bound = bool(bound)
        self._policy: Policy | None = Policy.load(policy) if policy else None

    @property
    def policy(self) -> Policy:
        if self._policy is None:
            self._policy = Policy.create(seed=0)
        return self._policy

    def infer(self, data: AllocationData) -> SlotEnv:
        """One slot's allocation by greedy (argmax) inference."""
        return run_policy(data, self.policy)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        data = compile_allocation(instance)
        config = self.infer(data).config()
        return heuristic_plan(data, config, sorted(config), solver=self.name, started=started, seed=seed,  # type: ignore[attr-defined]
                              options={"policy": self.policy_path, "bound": self.bound},
                              metrics={"heuristic_seconds": time.perf_counter() - started,
                                       "trained": self.policy_path is not None}, bound=self.bound)


def solver_for(pol: Policy) -> Dl2:
    s = Dl2(bound=False)
    s._policy = pol
    return s
