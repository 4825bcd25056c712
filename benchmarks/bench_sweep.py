"""Sweeps on Ray against one process (issue 18): the 40-cell simulation sweep
benchmarks/sweeps/bench40.yaml, wall time in process (--workers 1) and on a
local Ray with 2 CPUs (started by the run, included), the speed-up, and the
per-cell overhead of Ray. Each run starts from an empty folder. Stores
benchmarks/results/sweep-ray.json; with ``--specs``, the shipped specs' summaries
(benchmarks/sweeps/optimus.yaml and dl2.yaml, local Ray, 2 CPUs) as sweep-specs.json.

    .venv/bin/python benchmarks/bench_sweep.py [--specs]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tables  # noqa: E402  (benchmarks/tables.py, next to this file)
from schedopt.sweeps import sweep  # noqa: E402
from schedopt.sweeps.cells import TIMING_COLUMNS  # noqa: E402

SPEC = ROOT / "benchmarks" / "sweeps" / "bench40.yaml"
SHIPPED = ("optimus.yaml", "dl2.yaml")


def timed(workers: int) -> tuple[float, list[dict]]:
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        table = sweep(SPEC, d, workers=workers, figures=False)
        return time.perf_counter() - t0, table.rows


def main() -> None:
    local_s, local = timed(1)
    ray_s, on_ray = timed(2)
    same = [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in local] == \
           [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in on_ray]
    n = len(local)
    busy = sum(r["cell_seconds"] for r in on_ray)
    tables.save("sweep-ray", columns=["run", "cells", "wall (s)", "Σ cell seconds", "speed-up", "Ray overhead per cell (s)",
                                      "same table"],
                rows=[["in process (`--workers 1`)", n, f"{local_s:.1f}", f"{sum(r['cell_seconds'] for r in local):.1f}",
                       "1.00", "-", "-"],
                      ["local Ray, 2 CPUs (start included)", n, f"{ray_s:.1f}", f"{busy:.1f}", f"{local_s / ray_s:.2f}",
                       f"{(2 * ray_s - busy) / n:.3f}", "yes" if same else "NO"]],
                command="benchmarks/bench_sweep.py",
                notes=["the 40 cells of `benchmarks/sweeps/bench40.yaml`, from an empty folder each time; "
                       "Ray overhead per cell = (2 × wall − Σ cell seconds) / cells; same table: every column but the timings"])
    print(tables.render("sweep-ray"))


def shipped_specs() -> None:
    """The shipped specs' summaries: mean ± 95 % interval over their seeds."""
    rows = []
    for name in SHIPPED:
        table = sweep(ROOT / "benchmarks" / "sweeps" / name, None, workers=2, figures=False)
        assert not table.failed, table.failed
        last = None
        for k, entry in enumerate(table.summary):
            workload = entry["workload"] if entry["workload"] != last else ""
            last = entry["workload"]
            rows.append([f"`{name}`" if k == 0 else "", workload,
                         f"{entry['load']:.1f}", f"`{entry['scheduler']}`",
                         f"{entry['avg_jct_s_mean'] / 3600:.3f} ± {entry['avg_jct_s_ci95'] / 3600:.3f}",
                         f"{entry['makespan_s_mean'] / 3600:.2f} ± {entry['makespan_s_ci95'] / 3600:.2f}"])
    tables.save("sweep-specs", columns=["spec", "workload", "load", "scheduler", "avg JCT (h)", "makespan (h)"],
                rows=rows, command="benchmarks/bench_sweep.py --specs", seeds=[0, 1, 2, 3, 4],
                notes=["`schedopt sweep benchmarks/sweeps/NAME.yaml` on a local Ray with 2 CPUs; mean ± 95 % interval "
                       "over the seeds"])
    print(tables.render("sweep-specs"))

if __name__ == "__main__":
    if "--specs" in sys.argv:
        shipped_specs()
    else:
        main()
