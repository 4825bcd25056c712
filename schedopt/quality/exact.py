"""``slaq-milp`` and ``slaq-cpsat``: the exact multiple-choice model over each
job's count, solved by the allocation problem's lexicographic driver and
backends with cost = -R_j (admit the most jobs, then maximise Σ R_j)."""

from __future__ import annotations

from schedopt.allocation.cpsat import CpSatBackend
from schedopt.allocation.exact import solve_exact
from schedopt.allocation.milp import HighsBackend
from schedopt.allocation.problem import AllocationData
from schedopt.instance import Instance
from schedopt.plan import Plan
from schedopt.quality.greedy import slaq_greedy
from schedopt.quality.problem import QualityData, compile_quality
from schedopt.registry import register
from schedopt.tolerances import MIP_REL_GAP


def _greedy_incumbent(data: AllocationData, start: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    assert isinstance(data, QualityData)
    return slaq_greedy(data, start)[0]


@register("slaq-milp", problem="quality", exact=True, backend="pyomo+highs", supports_time_limit=True)
class SlaqMilp:
    """Exact multiple-choice model of SLAQ's allocation over each job's count (Pyomo + HiGHS)."""

    def __init__(self, *, rel_gap: float = MIP_REL_GAP, threads: int = 1):
        self.rel_gap = float(rel_gap)
        self.threads = int(threads)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        return solve_exact(HighsBackend(self.rel_gap, self.threads), self.name, instance, time_limit=time_limit,
                           seed=seed, options={"rel_gap": self.rel_gap, "threads": self.threads},
                           compile=compile_quality, heuristic=_greedy_incumbent)


@register("slaq-cpsat", problem="quality", exact=True, backend="cp-sat", supports_time_limit=True, requires=("ortools",))
class SlaqCpSat:
    """The same model in OR-Tools CP-SAT (reductions integer-scaled; the bound accounts for it)."""

    def __init__(self, *, workers: int = 1):
        self.workers = int(workers)

    def solve(self, instance: Instance, *, time_limit: float | None = None, seed: int | None = None) -> Plan:
        return solve_exact(CpSatBackend(self.workers), self.name, instance, time_limit=time_limit, seed=seed,
                           options={"workers": self.workers}, compile=compile_quality, heuristic=_greedy_incumbent)
