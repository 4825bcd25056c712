"""DL2's RL settings tried (docs/learning.md): each row one `schedopt learn --workload dl2` run
(deterministic with --rounds), its held-out mean average JCT after the warm-up ("start"), with
the weights the validation traces kept, and after the last evaluated round. Stores
benchmarks/results/dl2-rl-settings.json. Needs ../shared/data; about half an hour on 2 cores.

    .venv/bin/python benchmarks/bench_rl_settings.py [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

import tables  # benchmarks/tables.py, next to this file (run as a script)

BIN = Path(sys.executable).parent
COMMON = ["--workload", "dl2", "--jobs", "30", "--servers", "13", "--max-tasks", "16", "--actors", "2",
          "--heldout", "10", "--validation", "5", "--eval-every", "10", "--seed", "0"]
#: (teacher, state, label of the RL settings, their flags, rounds)
SETTINGS = [
    ("drf", "type", "lr 0.003, γ 0.5, β 0.03, progress", ["--lr", "0.003", "--gamma", "0.5", "--entropy", "0.03",
                                                          "--reward", "progress"], 281),
    ("drf", "gain", "lr 0.003, γ 0.5, β 0.03, progress", ["--lr", "0.003", "--gamma", "0.5", "--entropy", "0.03",
                                                          "--reward", "progress"], 80),
    ("optimus-greedy", "gain", "lr 0.001, γ 0.5, β 0.01, progress", ["--lr", "0.001", "--gamma", "0.5", "--entropy",
                                                                     "0.01", "--reward", "progress"], 80),
    ("optimus-greedy", "gain", "lr 0.0003, γ 0.9, β 0.01, jct", ["--lr", "0.0003", "--gamma", "0.9", "--entropy", "0.01",
                                                                 "--reward", "jct"], 60),
    ("optimus-greedy", "gain (shipped)", "lr 0.0001, γ 0.9, β 0.001, ε 0, jct",
     ["--lr", "0.0001", "--gamma", "0.9", "--entropy", "0.001", "--epsilon", "0", "--reward", "jct"], 150),
]


def run(teacher: str, features: str, flags: list[str], rounds: int, data_dir: str, tmp: Path) -> tuple[float, float, float]:
    """(start, kept, last) held-out mean average JCT in hours."""
    curve = tmp / f"{teacher}-{features.split()[0]}-{rounds}.csv"
    subprocess.run([str(BIN / "schedopt"), "learn", *COMMON, "--teacher", teacher, "--features", features.split()[0],
                    "--rounds", str(rounds), *flags, "--data-dir", data_dir, "--out", str(tmp / "policy.npz"),
                    "--curve", str(curve)], check=True, capture_output=True)
    rows = [r for r in csv.DictReader(curve.open()) if r.get("heldout_jct_s")]
    kept = next((r for r in rows if r.get("kept") in ("True", "true", "1")), rows[-1])
    return tuple(float(r["heldout_jct_s"]) / 3600 for r in (rows[0], kept, rows[-1]))  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "data"))
    args = ap.parse_args()
    out = []
    with tempfile.TemporaryDirectory() as d:
        for teacher, features, label, flags, rounds in SETTINGS:
            start, kept, last = run(teacher, features, flags, rounds, args.data_dir, Path(d))
            out.append([f"{teacher}, {features}", label, rounds, f"{start:.3f}", f"{kept:.3f}", f"{last:.3f}"])
            print(out[-1], flush=True)
    tables.save("dl2-rl-settings", columns=["teacher, state", "RL settings", "rounds", "start (h)", "kept (h)", "last (h)"],
                rows=out, command="benchmarks/bench_rl_settings.py", seeds=[0],
                notes=["each row: `schedopt learn " + " ".join(COMMON) + " --teacher T --features S --rounds N` with the "
                       "settings shown (γ `--gamma`, β `--entropy`, ε `--epsilon`, reward `--reward`); held-out mean "
                       "average JCT over 10 traces after the warm-up (start), with the weights the validation traces "
                       "kept, and at the last evaluated round"])
    print(tables.render("dl2-rl-settings"))


if __name__ == "__main__":
    main()
