"""Speed functions: training steps per second as a function of task counts.

Every form exposes ``step_time_s(c0, c1)``: seconds per training step
(``1 / f``) for ``c0`` tasks of the job's first role and ``c1`` of its second.
For two-role jobs the roles are ordered ``(ps, worker)``, so ``c0 = p`` and
``c1 = w``; one-role jobs ignore ``c1``. The arithmetic is written once and
works on Python floats (the greedy's hot loop) and on numpy arrays (choice
enumeration) alike. Configurations a form does not allow cost ``inf``.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, ClassVar, Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PlainValidator, model_validator

from schedopt.io import number_validator
from schedopt.tolerances import TINY

NonNeg = Annotated[float, PlainValidator(number_validator(ge=0))]
Positive = Annotated[float, PlainValidator(number_validator(gt=0))]


class _Form(BaseModel):
    """What every speed form offers the solvers (issue 49 §4): ``step_time_s`` (scalar or
    array counts), ``scalar_step_time`` (the greedy's inner loop), ``n_roles``, and two
    flags the solvers read instead of testing the class: ``measured`` (only the listed counts
    run: ``configuration_array`` lists them) and ``closed_form`` (a ``formula`` over
    arrays of jobs, which the Lagrangian dual prices without enumerating)."""

    model_config = ConfigDict(extra="forbid")
    #: a table: the allowed configurations are listed (``configuration_array``: the measured counts, and
    #: with ``interpolate`` those between them), not every count within the bounds
    measured: ClassVar[bool] = False
    #: which closed-form pricing kernel of the Lagrangian dual prices it (allocation/dual.py: 0 eq. 4,
    #: 1 eq. 3, 2 Amdahl); -1: its configurations are enumerated
    price_kind: ClassVar[int] = -1

    @property
    def closed_form(self) -> bool:
        """Whether ``formula(*params, c0, c1)`` computes the step time for arrays of jobs."""
        return hasattr(type(self), "formula")

    @property
    def n_roles(self) -> int:
        """How many roles the form speaks of (2: ps and worker; 1: a single role)."""
        return 2

    def scalar_step_time(self) -> Any:
        """A fast ``step_time_s(c0, c1)`` for Python numbers (the greedy's inner loop):
        the formula with this form's parameters bound, one call per evaluation."""
        return functools.partial(self.formula, *self.params())  # type: ignore[attr-defined]

    def scaled(self, factor: float) -> "_Form":
        """The same form with every speed multiplied by ``factor`` (> 0)."""
        raise NotImplementedError(f"{type(self).__name__} cannot be scaled")

    def transfer_term_s(self, p: int, w: int) -> float | None:
        """Seconds per step that are PS-worker data transfer (Optimus eq. 2's S/p term); None
        when the form does not separate it."""
        return None

    @property
    def fit_form(self) -> str:
        """The form a scheduler fits to samples of this speed (Optimus §3.2: eq. 4, or eq. 3
        for asynchronous training)."""
        return "optimus-sync"


class OptimusSync(_Form):
    """Optimus eq. 4: f(p, w) = 1 / (θ0·M/w + θ1 + θ2·w/p + θ3·w + θ4·p), M = ``batch``."""

    price_kind: ClassVar[int] = 0
    form: Literal["optimus-sync"] = Field("optimus-sync", description="Optimus eq. 4 (synchronous training)")
    theta: Annotated[list[NonNeg], Field(min_length=5, max_length=5)] = Field(description="[θ0..θ4] >= 0, seconds per step terms")
    batch: Positive = Field(description="batch size M, examples per step")

    @model_validator(mode="after")
    def _not_all_zero(self) -> "OptimusSync":
        if sum(self.theta) <= 0:
            raise ValueError("theta: at least one coefficient must be > 0 (else the speed is infinite)")
        return self

    @staticmethod
    def formula(t0: Any, t1: Any, t2: Any, t3: Any, t4: Any, batch: Any, p: Any, w: Any) -> Any:
        return t0 * batch / w + t1 + t2 * w / p + t3 * w + t4 * p

    def params(self) -> tuple[float, ...]:
        return (*self.theta, self.batch)

    def step_time_s(self, c0: Any, c1: Any) -> Any:
        return self.formula(*self.params(), c0, c1)

    def scaled(self, factor: float) -> "OptimusSync":
        return self.model_copy(update={"theta": [t / factor for t in self.theta]})

    def transfer_term_s(self, p: int, w: int) -> float | None:
        return float(self.theta[2] * w / p)


class OptimusAsync(_Form):
    """Optimus eq. 3: f(p, w) = w / (θ0 + θ1·w/p + θ2·w + θ3·p)."""

    price_kind: ClassVar[int] = 1
    form: Literal["optimus-async"] = Field("optimus-async", description="Optimus eq. 3 (asynchronous training)")
    theta: Annotated[list[NonNeg], Field(min_length=4, max_length=4)] = Field(description="[θ0..θ3] >= 0")

    @model_validator(mode="after")
    def _not_all_zero(self) -> "OptimusAsync":
        if sum(self.theta) <= 0:
            raise ValueError("theta: at least one coefficient must be > 0 (else the speed is infinite)")
        return self

    @staticmethod
    def formula(t0: Any, t1: Any, t2: Any, t3: Any, p: Any, w: Any) -> Any:
        return (t0 + t1 * w / p + t2 * w + t3 * p) / w

    def params(self) -> tuple[float, ...]:
        return tuple(self.theta)

    def step_time_s(self, c0: Any, c1: Any) -> Any:
        return self.formula(*self.params(), c0, c1)

    def scaled(self, factor: float) -> "OptimusAsync":
        return self.model_copy(update={"theta": [t / factor for t in self.theta]})

    def transfer_term_s(self, p: int, w: int) -> float | None:
        return float(self.theta[1] / p)  # (θ1·w/p) / w: the job-level step of eq. 3

    @property
    def fit_form(self) -> str:
        return "optimus-async"


class Amdahl(_Form):
    """One role (SLAQ executors, all-reduce jobs): f(n) = 1 / (serial + parallel/n)."""

    price_kind: ClassVar[int] = 2
    form: Literal["amdahl"] = Field("amdahl", description="one role: f(n) = 1 / (serial + parallel / n)")
    serial: NonNeg = Field(description="seconds per step that do not shrink with n")
    parallel: NonNeg = Field(description="seconds per step on one task, divided among n")

    @property
    def n_roles(self) -> int:
        return 1

    @model_validator(mode="after")
    def _not_all_zero(self) -> "Amdahl":
        if self.serial + self.parallel <= 0:
            raise ValueError("serial + parallel must be > 0 (else the speed is infinite)")
        return self

    @staticmethod
    def formula(serial: Any, parallel: Any, n: Any, _unused: Any) -> Any:
        return serial + parallel / n

    def params(self) -> tuple[float, ...]:
        return (self.serial, self.parallel)

    def step_time_s(self, c0: Any, c1: Any) -> Any:
        return self.formula(*self.params(), c0, c1)

    def scaled(self, factor: float) -> "Amdahl":
        return self.model_copy(update={"serial": self.serial / factor, "parallel": self.parallel / factor})


def _step_times(speed: np.ndarray, runs: np.ndarray | None = None) -> np.ndarray:
    """1 / speed (s per step), inf where the speed is 0 (measured tables say "cannot
    run here" so) or, interpolating, where a neighbour it is drawn from cannot run
    (``runs`` < 1: the interpolated share of runnable neighbours)."""
    ok = speed > 0
    if runs is not None:
        ok &= runs >= 1.0 - TINY
    return np.where(ok, 1.0 / np.where(ok, speed, 1.0), np.inf)


#: a table's task counts may span at most this many configurations (its dense grid)
MAX_TABLE_CELLS = 4_000_000
#: tables of at most SHARED_GRID_POINTS points whose grid has at most SHARED_GRID_CELLS cells share
#: one read-only grid per distinct (interpolate, points): a workload's jobs repeat a few measured
#: tables, and each round of a simulation parses them anew; at most SHARED_GRIDS grids are kept
#: (then the cache starts over), under 32 MB
SHARED_GRID_POINTS = 64
SHARED_GRID_CELLS = 1024
SHARED_GRIDS = 4096
_SHARED_GRIDS: dict[tuple[Any, ...], np.ndarray] = {}
#: one-role tables of at most this many listed counts build their grid point by point
SMALL_TABLE_POINTS = 8


class TableSpeed(_Form):
    """Measured configurations: ``points: [[p, w, steps_per_s], ...]`` for
    two-role jobs, ``[[n, steps_per_s], ...]`` for one-role jobs. Only listed
    counts are allowed, unless ``interpolate`` is set: then every count between
    measured ones is allowed, its speed interpolated linearly (one role: along n;
    two roles: bilinearly, which needs the points to form a full p × w grid)."""

    measured: ClassVar[bool] = True
    form: Literal["table"] = Field("table", description="measured configurations (and, with interpolate, the counts between them)")
    points: Annotated[list[list[NonNeg]], Field(min_length=1)] = Field(description="[[p, w, steps_per_s], ...] (two roles) or [[n, steps_per_s], ...] (one role)")
    interpolate: bool = Field(False, description="allow counts between measured ones, speed interpolated linearly (steps/s)")

    @model_validator(mode="after")
    def _points(self) -> "TableSpeed":
        widths = {len(pt) for pt in self.points}
        if len(widths) != 1 or widths.pop() not in (2, 3):
            raise ValueError("points: every point must be [p, w, speed] (two roles) or [n, speed] (one role)")
        seen: set[tuple[int, ...]] = set()
        for i, pt in enumerate(self.points):
            counts, speed = pt[:-1], pt[-1]
            if any(c != int(c) or c < 1 for c in counts):
                raise ValueError(f"points[{i}]: task counts must be integers >= 1, got {counts}")
            if speed < 0:
                raise ValueError(f"points[{i}]: speed must be >= 0 (0: the configuration cannot run), got {speed}")
            key = tuple(int(c) for c in counts)
            if key in seen:
                raise ValueError(f"points[{i}]: configuration {list(key)} is listed twice")
            seen.add(key)
        largest = np.asarray(self.points, dtype=float)[:, :-1].max(axis=0) + 1
        if float(np.prod(largest)) > MAX_TABLE_CELLS:
            raise ValueError(f"points: task counts up to {[int(x) - 1 for x in largest]} span more than "
                             f"{MAX_TABLE_CELLS:,} configurations (MAX_TABLE_CELLS)")
        if self.interpolate and len(self.points[0]) == 3:
            ps = sorted({int(pt[0]) for pt in self.points})
            ws = sorted({int(pt[1]) for pt in self.points})
            if len(ps) * len(ws) != len(self.points):
                raise ValueError(f"interpolate: two-role points must form a full p × w grid "
                                 f"({len(ps)} p values × {len(ws)} w values = {len(ps) * len(ws)}, got {len(self.points)} points)")
        return self

    @property
    def n_roles(self) -> int:
        return len(self.points[0]) - 1

    def _grid(self) -> np.ndarray:
        """Step time in seconds on the dense grid of counts, shape (max_c0 + 1,
        max_c1 + 1) (one role: c1 = 0 only); inf where not allowed. Cached, and shared
        (read-only) between small tables of the same points (:data:`SHARED_GRIDS`)."""
        grid = self.__dict__.get("_grid_cache")
        if grid is not None:
            return grid
        key = None
        if len(self.points) <= SHARED_GRID_POINTS:
            key = (self.interpolate, tuple(map(tuple, self.points)))
            grid = _SHARED_GRIDS.get(key)
            if grid is not None:
                self.__dict__["_grid_cache"] = grid
                return grid
        grid = self._build_grid()
        grid.flags.writeable = False
        if key is not None and grid.size <= SHARED_GRID_CELLS:
            if len(_SHARED_GRIDS) >= SHARED_GRIDS:
                _SHARED_GRIDS.clear()
            _SHARED_GRIDS[key] = grid
        self.__dict__["_grid_cache"] = grid
        return grid

    def _build_grid(self) -> np.ndarray:
        if self.n_roles == 1 and not self.interpolate and len(self.points) <= SMALL_TABLE_POINTS:
            # a few listed counts (a rigid job's one measured point, say): set them one by one, without
            # the array round trip below (a host's first call builds hundreds of these; 25 -> 5 µs each)
            grid = np.full((max(int(n) for n, _ in self.points) + 1, 1), np.inf)
            for n, f in self.points:
                grid[int(n), 0] = 1.0 / f if f > 0 else np.inf
            return grid
        pts = np.asarray(self.points, dtype=float)
        if self.n_roles == 1:
            n, f = pts[:, 0].astype(np.int64), pts[:, 1]
            grid = np.full((int(n.max()) + 1, 1), np.inf)
            if self.interpolate:
                order = np.argsort(n)
                every = np.arange(int(n.min()), int(n.max()) + 1)
                grid[every, 0] = _step_times(np.interp(every, n[order], f[order]),
                                             np.interp(every, n[order], (f[order] > 0).astype(float)))
            else:
                grid[n, 0] = _step_times(f)
        else:
            p, w, f = pts[:, 0].astype(np.int64), pts[:, 1].astype(np.int64), pts[:, 2]
            grid = np.full((int(p.max()) + 1, int(w.max()) + 1), np.inf)
            if self.interpolate:  # bilinear on the full grid of measured (p, w)
                ps, ws = np.unique(p), np.unique(w)
                every_w = np.arange(int(ws[0]), int(ws[-1]) + 1)
                every_p = np.arange(int(ps[0]), int(ps[-1]) + 1)
                planes = []
                for values in (f, (f > 0).astype(float)):  # the speed, and where it may run
                    plane = np.empty((len(ps), len(ws)))
                    plane[np.searchsorted(ps, p), np.searchsorted(ws, w)] = values
                    along_w = np.array([np.interp(every_w, ws, row) for row in plane])  # (len(ps), len(every_w))
                    planes.append(np.array([np.interp(every_p, ps, col) for col in along_w.T]).T)
                grid[np.ix_(every_p, every_w)] = _step_times(*planes)
            else:
                grid[p, w] = _step_times(f)
        return grid

    def content_key(self) -> tuple[Any, ...]:
        """A hashable key equal for tables of the same step times on the same counts
        (the dense grid, which decides every configuration and its time). Cached."""
        key = self.__dict__.get("_content_key")
        if key is None:
            grid = self._grid()
            key = self.__dict__["_content_key"] = (grid.shape, grid.tobytes())
        return key

    def step_time_s(self, c0: Any, c1: Any) -> Any:
        grid = self._grid()
        if self.n_roles == 1:
            c1 = 0 if np.isscalar(c0) else np.zeros_like(np.asarray(c0))
        if np.isscalar(c0) and np.isscalar(c1):
            i, k = int(c0), int(c1)
            return float(grid[i, k]) if 0 <= i < grid.shape[0] and 0 <= k < grid.shape[1] else float("inf")
        a, b = np.broadcast_arrays(np.asarray(c0).astype(np.int64), np.asarray(c1).astype(np.int64))
        inside = (a >= 0) & (a < grid.shape[0]) & (b >= 0) & (b < grid.shape[1])
        out = np.full(a.shape, np.inf)
        out[inside] = grid[a[inside], b[inside]]
        return out

    def scalar_step_time(self) -> Any:
        """A fast ``step_time_s(c0, c1)`` for Python ints (the greedy's inner loop). Cached."""
        cached = self.__dict__.get("_scalar_cache")
        if cached is not None:
            return cached
        grid = self._grid()
        n0, n1 = grid.shape
        item = grid.item  # a Python float per lookup, without converting the whole grid
        one = self.n_roles == 1
        inf = float("inf")

        def step_time(c0: int, c1: int) -> float:
            c1 = 0 if one else c1
            return item(c0, c1) if 0 <= c0 < n0 and 0 <= c1 < n1 else inf
        self.__dict__["_scalar_cache"] = step_time
        return step_time

    def configuration_array(self) -> np.ndarray:
        """The allowed configurations as an int array (n, 2) of (c0, c1), sorted
        (one role: c1 = 0). Cached; do not modify."""
        arr = self.__dict__.get("_configs_cache")
        if arr is None:
            c0, c1 = np.nonzero(np.isfinite(self._grid()))
            arr = np.stack([c0, c1], axis=1).astype(np.int64)
            self.__dict__["_configs_cache"] = arr
        return arr

    def next_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(next0, next1), each shaped like the grid: the next allowed c0 above c0
        at the same c1 (next0), and the next allowed c1 above c1 at the same c0
        (next1); -1 where there is none. Cached; the greedy's moves in O(1)."""
        cached = self.__dict__.get("_next_cache")
        if cached is None:
            allowed = np.isfinite(self._grid())
            big = np.iinfo(np.int64).max
            cached = []
            for axis in (0, 1):
                n = allowed.shape[axis]
                idx = np.where(allowed, np.arange(n).reshape((-1, 1) if axis == 0 else (1, -1)), big)
                at_or_after = np.flip(np.minimum.accumulate(np.flip(idx, axis), axis=axis), axis)
                after = np.full_like(at_or_after, big)
                if axis == 0:
                    after[:-1] = at_or_after[1:]
                else:
                    after[:, :-1] = at_or_after[:, 1:]
                cached.append(np.where(after == big, -1, after))
            cached = tuple(cached)
            self.__dict__["_next_cache"] = cached
        return cached

    def scaled(self, factor: float) -> "TableSpeed":
        # a new model (not model_copy: that would carry the cached step-time grid), interpolation kept
        return TableSpeed(points=[[*pt[:-1], pt[-1] * factor] for pt in self.points], interpolate=self.interpolate)

    def configurations(self) -> list[tuple[int, ...]]:
        """The allowed configurations (measured, and interpolated when asked), as
        task-count tuples in role order, sorted."""
        arr = self.configuration_array()
        if self.n_roles == 1:
            return [(int(x),) for x in arr[:, 0]]
        return [(int(x), int(y)) for x, y in arr]


#: forms with a closed formula: ``cls.formula(*params, c0, c1)`` works on arrays of jobs
FORMULA_FORMS = (OptimusSync, OptimusAsync, Amdahl)

SpeedForm = Annotated[
    Union[OptimusSync, OptimusAsync, TableSpeed, Amdahl], Field(discriminator="form")
]
SPEED_FORMS = ("optimus-sync", "optimus-async", "table", "amdahl")


class StepTable:
    """The step times (s) of many speeds read at once: ``at(k, c0, c1)`` gives entry ``k[i]``'s
    step time at counts (``c0[i]``, ``c1[i]``), shapes (n,), the same floats each speed's
    ``scalar_step_time()`` gives (measured tables) or its ``step_time_s`` (formulas); inf where
    not allowed. The tables' dense grids (``TableSpeed._grid``) sit in one flat array, each
    distinct grid once, so reading n entries is a few numpy calls; a formula entry is read one
    by one, as before (its scalar arithmetic, not an array kernel's)."""

    def __init__(self, speeds: list[Any]) -> None:
        self.speeds = speeds
        n = len(speeds)
        measured, offset, n0, n1, one_role = [False] * n, [0] * n, [0] * n, [1] * n, [False] * n
        parts: list[np.ndarray] = []
        placed: dict[int, int] = {}  # id(grid) -> its offset (grids are shared between equal tables)
        size = 0
        for k, speed in enumerate(speeds):
            if speed is None or not speed.measured:
                continue
            grid = speed._grid()
            at = placed.get(id(grid))
            if at is None:
                at = placed[id(grid)] = size
                parts.append(grid.reshape(-1))
                size += grid.size
            measured[k], offset[k], (n0[k], n1[k]), one_role[k] = True, at, grid.shape, speed.n_roles == 1
        self.measured = np.array(measured, dtype=bool)  # (n,) entries read from ``flat``
        self.offset = np.array(offset, dtype=np.int64)  # (n,) where the entry's grid starts in ``flat``
        self.n0 = np.array(n0, dtype=np.int64)  # (n,) the grid's shape: c0 in [0, n0), c1 in [0, n1)
        self.n1 = np.array(n1, dtype=np.int64)
        self.one_role = np.array(one_role, dtype=bool)  # (n,) c1 reads as 0 (a one-role table)
        self.flat = np.concatenate(parts) if parts else np.zeros(0)

    def at(self, k: np.ndarray, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
        """Step time (s) of entries ``k`` (n,) at counts ``c0``, ``c1`` (n,; integers), shape (n,)."""
        k = np.asarray(k, dtype=np.int64)
        c0, c1 = np.asarray(c0, dtype=np.int64), np.asarray(c1, dtype=np.int64)
        out = np.full(len(k), np.inf)
        table = self.measured[k]
        a, b = c0, np.where(self.one_role[k], 0, c1)
        n1 = self.n1[k]
        inside = table & (a >= 0) & (a < self.n0[k]) & (b >= 0) & (b < n1)
        out[inside] = self.flat[self.offset[k[inside]] + a[inside] * n1[inside] + b[inside]]
        for i in np.flatnonzero(~table).tolist():
            speed = self.speeds[int(k[i])]
            if speed is not None:
                out[i] = float(speed.step_time_s(int(c0[i]), int(c1[i])))
        return out


def steps_per_s(speed: SpeedForm, c0: Any, c1: Any = 1) -> Any:
    """f(c0, c1) in training steps per second (0 where the form does not allow it)."""
    with np.errstate(divide="ignore"):
        return 1.0 / np.asarray(speed.step_time_s(c0, c1), dtype=float)


# ---- fitting (Optimus §3.2) -------------------------------------------------------------

class FitError(ValueError):
    """Samples that cannot be fitted (too few, non-finite, non-positive speeds)."""


def _features(form: str, p: np.ndarray, w: np.ndarray, batch: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The linearised model: (A, scale) with A·θ = scale / f.

    sync (eq. 4):  1/f = θ0·M/w + θ1 + θ2·w/p + θ3·w + θ4·p   -> scale 1
    async (eq. 3): w/f = θ0 + θ1·w/p + θ2·w + θ3·p              -> scale w
    """
    if form == "optimus-sync":
        if batch is None or not batch > 0:
            raise FitError("optimus-sync needs the batch size M > 0")
        return np.column_stack([batch / w, np.ones_like(w), w / p, w, p]), np.ones_like(w)
    if form == "optimus-async":
        return np.column_stack([np.ones_like(w), w / p, w, p]), w
    if form == "amdahl":
        return np.column_stack([np.ones_like(p), 1.0 / p]), np.ones_like(p)
    raise FitError(f'cannot fit speed form "{form}"; expected optimus-sync, optimus-async or amdahl')


class SpeedFit(BaseModel):
    """A fitted speed form and how well it explains the samples.

    ``rel_error`` per sample: |f̂ - f| / f. ``underdetermined``: fewer distinct
    configurations than coefficients, so θ is not unique (a flagged fit)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    speed: Union[OptimusSync, OptimusAsync, Amdahl]
    samples: int
    configurations: int
    residual_ss: float  # Σ (A·θ - scale/f)^2 of the linearised model (the paper's "residual sum of squares")
    rel_error: list[float]
    underdetermined: bool

    @property
    def mean_rel_error(self) -> float:
        return float(np.mean(self.rel_error)) if self.rel_error else float("nan")

    @property
    def max_rel_error(self) -> float:
        return float(np.max(self.rel_error)) if self.rel_error else float("nan")


def fit_speed(samples: Any, form: str = "optimus-sync", *, batch: float | None = None,
              relative: bool = False) -> SpeedFit:
    """Fit Optimus eq. 3 or 4 to samples ``(p, w, steps_per_s)`` by non-negative
    least squares on the linearised form, as the paper does (scipy's NNLS).
    ``amdahl`` (one role) takes samples ``(n, steps_per_s)``: 1/f = serial + parallel/n.

    ``relative=True`` weights each row by f, so the residuals are relative
    errors of the step time rather than absolute ones."""
    import scipy.optimize

    try:
        arr = np.asarray(samples, dtype=float)
    except (TypeError, ValueError):
        raise FitError("samples must be rows of numbers") from None
    width = 2 if form == "amdahl" else 3
    if arr.ndim != 2 or arr.shape[1] != width or len(arr) == 0:
        layout = "(n, speed)" if width == 2 else "(p, w, speed)"
        raise FitError(f"expected samples of shape (rows, {width}) as {layout}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise FitError("samples contain NaN or infinite values")
    if width == 2:
        arr = np.column_stack([arr[:, 0], np.ones(len(arr)), arr[:, 1]])
    p, w, f = arr[:, 0], arr[:, 1], arr[:, 2]
    if np.any(p < 1) or np.any(w < 1):
        raise FitError("task counts must be >= 1")
    if np.any(f <= 0):
        raise FitError("speeds must be > 0")
    A, scale = _features(form, p, w, batch)
    b = scale / f
    weights = f if relative else np.ones_like(f)
    theta, _ = scipy.optimize.nnls(A * weights[:, None], b * weights)
    if not np.any(theta > 0):
        raise FitError("the fit gives all-zero coefficients (infinite speed); the samples do not fit this form")
    speed: OptimusSync | OptimusAsync | Amdahl
    if form == "optimus-sync":
        speed = OptimusSync(theta=[float(t) for t in theta], batch=float(batch))  # type: ignore[arg-type]
    elif form == "amdahl":
        speed = Amdahl(serial=float(theta[0]), parallel=float(theta[1]))
    else:
        speed = OptimusAsync(theta=[float(t) for t in theta])
    predicted = steps_per_s(speed, p, w)
    configs = len({(int(a), int(c)) for a, c in zip(p, w)})
    return SpeedFit(
        speed=speed, samples=len(f), configurations=configs,
        residual_ss=float(np.sum((A @ theta - b) ** 2)),
        rel_error=[float(x) for x in np.abs(predicted - f) / f],
        underdetermined=configs < A.shape[1],
    )


class SpeedFitter:
    """Collects ``(p, w, speed)`` samples as they arrive and refits on demand."""

    def __init__(self, form: str = "optimus-sync", *, batch: float | None = None, relative: bool = False):
        _features(form, np.ones(1), np.ones(1), batch)  # fail early on a bad form or batch
        self.form, self.batch, self.relative = form, batch, relative
        self._samples: list[tuple[float, float, float]] = []

    def add(self, p: int, w: int, steps_per_s: float) -> None:
        self._samples.append((float(p), float(w), float(steps_per_s)))

    def fit(self) -> SpeedFit:
        if not self._samples:
            raise FitError("no samples yet")
        return fit_speed(self._samples, self.form, batch=self.batch, relative=self.relative)


def explain_table(table: TableSpeed, form: str = "optimus-sync", *, batch: float | None = None,
                  relative: bool = False) -> SpeedFit:
    """How well a fitted Optimus form explains a measured table (all its points)."""
    if table.n_roles != 2:
        raise FitError("only two-role tables (p, w, speed) can be fitted to Optimus forms")
    return fit_speed(table.points, form, batch=batch, relative=relative)
