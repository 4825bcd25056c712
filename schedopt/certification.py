"""Replaying a plan's certificates (docs/certificates.md): the dispatcher.

A plan's ``objective.bound`` and ``objective.admitted_bound`` are claims. Each
is *verified* when the plan's certificate holds numbers that prove it and the
problem's replay (``Problem.certificates``, code independent of the solvers')
recomputes a bound at least as strong from the instance alone; *wrong* when the
certificate's numbers prove less than the plan states; *not verified* when no
certificate comes with it, or only a backend's word (kind ``backend``). The gap
and an "optimal" status rest on the bound, so they are verified with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from schedopt.claims import TooLargeToReplay, replay_session
from schedopt.instance import Instance
from schedopt.plan import Plan, Proof, Status
from schedopt.tolerances import REL_TOL, floor_count
from schedopt.violations import Violation


def _kind_proves(entry: Any) -> str:
    """The claim a registered certificate kind proves (a bare callable proves ``bound``)."""
    return getattr(entry, "proves", "bound")


def _replay(instance: Instance, plan: Plan, problem: Any, proof: Proof, field: str) -> tuple[float | None, Violation | None, str | None]:
    """(proven, violation, why not verified) for one proof of ``objective.<field>``."""
    if proof.kind == "backend":
        by = proof.backend or "an unnamed backend"
        return None, None, f"proven by {by}'s branch and bound; no certificate to replay"
    replay = problem.certificates.get(proof.kind)
    if replay is None:
        known = ", ".join(sorted(problem.certificates)) or "none"
        return None, Violation(f"certificate.{field}.kind", f'"{proof.kind}" is no certificate of problem '
                                                             f'"{plan.problem}" (kinds: {known}, backend)'), None
    if _kind_proves(replay) != field:
        right = sorted(k for k, e in problem.certificates.items() if _kind_proves(e) == field) or ["none"]
        return None, Violation(f"certificate.{field}.kind", f'a "{proof.kind}" proof proves objective.{_kind_proves(replay)}, '
                                                             f"not objective.{field} (kinds for it: {', '.join(right)}, backend)"), None
    try:
        proven = float(replay(instance, plan, proof))
    except TooLargeToReplay as exc:
        return None, None, f"too large to replay: {exc}"
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        return None, Violation(f"certificate.{field}", f"cannot be replayed: {exc}"), None
    if math.isnan(proven):
        return None, Violation(f"certificate.{field}", "its numbers prove nothing (NaN)"), None
    return proven, None, None


#: the solvers that carry a replayable bound on every plan that has one to carry
#: (docs/certificates.md, "Who carries which"; a test holds the two equal): with ``strict``,
#: such a plan stating none fails. Allocation and quality plans pausing a job carry the
#: admitted count's bound, and the objective's bound when that count is proven the most.
CARRIES_BOUND = frozenset({
    "optimus-greedy", "optimus-lagrange", "drf", "tetris", "fifo", "srtf", "dl2", "slaq-greedy",
    "drf-containers", "swarm-static",
})


@dataclass
class Judgement:
    """What :func:`check_certificates` found, one line per claim: ``wrong`` (violations),
    ``unverified`` (claims nothing replayable proves), ``verified`` and ``not_stated``."""

    wrong: list[Violation] = field(default_factory=list)
    unverified: list[Violation] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)
    not_stated: list[str] = field(default_factory=list)


def check_certificates(instance: Instance, plan: Plan, problem: Any, *, strict: bool = False) -> Judgement:
    """Judge each claim of the plan (bound, admitted_bound, gap, status) against its proof;
    with ``strict``, a solver of :data:`CARRIES_BOUND` that leaves a bound out is unverified.
    The replays share one enumeration of the instance's configurations."""
    with replay_session():
        return _check_certificates(instance, plan, problem, strict=strict)


