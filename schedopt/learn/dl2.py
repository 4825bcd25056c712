"""DL2 (§4): a learned allocation policy, trained by supervised warm-up from an
existing scheduler's decisions and then by actor-critic RL in the simulator.

State (§4.1): up to J jobs in arrival order (later ones get only their
admitted minimum), one row of ``ROW_FEATURES`` + L numbers each, and a few
cluster-wide numbers:

- row: job type one-hot over the policy's catalogue (L types, the last is
  "other"), log10(1 + remaining steps)/10, whether the job has not run yet
  (``new``, standing for DL2's "time slots run": a scheduler sees an instance,
  not a job's history), its rank in arrival order / J, the dominant share allocated in this slot, workers and
  PS allocated so far (/ 32), which of the three moves are possible, and 1 for
  a row that holds a job;
- cluster: the largest and the mean share of a resource in use, admitted
  jobs / J.

With ``features="gain"`` (differs from DL2, see docs/learning.md) each row also
carries, per move, Optimus' eq. 9 from the instance's speed model (remaining
time saved per dominant share added) relative to the slot's best feasible move
and log-scaled, and the cluster numbers the best feasible gain and whether it is
positive. ``features="type"`` is DL2's state.

Actions (§4.1): 3J + 1 — move job i to its next allowed configuration with
more workers, more PS, or more of both, or stop. "Next allowed" is the nearest
configuration whose speed is defined: with a measured ``table`` speed the
nearest measured point (the DL2 measurements grid odd counts, so +1 moves would
never leave (1, 1)); with a formula it is one more task. Actions that do not fit
(capacity, role maximum, one-role jobs' PS and both) are masked out; the policy
acts until stop or no action fits. Admission is ``optimus-greedy``'s default
(``admission=lp``, :func:`schedopt.allocation.admission.admit`): the most jobs the
admission LP allows, then the least remaining time, each at its minimum. (The
baselines admit as their own systems: ``drf`` by arrival, see baselines.py.)

Networks (differs from DL2's flat MLP, see docs/learning.md): one MLP shared by
every job row scores its three moves from the row and the cluster numbers; a
small MLP scores stop from the cluster numbers and the mean row; the value
network reads the cluster numbers and the mean and maximum row. Sharing the
row network makes the policy the same function of a job wherever its row is,
and lets a policy trained with J rows run with another J.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from schedopt.allocation.jobtime import training_s
from schedopt.allocation.model import AllocationModel
from schedopt.allocation.plans import heuristic_plan
from schedopt.allocation.problem import AllocationData, compile_allocation, inverse_capacity
from schedopt.allocation.admission import admit
from schedopt.allocation.typed import TYPE_CHOICES, type_blind_plan
from schedopt.errors import InputError
from schedopt.instance import Instance
from schedopt.learn.nets import MLP, softmax
from schedopt.plan import Plan
from schedopt.profiles import models_dir
from schedopt.registry import register
from schedopt.tolerances import FIT_TOL, capacity_limit

#: the job types of the workloads shipped here: DL2's eight measured models, then Optimus' Table 1 profiles
DL2_TYPES = ("cnn-text-classification", "dssm", "inception-bn", "resnet-50", "resnext-110", "seq2seq", "vgg-16", "wlm")
OPTIMUS_TYPES = ("cnn-rand", "deepspeech2", "dssm", "inception-bn", "kaggle", "resnet50", "resnext110",
                 "rnn-lstm-dropout", "seq2seq")
DEFAULT_TYPES = tuple(sorted(set(DL2_TYPES) | set(OPTIMUS_TYPES)))
ROW_FEATURES = 10  # after the type one-hot: remaining, new, rank, share, workers, PS, 3 move flags, (gain features,) present
GLOBAL_FEATURES = 3
#: state variants: ``type`` is DL2's (the policy learns each type's speed from the reward);
#: ``gain`` adds, per move, the eq.-9 gain the instance's speed model predicts (6 row numbers, 2 cluster numbers)
FEATURES = ("type", "gain")
GAIN_ROW_FEATURES = 6  # per move: gain relative to the slot's best feasible gain, log-scaled gain
GAIN_GLOBAL_FEATURES = 2  # log-scaled best feasible gain, whether any feasible gain is positive
COUNT_SCALE = 32.0
MOVES = ((0, 1), (1, 0), (1, 1))  # (d_ps, d_worker): a worker, a PS, both
LAYOUT = "dl2-per-job-v3"
#: the policy shipped for the ``dl2`` workload, used by ``--solver dl2`` when its catalogue covers an instance
SHIPPED = models_dir() / "dl2" / "dl2-policy.npz"


@dataclass
class PolicyNet:
    """The actor: ``rows`` (F + G → h → h → 3) scores each job's moves, ``stop``
    (G + F → h → 1) scores stop. Logits (n, 3J + 1) for states (n, J·F + G)."""

    J: int
    F: int
    rows: MLP
    stop: MLP

    def forward(self, S: np.ndarray) -> tuple[np.ndarray, tuple[Any, Any]]:
        n = len(S)
        R, g = split_state(S, self.J, self.F)
        X = np.concatenate([R, np.broadcast_to(g[:, None, :], (n, self.J, g.shape[1]))], axis=2).reshape(n * self.J, -1)
        move, acts_r = self.rows.forward(X)
        stop, acts_s = self.stop.forward(np.concatenate([g, pooled_mean(R)], axis=1))
        return np.concatenate([move.reshape(n, 3 * self.J), stop], axis=1), (acts_r, acts_s)

    def backward(self, cache: tuple[Any, Any], g: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        n = len(g)
        gW_r, gb_r = self.rows.backward(cache[0], g[:, :3 * self.J].reshape(n * self.J, 3))
        gW_s, gb_s = self.stop.backward(cache[1], g[:, -1:])
        return gW_r + gW_s, gb_r + gb_s

    def params(self) -> list[np.ndarray]:
        return [*self.rows.W, *self.stop.W, *self.rows.b, *self.stop.b]


def split_state(S: np.ndarray, J: int, F: int) -> tuple[np.ndarray, np.ndarray]:
    """States (n, J·F + G) as rows (n, J, F) and cluster numbers (n, G)."""
    return S[:, :J * F].reshape(len(S), J, F), S[:, J * F:]


def pooled_mean(R: np.ndarray) -> np.ndarray:
    """Mean of the rows that hold a job (last feature = 1), (n, J, F) -> (n, F)."""
    present = R[:, :, -1:]
    return (R * present).sum(axis=1) / np.maximum(present.sum(axis=1), 1.0)


@dataclass
class ValueNet:
    """The critic: V(s) from the cluster numbers and the mean and maximum row."""

    J: int
    F: int
    net: MLP

    def features(self, S: np.ndarray) -> np.ndarray:
        R, g = split_state(S, self.J, self.F)
        return np.concatenate([g, pooled_mean(R), R.max(axis=1)], axis=1)

    def forward(self, S: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        return self.net.forward(self.features(S))

    def backward(self, cache: list[np.ndarray], g: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        return self.net.backward(cache, g)

    def params(self) -> list[np.ndarray]:
        return self.net.params()


@dataclass
class Policy:
    """A DL2 policy: the networks and the state layout (J rows, job ``types``)."""

    J: int
    types: tuple[str, ...]
    policy: PolicyNet
    value: ValueNet
    features: str = "type"

    @classmethod
    def create(cls, J: int = 32, types: tuple[str, ...] = DEFAULT_TYPES, hidden: int = 64, seed: int = 0,
               features: str = "type") -> "Policy":
        if features not in FEATURES:
            raise ValueError(f"features {features!r}; known: {', '.join(FEATURES)}")
        F, G = row_size(types, features), global_size(features)
        rows = MLP.create((F + G, hidden, hidden, 3), seed=seed)
        stop = MLP.create((G + F, hidden, 1), seed=seed + 1)
        value = MLP.create((G + 2 * F, hidden, hidden, 1), seed=seed + 2)
        return cls(J=J, types=tuple(types), policy=PolicyNet(J, F, rows, stop), value=ValueNet(J, F, value),
                   features=features)

    @property
    def F(self) -> int:
        return row_size(self.types, self.features)

    @property
    def G(self) -> int:
        return global_size(self.features)

    @property
    def n_actions(self) -> int:
        return 3 * self.J + 1

    @property
    def state_size(self) -> int:
        return self.J * self.F + self.G

    def with_rows(self, J: int) -> "Policy":
        """The same networks with J state rows (the row network does not depend on J)."""
        return Policy(J=J, types=self.types, policy=PolicyNet(J, self.F, self.policy.rows, self.policy.stop),
                      value=ValueNet(J, self.F, self.value.net), features=self.features)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"layout": np.array(LAYOUT), "J": np.array(self.J), "types": np.array(self.types),
                "features": np.array(self.features),
                **self.policy.rows.to_arrays("rows"), **self.policy.stop.to_arrays("stop"), **self.value.net.to_arrays("v")}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "Policy":
        J, types = int(arrays["J"]), tuple(str(t) for t in arrays["types"])
        features = str(arrays["features"])
        if features not in FEATURES:
            raise ValueError(f"features {features!r}; known: {', '.join(FEATURES)}")
        F = row_size(types, features)
        return cls(J=J, types=types, policy=PolicyNet(J, F, MLP.from_arrays(arrays, "rows"), MLP.from_arrays(arrays, "stop")),
                   value=ValueNet(J, F, MLP.from_arrays(arrays, "v")), features=features)

    def save(self, path: str | Path) -> None:
        """Write the policy atomically: to a temporary file beside ``path``, then
        renamed over it, so a kill while saving never leaves a truncated policy."""
        import os
        import tempfile

        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")  # as numpy's savez names it
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".npz", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez_compressed(fh, **self.arrays())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: str | Path) -> "Policy":
        """Read and check a policy file (:mod:`schedopt.learn.policy_file`); any
        problem is an :class:`InputError` naming the file and the member."""
        from schedopt.learn.policy_file import check_policy_arrays, read_policy_arrays

        arrays = read_policy_arrays(path)
        layout = arrays.get("layout")
        if layout is None or layout.shape != () or layout.dtype.kind != "U" or str(layout) != LAYOUT:
            raise InputError(str(path), f"layout: not a {LAYOUT} DL2 policy (written by another version of schedopt?); "
                                        "train one with `schedopt learn`")
        check_policy_arrays(arrays, str(path), row_size, global_size)
        try:
            return cls.from_arrays(arrays)
        except (KeyError, ValueError) as exc:
            raise InputError(str(path), f"incomplete DL2 policy: {exc}") from None

    def copy(self) -> "Policy":
        return Policy.from_arrays({k: np.array(v, copy=True) for k, v in self.arrays().items()})


def row_size(types: tuple[str, ...], features: str) -> int:
    """Numbers per job row: the type one-hot (with "other"), DL2's row, the gain features if any."""
    return len(types) + 1 + ROW_FEATURES + (GAIN_ROW_FEATURES if features == "gain" else 0)


