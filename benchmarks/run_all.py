"""Run every benchmark script in turn (``make bench``); each prints markdown for docs/benchmarks.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

for script in sorted(HERE.glob("bench_*.py")):
    print(f"\n<!-- {script.name} -->\n", flush=True)
    subprocess.run([sys.executable, str(script)], check=True)