def _check_certificates(instance: Instance, plan: Plan, problem: Any, *, strict: bool) -> Judgement:
    out = Judgement()
    obj = plan.objective
    cert = plan.certificate
    J = len(instance.jobs)

    def judge(field: str, stated: float, claim: str, proof: Proof | None,
              shortfall: Callable[[float], tuple[bool, str]]) -> bool:
        """One claim: not verified without a replayable proof, wrong when the proof's numbers
        fall short (``shortfall(proven)`` says whether, and how much they prove). True: verified."""
        path = f"objective.{field}"
        if proof is None:
            out.unverified.append(Violation(path, f"{claim} not verified: the plan carries no certificate"))
            return False
        proven, bad, why = _replay(instance, plan, problem, proof, field)
        if bad is not None:
            out.wrong.append(bad)
        elif why is not None:
            out.unverified.append(Violation(path, f"{claim} not verified: {why}"))
        else:
            assert proven is not None
            short, proves = shortfall(proven)
            if short:
                out.wrong.append(Violation(path, f"{claim} is not proven: its certificate ({proof.kind}) proves {proves}"))
            else:
                out.verified.append(f"{path} {stated:.9g} ({proof.kind}: proves {proven:.9g})")
                return True
        return False

    # a proof for a claim the plan does not make proves nothing: refuse it rather than ignore it
    for field, stated in (("bound", obj.bound), ("admitted_bound", obj.admitted_bound)):
        if cert is not None and getattr(cert, field) is not None and stated is None:
            out.wrong.append(Violation(f"certificate.{field}", f"a proof of objective.{field}, which the plan does not state"))

    bound_ok = False
    if obj.value is not None and obj.bound is not None:
        value, bound, sense = obj.value, obj.bound, obj.sense

        def bound_short(proven: float) -> tuple[bool, str]:
            tol = REL_TOL * max(1.0, abs(value), abs(bound))
            return (bound - proven if sense == "min" else proven - bound) > tol, f"{proven:.9g}"

        bound_ok = judge("bound", bound, f"{'lower' if sense == 'min' else 'upper'} bound {bound:.9g}",
                         cert.bound if cert is not None else None, bound_short)
    elif plan.has_solution:
        out.not_stated.append("objective.bound")

    admitted = len(plan.allocation)
    lexicographic = problem.lexicographic_admission and plan.has_solution
    count_ok = not lexicographic or admitted >= J  # every job admitted: the most possible
    if obj.admitted_bound is not None and obj.admitted_bound < J:
        most_stated = obj.admitted_bound

        def count_short(proven: float) -> tuple[bool, str]:
            most = floor_count(proven)
            return most > most_stated, f"at most {most}"

        proven_count = judge("admitted_bound", most_stated, f"at most {most_stated} jobs admitted",
                             cert.admitted_bound if cert is not None else None, count_short)
        count_ok = count_ok or (proven_count and most_stated == admitted)
    elif obj.admitted_bound is not None:
        out.verified.append(f"objective.admitted_bound {obj.admitted_bound} (the instance has {J} jobs)")
    elif lexicographic and admitted < J:
        out.not_stated.append("objective.admitted_bound")

    # the lexicographic rule (docs/certificates.md): with a job paused, "optimal" and a gap on the
    # second objective need a proof that no plan admits more jobs than this one
    if not count_ok:
        why = (f"{admitted} of {J} jobs admitted and no verified objective.admitted_bound proves that no plan "
               f"admits more (the first objective)")
        more = obj.admitted_bound is not None and obj.admitted_bound > admitted
        if plan.status == Status.OPTIMAL:
            if more:
                out.wrong.append(Violation("status", f"optimal, but the plan admits {admitted} jobs and states that "
                                                     f"up to {obj.admitted_bound} may be admitted"))
            else:
                out.unverified.append(Violation("status", f"optimal not verified: {why}"))
        if obj.gap is not None:
            out.unverified.append(Violation("objective.gap", f"gap {obj.gap:.6g} not verified: {why}"))
    else:
        if obj.gap is not None and bound_ok:
            out.verified.append(f"objective.gap {obj.gap:.6g} (from the verified bound)")
        if plan.status == Status.OPTIMAL and bound_ok:
            out.verified.append("status optimal (the verified bound closes the gap"
                                + (", and no plan admits more jobs)" if lexicographic else ")"))
    if plan.status == Status.OPTIMAL and obj.value is not None and obj.bound is None:
        out.unverified.append(Violation("status", "optimal not verified: the plan states no bound"))
    if obj.gap is None and obj.bound is not None and plan.has_solution:
        out.not_stated.append("objective.gap")
    if strict and plan.solver in CARRIES_BOUND and plan.has_solution:
        owed = []
        if lexicographic and admitted < J and obj.admitted_bound is None:
            owed.append("objective.admitted_bound")
        if obj.bound is None and obj.value is not None and (count_ok or obj.admitted_bound == admitted):
            owed.append("objective.bound")
        for claim in owed:
            out.unverified.append(Violation(claim, f"not stated, though {plan.solver} carries it "
                                                   f"(docs/certificates.md, who carries which)"))
    return out