def global_size(features: str) -> int:
    return GLOBAL_FEATURES + (GAIN_GLOBAL_FEATURES if features == "gain" else 0)


def remaining_time_grid(data: AllocationData, j: int) -> np.ndarray:
    """(hi0 + 1, hi1 + 1) remaining time (s) of job j at each (c0, c1): Q_j · step time, plus the restart
    cost where a running job's counts change (:mod:`schedopt.allocation.jobtime`); inf where not allowed."""
    hi0, hi1 = int(data.hi[j, 0]), int(data.hi[j, 1])
    C0, C1 = np.meshgrid(np.arange(hi0 + 1), np.arange(hi1 + 1), indexing="ij")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if int(data.n_roles[j]) == 2:
            step = np.asarray(data.jobs[j].speed.step_time_s(np.maximum(C0, 1), np.maximum(C1, 1)), dtype=float)
        else:
            step = np.asarray(data.jobs[j].speed.step_time_s(np.maximum(C0, 1), 0 * C1), dtype=float)
        T = np.broadcast_to(data.time_s(j, C0, C1) if data.restarts(j) else training_s(float(data.Q[j]), step),
                            C0.shape).copy()  # the restart cost of a running job included (jobtime.py)
    T[~np.isfinite(T) | (C0 < data.lo[j, 0]) | (C1 < data.lo[j, 1])] = np.inf
    return T


