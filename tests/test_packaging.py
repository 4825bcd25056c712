"""The built wheel works without the source tree: profiles ship inside it, the data
folder comes from --data-dir or SCHEDOPT_DATA_DIR, and the version and typing marker are there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import schedopt
from schedopt.cli import app
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    src = out / "src"  # build from a copy: the build leaves build/ and *.egg-info behind
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__",
                                                              ".pytest_cache", ".hypothesis", "out"))
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 and "setuptools" in (r.stdout + r.stderr) and "Could not find" in (r.stdout + r.stderr):
        pytest.skip("no package index to fetch the build backend from: " + r.stderr.strip().splitlines()[-1])
    assert r.returncode == 0, r.stdout + r.stderr
    return next(out.glob("schedopt-*.whl"))


def test_wheel_ships_profiles_and_typing_marker(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "schedopt/py.typed" in names
    assert "schedopt/_models/resnet50.yaml" in names and "schedopt/_models/dorm/4-vgg16.yaml" in names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)


def test_installed_wheel_generates_away_from_the_source_tree(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, timeout=300)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("SCHEDOPT_DATA_DIR", None)
    code = ("import sys, schedopt; from schedopt.cli import main; print(schedopt.__file__, file=sys.stderr); "
            "sys.argv = ['schedopt', *sys.argv[1:]]; main()")
    r = subprocess.run([sys.executable, "-c", code, "generate", "optimus", "--jobs", "5", "--servers", "4",
                        "--out", "g.yaml"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert str(site) in r.stderr  # the installed copy ran, not the source tree
    assert (work / "g.yaml").is_file()
    r = subprocess.run([sys.executable, "-c", code, "generate", "alibaba-dorm", "--jobs", "5", "--servers", "4",
                        "--data-dir", str(tmp_path / "nowhere"), "--out", "a.yaml"],
                       cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "--data-dir" in r.stderr and "SCHEDOPT_DATA_DIR" in r.stderr
    assert "Traceback" not in r.stderr and not (work / "a.yaml").exists()


def test_version_matches_the_package_metadata() -> None:
    from importlib.metadata import version

    assert schedopt.__version__ == version("schedopt")
    assert CliRunner().invoke(app, ["--version"]).stdout.strip() == f"schedopt {schedopt.__version__}"
