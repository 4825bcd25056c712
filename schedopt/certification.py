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
from typing import Any

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
    if obj.value is not None and obj.bound is not None:
        proof = cert.bound if cert is not None else None
        claim = f"{'lower' if obj.sense == 'min' else 'upper'} bound {obj.bound:.9g}"
        if proof is None:
            unverified.append(Violation("objective.bound", f"{claim} not verified: the plan carries no certificate"))
        else:
            proven, bad, why = _replay(instance, plan, problem, proof, "bound")
            if bad is not None:
                wrong.append(bad)
            elif why is not None:
                unverified.append(Violation("objective.bound", f"{claim} not verified: {why}"))
            else:
                assert proven is not None
                tol = REL_TOL * max(1.0, abs(obj.value), abs(obj.bound))
                short = obj.bound - proven if obj.sense == "min" else proven - obj.bound
                if short > tol:
                    wrong.append(Violation("objective.bound", f"{claim} is not proven: its certificate ({proof.kind}) "
                                                              f"proves {proven:.9g}"))
                else:
                    verified.append(f"objective.bound {obj.bound:.9g} ({proof.kind}: proves {proven:.9g})")
    elif plan.status == Status.OPTIMAL and obj.value is not None:
        unverified.append(Violation("status", "optimal not verified: the plan states no bound"))
    jobs = len(instance.jobs)
    if obj.admitted_bound is not None and obj.admitted_bound < jobs:
        proof = cert.admitted_bound if cert is not None else None
        claim = f"at most {obj.admitted_bound} jobs admitted"
        if proof is None:
            unverified.append(Violation("objective.admitted_bound", f"{claim} not verified: the plan carries no certificate"))
        else:
            proven, bad, why = _replay(instance, plan, problem, proof, "admitted_bound")
            if bad is not None:
                wrong.append(bad)
            elif why is not None:
                unverified.append(Violation("objective.admitted_bound", f"{claim} not verified: {why}"))
            else:
                assert proven is not None
                most = math.floor(proven + 1e-6)
                if most > obj.admitted_bound:
                    wrong.append(Violation("objective.admitted_bound", f"{claim} is not proven: its certificate "
                                                                       f"({proof.kind}) proves at most {most}"))
                else:
                    verified.append(f"objective.admitted_bound {obj.admitted_bound} ({proof.kind}: proves {proven:.9g})")
    return wrong, unverified, verified
