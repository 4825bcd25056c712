"""The leaderboard (docs/leaderboard.md): every built-in solver on the benchmark subset of
schedlib-2026.1, one `bench run` each, stored in benchmarks/results/leaderboard/SOLVER.json.

    python benchmarks/leaderboard.py [--time-limit 10] [--set benchmark] [--only SOLVER ...]

Equivalent, solver by solver:
    schedopt bench run benchmark --solver S --time-limit 10 --out benchmarks/results/leaderboard/S.json
    schedopt bench report benchmarks/results/leaderboard/*.json --out docs/leaderboard.md
Runs one solver at a time (times are compared across solvers).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from schedopt.bench import report, run
from schedopt.bench.report import LEADERBOARD_COMMAND
from schedopt.io import write_document
from schedopt.registry import solvers

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "leaderboard"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--set", default="benchmark")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    logging.getLogger("pyomo").setLevel(logging.ERROR)
    RESULTS.mkdir(parents=True, exist_ok=True)
    for info in solvers():
        if args.only and info.name not in args.only:
            continue
        if info.unavailable is not None:
            print(f"{info.name}: unavailable ({info.unavailable})")
            continue
        result = run(args.set, info.name, time_limit=args.time_limit, seed=0, data_dir=args.data_dir)
        write_document(RESULTS / f"{info.name}.json", result.to_dict(), tidy=True)
        s = result.summary()
        print(f"{info.name}: ran {s['ran']}, at best {s['at_best']}, proven {s['proven_optimal']}, "
              f"mean gap {s['mean_gap']}, sgm {s['sgm_seconds']}", flush=True)
    page = report(sorted(RESULTS.glob("*.json")), command=LEADERBOARD_COMMAND)
    (ROOT / "docs" / "leaderboard.md").write_text(page + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
