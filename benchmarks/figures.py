"""The figures the docs show (docs/figures/*.png), from small runs of the benchmarks.

    .venv/bin/python benchmarks/figures.py            # all
    .venv/bin/python benchmarks/figures.py sim gap    # some: sim, gap, utilization

- sim: average JCT and makespan per scheduler on the Optimus §6.1 workload (Fig. 11 shape), mean of 3 seeds.
- gap: optimus-greedy's gap to the proven optimum (optimus-milp) by contention, 50 jobs, 5 seeds per level
  (the levels of bench_allocation.py's gap table).
- utilization: allocated GPU share and running jobs over the arrivals of one workload, optimus-greedy vs drf.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import schedopt  # noqa: E402
from schedopt.generate import generate_instance  # noqa: E402
from schedopt.plots import pyplot  # noqa: E402
from schedopt.sim import simulate  # noqa: E402

OUT = ROOT / "docs" / "figures"
SCHEDULERS = ["optimus-greedy", "drf", "tetris", "fifo", "srtf"]


def paired_bars(labels: list[str], first: tuple[str, list[float]], second: tuple[str, list[float]], *,
                ylabel: str, title: str, path: Path, log: bool = False) -> None:
    """Two bars per label, side by side, written to ``path``."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    x = np.arange(len(labels))
    for offset, (name, values) in ((-0.2, first), (0.2, second)):
        ax.bar(x + offset, values, 0.4, label=name)
    ax.set_xticks(x, labels)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def sim() -> None:
    jct: dict[str, list[float]] = {s: [] for s in SCHEDULERS}
    mk: dict[str, list[float]] = {s: [] for s in SCHEDULERS}
    for seed in range(3):
        wl = generate_instance("optimus-workload", jobs=30, servers=13, seed=seed, max_tasks=16)
        for s in SCHEDULERS:
            r = simulate(wl, s, seed=seed)
            jct[s].append((r.avg_jct_s or np.nan) / 3600)
            mk[s].append((r.makespan_s or np.nan) / 3600)
    paired_bars(SCHEDULERS, ("average JCT", [statistics.mean(jct[s]) for s in SCHEDULERS]),
                ("makespan", [statistics.mean(mk[s]) for s in SCHEDULERS]), ylabel="hours",
                title="optimus-workload, 30 jobs on 13 servers, mean of 3 seeds", path=OUT / "sim_jct_makespan.png")


def gap() -> None:
    levels = {"light (400 servers)": 400, "medium (110)": 110, "heavy (55)": 55, "oversubscribed (40)": 40}
    means, worst = [], []
    for _label, servers in levels.items():
        gaps = []
        for seed in range(5):
            inst = generate_instance("optimus", jobs=50, servers=servers, seed=1000 + seed)
            exact = schedopt.solve(inst, "optimus-milp")
            greedy = schedopt.solve(inst, "optimus-greedy", priority_factor=1.0)
            assert not schedopt.check(inst, exact) and not schedopt.check(inst, greedy)
            if greedy.objective.admitted == exact.objective.admitted:
                gaps.append(100 * (greedy.objective.value - exact.objective.value) / greedy.objective.value)
        means.append(statistics.mean(gaps) if gaps else np.nan)
        worst.append(max(gaps) if gaps else np.nan)
    paired_bars(list(levels), ("mean", means), ("worst", worst), ylabel="gap to optimum, %", log=True,
                title="optimus-greedy (skip) vs optimus-milp, 50 jobs, 5 seeds per level",
                path=OUT / "allocation_gap_by_contention.png")


def utilization() -> None:
    plt = pyplot()
    wl = generate_instance("optimus-workload", jobs=30, servers=13, seed=0, max_tasks=16)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 4.5), sharex=True)
    for s in ("optimus-greedy", "drf"):
        r = simulate(wl, s, seed=0)
        t = np.asarray(r.timeline.get("time_s", []), dtype=float) / 3600
        util = r.timeline.get("utilization", {}).get("gpu", [])
        running = r.timeline.get("running_jobs", [])
        if len(util) == len(t):
            ax1.step(t, np.asarray(util) * 100, where="post", label=s)
        if len(running) == len(t):
            ax2.step(t, running, where="post", label=s)
    arrivals = sorted(j.arrival / 3600 for j in wl.jobs)
    ax2.plot(arrivals, np.arange(1, len(arrivals) + 1), "k:", label="arrived")
    ax1.set_ylabel("GPU allocated, %")
    ax2.set_ylabel("jobs")
    ax2.set_xlabel("hours")
    ax1.legend()
    ax2.legend()
    ax1.set_title("optimus-workload seed 0: utilization and running jobs over the arrivals")
    fig.tight_layout()
    fig.savefig(OUT / "sim_utilization.png", dpi=120)
    plt.close(fig)


FIGURES = {"sim": sim, "gap": gap, "utilization": utilization}

if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[1:] or list(FIGURES):
        FIGURES[name]()
        print(f"wrote {name}")
