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
from typing import Any, Callable

from schedopt.checking import REL_TOL, Violation
from schedopt.instance import Instance
from schedopt.plan import Plan, Proof, Status


def _replay(instance: Instance, plan: Plan, problem: Any, proof: Proof, field: str) -> tuple[float | None, Violation | None, str | None]:
    """(proven, violation, why not verified) for one proof."""
    from schedopt.allocation.certificates import TooLargeToReplay

    if proof.kind == "backend":
        by = proof.backend or "an unnamed backend"
        return None, None, f"proven by {by}'s branch and bound; no certificate to replay"
    replay = problem.certificates.get(proof.kind)
    if replay is None:
        known = ", ".join(sorted(problem.certificates)) or "none"
        return None, Violation(f"certificate.{field}.kind", f'"{proof.kind}" is no certificate of problem '
                                                             f'"{plan.problem}" (kinds: {known}, backend)'), None
    try:
        proven = float(replay(instance, plan, proof))
    except TooLargeToReplay as exc:
        return None, None, f"too large to replay: {exc}"
    except (ValueError, KeyError) as exc:
        return None, Violation(f"certificate.{field}", f"cannot be replayed: {exc}"), None
    if math.isnan(proven):
        return None, Violation(f"certificate.{field}", "its numbers prove nothing (NaN)"), None
    return proven, None, None


def check_certificates(instance: Instance, plan: Plan, problem: Any) -> tuple[list[Violation], list[Violation], list[str]]:
    """(wrong, unverified, verified) for the plan's bound and admitted bound."""
    wrong: list[Violation] = []
    unverified: list[Violation] = []
    verified: list[str] = []
    obj = plan.objective
    cert = plan.certificate

    def judge(field: str, stated: float, claim: str, proof: Proof | None,
              shortfall: Callable[[float], tuple[bool, str]]) -> None:
        """One claim: not verified without a replayable proof, wrong when the proof's
        numbers fall short (``shortfall(proven)`` says whether, and how much they prove)."""
        path = f"objective.{field}"
        if proof is None:
            unverified.append(Violation(path, f"{claim} not verified: the plan carries no certificate"))
            return
        proven, bad, why = _replay(instance, plan, problem, proof, field)
        if bad is not None:
            wrong.append(bad)
        elif why is not None:
            unverified.append(Violation(path, f"{claim} not verified: {why}"))
        else:
            assert proven is not None
            short, proves = shortfall(proven)
            if short:
                wrong.append(Violation(path, f"{claim} is not proven: its certificate ({proof.kind}) proves {proves}"))
            else:
                verified.append(f"{path} {stated:.9g} ({proof.kind}: proves {proven:.9g})")

    if obj.value is not None and obj.bound is not None:
        value, bound, sense = obj.value, obj.bound, obj.sense

        def bound_short(proven: float) -> tuple[bool, str]:
            tol = REL_TOL * max(1.0, abs(value), abs(bound))
            return (bound - proven if sense == "min" else proven - bound) > tol, f"{proven:.9g}"

        judge("bound", bound, f"{'lower' if sense == 'min' else 'upper'} bound {bound:.9g}",
              cert.bound if cert is not None else None, bound_short)
    elif plan.status == Status.OPTIMAL and obj.value is not None:
        unverified.append(Violation("status", "optimal not verified: the plan states no bound"))
    if obj.admitted_bound is not None and obj.admitted_bound < len(instance.jobs):
        most_stated = obj.admitted_bound

        def count_short(proven: float) -> tuple[bool, str]:
            most = math.floor(proven + 1e-6)
            return most > most_stated, f"at most {most}"

        judge("admitted_bound", most_stated, f"at most {most_stated} jobs admitted",
              cert.admitted_bound if cert is not None else None, count_short)
    return wrong, unverified, verified