def allowed_grid(data: AllocationData, j: int) -> np.ndarray:
    """(hi0 + 1, hi1 + 1) booleans: which (c0, c1) job j may run with (in bounds, speed defined)."""
    return np.isfinite(remaining_time_grid(data, j))


def next_config(grid: np.ndarray, c: tuple[int, int], move: tuple[int, int]) -> tuple[int, int] | None:
    """The nearest allowed configuration from ``c`` along ``move``: more of each
    role the move names (fewest added tasks, then fewest PS), the same count of
    the other. None if there is none."""
    c0, c1 = c
    if move == (0, 1):
        col = np.flatnonzero(grid[c0, c1 + 1:])
        return (c0, c1 + 1 + int(col[0])) if len(col) else None
    if move == (1, 0):
        row = np.flatnonzero(grid[c0 + 1:, c1])
        return (c0 + 1 + int(row[0]), c1) if len(row) else None
    sub = grid[c0 + 1:, c1 + 1:]
    if not sub.any():
        return None
    a, b = np.nonzero(sub)
    k = np.lexsort((a, a + b))[0]
    return c0 + 1 + int(a[k]), c1 + 1 + int(b[k])


@dataclass
class SlotEnv:
    """One slot's allocation in progress: the admitted jobs at their minimum, grown by moves."""

    data: AllocationData
    pol: Policy
    rows: list[int]  # job index per state row (arrival order, at most J)
    counts: np.ndarray  # (J_all, 2) current (slot 0, slot 1) counts
    used: np.ndarray  # (R,)
    admitted: list[int]
    onehot: np.ndarray = field(init=False)
    inv_cap: np.ndarray = field(init=False)
    grids: list[np.ndarray] = field(init=False)
    times: list[np.ndarray] = field(init=False)  # per row: remaining time (s) at each configuration
    targets: np.ndarray = field(init=False)  # (rows, 3, 2) next configuration per move, -1: none
    gains: np.ndarray = field(init=False)  # (rows, 3) eq.-9 gain of each move, s per dominant share; nan: none

    def __post_init__(self) -> None:
        self.inv_cap = inverse_capacity(self.data.cap)
        L = len(self.pol.types) + 1
        self.onehot = np.zeros((self.pol.J, L))
        index = {t: k for k, t in enumerate(self.pol.types)}
        self.grids, self.times = [], []
        self.targets = np.full((self.pol.J, 3, 2), -1, dtype=np.int64)
        self.gains = np.full((self.pol.J, 3), np.nan)
        for r, j in enumerate(self.rows):
            self.onehot[r, index.get(self.data.jobs[j].model or "", L - 1)] = 1.0
            self.times.append(remaining_time_grid(self.data, j))
            self.grids.append(np.isfinite(self.times[-1]))
            self._refresh(r)

    @classmethod
    def start(cls, data: AllocationData, pol: Policy) -> "SlotEnv":
        admitted, start = admit(data)
        counts = np.zeros((data.J, 2), dtype=np.int64)
        for j, c in start.items():
            counts[j] = c
        used = (counts[:, :, None] * data.demand).sum(axis=(0, 1)) if data.J else np.zeros(data.R)
        order = sorted(admitted, key=lambda j: (data.arrival[j], j))[:pol.J]
        return cls(data=data, pol=pol, rows=order, counts=counts, used=used, admitted=admitted)

    def _refresh(self, r: int) -> None:
        """Recompute row r's next configurations (moves that exceed capacity are masked later)."""
        j = self.rows[r]
        c = (int(self.counts[j, 0]), int(self.counts[j, 1]))
        two = int(self.data.n_roles[j]) == 2
        for k, mv in enumerate(MOVES):
            if not two:  # one-role jobs: the "worker" move grows their only role (slot 0)
                nxt = next_config(self.grids[r], c, (1, 0)) if k == 0 else None
            else:
                nxt = next_config(self.grids[r], c, mv)
            self.targets[r, k] = nxt if nxt is not None else (-1, -1)
            self.gains[r, k] = np.nan if nxt is None else self._gain(r, c, nxt)

    def _gain(self, r: int, c: tuple[int, int], nxt: tuple[int, int]) -> float:
        """Optimus eq. 9 for the move c -> nxt of row r: remaining time saved (s) per dominant share added."""
        j = self.rows[r]
        delta = np.asarray(nxt) - np.asarray(c)
        share = float(((delta @ self.data.demand[j]) * self.inv_cap).max()) if self.data.R else 0.0
        saved = float(self.times[r][c] - self.times[r][nxt])
        if not np.isfinite(saved):
            return np.nan
        return saved / share if share > 0 else (np.inf if saved > 0 else 0.0)

    def mask(self) -> np.ndarray:
        m = np.zeros(self.pol.n_actions, dtype=bool)
        m[-1] = True
        n = len(self.rows)
        if not n:
            return m
        limit = self.data.cap + FIT_TOL * np.maximum(1.0, self.data.cap)
        jobs = np.asarray(self.rows)
        tg = self.targets[:n]  # (n, 3, 2)
        delta = np.maximum(tg - self.counts[jobs][:, None, :], 0)  # (n, 3, 2)
        extra = np.einsum("nkc,ncr->nkr", delta, self.data.demand[jobs])  # (n, 3, R)
        fits = np.all(self.used + extra <= limit, axis=2) & (tg[:, :, 0] >= 0)
        m[:3 * n] = fits.ravel()
        return m

    def state(self, m: np.ndarray | None = None) -> np.ndarray:
        """The state vector (J·F + G,); ``m`` is :meth:`mask` if the caller has it."""
        J, F = self.pol.J, self.pol.F
        L = self.onehot.shape[1]
        R = np.zeros((J, F))
        R[:, :L] = self.onehot
        m = self.mask() if m is None else m
        for r, j in enumerate(self.rows):
            use = self.counts[j, 0] * self.data.demand[j, 0] + self.counts[j, 1] * self.data.demand[j, 1]
            two = int(self.data.n_roles[j]) == 2
            w, p = (self.counts[j, 1], self.counts[j, 0]) if two else (self.counts[j, 0], 0)
            R[r, L:L + ROW_FEATURES - 1] = (
                np.log10(1.0 + float(self.data.Q[j])) / 10.0, 1.0 if self.data.jobs[j].new else 0.0, r / J,
                float((use * self.inv_cap).max()) if self.data.R else 0.0, w / COUNT_SCALE, p / COUNT_SCALE,
                m[3 * r], m[3 * r + 1], m[3 * r + 2])
            R[r, -1] = 1.0  # present: always the last number of a row (pooled_mean reads it)
        util = self.used * self.inv_cap if self.data.R else np.zeros(1)
        g = [float(util.max()), float(util.mean()), len(self.admitted) / J]
        if self.pol.features == "gain":
            g += self._gain_features(R[:, L + ROW_FEATURES - 1:-1], m)
        return np.concatenate([R.ravel(), np.array(g)])

    def _gain_features(self, out: np.ndarray, m: np.ndarray) -> list[float]:
        """Fill ``out`` (J, 6) with each feasible move's gain relative to the best feasible
        gain and its log-scaled gain (hours per dominant share); return the cluster numbers."""
        n = len(self.rows)
        feasible = m[:3 * n].reshape(n, 3) & ~np.isnan(self.gains[:n]) if n else np.zeros((0, 3), dtype=bool)
        g = np.where(feasible, np.nan_to_num(self.gains[:n], posinf=1e12), 0.0) / 3600.0
        best = float(g[feasible].max()) if feasible.any() else 0.0
        out[:n, :3] = np.clip(g / best, -1.0, 1.0) if best > 0 else 0.0
        out[:n, 3:] = np.sign(g) * np.log10(1.0 + np.abs(g)) / 3.0
        return [float(np.sign(best) * np.log10(1.0 + abs(best)) / 3.0), float(best > 0)]

    def apply(self, a: int) -> bool:
        """Apply action a; False when it is stop."""
        if a == 3 * self.pol.J:
            return False
        r, k = divmod(a, 3)
        j = self.rows[r]
        new = self.targets[r, k]
        d = new - self.counts[j]
        self.counts[j] = new
        self.used = self.used + d[0] * self.data.demand[j, 0] + d[1] * self.data.demand[j, 1]
        self._refresh(r)
        return True

    def poor_action(self, m: np.ndarray) -> int | None:
        """DL2 §4.3 job-aware exploration: the specified action for a poor state, if any
        (a two-role job with workers but one PS, or the reverse, more than 10:1 ... )."""
        for r, j in enumerate(self.rows):
            if int(self.data.n_roles[j]) != 2:
                continue
            p, w = int(self.counts[j, 0]), int(self.counts[j, 1])
            if w > 1 and p == 0 and m[3 * r + 1]:
                return 3 * r + 1
            if p > 1 and w == 0 and m[3 * r]:
                return 3 * r
            if (w and p) and (w / p > 10 or p / w > 10):
                a = 3 * r + (1 if w > p else 0)
                if m[a]:
                    return a
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
        s = env.state(m)
        logits, _ = pol.policy.forward(s[None, :])
        probs = softmax(logits, m[None, :])[0]
        if rng is None:
            a = int(np.argmax(probs))
        else:
            a = int(rng.choice(len(probs), p=probs))
            if epsilon and rng.random() < epsilon:
                poor = env.poor_action(m)
                if poor is not None:
                    a = poor
        if record is not None:
            record.append((s, m, a))
        if not env.apply(a):
            break
    return env


