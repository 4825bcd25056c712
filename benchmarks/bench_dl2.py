"""DL2 benchmark (issue 19): the shipped policy (models/dl2/dl2-policy.npz) against
`drf` and `optimus-greedy` on held-out `dl2` traces (seeds 10000-10009, never
trained or validated on). Reads ../shared/data. Prints markdown.

    .venv/bin/python benchmarks/bench_dl2.py [POLICY.npz]

The policy is trained by the command in models/dl2/README.md.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from schedopt.cli.learning import HELDOUT_SEED
from schedopt.generate import generate_instance
from schedopt.learn.dl2 import SHIPPED, Policy, solver_for
from schedopt.sim import simulate

JOBS, SERVERS, MAX_TASKS, TRACES = 30, 13, 16, 10
#: other cluster sizes than the training traces': (jobs, servers), 3 traces each from this seed
OTHER_SIZES, OTHER_SEED = ((60, 26), (15, 7)), 30_000


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else str(SHIPPED)
    pol = Policy.load(path)
    rows = []
    for k in range(TRACES):
        wl = generate_instance("dl2", jobs=JOBS, servers=SERVERS, seed=HELDOUT_SEED + k, max_tasks=MAX_TASKS)
        t0 = time.perf_counter()
        dl2 = simulate(wl, solver_for(pol)).avg_jct_s
        dl2_s = time.perf_counter() - t0
        rows.append((HELDOUT_SEED + k, simulate(wl, "drf").avg_jct_s, simulate(wl, "optimus-greedy").avg_jct_s, dl2, dl2_s))
    a = np.array([r[1:4] for r in rows])
    print(f"### DL2 on {TRACES} held-out `dl2` traces ({JOBS} jobs, {SERVERS} servers, max {MAX_TASKS} tasks per role; "
          f"seeds {HELDOUT_SEED}-{HELDOUT_SEED + TRACES - 1})\n")
    print("| seed | drf (h) | optimus-greedy (h) | dl2 (h) | dl2 / drf | dl2 / optimus-greedy |")
    print("|---|---|---|---|---|---|")
    for seed, drf, opt, dl2, _ in rows:
        print(f"| {seed} | {drf / 3600:.3f} | {opt / 3600:.3f} | {dl2 / 3600:.3f} | {dl2 / drf:.3f} | {dl2 / opt:.3f} |")
    m = a.mean(axis=0)
    print(f"| mean | {m[0] / 3600:.3f} | {m[1] / 3600:.3f} | {m[2] / 3600:.3f} | {m[2] / m[0]:.3f} | {m[2] / m[1]:.3f} |")
    ratio_drf, ratio_opt = a[:, 2] / a[:, 0], a[:, 2] / a[:, 1]
    print(f"\nMedian per-trace ratio: dl2/drf {np.median(ratio_drf):.3f} (goal <= 0.75 on >= 10 traces; "
          f"{int(np.sum(ratio_drf <= 0.75))} of {TRACES} meet it), dl2/optimus-greedy {np.median(ratio_opt):.3f} "
          f"(goal <= 1.05; {int(np.sum(ratio_opt <= 1.05))} of {TRACES}). Simulating one trace under dl2: "
          f"median {np.median([r[4] for r in rows]):.2f} s.")
    print(f"\nOther sizes than the training traces' (3 traces each, seeds {OTHER_SEED}-{OTHER_SEED + 2}; mean average JCT):\n")
    print("| jobs | servers | drf (h) | optimus-greedy (h) | dl2 (h) | dl2 / drf | dl2 / optimus-greedy |")
    print("|---|---|---|---|---|---|---|")
    for jobs, servers in OTHER_SIZES:
        runs = []
        for k in range(3):
            wl = generate_instance("dl2", jobs=jobs, servers=servers, seed=OTHER_SEED + k, max_tasks=MAX_TASKS)
            runs.append([simulate(wl, "drf").avg_jct_s, simulate(wl, "optimus-greedy").avg_jct_s,
                         simulate(wl, solver_for(pol)).avg_jct_s])
        d, o, x = np.mean(runs, axis=0) / 3600
        print(f"| {jobs} | {servers} | {d:.3f} | {o:.3f} | {x:.3f} | {x / d:.3f} | {x / o:.3f} |")


if __name__ == "__main__":
    main()
