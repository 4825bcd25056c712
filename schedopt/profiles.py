"""DL job profiles (``models/*.yaml``): one per model, with the source of every number."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from schedopt.errors import InputError
from schedopt.io import problems_from_validation, read_document

def models_dir() -> Path:
    """The job profiles: ``schedopt/_models`` in an installed package (copied there
    at build time, see setup.py), else ``models/`` of the source tree."""
    here = Path(__file__).resolve().parent
    shipped = here / "_models"
    return shipped if shipped.is_dir() else here.parent / "models"


MODELS_DIR = models_dir()


class Profile(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    display_name: str
    params_million: float
    dataset_examples: int
    model_size_mb: float
    batch: int
    epochs: int = 10
    dataset_downscale: float = 1.0
    speed: dict[str, dict[str, Any]]
    demand: dict[str, dict[str, float]]

    def total_steps(self) -> int:
        """Steps to train ``epochs`` epochs over the (downscaled) dataset."""
        per_epoch = max(1, round(self.dataset_examples * self.dataset_downscale / self.batch))
        return per_epoch * self.epochs


@lru_cache(maxsize=4)
def load_profiles(directory: str | None = None) -> tuple[Profile, ...]:
    """All profiles in ``directory`` (default: the repository's ``models/``), by name."""
    d = Path(directory) if directory else MODELS_DIR
    files = sorted(d.glob("*.yaml"))  # Optimus Table 1 profiles (Dorm's are in models/dorm/)
    if not files:
        raise InputError(str(d), "no model profiles (*.yaml) found")
    out = []
    for f in files:
        try:
            out.append(Profile.model_validate(read_document(f)))
        except ValidationError as exc:
            raise InputError(str(f), problems_from_validation(exc)) from None
    return tuple(out)


class DormProfile(BaseModel):
    """A Dorm application type (Dorm Table II): container demand, DRF weight,
    container bounds, how many the workload holds and Swarm's static count."""

    model_config = ConfigDict(extra="forbid")

    name: str
    system: str
    dataset: str
    model: str
    demand: dict[str, float]  # per container: cpu, gpu, mem_gb
    weight: float
    max: int
    min: int
    count: int  # applications of this type in the Table II workload
    swarm_containers: int  # Swarm's static containers (Dorm §V-A4)
    source: str


@lru_cache(maxsize=4)
def load_dorm_profiles(directory: str | None = None) -> tuple[DormProfile, ...]:
    """The Dorm application types in ``directory`` (default ``models/dorm``)."""
    d = Path(directory) if directory else MODELS_DIR / "dorm"
    out = []
    for f in sorted(d.glob("*.yaml")):
        try:
            out.append(DormProfile.model_validate(read_document(f)))
        except ValidationError as exc:
            raise InputError(str(f), problems_from_validation(exc)) from None
    return tuple(out)
