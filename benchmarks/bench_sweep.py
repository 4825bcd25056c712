"""Sweeps on Ray against one process (issue 18): the 40-cell simulation sweep
benchmarks/sweeps/bench40.yaml, wall time in process (--workers 1) and on a
local Ray with 2 CPUs (started by the run, included), the speed-up, and the
per-cell overhead of Ray. Each run starts from an empty folder. Prints markdown.

    .venv/bin/python benchmarks/bench_sweep.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from schedopt.sweeps import sweep  # noqa: E402
from schedopt.sweeps.cells import TIMING_COLUMNS  # noqa: E402

SPEC = ROOT / "benchmarks" / "sweeps" / "bench40.yaml"


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
    print("| run | cells | wall (s) | Σ cell seconds | speed-up | Ray overhead per cell (s) | same table |")
    print("|---|---|---|---|---|---|---|")
    print(f"| in process (`--workers 1`) | {n} | {local_s:.1f} | {sum(r['cell_seconds'] for r in local):.1f} | 1.00 | - | - |")
    print(f"| local Ray, 2 CPUs (start included) | {n} | {ray_s:.1f} | {busy:.1f} | {local_s / ray_s:.2f} | "
          f"{(2 * ray_s - busy) / n:.3f} | {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
