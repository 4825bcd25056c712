"""Every code block of docs/*.md runs in `make test` (issue 54), with Sybil.

- ```python blocks run in order, one namespace per page;
- ```sh blocks run as one bash script each (``-e``) (the project's environment first on PATH);
- both in one scratch copy of the repository per test session (blocks that write files write
  there), with ``SCHEDOPT_DATA_DIR`` naming the shared data folder;
- ``<!-- skip: next -->`` above a block marks a sketch (shown, not run), and
  ``<!-- skip: next if(not SLOW, reason="...") -->`` a long block that runs only with
  ``make test-slow`` (``SCHEDOPT_DOCS_SLOW=1``); a block that needs ``../shared/data`` is
  skipped, saying why, when the folder is absent.
Other fences (```yaml, ```console, plain text) are shown, not run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
#: words of a block that reads the shared data folder (real traces, not redistributed)
NEEDS_DATA = ("--data-dir", "../shared/data", "SCHEDOPT_DATA_DIR", "philly", "alibaba", "gavel", "kueue/")
_SCRATCH: dict[str, Path] = {}


def scratch() -> Path:
    """A copy of the repository for the docs' blocks to run in (made once per session)."""
    if "path" not in _SCRATCH:
        dest = Path(tempfile.mkdtemp(prefix="schedopt-docs-")) / "schedopt"
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__",
                                                                  ".pytest_cache", ".hypothesis", "results"))
        shutil.copytree(ROOT / "benchmarks" / "results", dest / "benchmarks" / "results")
        _SCRATCH["path"] = dest
    return _SCRATCH["path"]


def _needs_data(source: str) -> bool:
    return any(word in source for word in NEEDS_DATA) and not SHARED_DATA.is_dir()


def run_shell(example: Example) -> None:
    """The block as one bash script (``-e -o pipefail``) in the scratch copy: a failing command
    fails it (a command meant to fail says so: ``cmd || echo ...``)."""
    source = str(example.parsed)
    if _needs_data(source):
        pytest.skip(f"needs the shared data folder {SHARED_DATA} (real traces and manifests; not redistributed)")
    env = {**os.environ, "PATH": f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "SCHEDOPT_DATA_DIR": str(SHARED_DATA), "COLUMNS": "120"}
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", source], cwd=scratch(), env=env,
                          capture_output=True, text=True)
    if done.returncode and not SHARED_DATA.is_dir() and "pass --data-dir" in done.stderr:
        pytest.skip(f"a command reads the shared data folder {SHARED_DATA}, absent here (not redistributed): "
                    f"{done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, f"the block exited {done.returncode}:\n{source}\n{done.stdout}\n{done.stderr}"


class _Python(PythonCodeBlockParser):
    """Python blocks, skipped (saying why) when they read the shared data folder and it is absent."""

    def __call__(self, document: Any):  # type: ignore[no-untyped-def]
        for region in super().__call__(document):
            if _needs_data(str(region.parsed)):
                region.evaluator = lambda example: pytest.skip(f"needs the shared data folder {SHARED_DATA}")
            yield region


def _setup(namespace: dict[str, Any]) -> None:
    namespace["SLOW"] = os.environ.get("SCHEDOPT_DOCS_SLOW") == "1"
    namespace["_cwd"] = os.getcwd()
    os.chdir(scratch())


def _teardown(namespace: dict[str, Any]) -> None:
    os.chdir(namespace["_cwd"])


pytest_collect_file = Sybil(
    parsers=[_Python(), CodeBlockParser("sh", run_shell), SkipParser()],
    patterns=["*.md"], setup=_setup, teardown=_teardown,
).pytest()
