"""DL2 benchmark (issue 19): the shipped policy (models/dl2/dl2-policy.npz) against
`drf` and `optimus-greedy` on held-out `dl2` traces (seeds 10000-10009, never
trained or validated on). Reads ../shared/data. Prints markdown and stores benchmarks/results/dl2-heldout.json and
dl2-other-sizes.json (docs/benchmarks.md renders them: benchmarks/tables.py).

    .venv/bin/python benchmarks/bench_dl2.py [POLICY.npz]
    .venv/bin/python benchmarks/bench_dl2.py --interference [POLICY.npz ...]   # issue 35 §3's setting

The policy is trained by the command in models/dl2/README.md.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import tables
from schedopt.cli.learning import HELDOUT_SEED
from schedopt.generate import generate_instance
from schedopt.learn.dl2 import SHIPPED, Policy, solver_for
from schedopt.sim import simulate

JOBS, SERVERS, MAX_TASKS, TRACES = 30, 13, 16, 10
#: other cluster sizes than the training traces': (jobs, servers), OTHER_TRACES traces each from this seed
OTHER_SIZES, OTHER_SEED, OTHER_TRACES = ((60, 26), (15, 7)), 30_000, 5


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
    seeds = [r[0] for r in rows]
    table = [[str(seed), f"{drf / 3600:.3f}", f"{opt / 3600:.3f}", f"{dl2 / 3600:.3f}", f"{dl2 / drf:.3f}", f"{dl2 / opt:.3f}"]
             for seed, drf, opt, dl2, _ in rows]
    m = a.mean(axis=0)
    table.append(["mean", *(f"{x / 3600:.3f}" for x in m), f"{m[2] / m[0]:.3f}", f"{m[2] / m[1]:.3f}"])
    ratio_drf, ratio_opt = a[:, 2] / a[:, 0], a[:, 2] / a[:, 1]
    table.append(["median [worst] per trace", "", "", "", f"{np.median(ratio_drf):.3f} [{ratio_drf.max():.3f}]",
                  f"{np.median(ratio_opt):.3f} [{ratio_opt.max():.3f}]"])
    tables.save("dl2-heldout", columns=["seed", "drf (h)", "optimus-greedy (h)", "dl2 (h)", "dl2 / drf", "dl2 / optimus-greedy"],
                rows=table, seeds=seeds, command="benchmarks/bench_dl2.py" + (f" {sys.argv[1]}" if len(sys.argv) > 1 else ""),
                notes=[f"{TRACES} held-out `dl2` traces ({JOBS} jobs, {SERVERS} servers, max {MAX_TASKS} tasks per role), "
                       f"never trained or validated on; average JCT per trace; policy `{Path(path).name}`",
                       f"dl2 / drf <= 0.75 on {int(np.sum(ratio_drf <= 0.75))} of {TRACES} traces; dl2 / optimus-greedy "
                       f"<= 1.05 on {int(np.sum(ratio_opt <= 1.05))} of {TRACES}; simulating one trace under dl2: median "
                       f"{np.median([r[4] for r in rows]):.2f} s"])
    print(tables.render("dl2-heldout"))
    other = []
    for jobs, servers in OTHER_SIZES:
        runs = []
        for k in range(OTHER_TRACES):
            wl = generate_instance("dl2", jobs=jobs, servers=servers, seed=OTHER_SEED + k, max_tasks=MAX_TASKS)
            runs.append([simulate(wl, "drf").avg_jct_s, simulate(wl, "optimus-greedy").avg_jct_s,
                         simulate(wl, solver_for(pol)).avg_jct_s])
        r = np.array(runs)
        d, o, x = np.median(r, axis=0) / 3600
        vs_drf, vs_opt = r[:, 2] / r[:, 0], r[:, 2] / r[:, 1]
        other.append([str(jobs), str(servers), f"{d:.3f}", f"{o:.3f}", f"{x:.3f}",
                      f"{np.median(vs_drf):.3f} [{vs_drf.max():.3f}]", f"{np.median(vs_opt):.3f} [{vs_opt.max():.3f}]"])
    tables.save("dl2-other-sizes", columns=["jobs", "servers", "drf (h)", "optimus-greedy (h)", "dl2 (h)",
                                            "dl2 / drf", "dl2 / optimus-greedy"],
                rows=other, seeds=list(range(OTHER_SEED, OTHER_SEED + OTHER_TRACES)),
                command="benchmarks/bench_dl2.py" + (f" {sys.argv[1]}" if len(sys.argv) > 1 else ""),
                notes=["other cluster sizes than the training traces'; average JCT: median over the traces; "
                       "ratios: median [worst] per trace"])
    print(tables.render("dl2-other-sizes"))


def interference_setting(policies: dict[str, str]) -> None:
    """Issue 35 §3's setting: the truth is the DL2 testbed's measured tables with DL2 §2.2's
    interference (schedopt/sim/truth.py); `optimus-greedy` fits eq. 4 online (the model Optimus
    would use), or is shown the truth (what no model error costs); the DL2 policies are shown what
    online estimation shows. Stores dl2-interference.json: median [worst] per trace over 10
    held-out traces and each scheduler's ratio to DRF and to the online greedy."""
    from schedopt.sim.truth import Interference

    setting = {"interference": Interference()}
    runs: dict[str, list[float]] = {}
    schedulers: list[tuple[str, object, dict]] = [
        ("drf", "drf", {}), ("optimus-greedy, shown the truth", "optimus-greedy", {}),
        ("optimus-greedy, eq. 4 fitted online", "optimus-greedy", {"estimation": "online"})]
    schedulers += [(f"dl2 ({label})", solver_for(Policy.load(path)), {"estimation": "online"}) for label, path in policies.items()]
    for k in range(TRACES):
        wl = generate_instance("dl2", jobs=JOBS, servers=SERVERS, seed=HELDOUT_SEED + k, max_tasks=MAX_TASKS)
        for label, sched, opts in schedulers:
            runs.setdefault(label, []).append(simulate(wl, sched, seed=k, **setting, **opts).avg_jct_s / 3600)
        print(f"  trace {k}: " + ", ".join(f"{a} {v[-1]:.3f}" for a, v in runs.items()), file=sys.stderr, flush=True)
    drf, online = np.array(runs["drf"]), np.array(runs["optimus-greedy, eq. 4 fitted online"])
    rows = []
    for label, v in runs.items():
        a = np.array(v)
        rows.append([label, f"{np.mean(a):.3f}", f"{np.median(a):.3f} [{a.max():.3f}]",
                     f"{np.median(a / drf):.3f} [{(a / drf).max():.3f}]", f"{np.median(a / online):.3f} [{(a / online).max():.3f}]"])
    tables.save("dl2-interference", columns=["scheduler", "mean avg JCT (h)", "avg JCT (h), median [worst]",
                                             "÷ drf, median [worst]", "÷ online greedy, median [worst]"],
                rows=rows, seeds=[HELDOUT_SEED + k for k in range(TRACES)],
                command="benchmarks/bench_dl2.py --interference" + "".join(f" {p}" for p in policies.values() if p != str(SHIPPED)),
                notes=[f"{TRACES} held-out `dl2` traces ({JOBS} jobs, {SERVERS} servers); run seed k on trace k; truth: measured "
                       "tables × interference (sigma_run 0.268, sigma_step 0.10, busy 0.75)",
                       "issue 35's goals for DL2: <= 0.75 × drf and <= 0.90 × the online greedy"])
    print(tables.render("dl2-interference"))


if __name__ == "__main__":
    if "--interference" in sys.argv:
        extra = [a for a in sys.argv[1:] if a != "--interference"]
        interference_setting({"shipped, imitation of optimus-greedy": str(SHIPPED),
                              **{f"RL from a DRF warm-up: {Path(p).name}": p for p in extra}})
    else:
        main()
