"""Clocks seen from outside (issues 40 and 41 §4), each call in a fresh process:

- ``presolve``: `optimus-milp` with HiGHS's presolve on and off (off: its default) under a time
  limit, wall time of `schedopt solve` and the plan's status (table `milp-presolve`);
- ``clock``: `schedopt solve --time-limit T` on 4,000 jobs, the plan's own `solve_seconds`
  (table `cli-clock`);
- ``guest``: the first and second `schedopt.solve` in a fresh interpreter, with and without
  `schedopt.warm_up` first (table `guest-first-calls`).

    .venv/bin/python benchmarks/bench_clock.py [--only presolve|clock|guest] [--data-dir ../shared/data]

philly and dl2 instances need the shared data folder; without it their rows are left out (said in
the table's notes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tables  # benchmarks/tables.py, next to this file (run as a script)

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"


def generate(family: str, jobs: int, servers: int, seed: int, out: Path, data_dir: str) -> Path:
    path = out / f"{family}-{jobs}-{servers}-{seed}.json"
    if not path.exists():
        subprocess.run([str(BIN / "schedopt"), "generate", family, "--jobs", str(jobs), "--servers", str(servers),
                        "--seed", str(seed), "--out", str(path), "--data-dir", data_dir], check=True,
                       capture_output=True)
    return path


def solve(path: Path, solver: str, time_limit: float | None, *options: str) -> tuple[float, dict]:
    """Wall seconds of one `schedopt solve` process, and its plan."""
    cmd = [str(BIN / "schedopt"), "solve", str(path), "--solver", solver, "--format", "json"]
    cmd += [] if time_limit is None else ["--time-limit", str(time_limit)]
    for opt in options:
        cmd += ["--option", opt]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    assert done.returncode in (0, 1), done.stderr
    return wall, json.loads(done.stdout)["plan"]


def status(plan: dict) -> str:
    gap = plan["objective"].get("gap")
    if plan["status"] == "optimal":
        return "optimal"
    return plan["status"] + ("" if gap is None else f" (gap {gap:.1e})")


def spread(values: list[float], digits: int = 1) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:.{digits}f}" if f"{lo:.{digits}f}" == f"{hi:.{digits}f}" else f"{lo:.{digits}f}-{hi:.{digits}f}"


def presolve(data_dir: str, runs: int = 2) -> None:
    cases = [("philly", 4000, 16000, 5, 20.0), ("optimus", 4000, 16000, 3, 60.0), ("optimus", 4000, 16000, 5, 60.0),
             ("dl2", 1000, 4000, 5, 60.0)]
    notes = []
    if not Path(data_dir).is_dir():
        notes.append(f"philly and dl2 rows left out: no data folder at {data_dir}")
        cases = [c for c in cases if c[0] not in ("philly", "dl2")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = [(f"{fam} {jobs:,} × {servers:,}, seed {seed}", generate(fam, jobs, servers, seed, Path(tmp), data_dir), t)
                 for fam, jobs, servers, seed, t in cases]
        paths.append(("instances/optimus-1000.json", ROOT / "instances" / "optimus-1000.json", None))
        for label, path, limit in paths:
            cells, stages = [], set()
            for option in ("presolve=true", "presolve=false"):
                results = [solve(path, "optimus-milp", limit, option) for _ in range(runs)]
                states = sorted({status(plan) for _, plan in results})
                stages |= {plan["metrics"].get("stopped_in", "HiGHS's branch and bound") for _, plan in results}
                cells.append(f"{spread([w for w, _ in results])}, {' / '.join(states)}")
            rows.append([label, "none" if limit is None else f"{limit:g}", *cells, "; ".join(sorted(stages))])
    tables.save("milp-presolve", columns=["instance", "T (s)", "presolve on: wall (s), status",
                                          "presolve off (default): wall (s), status", "where the proof came from"],
                rows=rows, command="benchmarks/bench_clock.py --only presolve", seeds=[3, 5],
                notes=[f"`schedopt solve FILE --solver optimus-milp --time-limit T --option presolve=...`, one fresh "
                       f"process per call, {runs} calls each (min-max); instances from `schedopt generate FAMILY --jobs J "
                       "--servers S --seed N`", *notes])
    print(tables.render("milp-presolve"))


def clock() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = generate("optimus", 4000, 16000, 5, Path(tmp), str(DEFAULT_DATA))
        for solver in ("optimus-milp", "optimus-cpsat"):
            cells = []
            for limit in (0.5, 2.0, 10.0):
                _, plan = solve(path, solver, limit)
                cells.append(f"{plan['solve_seconds']:.2f} ({status(plan)})")
            rows.append([f"`{solver}`", *cells])
        startup = [solve(ROOT / "instances" / "optimus-100.yaml", "optimus-greedy", None)[0] for _ in range(3)]
    tables.save("cli-clock", columns=["solver", "T = 0.5 s", "T = 2 s", "T = 10 s"], rows=rows,
                command="benchmarks/bench_clock.py --only clock", seeds=[5],
                notes=["`solve_seconds` of the plan (the solve's own clock, from FILE read and validated) of "
                       "`schedopt solve` on `generate optimus --jobs 4000 --servers 16000 --seed 5`, one fresh process "
                       "per call",
                       f"the whole `schedopt solve instances/optimus-100.yaml --solver optimus-greedy` process, start-up "
                       f"included: {spread(startup, 2)} s (three calls)"])
    print(tables.render("cli-clock"))


GUEST = """
import json, sys, time
import schedopt
from schedopt.generate import generate_instance
inst = generate_instance("optimus", jobs=50, servers=6, seed=1)  # contended: the MILP reaches HiGHS
out = {}
if sys.argv[1] == "warm":
    t0 = time.perf_counter(); schedopt.warm_up(["optimus-greedy", "optimus-milp"]); out["warm_up"] = time.perf_counter() - t0
