"""README.md runs as written: every ```sh block (but the `make` quick start, which is
what CI itself runs) in a temporary copy of the repository, line by line with the
project's environment activated, and every ```python block."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
README = (ROOT / "README.md").read_text()
SH_BLOCKS = [b for b in re.findall(r"```sh\n(.*?)```", README, re.S) if not b.lstrip().startswith("make")]
PY_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)
NEEDS_DATA = ("alibaba", "philly", "ali.yaml", "--data-dir")


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("readme") / "schedopt"
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__",
                                                              ".pytest_cache", ".hypothesis"))
    (dest / ".venv").symlink_to(Path(sys.prefix))  # the environment running the tests, as `make` made it
    return dest


@pytest.mark.parametrize("block", range(len(SH_BLOCKS)))
def test_readme_shell_block_runs(copy: Path, block: int) -> None:
    lines = [ln for ln in SH_BLOCKS[block].splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if any(key in ln for ln in lines for key in NEEDS_DATA) and not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared data folder {SHARED_DATA} (real traces; not redistributed)")
    if not (Path(sys.prefix) / "bin" / "activate").is_file():
        pytest.skip("not running inside a virtual environment to activate")
    env = {**os.environ, "SCHEDOPT_DATA_DIR": str(SHARED_DATA), "COLUMNS": "120"}
    env.pop("VIRTUAL_ENV", None)
    for line in lines:
        script = "set -e\nsource .venv/bin/activate\n" + line
        r = subprocess.run(["bash", "-c", script], cwd=copy, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"README line failed: {line}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        assert "Traceback" not in r.stderr


def test_readme_python_blocks_run(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(copy)
    namespace: dict[str, object] = {}
    for block in PY_BLOCKS:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own README
