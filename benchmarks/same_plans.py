"""Same plans before and after a refactoring (issue 49 §6): every allocation solver on a fixed
set of instances, each plan reduced to its status, admitted count, objective value and a digest
of its decisions (counts, types, paused jobs). ``--write`` stores them in
tests/golden/allocation-plans.json; tests/test_same_plans.py solves again and compares.

    .venv/bin/python benchmarks/same_plans.py --write   # after a change that may change plans, on purpose
    .venv/bin/python benchmarks/same_plans.py           # print what differs from the stored ones

Instances: the bundled allocation instances, generated `optimus`, `gavel` (typed) and
`dl2` instances, and schedopt.testing's tiny typed, quota and restart instances (no
shared data needed). The stored records were taken before issue 49's re-layout and held
after each of its steps; rewritten once since, on purpose, when `gavel-las` and
`gavel-finish-time-fairness` took Gavel's own equal share (issue 50): 8 of their plans changed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "allocation-plans.json"
#: solvers whose decisions no LP or MIP backend touches: their digests must match exactly
PURE = ("drf", "fifo", "srtf", "tetris", "kueue-admission")
SKIP = ("dl2",)  # its untrained policy warns; its plans are tested in tests/test_dl2.py


#: the shared data folder (``gavel`` reads Gavel's measured throughputs from it; never in the repository)
DATA_DIR = ROOT.parent / "shared" / "data"


def instances(missing: list[str] | None = None) -> dict[str, Any]:
    """The instances by name; a generated one whose family needs the shared data folder, absent
    here, is left out and named in ``missing`` (with why)."""
    from schedopt.errors import InputError
    from schedopt.generate import generate_instance
    from schedopt.instance import load_instance
    from schedopt.testing.instances import random_quota_instance, random_restart_instance, random_typed_instance

    out = {name: load_instance(ROOT / "instances" / name) for name in ("optimus-100.yaml", "optimus-testbed.yaml",
                                                                        "small-hand.yaml")}
    for family, jobs, servers, seed in (("optimus", 200, 40, 1), ("gavel", 40, 10, 1), ("gavel", 40, 10, 2),
                                        ("dl2", 200, 50, 1)):
        try:
            out[f"{family}-{jobs}-{seed}"] = generate_instance(family, jobs=jobs, servers=servers, seed=seed,
                                                               data_dir=DATA_DIR)
        except InputError as exc:
            if missing is None:
                raise
            missing.append(f"{family}-{jobs}-{seed}: {str(exc).splitlines()[0]}")
    for seed in range(4):
        out[f"typed-{seed}"] = random_typed_instance(seed)
        out[f"quota-{seed}"] = random_quota_instance(seed)
        out[f"restart-{seed}"] = random_restart_instance(seed)
    return out


def record(plan: Any) -> dict[str, Any]:
    decisions = json.dumps({"allocation": plan.allocation, "accelerators": plan.accelerators,
                            "paused": sorted(plan.paused)}, sort_keys=True)
    value = plan.objective.value
    return {"status": plan.status.value, "admitted": plan.objective.admitted,
            "value": None if value is None else float(f"{value:.12g}"),
            "decisions": hashlib.sha256(decisions.encode()).hexdigest()[:16]}


def solve_all(missing: list[str] | None = None) -> dict[str, dict[str, Any]]:
    import schedopt

    names = [s.name for s in schedopt.solvers("allocation") if s.name not in SKIP and s.unavailable is None]
    return {f"{i}|{s}": record(schedopt.solve(inst, s, seed=0)) for i, inst in instances(missing).items() for s in names}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    got = solve_all()
    if args.write:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"{len(got)} plans stored in {GOLDEN.relative_to(ROOT)}")
        return
    stored = json.loads(GOLDEN.read_text())
    differ = [k for k in stored if stored[k] != got.get(k)]
    for k in differ:
        print(k, stored[k], got.get(k))
    print(f"{len(stored) - len(differ)} of {len(stored)} plans the same")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