for name in ("optimus-greedy", "optimus-milp"):
    for call in ("first", "second"):
        t0 = time.perf_counter(); schedopt.solve(inst, name); out[f"{name} {call}"] = time.perf_counter() - t0
print(json.dumps(out))
"""


def guest(runs: int = 3) -> None:
    rows = []
    for mode in ("cold", "warm"):
        got = [json.loads(subprocess.run([sys.executable, "-c", GUEST, mode], capture_output=True, text=True,
                                         check=True).stdout) for _ in range(runs)]
        col = {k: [g[k] for g in got] for k in got[0]}
        label = "cold" if mode == "cold" else f"after `warm_up` ({spread(col['warm_up'], 2)} s at start-up)"
        rows.append([label, spread(col["optimus-greedy first"], 3), spread(col["optimus-milp first"], 3),
                     f"greedy {spread(col['optimus-greedy second'], 3)}, milp {spread(col['optimus-milp second'], 3)}"])
    tables.save("guest-first-calls", columns=["", "first `optimus-greedy` (s)", "first `optimus-milp` (s)",
                                              "second call (s)"],
                rows=rows, command="benchmarks/bench_clock.py --only guest", seeds=[1],
                notes=[f"fresh interpreters, {runs} runs each (min-max): `schedopt.solve` twice per solver on `optimus`, "
                       "50 jobs on 6 servers (contended, so `optimus-milp` builds its model and runs HiGHS), with and without `schedopt.warm_up([\"optimus-greedy\", \"optimus-milp\"])` "
                       "first"])
    print(tables.render("guest-first-calls"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["presolve", "clock", "guest"])
    ap.add_argument("--data-dir", default=str(DEFAULT_DATA))
    args = ap.parse_args()
    if args.only in (None, "guest"):
        guest()
    if args.only in (None, "clock"):
        clock()
    if args.only in (None, "presolve"):
        presolve(args.data_dir)