def teacher_actions(env: SlotEnv, target: dict[int, tuple[int, int]], record: list | None = None) -> list[int]:
    """The moves that grow ``env`` toward the teacher's counts, applied to ``env``
    as they are listed, then stop. Progressive filling: the job with the smallest
    dominant share among those short of their target moves next (both roles while
    both fall short, else the one that does); a job whose target no move reaches
    stops at the nearest configuration below it. ``record`` collects (state, mask,
    action) before each move and the final stop."""
    out: list[int] = []
    rows = [r for r, j in enumerate(env.rows) if j in target]
    for _ in range(MAX_STEPS_PER_SLOT):
        m = env.mask()
        best: tuple[float, int, int] | None = None
        for r in rows:
            j = env.rows[r]
            goal = np.asarray(target[j])
            short = goal > env.counts[j]
            if not short.any():
                continue
            for k in ((2, 1, 0) if int(env.data.n_roles[j]) == 2 else (0,)):
                nxt = env.targets[r, k]
                if m[3 * r + k] and np.all(nxt <= np.maximum(goal, env.counts[j])) and np.any((nxt > env.counts[j]) & short):
                    use = env.counts[j, 0] * env.data.demand[j, 0] + env.counts[j, 1] * env.data.demand[j, 1]
                    key = (float((use * env.inv_cap).max()) if env.data.R else 0.0, r, 3 * r + k)
                    if best is None or key[:2] < best[:2]:
                        best = key
                    break
        if best is None:
            if record is not None:
                record.append((env.state(m), m, 3 * env.pol.J))
            break
        if record is not None:
            record.append((env.state(m), m, best[2]))
        out.append(best[2])
        env.apply(best[2])
    return out + [3 * env.pol.J]


