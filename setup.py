"""Ships the job profiles in the built package.

``models/`` at the top of the repository is the source of the profiles (each
with the source of its numbers); building a wheel or an sdist-built wheel copies
it to ``schedopt/_models`` so an installed schedopt finds them without the
source tree (``schedopt.profiles.models_dir``). Everything else is in
pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithModels(build_py):
    def run(self) -> None:
        super().run()
        source = ROOT / "models"
        if source.is_dir():
            shutil.copytree(source, Path(self.build_lib) / "schedopt" / "_models", dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildPyWithModels})
