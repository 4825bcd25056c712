"""Parameter assignment (issue 5, Optimus Table 3). Prints markdown for docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_paa.py [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import statistics

import schedopt
from schedopt.data import DEFAULT_DATA_DIR
from schedopt.generate import generate_instance


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    args = ap.parse_args()
    inst = generate_instance("optimus-paa", jobs=1, servers=13, max_tasks=10, data_dir=args.data_dir)
    p = schedopt.solve(inst, "paa").metrics
    runs = [schedopt.solve(inst, "mxnet-default", seed=s).metrics for s in range(100)]
    med = {k: statistics.median(r[k] for r in runs) for k in ("max_size_difference", "max_request_difference", "total_requests")}
    print("### Optimus Table 3: ResNet-50 (157 blocks, 25.5M parameters), 10 PS\n")
    print("| algorithm | size difference | request difference | total requests |\n|---|---|---|---|")
    print("| MXNet (paper) | 3.6M | 43 | 247 |\n| PAA (paper) | 0.1M | 1 | 157 |")
    print(f"| `mxnet-default` (ours, median of 100 seeds) | {med['max_size_difference'] / 1e6:.2f}M | "
          f"{med['max_request_difference']:.0f} | {med['total_requests']:.0f} |")
    print(f"| `paa` (ours) | {p['max_size_difference'] / 1e6:.2f}M | {p['max_request_difference']} | {p['total_requests']} |\n")


if __name__ == "__main__":
    main()