@lru_cache(maxsize=4)
def _shipped(path: str, mtime: float) -> Policy | None:
    return Policy.load(path)


def shipped_policy() -> Policy | None:
    """The policy under ``models/dl2/`` (trained on the ``dl2`` workload), None if absent."""
    return _shipped(str(SHIPPED), SHIPPED.stat().st_mtime) if SHIPPED.is_file() else None


def covers(pol: Policy, instance: Instance) -> bool:
    """Whether every job's model is one of the policy's types."""
    known = set(pol.types)
    return bool(instance.jobs) and all(job.model in known for job in instance.jobs)


@register("dl2", problem="allocation", exact=False, backend="numpy", accelerator_types=True, quotas=True)
class Dl2:
    """DL2 learned policy (numpy MLPs): greedy inference of a trained policy (.npz); without
    one, the shipped policy for the dl2 workload when it knows every job's model, else untrained.
    On a cluster with accelerator types it is blind to them, as DL2 is (its cluster is one GPU
    type): it decides on the cluster as one type and each job lands on the first type with room
    (``accelerator_choice="aware"``, ours: the fastest type with room)."""

    def __init__(self, *, policy: str | None = None, bound: bool = True, accelerator_choice: str = "blind"):
        if policy is not None and not (isinstance(policy, str) and policy.strip()):
            raise InputError("dl2", f"policy: expected the path of a policy file (.npz), got {policy!r}")
        if accelerator_choice not in TYPE_CHOICES:
            raise InputError("dl2", f"accelerator_choice: expected one of {', '.join(TYPE_CHOICES)}, "
                                    f"got {accelerator_choice!r}")
        self.policy_path = policy
        self.bound = bool(bound)
        self.accelerator_choice = accelerator_choice
        self._policy: Policy | None = Policy.load(policy) if policy else None

    def policy_for(self, instance: Instance | None = None) -> tuple[Policy, str]:
        """The policy to run and where it came from ("file", "shipped", "untrained")."""
        if self._policy is not None:
            return self._policy, "file" if self.policy_path else "given"
        pol = shipped_policy()
        if pol is not None and (instance is None or covers(pol, instance)):
            return pol, "shipped"
        return Policy.create(seed=0), "untrained"

    def infer(self, data: AllocationData, pol: Policy) -> SlotEnv:
        """One slot's allocation by greedy (argmax) inference."""
        return run_policy(data, pol)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        started = time.perf_counter()
        if instance.typed:  # DL2 is blind to accelerator types (typed.py)
            return type_blind_plan(instance, lambda flat: self.solve(flat, seed=seed), solver="dl2", started=started,
                                   seed=seed, options={"policy": self.policy_path, "bound": self.bound,
                                                       "accelerator_choice": self.accelerator_choice},
                                   bound=self.bound, choice=self.accelerator_choice)
        data = compile_allocation(instance)
        pol, source = self.policy_for(instance)
        config = self.infer(data, pol).config()
        used = sum((c0 * data.demand[j, 0] + c1 * data.demand[j, 1] for j, (c0, c1) in config.items()),
                   np.zeros(data.R))
        if np.any(used > capacity_limit(data.cap)):  # a corrupt network (non-finite weights given in code)
            raise InputError(self.policy_path or "dl2 policy", "the policy's allocation exceeds the cluster's capacity: "
                                                               "its weights are corrupt (NaN or infinite?)")
        unknown = sorted({job.model or "(none)" for job in instance.jobs} - set(pol.types))
        note = None
        if source == "untrained" and instance.jobs:
            note = (f"untrained policy: the shipped policy does not know the models {', '.join(unknown)}; "
                    "train one with `schedopt learn` and pass --option policy=FILE")
        elif unknown:
            note = f"the policy does not know the models {', '.join(unknown)}: their jobs are seen as 'other'"
        if note:
            logging.getLogger("schedopt").warning("dl2: %s", note)
        plan = heuristic_plan(AllocationModel.of_jobs(data), config, solver=self.name, started=started, seed=seed,  # type: ignore[attr-defined]
                              options={"policy": self.policy_path, "bound": self.bound},
                              metrics={"heuristic_seconds": time.perf_counter() - started,
                                       "trained": source != "untrained", "policy_source": source,
                                       **({"unknown_models": unknown} if unknown else {})}, bound=self.bound)
        if note:
            plan.message = note if not plan.message else f"{plan.message}; {note}"
        return plan


def solver_for(pol: Policy) -> Dl2:
    s = Dl2(bound=False)
    s._policy = pol
    return s
