"""DL2 benchmark (issue 7): average JCT of `dl2` vs `drf`, `optimus-greedy` and
`optimus-milp` on a held-out workload, and training time. Prints markdown.

    .venv/bin/python benchmarks/bench_dl2.py
"""

from __future__ import annotations

import time

from schedopt.generate import generate_instance
from schedopt.learn.dl2 import Policy
from schedopt.learn.train import evaluate, record_teacher, rl_train, warmup
from schedopt.sim import simulate

JOBS, SERVERS, EPISODES, WARMUP = 30, 13, 20, 200


def main() -> None:
    train = generate_instance("optimus-workload", jobs=JOBS, servers=SERVERS, seed=1, max_tasks=16)
    held = generate_instance("optimus-workload", jobs=JOBS, servers=SERVERS, seed=2, max_tasks=16)
    pol = Policy.create(J=JOBS, hidden=256, seed=0)
    t0 = time.perf_counter()
    samples = record_teacher(train, pol, "drf")
    from schedopt.learn.train import accuracy

    warmup(pol, samples, epochs=WARMUP)
    warm_s = time.perf_counter() - t0
    acc = accuracy(pol, samples)
    warm_jct = evaluate(pol, held).avg_jct_s
    t0 = time.perf_counter()
    episodes = [generate_instance("optimus-workload", jobs=JOBS, servers=SERVERS, seed=100 + k, max_tasks=16)
                for k in range(EPISODES)]
    curve = rl_train(pol, episodes, seed=0)
    rl_s = time.perf_counter() - t0
    updates = sum(c["updates"] for c in curve)
    rl_jct = evaluate(pol, held).avg_jct_s
    print(f"### DL2 on a held-out `optimus-workload` ({JOBS} jobs, {SERVERS} servers, seed 2; trained on seed 1 "
          f"and {EPISODES} RL episodes on seeds 100-{99 + EPISODES})\n")
    print("| scheduler | avg JCT (h) | vs drf |")
    print("|---|---|---|")
    base = simulate(held, "drf").avg_jct_s
    rows = [("drf", base), ("optimus-greedy", simulate(held, "optimus-greedy").avg_jct_s),
            ("optimus-milp (per interval)", simulate(held, "optimus-milp").avg_jct_s),
            ("dl2 after warm-up (teacher drf)", warm_jct), (f"dl2 after warm-up + {EPISODES} RL episodes", rl_jct)]
    for name, v in rows:
        print(f"| `{name}` | {v / 3600:.3f} | {v / base:.3f} |")
    print(f"\nTraining on 2 cores: warm-up ({len(samples)} samples, {WARMUP} epochs, accuracy {acc:.1%}) "
          f"{warm_s:.1f} s; RL {EPISODES} episodes, {updates} updates of mini-batch 256: {rl_s:.1f} s.\n")
    print("| RL episode | training avg JCT (h) | reward |")
    print("|---|---|---|")
    for c in curve:
        print(f"| {c['episode']} | {c['avg_jct_s'] / 3600:.3f} | {c['reward']:.2f} |")


if __name__ == "__main__":
    main()
