"""The Lagrangian dual of the allocation problem, solved in the space of prices.

For prices λ >= 0 on the capacities (Optimus eq. 7), and ν >= 0 on "admit at
least k jobs" when not every job fits,

    L(λ, ν) = Σ_j min(0?, min_(p,w) [t_j(p, w) + λ·u_j(p, w)] - ν) + ν·k - λ·C

is a lower bound on Σ t_j of every plan admitting k jobs (the 0 only with the
admission row: a paused job). Its maximum over (λ, ν) equals the LP relaxation
of the multiple-choice model, so the bound needs no LP with a row per job:
the dual has R <= 4 prices (plus ν) and is maximised by a stabilised cutting-
plane method whose master is an LP in R + 2 variables.

The inner minimum is where the configurations are never enumerated. With
u_j(p, w) = p·N_j + w·O_j, the prices reduce to two per job, α_j = λ·N_j and
β_j = λ·O_j, and for every form in Optimus eq. 3-4 the priced time at a fixed
worker count w is a + A/p + B·p with A, B >= 0, convex in p: its integer
minimum is at ⌊√(A/B)⌋ or ⌈√(A/B)⌉ clamped to the bounds. So one pricing
costs O(w_max) per job instead of O(p_max·w_max) (64 values instead of 4,096
at 64 PS and 64 workers). Amdahl's one role is the same with w fixed. Tables
are enumerated (they are small).

Every L(λ, ν) computed is a valid lower bound whatever the method's accuracy;
the cutting-plane master's value is an upper bound on the LP optimum over the
box of prices searched, and the box is enlarged until the master's optimum is
inside it, so ``upper - bound`` certifies how far the bound is from the LP's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from schedopt.allocation.jobtime import training_s
from schedopt.allocation.problem import AllocationData, ChoiceSet, enumerate_choices
from schedopt.backends.lp import INF, IncrementalLp
from schedopt.speed import Amdahl, OptimusAsync, OptimusSync
from schedopt.tolerances import DUAL_REL_TOL, FIT_TOL, TINY, with_ties


@dataclass
class DualResult:
    """``bound`` the best L found (a lower bound on Σ t_j); ``upper`` the
    master's value (an upper bound on the LP optimum, so ``upper - bound``
    bounds the distance to the LP bound); ``lam`` (R,) and ``nu`` the prices
    at ``bound``; ``counts`` (J, 2) each job's priced-best configuration there
    and ``chosen`` (J,) whether the job is admitted at those prices (always
    with no admission row); ``iterations`` oracle calls."""

    bound: float
    upper: float
    lam: np.ndarray
    nu: float
    counts: np.ndarray
    chosen: np.ndarray
    iterations: int
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def lp_gap(self) -> float:
        """(upper - bound) / |upper|: how far ``bound`` may be below the LP bound."""
        return max(0.0, self.upper - self.bound) / max(TINY, abs(self.upper))


def price_kinds(data: AllocationData, jobs: np.ndarray | None = None) -> np.ndarray:
    """(J,) how :class:`PricingOracle` prices each job of ``jobs``: 0 eq. 4, 1 eq. 3, 2 Amdahl
    (closed forms), -1 enumerated (tables, other forms and costs; and jobs not in ``jobs``)."""
    kind = np.full(data.J, -1)
    jobs = np.arange(data.J) if jobs is None else jobs
    for j in (jobs.tolist() if data.closed_form_cost else []):  # other costs: enumerated
        k = data.jobs[j].speed.price_kind  # the form says which kernel prices it (speed.py)
        if k >= 0 and (k == 2) == (data.n_roles[j] == 1):  # eq. 3-4 need two roles, Amdahl one
            kind[j] = k
    return kind


class PricingOracle:
    """min over each job's configurations of t_j + λ·u_j, without enumerating
    formula jobs. Built once per instance; :meth:`price` costs O(J·w_max)."""

    BLOCK = 256  # jobs priced together

    def __init__(self, data: AllocationData, jobs: np.ndarray | None = None):
        self.data = data
        jobs = np.arange(data.J) if jobs is None else np.asarray(jobs, dtype=np.int64)
        self.jobs = jobs
        kind = price_kinds(data, jobs)
        self.sync = np.flatnonzero(kind == 0)
        self.asyn = np.flatnonzero(kind == 1)
        self.amdahl = np.flatnonzero(kind == 2)
        self.closed = np.flatnonzero(kind >= 0)
        generic = np.array([j for j in jobs.tolist() if kind[j] < 0], dtype=np.int64)
        self.generic = generic
        # tables and other forms: their (pruned) configurations, priced in numpy
        self.cs: ChoiceSet | None = enumerate_choices(data, generic) if len(generic) else None
        self.sync_p = self._params(self.sync)
        self.asyn_p = self._params(self.asyn)
        self.amdahl_p = self._params(self.amdahl)
        # restart costs ρ_j (cost t + ρ off the running counts): the running configuration priced apart
        # (enumerated jobs have ρ in their costs already)
        self.restart = np.array([j for j in jobs.tolist() if kind[j] >= 0 and data.restarts(j)], dtype=np.int64)
        if len(self.restart):
            run = data.running[self.restart]
            self.run_counts = run
            self.run_cost = np.array([training_s(float(data.Q[j]), float(data.jobs[j].speed.step_time_s(int(c[0]), int(c[1]))))
                                      if (data.lo[j] <= c).all() and (c <= data.hi[j]).all() else np.inf
                                      for j, c in zip(self.restart.tolist(), run)])
            if data.offset is not None:
                self.run_cost = self.run_cost + data.offset[self.restart]
            self.run_use = run[:, 0, None] * data.demand[self.restart, 0] + run[:, 1, None] * data.demand[self.restart, 1]
        self._grids: dict[bool, dict[str, np.ndarray]] = {}
        self.owned = np.zeros(data.J, dtype=bool)
        self.owned[jobs] = True
        if self.cs is not None:
            self.owned[generic] = np.diff(self.cs.start)[generic] > 0
            nonempty = np.diff(self.cs.start) > 0
            owners = np.flatnonzero(nonempty)
            # (owners, where each owner's configurations start, each configuration's owner position)
            self._segments = (owners, self.cs.start[:-1][nonempty], np.searchsorted(owners, self.cs.job))

    def _params(self, jobs: np.ndarray) -> np.ndarray:
        if not len(jobs):
            return np.zeros((0, 0))
        return np.array([self.data.jobs[j].speed.params() for j in jobs.tolist()], dtype=float)

    def price(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(best (J,), counts (J, 2), time_s (J,)): min_k t_k + λ·u_k per job, its
        configuration and that configuration's t_k alone; +inf and (0, 0) for
        jobs with none (or not in ``jobs``)."""
        data = self.data
        best = np.full(data.J, np.inf)
        time_s = np.full(data.J, np.inf)
        counts = np.zeros((data.J, 2), dtype=np.int64)
        alpha = data.demand[:, 0] @ lam  # (J,) price of one task of the first role
        beta = data.demand[:, 1] @ lam
        if len(self.sync):
            self._two_role(self.sync, self.sync_p, alpha, beta, best, counts, time_s, sync=True)
        if len(self.asyn):
            self._two_role(self.asyn, self.asyn_p, alpha, beta, best, counts, time_s, sync=False)
        if len(self.amdahl):
            self._one_role(alpha, best, counts, time_s)
        if data.offset is not None:  # the objective's per-job constant (enumerated jobs have it in their costs)
            closed = self.closed
            best[closed] += data.offset[closed]
            time_s[closed] += data.offset[closed]
        if self.cs is not None and self.cs.K:
            cs = self.cs
            priced = cs.cost + cs.use @ lam
            owners, seg_starts, seg_of = self._segments
            seg = np.minimum.reduceat(priced, seg_starts)
            # the first configuration attaining each job's minimum (configurations are grouped by job)
            idx = np.flatnonzero(priced == seg[seg_of])
            at = seg_of[idx]
            first = idx[np.concatenate([[True], at[1:] != at[:-1]])]
            best[owners] = seg
            counts[owners] = cs.counts[first]
            time_s[owners] = cs.cost[first]
        if len(self.restart):
            r = self.restart
            with_rho = best[r] + data.restart_s[r]
            stay = self.run_cost + self.run_use @ lam
            better = stay <= with_rho
            best[r] = np.where(better, stay, with_rho)
            counts[r] = np.where(better[:, None], self.run_counts, counts[r])
            time_s[r] = np.where(better, self.run_cost, time_s[r] + data.restart_s[r])
        return best, counts, time_s

    def _grid(self, jobs: np.ndarray, params: np.ndarray, *, sync: bool) -> dict[str, np.ndarray]:
        """The price-free parts of a two-role group's priced time a + A/p + B·p
        at each worker count w (rows: jobs, columns: w from the job's minimum;
        +inf past its maximum): a = ``base`` (n, W), A = ``A``, B = ``B0`` + α_j."""
        data = self.data
        q = data.Q[jobs][:, None]
        lo1, hi1 = data.lo[jobs, 1], data.hi[jobs, 1]
        if sync:
            # eq. 4 is convex in w at fixed p, least at w = √(θ0·M / (θ2/p + θ3)), which grows
            # with p: past its value at p_max, more workers cost more time and more resources,
            # at any prices, so those columns are never anyone's best
            th0, th2, th3, batch = params[:, 0], params[:, 2], params[:, 3], params[:, 5]
            with np.errstate(divide="ignore", invalid="ignore"):
                useful = np.ceil(np.sqrt(th0 * batch / (th2 / data.hi[jobs, 0] + th3)))
            hi1 = np.clip(np.nan_to_num(useful, nan=np.inf, posinf=np.inf), lo1, hi1).astype(np.int64)
        width = int((hi1 - lo1).max()) + 1
        w = lo1[:, None] + np.arange(width)[None, :]
        valid = w <= hi1[:, None]
        w = np.minimum(w, hi1[:, None]).astype(float)
        th = [params[:, i][:, None] for i in range(params.shape[1])]
        with np.errstate(divide="ignore", invalid="ignore"):
            if sync:  # Optimus eq. 4: θ0·M/w + θ1 + θ3·w, then θ2·w/p + θ4·p
                base = q * (th[0] * th[5] / w + th[1] + th[3] * w)
                A, B0 = q * th[2] * w, q * th[4] + 0.0 * w
            else:  # Optimus eq. 3 over w: θ0/w + θ2, then θ1/p + (θ3/w)·p
                base = q * (th[0] / w + th[2])
                A, B0 = q * th[1] + 0.0 * w, q * th[3] / w
        return {"w": w, "base": np.where(valid, base, np.inf), "A": A, "B0": B0,
                "lo0": data.lo[jobs, 0][:, None].astype(float), "hi0": data.hi[jobs, 0][:, None].astype(float)}

    def _two_role(self, jobs: np.ndarray, params: np.ndarray, alpha: np.ndarray, beta: np.ndarray,
                  best: np.ndarray, counts: np.ndarray, time_s: np.ndarray, *, sync: bool) -> None:
        """Each job's best (p, w): at every w the convex a + A/p + B·p is least at
        ⌊√(A/B)⌋ or the next integer, clamped to [p_min, p_max]."""
        g = self._grids.get(sync)
        if g is None:
            g = self._grids[sync] = self._grid(jobs, params, sync=sync)
        a_j, b_j = alpha[jobs], beta[jobs]
        p = np.empty(len(jobs))
        w = np.empty(len(jobs))
        for lo in range(0, len(jobs), self.BLOCK):  # row blocks that stay in cache
            rows = slice(lo, lo + self.BLOCK)
            A, w_grid = g["A"][rows], g["w"][rows]
            lo0, hi0 = g["lo0"][rows], g["hi0"][rows]
            B = g["B0"][rows] + a_j[rows, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                star = np.sqrt(A / B)  # B = 0: +inf (or nan when A = 0 too: any p is as good)
            p_lo = np.floor(np.fmax(np.fmin(star, hi0, out=star), lo0, out=star), out=star)
            p_hi = np.fmin(p_lo + 1.0, hi0)
            with np.errstate(divide="ignore", invalid="ignore"):
                v_lo = A / p_lo + B * p_lo
                v_hi = A / p_hi + B * p_hi
            take_hi = v_hi < v_lo
            v = np.where(take_hi, v_hi, v_lo)
            v += g["base"][rows]
            v += b_j[rows, None] * w_grid
            k = np.argmin(v, axis=1)
            r = np.arange(len(k))
            p[rows] = np.where(take_hi[r, k], p_hi[r, k], p_lo[r, k])
            w[rows] = w_grid[r, k]
        formula = OptimusSync.formula if sync else OptimusAsync.formula
        t = self.data.Q[jobs] * formula(*params.T, p, w)  # the same expression as AllocationData.time_s
        best[jobs] = t + a_j * p + b_j * w
        time_s[jobs] = t
        counts[jobs, 0] = p.astype(np.int64)
        counts[jobs, 1] = w.astype(np.int64)

    def _one_role(self, alpha: np.ndarray, best: np.ndarray, counts: np.ndarray, time_s: np.ndarray) -> None:
        data, jobs, params = self.data, self.amdahl, self.amdahl_p
        q, a_j = data.Q[jobs], alpha[jobs]
        lo, hi = data.lo[jobs, 0], data.hi[jobs, 0]
        A = q * params[:, 1]  # Amdahl: q·(serial + parallel/n) + α·n
        with np.errstate(divide="ignore", invalid="ignore"):
            star = np.where(a_j > 0, np.sqrt(A / np.where(a_j > 0, a_j, 1.0)), np.where(A > 0, np.inf, 0.0))
        n_lo = np.clip(np.floor(np.minimum(star, 1e9)), lo, hi)
        n_hi = np.clip(n_lo + 1, lo, hi)
        times = [q * Amdahl.formula(params[:, 0], params[:, 1], n, 0) for n in (n_lo, n_hi)]
        value = [t + a_j * n for t, n in zip(times, (n_lo, n_hi))]
        take_hi = value[1] < value[0]
        best[jobs] = np.where(take_hi, value[1], value[0])
        time_s[jobs] = np.where(take_hi, times[1], times[0])
        counts[jobs, 0] = np.where(take_hi, n_hi, n_lo).astype(np.int64)
        counts[jobs, 1] = 0


def lagrangian(oracle: PricingOracle, lam: np.ndarray, nu: float = 0.0,
               admit: int | None = None) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """(L, supergradient (R+1,) in (λ, ν), counts (J, 2), chosen (J,)) at (λ, ν).

    L is summed as Σ t_j + λ·(Σ u_j - C) + ν·(k - |chosen|) over the priced-best
    configurations, not as Σ (t_j + λ·u_j) - λ·C: at large prices the latter
    loses the times to cancellation."""
    data = oracle.data
    best, counts, time_s = oracle.price(lam)
    owned = oracle.owned & np.isfinite(best)
    chosen = owned if admit is None else owned & (best - nu < 0)
    if chosen.all():  # the common case: no mask to apply (each masked copy costs more than the sums)
        g_lam = np.einsum("jk,jkr->r", counts.astype(float), data.demand) - data.cap
        times = time_s.sum()
    else:
        g_lam = np.einsum("jk,jkr->r", counts[chosen].astype(float), data.demand[chosen]) - data.cap
        times = time_s[chosen].sum()
    g_nu = 0.0 if admit is None else float(admit - chosen.sum())
    value = float(times + lam @ g_lam + (nu * g_nu if admit is not None else 0.0))
    grad = np.empty(len(g_lam) + 1)
    grad[:-1], grad[-1] = g_lam, g_nu
    return value, grad, counts, chosen


def solve_dual(data: AllocationData, *, admit: int | None = None, jobs: np.ndarray | None = None,
               rel_tol: float = DUAL_REL_TOL, max_iter: int = 400, lam0: np.ndarray | None = None,
               oracle: PricingOracle | None = None) -> DualResult:
    """max over λ >= 0 (and ν >= 0 with ``admit``) of L(λ, ν), by Kelley's cutting
    planes with in-out stabilisation (query between the best point and the
    master's). Stops when the master's value is within ``rel_tol`` of the best L.
    ``jobs`` restricts the problem to those jobs (e.g. the admitted ones)."""
    started = time.perf_counter()
    oracle = oracle or PricingOracle(data, jobs)
    R = data.R
    n = R + 1  # λ and ν (ν fixed at 0 without the admission row)
    # a box for the prices, enlarged whenever the master's optimum touches it
    base, _, _ = oracle.price(np.zeros(R))
    finite = np.isfinite(base)
    scale = max(1.0, float(np.abs(base[finite]).sum())) if finite.any() else 1.0
    cap = np.where(data.cap > 0, data.cap, 1.0)
    box = np.concatenate([np.full(R, 4.0 * scale / cap.min()), [4.0 * scale]])
    if admit is None:
        box[R] = 0.0
    x = np.zeros(n)
    if lam0 is not None:
        x[:R] = np.maximum(lam0, 0.0)
    best_val, best_x, best_counts, best_chosen = -np.inf, x.copy(), None, None
    upper = np.inf
    master = _Master(box)
    it = 0
    center = x.copy()
    enlarged = 0
    for it in range(1, max_iter + 1):
        value, grad, counts, chosen = lagrangian(oracle, x[:R], float(x[R]), admit)
        if value > best_val:
            best_val, best_x, best_counts, best_chosen = value, x.copy(), counts, chosen
            center = x.copy()
        # cut: L(y) <= value + grad·(y - x) for all y (L concave)
        master.add_cut(grad, value - float(grad @ x))
        # master: max z s.t. z - grad_i·y <= b_i, 0 <= y <= box
        y, upper = master.solve()
        if upper - best_val <= rel_tol * max(1.0, abs(upper)):
            touching = (y >= box * (1 - FIT_TOL)) & (box > 0)
            if not touching.any() or enlarged >= 30:
                break
            # the optimum may lie past the box: search a larger one. If the master's
            # value does not grow, its concave model peaks inside the box, so
            # ``upper`` bounds L everywhere
            box[touching] *= 8.0
            enlarged += 1
            master.set_box(box)
            y, wider = master.solve()
            if wider - best_val <= rel_tol * max(1.0, abs(wider)):
                upper = max(upper, wider)
                break
            upper = wider
        x = 0.5 * center + 0.5 * y  # in-out stabilisation: halfway to the master's point
        if bool(np.all(np.abs(x - center) <= TINY * np.abs(center))) or it % 10 == 0:
            x = y  # when the two meet (or now and then), query the master's point itself
    result = DualResult(bound=best_val, upper=max(upper, best_val), lam=best_x[:R], nu=float(best_x[R]),
                        counts=best_counts if best_counts is not None else np.zeros((data.J, 2), dtype=np.int64),
                        chosen=best_chosen if best_chosen is not None else np.zeros(data.J, dtype=bool),
                        iterations=it)
    result.seconds = time.perf_counter() - started
    return result


class _Master:
    """Kelley's master, max z s.t. z - a_i·y <= b_i (one row per cut), 0 <= y <= box, kept
    on one HiGHS instance: each cut is a row added and each solve starts from the last
    basis (rebuilding the LP every iteration cost more than the pricing)."""

    def __init__(self, box: np.ndarray):
        self.n = len(box)
        self.lp = IncrementalLp(threads=1)
        cols = np.arange(self.n + 1)
        self.lp.add_cols(np.concatenate([np.zeros(self.n), [-1.0]]),  # minimise -z
                         np.concatenate([np.zeros(self.n), [-INF]]), np.concatenate([box, [INF]]),
                         np.zeros(self.n + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        self._cols = cols.astype(np.int32)

    def add_cut(self, a: np.ndarray, b: float) -> None:
        """The cut z <= b + a·y, as the row -a·y + z <= b."""
        row = np.empty(self.n + 1)
        row[:-1], row[-1] = a, 1.0
        np.negative(row[:-1], out=row[:-1])
        self.lp.add_row(-INF, b, self._cols, row)

    def set_box(self, box: np.ndarray) -> None:
        self.lp.set_col_bounds(self._cols[:-1], np.zeros(self.n), box)

    def solve(self) -> tuple[np.ndarray, float]:
        """(y, z) at the master's optimum."""
        x = self.lp.solve_primal()
        return x[:self.n], float(x[self.n])


def enumerate_within(oracle: PricingOracle, lam: np.ndarray, threshold: np.ndarray) -> ChoiceSet:
    """Every configuration k of each job j with t_k + λ·u_k <= ``threshold[j]``
    (J,), without enumerating the others: at each worker count the priced time
    a + A/p + B·p is convex in p, so its p's form the interval between the roots
    of B·p² - (T - a)·p + A = 0. The interval is widened by one on each side and
    every candidate is then priced exactly, so rounding cannot lose one.
    Tables and jobs with a restart cost are enumerated and filtered."""
    data = oracle.data
    R = data.R
    with np.errstate(invalid="ignore"):
        threshold = np.where(np.isfinite(threshold), with_ties(threshold), threshold)  # keep the ties: extra configurations are harmless
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (job, c0, c1)
    alpha = data.demand[:, 0] @ lam
    beta = data.demand[:, 1] @ lam
    restart = set(oracle.restart.tolist())
    for sync, jobs, params in ((True, oracle.sync, oracle.sync_p), (False, oracle.asyn, oracle.asyn_p)):
        plain = np.array([j for j in jobs.tolist() if j not in restart], dtype=np.int64)
        if not len(plain):
            continue
        keep = np.isin(jobs, plain)
        g = oracle._grid(plain, params[keep], sync=sync)
        B = g["B0"] + alpha[plain][:, None]
        room = threshold[plain] - (data.offset[plain] if data.offset is not None else 0.0)  # less the objective's constant
        c = room[:, None] - g["base"] - beta[plain][:, None] * g["w"]  # what A/p + B·p may cost
        A = g["A"]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            disc = c * c - 4.0 * A * B
            root = np.sqrt(np.maximum(disc, 0.0))
            lo_p = np.where(B > 0, (c - root) / (2.0 * B), np.where(c > 0, A / c, np.inf))
            hi_p = np.where(B > 0, (c + root) / (2.0 * B), np.inf)
        ok = np.isfinite(g["base"]) & (c > 0) & (disc >= 0) | ((B <= 0) & (c > 0))
        first = np.maximum(np.floor(np.nan_to_num(lo_p, nan=np.inf, posinf=1e9)) - 1, g["lo0"])
        last = np.minimum(np.ceil(np.nan_to_num(hi_p, nan=-np.inf, posinf=1e9)) + 1, g["hi0"])
        n = np.where(ok & (last >= first), last - first + 1, 0).astype(np.int64)
        rows, cols = np.nonzero(n)
        counts_n = n[rows, cols]
        job = np.repeat(plain[rows], counts_n)
        offset = np.arange(counts_n.sum()) - np.repeat(np.cumsum(counts_n) - counts_n, counts_n)
        p = np.repeat(first[rows, cols], counts_n) + offset
        w = np.repeat(g["w"][rows, cols], counts_n)
        parts.append((job, p.astype(np.int64), w.astype(np.int64)))
    if len(oracle.amdahl):
        jobs = np.array([j for j in oracle.amdahl.tolist() if j not in restart], dtype=np.int64)
        if len(jobs):
            width = int((data.hi[jobs, 0] - data.lo[jobs, 0]).max()) + 1
            n = data.lo[jobs, 0][:, None] + np.arange(width)[None, :]
            inside = n <= data.hi[jobs, 0][:, None]
            r, k = np.nonzero(inside)
            parts.append((jobs[r], n[r, k].astype(np.int64), np.zeros(len(r), dtype=np.int64)))
    # tables and jobs with a restart cost: enumerate them
    others = np.array(sorted(set(oracle.generic.tolist()) | restart), dtype=np.int64)
    cs_other = enumerate_choices(data, others, prune=False) if len(others) else None
    job = np.concatenate([x[0] for x in parts]) if parts else np.zeros(0, dtype=np.int64)
    c0 = np.concatenate([x[1] for x in parts]) if parts else np.zeros(0, dtype=np.int64)
    c1 = np.concatenate([x[2] for x in parts]) if parts else np.zeros(0, dtype=np.int64)
    cost = np.empty(len(job))
    for form, group in ((OptimusSync, oracle.sync), (OptimusAsync, oracle.asyn), (Amdahl, oracle.amdahl)):
        mask = np.isin(job, group)
        if mask.any():
            params = _rows(oracle, form)[np.searchsorted(group, job[mask])]
            with np.errstate(divide="ignore", invalid="ignore"):
                cost[mask] = data.Q[job[mask]] * form.formula(*params.T, c0[mask].astype(float), c1[mask].astype(float))
                if data.offset is not None:
                    cost[mask] += data.offset[job[mask]]
    if cs_other is not None and cs_other.K:
        job = np.concatenate([job, cs_other.job])
        c0 = np.concatenate([c0, cs_other.counts[:, 0]])
        c1 = np.concatenate([c1, cs_other.counts[:, 1]])
        cost = np.concatenate([cost, cs_other.cost])
    use = c0[:, None] * data.demand[job, 0] + c1[:, None] * data.demand[job, 1] if len(job) else np.zeros((0, R))
    priced = cost + use @ lam
    keep = np.isfinite(cost) & (priced <= threshold[job])
    order = np.lexsort((c1[keep], c0[keep], job[keep]))
    job, c0, c1, cost, use = job[keep][order], c0[keep][order], c1[keep][order], cost[keep][order], use[keep][order]
    start = np.concatenate([[0], np.cumsum(np.bincount(job, minlength=data.J))])
    grid = int(np.prod(np.maximum(data.hi - data.lo + 1, 1), axis=1)[oracle.jobs].sum())
    cs = ChoiceSet(job=job, counts=np.stack([c0, c1], axis=1), cost=cost, use=use, start=start, enumerated=grid)
    return cs.subset(undominated(cs))


def undominated(cs: ChoiceSet, block: int = 64) -> np.ndarray:
    """Mask of the configurations no other of the same job dominates (no more
    tasks of either role, no more time; ``problem.pareto_prune``), all jobs at
    once: each job's configurations padded to a square of pairwise comparisons
    (jobs with more than ``block`` of them one at a time)."""
    from schedopt.allocation.problem import pareto_prune

    size = np.diff(cs.start)
    keep = np.ones(cs.K, dtype=bool)
    small = np.flatnonzero((size > 1) & (size <= block))
    if len(small):
        m = int(size[small].max())
        idx = cs.start[small][:, None] + np.arange(m)[None, :]
        valid = np.arange(m)[None, :] < size[small][:, None]
        idx = np.where(valid, idx, 0)
        c0, c1 = cs.counts[idx, 0], cs.counts[idx, 1]
        cost = np.where(valid, cs.cost[idx], np.inf)
        # dom[j, a, b]: configuration b dominates a
        dom = (c0[:, None, :] <= c0[:, :, None]) & (c1[:, None, :] <= c1[:, :, None]) & (cost[:, None, :] <= cost[:, :, None])
        dom &= valid[:, None, :] & ~np.eye(m, dtype=bool)[None]
        gone = dom.any(axis=2) & valid
        keep[idx[gone]] = False
    for j in np.flatnonzero(size > block).tolist():
        s = cs.of(j)
        keep[s] = pareto_prune(cs.counts[s], cs.cost[s])
    return keep


def _rows(oracle: PricingOracle, form: type) -> np.ndarray:
    """The parameter rows of the oracle's jobs of ``form``, in their (sorted) order."""
    return {OptimusSync: oracle.sync_p, OptimusAsync: oracle.asyn_p, Amdahl: oracle.amdahl_p}[form]
