"""Per-call latency of two checkouts of schedopt, pair by pair (the shared machine's speed drifts
by up to 2× within minutes: only times taken side by side, alternating, compare).

    .venv/bin/python benchmarks/paired_latency.py --base /tmp/old [--solver optimus-greedy]
        [--jobs 144] [--seeds 0,2,3,4] [--rounds 6] [--calls 7]

Each round starts one process per checkout, this one then ``--base`` (another clone, say at an
earlier commit: ``git clone -q . /tmp/old && git -C /tmp/old checkout -q REV``); each process
imports schedopt from its own checkout (not the editable install), calls ``schedopt.warm_up()``,
and solves ``--calls`` + 1 fresh `gavel` instances per seed (27 servers, 36 GPUs per type; the
first not timed), printing each seed's median milliseconds and plan value. Reported: per round the
median over seeds of this/base, and the median of those ratios; a seed whose plan values differ
between the checkouts is named (a latency change should keep the plans). Nothing is stored: a
result goes into docs/benchmarks.md's prose with the command that produced it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]  # this checkout, not the install
sys.path.insert(0, {src!r})
import json, statistics, time
import schedopt
from schedopt.generate import generate_instance
schedopt.warm_up()
out = {{}}
for seed in {seeds!r}:
    fresh = [generate_instance("gavel", jobs={jobs}, servers=27, seed=seed, data_dir={data!r}) for _ in range({calls} + 1)]
    schedopt.solve(fresh[0], {solver!r}, seed=0)
    times = []
    for inst in fresh[1:]:
        t0 = time.perf_counter()
        plan = schedopt.solve(inst, {solver!r}, seed=0)
        times.append(time.perf_counter() - t0)
    out[seed] = [statistics.median(times) * 1e3, plan.objective.value]
print(json.dumps(out))
"""


def side(src: Path, args: argparse.Namespace) -> dict[str, list[float]]:
    """One process of checkout ``src``: {seed: [median ms, plan value]}."""
    code = CHILD.format(src=str(src), seeds=args.seeds, jobs=args.jobs, data=args.data_dir, calls=args.calls,
                        solver=args.solver)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="the other checkout (the baseline)")
    ap.add_argument("--solver", default="optimus-greedy")
    ap.add_argument("--jobs", type=int, default=144)
    ap.add_argument("--seeds", default="0,2,3,4", help="comma-separated gavel seeds")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=7, help="timed calls per seed (each a fresh instance)")
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split(",")]
    ratios = []
    for k in range(args.rounds):
        this, base = side(ROOT, args), side(args.base, args)
        per_seed = {s: this[s][0] / base[s][0] for s in this}
        ratios.append(statistics.median(per_seed.values()))
        cells = ", ".join(f"seed {s}: {base[s][0]:.1f} -> {this[s][0]:.1f} ms" for s in this)
        print(f"round {k + 1}: {cells}; median ratio {ratios[-1]:.3f}", flush=True)
        differ = [s for s in this if this[s][1] != base[s][1]]
        if differ:
            print(f"  plan values differ on seeds {', '.join(differ)}", flush=True)
    print(f"{args.solver}, {args.jobs} jobs, seeds {args.seeds}: this / base, median of {args.rounds} rounds' "
          f"medians: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
