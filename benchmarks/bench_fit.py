"""Performance-model benchmarks (issue 3). Stores benchmarks/results/fit-speed.json and prints it.

    .venv/bin/python benchmarks/bench_fit.py [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import tables  # benchmarks/tables.py, next to this file (run as a script)
from schedopt.convergence import fit_loss_curve
from schedopt.data import DEFAULT_DATA_DIR, dl2_config_speeds
from schedopt.speed import fit_speed, steps_per_s


def loss_fit_ms(points: int = 10_000, runs: int = 9) -> float:
    k = np.arange(float(points))
    y = (1 / (0.02 * k + 1) + 0.05) * (1 + 0.02 * np.random.default_rng(0).standard_normal(points))
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fit_loss_curve(k, y)
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def held_out_errors(data_dir: str, samples: int = 10, repeats: int = 50, seed: int = 0) -> list[tuple[str, int, float, float]]:
    rng = np.random.default_rng(seed)
    out = []
    for model, v in dl2_config_speeds(data_dir).items():
        pts = v["points"]
        med = []
        for _ in range(repeats):
            idx = rng.permutation(len(pts))
            fit = fit_speed(pts[idx[:samples]], "optimus-sync", batch=v["batch"])
            te = pts[idx[samples:]]
            med.append(np.median(np.abs(steps_per_s(fit.speed, te[:, 0], te[:, 1]) - te[:, 2]) / te[:, 2]))
        full = fit_speed(pts, "optimus-sync", batch=v["batch"])
        out.append((model, len(pts), float(np.median(med)), full.mean_rel_error))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    args = ap.parse_args()
    ms = loss_fit_ms()
    rows = [[model, str(n), f"{100 * held:.1f}%", f"{100 * full:.1f}%"] for model, n, held, full in held_out_errors(args.data_dir)]
    tables.save("fit-speed", columns=["model", "measured configurations",
                                      "held-out median error, 10 samples (median of 50 draws)", "in-sample mean error, all points"],
                rows=rows, command="benchmarks/bench_fit.py", seeds=[0],
                notes=["eq. 4 fitted by NNLS to 10 random measured configurations of each DL2 testbed model "
                       "(`measured/dl2_config_speed.txt`), its error on the others; 50 draws from seed 0",
                       f"`fit_loss_curve` on 10,000 points: {ms:.1f} ms (median of 9)"])
    print(tables.render("fit-speed"))

if __name__ == "__main__":
    main()
